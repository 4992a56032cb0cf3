import type * as Winston from 'winston';
import { isChainError } from '@wcs/core';
import { databaseUnavailable } from '../db/unavailable';

const SENSITIVE_KEY = /(secret|password|passphrase|signature|api[-_]?key|authorization|\bpin\b|seed|mnemonic|private|master[-_]?key|cipher)/i;

/** Masks a secret-looking value, keeping a short prefix so operators can tell keys apart. */
export function maskValue(v: unknown): string {
  if (typeof v !== 'string') return '***';
  const m = /^(pk_(?:test|live)_)/.exec(v);
  if (m) return `${m[1]}***${v.slice(-4)}`;
  return '***';
}

const INLINE_PATTERNS: Array<[RegExp, string]> = [
  [/(postgres(?:ql)?:\/\/[^:/@\s]+:)[^@\s]+@/gi, '$1***@'],
  [/\b(pk_(?:test|live)_)[A-Za-z0-9]+([A-Za-z0-9]{4})\b/g, '$1***$2'],
  [/\b[0-9a-f]{64}\b/g, '***'],
];

export function scrubText(s: string): string {
  let out = s;
  for (const [re, rep] of INLINE_PATTERNS) out = out.replace(re, rep);
  return out;
}

/** An error code in the stable upper-case style (RPC_UNAVAILABLE, ECONNREFUSED). */
const STABLE_CODE = /^[A-Z][A-Z0-9_]{2,63}$/;

/** Deep-copies a log record with secret keys masked and secret-looking text scrubbed. */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 6) return '[depth]';
  if (typeof value === 'string') return scrubText(value);
  if (Buffer.isBuffer(value)) return `[${value.length} bytes]`;
  if (value instanceof Error) {
    // A database connectivity failure (Postgres down or restarting, no connection to be had) is
    // an expected condition too: what failed and why, no stack (db/unavailable.ts).
    const db = databaseUnavailable(value);
    if (db) return { name: value.name, code: db.code, message: scrubText(value.message), ...(db.reason !== value.message ? { reason: scrubText(db.reason) } : {}) };
    // A coded error (RPC_UNAVAILABLE, ECONNREFUSED, KEYSTORE_LOGIN, a WcsError below INTERNAL) is an
    // expected condition: its code and message say it all, so no stack. Anything else is a fault
    // worth a stack.
    // An adapter's error (ChainRpcError, ChainTransferError) reads as its stable name (RPC_UNAVAILABLE).
    const code = isChainError(value) ? value.errorName : (value as { code?: unknown }).code;
    const errorClass = (value as { errorClass?: unknown }).errorClass;
    const expected = (typeof code === 'string' && STABLE_CODE.test(code)) || (typeof code === 'number' && typeof errorClass === 'string' && errorClass !== 'INTERNAL');
    return {
      name: value.name,
      ...(expected ? { code } : {}),
      message: scrubText(value.message),
      ...(value.stack && !expected ? { stack: scrubText(value.stack) } : {}),
    };
  }
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      out[k] = SENSITIVE_KEY.test(k) ? maskValue(v) : redact(v, depth + 1);
    }
    return out;
  }
  return value;
}

export type Logger = Winston.Logger;

export interface LoggerOptions {
  level: string;
  format: 'json' | 'pretty';
  stream?: NodeJS.WritableStream;
}

/** winston's default (npm) levels: a message is written when its level's number is at most the logger's. */
const NPM_LEVELS: Readonly<Record<string, number>> = { error: 0, warn: 1, info: 2, http: 3, verbose: 4, debug: 5, silly: 6 };

/**
 * The logger (winston, secrets masked). winston itself is loaded on the first message at an
 * enabled level, or the first use of anything else of the logger: a `wcs` command that writes
 * no log line (the CLI logs warnings only) never loads it. A message below the level is dropped
 * without it, as winston drops it.
 */
export function createLogger(opts: LoggerOptions): Logger {
  let real: Logger | null = null;
  const load = (): Logger => (real ??= winstonLogger(opts));
  const threshold = NPM_LEVELS[opts.level];
  const methods = new Map<PropertyKey, unknown>();
  const proxy: Logger = new Proxy({} as Logger, {
    get(_target, prop) {
      if (real === null && typeof prop === 'string' && threshold !== undefined && (NPM_LEVELS[prop] ?? -1) > threshold) return dropped;
      const logger = load();
      const v: unknown = Reflect.get(logger, prop, logger);
      if (typeof v !== 'function') return v;
      // methods bound to winston's logger, one function per name
      let m = methods.get(prop);
      if (m === undefined) methods.set(prop, (m = (v as (...a: unknown[]) => unknown).bind(logger)));
      return m;
    },
    set(_target, prop, value) {
      methods.delete(prop);
      return Reflect.set(load(), prop, value);
    },
    has: (_target, prop) => Reflect.has(load(), prop),
    ownKeys: () => Reflect.ownKeys(load()),
    getOwnPropertyDescriptor: (_target, prop) => {
      const d = Reflect.getOwnPropertyDescriptor(load(), prop);
      return d && { ...d, configurable: true };
    },
    getPrototypeOf: () => Reflect.getPrototypeOf(load()),
  });
  // a message below the level, before winston is loaded: nothing to write (winston returns itself)
  const dropped = () => proxy;
  return proxy;
}

function winstonLogger(opts: LoggerOptions): Logger {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const winston = require('winston') as typeof Winston;
  const redactFormat = winston.format((info) => {
    for (const key of Object.keys(info)) {
      const v = (info as Record<string, unknown>)[key];
      (info as Record<string, unknown>)[key] = SENSITIVE_KEY.test(key) ? maskValue(v) : redact(v);
    }
    return info;
  });
  const fmt =
    opts.format === 'json'
      ? winston.format.combine(redactFormat(), winston.format.timestamp(), winston.format.json())
      : winston.format.combine(
          redactFormat(),
          winston.format.timestamp(),
          winston.format.printf(({ timestamp, level, message, ...rest }) => {
            const extra = Object.keys(rest).length ? ' ' + JSON.stringify(rest) : '';
            return `${String(timestamp)} ${level} ${String(message)}${extra}`;
          }),
        );
  const transport = opts.stream
    ? new winston.transports.Stream({ stream: opts.stream })
    : new winston.transports.Console({ stderrLevels: ['error', 'warn', 'info', 'debug'] });
  return winston.createLogger({ level: opts.level, format: fmt, transports: [transport] });
}
