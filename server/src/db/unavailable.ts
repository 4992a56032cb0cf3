import { isChainError, isHttpJsonError } from '@wcs/core';

/**
 * Database connectivity failures: Postgres unreachable, restarting, shutting down, or a pool that
 * cannot get a connection. They are an expected condition, not a fault of the code: the API
 * answers them 503 SERVICE_UNAVAILABLE with Retry-After (http/app.ts), the log gets one line
 * without a stack (config/logger.ts), and workers retry at their next tick.
 */
export interface DatabaseUnavailable {
  /** The most specific code found: a SQLSTATE (57P01), a socket code (ECONNREFUSED), or a Sequelize error name. */
  readonly code: string;
  /** The message of the error that carries that code (never a URL with credentials: pg and Sequelize do not put one there). */
  readonly reason: string;
}

/** Seconds a client is told to wait (Retry-After) while the database is unavailable: a restart takes a few. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Sequelize's errors for a connection that could not be made or acquired. */
const SEQUELIZE_CONNECTION_ERRORS = new Set([
  'SequelizeConnectionError',
  'SequelizeConnectionRefusedError',
  'SequelizeConnectionTimedOutError',
  'SequelizeConnectionAcquireTimeoutError',
  'SequelizeHostNotFoundError',
  'SequelizeHostNotReachableError',
]);

/**
 * SQLSTATEs of a server that cannot serve this connection now: class 08 (connection exception),
 * 57P01 admin_shutdown (fast / smart shutdown, pg_terminate_backend), 57P02 crash_shutdown
 * (another backend crashed, or immediate shutdown), 57P03 cannot_connect_now (starting up,
 * shutting down, in recovery), 53300 too_many_connections.
 */
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
const SQLSTATE_CLASS_08 = /^08[0-9A-Z]{3}$/;

/** Socket-level failures of a connection (Node's system error codes). */
const SOCKET_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'EHOSTDOWN',
  'ENETUNREACH', 'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN',
]);

/** node-postgres (pg, pg-pool) messages of a connection that died or could not be made; they carry no code. */
const PG_MESSAGES = [
  /^Connection terminated( unexpectedly| due to connection timeout)?$/,
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
  /^timeout exceeded when trying to connect$/,
];

function own(e: object, key: 'code' | 'name' | 'message'): string | undefined {
  const v = (e as Record<string, unknown>)[key];
  return typeof v === 'string' ? v : undefined;
}

/** What this one error (not its causes) says: a connectivity code, a Sequelize connection error, or nothing. */
function classify(e: object): { code: string; strong: boolean } | null {
  const code = own(e, 'code');
  if (code !== undefined && (SQLSTATES.has(code) || SQLSTATE_CLASS_08.test(code) || SOCKET_CODES.has(code))) return { code, strong: true };
  const message = own(e, 'message');
  if (code === undefined && message !== undefined && PG_MESSAGES.some((re) => re.test(message))) return { code: 'CONNECTION_TERMINATED', strong: true };
  const name = own(e, 'name');
  if (name !== undefined && SEQUELIZE_CONNECTION_ERRORS.has(name)) return { code: name, strong: false };
  return null;
}

/**
 * Whether `err` is a database connectivity failure, and which: the error itself or anything in its
 * cause chain (`cause`, Sequelize's `parent` / `original`, an AggregateError's `errors`). A chain
 * adapter's error or a node's HTTP error is not looked into: a node that refuses connections is
 * not the database (the API answers those INTERNAL_ERROR / their own code). Pure: no I/O.
 */
export function databaseUnavailable(err: unknown): DatabaseUnavailable | null {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  let found: { code: string; reason: string } | null = null;
  while (queue.length > 0 && seen.size < 32) {
    const cur = queue.shift();
    if (!cur || typeof cur !== 'object' || seen.has(cur)) continue;
    seen.add(cur);
    if (isChainError(cur) || isHttpJsonError(cur)) continue;
    const c = classify(cur);
    if (c) {
      const reason = own(cur, 'message') ?? c.code;
      if (c.strong) return { code: c.code, reason };
      found ??= { code: c.code, reason };
    }
    const o = cur as { cause?: unknown; parent?: unknown; original?: unknown; errors?: unknown };
    queue.push(o.cause, o.parent, o.original);
    if (Array.isArray(o.errors)) queue.push(...o.errors.slice(0, 8));
  }
  return found;
}

export function isDatabaseUnavailable(err: unknown): boolean {
  return databaseUnavailable(err) !== null;
}
