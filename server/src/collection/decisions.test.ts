import { expect } from 'chai';
import { closingSweepWaits, costGuard, planVerdict, sweepable, topUpAmount, watermark, worthCollecting } from './decisions';

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

  describe('planVerdict: every reason an address with confirmed deposits is not planned is a SKIP or a WAIT with its reason', () => {
    // an ERC-20 policy: 1 ETH = 3000 tokens (18 decimals each), at most 10 % in fees
    const base = {
      closesAccount: false, pending: 0n, amount: 100n * 10n ** 18n as bigint | Error, threshold: 10n ** 18n, oldestWaitSeconds: 60, maxWaitSeconds: null as number | null,
      price: { ok: true as const, fee: 10n ** 15n } as Parameters<typeof planVerdict>[0]['price'], token: true, maxFeeBps: 1000, nativeValue: 3000n * 10n ** 18n as bigint | null, nativeDecimals: 18,
    };

    it('plans an address worth collecting whose sweep is priced and economic', () => {
      expect(planVerdict(base)).to.deep.equal({ kind: 'PLAN', trigger: 'THRESHOLD' });
      expect(planVerdict({ ...base, amount: 1n, maxWaitSeconds: 60, price: { ok: true, fee: 0n } })).to.deep.equal({ kind: 'PLAN', trigger: 'MAX_WAIT' });
    });

    it('a closing sweep (Solana) with a deposit still pending: WAIT, before anything is read', () => {
      const v = planVerdict({ ...base, closesAccount: true, pending: 1n, amount: new Error('not read'), price: null });
      expect(v.kind).to.equal('WAIT');
      expect((v as { reason: string }).reason).to.match(/still pending.*closes the account/);
    });

    it('a balance the node did not give: WAIT naming the node\'s error', () => {
      expect(planVerdict({ ...base, amount: new Error('connection refused'), price: null })).to.deep.equal({ kind: 'WAIT', reason: 'the balance could not be read from the node: connection refused' });
    });

    it('nothing or too little confirmed: SKIP (held until a new deposit, the schedule or the max wait), without pricing', () => {
      expect(planVerdict({ ...base, amount: 0n, price: null })).to.deep.equal({ kind: 'SKIP', reason: 'nothing confirmed to collect' });
      expect(planVerdict({ ...base, amount: 10n ** 18n - 1n, price: null })).to.deep.equal({ kind: 'SKIP', reason: `below the threshold of ${10n ** 18n}` });
    });

    it('worth collecting and not priced yet: PRICE (the planner prices it and asks again)', () => {
      expect(planVerdict({ ...base, price: null })).to.deep.equal({ kind: 'PRICE' });
    });

    it('a sweep that cannot be priced: WAIT with the reason (never a silent wait)', () => {
      const v = planVerdict({ ...base, price: { ok: false, reason: 'eth_estimateGas refused the transfer: paused' } });
      expect(v).to.deep.equal({ kind: 'WAIT', reason: 'the sweep cannot be priced: eth_estimateGas refused the transfer: paused' });
    });

    it('a token policy without a native value: SKIP (the guard cannot compare), unless the sweep is free', () => {
      expect(planVerdict({ ...base, nativeValue: null })).to.deep.equal({ kind: 'SKIP', reason: 'the policy has no native value for this token: the cost guard cannot compare its fee' });
      expect(planVerdict({ ...base, nativeValue: null, price: { ok: true, fee: 0n } })).to.deep.equal({ kind: 'PLAN', trigger: 'THRESHOLD' });
    });

    it('uneconomic: SKIP with the guard\'s reason; the rent of a token account the sweep creates counts like any fee', () => {
      // Solana-like: 5000 lamports of fee, 2039280 of rent for the hot wallet's new token account; 1 SOL = 100 tokens (6 decimals)
      const sol = { ...base, token: true, nativeValue: 100n * 10n ** 6n, nativeDecimals: 9, threshold: 1n, maxFeeBps: 100 };
      const withRent = planVerdict({ ...sol, amount: 20_000_000n, price: { ok: true, fee: 5000n + 2_039_280n } });
      expect(withRent.kind).to.equal('SKIP');
      expect((withRent as { reason: string }).reason).to.match(/^uneconomic: the fee \(204428 in token units\)/);
      expect(planVerdict({ ...sol, amount: 20_000_000n, price: { ok: true, fee: 5000n } })).to.deep.equal({ kind: 'PLAN', trigger: 'THRESHOLD' });
    });
  });
});
