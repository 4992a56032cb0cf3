import {
  ChainRpcError, DEFAULT_RETRY, HttpJsonClient, isHttpJsonError, mapLimit, networkErrorCode, parseUnits, restFailure,
  type BalanceAnswer, type BalanceHistory, type BalancePoint, type BalanceQuery, type BalanceReader, type ChainEndpoint, type HttpJsonAnswer, type RetryPolicy, type Verdict,
} from '@wcs/core';
import { StrKey } from './strkey';

/** Stellar amounts: 7 decimals (stroops). */
const DECIMALS = 7;

export interface StellarBalanceReaderOptions {
  /** Bounded retry of unavailable Horizon answers (default 3 attempts, 250 ms then 500 ms apart). */
  readonly retry?: RetryPolicy;
  /** Account reads in flight at once (default 4). */
  readonly concurrency?: number;
  /** Reads tried again when an account changed during the read (default 3); then RPC_INCONSISTENT. */
  readonly consistencyAttempts?: number;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** "CODE:ISSUER" (the catalogue's form of a credit asset); null when it is not one. */
function assetOf(contract: string): { code: string; issuer: string } | null {
  const m = /^([A-Za-z0-9]{1,12}):(G[A-Z2-7]{55})$/.exec(contract);
  return m && StrKey.isValidEd25519PublicKey(m[2]!) ? { code: m[1]!, issuer: m[2]! } : null;
}

/** A Horizon problem document's type name ("…/horizon-errors/not_found" → "not_found"). */
function problemType(json: unknown): string | null {
  if (!isObject(json) || typeof json.type !== 'string') return null;
  const m = /([a-z_]+)$/.exec(json.type);
  return m ? m[1]! : null;
}

/**
 * Balances of Stellar accounts from Horizon (reconciliation): GET /accounts/{id}, one per
 * distinct account, `balances` read whole: XLM (native, the whole balance: the reserve is the
 * caller's to explain) and credit assets by the catalogue's "CODE:ISSUER". An account that does
 * not exist (404 not_found: never funded, or merged away) is NO_ACCOUNT for every query on it, and
 * so is a credit asset the account has no trustline to.
 *
 * history 'head': Horizon serves account state at its latest ingested ledger only. head() is
 * GET / history_latest_ledger (no hash: blockHash null). The answers of one balancesAt are of
 * one ledger: the latest ledger is read first, and every entry read (the account and each of its
 * trustlines) must have last_modified_ledger at or below it, so that ledger's state is what was
 * read; an entry changed meanwhile makes the read start again (consistencyAttempts).
 */
export class StellarBalanceReader implements BalanceReader {
  readonly history: BalanceHistory = { kind: 'head' };
  private readonly http: HttpJsonClient;
  private readonly host: string;
  private readonly concurrency: number;
  private readonly attempts: number;

  constructor(endpoint: ChainEndpoint, options: StellarBalanceReaderOptions = {}) {
    const { attempts, backoffMs } = options.retry ?? DEFAULT_RETRY;
    this.http = new HttpJsonClient(endpoint, {
      redirect: 'error', attempts, retryDelayMs: backoffMs, defaultTimeoutMs: 10_000,
      describeNetworkError: (e) => { const code = networkErrorCode(e); return code ? `connection failed (${code})` : 'connection failed'; },
    });
    try {
      this.host = new URL(endpoint.url).host;
    } catch {
      this.host = 'the configured endpoint';
    }
    this.concurrency = Math.max(1, options.concurrency ?? 4);
    this.attempts = Math.max(1, options.consistencyAttempts ?? 3);
  }

  /** Horizon's latest ingested ledger (GET / history_latest_ledger). */
  async head(): Promise<BalancePoint> {
    const root = await this.get('XLM root', '/');
    const latest = isObject(root.json) ? root.json.history_latest_ledger : undefined;
    if (!Number.isSafeInteger(latest) || (latest as number) < 1) throw this.bad('XLM root', 'no history_latest_ledger');
    return { height: BigInt(latest as number), blockHash: null };
  }

  async balancesAt(queries: readonly BalanceQuery[], at: BalancePoint): Promise<{ readonly at: BalancePoint; readonly answers: readonly BalanceAnswer[] }> {
    const checked = checkQueries(queries);
    if (!at || typeof at.height !== 'bigint' || at.height < 0n) throw new TypeError('balancesAt: at.height must be a ledger sequence (a non-negative bigint)');
    if (checked.length === 0) return { at, answers: [] };
    const accounts = [...new Set(checked.map((q) => q.address))];
    let moved = '';
    for (let attempt = 1; attempt <= this.attempts; attempt++) {
      const point = await this.head();
      const records = await mapLimit(accounts, this.concurrency, (a) => this.account(a));
      const byId = new Map(accounts.map((a, i) => [a, records[i]!]));
      const answers = checked.map((q) => this.answer(byId.get(q.address)!, q));
      const latest = answers.reduce((m, a) => (a.modified > m ? a.modified : m), 0n);
      if (latest <= point.height) return { at: point, answers: answers.map((a) => a.answer) };
      moved = `an entry was modified in ledger ${latest}, after ${point.height}`;
    }
    throw new ChainRpcError('RPC_INCONSISTENT', `XLM accounts: ${this.host}: the accounts kept changing during the read (${moved}; ${this.attempts} attempts)`);
  }

  // ---- internals ----

  private answer(record: Json | null, q: { address: string; asset: { code: string; issuer: string } | null }): { answer: BalanceAnswer; modified: bigint } {
    if (record === null) return { answer: { kind: 'NO_ACCOUNT' }, modified: 0n };
    const balances = Array.isArray(record.balances) ? record.balances.filter(isObject) : null;
    if (!balances) throw this.bad('XLM account', `no balances for ${q.address}`);
    const accountModified = this.ledger(record.last_modified_ledger, q.address);
    if (q.asset === null) {
      const native = balances.find((b) => b.asset_type === 'native');
      if (!native) throw this.bad('XLM account', `no native balance for ${q.address}`);
      return { answer: { kind: 'AMOUNT', amount: this.amount(native.balance) }, modified: accountModified };
    }
    const asset = q.asset;
    const line = balances.find((b) => (b.asset_type === 'credit_alphanum4' || b.asset_type === 'credit_alphanum12') && b.asset_code === asset.code && b.asset_issuer === asset.issuer);
    if (!line) return { answer: { kind: 'NO_ACCOUNT' }, modified: accountModified };
    const lineModified = line.last_modified_ledger === undefined ? accountModified : this.ledger(line.last_modified_ledger, q.address);
    return { answer: { kind: 'AMOUNT', amount: this.amount(line.balance) }, modified: lineModified > accountModified ? lineModified : accountModified };
  }

  /** GET /accounts/{id}; null when it does not exist (404 not_found). */
  private async account(account: string): Promise<Json | null> {
    const answer = await this.get('XLM account', `/accounts/${encodeURIComponent(account)}`, true);
    if (answer.status === 404) return null;
    if (!isObject(answer.json) || (answer.json.account_id ?? answer.json.id) !== account) throw this.bad('XLM account', `no record for ${account}`);
    return answer.json;
  }

  private async get(what: string, path: string, notFound = false): Promise<{ status: number; json: unknown }> {
    let status = 0;
    const read = (answer: HttpJsonAnswer): Verdict => {
      status = answer.status;
      if (answer.status === 404 && notFound && problemType(answer.json) === 'not_found') return { ok: true };
      if (answer.status === 429 || answer.status >= 500) return { ok: false, retry: true, message: `HTTP ${answer.status}` };
      if (answer.status !== 200) return { ok: false, retry: false, message: `HTTP ${answer.status}` };
      return answer.json === undefined ? { ok: false, retry: false, message: 'the answer is not JSON' } : { ok: true };
    };
    try {
      const json = await this.http.request({ path }, read);
      return { status, json };
    } catch (e) {
      throw isHttpJsonError(e) ? restFailure(e, what, this.host) : e;
    }
  }

  private amount(value: unknown): bigint {
    if (typeof value !== 'string') throw this.bad('XLM account', 'a balance that is not a decimal string');
    try {
      return parseUnits(value, DECIMALS);
    } catch {
      throw this.bad('XLM account', 'a balance that is not an exact 7-decimal amount');
    }
  }

  private ledger(value: unknown, account: string): bigint {
    if (!Number.isSafeInteger(value) || (value as number) < 0) throw this.bad('XLM account', `no last_modified_ledger for ${account}`);
    return BigInt(value as number);
  }

  private bad(what: string, why: string): ChainRpcError {
    return new ChainRpcError('RPC_BAD_RESPONSE', `${what}: ${this.host} answered ${why}`, { method: what });
  }
}

/** G… accounts only (custody accounts are G…; an M… address is an account plus a memo), credit assets as "CODE:ISSUER"; TypeError otherwise. */
function checkQueries(queries: readonly BalanceQuery[]): Array<{ address: string; asset: { code: string; issuer: string } | null }> {
  if (!Array.isArray(queries)) throw new TypeError('balancesAt: queries must be an array');
  return queries.map((q, i) => {
    if (!q || typeof q !== 'object') throw new TypeError(`balancesAt: query ${i} is not an object`);
    if (typeof q.address !== 'string' || !StrKey.isValidEd25519PublicKey(q.address)) throw new TypeError(`balancesAt: query ${i}: ${JSON.stringify(String(q.address).slice(0, 70))} is not a Stellar account (G…)`);
    if (q.contract === null) return { address: q.address, asset: null };
    const asset = typeof q.contract === 'string' ? assetOf(q.contract) : null;
    if (!asset) throw new TypeError(`balancesAt: query ${i}: contract must be "CODE:ISSUER", got ${JSON.stringify(String(q.contract).slice(0, 80))}`);
    return { address: q.address, asset };
  });
}
