import { isValidClassicAddress } from 'xrpl';
import {
  ChainRpcError, ScannerHttp, mapLimit,
  type BalanceAnswer, type BalanceHistory, type BalancePoint, type BalanceQuery, type BalanceReader, type ChainEndpoint, type RetryPolicy,
} from '@wcs/core';
import { isObject, judgeRippled, rippledError, validatedLedgerIndex } from './rippled';

/**
 * The first ledger of the XRP Ledger mainnet's history that exists anywhere (ledgers below it
 * were lost in 2013): a server whose complete_ledgers starts here or lower is a full-history server.
 */
export const FIRST_MAINNET_LEDGER = 32570;

export interface XrpBalanceReaderOptions {
  /** Bounded retry of unavailable or busy rippled answers (default 3 attempts, 250 ms then 500 ms apart). */
  readonly retry?: RetryPolicy;
  /** account_info requests in flight at once (default 4; rippled's JSON-RPC has no batches). */
  readonly concurrency?: number;
}

const DROPS = /^(0|[1-9][0-9]{0,17})$/;
const HASH = /^[0-9A-Fa-f]{64}$/;

/**
 * The history a rippled server holds, from server_info's complete_ledgers ("32570-82521761",
 * possibly several ranges, or "empty") and its validated ledger: 'archive' when the range that
 * reaches the validated ledger starts at FIRST_MAINNET_LEDGER or lower (a full-history server),
 * else 'recent' with the depth of that range (a server with online_delete keeps between
 * online_delete and twice that many ledgers; the depth is what it holds now). Pure.
 */
export function historyOfCompleteLedgers(completeLedgers: string, validated: number): BalanceHistory {
  for (const range of completeLedgers.split(',')) {
    const m = /^\s*(\d+)(?:-(\d+))?\s*$/.exec(range);
    if (!m) continue;
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (from <= validated && validated <= to) return from <= FIRST_MAINNET_LEDGER ? { kind: 'archive' } : { kind: 'recent', depth: BigInt(validated - from) };
  }
  return { kind: 'recent', depth: 0n };
}

/**
 * Balances of XRP accounts (reconciliation): account_info at one validated ledger (ledger_index =
 * `at`), one request per distinct account (rippled's JSON-RPC takes no batches), `Balance` in
 * drops: the whole balance, reserve included (the reserve is the caller's to explain). An account
 * that does not exist at that ledger (actNotFound: never funded, or deleted) is NO_ACCOUNT.
 * Native XRP only: the catalogue lists no XRP Ledger tokens and the adapter pays out XRP only, so
 * a query with a contract is a TypeError.
 *
 * Validated ledgers are final (no reorgs): every answer is of exactly `at`. history: from
 * server_info's complete_ledgers, learnt at each head() ('recent' with depth 0 until then): a
 * full-history server is 'archive', a server with online_delete 'recent' with the depth it
 * holds. A ledger the server does not hold is RPC_ERROR with nodeCode lgrNotFound.
 */
export class XrpBalanceReader implements BalanceReader {
  private readonly http: ScannerHttp;
  private readonly concurrency: number;
  private learnt: BalanceHistory | null = null;

  constructor(endpoint: ChainEndpoint, options: XrpBalanceReaderOptions = {}) {
    this.http = new ScannerHttp(endpoint, options.retry);
    this.concurrency = Math.max(1, options.concurrency ?? 4);
  }

  get history(): BalanceHistory {
    return this.learnt ?? { kind: 'recent', depth: 0n };
  }

  /** The latest validated ledger (`ledger`, ledger_index "validated"): index and hash; server_info tells the history. */
  async head(): Promise<BalancePoint> {
    const ledger = await this.call('ledger', { ledger_index: 'validated' });
    const index = validatedLedgerIndex(ledger);
    const hash = ledger.ledger_hash ?? (isObject(ledger.ledger) ? ledger.ledger.ledger_hash : undefined);
    if (index === null || typeof hash !== 'string' || !HASH.test(hash)) throw this.bad('ledger', 'no validated ledger index and hash');
    const info = await this.call('server_info', {});
    const state = isObject(info.info) ? info.info : {};
    const validated = isObject(state.validated_ledger) ? state.validated_ledger.seq : undefined;
    if (typeof state.complete_ledgers !== 'string' || !Number.isSafeInteger(validated)) throw this.bad('server_info', 'no complete_ledgers and validated_ledger.seq');
    this.learnt = historyOfCompleteLedgers(state.complete_ledgers, validated as number);
    return { height: BigInt(index), blockHash: hash.toUpperCase() };
  }

  async balancesAt(queries: readonly BalanceQuery[], at: BalancePoint): Promise<{ readonly at: BalancePoint; readonly answers: readonly BalanceAnswer[] }> {
    const checked = checkQueries(queries);
    if (!at || typeof at.height !== 'bigint' || at.height < 1n || at.height > BigInt(Number.MAX_SAFE_INTEGER)) throw new TypeError('balancesAt: at.height must be a ledger index (a positive bigint)');
    if (at.blockHash !== null && (typeof at.blockHash !== 'string' || !HASH.test(at.blockHash))) throw new TypeError('balancesAt: at.blockHash must be a ledger hash or null');
    if (checked.length === 0) return { at, answers: [] };
    const accounts = [...new Set(checked)];
    const answers = await mapLimit(accounts, this.concurrency, (a) => this.accountBalance(a, at));
    const byAccount = new Map(accounts.map((a, i) => [a, answers[i]!]));
    return { at, answers: checked.map((a) => byAccount.get(a)!) };
  }

  // ---- internals ----

  private async accountBalance(account: string, at: BalancePoint): Promise<BalanceAnswer> {
    const info = await this.call('account_info', { account, ledger_index: Number(at.height) }, true);
    if (info.status === 'error') {
      if (info.error === 'actNotFound') return { kind: 'NO_ACCOUNT' };
      if (info.error === 'lgrNotFound') throw new ChainRpcError('RPC_ERROR', `XRP account_info: ${this.http.label} does not hold ledger ${at.height} (lgrNotFound: see its server_info complete_ledgers)`, { method: 'account_info', nodeCode: 'lgrNotFound' });
      throw new ChainRpcError('RPC_ERROR', `XRP account_info: rippled error ${String(info.error)}`, { method: 'account_info', nodeCode: String(info.error) });
    }
    if (info.validated !== true || info.ledger_index !== Number(at.height)) throw this.bad('account_info', `an answer of validated ledger ${at.height} (got ${String(info.ledger_index)}, validated ${String(info.validated)})`);
    if (at.blockHash !== null && typeof info.ledger_hash === 'string' && info.ledger_hash.toUpperCase() !== at.blockHash.toUpperCase()) {
      throw this.bad('account_info', `ledger ${at.height} with hash ${at.blockHash} (it answered ${info.ledger_hash})`);
    }
    const data = isObject(info.account_data) ? info.account_data : null;
    if (!data || data.Account !== account) throw this.bad('account_info', `no account_data for ${account}`);
    if (typeof data.Balance !== 'string' || !DROPS.test(data.Balance)) throw this.bad('account_info', `a Balance of ${account} that is not an amount of drops`);
    return { kind: 'AMOUNT', amount: BigInt(data.Balance) };
  }

  /** One JSON-RPC call's result; rippled errors throw RPC_ERROR unless `errorsAsResult`. */
  private async call(method: string, params: Record<string, unknown>, errorsAsResult = false): Promise<Record<string, unknown>> {
    const body = await this.http.request(`XRP ${method}`, { body: JSON.stringify({ method, params: [params] }) }, judgeRippled);
    const result = (body as { result: Record<string, unknown> }).result;
    const code = rippledError(result);
    if (code === null) return result;
    if (!errorsAsResult) throw new ChainRpcError('RPC_ERROR', `XRP ${method}: rippled error ${code}`, { method, nodeCode: code });
    return { ...result, status: 'error', error: code };
  }

  private bad(method: string, why: string): ChainRpcError {
    return new ChainRpcError('RPC_BAD_RESPONSE', `XRP ${method}: ${this.http.label} answered not ${why}`, { method });
  }
}

/** Classic r… addresses, native only; TypeError otherwise. */
function checkQueries(queries: readonly BalanceQuery[]): string[] {
  if (!Array.isArray(queries)) throw new TypeError('balancesAt: queries must be an array');
  return queries.map((q, i) => {
    if (!q || typeof q !== 'object') throw new TypeError(`balancesAt: query ${i} is not an object`);
    if (typeof q.address !== 'string' || !isValidClassicAddress(q.address)) throw new TypeError(`balancesAt: query ${i}: ${JSON.stringify(String(q.address).slice(0, 60))} is not a classic XRP address`);
    if (q.contract !== null) throw new TypeError(`balancesAt: query ${i}: XRP balances are native only (contract must be null)`);
    return q.address;
  });
}
