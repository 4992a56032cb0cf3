import { createHash } from 'node:crypto';
import { KeyType, stringToPublicKey } from 'eosjs/dist/eosjs-numeric';
import {
  singleAnswer, settleLimit,
  ChainRpcError, HttpJsonClient, isTransientStatus, jsonBigInt, parseJsonExact,
  type BroadcastOutcome, type SenderCheck, type SenderLedger, type ChainEndpoint, type HttpJsonAnswer, type HttpJsonOptions, type RetryOptions, type HttpJsonRequest, type PublicKey,
  type SignedTransaction, type TransactionState, type TransferInput, type TransferIntent, type TransferNode, type Verdict,
} from '@wcs/core';
import { checkK1PublicKey } from './keys';
import { isEosAccountName } from './name';
import { ACTION_PAGE, eosSenderCheck } from './sender-check';
import { eosError, eosHttpError } from './rpc-error';
import { parseEosQuantity } from './scanner';
import { tokenOf, type EosTransferInput } from './transfer';

/**
 * nodeos error codes (`error.code` of an error answer) the node reads, named as in Antelope's
 * libraries/chain/include/eosio/chain/exceptions.hpp (FC_DECLARE_DERIVED_EXCEPTION).
 */
export const NODEOS_ERRORS = Object.freeze({
  // a duplicate: the node already has this very transaction
  tx_duplicate: 3040008,
  // resource and node trouble that may pass (the same transaction may be accepted later)
  ram_usage_exceeded: 3080001,
  tx_net_usage_exceeded: 3080002,
  block_net_usage_exceeded: 3080003,
  tx_cpu_usage_exceeded: 3080004,
  block_cpu_usage_exceeded: 3080005,
  deadline_exception: 3080006,
  greylist_net_usage_exceeded: 3080007,
  greylist_cpu_usage_exceeded: 3080008,
  leeway_deadline_exception: 3081001,
  too_many_tx_at_once: 3040012,
  // lookups
  account_query_exception: 3060002,
  unsupported_feature: 3100008,
} as const);

/** nodeos refusals that may pass: broadcast throws RPC_TRY_LATER. */
const TRY_LATER_CODES: ReadonlySet<number> = new Set([
  NODEOS_ERRORS.ram_usage_exceeded, NODEOS_ERRORS.tx_net_usage_exceeded, NODEOS_ERRORS.block_net_usage_exceeded,
  NODEOS_ERRORS.tx_cpu_usage_exceeded, NODEOS_ERRORS.block_cpu_usage_exceeded, NODEOS_ERRORS.deadline_exception,
  NODEOS_ERRORS.greylist_net_usage_exceeded, NODEOS_ERRORS.greylist_cpu_usage_exceeded, NODEOS_ERRORS.leeway_deadline_exception,
  NODEOS_ERRORS.too_many_tx_at_once,
]);

/**
 * Verdicts on the transaction itself, by exception family (code / 10000): chain_type_exception
 * 3010xxx (a malformed name, key, signature, asset, packed transaction), abi_exception 3015xxx
 * (pack / unpack), transaction_exception 3040xxx (expired_tx_exception 3040005,
 * tx_exp_too_far_exception 3040006, invalid_ref_block_exception 3040007, tx_no_auths 3040003, …,
 * except tx_duplicate and too_many_tx_at_once above), action_validate_exception 3050xxx
 * (eosio_assert_message_exception 3050003: "overdrawn balance", "to account does not exist",
 * a wrong symbol or precision; eosio_assert_code_exception 3050004), authorization_exception
 * 3090xxx (tx_irrelevant_sig 3090002, unsatisfied_authorization 3090003, missing_auth_exception
 * 3090004, …), whitelist_blacklist_exception 3130xxx. Anything else is not a verdict: RPC_ERROR.
 */
const REJECT_FAMILIES: ReadonlySet<number> = new Set([301 /* 3010xxx and 3015xxx */, 304, 305, 309, 313]);
function isRejection(code: number): boolean {
  if (code === NODEOS_ERRORS.tx_duplicate || TRY_LATER_CODES.has(code)) return false;
  return REJECT_FAMILIES.has(Math.floor(code / 10000));
}

export interface EosTransferNodeOptions extends Pick<RetryOptions, 'attempts' | 'backoffMs'>, Pick<HttpJsonOptions, 'fetch'> {
  /** The chain's confirmations; an irreversible transaction is reported with at least this many (default 1). */
  readonly confirmations?: number;
  /** expiration = the head block time (whole seconds) + this many seconds (60..3600, default 300). */
  readonly expirationSeconds?: number;
  /** status lookups at once in statusMany (1..32, default 4). */
  readonly statusConcurrency?: number;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const HEX64 = /^[0-9a-f]{64}$/;

/** A nodeos error answer: `{code, message, error: {code, name, what, details}}`. */
interface NodeosError { readonly httpCode: number; readonly code: number; readonly name: string; readonly what: string; readonly details: string }
function nodeosError(json: unknown): NodeosError | null {
  if (!isObject(json) || !isObject(json.error) || typeof json.error.code !== 'number') return null;
  const e = json.error;
  const details = Array.isArray(e.details) ? e.details.map((d) => (isObject(d) && typeof d.message === 'string' ? d.message : '')).filter((m) => m !== '').join('; ') : '';
  return {
    httpCode: typeof json.code === 'number' ? json.code : 0,
    code: e.code as number,
    name: typeof e.name === 'string' ? e.name : '',
    what: typeof e.what === 'string' ? e.what : '',
    details,
  };
}

/** Reads nodeos answers: 2xx JSON, and error answers with a nodeos error body (any status) are usable; others as usual. */
function readNodeos(answer: HttpJsonAnswer): Verdict {
  const ok = answer.status >= 200 && answer.status < 300;
  if (ok) return answer.json === undefined ? { ok: false, retry: false, message: 'the answer is not JSON' } : { ok: true };
  if (nodeosError(answer.json)) return { ok: true };
  if (isTransientStatus(answer.status)) return { ok: false, retry: true, message: `HTTP ${answer.status}` };
  return { ok: false, retry: false, message: `HTTP ${answer.status}` };
}

/** Milliseconds since the epoch of a nodeos time ("2025-06-23T14:20:17.500", UTC, no zone); null when it is not one. */
function nodeosTime(v: unknown): number | null {
  if (typeof v !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?Z?$/.test(v)) return null;
  const ms = Date.parse(v.endsWith('Z') ? v : `${v}Z`);
  return Number.isFinite(ms) ? ms : null;
}

const isoSeconds = (seconds: number): string => new Date(seconds * 1000).toISOString().slice(0, 19);

/** What the node reads of get_info. */
interface ChainInfo {
  readonly chainId: string;
  readonly headTimeMs: number;
  readonly libNum: bigint;
  readonly libId: string;
  /** last_irreversible_block_time (Leap 5 / Spring); null on nodes that do not give it. */
  readonly libTimeMs: number | null;
}

/** What transferInput returns: the crafter's input (EosTransferInput), as JSON. */
export type EosNodeTransferInput = TransferInput & EosTransferInput;

/**
 * Withdrawal I/O against an Antelope API endpoint (nodeos chain API v1; the Hyperion v2 history
 * API the deposit scanner reads, on the same endpoint, for status). The scanner's HTTP client:
 * endpoint headers and timeout, bounded retries of network errors, timeouts and HTTP 408 / 429 /
 * 5xx without a nodeos error body; messages name the endpoint by host only.
 *
 * - transferInput: get_info (chain id, the last irreversible block as the reference block, the
 *   head block time + expirationSeconds as expiration) and get_currency_stats (the precision).
 * - balance: get_currency_balance. controls: get_account (the active permission).
 * - broadcast: send_transaction. status: get_transaction_status, then Hyperion get_transaction.
 */
export class EosTransferNode implements TransferNode {
  private readonly http: HttpJsonClient;
  private readonly confirmations: number;
  private readonly expirationSeconds: number;
  private readonly concurrency: number;

  constructor(endpoint: ChainEndpoint, options: EosTransferNodeOptions = {}) {
    this.http = new HttpJsonClient(endpoint, { attempts: options.attempts, retryDelayMs: options.backoffMs, fetch: options.fetch, parse: parseJsonExact });
    const confirmations = options.confirmations ?? 1;
    if (!Number.isInteger(confirmations) || confirmations < 1) throw new RangeError('confirmations must be a positive integer');
    this.confirmations = confirmations;
    const margin = options.expirationSeconds ?? 300;
    if (!Number.isInteger(margin) || margin < 60 || margin > 3600) throw new RangeError(`expirationSeconds must be an integer in 60..3600, got ${margin}`);
    this.expirationSeconds = margin;
    const concurrency = options.statusConcurrency ?? 4;
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 32) throw new RangeError('statusConcurrency must be an integer in 1..32');
    this.concurrency = concurrency;
  }

  /**
   * The crafter's input (EosTransferInput): chainId; referenceBlockId = the last irreversible
   * block (a block that can never be forked out, so the TaPoS reference stays valid on every
   * fork, and well inside the 65536-block TaPoS window); expiration = the head block time in
   * whole seconds + expirationSeconds (the crafter's variants expire up to 15 s earlier, and the
   * chain takes at most head + 3600 s); account = request.from, permission "active", precision
   * of the token from get_currency_stats, requireCanonicalSignature true.
   */
  async transferInput(request: TransferIntent): Promise<EosNodeTransferInput> {
    return singleAnswer(this.transferInputs([request]));
  }

  /** One get_info for all, get_currency_stats once per token; an Error per failing item. */
  async transferInputs(requests: readonly TransferIntent[]): Promise<Array<EosNodeTransferInput | Error>> {
    const checked = requests.map((r) => {
      try {
        if (!r || typeof r.from !== 'string' || !isEosAccountName(r.from)) throw new TypeError('EOS transfer input: from must be the hot account\'s name');
        return tokenOf(r.contract ?? null);
      } catch (e) {
        return e as Error;
      }
    });
    if (checked.every((c) => c instanceof Error)) return checked as Error[];
    let info: ChainInfo;
    try {
      info = await this.info();
    } catch (e) {
      return checked.map((c) => (c instanceof Error ? c : (e as Error)));
    }
    const precisions = new Map<string, Promise<number>>();
    const precisionOf = (t: { account: string; symbol: string }): Promise<number> => {
      const key = `${t.account}:${t.symbol}`;
      let p = precisions.get(key);
      if (!p) {
        p = this.precision(t.account, t.symbol);
        p.catch(() => undefined);
        precisions.set(key, p);
      }
      return p;
    };
    const expiration = isoSeconds(Math.floor(info.headTimeMs / 1000) + this.expirationSeconds);
    return Promise.all(checked.map(async (c, i) => {
      if (c instanceof Error) return c;
      try {
        const precision = await precisionOf(c);
        return {
          chainId: info.chainId, referenceBlockId: info.libId, expiration, account: requests[i]!.from, permission: 'active', precision, requireCanonicalSignature: true,
        } satisfies EosNodeTransferInput;
      } catch (e) {
        return e as Error;
      }
    }));
  }

  /**
   * get_currency_balance of the token's contract and symbol: the row's quantity read exactly as
   * base units ("12.3456 EOS" → 123456n); no row (no balance, or no such account) → 0n.
   */
  async balance(address: string, contract: string | null): Promise<bigint> {
    if (typeof address !== 'string' || !isEosAccountName(address)) throw new TypeError('balance: not an EOS account name');
    const token = tokenOf(contract);
    const answer = await this.call('get_currency_balance', { path: '/v1/chain/get_currency_balance', body: JSON.stringify({ code: token.account, account: address, symbol: token.symbol }) });
    const err = nodeosError(answer);
    if (err) throw this.nodeFault('get_currency_balance', err);
    if (!Array.isArray(answer)) throw this.bad('get_currency_balance', 'an answer that is not a list');
    for (const row of answer) {
      const q = parseEosQuantity(row);
      if (q === null) throw this.bad('get_currency_balance', `an unreadable balance ${JSON.stringify(String(row)).slice(0, 60)}`);
      if (q.symbol === token.symbol) return q.amount;
    }
    return 0n;
  }

  /**
   * Whether `publicKey` alone satisfies the account's `active` permission: one of its keys (legacy
   * EOS… or PUB_K1_… text, compared as decoded key bytes) has a weight at or above the threshold.
   * An account that does not exist → false; network faults throw.
   */
  async controls(address: string, publicKey: PublicKey): Promise<boolean> {
    if (typeof address !== 'string' || !isEosAccountName(address)) throw new TypeError('controls: not an EOS account name');
    const bytes = checkK1PublicKey(publicKey);
    const answer = await this.call('get_account', { path: '/v1/chain/get_account', body: JSON.stringify({ account_name: address }) });
    const err = nodeosError(answer);
    if (err) {
      // Leap 4+: HTTP 400 account_query_exception; before: HTTP 500 exception 0 "unknown key (… name …)"
      if (err.code === NODEOS_ERRORS.account_query_exception || (err.code === 0 && /unknown key/.test(err.details))) return false;
      throw this.nodeFault('get_account', err);
    }
    if (!isObject(answer) || answer.account_name !== address || !Array.isArray(answer.permissions)) throw this.bad('get_account', `no permissions of ${address}`);
    const active = answer.permissions.find((p) => isObject(p) && p.perm_name === 'active');
    if (!isObject(active) || !isObject(active.required_auth)) return false;
    const auth = active.required_auth;
    const threshold = auth.threshold;
    if (!Number.isSafeInteger(threshold) || (threshold as number) < 1 || !Array.isArray(auth.keys)) throw this.bad('get_account', 'an unreadable active permission');
    return auth.keys.some((k) => {
      if (!isObject(k) || typeof k.key !== 'string' || !Number.isSafeInteger(k.weight)) return false;
      let key;
      try {
        key = stringToPublicKey(k.key);
      } catch {
        return false; // a key form this node cannot read is not the hot key
      }
      return key.type === KeyType.k1 && Buffer.compare(Buffer.from(key.data), Buffer.from(bytes)) === 0 && (k.weight as number) >= (threshold as number);
    });
  }

  /**
   * send_transaction with the crafter's body (`{compression, packed_context_free_data,
   * packed_trx, signatures}`, as it is). ACCEPTED with the id; ALREADY_KNOWN for tx_duplicate;
   * REJECTED for verdicts (see REJECT_FAMILIES; an answer with a failure trace too), with the
   * node's name, text and details; RPC_TRY_LATER for CPU / NET / RAM exhausted, deadlines and
   * too many transactions at once; RPC_ERROR for any other node error.
   */
  async broadcast(tx: SignedTransaction): Promise<BroadcastOutcome> {
    if (!tx || !(tx.raw instanceof Uint8Array) || tx.raw.length === 0) throw new TypeError('broadcast: tx.raw must be the signed transaction body');
    const text = Buffer.from(tx.raw).toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new TypeError('broadcast: tx.raw is not the JSON body EosTransferCrafter.combine writes');
    }
    if (!isObject(body) || typeof body.packed_trx !== 'string' || !/^([0-9a-f]{2})+$/.test(body.packed_trx) || !Array.isArray(body.signatures) || body.signatures.length === 0) {
      throw new TypeError('broadcast: tx.raw has no packed_trx and signatures');
    }
    const txHash = createHash('sha256').update(Buffer.from(body.packed_trx, 'hex')).digest('hex');
    if (typeof tx.txHash !== 'string' || tx.txHash.toLowerCase() !== txHash) throw new TypeError(`broadcast: tx.txHash ${String(tx.txHash)} is not the id of tx.raw (${txHash})`);

    const answer = await this.call('send_transaction', { path: '/v1/chain/send_transaction', body: text });
    const err = nodeosError(answer);
    if (err) {
      const reason = this.reason(err);
      if (err.code === NODEOS_ERRORS.tx_duplicate) return { outcome: 'ALREADY_KNOWN', txHash };
      if (TRY_LATER_CODES.has(err.code)) {
        throw eosError('RPC_TRY_LATER', 'send_transaction', `${this.http.host} did not take ${txHash} now (${reason}); broadcast the same transaction again later`, { rpcCode: err.code, responseStatus: err.httpCode || null });
      }
      if (isRejection(err.code)) return { outcome: 'REJECTED', reason };
      throw this.nodeFault('send_transaction', err);
    }
    if (!isObject(answer) || typeof answer.transaction_id !== 'string') throw this.bad('send_transaction', 'no transaction_id');
    if (answer.transaction_id.toLowerCase() !== txHash) throw this.bad('send_transaction', `transaction_id ${answer.transaction_id.slice(0, 64)}, not the sent transaction ${txHash}`);
    const processed = isObject(answer.processed) ? answer.processed : null;
    const except = processed?.except;
    if (except !== undefined && except !== null) {
      const e = nodeosError({ error: except }) ?? { httpCode: 0, code: 0, name: 'except', what: '', details: '' };
      if (TRY_LATER_CODES.has(e.code)) throw eosError('RPC_TRY_LATER', 'send_transaction', `${this.http.host} did not take ${txHash} now (${this.reason(e)})`, { rpcCode: e.code });
      return { outcome: 'REJECTED', reason: this.reason(e) };
    }
    return { outcome: 'ACCEPTED', txHash };
  }

  /**
   * The transaction's state: get_transaction_status (nodes with the transaction finality status
   * feature): IRREVERSIBLE / IN_BLOCK → MINED, LOCALLY_APPLIED → PENDING. Else the Hyperion
   * history (get_transaction): found → MINED (irreversible when its block is at or below the
   * LIB). Not found anywhere: EXPIRED only when certain (see README: the last irreversible block
   * time and Hyperion's last indexed block time are both past input.expiration); otherwise
   * UNKNOWN (PENDING while the node says FORKED_OUT). Without input: never EXPIRED.
   */
  async status(txHash: string, input?: TransferInput): Promise<TransactionState> {
    return this.statusWith(txHash, input, this.lazyInfo());
  }

  /** status for many, `statusConcurrency` at once, sharing one get_info; an Error per failing item. */
  async statusMany(txHashes: readonly string[], inputs?: ReadonlyArray<TransferInput | undefined>): Promise<Array<TransactionState | Error>> {
    const info = this.lazyInfo();
    return settleLimit(txHashes, this.concurrency, (h, i) => this.statusWith(h, inputs?.[i], info));
  }

  // ---- internals ----

  private async statusWith(txHash: string, input: TransferInput | undefined, info: () => Promise<ChainInfo>): Promise<TransactionState> {
    if (typeof txHash !== 'string' || !HEX64.test(txHash.toLowerCase())) throw new TypeError('status: txHash must be 64 hex digits');
    const id = txHash.toLowerCase();
    const expirationMs = input === undefined ? null : latestExpiration(input);

    const tracked = await this.transactionStatus(id);
    if (tracked?.state === 'IRREVERSIBLE' || tracked?.state === 'IN_BLOCK') {
      return this.mined(tracked.blockNum, tracked.blockId, tracked.state === 'IRREVERSIBLE');
    }
    if (tracked?.state === 'LOCALLY_APPLIED') return { state: 'PENDING' };

    const history = await this.history(id);
    if (history?.found) return this.mined(history.blockNum, history.blockId, history.blockNum <= (history.lib ?? (await info()).libNum));

    if (expirationMs !== null && history !== null && history.lastIndexedMs !== null && history.lastIndexedMs > expirationMs) {
      const lib = (await info()).libTimeMs;
      if (lib !== null && lib > expirationMs) return { state: 'EXPIRED' };
    }
    return tracked?.state === 'FORKED_OUT' ? { state: 'PENDING' } : { state: 'UNKNOWN' };
  }

  private mined(blockNum: bigint, blockId: string, irreversible: boolean): TransactionState {
    // Only irreversible blocks reach the chain's confirmations: a reversible one is reported
    // with 1 when the chain asks for more, else 0 (EOS's catalogue asks for 1).
    const confirmations = irreversible ? this.confirmations : Math.min(1, this.confirmations - 1);
    return { state: 'MINED', blockHeight: blockNum, blockHash: blockId, confirmations, succeeded: true, fee: 0n };
  }

  /** get_transaction_status; null when the node does not offer it (HTTP 404, unsupported_feature) or does not know the id. */
  private async transactionStatus(id: string): Promise<{ state: string; blockNum: bigint; blockId: string } | null> {
    let answer: unknown;
    try {
      answer = await this.call('get_transaction_status', { path: '/v1/chain/get_transaction_status', body: JSON.stringify({ id }) });
    } catch (e) {
      if (e instanceof ChainRpcError && e.responseStatus === 404) return null;
      throw e;
    }
    const err = nodeosError(answer);
    if (err) {
      if (err.httpCode === 404 || err.code === NODEOS_ERRORS.unsupported_feature) return null;
      throw this.nodeFault('get_transaction_status', err);
    }
    if (!isObject(answer) || typeof answer.state !== 'string') throw this.bad('get_transaction_status', 'no state');
    if (answer.state !== 'IRREVERSIBLE' && answer.state !== 'IN_BLOCK') return { state: answer.state, blockNum: 0n, blockId: '' };
    const blockNum = jsonBigInt(answer.block_number);
    const blockId = answer.block_id;
    if (blockNum === null || blockNum <= 0n || typeof blockId !== 'string' || !HEX64.test(blockId)) throw this.bad('get_transaction_status', `${answer.state} without block_number / block_id`);
    return { state: answer.state, blockNum, blockId };
  }

  /**
   * The chain check before signing (sender-check.ts): the account's latest actions (Hyperion
   * get_actions, newest first) against the transactions the database has; one it authorized that
   * the database does not know is AHEAD. An endpoint without Hyperion's history API (HTTP 404)
   * cannot tell: UNCHECKED.
   */
  async senderCheck(sender: string, ledger: SenderLedger): Promise<SenderCheck> {
    if (!isEosAccountName(sender)) throw new TypeError(`senderCheck: ${JSON.stringify(String(sender).slice(0, 20))} is not an EOS account name`);
    let page: unknown;
    try {
      page = await this.call('get_actions', { method: 'GET', path: '/v2/history/get_actions', query: { account: sender, sort: 'desc', limit: String(ACTION_PAGE) } });
    } catch (e) {
      if (e instanceof ChainRpcError && e.responseStatus === 404) return { kind: 'UNCHECKED', reason: `${this.http.host} has no Hyperion history API (/v2/history/get_actions): the account's history cannot be read` };
      throw e;
    }
    const err = nodeosError(page);
    if (err) throw this.nodeFault('get_actions', err);
    return eosSenderCheck(sender, page, ledger, (why) => this.bad('get_actions', why));
  }

  /** Hyperion get_transaction; null when the endpoint has no history API (HTTP 404). */
  private async history(id: string): Promise<{ found: true; blockNum: bigint; blockId: string; lib: bigint | null } | { found: false; lastIndexedMs: number | null } | null> {
    let answer: unknown;
    try {
      answer = await this.call('get_transaction', { method: 'GET', path: '/v2/history/get_transaction', query: { id } });
    } catch (e) {
      if (e instanceof ChainRpcError && e.responseStatus === 404) return null;
      throw e;
    }
    const err = nodeosError(answer);
    if (err) throw this.nodeFault('get_transaction', err);
    if (!isObject(answer)) throw this.bad('get_transaction', 'an answer that is not an object');
    if (typeof answer.error === 'string' && answer.error !== '') throw this.bad('get_transaction', `an error: ${answer.error.replace(/[\u0000-\u001f]/g, ' ').slice(0, 100)}`);
    const actions = Array.isArray(answer.actions) ? answer.actions : [];
    const lastIndexedMs = nodeosTime(answer.last_indexed_block_time);
    if (actions.length === 0) return { found: false, lastIndexedMs };
    const a = actions[0];
    if (!isObject(a) || a.trx_id !== id) throw this.bad('get_transaction', `another transaction for ${id}`);
    const blockNum = jsonBigInt(a.block_num);
    if (blockNum === null || blockNum <= 0n) throw this.bad('get_transaction', 'an action without block_num');
    const blockId = typeof a.block_id === 'string' && HEX64.test(a.block_id) ? a.block_id : blockNum.toString();
    const lib = jsonBigInt(answer.lib);
    return { found: true, blockNum, blockId, lib: lib !== null && lib > 0n ? lib : null };
  }

  /** get_info, read at most once per call of the returned function's owner. */
  private lazyInfo(): () => Promise<ChainInfo> {
    let p: Promise<ChainInfo> | undefined;
    return () => (p ??= this.info());
  }

  private async info(): Promise<ChainInfo> {
    const answer = await this.call('get_info', { path: '/v1/chain/get_info', body: '{}' });
    const err = nodeosError(answer);
    if (err) throw this.nodeFault('get_info', err);
    if (!isObject(answer)) throw this.bad('get_info', 'an answer that is not an object');
    const chainId = answer.chain_id;
    const libId = answer.last_irreversible_block_id;
    const libNum = jsonBigInt(answer.last_irreversible_block_num);
    const headTimeMs = nodeosTime(answer.head_block_time);
    if (typeof chainId !== 'string' || !HEX64.test(chainId)) throw this.bad('get_info', 'no chain_id');
    if (typeof libId !== 'string' || !HEX64.test(libId) || libNum === null || libNum <= 0n) throw this.bad('get_info', 'no last irreversible block');
    if (BigInt(Buffer.from(libId, 'hex').readUInt32BE(0)) !== libNum) throw this.bad('get_info', 'a last_irreversible_block_id that is not block last_irreversible_block_num');
    if (headTimeMs === null) throw this.bad('get_info', 'no head_block_time');
    return { chainId, headTimeMs, libNum, libId, libTimeMs: nodeosTime(answer.last_irreversible_block_time) };
  }

  /** get_currency_stats: the decimals of the token's supply (and max_supply). */
  private async precision(account: string, symbol: string): Promise<number> {
    const answer = await this.call('get_currency_stats', { path: '/v1/chain/get_currency_stats', body: JSON.stringify({ code: account, symbol }) });
    const err = nodeosError(answer);
    if (err) throw this.nodeFault('get_currency_stats', err);
    const stat = isObject(answer) ? answer[symbol] : undefined;
    if (!isObject(stat)) throw eosError('RPC_ERROR', 'get_currency_stats', `${this.http.host}: contract ${account} has no token ${symbol}`);
    const supply = parseEosQuantity(stat.supply);
    const max = parseEosQuantity(stat.max_supply);
    if (!supply || supply.symbol !== symbol || (max && (max.symbol !== symbol || max.decimals !== supply.decimals))) throw this.bad('get_currency_stats', `an unreadable ${symbol} supply`);
    return supply.decimals;
  }

  private async call(method: string, req: HttpJsonRequest): Promise<unknown> {
    try {
      return await this.http.request(req, readNodeos);
    } catch (e) {
      throw eosHttpError(method, e, `${this.http.host}: `);
    }
  }

  /** "name (code): what: details", node text with control characters blanked, scrubbed of the endpoint's secrets, at most 300 characters. */
  private reason(e: NodeosError): string {
    const text = `${e.name || 'error'} (${e.code})${e.what ? `: ${e.what}` : ''}${e.details ? `: ${e.details}` : ''}`;
    return this.http.scrub(text.replace(/[\u0000-\u001f]/g, ' ')).slice(0, 300);
  }

  private nodeFault(method: string, e: NodeosError): ChainRpcError {
    const code = TRY_LATER_CODES.has(e.code) ? 'RPC_UNAVAILABLE' : 'RPC_ERROR';
    return eosError(code, method, `${this.http.host} answered ${this.reason(e)}`, { rpcCode: e.code, responseStatus: e.httpCode || null });
  }

  private bad(method: string, why: string): ChainRpcError {
    return eosError('RPC_ERROR', method, `${this.http.host} answered ${why}`);
  }
}

/**
 * The latest expiration of the transaction's variants (the input's own `expiration`: the
 * crafter's variants expire 0..EOS_SIGNATURE_VARIANTS-1 seconds before it), ms; null when the
 * input has none readable.
 */
function latestExpiration(input: TransferInput): number | null {
  return nodeosTime(input.expiration);
}
