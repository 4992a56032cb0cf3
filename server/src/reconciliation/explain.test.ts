import { expect } from 'chai';
import { explainDifference, MAX_CANDIDATES, smallestSubset, type Candidate } from './explain';

const exact = (ref: string, amount: bigint): Candidate => ({ kind: 'TRANSFER_IN_FLIGHT', ref, min: amount, max: amount });

describe('reconciliation explanations (pure)', () => {
  it('no difference: nothing to explain', () => {
    expect(explainDifference(0n, [], [exact('transfer:1', -5n)])).to.deep.equal({ explained: 0n, unexplained: 0n, explanations: [] });
  });

  it('ignored deposits are always part of the difference; the rest stays unexplained when no candidate fits', () => {
    const r = explainDifference(130n, [{ kind: 'DEPOSIT_IGNORED', ref: 'tx:0xa#0', amount: 30n }], [exact('transfer:1', 7n)]);
    expect(r).to.deep.equal({ explained: 30n, unexplained: 100n, explanations: [{ kind: 'DEPOSIT_IGNORED', amount: '30', ref: 'tx:0xa#0' }] });
  });

  it('a sweep mined before the pipeline saw it: the token movement exactly, the native fee anywhere up to its ceiling', () => {
    const token = explainDifference(-1000n, [], [exact('transfer:9', -1000n), exact('transfer:10', -50n)]);
    expect(token).to.deep.equal({ explained: -1000n, unexplained: 0n, explanations: [{ kind: 'TRANSFER_IN_FLIGHT', amount: '-1000', ref: 'transfer:9' }] });
    // native: sent 0, fee at most 21000 x 10 gwei; charged 21000 x 7 gwei
    const native = explainDifference(-147_000_000_000_000n, [], [{ kind: 'TRANSFER_IN_FLIGHT', ref: 'transfer:9', min: -210_000_000_000_000n, max: 0n }]);
    expect(native.unexplained).to.equal(0n);
    expect(native.explanations).to.deep.equal([{ kind: 'TRANSFER_IN_FLIGHT', amount: '-147000000000000', ref: 'transfer:9' }]);
    // one wei beyond the ceiling is not explained (no partial match)
    expect(explainDifference(-210_000_000_000_001n, [], [{ kind: 'TRANSFER_IN_FLIGHT', ref: 'transfer:9', min: -210_000_000_000_000n, max: 0n }]).unexplained).to.equal(-210_000_000_000_001n);
  });

  it('the smallest subset wins; parts sum to the difference exactly', () => {
    const pool = [exact('a', -3n), exact('b', -4n), exact('c', -7n), exact('d', 5n)];
    expect(smallestSubset(-7n, pool)!.map((c) => c.ref)).to.deep.equal(['c']);
    expect(smallestSubset(-2n, pool)!.map((c) => c.ref).sort()).to.deep.equal(['c', 'd']);
    const r = explainDifference(-10n, [], pool);
    expect(r.unexplained).to.equal(0n);
    expect(r.explanations.reduce((s, e) => s + BigInt(e.amount), 0n)).to.equal(-10n);
    expect(r.explanations).to.have.length(2);
    expect(explainDifference(100n, [], pool).unexplained, 'no subset makes +100').to.equal(100n);
  });

  it('ranges split their slack in order, each part within its range', () => {
    const r = explainDifference(-105n, [], [{ kind: 'TRANSFER_IN_FLIGHT', ref: 'x', min: -110n, max: -100n }, { kind: 'DEPOSIT_PENDING', ref: 'y', min: 3n, max: 3n }]);
    expect(r.unexplained).to.equal(0n);
    expect(r.explanations).to.deep.equal([{ kind: 'TRANSFER_IN_FLIGHT', amount: '-105', ref: 'x' }]);
  });

  it('bounded: only the largest MAX_CANDIDATES candidates are tried', () => {
    const many = Array.from({ length: MAX_CANDIDATES + 5 }, (_, i) => exact(`t${i}`, BigInt(-(i + 1) * 1000)));
    // the smallest one (-1000) is outside the bound: not used
    expect(explainDifference(-1000n, [], many).unexplained).to.equal(-1000n);
    expect(explainDifference(-17000n, [], many).unexplained).to.equal(0n);
  });
});
