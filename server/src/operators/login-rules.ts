/**
 * The console's login rules as pure decisions (docs/console.md, "Logging in"), tested beside.
 */

/** Consecutive failed logins that lock an account, and for how long. */
export const LOCKOUT = Object.freeze({ failures: 5, lockMs: 15 * 60_000 });
/** A session ends after this long without a request, and this long after login whatever happens. */
export const SESSION = Object.freeze({ idleMs: 15 * 60_000, absoluteMs: 8 * 3_600_000, touchEveryMs: 60_000 });

/** After a failed login: the new failure count and, once it reaches the limit, until when the account is locked. */
export function afterFailure(failedLogins: number, nowMs: number): { failedLogins: number; lockedUntilMs: number | null } {
  const failed = failedLogins + 1;
  return failed >= LOCKOUT.failures ? { failedLogins: 0, lockedUntilMs: nowMs + LOCKOUT.lockMs } : { failedLogins: failed, lockedUntilMs: null };
}

/** Whether an account locked until `lockedUntilMs` is still locked. */
export function isLocked(lockedUntilMs: number | null, nowMs: number): boolean {
  return lockedUntilMs !== null && lockedUntilMs > nowMs;
}

export type SessionState = 'ACTIVE' | 'IDLE_EXPIRED' | 'EXPIRED' | 'ENDED';

/** A session's state at `nowMs`. */
export function sessionState(s: { lastSeenMs: number; expiresMs: number; endedMs: number | null }, nowMs: number): SessionState {
  if (s.endedMs !== null) return 'ENDED';
  if (nowMs >= s.expiresMs) return 'EXPIRED';
  if (nowMs - s.lastSeenMs >= SESSION.idleMs) return 'IDLE_EXPIRED';
  return 'ACTIVE';
}

/** Whether a request at `nowMs` should write the session's last-seen time (at most once a minute). */
export function shouldTouch(lastSeenMs: number, nowMs: number): boolean {
  return nowMs - lastSeenMs >= SESSION.touchEveryMs;
}
