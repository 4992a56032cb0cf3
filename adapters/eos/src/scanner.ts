import {
  HttpJsonClient, jsonBigInt as toBigInt, parseJsonExact, readJson, refusalWithMessage,
  type AddressNature, type ChainEndpoint, type HistoryReadOptions, type HistoryScanner, type HttpJsonOptions, type RetryOptions, type HttpJsonRequest, type ObservedTransfer, type Verdict,
} from '@wcs/core';
import { isEosAccountName } from './name';
import { eosError, eosHttpError } from './rpc-error';

/** The system token contract and symbol the catalogue writes as contract null. */
export const EOS_NATIVE_CONTRACT = 'eosio.token';
export const EOS_NATIVE_SYMBOL = 'EOS';

/** Upper bound of the global_sequence range asked for (Elasticsearch long). */
const MAX_SEQUENCE = '9223372036854775807';

export interface EosScannerOptions extends Pick<RetryOptions, 'attempts' | 'backoffMs'>, Pick<HttpJsonOptions, 'fetch'> {
  /** Largest `limit` sent to get_actions (Hyperion's default maximum is 1000). */
  readonly maxActionsPerPage?: number;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An Antelope asset "1.2345 EOS" as base units and symbol; null when it is not one. */
export function parseEosQuantity(quantity: unknown): { readonly amount: bigint; readonly symbol: string; readonly decimals: number } | null {
  if (typeof quantity !== 'string') return null;
  const m = /^(\d{1,30})(?:\.(\d{1,18}))? ([A-Z]{1,7})$/.exec(quantity);
  if (!m) return null;
  const fraction = m[2] ?? '';
  return { amount: BigInt(m[1]! + fraction), symbol: m[3]!, decimals: fraction.length };
}

/**
 * The deposit one Hyperion action document shows for `address`, or null: a `transfer` action whose
 * data.to is the address and data.from is not, with a well-formed positive quantity. The contract
 * is "<act.account>:<SYMBOL>" (eosio.token EOS: null), so a token of another contract with the
 * same symbol never passes for the catalogue's. With `outgoing`, a transfer whose data.from is the
 * address (and data.to another account) too, with toAddress data.to.
 */
export function eosTransferInAction(action: unknown, address: string, outgoing = false): ObservedTransfer | null {
  const bad = (what: string): never => {
    throw eosError('RPC_ERROR', 'get_actions', `unreadable action: ${what}`);
  };
  if (!isObject(action) || !isObject(action.act)) return bad('no act');
  const act = action.act;
  if (act.name !== 'transfer' || typeof act.account !== 'string') return null;
  const data = act.data;
  // Any contract may have a "transfer" action with any data: what does not read as a token
  // transfer to the address is not a deposit (and not an error).
  if (!isObject(data) || data.to === data.from) return null;
  const into = data.to === address;
  if (!into && !(outgoing && data.from === address)) return null;
  if (typeof data.to !== 'string') return null;
  const q = parseEosQuantity(data.quantity);
  if (q === null || q.amount <= 0n) return null;
  if (typeof action.trx_id !== 'string' || !/^[0-9a-f]{64}$/.test(action.trx_id)) return bad('no trx_id');
  const blockNum = toBigInt(action.block_num);
  if (blockNum === null || blockNum <= 0n) return bad('no block_num');
  const ordinal = action.action_ordinal;
  if (typeof ordinal !== 'number' || !Number.isInteger(ordinal) || ordinal < 1) return bad('no action_ordinal (Hyperion 3 or later is required)');
  const blockId = typeof action.block_id === 'string' && /^[0-9a-f]{64}$/.test(action.block_id) ? action.block_id : null;
  const failed = (action.except !== undefined && action.except !== null) || (action.error_code !== undefined && action.error_code !== null);
  return {
    txHash: action.trx_id,
    position: ordinal,
    fromAddress: typeof data.from === 'string' ? data.from : null,
    toAddress: data.to,
    memo: typeof data.memo === 'string' && data.memo !== '' ? data.memo : null,
    contract: act.account === EOS_NATIVE_CONTRACT && q.symbol === EOS_NATIVE_SYMBOL ? null : `${act.account}:${q.symbol}`,
    amount: q.amount,
    blockHeight: blockNum,
    blockHash: blockId ?? blockNum.toString(),
    succeeded: !failed,
  };
}

/** How long an `EOA` answer of addressNatures is kept (code can be set on an account later). */
const EOA_NATURE_MS = 10 * 60_000;
const NO_CODE = '1970-01-01T00:00:00.000';

/** A get_account answer as an address nature: code set at some time (last_code_update after the epoch) is `CONTRACT`. */
export function eosAccountNature(account: unknown): AddressNature {
  if (!isObject(account) || typeof account.last_code_update !== 'string') throw eosError('RPC_ERROR', 'get_account', 'no last_code_update');
  return account.last_code_update === NO_CODE || account.last_code_update === '1970-01-01T00:00:00' ? 'EOA' : 'CONTRACT';
}

function judgeObject(what: string): (answer: unknown) => Verdict {
  return (answer) => (isObject(answer) ? { ok: true } : { ok: false, retry: false, message: `the ${what} answer is not an object` });
}

class EosHistoryScanner implements HistoryScanner {
  readonly kind = 'history' as const;
  private readonly http: HttpJsonClient;
  private readonly maxPage: number;

  constructor(endpoint: ChainEndpoint, options: EosScannerOptions) {
    this.http = new HttpJsonClient(endpoint, { attempts: options.attempts, retryDelayMs: options.backoffMs, fetch: options.fetch, parse: parseJsonExact });
    this.maxPage = options.maxActionsPerPage ?? 1000;
    if (!Number.isInteger(this.maxPage) || this.maxPage < 1) throw new TypeError('maxActionsPerPage must be a positive integer');
  }

  /**
   * One API call: network errors, timeouts, HTTP 408/429/5xx are retried up to the attempt limit
   * (then RPC_UNAVAILABLE); other HTTP errors (with the node's message) and answers `judge` finds
   * wrong are RPC_ERROR.
   */
  private async request(method: string, req: HttpJsonRequest, judge: (answer: unknown) => Verdict): Promise<Json> {
    try {
      return (await this.http.request(req, readJson(judge, { refusal: refusalWithMessage }))) as Json;
    } catch (e) {
      throw eosHttpError(method, e);
    }
  }

  async tipHeight(): Promise<bigint> {
    const info = await this.request('get_info', { path: '/v1/chain/get_info', body: '{}' }, judgeObject('get_info'));
    const lib = toBigInt(info.last_irreversible_block_num);
    if (lib === null || lib <= 0n) throw eosError('RPC_ERROR', 'get_info', 'no last_irreversible_block_num');
    return lib;
  }

  /**
   * The global sequence of the account's newest transfer action in an irreversible block ("0"
   * when it has none), the position transfersSince reads on from: what is still reversible now is
   * read once final, as every transfer is.
   */
  async headCursor(address: string): Promise<string> {
    if (!isEosAccountName(address)) throw new TypeError('not an EOS account name');
    const lib = await this.tipHeight();
    const answer = await this.request('get_actions', {
      path: '/v2/history/get_actions',
      query: { account: address, filter: '*:transfer', sort: 'desc', block_num: `0-${lib}`, limit: '1' },
    }, (a) => (isObject(a) && Array.isArray(a.actions) ? { ok: true } : { ok: false, retry: false, message: 'the answer has no actions list' }));
    let newest = 0n;
    for (const a of answer.actions as unknown[]) {
      const gs = isObject(a) ? toBigInt(a.global_sequence) : null;
      if (gs === null || gs < 0n) throw eosError('RPC_ERROR', 'get_actions', 'an action has no global_sequence');
      if (gs > newest) newest = gs;
    }
    return newest.toString();
  }

  /**
   * An account with a contract is `CONTRACT`, any other `EOA`, from get_account: its
   * `last_code_update` is the epoch until code is set (an account whose code was later cleared
   * stays `CONTRACT`). Kept per scanner: `CONTRACT` for good, `EOA` for 10 minutes.
   */
  async addressNatures(addresses: readonly string[]): Promise<readonly AddressNature[]> {
    const now = Date.now();
    for (const a of new Set(addresses)) {
      const known = this.natures.get(a);
      if (known && (known.nature === 'CONTRACT' || now - known.at <= EOA_NATURE_MS)) continue;
      if (!isEosAccountName(a)) continue;
      const account = await this.request('get_account', { path: '/v1/chain/get_account', body: JSON.stringify({ account_name: a }) }, judgeObject('get_account'));
      if (this.natures.size >= 100_000) this.natures.clear();
      this.natures.set(a, { nature: eosAccountNature(account), at: now });
    }
    return addresses.map((a) => this.natures.get(a)?.nature ?? 'EOA');
  }

  private readonly natures = new Map<string, { nature: AddressNature; at: number }>();

  async transfersSince(address: string, cursor: string | null, limit: number, options: HistoryReadOptions = {}): Promise<{ transfers: readonly ObservedTransfer[]; cursor: string | null }> {
    if (!isEosAccountName(address)) throw new TypeError('not an EOS account name');
    if (cursor !== null && !/^\d{1,20}$/.test(cursor)) throw new TypeError('an EOS scan cursor is a global sequence number');
    if (!Number.isInteger(limit) || limit < 1) throw new TypeError('limit must be a positive integer');
    const lib = await this.tipHeight();
    const from = cursor === null ? 0n : BigInt(cursor) + 1n;
    const answer = await this.request('get_actions', {
      path: '/v2/history/get_actions',
      query: {
        account: address,
        filter: '*:transfer',
        sort: 'asc',
        global_sequence: `${from}-${MAX_SEQUENCE}`,
        // Ranges on these primary terms are long-standing in Hyperion v2 (older releases read
        // after/before as dates only); the block range keeps the page to irreversible blocks.
        block_num: `0-${lib}`,
        limit: String(Math.min(limit, this.maxPage)),
      },
    }, (a) => (isObject(a) && Array.isArray(a.actions) ? { ok: true } : { ok: false, retry: false, message: 'the answer has no actions list' }));

    const actions = (answer.actions as unknown[]).map((a) => {
      const gs = isObject(a) ? toBigInt(a.global_sequence) : null;
      const block = isObject(a) ? toBigInt(a.block_num) : null;
      if (gs === null || block === null) throw eosError('RPC_ERROR', 'get_actions', 'an action has no global_sequence or block_num');
      return { action: a, gs, block };
    }).sort((x, y) => (x.gs < y.gs ? -1 : x.gs > y.gs ? 1 : 0));

    const transfers: ObservedTransfer[] = [];
    let last: bigint | null = null;
    for (const { action, gs, block } of actions) {
      if (gs < from || (last !== null && gs === last)) continue; // at or below the cursor, or repeated
      if (block > lib) break; // not irreversible yet: read on a later call, from here
      const t = eosTransferInAction(action, address, options.outgoing === true);
      if (t) transfers.push(t);
      last = gs;
    }
    return { transfers, cursor: last === null ? cursor : last.toString() };
  }
}

/**
 * A history scanner over an Antelope API endpoint that also serves the Hyperion v2 history API
 * (/v1/chain/get_info for the last irreversible block, /v2/history/get_actions for the account's
 * actions). The cursor is the global sequence of the last action read (decimal text). See README.
 */
export function createEosScanner(endpoint: ChainEndpoint, options: EosScannerOptions = {}): HistoryScanner {
  return new EosHistoryScanner(endpoint, options);
}
