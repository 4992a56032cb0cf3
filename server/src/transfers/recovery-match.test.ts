import { expect } from 'chai';
import type { ObservedTransfer } from '@wcs/core';
import { firstHeightAbove, groupTransactions, matchRecovery, outputsStart, type ChainTransaction, type Intent } from './recovery-match';

const S = 'sender';
const obs = (txHash: string, position: number, over: Partial<ObservedTransfer> = {}): ObservedTransfer => ({
  txHash, position, fromAddress: S, toAddress: 'to1', memo: null, contract: null, amount: 10n, blockHeight: 5n, blockHash: 'b', succeeded: true, ...over,
});
const tx = (txHash: string, over: Partial<ChainTransaction> & { to?: string; amount?: bigint; contract?: string | null; memo?: string | null } = {}): ChainTransaction => ({
  txHash, blockHeight: over.blockHeight ?? 5n, sequence: over.sequence ?? null, succeeded: true,
  payments: over.payments ?? [{ to: over.to ?? 'to1', contract: over.contract ?? null, amount: over.amount ?? 10n, memo: over.memo ?? null, position: 0 }],
});
const intent = (transferId: string, over: Partial<Intent> = {}): Intent => ({ transferId, to: 'to1', contract: null, amount: 10n, memo: null, feeFromAmount: false, ...over });

describe('transfers: the recovery\'s match (pure)', () => {
  it('groups a sender\'s transfers by transaction, in chain order, without other senders\' or repeated ones', () => {
    const g = groupTransactions([
      obs('0xb', 1, { blockHeight: 7n }), obs('0xa', 2, { toAddress: 'to2' }), obs('0xa', 0), obs('0xa', 0), obs('0xc', 0, { fromAddress: 'other' }),
    ], S, new Map([['0xb', 3n]]));
    expect(g.map((t) => [t.txHash, t.sequence, t.payments.map((p) => p.position)])).to.deep.equal([['0xa', null, [0, 2]], ['0xb', 3n, [1]]]);
  });

  it('MATCHED on recipient, token, amount and memo; the rest on each side unmatched', () => {
    const m = matchRecovery([tx('0x1'), tx('0x2', { amount: 11n })], [intent('5'), intent('6', { to: 'to9' })]);
    expect(m.matched.map((x) => [x.intent.transferId, x.tx.txHash, x.sentAmount])).to.deep.equal([['5', '0x1', 10n]]);
    expect(m.unmatchedOnChain.map((t) => t.txHash)).to.deep.equal(['0x2']);
    expect(m.unmatchedInDatabase.map((i) => i.transferId)).to.deep.equal(['6']);
  });

  it('each field must agree: token, memo (empty is none), amount; recipients compared in canonical form', () => {
    expect(matchRecovery([tx('0x1', { contract: '0xT' })], [intent('1')]).matched).to.have.length(0);
    expect(matchRecovery([tx('0x1', { memo: '7' })], [intent('1', { memo: '8' })]).matched).to.have.length(0);
    expect(matchRecovery([tx('0x1', { memo: '' })], [intent('1', { memo: null })]).matched).to.have.length(1);
    expect(matchRecovery([tx('0x1', { amount: 9n })], [intent('1')]).matched).to.have.length(0);
    expect(matchRecovery([tx('0x1', { to: 'ABC' })], [intent('1', { to: 'abc' })]).matched).to.have.length(0);
    expect(matchRecovery([tx('0x1', { to: 'ABC' })], [intent('1', { to: 'abc' })], (a) => a.toLowerCase()).matched).to.have.length(1);
  });

  it('one to one: identical orders go oldest intent to lowest sequence, a third transaction stays unmatched', () => {
    const m = matchRecovery([tx('0xlate', { sequence: 9n, blockHeight: 1n }), tx('0xearly', { sequence: 4n, blockHeight: 2n }), tx('0xthird', { sequence: 12n })], [intent('30'), intent('20')]);
    expect(m.matched.map((x) => [x.intent.transferId, x.tx.txHash])).to.deep.equal([['20', '0xearly'], ['30', '0xlate']]);
    expect(m.unmatchedOnChain.map((t) => t.txHash)).to.deep.equal(['0xthird']);
    expect(m.unmatchedInDatabase).to.deep.equal([]);
  });

  it('without sequences, the earliest block first', () => {
    const m = matchRecovery([tx('0x2', { blockHeight: 9n }), tx('0x1', { blockHeight: 3n })], [intent('1'), intent('2')]);
    expect(m.matched.map((x) => [x.intent.transferId, x.tx.txHash])).to.deep.equal([['1', '0x1'], ['2', '0x2']]);
  });

  it('a fee taken out of the amount: the chain moves less, recorded as sent; never more', () => {
    const m = matchRecovery([tx('0x1', { amount: 7n })], [intent('1', { feeFromAmount: true })]);
    expect(m.matched.map((x) => x.sentAmount)).to.deep.equal([7n]);
    expect(matchRecovery([tx('0x1', { amount: 11n })], [intent('1', { feeFromAmount: true })]).matched).to.have.length(0);
  });

  it('a transaction paying several recipients is never matched (listed whole)', () => {
    const two = tx('0x1', { payments: [{ to: 'to1', contract: null, amount: 10n, memo: null, position: 0 }, { to: 'to2', contract: null, amount: 5n, memo: null, position: 1 }] });
    const m = matchRecovery([two], [intent('1')]);
    expect(m.matched).to.deep.equal([]);
    expect(m.unmatchedOnChain[0]!.payments).to.have.length(2);
    expect(m.unmatchedInDatabase.map((i) => i.transferId)).to.deep.equal(['1']);
  });

  it('nothing on either side: an empty plan', () => {
    expect(matchRecovery([], [])).to.deep.equal({ matched: [], unmatchedOnChain: [], unmatchedInDatabase: [] });
  });

  it('firstHeightAbove: the first block past the known sequence, in about log2 reads; null when nothing in the range is past it', async () => {
    // the sender's nonces: 1 at block 10, 2 at 11, 3 at 400 (the lost window), 4 at 401
    const at = (h: bigint) => (h >= 401n ? 4n : h >= 400n ? 3n : h >= 11n ? 2n : h >= 10n ? 1n : 0n);
    let reads = 0;
    const read = async (h: bigint) => {
      reads++;
      return at(h);
    };
    expect(await firstHeightAbove(read, 2n, 0n, 1000n)).to.equal(400n);
    expect(reads).to.be.at.most(12);
    expect(await firstHeightAbove(read, 0n, 0n, 1000n)).to.equal(10n);
    expect(await firstHeightAbove(read, 3n, 0n, 1000n)).to.equal(401n);
    expect(await firstHeightAbove(read, 4n, 0n, 1000n)).to.equal(null);
    expect(await firstHeightAbove(read, 2n, 400n, 400n)).to.equal(400n);
    expect(await firstHeightAbove(read, 2n, 5n, 4n)).to.equal(null);
    await firstHeightAbove(async () => {
      throw new Error('pruned');
    }, 0n, 0n, 10n).then(() => expect.fail('a node fault is thrown'), (e: Error) => expect(e.message).to.equal('pruned'));
  });

  it('outputsStart: the lowest block of the outputs found spent, less the margin, never below 0; null when an output\'s block is unknown or there is none', () => {
    expect(outputsStart([440n, 433n, 451n], 12n)).to.equal(421n);
    expect(outputsStart([433n], 0n)).to.equal(433n);
    expect(outputsStart([5n, 9n], 12n)).to.equal(0n);
    expect(outputsStart([440n, null], 12n)).to.equal(null);
    expect(outputsStart([], 12n)).to.equal(null);
  });
});
