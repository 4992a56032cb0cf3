import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import { AuthFailureLimiter } from '../ratelimit/auth-failure-limiter';
import { AuditLog } from './audit';
import { SESSION, afterFailure, isLocked, sessionState, shouldTouch } from './login-rules';
import type { Operators, Role } from './operators';
import { hashPassword, needsRehash, passwordProblem, verifyPassword } from './password';
import { verifyTotp } from './totp';

/** What a login attempt came to: a session, or why not (typed; nothing is thrown for an expected refusal). */
export type LoginResult =
  | { readonly ok: true; readonly token: string; readonly csrf: string; readonly operator: SessionOperator; readonly mustChangePassword: boolean }
  /** Too many failures from this source address: try again after retryAfterMs. */
  | { readonly ok: false; readonly reason: 'RATE_LIMITED'; readonly retryAfterMs: number }
  /** Unknown user or wrong password (never said which). */
  | { readonly ok: false; readonly reason: 'INVALID_CREDENTIALS' }
  /** The password was right and the TOTP code is missing or wrong. */
  | { readonly ok: false; readonly reason: 'TOTP_INVALID' }
  | { readonly ok: false; readonly reason: 'LOCKED'; readonly until: Date }
  | { readonly ok: false; readonly reason: 'DISABLED' };

export interface SessionOperator {
  readonly id: number;
  readonly username: string;
  readonly role: Role;
}

export interface Session {
  readonly id: string;
  readonly operator: SessionOperator;
  readonly csrfHash: Buffer;
  readonly mustChangePassword: boolean;
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest();
/** A dummy hash with today's cost: an unknown username costs what a known one does. */
let dummyHash: Promise<string> | null = null;

interface LoginRow {
  id: number;
  username: string;
  role: Role;
  status: 'ACTIVE' | 'DISABLED';
  password_hash: string;
  must_change_password: boolean;
  totp_ciphertext: Buffer | null;
  totp_last_step: string | null;
  failed_logins: number;
  locked_until: Date | null;
  db_now: Date;
}

/**
 * Console logins and sessions (docs/console.md): per-source rate limiting before any work,
 * per-account lockout after consecutive failures, TOTP for those who have it (approvers and
 * admins always), sessions in Postgres with idle and absolute timeouts. The session token and
 * the CSRF token are random 32-byte values handed to the browser once; only their SHA-256 hashes
 * are stored.
 */
export class OperatorAuth {
  private readonly limiter: AuthFailureLimiter;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly operators: Operators,
    /** This host's clock: TOTP codes and the per-address limiter (sessions and lockouts use the database's). */
    private readonly now: () => number = Date.now,
    limiter?: AuthFailureLimiter,
  ) {
    // 10 failures at once per source address, then one every 6 seconds
    this.limiter = limiter ?? new AuthFailureLimiter({ ratePerSecond: 1 / 6, burst: 10 }, 100_000, now);
  }

  async login(input: { username: string; password: string; totp?: string | null; source: string }): Promise<LoginResult> {
    const wait = this.limiter.waitMs(input.source);
    if (wait > 0) return { ok: false, reason: 'RATE_LIMITED', retryAfterMs: wait };
    const [row] = typeof input.username === 'string' && input.username.length <= 64
      ? await this.sequelize.query<LoginRow>(
        `SELECT id, username, role, status, password_hash, must_change_password, totp_ciphertext, totp_last_step::text AS totp_last_step, failed_logins, locked_until, now() AS db_now
           FROM operators WHERE username = $1`,
        { bind: [input.username], type: QueryTypes.SELECT },
      )
      : [];
    if (!row) {
      dummyHash ??= hashPassword('not a real password, only its cost');
      await verifyPassword(String(input.password ?? ''), await dummyHash);
      this.limiter.recordFailure(input.source);
      return { ok: false, reason: 'INVALID_CREDENTIALS' };
    }
    if (isLocked(row.locked_until?.getTime() ?? null, row.db_now.getTime())) return { ok: false, reason: 'LOCKED', until: row.locked_until! };
    if (!(await verifyPassword(String(input.password ?? ''), row.password_hash))) {
      await this.fail(row, input.source);
      return { ok: false, reason: 'INVALID_CREDENTIALS' };
    }
    if (row.status !== 'ACTIVE') return { ok: false, reason: 'DISABLED' };
    let step: bigint | null = null;
    if (row.totp_ciphertext !== null) {
      const secret = await this.operators.totpSecret(row.id);
      try {
        // codes follow the authenticator's clock: this host's (kept by NTP), not the database's
        step = secret === null ? null : verifyTotp(secret, String(input.totp ?? ''), this.now(), row.totp_last_step === null ? null : BigInt(row.totp_last_step));
      } finally {
        secret?.fill(0);
      }
      if (step === null) {
        await this.fail(row, input.source);
        return { ok: false, reason: 'TOTP_INVALID' };
      }
    }
    const token = randomBytes(32).toString('base64url');
    const csrf = randomBytes(32).toString('base64url');
    const opened = await this.sequelize.transaction(async (t) => {
      // the code's step is taken once: a second login with the same code loses here
      const [taken] = await this.sequelize.query<{ id: number }>(
        `UPDATE operators SET failed_logins = 0, locked_until = NULL, totp_last_step = coalesce($2::bigint, totp_last_step), updated_at = now()
          WHERE id = $1 AND status = 'ACTIVE' AND ($2::bigint IS NULL OR totp_last_step IS NULL OR totp_last_step < $2::bigint) RETURNING id`,
        { bind: [row.id, step === null ? null : step.toString()], type: QueryTypes.SELECT, transaction: t },
      );
      if (!taken) return false;
      await this.sequelize.query(
        // timeouts are set and judged on the database's clock: every console process agrees, whatever its host's clock says
        `INSERT INTO operator_sessions (operator_id, token_hash, csrf_hash, source, last_seen_at, expires_at) VALUES ($1, $2, $3, $4, now(), now() + make_interval(secs => $5))`,
        { bind: [row.id, sha256(token), sha256(csrf), input.source.slice(0, 256), SESSION.absoluteMs / 1000], transaction: t },
      );
      return true;
    });
    if (!opened) return { ok: false, reason: 'TOTP_INVALID' };
    if (needsRehash(row.password_hash)) {
      await this.sequelize.query('UPDATE operators SET password_hash = $2 WHERE id = $1 AND password_hash = $3', { bind: [row.id, await hashPassword(input.password), row.password_hash] });
    }
    return { ok: true, token, csrf, operator: { id: row.id, username: row.username, role: row.role }, mustChangePassword: row.must_change_password };
  }

  /** The session a cookie's token opens, or null (unknown, ended, expired, idle too long, or its operator disabled). */
  async authenticate(token: string): Promise<Session | null> {
    if (typeof token !== 'string' || token.length < 40 || token.length > 64) return null;
    const [s] = await this.sequelize.query<{ id: string; operator_id: number; username: string; role: Role; status: string; csrf_hash: Buffer; last_seen_at: Date; expires_at: Date; ended_at: Date | null; must_change_password: boolean; db_now: Date }>(
      `SELECT s.id::text AS id, s.operator_id, o.username, o.role, o.status, s.csrf_hash, s.last_seen_at, s.expires_at, s.ended_at, o.must_change_password, now() AS db_now
         FROM operator_sessions s JOIN operators o ON o.id = s.operator_id WHERE s.token_hash = $1`,
      { bind: [sha256(token)], type: QueryTypes.SELECT },
    );
    if (!s || s.status !== 'ACTIVE') return null;
    const now = s.db_now.getTime();
    if (sessionState({ lastSeenMs: s.last_seen_at.getTime(), expiresMs: s.expires_at.getTime(), endedMs: s.ended_at?.getTime() ?? null }, now) !== 'ACTIVE') return null;
    if (shouldTouch(s.last_seen_at.getTime(), now)) {
      await this.sequelize.query('UPDATE operator_sessions SET last_seen_at = now() WHERE id = $1 AND ended_at IS NULL', { bind: [s.id] });
    }
    return { id: s.id, operator: { id: s.operator_id, username: s.username, role: s.role }, csrfHash: s.csrf_hash, mustChangePassword: s.must_change_password };
  }

  /** Whether `csrf` is the session's CSRF token (constant time). */
  checkCsrf(session: Session, csrf: unknown): boolean {
    if (typeof csrf !== 'string' || csrf.length === 0 || csrf.length > 64) return false;
    return timingSafeEqual(sha256(csrf), session.csrfHash);
  }

  async logout(session: Session): Promise<void> {
    await this.sequelize.query('UPDATE operator_sessions SET ended_at = now() WHERE id = $1 AND ended_at IS NULL', { bind: [session.id] });
  }

  /** The operator's own new password (the current one must be given); audited; other sessions end. */
  async changePassword(session: Session, current: string, next: string, source: string): Promise<'OK' | 'WRONG_PASSWORD' | 'WEAK_PASSWORD' | 'SAME_PASSWORD'> {
    if (passwordProblem(next) !== null) return 'WEAK_PASSWORD';
    const [row] = await this.sequelize.query<{ password_hash: string }>('SELECT password_hash FROM operators WHERE id = $1', { bind: [session.operator.id], type: QueryTypes.SELECT });
    if (!row || !(await verifyPassword(current, row.password_hash))) return 'WRONG_PASSWORD';
    if (await verifyPassword(next, row.password_hash)) return 'SAME_PASSWORD';
    const hash = await hashPassword(next);
    await this.sequelize.transaction(async (t) => {
      await this.sequelize.query('UPDATE operators SET password_hash = $2, must_change_password = false, updated_at = now() WHERE id = $1', { bind: [session.operator.id, hash], transaction: t });
      await this.sequelize.query('UPDATE operator_sessions SET ended_at = now() WHERE operator_id = $1 AND id <> $2 AND ended_at IS NULL', { bind: [session.operator.id, session.id], transaction: t });
      await new AuditLog(this.sequelize).record(t, { name: session.operator.username, role: session.operator.role, channel: 'console', source }, {
        action: 'operator.change-password', target: `operator:${session.operator.username}`, before: null, after: null,
      });
    });
    return 'OK';
  }

  /** A failed attempt: counted for the source address and, under the row lock (concurrent failures all count), for the account. */
  private async fail(row: LoginRow, source: string): Promise<void> {
    this.limiter.recordFailure(source);
    await this.sequelize.transaction(async (t) => {
      const [cur] = await this.sequelize.query<{ failed_logins: number; db_now: Date }>('SELECT failed_logins, now() AS db_now FROM operators WHERE id = $1 FOR UPDATE', { bind: [row.id], type: QueryTypes.SELECT, transaction: t });
      const next = afterFailure(cur?.failed_logins ?? row.failed_logins, cur?.db_now.getTime() ?? Date.now());
      await this.sequelize.query('UPDATE operators SET failed_logins = $2, locked_until = coalesce($3, locked_until) WHERE id = $1', {
        bind: [row.id, next.failedLogins, next.lockedUntilMs === null ? null : new Date(next.lockedUntilMs)], transaction: t,
      });
    });
  }
}
