import { expect } from 'chai';
import type { ObservedTransfer } from '@wcs/core';
import type { ChainTokenView } from '../deposits/tokens';
import { historyReads, sourcesOfRead } from './history-reads';
import { matchTransfers, type MatchSources, type MonitoredSubscription } from './matching';

const SOL: ChainTokenView = { id: 1, symbol: 'SOL', contract: null, decimals: 9, minDeposit: 0n, confirmations: null };
const sub = (id: number, direction: MonitoredSubscription['direction']): MonitoredSubscription => ({ id, applicationId: 7, direction, tokenIds: null, minAmount: null });
const tx = (from: string, to: string, amount: bigint): ObservedTransfer => ({
  txHash: 'sig1', position: 0, fromAddress: from, toAddress: to, memo: null, contract: null, amount, blockHeight: 10n, blockHash: '10', succeeded: true,
});

describe('chain events on history chains: reads and per-read matching (pure)', () => {
  const watched = { deposits: ['dep1', 'dep2'], inbound: ['mon-in', 'dep1', 'both'], outbound: ['mon-out', 'both'], wallets: ['hot', 'mon-in'] };

  it('deposit addresses from their first transaction with outgoing; others from the head; outgoing for OUT and custody', () => {
    expect(historyReads(watched, true)).to.deep.equal([
      { address: 'dep1', outgoing: true, fromHead: false },
      { address: 'dep2', outgoing: true, fromHead: false },
      { address: 'mon-in', outgoing: true, fromHead: true }, // also a wallet: its outflows are wanted
      { address: 'both', outgoing: true, fromHead: true },
      { address: 'mon-out', outgoing: true, fromHead: true },
      { address: 'hot', outgoing: true, fromHead: true },
    ]);
    expect(historyReads({ deposits: [], inbound: ['a'], outbound: [], wallets: [] }, true)).to.deep.equal([{ address: 'a', outgoing: false, fromHead: true }]);
  });

  it('a scanner without chain events reads the deposit addresses for deposits only', () => {
    expect(historyReads(watched, false)).to.deep.equal([
      { address: 'dep1', outgoing: false, fromHead: false },
      { address: 'dep2', outgoing: false, fromHead: false },
    ]);
  });

  it('a transfer between two read addresses is matched once per side: IN by the receiver\'s read, OUT and the outflow by the sender\'s', () => {
    const both = sub(1, 'BOTH');
    const all: MatchSources = {
      inbound: (a) => (a === 'A' || a === 'B' ? [both] : undefined),
      outbound: (a) => (a === 'A' || a === 'B' ? [both] : undefined),
      custody: (a) => (a === 'A' ? { applicationId: 7, kind: 'DEPOSIT', externalUserId: 'u1' } : null),
      token: (c) => (c === null ? SOL : null),
    };
    const x = tx('A', 'B', 5n);
    const fromA = matchTransfers([x], sourcesOfRead('A', all), { utxo: false });
    const fromB = matchTransfers([x], sourcesOfRead('B', all), { utxo: false });
    expect(fromA.events.map((e) => [e.direction, e.monitoredAddress, e.counterparty])).to.deep.equal([['OUT', 'A', 'B']]);
    expect(fromA.outflows.map((o) => [o.custody.kind, o.transfer.fromAddress])).to.deep.equal([['DEPOSIT', 'A']]);
    expect(fromB.events.map((e) => [e.direction, e.monitoredAddress, e.counterparty])).to.deep.equal([['IN', 'B', 'A']]);
    expect(fromB.outflows).to.deep.equal([]);
    // the whole-range matcher would have given the same three, once each
    const whole = matchTransfers([x], all, { utxo: false });
    expect(whole.events.length + whole.outflows.length).to.equal(fromA.events.length + fromA.outflows.length + fromB.events.length);
  });
});
