import {
  ChainRpcError, HttpJsonClient, isTransientStatus, jsonBigInt, mapLimit, parseJsonExact,
  type BalanceAnswer, type BalanceHistory, type BalancePoint, type BalanceQuery, type BalanceReader, type ChainEndpoint, type HttpJsonAnswer, type RetryOptions, type Verdict,
} from '@wcs/core';
import { isEosAccountName } from './name';
import { eosError, eosHttpError } from './rpc-error';
import { parseEosQuantity } from './scanner';
import { tokenOf } from './transfer';

export interface EosBalanceReaderOptions extends RetryOptions {
  /** Requests in flight at once (default 4). */
  readonly concurrency?: number;
  readonly fetch?: typeof fetch;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const HEX64 = /^[0-9a-f]{64}$/;
/** nodeos account_query_exception: get_account of an account that does not exist (Leap 4+). */
const ACCOUNT_QUERY_EXCEPTION = 3060002;

/** A nodeos error answer's `error` (any HTTP status), or null. */
function nodeosError(json: unknown): { code: number; name: string; what: string; details: string } | null {
  if (!isObject(json) || !isObject(json.error) || typeof json.error.code !== 'number') return null;
  const e = json.error;
  const details = Array.isArray(e.details) ? e.details.map((d) => (isObject(d) && typeof d.message === 'string' ? d.message : '')).filter((m) => m !== '').join('; ') : '';
  return { code: e.code as number, name: typeof e.name === 'string' ? e.name : '', what: typeof e.what === 'string' ? e.what : '', details };
}

/** 2xx JSON, and nodeos error bodies whatever their status, are answers. */
function readNodeos(answer: HttpJsonAnswer): Verdict {
  if (answer.status >= 200 && answer.status < 300) return answer.json === undefined ? { ok: false, retry: false, message: 'the answer is not JSON' } : { ok: true };
  if (nodeosError(answer.json)) return { ok: true };
  return { ok: false, retry: isTransientStatus(answer.status), message: `HTTP ${answer.status}` };
}

/**
 * Balances of EOS (Antelope) accounts (reconciliation): get_currency_balance of each (token,
 * account) — the token's contract and symbol, eosio.token / EOS for the native coin (contract
 * null), "account:SYMBOL" for a token as the catalogue writes it — read exactly as base units.
 * An account with no balance row of any token asked is looked up (get_account): missing
 * (account_query_exception, or "unknown key" before Leap 3.1) it is NO_ACCOUNT for every query
 * on it, else its missing rows are 0.
 *
 * history 'head': nodeos answers table reads at its own state only (its head block, reversible
 * blocks included; a node run with read-mode = irreversible answers at the last irreversible
 * block). head() is the last irreversible block (get_info), the point a pass is meant to be
 * final at; balancesAt answers with get_info read after the reads: its head block (which every
 * answer is at or below, the node's state moving on as blocks come every half second), or its last
 * irreversible block when the node reads irreversible state only (head = LIB there).
 */
export class EosBalanceReader implements BalanceReader {
  readonly history: BalanceHistory = { kind: 'head' };
  private readonly http: HttpJsonClient;
  private readonly concurrency: number;

  constructor(endpoint: ChainEndpoint, options: EosBalanceReaderOptions = {}) {
    this.http = new HttpJsonClient(endpoint, { attempts: options.attempts, retryDelayMs: options.backoffMs, fetch: options.fetch, parse: parseJsonExact });
    this.concurrency = Math.max(1, options.concurrency ?? 4);
  }

  /** The last irreversible block (get_info last_irreversible_block_num / _id). */
  async head(): Promise<BalancePoint> {
    const info = await this.info();
    return info.lib;
  }

  async balancesAt(queries: readonly BalanceQuery[], at: BalancePoint): Promise<{ readonly at: BalancePoint; readonly answers: readonly BalanceAnswer[] }> {
    const checked = checkQueries(queries);
    if (!at || typeof at.height !== 'bigint' || at.height < 0n) throw new TypeError('balancesAt: at.height must be a block number (a non-negative bigint)');
    if (checked.length === 0) return { at, answers: [] };
    const pairs = [...new Map(checked.map((q) => [key(q), q])).values()];
    const amounts = await mapLimit(pairs, this.concurrency, (q) => this.currencyBalance(q.address, q.token));
    const byPair = new Map(pairs.map((q, i) => [key(q), amounts[i]!]));
    // Accounts without any row: do they exist?
    const rowless = [...new Set(checked.map((q) => q.address))].filter((a) => pairs.every((q) => q.address !== a || byPair.get(key(q)) === null));
    const exists = await mapLimit(rowless, this.concurrency, (a) => this.accountExists(a));
    const missing = new Set(rowless.filter((_, i) => !exists[i]));
    const info = await this.info();
    const point = info.head.height === info.lib.height ? info.lib : info.head;
    return {
      at: point,
      answers: checked.map((q): BalanceAnswer => (missing.has(q.address) ? { kind: 'NO_ACCOUNT' } : { kind: 'AMOUNT', amount: byPair.get(key(q)) ?? 0n })),
    };
  }

  // ---- internals ----

  /** The row's amount in base units; null when the account has no row of that token. */
  private async currencyBalance(account: string, token: { account: string; symbol: string }): Promise<bigint | null> {
    const answer = await this.call('get_currency_balance', '/v1/chain/get_currency_balance', { code: token.account, account, symbol: token.symbol });
    const err = nodeosError(answer);
    if (err) throw this.fault('get_currency_balance', err);
    if (!Array.isArray(answer)) throw this.bad('get_currency_balance', 'an answer that is not a list');
    for (const row of answer) {
      const q = parseEosQuantity(row);
      if (q === null) throw this.bad('get_currency_balance', `an unreadable balance ${JSON.stringify(String(row)).slice(0, 60)}`);
      if (q.symbol === token.symbol) return q.amount;
    }
    return null;
  }

  /** get_account: true when it answers the account, false for account_query_exception (Leap 4+) or "unknown key" (before Leap 3.1). */
  private async accountExists(account: string): Promise<boolean> {
    const answer = await this.call('get_account', '/v1/chain/get_account', { account_name: account });
    const err = nodeosError(answer);
    if (err) {
      if (err.code === ACCOUNT_QUERY_EXCEPTION || /unknown key/.test(err.details)) return false;
      throw this.fault('get_account', err);
    }
    if (!isObject(answer) || answer.account_name !== account) throw this.bad('get_account', `no account ${account}`);
    return true;
  }

  private async info(): Promise<{ head: BalancePoint; lib: BalancePoint }> {
    const answer = await this.call('get_info', '/v1/chain/get_info', {});
    const err = nodeosError(answer);
    if (err) throw this.fault('get_info', err);
    if (!isObject(answer)) throw this.bad('get_info', 'an answer that is not an object');
    const headNum = jsonBigInt(answer.head_block_num);
    const libNum = jsonBigInt(answer.last_irreversible_block_num);
    const headId = answer.head_block_id;
    const libId = answer.last_irreversible_block_id;
    if (headNum === null || typeof headId !== 'string' || !HEX64.test(headId) || libNum === null || libNum <= 0n || typeof libId !== 'string' || !HEX64.test(libId)) {
      throw this.bad('get_info', 'no head and last irreversible block (number and id)');
    }
    // An Antelope block id begins with its block number (4 bytes, big-endian).
    if (BigInt(Buffer.from(libId, 'hex').readUInt32BE(0)) !== libNum || BigInt(Buffer.from(headId, 'hex').readUInt32BE(0)) !== headNum) throw this.bad('get_info', 'block ids that are not of their block numbers');
    return { head: { height: headNum, blockHash: headId }, lib: { height: libNum, blockHash: libId } };
  }

  private async call(method: string, path: string, body: Json): Promise<unknown> {
    try {
      return await this.http.request({ path, body: JSON.stringify(body) }, readNodeos);
    } catch (e) {
      throw eosHttpError(method, e, `${this.http.host}: `);
    }
  }

  private fault(method: string, e: { code: number; name: string; what: string; details: string }): ChainRpcError {
    const text = `${e.name || 'error'} (${e.code})${e.what ? `: ${e.what}` : ''}${e.details ? `: ${e.details}` : ''}`;
    return eosError('RPC_ERROR', method, `${this.http.host} answered ${this.http.scrub(text.replace(/[\u0000-\u001f]/g, ' ')).slice(0, 300)}`, { rpcCode: e.code });
  }

  private bad(method: string, why: string): ChainRpcError {
    return eosError('RPC_BAD_RESPONSE', method, `${this.http.host} answered ${why}`);
  }
}

const key = (q: { address: string; token: { account: string; symbol: string } }) => `${q.token.account}:${q.token.symbol}/${q.address}`;

/** Account names and "account:SYMBOL" tokens; TypeError otherwise. */
function checkQueries(queries: readonly BalanceQuery[]): Array<{ address: string; token: { account: string; symbol: string } }> {
  if (!Array.isArray(queries)) throw new TypeError('balancesAt: queries must be an array');
  return queries.map((q, i) => {
    if (!q || typeof q !== 'object') throw new TypeError(`balancesAt: query ${i} is not an object`);
    if (typeof q.address !== 'string' || !isEosAccountName(q.address)) throw new TypeError(`balancesAt: query ${i}: ${JSON.stringify(String(q.address).slice(0, 40))} is not an EOS account name`);
    if (q.contract !== null && typeof q.contract !== 'string') throw new TypeError(`balancesAt: query ${i}: contract must be "account:SYMBOL" or null`);
    try {
      return { address: q.address, token: tokenOf(q.contract) };
    } catch (e) {
      throw new TypeError(`balancesAt: query ${i}: ${(e as Error).message}`);
    }
  });
}
