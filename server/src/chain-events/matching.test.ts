import { expect } from 'chai';
import type { ObservedTransfer } from '@wcs/core';
import type { ChainTokenView } from '../deposits/tokens';
import { matchTransfers, minBaseUnits, subscriptionTakes, type CustodyAddress, type MatchSources, type MonitoredSubscription } from './matching';
import { trimDecimal } from './monitor';

const ETH: ChainTokenView = { id: 1, symbol: 'ETH', contract: null, decimals: 18, minDeposit: 0n, confirmations: null };
const USD: ChainTokenView = { id: 2, symbol: 'USD', contract: '0xT', decimals: 6, minDeposit: 0n, confirmations: 12 };

const sub = (id: number, direction: MonitoredSubscription['direction'], extra: Partial<MonitoredSubscription> = {}): MonitoredSubscription => ({
  id, applicationId: 7, direction, tokenIds: null, minAmount: null, ...extra,
});

let seq = 0;
const tx = (from: string | null, to: string, amount: bigint, extra: Partial<ObservedTransfer> = {}): ObservedTransfer => ({
  txHash: `0x${(++seq).toString(16)}`, position: 0, fromAddress: from, toAddress: to, memo: null, contract: null, amount, blockHeight: 10n, blockHash: '0xb', succeeded: true, ...extra,
});

function sources(inbound: Record<string, MonitoredSubscription[]>, outbound: Record<string, MonitoredSubscription[]>, custody: Record<string, CustodyAddress> = {}): MatchSources {
  return {
    inbound: (a) => inbound[a],
    outbound: (a) => outbound[a],
    custody: (a) => custody[a] ?? null,
    token: (c) => (c === null ? ETH : c === '0xT' ? USD : null),
  };
}

describe('chain events: matching (pure)', () => {
  it('minBaseUnits: the decimal minimum at the token\'s decimals, rounded up when finer than its unit', () => {
    expect(minBaseUnits('1', 6)).to.equal(1_000_000n);
    expect(minBaseUnits('1.5', 6)).to.equal(1_500_000n);
    expect(minBaseUnits('0.0000001', 6)).to.equal(1n);
    expect(minBaseUnits('0.0000010', 6)).to.equal(1n);
    expect(minBaseUnits('2.0000011', 6)).to.equal(2_000_002n);
    expect(minBaseUnits('0.000000000000000001', 18)).to.equal(1n);
    expect(() => minBaseUnits('1e5', 6)).to.throw(RangeError);
  });

  it('subscriptionTakes: token filter, minimum per token, nothing at or below zero', () => {
    const s = sub(1, 'BOTH', { tokenIds: new Set([2]), minAmount: '1.5' });
    expect(subscriptionTakes(s, ETH, 10n ** 20n)).to.equal(false);
    expect(subscriptionTakes(s, USD, 1_499_999n)).to.equal(false);
    expect(subscriptionTakes(s, USD, 1_500_000n)).to.equal(true);
    expect(subscriptionTakes(sub(2, 'IN'), ETH, 0n)).to.equal(false);
    expect(subscriptionTakes(sub(2, 'IN'), ETH, 1n)).to.equal(true);
  });

  it('IN for subscriptions on the destination, OUT for those on the source; direction respected; one event per subscription', () => {
    const both = sub(1, 'BOTH');
    const inOnly = sub(2, 'IN');
    const outOnly = sub(3, 'OUT');
    const src = sources({ M: [both, inOnly, outOnly] }, { M: [both, inOnly, outOnly] });
    const incoming = tx('X', 'M', 5n);
    const outgoing = tx('M', 'Y', 6n);
    const { events, outflows } = matchTransfers([incoming, outgoing], src, { utxo: false });
    expect(events.map((e) => [e.transfer.txHash, e.subscription.id, e.direction, e.monitoredAddress, e.counterparty])).to.deep.equal([
      [incoming.txHash, 1, 'IN', 'M', 'X'], [incoming.txHash, 2, 'IN', 'M', 'X'],
      [outgoing.txHash, 1, 'OUT', 'M', 'Y'], [outgoing.txHash, 3, 'OUT', 'M', 'Y'],
    ]);
    expect(outflows).to.deep.equal([]);
  });

  it('skips failed transactions, tokens outside the catalogue and zero amounts', () => {
    const s = sub(1, 'BOTH');
    const src = sources({ M: [s] }, { M: [s] }, { M: { applicationId: 7, kind: 'DEPOSIT', externalUserId: 'u' } });
    const { events, outflows } = matchTransfers([
      tx('X', 'M', 5n, { succeeded: false }), tx('M', 'Y', 5n, { contract: '0xUNLISTED' }), tx('M', 'Y', 0n),
    ], src, { utxo: false });
    expect(events).to.deep.equal([]);
    expect(outflows).to.deep.equal([]);
  });

  it('UTXO chains: an output back to its own sender (change) is no event and no outflow; on account chains a self-transfer is IN, OUT and an outflow', () => {
    const s = sub(1, 'BOTH');
    const custody = { M: { applicationId: 7, kind: 'DEPOSIT' as const, externalUserId: 'u' } };
    const change = tx('M', 'M', 9n);
    const utxo = matchTransfers([change], sources({ M: [s] }, { M: [s] }, custody), { utxo: true });
    expect(utxo.events.map((e) => e.direction)).to.deep.equal([]);
    expect(utxo.outflows).to.deep.equal([]);
    const account = matchTransfers([change], sources({ M: [s] }, { M: [s] }, custody), { utxo: false });
    expect(account.events.map((e) => e.direction)).to.deep.equal(['IN', 'OUT']);
    expect(account.outflows).to.have.length(1);
  });

  it('an unknown sender (BTC input that cannot be read) is an IN event with an empty counterparty, never an outflow', () => {
    const s = sub(1, 'IN');
    const { events, outflows } = matchTransfers([tx(null, 'M', 3n)], sources({ M: [s] }, {}), { utxo: true });
    expect(events.map((e) => [e.direction, e.counterparty])).to.deep.equal([['IN', '']]);
    expect(outflows).to.deep.equal([]);
  });

  it('a transfer out of a custody address is an outflow candidate with its custody kind', () => {
    const hot: CustodyAddress = { applicationId: 3, kind: 'HOT', externalUserId: null };
    const x = tx('H', 'Z', 4n, { contract: '0xT' });
    const { outflows } = matchTransfers([x, tx('Q', 'H', 1n)], sources({}, {}, { H: hot }), { utxo: false });
    expect(outflows).to.deep.equal([{ custody: hot, token: USD, transfer: x }]);
  });

  it('trimDecimal: NUMERIC text without trailing zeros', () => {
    expect(trimDecimal('1.500000000000000000')).to.equal('1.5');
    expect(trimDecimal('2.000000000000000000')).to.equal('2');
    expect(trimDecimal('10')).to.equal('10');
    expect(trimDecimal(null)).to.equal(null);
  });
});
