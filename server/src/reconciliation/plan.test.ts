import { expect } from 'chai';
import { narrow, nextProbe, outcomeOf, readPoint, recordedComparison, searchFloor, selectAddresses, sliceSize, type Bisection, type PriorState } from './plan';

const head = { height: 120n, blockHash: '0xhead' };
const fresh: PriorState = { compared: false, agreedHeight: null, suspectHeight: null, open: null };
const seen: PriorState = { compared: true, agreedHeight: 90n, suspectHeight: null, open: null };

describe('reconciliation pass decisions (pure)', () => {
  it('readPoint: the lower of head and the scan cursor where history allows; the head (inexact) otherwise', () => {
    expect(readPoint(head, { height: 100n, hash: '0xc' }, { kind: 'archive' })).to.deep.equal({ point: { height: 100n, blockHash: '0xc' }, exact: true });
    expect(readPoint(head, { height: 130n, hash: '0xc' }, { kind: 'archive' })).to.deep.equal({ point: head, exact: true });
    expect(readPoint(head, { height: 100n, hash: '0xc' }, { kind: 'recent', depth: 128n })).to.deep.equal({ point: { height: 100n, blockHash: '0xc' }, exact: true });
    expect(readPoint(head, { height: 100n, hash: '0xc' }, { kind: 'recent', depth: 10n }), 'cursor out of the node\'s reach').to.deep.equal({ point: head, exact: false });
    expect(readPoint(head, { height: 100n, hash: '0xc' }, { kind: 'head' })).to.deep.equal({ point: head, exact: false });
    expect(readPoint(head, { height: null, hash: null }, { kind: 'archive' }), 'no height cursor (history scans)').to.deep.equal({ point: head, exact: false });
  });

  it('sliceSize: ceil(total x interval / cycle), at least one, at most all', () => {
    expect(sliceSize(10_000, 300, 86_400)).to.equal(35);
    expect(sliceSize(1, 300, 86_400)).to.equal(1);
    expect(sliceSize(0, 300, 86_400)).to.equal(0);
    expect(sliceSize(10, 600, 300)).to.equal(10);
  });

  it('selectAddresses: touched first, then never compared, then the oldest, up to the slice', () => {
    const all = [
      { address: 'a', reconciledAt: new Date(3000) },
      { address: 'b', reconciledAt: new Date(1000) },
      { address: 'c', reconciledAt: null },
      { address: 'd', reconciledAt: new Date(2000) },
      { address: 'e', reconciledAt: new Date(500) },
    ];
    expect(selectAddresses(all, new Set(['a']), 'INCREMENTAL', 2)).to.deep.equal(['a', 'c', 'e']);
    expect(selectAddresses(all, new Set(), 'INCREMENTAL', 0)).to.deep.equal([]);
    expect(selectAddresses(all, new Set(['a']), 'FULL', 0)).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
  });

  it('outcomeOf: agree, opening of wallets only, suspicion on head reads, one open discrepancy kept or updated', () => {
    const exact = { height: 100n, exact: true, scanHeight: 100n };
    expect(outcomeOf('DEPOSIT', 0n, { ...seen, open: { id: '7', amount: 5n } }, exact)).to.deep.equal({ kind: 'AGREE', close: '7' });
    expect(outcomeOf('HOT', 10n, fresh, exact)).to.deep.equal({ kind: 'OPENING' });
    expect(outcomeOf('SHARED', 10n, fresh, exact)).to.deep.equal({ kind: 'OPENING' });
    expect(outcomeOf('SHARED', -10n, fresh, exact), 'a shortfall at the first comparison is money gone, not an opening').to.deep.equal({ kind: 'OPEN' });
    expect(outcomeOf('HOT', -1n, fresh, { height: 130n, exact: false, scanHeight: 125n }), 'a head read: suspected first').to.deep.equal({ kind: 'SUSPECT', since: 130n });
    expect(outcomeOf('DEPOSIT', 10n, fresh, exact), 'a deposit address has no opening').to.deep.equal({ kind: 'OPEN' });
    expect(outcomeOf('HOT', 10n, seen, exact)).to.deep.equal({ kind: 'OPEN' });
    expect(outcomeOf('DEPOSIT', 10n, { ...seen, open: { id: '7', amount: 10n } }, exact)).to.deep.equal({ kind: 'KEEP', id: '7' });
    expect(outcomeOf('DEPOSIT', 12n, { ...seen, open: { id: '7', amount: 10n } }, exact)).to.deep.equal({ kind: 'UPDATE', id: '7' });
    const headRead = { height: 130n, exact: false, scanHeight: 125n };
    expect(outcomeOf('DEPOSIT', 10n, seen, headRead)).to.deep.equal({ kind: 'SUSPECT', since: 130n });
    expect(outcomeOf('DEPOSIT', 10n, { ...seen, suspectHeight: 130n }, headRead), 'the scan has not passed the first read yet').to.deep.equal({ kind: 'SUSPECT', since: 130n });
    expect(outcomeOf('DEPOSIT', 10n, { ...seen, suspectHeight: 130n }, { height: 140n, exact: false, scanHeight: 131n })).to.deep.equal({ kind: 'OPEN' });
    expect(outcomeOf('DEPOSIT', 10n, { ...seen, suspectHeight: 130n }, { height: 140n, exact: false, scanHeight: null }), 'no height cursor: a second pass').to.deep.equal({ kind: 'OPEN' });
  });

  it('the bisection finds the first height whose difference left the baseline', () => {
    // the difference became 5 at height 37 and stayed
    const diffAt = (h: bigint) => (h >= 37n ? 5n : 0n);
    let b: Bisection = { low: 0n, high: 120n, baseline: 0n };
    let reads = 0;
    for (let p = nextProbe(b); p !== null; p = nextProbe(b)) {
      b = narrow(b, p, diffAt(p));
      reads++;
    }
    expect(b.high).to.equal(37n);
    expect(reads).to.be.at.most(7);
    expect(nextProbe({ low: 36n, high: 37n, baseline: 0n })).to.equal(null);
  });

  it('searchFloor: from the last agreement, bounded by what the node answers', () => {
    expect(searchFloor({ kind: 'archive' }, null, 120n, 100n)).to.equal(0n);
    expect(searchFloor({ kind: 'archive' }, 90n, 120n, 100n)).to.equal(90n);
    expect(searchFloor({ kind: 'recent', depth: 64n }, null, 120n, 100n)).to.equal(56n);
    expect(searchFloor({ kind: 'recent', depth: 64n }, 80n, 120n, 100n)).to.equal(80n);
    expect(searchFloor({ kind: 'head' }, 80n, 120n, 100n)).to.equal(null);
    expect(searchFloor({ kind: 'archive' }, 100n, 120n, 100n), 'agreed at the read point itself').to.equal(null);
  });

  it('recordedComparison: agreeing moves agreed_height to the read; an opening joins the ledger; a suspicion keeps its first height; a discrepancy keeps the last agreement', () => {
    const c = { onChain: 150n, ledger: 100n, unexplained: 30n, prior: seen };
    expect(recordedComparison({ kind: 'AGREE', close: null }, { ...c, unexplained: 0n }, 120n))
      .to.deep.equal({ ledger: 100n, explained: 50n, unexplained: 0n, agreedHeight: 120n, suspectHeight: null });
    expect(recordedComparison({ kind: 'OPENING' }, { ...c, prior: fresh }, 120n), 'the rest booked: the ledger holds it, nothing unexplained')
      .to.deep.equal({ ledger: 130n, explained: 20n, unexplained: 0n, agreedHeight: 120n, suspectHeight: null });
    expect(recordedComparison({ kind: 'SUSPECT', since: 110n }, c, 120n)).to.deep.equal({ ledger: 100n, explained: 20n, unexplained: 30n, agreedHeight: 90n, suspectHeight: 110n });
    for (const o of [{ kind: 'OPEN' as const }, { kind: 'UPDATE' as const, id: '7' }, { kind: 'KEEP' as const, id: '7' }]) {
      expect(recordedComparison(o, c, 120n), o.kind).to.deep.equal({ ledger: 100n, explained: 20n, unexplained: 30n, agreedHeight: 90n, suspectHeight: null });
    }
  });
});
