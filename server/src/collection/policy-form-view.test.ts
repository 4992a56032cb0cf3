import { expect } from 'chai';
import { fieldLabel, formFromPolicy, formProblems, formWords, policyInputFromForm } from './policy-form-view';
import { POLICY_DEFAULTS, PolicyInputError, policyView, resolvePolicy } from './policy-input';

const USDC = { symbol: 'USDC', decimals: 6, native: false, nativeSymbol: 'ETH' };
const ETH = { symbol: 'ETH', decimals: 18, native: true, nativeSymbol: 'ETH' };

describe('policy form: the console form as `wcs collect policy set` options', () => {
  const full = {
    enabled: 'true', threshold: ' 12.5 ', maxFeePercent: '2.5', nativeValue: '3000', onConfirmed: 'false', scheduleSeconds: '60', maxWaitSeconds: '',
    hotLow: '10', hotTarget: '', hotHigh: '100',
  };

  it('sends every field; an empty optional field is off; a native coin has no native value', () => {
    expect(policyInputFromForm(full, false)).to.deep.equal({
      enable: true, threshold: '12.5', maxFeePercent: '2.5', nativeValue: '3000', onConfirmed: 'false', scheduleSeconds: '60', maxWaitSeconds: 'off',
      hotLow: '10', hotTarget: 'off', hotHigh: '100',
    });
    const eth = policyInputFromForm({ ...full, enabled: 'false', nativeValue: '5' }, true);
    expect(eth).to.not.have.property('nativeValue');
    expect(eth).to.include({ disable: true });
    expect(eth).to.not.have.property('enable');
  });

  it('a form made from a policy resolves to the same policy with nothing changed (no-op save)', () => {
    const existing = resolvePolicy({ threshold: '12.5', maxFeePercent: '2.5', nativeValue: '3000', hotLow: '10', hotHigh: '100' }, USDC, null).values;
    const again = resolvePolicy(policyInputFromForm(formFromPolicy(policyView(existing, 6)), false), USDC, existing);
    expect(again.changed).to.deep.equal([]);
    expect(again.values).to.deep.equal(existing);
    // the defaults of a new native-coin policy
    const fresh = resolvePolicy(policyInputFromForm(formFromPolicy(policyView(POLICY_DEFAULTS, 18)), true), ETH, null);
    expect(fresh.values).to.deep.equal(POLICY_DEFAULTS);
  });

  it('bad fields: the problems in the form\'s words; an unknown enabled value is refused', () => {
    let caught: unknown = null;
    try {
      resolvePolicy(policyInputFromForm({ ...full, threshold: '-1', maxFeePercent: '101', onConfirmed: '' }, false), USDC, null);
    } catch (e) {
      caught = e;
    }
    expect(caught).to.be.instanceOf(PolicyInputError);
    expect(formProblems(caught as PolicyInputError)).to.deep.equal([
      'Threshold: must not be negative, got "-1"',
      'Max fee, % of the amount: the fee share cannot be over 100 %, got 101',
      'Plan as soon as a deposit is CONFIRMED: say true or false, got ""',
    ]);
    let order: unknown = null;
    try {
      resolvePolicy(policyInputFromForm({ ...full, hotLow: '500', hotTarget: '50' }, false), USDC, null);
    } catch (e) {
      order = e;
    }
    expect(formProblems(order as PolicyInputError)).to.deep.equal(['Hot wallet low watermark: the low watermark 500 is above the target 50 ("Hot wallet target"): low <= target <= high']);
    expect(formWords('no --native-value: the cost guard cannot price USDC sweeps\' ETH fees')).to.equal('no "Native value": the cost guard cannot price USDC sweeps\' ETH fees');
    expect(() => policyInputFromForm({ ...full, enabled: 'yes' }, false)).to.throw(PolicyInputError, 'say true or false, got "yes"');
    expect(fieldLabel('--unknown')).to.equal('--unknown');
  });
});
