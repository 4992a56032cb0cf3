import { expect } from 'chai';
import { closingSweepWaits, costGuard, sweepable, topUpAmount, watermark, worthCollecting } from './decisions';

describe('collection decisions (pure)', () => {
  it('costGuard: native fee against the amount, at the share exactly allowed, one unit over refused', () => {
    expect(costGuard({ amount: 1000n, fee: 100n, maxFeeBps: 1000, nativeValue: null, nativeDecimals: 18 })).to.deep.equal({ ok: true });
    const no = costGuard({ amount: 999n, fee: 100n, maxFeeBps: 1000, nativeValue: null, nativeDecimals: 18 });
    expect(no.ok).to.equal(false);
    expect(costGuard({ amount: 0n, fee: 0n, maxFeeBps: 1000, nativeValue: null, nativeDecimals: 18 }).ok).to.equal(false);
    expect(costGuard({ amount: 10n, fee: 0n, maxFeeBps: 0, nativeValue: null, nativeDecimals: 18 }).ok, 'free sweeps pass a 0 % guard').to.equal(true);
  });

  it('costGuard: a token converts the native fee at nativeValue, rounded up', () => {
    // 1 ETH = 3000 USDC (6 decimals): a 0.001 ETH fee is 3 USDC = 3_000_000 units
    const p = { fee: 10n ** 15n, maxFeeBps: 100, nativeValue: 3000n * 10n ** 6n, nativeDecimals: 18 };
    expect(costGuard({ ...p, amount: 300_000_000n }).ok, '3 of 300 USDC is 1 %').to.equal(true);
    expect(costGuard({ ...p, amount: 299_999_999n }).ok).to.equal(false);
    // 1 wei of fee at 1 unit per ETH still costs 1 unit (rounded up)
    expect(costGuard({ amount: 100n, fee: 1n, maxFeeBps: 100, nativeValue: 1n, nativeDecimals: 18 }).ok).to.equal(true);
    expect(costGuard({ amount: 99n, fee: 1n, maxFeeBps: 100, nativeValue: 1n, nativeDecimals: 18 }).ok).to.equal(false);
  });

  it('closingSweepWaits: a sweep that closes the account (Solana) waits while any deposit there is unconfirmed; other sweeps subtract it', () => {
    expect(closingSweepWaits(true, 1n)).to.equal(true);
    expect(closingSweepWaits(true, 0n)).to.equal(false);
    expect(closingSweepWaits(false, 1n)).to.equal(false);
    expect(closingSweepWaits(false, 0n)).to.equal(false);
  });

  it('sweepable never takes unconfirmed deposits; topUpAmount counts gas already there', () => {
    expect(sweepable(100n, 30n)).to.equal(70n);
    expect(sweepable(30n, 100n)).to.equal(0n);
    expect(topUpAmount(500n, 120n)).to.equal(380n);
    expect(topUpAmount(500n, 500n)).to.equal(0n);
    expect(topUpAmount(500n, 900n)).to.equal(0n);
  });

  it('worthCollecting: the threshold, or a pass-through deposit past its maximum wait', () => {
    expect(worthCollecting({ amount: 10n, threshold: 10n, oldestWaitSeconds: 0, maxWaitSeconds: null })).to.equal('THRESHOLD');
    expect(worthCollecting({ amount: 9n, threshold: 10n, oldestWaitSeconds: 100, maxWaitSeconds: null })).to.equal(null);
    expect(worthCollecting({ amount: 9n, threshold: 10n, oldestWaitSeconds: 100, maxWaitSeconds: 100 })).to.equal('MAX_WAIT');
    expect(worthCollecting({ amount: 9n, threshold: 10n, oldestWaitSeconds: 99, maxWaitSeconds: 100 })).to.equal(null);
    expect(worthCollecting({ amount: 0n, threshold: 0n, oldestWaitSeconds: 100, maxWaitSeconds: 0 })).to.equal(null);
  });

  it('watermark: surplus above high down to target; an alert below low; nothing unset', () => {
    expect(watermark({ available: 150n, low: 10n, target: 50n, high: 100n })).to.deep.equal({ action: 'COLD_TRANSFER', amount: 100n });
    expect(watermark({ available: 150n, low: null, target: null, high: 100n })).to.deep.equal({ action: 'COLD_TRANSFER', amount: 50n });
    expect(watermark({ available: 100n, low: 10n, target: 50n, high: 100n })).to.deep.equal({ action: 'NONE' });
    expect(watermark({ available: 5n, low: 10n, target: 50n, high: 100n })).to.deep.equal({ action: 'LOW', shortfall: 45n });
    expect(watermark({ available: 5n, low: null, target: null, high: null })).to.deep.equal({ action: 'NONE' });
  });
});
