import { expect } from 'chai';
import { before, decodeFeedCursor, encodeFeedCursor, FEED_START } from './feed-cursor';

describe('events feed cursor (pure)', () => {
  it('round-trips positions up to 2^64 - 1 and is URL-safe', () => {
    for (const c of [{ applicationId: 1, txId: 0n, taskId: 0n }, { applicationId: 42, txId: 748_001n, taskId: 9_007_199_254_740_993n }, { applicationId: 7, txId: (1n << 64n) - 1n, taskId: 1n }]) {
      const text = encodeFeedCursor(c);
      expect(text).to.match(/^[A-Za-z0-9_-]+$/);
      expect(decodeFeedCursor(text)).to.deep.equal(c);
    }
  });

  it('refuses what this service did not issue', () => {
    const ok = encodeFeedCursor({ applicationId: 3, txId: 10n, taskId: 5n });
    for (const bad of ['', 'abc', ok + '=', ok.slice(0, -1), 'x'.repeat(200), Buffer.from('e2.3.10.5').toString('base64url'), Buffer.from('e1.3.10').toString('base64url'),
      Buffer.from('e1.0.10.5').toString('base64url'), Buffer.from('e1.3.010.5').toString('base64url'), Buffer.from('e1.3.-1.5').toString('base64url'),
      Buffer.from(`e1.3.${1n << 64n}.5`).toString('base64url'), Buffer.from('e1.3.10.5 ').toString('base64url'), 'ZTEuMy4xMC41+']) {
      expect(decodeFeedCursor(bad), bad).to.equal(null);
    }
  });

  it('orders by transaction, then task', () => {
    expect(before(FEED_START, { txId: 0n, taskId: 1n })).to.equal(true);
    expect(before({ txId: 5n, taskId: 100n }, { txId: 6n, taskId: 1n })).to.equal(true);
    expect(before({ txId: 6n, taskId: 1n }, { txId: 6n, taskId: 1n })).to.equal(false);
    expect(before({ txId: 7n, taskId: 1n }, { txId: 6n, taskId: 9n })).to.equal(false);
  });
});
