import { expect } from 'chai';
import { watermarkState, watermarkText } from './wallets-view';

describe('wallets view: where a hot wallet token stands against its watermarks', () => {
  const base = { onChain: 1000n, reserved: 0n, incoming: 0n, policyEnabled: true, low: 100n, target: 500n, high: 900n };

  it('checks what is available (on chain less reserved less incoming), as the collector does', () => {
    expect(watermarkState(base)).to.deep.equal({ state: 'ABOVE_HIGH', surplus: 500n });
    // reserved and incoming are not available: 1000 - 50 - 60 = 890 is within
    expect(watermarkState({ ...base, reserved: 50n, incoming: 60n })).to.deep.equal({ state: 'OK' });
    expect(watermarkState({ ...base, onChain: 99n })).to.deep.equal({ state: 'BELOW_LOW', shortfall: 401n });
    // more reserved than held: available 0, never negative
    expect(watermarkState({ ...base, onChain: 10n, reserved: 40n })).to.deep.equal({ state: 'BELOW_LOW', shortfall: 500n });
    // no target: the surplus goes down to high
    expect(watermarkState({ ...base, target: null })).to.deep.equal({ state: 'ABOVE_HIGH', surplus: 100n });
  });

  it('says when no watermark applies: none set, policy disabled, balance not read', () => {
    expect(watermarkState({ ...base, low: null, high: null })).to.deep.equal({ state: 'NO_WATERMARKS' });
    expect(watermarkState({ ...base, policyEnabled: false })).to.deep.equal({ state: 'POLICY_DISABLED' });
    expect(watermarkState({ ...base, onChain: null })).to.deep.equal({ state: 'NOT_READ' });
    // only a low watermark
    expect(watermarkState({ ...base, high: null, target: null, onChain: 5000n })).to.deep.equal({ state: 'OK' });
  });

  it('words the state with exact decimals of the token', () => {
    expect(watermarkText({ state: 'ABOVE_HIGH', surplus: 1_500_001n }, 6, 'USDC')).to.equal('above high: 1.500001 USDC to go cold');
    expect(watermarkText({ state: 'BELOW_LOW', shortfall: 10n ** 18n + 1n }, 18, 'ETH')).to.equal('below low: 1.000000000000000001 ETH short of the target');
    expect(watermarkText({ state: 'OK' }, 6, 'USDC')).to.equal('within the watermarks');
    expect(watermarkText({ state: 'NOT_READ' }, 6, 'USDC')).to.equal('balance not read yet');
  });
});
