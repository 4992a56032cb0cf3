import { expect } from 'chai';
import { POLICY_DEFAULTS, PolicyInputError, policyFromRow, policyView, resolvePolicy, type PolicyInput, type PolicyToken, type PolicyValues } from './policy-input';

const USDC: PolicyToken = { symbol: 'USDC', decimals: 6, native: false, nativeSymbol: 'ETH' };
const ETH: PolicyToken = { symbol: 'ETH', decimals: 18, native: true, nativeSymbol: 'ETH' };
const EOS: PolicyToken = { symbol: 'EOS', decimals: 4, native: true, nativeSymbol: 'EOS' };

/** The problems a refused input gives, as [option, message]. */
function refused(input: PolicyInput, token: PolicyToken = USDC, existing: PolicyValues | null = null): Array<[string, string]> {
  try {
    resolvePolicy(input, token, existing);
  } catch (e) {
    expect(e).to.be.instanceOf(PolicyInputError);
    const err = e as PolicyInputError;
    expect(err.message).to.equal(err.problems.map((p) => `${p.option}: ${p.message}`).join('; '));
    return err.problems.map((p) => [p.option, p.message]);
  }
  throw new Error(`accepted: ${JSON.stringify(input)}`);
}

describe('collection policy input (pure)', () => {
  it('a new policy: the documented defaults for every option not given; every field counts as changed', () => {
    const { values, changed } = resolvePolicy({}, USDC, null);
    expect(values).to.deep.equal({
      enabled: true, threshold: 0n, maxFeeBps: 1000, nativeValue: null, onConfirmed: true, scheduleSeconds: 300, maxWaitSeconds: null, hotLow: null, hotTarget: null, hotHigh: null, sweepMode: 'TOPUP',
    });
    expect(values).to.deep.equal(POLICY_DEFAULTS);
    expect(changed).to.have.length(11);
  });

  it('decimal amounts become exact base units with the token decimals (no float anywhere)', () => {
    const { values } = resolvePolicy({
      threshold: '12.345678', nativeValue: '3000.5', maxFeePercent: '2.55', hotLow: '0.000001', hotTarget: '100', hotHigh: '123456789012345678901234567890.5',
    }, USDC, null);
    expect(values.threshold).to.equal(12_345_678n);
    expect(values.nativeValue).to.equal(3_000_500_000n);
    expect(values.maxFeeBps).to.equal(255);
    expect(values.hotLow).to.equal(1n);
    expect(values.hotTarget).to.equal(100_000_000n);
    expect(values.hotHigh).to.equal(123456789012345678901234567890_500000n);
    // 18 decimals: 1 wei
    expect(resolvePolicy({ threshold: '0.000000000000000001' }, ETH, null).values.threshold).to.equal(1n);
    // trailing zeros beyond the decimals are exact, not a rounding
    expect(resolvePolicy({ threshold: '1.50000000' }, USDC, null).values.threshold).to.equal(1_500_000n);
  });

  it('the fee share: 0 and 100 % are the bounds, in basis points', () => {
    expect(resolvePolicy({ maxFeePercent: '0' }, USDC, null).values.maxFeeBps).to.equal(0);
    expect(resolvePolicy({ maxFeePercent: '100' }, USDC, null).values.maxFeeBps).to.equal(10_000);
    expect(resolvePolicy({ maxFeePercent: '100.00' }, USDC, null).values.maxFeeBps).to.equal(10_000);
    expect(resolvePolicy({ maxFeePercent: '0.01' }, USDC, null).values.maxFeeBps).to.equal(1);
  });

  it('negative or malformed amounts are refused naming the option', () => {
    expect(refused({ threshold: '-1' })).to.deep.equal([['--threshold', 'must not be negative, got "-1"']]);
    expect(refused({ threshold: '1e6' })).to.deep.equal([['--threshold', 'must be a plain decimal amount of USDC such as "12.5", got "1e6"']]);
    for (const v of ['', ' 1', '1,5', '.5', '01', 'abc', '1.', '0x10']) {
      const p = refused({ threshold: v });
      expect(p, v).to.have.length(1);
      expect(p[0]![0]).to.equal('--threshold');
      expect(p[0]![1]).to.match(/plain decimal amount of USDC|must not be negative/);
    }
    expect(refused({ hotHigh: '-5' })).to.deep.equal([['--hot-high', 'must not be negative, got "-5"']]);
    expect(refused({ nativeValue: '0' })).to.deep.equal([['--native-value', 'must be greater than 0, got "0"']]);
    expect(refused({ threshold: '1' + '0'.repeat(78) })).to.deep.equal([['--threshold', `too large, got "1${'0'.repeat(78)}"`]]);
  });

  it('more decimal places than the token has are refused (never rounded)', () => {
    expect(refused({ threshold: '1.0000001' })).to.deep.equal([['--threshold', '"1.0000001" has more decimal places than USDC has (6)']]);
    expect(refused({ threshold: '0.00001' }, EOS)).to.deep.equal([['--threshold', '"0.00001" has more decimal places than EOS has (4)']]);
    expect(refused({ hotLow: '0.0000005' })[0]![0]).to.equal('--hot-low');
  });

  it('a fee share over 100 % or negative, or finer than a basis point, is refused', () => {
    expect(refused({ maxFeePercent: '101' })).to.deep.equal([['--max-fee-percent', 'the fee share cannot be over 100 %, got 101']]);
    expect(refused({ maxFeePercent: '100.01' })).to.deep.equal([['--max-fee-percent', 'the fee share cannot be over 100 %, got 100.01']]);
    expect(refused({ maxFeePercent: '-1' })).to.deep.equal([['--max-fee-percent', 'the fee share must not be negative, got "-1"']]);
    expect(refused({ maxFeePercent: '2.555' })).to.deep.equal([['--max-fee-percent', 'at most 2 decimal places (basis points), got "2.555"']]);
    expect(refused({ maxFeePercent: '10%' })).to.deep.equal([['--max-fee-percent', 'must be a percentage from 0 to 100 such as 10 or 2.5, got "10%"']]);
  });

  it('watermarks: low <= target <= high, checked against the values kept from the existing policy', () => {
    expect(refused({ hotLow: '50', hotTarget: '40', hotHigh: '100' })).to.deep.equal([['--hot-low', 'the low watermark 50 is above the target 40 (--hot-target): low <= target <= high']]);
    expect(refused({ hotTarget: '150', hotHigh: '100' })).to.deep.equal([['--hot-target', 'the target 150 is above the high watermark 100 (--hot-high): low <= target <= high']]);
    expect(refused({ hotLow: '200', hotHigh: '100' })).to.deep.equal([['--hot-low', 'the low watermark 200 is above the high watermark 100 (--hot-high): low <= target <= high']]);
    const existing = resolvePolicy({ hotLow: '10', hotTarget: '50', hotHigh: '100' }, USDC, null).values;
    expect(refused({ hotHigh: '40' }, USDC, existing)).to.deep.equal([['--hot-target', 'the target 50 is above the high watermark 40 (--hot-high): low <= target <= high']]);
    expect(refused({ hotLow: '60' }, USDC, existing)).to.deep.equal([['--hot-low', 'the low watermark 60 is above the target 50 (--hot-target (kept)): low <= target <= high']]);
    // equal bounds are allowed; "off" removes one
    expect(resolvePolicy({ hotLow: '100', hotTarget: '100', hotHigh: '100' }, USDC, null).values).to.include({ hotLow: 100_000_000n, hotTarget: 100_000_000n, hotHigh: 100_000_000n });
    expect(resolvePolicy({ hotTarget: 'off' }, USDC, existing).values).to.include({ hotLow: 10_000_000n, hotTarget: null, hotHigh: 100_000_000n });
  });

  it('schedule: at least 10 s or off; max wait: any whole number of seconds or off', () => {
    expect(refused({ scheduleSeconds: '9' })).to.deep.equal([['--schedule-seconds', 'must be at least 10 seconds (or off), got 9']]);
    expect(refused({ scheduleSeconds: '0' })[0]![0]).to.equal('--schedule-seconds');
    expect(refused({ scheduleSeconds: '1.5' })).to.deep.equal([['--schedule-seconds', 'must be a whole number of seconds or off, got "1.5"']]);
    expect(refused({ scheduleSeconds: '-30' })).to.deep.equal([['--schedule-seconds', 'must not be negative, got "-30" (or off)']]);
    expect(refused({ maxWaitSeconds: '9999999999' })).to.deep.equal([['--max-wait-seconds', 'must be at most 2147483647 seconds, got 9999999999']]);
    expect(resolvePolicy({ scheduleSeconds: '10', maxWaitSeconds: '0' }, USDC, null).values).to.include({ scheduleSeconds: 10, maxWaitSeconds: 0 });
    expect(resolvePolicy({ scheduleSeconds: 'off', maxWaitSeconds: 'off' }, USDC, null).values).to.include({ scheduleSeconds: null, maxWaitSeconds: null });
  });

  it('--native-value is refused for a native coin; --on-confirmed takes true or false; --enable and --disable exclude each other', () => {
    expect(refused({ nativeValue: '1' }, ETH)).to.deep.equal([['--native-value', 'ETH is the native coin of its chain: its fees are compared with the amount directly, there is nothing to convert']]);
    expect(refused({ onConfirmed: 'yes' })).to.deep.equal([['--on-confirmed', 'say true or false, got "yes"']]);
    expect(refused({ enable: true, disable: true })).to.deep.equal([['--enable/--disable', 'give one of them, not both']]);
    expect(resolvePolicy({ onConfirmed: 'false', disable: true }, USDC, null).values).to.include({ onConfirmed: false, enabled: false });
  });

  it('every problem of one input is reported, each naming its option', () => {
    expect(refused({ threshold: '-1', maxFeePercent: '101', scheduleSeconds: '5', hotLow: '9', hotHigh: '1' }).map(([o]) => o))
      .to.deep.equal(['--threshold', '--max-fee-percent', '--schedule-seconds', '--hot-low']);
  });

  it('an update keeps what is not given and says what changed', () => {
    const existing = resolvePolicy({ threshold: '5', nativeValue: '2000', scheduleSeconds: '60' }, USDC, null).values;
    const { values, changed } = resolvePolicy({ threshold: '7.5', scheduleSeconds: '60' }, USDC, existing);
    expect(values).to.deep.equal({ ...existing, threshold: 7_500_000n });
    expect(changed).to.deep.equal(['threshold']);
    expect(resolvePolicy({ disable: true }, USDC, existing).changed).to.deep.equal(['enabled']);
    expect(resolvePolicy({ enable: true }, USDC, { ...existing, enabled: false }).values.enabled).to.equal(true);
    expect(resolvePolicy({}, USDC, { ...existing, enabled: false }).values.enabled, 'kept when neither is given').to.equal(false);
  });

  it('policyView / policyFromRow: base units back to the decimal strings given', () => {
    const { values } = resolvePolicy({ threshold: '12.345678', maxFeePercent: '2.5', nativeValue: '3000.5', hotHigh: '1000' }, USDC, null);
    expect(policyView(values, 6)).to.deep.equal({
      enabled: true, threshold: '12.345678', maxFeePercent: '2.5', nativeValue: '3000.5', onConfirmed: true, scheduleSeconds: 300, maxWaitSeconds: null, hotLow: null, hotTarget: null, hotHigh: '1000', sweepMode: 'topup',
    });
    const row = {
      enabled: true, threshold: '12345678', max_fee_bps: 250, native_value: '3000500000', on_confirmed: true, schedule_seconds: 300, max_wait_seconds: null,
      hot_low: null, hot_target: null, hot_high: '1000000000', sweep_mode: 'TOPUP',
    };
    expect(policyFromRow(row)).to.deep.equal(values);
  });

  it('the sweep mode: topup by default, delegated only where the chain can delegate (EVM), anything else refused', () => {
    const EVM_USDC: PolicyToken = { ...USDC, delegable: true, chainCode: 'ETH' };
    expect(resolvePolicy({ sweepMode: 'delegated' }, EVM_USDC, null).values.sweepMode).to.equal('DELEGATED');
    expect(resolvePolicy({ sweepMode: 'TOPUP' }, EVM_USDC, null).values.sweepMode).to.equal('TOPUP');
    const existing = resolvePolicy({ sweepMode: 'delegated' }, EVM_USDC, null).values;
    expect(resolvePolicy({ threshold: '1' }, EVM_USDC, existing).values.sweepMode, 'kept when not given').to.equal('DELEGATED');
    expect(resolvePolicy({ sweepMode: 'topup' }, EVM_USDC, existing).changed).to.deep.equal(['sweepMode']);
    expect(refused({ sweepMode: 'delegated' }, { ...EOS, chainCode: 'EOS' })).to.deep.equal([['--sweep-mode', 'delegated sweeps (EIP-7702) are for EVM chains; EOS sweeps its own way: say topup or leave it out']]);
    expect(refused({ sweepMode: 'batch' }, EVM_USDC)).to.deep.equal([['--sweep-mode', 'say topup or delegated, got "batch"']]);
  });
});
