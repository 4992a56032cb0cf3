import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { z } from 'zod';
import { CHAIN_CODE_RE, CHAIN_FAMILY_RE, ENVIRONMENTS, type ChainEndpoint } from '@wcs/core';
import { KEYSTORE_PACKAGES } from '../plugins/loader';
import type { BucketPolicy } from '../ratelimit/token-bucket';
import { resolveSecretSettings } from './secret-settings';

/** Raised when configuration is invalid; the message names the offending key. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** The config file's schema (WCS_CONFIG). */
function schemas() {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { z } = require('zod') as typeof import('zod');
  const chainSchema = z.strictObject({
    id: z.number().int().positive(),
    code: z.string().regex(CHAIN_CODE_RE, 'must be 2-16 upper-case letters, digits or _'),
    name: z.string().min(1).max(64),
    // a built-in family, or one an adapter package named in `adapters` declares (checked when the catalogue resolves)
    family: z.string().regex(CHAIN_FAMILY_RE, 'must be a family name: 2-16 lower-case letters, digits, _ or -'),
    environment: z.enum(ENVIRONMENTS as [string, ...string[]]),
    network: z.string().min(1).max(64),
    nativeSymbol: z.string().min(1).max(16),
    decimals: z.number().int().min(0).max(36),
    confirmations: z.number().int().min(0).max(100000),
    evmChainId: z.number().int().positive().nullable().optional(),
    /** Adapter-specific settings, e.g. { "depositAccount": "wcsdeposit11" } for EOS. */
    options: z.record(z.string().regex(/^[A-Za-z][A-Za-z0-9]{0,31}$/), z.string().max(256)).optional(),
  });

  const tokenSchema = z.strictObject({
    id: z.number().int().positive(),
    chainCode: z.string().regex(CHAIN_CODE_RE),
    environment: z.enum(ENVIRONMENTS as [string, ...string[]]),
    symbol: z.string().min(1).max(16),
    name: z.string().min(1).max(64),
    contract: z.string().min(1).max(128).nullable(),
    decimals: z.number().int().min(0).max(36),
    /** Smallest deposit credited, as a decimal string in the token's units (default: any amount). */
    minDeposit: z.string().regex(/^(0|[1-9]\d{0,35})(\.\d{1,36})?$/, 'must be a decimal string such as "0.01"').optional(),
    /** Confirmations for this token's deposits (default: the chain's). */
    confirmations: z.number().int().min(0).max(100000).optional(),
  });

  const configFileSchema = z.strictObject({
    /** When true (default) the built-in catalogue is kept and entries here add to or replace it by (code, environment) / id. */
    includeDefaultCatalogue: z.boolean().optional(),
    chains: z.array(chainSchema).optional(),
    tokens: z.array(tokenSchema).optional(),
    /** Adapter packages to load (default: the six built-in families). */
    adapters: z.array(z.string().min(1).max(214)).optional(),
  });

  return { chainSchema, tokenSchema, configFileSchema };
}

type Schemas = ReturnType<typeof schemas>;
let built: Schemas | null = null;

/** The config file's schema, built on first use: zod is loaded only by a process that reads a config file. */
export const configFileSchema = (): Schemas['configFileSchema'] => (built ??= schemas()).configFileSchema;

export type ChainConfig = z.infer<Schemas['chainSchema']>;
export type TokenConfig = z.infer<Schemas['tokenSchema']>;
export type ConfigFile = z.infer<Schemas['configFileSchema']>;

/** Callback delivery (docs/callbacks.md). */
export interface CallbackConfig {
  /** Per attempt: connect, send and read the answer. */
  readonly timeoutMs: number;
  /** nextRetryTime = now + base x 2^retryTimes seconds; the spec's 60 in production. */
  readonly retryBaseSeconds: number;
  readonly maxRetries: number;
  /** Deliveries in flight per worker process, and per endpoint (scheme://host:port). */
  readonly concurrency: number;
  readonly perEndpoint: number;
  /** Fallback poll for due retries; new tasks wake the dispatcher at once (NOTIFY). */
  readonly pollMs: number;
  /** Response bytes read per attempt; the rest is not read (the attempt fails: no ACK). */
  readonly maxResponseBytes: number;
  /** On-premise switch: live applications may call loopback/private/link-local targets. */
  readonly allowPrivateTargets: boolean;
  /** Events feed retention: settled events older than this many days are removed with their attempts. */
  readonly retentionDays: number;
  /** How often the retention job runs. */
  readonly pruneIntervalMs: number;
}

/** Deposit detection (docs/deposits.md). */
export interface DepositConfig {
  /** RPC endpoint per chain, keyed "environment:CODE", from WCS_RPC_<ENV>_<CODE>. */
  readonly endpoints: ReadonlyMap<string, ChainEndpoint>;
  /** First height to scan per chain when it has no cursor yet, from WCS_SCAN_START_<ENV>_<CODE>. */
  readonly startHeights: ReadonlyMap<string, bigint>;
  readonly pollMs: number;
  readonly batchBlocks: number;
  readonly concurrency: number;
  readonly leaseMs: number;
  readonly rpcTimeoutMs: number;
  /** Chains whose stored scan state is dropped when scanning starts (dev mode's fresh devnets). */
  readonly resetScanState?: readonly number[];
}

/** Withdrawals (docs/withdrawals.md); the chains' RPC endpoints are the deposit scanners'. */
export interface WithdrawConfig {
  /** How often hot wallet balances and fee quotes are read from the nodes. */
  readonly ledgerRefreshMs: number;
  /** How often each payout chain's orders are stepped (risk, sign, broadcast, track). */
  readonly pollMs: number;
  /** A broadcast transaction unmined for this long is replaced with a higher fee (where a fee cap is set). */
  readonly stuckMs: number;
  readonly bumpPercent: number;
  /** How often each chain's deposit addresses are looked at for collection (docs/collection.md). */
  readonly collectPlanMs: number;
  /** A collection wait (a sweep that cannot be priced, a balance not read) lasting this long raises COLLECTION_WAITING (WCS_COLLECT_WAIT_ALERT_SECONDS, default 900). */
  readonly collectWaitAlertSeconds: number;
  /** utxo consolidations: at most this many deposit outputs per transaction (WCS_COLLECT_MAX_INPUTS, default 200). */
  readonly collectMaxInputs: number;
  /** EVM delegated sweeps: at most this many entries per batch transaction (WCS_COLLECT_BATCH_MAX_ENTRIES, default 100, 1 to 500). */
  readonly collectBatchMaxEntries: number;
  /** EVM delegated sweeps: at most this much gas per batch transaction, entries counted at their upper bound (WCS_COLLECT_BATCH_MAX_GAS, default 8000000, 500000 to 30000000). */
  readonly collectBatchMaxGas: number;
  /**
   * utxo consolidations are not launched while the node's fee rate is above this ceiling, "environment:CODE"
   * from WCS_COLLECT_MAX_FEE_RATE_<ENV>_<CODE>: thousandths of a base unit per fee unit (Bitcoin: sat/kvB
   * for a ceiling given in sat/vB with at most 3 decimals); absent: no ceiling.
   */
  readonly collectMaxFeeRates: ReadonlyMap<string, bigint>;
  /** Highest fee per unit (EVM: wei per gas) a replacement may pay, "environment:CODE" from WCS_WITHDRAW_FEE_CAP_<ENV>_<CODE>. */
  readonly feeCaps: ReadonlyMap<string, bigint>;
  /** The chain check before signing (WCS_TRANSFER_CHAIN_CHECK on|off, default on; off for benchmarks and diagnosis only: docs/transfers.md). */
  readonly chainCheck: boolean;
}

/** Reconciliation (docs/reconciliation.md, "Settings"). */
export interface ReconcileConfig {
  /** Seconds between a chain's scheduled passes (WCS_RECONCILE_INTERVAL_SECONDS, default 300); 0: no scheduled passes. */
  readonly intervalSeconds: number;
  /** Every custody address is compared at least once per this many seconds (WCS_RECONCILE_CYCLE_SECONDS, default 86400). */
  readonly cycleSeconds: number;
  /** Balance queries handed to the chain's reader per call (WCS_RECONCILE_READ_CHUNK, default 5000); the reader batches them further. */
  readonly readChunk: number;
  /** Where a chain's balance reader runs (WCS_RECONCILE_READER): 'thread' (default), a worker thread of its own; 'inline', the pass's thread. */
  readonly reader: 'thread' | 'inline';
}

export function reconcileConfig(env: Env): ReconcileConfig {
  return {
    intervalSeconds: intVar(env, 'WCS_RECONCILE_INTERVAL_SECONDS', 300, 0, 86400),
    cycleSeconds: intVar(env, 'WCS_RECONCILE_CYCLE_SECONDS', 86400, 60, 30 * 86400),
    readChunk: intVar(env, 'WCS_RECONCILE_READ_CHUNK', 5000, 1, 100000),
    reader: enumVar(env, 'WCS_RECONCILE_READER', 'thread', ['thread', 'inline'] as const),
  };
}

/** Rate limits (docs/api.md "Rate limits"). */
export interface RateLimitConfig {
  /** Per API key, shared by every API process on the database; null when off (WCS_RATE_LIMIT_RPS=0). */
  readonly apiKey: BucketPolicy | null;
  /** Failed authentications per source address, per process, checked before any database work; null when off. */
  readonly authFailures: BucketPolicy | null;
  /** redis:// URL of a Redis the per-key buckets live in instead of Postgres (WCS_RATE_LIMIT_REDIS_URL); null: Postgres. */
  readonly redisUrl: string | null;
  /** Express's `trust proxy` setting: which proxies' X-Forwarded-For gives the source address (false: the socket's peer). */
  readonly trustProxy: boolean | number | string;
}

export function rateLimitConfig(env: Env): RateLimitConfig {
  const rps = intVar(env, 'WCS_RATE_LIMIT_RPS', 100, 0, 1_000_000);
  const burst = intVar(env, 'WCS_RATE_LIMIT_BURST', Math.max(1, rps * 2), 1, 10_000_000);
  const failBurst = intVar(env, 'WCS_AUTH_FAILURE_BURST', 100, 0, 1_000_000);
  const failPerMinute = intVar(env, 'WCS_AUTH_FAILURE_PER_MINUTE', 60, 1, 6_000_000);
  const rawProxy = (env.WCS_TRUST_PROXY ?? '').trim();
  let trustProxy: boolean | number | string = false;
  if (rawProxy === '' || rawProxy === '0' || rawProxy === 'false') trustProxy = false;
  else if (/^[1-9]\d{0,1}$/.test(rawProxy)) trustProxy = Number(rawProxy);
  else if (/^(loopback|linklocal|uniquelocal|[0-9a-fA-F:.]+(\/\d{1,3})?)(\s*,\s*(loopback|linklocal|uniquelocal|[0-9a-fA-F:.]+(\/\d{1,3})?))*$/.test(rawProxy)) trustProxy = rawProxy;
  else throw new ConfigError(`WCS_TRUST_PROXY: must be 0, a hop count (1-99), or a comma list of loopback, linklocal, uniquelocal and IP addresses or CIDR ranges, got "${rawProxy}"`);
  const rawRedis = (env.WCS_RATE_LIMIT_REDIS_URL ?? '').trim();
  if (rawRedis !== '') {
    let u: URL | null = null;
    try {
      u = new URL(rawRedis);
    } catch {
      /* reported below */
    }
    if (!u || (u.protocol !== 'redis:' && u.protocol !== 'rediss:')) throw new ConfigError('WCS_RATE_LIMIT_REDIS_URL: must be a redis:// or rediss:// URL');
  }
  return {
    redisUrl: rawRedis === '' ? null : rawRedis,
    apiKey: rps === 0 ? null : { ratePerSecond: rps, burst },
    authFailures: failBurst === 0 ? null : { ratePerSecond: failPerMinute / 60, burst: failBurst },
    trustProxy,
  };
}

const FEE_CAP_VAR = /^WCS_WITHDRAW_FEE_CAP_(TEST|LIVE)_([A-Z][A-Z0-9_]{1,15})$/;
const COLLECT_FEE_RATE_VAR = /^WCS_COLLECT_MAX_FEE_RATE_(TEST|LIVE)_([A-Z][A-Z0-9_]{1,15})$/;

export function withdrawConfig(env: Env): WithdrawConfig {
  const feeCaps = new Map<string, bigint>();
  for (const [key, raw] of Object.entries(env)) {
    const m = FEE_CAP_VAR.exec(key);
    if (!m || raw === undefined || raw === '') continue;
    if (!/^[1-9]\d{0,30}$/.test(raw)) throw new ConfigError(`${key}: must be a whole number of base units per fee unit (e.g. wei per gas), got "${raw}"`);
    feeCaps.set(`${m[1]!.toLowerCase()}:${m[2]}`, BigInt(raw));
  }
  const collectMaxFeeRates = new Map<string, bigint>();
  for (const [key, raw] of Object.entries(env)) {
    const m = COLLECT_FEE_RATE_VAR.exec(key);
    if (!m || raw === undefined || raw === '') continue;
    const d = /^(\d{1,30})(?:\.(\d{1,3}))?$/.exec(raw.trim());
    const milli = d ? BigInt(d[1]!) * 1000n + BigInt((d[2] ?? '').padEnd(3, '0')) : 0n;
    if (milli <= 0n) throw new ConfigError(`${key}: must be a positive number of base units per fee unit with at most 3 decimals (Bitcoin: sat/vB, e.g. 25 or 2.5), got "${raw}"`);
    collectMaxFeeRates.set(`${m[1]!.toLowerCase()}:${m[2]}`, milli);
  }
  return {
    ledgerRefreshMs: intVar(env, 'WCS_HOT_WALLET_REFRESH_MS', 15000, 100, 3600000),
    pollMs: intVar(env, 'WCS_WITHDRAW_POLL_MS', 1000, 10, 600000),
    stuckMs: intVar(env, 'WCS_WITHDRAW_STUCK_MS', 180000, 1000, 86400000),
    bumpPercent: intVar(env, 'WCS_WITHDRAW_BUMP_PERCENT', 25, 10, 500),
    collectPlanMs: intVar(env, 'WCS_COLLECT_PLAN_MS', 5000, 100, 3600000),
    collectWaitAlertSeconds: intVar(env, 'WCS_COLLECT_WAIT_ALERT_SECONDS', 900, 0, 604800),
    collectMaxInputs: intVar(env, 'WCS_COLLECT_MAX_INPUTS', 200, 1, 1400),
    collectBatchMaxEntries: intVar(env, 'WCS_COLLECT_BATCH_MAX_ENTRIES', 100, 1, 500),
    collectBatchMaxGas: intVar(env, 'WCS_COLLECT_BATCH_MAX_GAS', 8_000_000, 500_000, 30_000_000),
    collectMaxFeeRates,
    feeCaps,
    chainCheck: enumVar(env, 'WCS_TRANSFER_CHAIN_CHECK', 'on', ['on', 'off'] as const) === 'on',
  };
}

const RPC_VAR = /^WCS_RPC_(TEST|LIVE)_([A-Z][A-Z0-9_]{1,15})$/;
const START_VAR = /^WCS_SCAN_START_(TEST|LIVE)_([A-Z][A-Z0-9_]{1,15})$/;

/** The deposit settings from the environment; an RPC URL must be http(s) (its credentials are never logged). */
export function depositConfig(env: Env): DepositConfig {
  const rpcTimeoutMs = intVar(env, 'WCS_RPC_TIMEOUT_MS', 15000, 100, 300000);
  const endpoints = new Map<string, ChainEndpoint>();
  const startHeights = new Map<string, bigint>();
  for (const [key, raw] of Object.entries(env)) {
    if (raw === undefined || raw === '') continue;
    const rpc = RPC_VAR.exec(key);
    if (rpc) {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        throw new ConfigError(`${key}: must be an http(s) URL`);
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${key}: must be an http(s) URL, got ${url.protocol}`);
      endpoints.set(`${rpc[1]!.toLowerCase()}:${rpc[2]}`, { url: raw, timeoutMs: rpcTimeoutMs });
    }
    const start = START_VAR.exec(key);
    if (start) {
      if (!/^\d{1,18}$/.test(raw)) throw new ConfigError(`${key}: must be a block height, got "${raw}"`);
      startHeights.set(`${start[1]!.toLowerCase()}:${start[2]}`, BigInt(raw));
    }
  }
  return {
    endpoints,
    startHeights,
    pollMs: intVar(env, 'WCS_SCAN_POLL_MS', 1000, 10, 600000),
    batchBlocks: intVar(env, 'WCS_SCAN_BATCH_BLOCKS', 20, 1, 1000),
    concurrency: intVar(env, 'WCS_SCAN_CONCURRENCY', 4, 1, 64),
    leaseMs: intVar(env, 'WCS_SCAN_LEASE_MS', 30000, 1000, 3600000),
    rpcTimeoutMs,
  };
}

/** The Prometheus endpoint (docs/operations.md), on its own port; null when WCS_METRICS_PORT is unset. */
export interface MetricsConfig {
  /** 0: a free port, chosen at start and logged. */
  readonly port: number;
  readonly host: string;
  /** When set, scrapes must send `Authorization: Bearer <token>`. Never logged. */
  readonly token: string | null;
  /** During a token rotation: the previous token, accepted as well (WCS_METRICS_TOKEN_PREVIOUS / _FILE). Never logged. */
  readonly previousToken?: string | null;
  /** The files the tokens came from (the _FILE forms): read again when they change, so a rotation needs no restart. */
  readonly tokenFile?: string | null;
  readonly previousTokenFile?: string | null;
}

const HOSTNAME_RE = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** The metrics settings; the token is checked for shape only and never echoed in an error. `files`: where _FILE forms were read from. */
export function metricsConfig(env: Env, apiPort: number, files: Readonly<Record<string, string>> = {}): MetricsConfig | null {
  const rawPort = env.WCS_METRICS_PORT;
  if (rawPort === undefined || rawPort === '') return null;
  const port = intVar(env, 'WCS_METRICS_PORT', 0, 0, 65535);
  if (port !== 0 && port === apiPort) throw new ConfigError(`WCS_METRICS_PORT: must differ from PORT (${apiPort}); metrics are served on their own port`);
  const host = env.WCS_METRICS_HOST && env.WCS_METRICS_HOST !== '' ? env.WCS_METRICS_HOST : '127.0.0.1';
  if (net.isIP(host) === 0 && !HOSTNAME_RE.test(host)) throw new ConfigError(`WCS_METRICS_HOST: must be an IP address or a host name, got "${host}"`);
  const token = metricsToken(env, 'WCS_METRICS_TOKEN');
  const previousToken = metricsToken(env, 'WCS_METRICS_TOKEN_PREVIOUS');
  if (previousToken !== null && token === null) throw new ConfigError('WCS_METRICS_TOKEN_PREVIOUS: set only during a rotation, together with WCS_METRICS_TOKEN (the new token)');
  const tokenFile = files.WCS_METRICS_TOKEN ?? null;
  const previousTokenFile = files.WCS_METRICS_TOKEN_PREVIOUS ?? null;
  return {
    port, host, token,
    ...(previousToken !== null ? { previousToken } : {}),
    ...(tokenFile !== null ? { tokenFile } : {}),
    ...(previousTokenFile !== null ? { previousTokenFile } : {}),
  };
}

/** A metrics bearer token's shape: 16-512 printable ASCII characters without spaces; the token is never echoed. */
export function checkMetricsToken(name: string, token: string): string {
  if (!/^[\x21-\x7e]{16,512}$/.test(token)) {
    throw new ConfigError(`${name}: must be 16 to 512 printable ASCII characters without spaces (got ${token.length} characters)`);
  }
  return token;
}

function metricsToken(env: Env, name: string): string | null {
  const raw = env[name];
  return raw === undefined || raw === '' ? null : checkMetricsToken(name, raw);
}

/** The operator console (docs/console.md): its own port, loopback by default. */
export interface ConsoleConfig {
  /** 0: a free port, chosen at start and logged. */
  readonly port: number;
  readonly host: string;
  /** Cookies carry Secure (set when the console is reached over TLS, e.g. behind a reverse proxy). */
  readonly secureCookies: boolean;
}

export function consoleConfig(env: Env, apiPort: number): ConsoleConfig {
  const port = intVar(env, 'WCS_CONSOLE_PORT', 8090, 0, 65535);
  if (port !== 0 && port === apiPort) throw new ConfigError(`WCS_CONSOLE_PORT: must differ from PORT (${apiPort}); the console is served on its own port`);
  const host = env.WCS_CONSOLE_HOST && env.WCS_CONSOLE_HOST !== '' ? env.WCS_CONSOLE_HOST : '127.0.0.1';
  if (net.isIP(host) === 0 && !HOSTNAME_RE.test(host)) throw new ConfigError(`WCS_CONSOLE_HOST: must be an IP address or a host name, got "${host}"`);
  const secure = env.WCS_CONSOLE_SECURE_COOKIES ?? 'false';
  if (secure !== 'true' && secure !== 'false') throw new ConfigError(`WCS_CONSOLE_SECURE_COOKIES: must be true or false, got "${secure}"`);
  return { port, host, secureCookies: secure === 'true' };
}

export interface ServiceConfig {
  port: number;
  host: string;
  databaseUrl: string | null;
  dataDir: string;
  embeddedPgPort: number;
  masterKey: { source: 'env' | 'file' | 'dev-file'; value: string | null; file: string | null };
  /** During a master key rotation: the key secrets are moving to (WCS_MASTER_KEY_NEXT / _FILE); null otherwise. */
  masterKeyNext: { source: 'env' | 'file'; value: string; file: string | null } | null;
  configFile: string | null;
  file: ConfigFile;
  bodyLimitBytes: number;
  secretGraceSeconds: number;
  nonceSweepSeconds: number;
  logLevel: 'error' | 'warn' | 'info' | 'debug';
  logFormat: 'json' | 'pretty';
  dbPoolMax: number;
  callbacks: CallbackConfig;
  deposits: DepositConfig;
  withdrawals: WithdrawConfig;
  reconcile: ReconcileConfig;
  rateLimits: RateLimitConfig;
  keystoreBackend: string;
  /**
   * How far above a reserved block the key store's key-index mark is raised (WCS_KEY_INDEX_MARK_AHEAD,
   * default 3): fewer durable key-store writes for a larger gap after a restart or a restore
   * (docs/deployment.md, "Key-index marks").
   */
  keyIndexMarkAhead: number;
  /** Prometheus metrics on their own port (null: off). */
  metrics: MetricsConfig | null;
  console: ConsoleConfig;
  /** The environment the config was read from (backends read their own variables from it). */
  env: Readonly<Record<string, string | undefined>>;
}

type Env = Record<string, string | undefined>;

function intVar(env: Env, key: string, dflt: number, min: number, max: number): number {
  const raw = env[key];
  if (raw === undefined || raw === '') return dflt;
  if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${key}: must be an integer, got "${raw}"`);
  const n = Number(raw.trim());
  if (n < min || n > max) throw new ConfigError(`${key}: must be between ${min} and ${max}, got ${n}`);
  return n;
}

function boolVar(env: Env, key: string): boolean {
  const raw = env[key];
  if (raw === undefined || raw === '' || raw === '0' || raw === 'false') return false;
  if (raw === '1' || raw === 'true') return true;
  throw new ConfigError(`${key}: must be 1/true or 0/false, got "${raw}"`);
}

function enumVar<T extends string>(env: Env, key: string, dflt: T, allowed: readonly T[]): T {
  const raw = env[key];
  if (raw === undefined || raw === '') return dflt;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${key}: must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

export function readConfigFile(file: string): ConfigFile {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`WCS_CONFIG: cannot read ${file}: ${(e as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`WCS_CONFIG: ${file} is not valid JSON: ${(e as Error).message}`);
  }
  const parsed = configFileSchema().safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '');
    throw new ConfigError(`WCS_CONFIG: ${file}: ${where || '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}

/** Loads and validates the whole configuration from the environment (and the optional config file). */
export function loadConfig(rawEnv: Env = process.env, cwd: string = process.cwd()): ServiceConfig {
  // every secret setting may name a file instead (<NAME>_FILE); from here on `env` holds the values
  const { env, files } = resolveSecretSettings(rawEnv, cwd);
  const databaseUrl = env.DATABASE_URL && env.DATABASE_URL.trim() !== '' ? env.DATABASE_URL.trim() : null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL: must be a postgres:// or postgresql:// URL');
  }
  const dataDir = path.resolve(cwd, env.WCS_DATA_DIR && env.WCS_DATA_DIR !== '' ? env.WCS_DATA_DIR : 'data');
  const configFile = env.WCS_CONFIG && env.WCS_CONFIG !== '' ? path.resolve(cwd, env.WCS_CONFIG) : null;

  let masterKey: ServiceConfig['masterKey'];
  if (files.WCS_MASTER_KEY) {
    masterKey = { source: 'file', value: env.WCS_MASTER_KEY!, file: files.WCS_MASTER_KEY };
  } else if (env.WCS_MASTER_KEY && env.WCS_MASTER_KEY !== '') {
    masterKey = { source: 'env', value: env.WCS_MASTER_KEY, file: null };
  } else if (!databaseUrl) {
    masterKey = { source: 'dev-file', value: null, file: path.join(dataDir, 'master.key') };
  } else {
    throw new ConfigError(
      'WCS_MASTER_KEY: required (or WCS_MASTER_KEY_FILE) when DATABASE_URL is set; generate one with `wcs keygen`',
    );
  }

  const next = env.WCS_MASTER_KEY_NEXT && env.WCS_MASTER_KEY_NEXT !== '' ? env.WCS_MASTER_KEY_NEXT : null;
  const masterKeyNext: ServiceConfig['masterKeyNext'] = next === null ? null
    : { source: files.WCS_MASTER_KEY_NEXT ? 'file' : 'env', value: next, file: files.WCS_MASTER_KEY_NEXT ?? null };

  const port = intVar(env, 'PORT', 8080, 0, 65535);
  return {
    port,
    host: env.HOST && env.HOST !== '' ? env.HOST : '127.0.0.1',
    databaseUrl,
    dataDir,
    embeddedPgPort: intVar(env, 'WCS_EMBEDDED_PG_PORT', 54329, 1024, 65535),
    masterKey,
    masterKeyNext,
    configFile,
    file: configFile ? readConfigFile(configFile) : {},
    bodyLimitBytes: intVar(env, 'WCS_BODY_LIMIT_BYTES', 1048576, 1024, 64 * 1048576),
    secretGraceSeconds: intVar(env, 'WCS_SECRET_GRACE_SECONDS', 86400, 0, 90 * 86400),
    nonceSweepSeconds: intVar(env, 'WCS_NONCE_SWEEP_SECONDS', 60, 1, 3600),
    logLevel: enumVar(env, 'WCS_LOG_LEVEL', 'info', ['error', 'warn', 'info', 'debug'] as const),
    logFormat: enumVar(env, 'WCS_LOG_FORMAT', 'json', ['json', 'pretty'] as const),
    dbPoolMax: intVar(env, 'WCS_DB_POOL_MAX', 10, 1, 200),
    callbacks: {
      timeoutMs: intVar(env, 'WCS_CALLBACK_TIMEOUT_MS', 10000, 100, 120000),
      retryBaseSeconds: intVar(env, 'WCS_CALLBACK_RETRY_BASE_SECONDS', 60, 0, 3600),
      maxRetries: 10,
      concurrency: intVar(env, 'WCS_CALLBACK_CONCURRENCY', 64, 1, 1024),
      perEndpoint: intVar(env, 'WCS_CALLBACK_PER_ENDPOINT', 8, 1, 256),
      pollMs: intVar(env, 'WCS_CALLBACK_POLL_MS', 1000, 10, 60000),
      maxResponseBytes: intVar(env, 'WCS_CALLBACK_MAX_RESPONSE_BYTES', 65536, 1024, 16 * 1048576),
      allowPrivateTargets: boolVar(env, 'WCS_CALLBACK_ALLOW_PRIVATE'),
      retentionDays: intVar(env, 'WCS_EVENTS_RETENTION_DAYS', 90, 1, 3650),
      pruneIntervalMs: intVar(env, 'WCS_EVENTS_PRUNE_INTERVAL_MS', 3_600_000, 1000, 86_400_000),
    },
    deposits: depositConfig(env),
    withdrawals: withdrawConfig(env),
    reconcile: reconcileConfig(env),
    rateLimits: rateLimitConfig(env),
    keystoreBackend: enumVar(env, 'WCS_KEYSTORE_BACKEND', 'software', Object.keys(KEYSTORE_PACKAGES)),
    keyIndexMarkAhead: intVar(env, 'WCS_KEY_INDEX_MARK_AHEAD', 3, 0, 1_000_000),
    metrics: metricsConfig(env, port, files),
    console: consoleConfig(env, port),
    env: Object.freeze({ ...env }),
  };
}
