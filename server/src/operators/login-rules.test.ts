import { expect } from 'chai';
import { LOCKOUT, SESSION, afterFailure, isLocked, sessionState, shouldTouch } from './login-rules';

describe('login rules (pure)', () => {
  it('the fifth consecutive failure locks the account for 15 minutes and starts the count again', () => {
    let failed = 0;
    const now = 1_000_000;
    for (let i = 1; i < LOCKOUT.failures; i++) {
      const r = afterFailure(failed, now);
      expect(r).to.deep.equal({ failedLogins: i, lockedUntilMs: null });
      failed = r.failedLogins;
    }
    expect(afterFailure(failed, now)).to.deep.equal({ failedLogins: 0, lockedUntilMs: now + 15 * 60_000 });
    expect(isLocked(now + 15 * 60_000, now + 15 * 60_000 - 1)).to.equal(true);
    expect(isLocked(now + 15 * 60_000, now + 15 * 60_000)).to.equal(false);
    expect(isLocked(null, now)).to.equal(false);
  });

  it('a session ends at its idle timeout, its absolute timeout, or when ended; last-seen is written at most once a minute', () => {
    const t0 = 5_000_000;
    const s = { lastSeenMs: t0, expiresMs: t0 + SESSION.absoluteMs, endedMs: null };
    expect(sessionState(s, t0 + SESSION.idleMs - 1)).to.equal('ACTIVE');
    expect(sessionState(s, t0 + SESSION.idleMs)).to.equal('IDLE_EXPIRED');
    expect(sessionState({ ...s, lastSeenMs: t0 + SESSION.absoluteMs - 1 }, t0 + SESSION.absoluteMs)).to.equal('EXPIRED');
    expect(sessionState({ ...s, endedMs: t0 + 1 }, t0 + 2)).to.equal('ENDED');
    expect(shouldTouch(t0, t0 + 59_999)).to.equal(false);
    expect(shouldTouch(t0, t0 + 60_000)).to.equal(true);
  });
});
