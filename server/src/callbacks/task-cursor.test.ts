import { expect } from 'chai';
import { decodeTaskCursor, encodeTaskCursor } from './task-cursor';

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
});
