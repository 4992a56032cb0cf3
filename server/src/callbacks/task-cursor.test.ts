import { expect } from 'chai';
import { decodeTaskCursor, encodeTaskCursor, pageWindow } from './task-cursor';

describe('callback task cursor', () => {
  it('round-trips microsecond timestamps and ids beyond 2^53', () => {
    const c = { createdMicros: 1_764_000_000_123_456n, id: 9_007_199_254_740_993n };
    expect(decodeTaskCursor(encodeTaskCursor(c))).to.deep.equal(c);
  });
  it('is null for anything that is not a cursor', () => {
    for (const bad of [null, undefined, '', '1', '1.', '.1', '1.0', '-1.2', '1.2.3', '1e3.2', ' 1.2', '1.2 ', '99999999999999999999.1', '1.9223372036854775808']) {
      expect(decodeTaskCursor(bad), String(bad)).to.equal(null);
    }
    expect(decodeTaskCursor('0.1')).to.deep.equal({ createdMicros: 0n, id: 1n });
    expect(decodeTaskCursor('1.9223372036854775807')).to.deep.equal({ createdMicros: 1n, id: 9223372036854775807n });
  });

  it('pageWindow reads each page from the nearer end and covers exactly its rows', () => {
    for (const total of [0, 1, 2, 5, 20, 45, 101]) {
      const rows = Array.from({ length: total }, (_, i) => i); // newest first
      const oldestFirst = [...rows].reverse();
      for (const size of [1, 2, 3, 7, 20, 45, 200]) {
        const seen: number[] = [];
        for (let no = 1; no <= Math.ceil(total / size) + 1; no++) {
          const w = pageWindow(total, no, size);
          const page = w.newestFirst ? rows.slice(w.offset, w.offset + w.limit) : oldestFirst.slice(w.offset, w.offset + w.limit).reverse();
          expect(page, `total ${total} size ${size} page ${no}`).to.deep.equal(rows.slice((no - 1) * size, no * size));
          expect(w.offset, 'never walks more than half').to.be.at.most(Math.ceil(total / 2));
          seen.push(...page);
        }
        expect(seen).to.deep.equal(rows);
      }
    }
    expect(pageWindow(200_000, 4000, 50)).to.deep.equal({ newestFirst: false, limit: 50, offset: 0 });
    expect(pageWindow(200_000, 1, 50)).to.deep.equal({ newestFirst: true, limit: 50, offset: 0 });
  });
});
