import type * as StellarSdk from '@stellar/stellar-sdk';
import {
  AGREES, ChainRpcError, DEFAULT_RETRY, sequenceVerdict, unknownSentVerdict, type SenderCheck, type SenderLedger, HttpJsonClient, restFailure, isHttpJsonError, networkErrorCode, parseUnits,
  type BroadcastOutcome, type ChainEndpoint, type HttpJsonAnswer, type HttpJsonRequest, type RetryPolicy, type SignedTransaction,
  type SequenceTransferNode, type TransactionState, type TransferIntent, type Verdict,
} from '@wcs/core';
import type { Receivability } from '@wcs/core';
import { StrKey } from './strkey';

// The SDK's entry without the Horizon / RPC clients (see strkey.ts): envelopes are decoded, never sent through it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const sdk = require('@stellar/stellar-sdk/minimal') as Pick<typeof StellarSdk, 'TransactionBuilder' | 'Transaction' | 'FeeBumpTransaction'>;

/**
 * The Stellar transfer node fails with core's ChainRpcError (`nodeCode`: Horizon's transaction
 * result code, tx_bad_seq, …, when it gave one; messages name the endpoint by host only):
 * - RPC_UNAVAILABLE: Horizon could not be reached, was busy or stale (429 / 5xx / network
 *   errors / timeouts after the bounded retries), or timed out waiting for a submitted
 *   transaction (504: it may still be included; send the same transaction again).
 * - RPC_ERROR: Horizon answered with an error or something unreadable (also: the hot wallet
 *   account does not exist yet, when its sequence is asked for).
 * - RPC_TRY_LATER: the network refused the transaction for now, not for good (a sequence gap
 *   before it, a fee below the current surge price): send the same transaction again later;
 *   its time bounds limit how long that can go on.
 */
export interface StellarTransferNodeOptions {
  /** Bounded retry of reads (default 3 attempts, 250 ms then 500 ms apart). Submissions are sent once per broadcast. */
  readonly retry?: RetryPolicy;
  /** maxTime = now + this many seconds (default 300). */
  readonly txTimeoutSeconds?: number;
  /** The highest base fee offered, stroops per operation (default 100000 = 0.01 XLM). */
  readonly maxBaseFee?: bigint;
  /** The chain's confirmations; an ingested transaction is reported with at least this many (default 1). */
  readonly confirmations?: number;
  /** The local clock, ms since the epoch (default Date.now). */
  readonly now?: () => number;
}

/** What transferInput returns: StellarTransferInput, and the latest ledger it was read at. */
export type StellarNodeTransferInput = {
  readonly baseFee: string;
  readonly minTime: string;
  readonly maxTime: string;
  readonly destinationExists: boolean;
  readonly ledger: number;
};

/** The network's minimum base fee, stroops per operation. */
const MIN_BASE_FEE = 100n;
const DEFAULT_MAX_BASE_FEE = 100_000n;
const HASH = /^[0-9a-fA-F]{64}$/;
const INTEGER = /^(0|[1-9][0-9]{0,18})$/;
const DECIMALS = 7;
/** Transactions of an account read by the sender check when the database has signed nothing from it. */
const HISTORY_PAGE = 20;

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A Horizon integer: a decimal string (newer Horizon) or a JSON number (older), as a bigint. */
function integer(v: unknown): bigint | null {
  if (typeof v === 'string' && INTEGER.test(v)) return BigInt(v);
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  return null;
}

/** A Horizon problem document's type name ("https://stellar.org/horizon-errors/transaction_failed" → "transaction_failed"). */
function problemType(json: unknown): string | null {
  if (!isObject(json) || typeof json.type !== 'string') return null;
  const m = /([a-z_]+)$/.exec(json.type);
  return m ? m[1]! : null;
}

function connectionFailed(e: unknown): string {
  const code = networkErrorCode(e);
  return code ? `connection failed (${code})` : 'connection failed';
}

/** POST bodies go as a form (`tx=…`): Horizon's /transactions takes form data only. */
const formFetch: typeof fetch = (input, init) => {
  const headers = new Headers(init?.headers);
  headers.set('content-type', 'application/x-www-form-urlencoded');
  return fetch(input, { ...init, headers });
};

/** One answer as the node reads it: the HTTP status and the JSON body. */
interface Answer {
  readonly status: number;
  readonly json: unknown;
}

/**
 * Withdrawal I/O against Horizon's REST API, with core's HttpJsonClient (the endpoint's headers,
 * timeout and credentials; user info as Basic auth; path prefix and query kept; messages name the
 * host only; no redirects).
 *
 * - transferInput: GET /fee_stats, GET /ledgers?order=desc&limit=1, GET /accounts/{destination}.
 * - nextSequence: GET /accounts/{id} → sequence + 1.
 * - balance: GET /accounts/{id} (and the latest ledger's base reserve for XLM).
 * - broadcast: POST /transactions (form `tx` = base64 envelope); Horizon waits for the ledger.
 * - status: GET /transactions/{hash}.
 */
export class StellarTransferNode implements SequenceTransferNode {
  private readonly reads: HttpJsonClient;
  private readonly submits: HttpJsonClient;
  private readonly host: string;
  private readonly timeoutSeconds: bigint;
  private readonly maxBaseFee: bigint;
  private readonly confirmations: number;
  private readonly now: () => number;

  constructor(endpoint: ChainEndpoint, private readonly networkPassphrase: string, options: StellarTransferNodeOptions = {}) {
    if (typeof networkPassphrase !== 'string' || networkPassphrase.length === 0) throw new TypeError('a Stellar network passphrase is required');
    const { attempts, backoffMs } = options.retry ?? DEFAULT_RETRY;
    if (!Number.isInteger(attempts) || attempts < 1 || attempts > 10) throw new RangeError('retry attempts must be 1..10');
    if (!Number.isFinite(backoffMs) || backoffMs < 0 || backoffMs > 60_000) throw new RangeError('retry backoffMs must be 0..60000');
    const common = { redirect: 'error' as const, describeNetworkError: connectionFailed };
    this.reads = new HttpJsonClient(endpoint, { ...common, attempts, retryDelayMs: backoffMs, maxRetryDelayMs: Infinity, defaultTimeoutMs: 10_000 });
    // one POST per broadcast: Horizon waits up to about 30 s for the ledger before answering 504
    this.submits = new HttpJsonClient(endpoint, { ...common, attempts: 1, defaultTimeoutMs: 35_000, fetch: formFetch });
    this.host = this.reads.host;
    const timeout = options.txTimeoutSeconds ?? 300;
    if (!Number.isInteger(timeout) || timeout < 30 || timeout > 86_400) throw new RangeError(`txTimeoutSeconds must be an integer in 30..86400, got ${timeout}`);
    this.timeoutSeconds = BigInt(timeout);
    const cap = options.maxBaseFee ?? DEFAULT_MAX_BASE_FEE;
    if (typeof cap !== 'bigint' || cap < MIN_BASE_FEE || cap > 4_294_967_295n) throw new RangeError('maxBaseFee must be a bigint in 100..4294967295 stroops');
    this.maxBaseFee = cap;
    const confirmations = options.confirmations ?? 1;
    if (!Number.isInteger(confirmations) || confirmations < 1) throw new RangeError('confirmations must be a positive integer');
    this.confirmations = confirmations;
    this.now = options.now ?? Date.now;
  }

  /**
   * What craft() needs:
   * - `baseFee`: the highest per-operation fee charged in the recent ledgers (`fee_charged.p99` of
   *   /fee_stats), at least `last_ledger_base_fee` and the network minimum (100), capped at
   *   maxBaseFee. Since protocol 11 a transaction pays the ledger's effective base fee, not its
   *   bid, so a generous bid costs nothing more; it is also what `maxFee` reserves.
   * - `minTime` 0, `maxTime` = now + txTimeoutSeconds, where now is the later of this machine's
   *   clock and the latest ledger's close time (a clock running behind cannot make a transaction
   *   that has already expired; one running ahead gives it longer to live).
   * - `destinationExists`: GET /accounts/{destination} (the account of an M… address): 404 → false
   *   (XLM then goes by CreateAccount).
   */
  async transferInput(request: TransferIntent): Promise<StellarNodeTransferInput> {
    const destination = this.accountOf(request.to, 'to');
    const stats = await this.get('XLM fee_stats', '/fee_stats');
    if (stats.status !== 200 || !isObject(stats.json)) throw this.bad('XLM fee_stats', 'no fee statistics');
    const last = integer(stats.json.last_ledger_base_fee);
    const charged = isObject(stats.json.fee_charged) ? integer(stats.json.fee_charged.p99) : null;
    if (last === null || charged === null) throw this.bad('XLM fee_stats', 'no last_ledger_base_fee / fee_charged.p99');
    let fee = [MIN_BASE_FEE, last, charged].reduce((a, b) => (b > a ? b : a));
    if (fee > this.maxBaseFee) fee = this.maxBaseFee;
    const ledger = await this.latestLedger();
    const local = BigInt(Math.floor(this.now() / 1000));
    const now = ledger.closedAt > local ? ledger.closedAt : local;
    const dest = await this.get('XLM account', `/accounts/${encodeURIComponent(destination)}`, true);
    if (dest.status === 200 && !isObject(dest.json)) throw this.bad('XLM account', 'no account record');
    return {
      baseFee: fee.toString(),
      minTime: '0',
      maxTime: (now + this.timeoutSeconds).toString(),
      destinationExists: dest.status === 200,
      ledger: ledger.sequence,
    };
  }

  /**
   * GET /accounts/{id}: the account's sequence + 1, the next transaction's sequence number (Horizon
   * serves ingested ledgers: transactions in flight are not counted; the allocator keeps its own
   * counter above this floor). An account that does not exist yet (404: the hot wallet is not
   * funded) is RPC_ERROR.
   */
  async nextSequence(address: string): Promise<bigint> {
    const account = this.accountOf(address, 'address');
    const record = await this.account(account);
    if (record === null) throw new ChainRpcError('RPC_ERROR', `XLM account: ${account} does not exist on the network (fund it first)`);
    return this.sequenceOf(record) + 1n;
  }

  /**
   * The chain check before signing: GET /accounts/{id} (sequence + 1) against the database's next
   * sequence, read after it: AHEAD when the account's is past it. An account's first sequence
   * comes from the ledger it was created in, so when the database has signed nothing from it its
   * latest transactions are read instead (GET /accounts/{id}/transactions, newest first, 20): one
   * whose source is the account and that the database does not know is AHEAD; none with fewer
   * than 20 records (the whole history) is AGREES; none in a full page is UNCHECKED (older ones
   * are not read). An account that does not exist has sent nothing. Horizon serves ingested
   * ledgers only: a transaction still in flight shows once it is in a ledger.
   */
  async senderCheck(sender: string, ledger: SenderLedger): Promise<SenderCheck> {
    const account = this.accountOf(sender, 'sender');
    const record = await this.account(account);
    if (record === null) return AGREES;
    const next = this.sequenceOf(record) + 1n;
    const known = (await ledger.nextSequences([sender])).get(sender) ?? null;
    if (known !== null) return sequenceVerdict(sender, known, next, null, null)!;
    const page = await this.get('XLM account transactions', `/accounts/${encodeURIComponent(account)}/transactions`, false, { order: 'desc', limit: String(HISTORY_PAGE) });
    const embedded = isObject(page.json) && isObject(page.json._embedded) ? page.json._embedded : null;
    if (!embedded || !Array.isArray(embedded.records)) throw this.bad('XLM account transactions', 'no records');
    const sent: string[] = [];
    for (const r of embedded.records as unknown[]) {
      if (!isObject(r) || typeof r.hash !== 'string' || !HASH.test(r.hash) || typeof r.source_account !== 'string') throw this.bad('XLM account transactions', 'a record without hash and source_account');
      if (r.source_account === account) sent.push(r.hash.toLowerCase());
    }
    const ahead = await unknownSentVerdict(account, sent, ledger);
    if (ahead) return ahead;
    if (sent.length === 0 && embedded.records.length >= HISTORY_PAGE) {
      return { kind: 'UNCHECKED', reason: `the database has signed nothing from ${account} and its latest ${HISTORY_PAGE} transactions include none it sent; older ones are not read` };
    }
    return AGREES;
  }

  /**
   * GET /accounts/{id}, spendable amounts in stroops (never below 0; 0 for an account that does
   * not exist yet):
   * - XLM (null contract): balance − selling liabilities − the minimum balance, where the minimum
   *   balance is (2 + subentry_count + num_sponsoring − num_sponsored) × the base reserve of the
   *   latest ledger (GET /ledgers?order=desc&limit=1, base_reserve_in_stroops). The minimum balance
   *   can never be sent, so it is not available for withdrawals.
   * - "CODE:ISSUER": that trustline's balance − selling liabilities; 0 without a trustline or
   *   when the issuer has not authorized it (it cannot send).
   */
  async balance(address: string, contract: string | null): Promise<bigint> {
    const account = this.accountOf(address, 'address');
    const asset = contract === null ? null : assetOf(contract);
    const record = await this.account(account);
    if (record === null) return 0n;
    const balances = Array.isArray(record.balances) ? record.balances.filter(isObject) : null;
    if (!balances) throw this.bad('XLM account', `no balances for ${account}`);
    if (asset === null) {
      const native = balances.find((b) => b.asset_type === 'native');
      if (!native) throw this.bad('XLM account', `no native balance for ${account}`);
      const entries = this.count(record.subentry_count, 'subentry_count') + this.count(record.num_sponsoring ?? 0, 'num_sponsoring') - this.count(record.num_sponsored ?? 0, 'num_sponsored');
      const { baseReserve } = await this.latestLedger();
      const spendable = this.amount(native.balance) - this.amount(native.selling_liabilities ?? '0') - (2n + entries) * baseReserve;
      return spendable > 0n ? spendable : 0n;
    }
    const line = balances.find((b) => (b.asset_type === 'credit_alphanum4' || b.asset_type === 'credit_alphanum12') && b.asset_code === asset!.code && b.asset_issuer === asset!.issuer);
    if (!line || line.is_authorized === false) return 0n;
    const spendable = this.amount(line.balance) - this.amount(line.selling_liabilities ?? '0');
    return spendable > 0n ? spendable : 0n;
  }

  /**
   * Whether `address` can receive `contract` now, from GET /accounts/{id} (404: NO_ACCOUNT):
   * XLM needs the account only (a payment to a missing account is a CreateAccount, which the
   * crafter makes); a credit asset ("CODE:ISSUER") needs a trustline to it (NO_TRUSTLINE), which
   * the issuer has authorized (`is_authorized` false: NOT_AUTHORIZED). Muxed (M…) addresses are
   * read as their G… account.
   */
  async receivable(address: string, contract: string | null): Promise<Receivability> {
    const account = this.accountOf(address, 'address');
    const record = await this.account(account);
    if (contract === null) return { ok: true };
    const asset = assetOf(contract);
    if (record === null) return { ok: false, reason: 'NO_ACCOUNT', message: `${account} does not exist on the ledger (it was never funded): it cannot hold ${contract}` };
    const balances = Array.isArray(record.balances) ? record.balances.filter(isObject) : null;
    if (!balances) throw this.bad('XLM account', `no balances for ${account}`);
    const line = balances.find((b) => (b.asset_type === 'credit_alphanum4' || b.asset_type === 'credit_alphanum12') && b.asset_code === asset.code && b.asset_issuer === asset.issuer);
    if (!line) return { ok: false, reason: 'NO_TRUSTLINE', message: `${account} has no trustline to ${contract}: a payment of it would fail (op_no_trust)` };
    if (line.is_authorized === false) return { ok: false, reason: 'NOT_AUTHORIZED', message: `${account}'s trustline to ${contract} is not authorized by the issuer` };
    return { ok: true };
  }

  /**
   * POST /transactions (form `tx` = the base64 envelope). Horizon answers once the transaction is
   * in a ledger, or with the network's refusal:
   * - 200 → ACCEPTED (it is in a ledger; also Horizon's answer to an already included one).
   * - 400 transaction_failed → GET /transactions/{hash}: known → ALREADY_KNOWN (this very
   *   transaction is in a ledger: a re-send answered tx_bad_seq, or it was included and failed).
   *   Unknown: tx_bad_seq with the account's sequence behind the transaction's − 1 (an earlier
   *   sequence is missing) and tx_insufficient_fee with at least the network minimum per
   *   operation (surge pricing) throw RPC_TRY_LATER; anything else (tx_bad_seq behind the account,
   *   tx_too_late, tx_insufficient_balance, tx_failed with its operation codes, …) is REJECTED
   *   with Horizon's result codes.
   * - 400 transaction_malformed → REJECTED.
   * - 504 (Horizon gave up waiting for the ledger) → throws RPC_UNAVAILABLE: it may still be included.
   */
  async broadcast(tx: SignedTransaction): Promise<BroadcastOutcome> {
    if (!tx || !(tx.raw instanceof Uint8Array) || tx.raw.length === 0) throw new TypeError('broadcast: tx.raw must be the signed envelope bytes');
    const envelope = Buffer.from(tx.raw).toString('base64');
    let decoded: StellarSdk.Transaction | StellarSdk.FeeBumpTransaction;
    try {
      decoded = sdk.TransactionBuilder.fromXDR(envelope, this.networkPassphrase);
    } catch (e) {
      throw new TypeError(`broadcast: raw is not a Stellar transaction envelope (${(e as Error).message})`);
    }
    const txHash = decoded.hash().toString('hex');
    if (typeof tx.txHash !== 'string' || tx.txHash.toLowerCase() !== txHash) throw new TypeError(`broadcast: tx.txHash ${tx.txHash} is not the hash of tx.raw on this network (${txHash})`);

    const answer = await this.submit(envelope);
    if (answer.status === 200) {
      if (!isObject(answer.json) || answer.json.hash !== txHash) throw this.bad('XLM submit', `a transaction other than ${txHash}`);
      return { outcome: 'ACCEPTED', txHash };
    }
    const type = problemType(answer.json);
    if (type === 'transaction_malformed') return { outcome: 'REJECTED', reason: 'transaction_malformed: Horizon could not decode the envelope' };
    const extras = isObject(answer.json) && isObject(answer.json.extras) ? answer.json.extras : null;
    const codes = extras && isObject(extras.result_codes) ? extras.result_codes : null;
    const code = codes && typeof codes.transaction === 'string' && /^[a-z_]{1,64}$/.test(codes.transaction) ? codes.transaction : null;
    if (type !== 'transaction_failed' || code === null) throw this.bad('XLM submit', `HTTP ${answer.status} without a transaction result code`);
    const ops = Array.isArray(codes!.operations) ? codes!.operations.filter((c): c is string => typeof c === 'string' && /^[a-z_]{1,64}$/.test(c)) : [];
    const reason = ops.length > 0 ? `${code} (${ops.join(', ')})` : code;

    // a re-send of a transaction that is already in a ledger (tx_bad_seq), or one included with a failure
    if ((await this.status(txHash)).state !== 'UNKNOWN') return { outcome: 'ALREADY_KNOWN', txHash };
    const inner = decoded instanceof sdk.FeeBumpTransaction ? decoded.innerTransaction : decoded;
    if (code === 'tx_bad_seq') {
      const source = this.accountOf(inner.source, 'source');
      const record = await this.account(source);
      if (record !== null && this.sequenceOf(record) + 1n < BigInt(inner.sequence)) throw this.tryLater(txHash, `${reason}: sequence ${inner.sequence} is ahead of the account's next (${this.sequenceOf(record) + 1n})`, code);
      return { outcome: 'REJECTED', reason };
    }
    if (code === 'tx_insufficient_fee' && BigInt(decoded.fee) >= MIN_BASE_FEE * BigInt(Math.max(1, inner.operations.length))) {
      throw this.tryLater(txHash, `${reason}: below the current surge price`, code);
    }
    return { outcome: 'REJECTED', reason };
  }

  /**
   * GET /transactions/{hash}: 404 → UNKNOWN (Horizon shows ingested transactions only, so there is
   * no PENDING: a submitted transaction is either in a ledger or not known). Found → MINED: the
   * ledger sequence (also as the block hash, in decimal, as the scanner: the record carries no
   * ledger hash), succeeded = `successful` (a failed transaction still paid its fee), fee =
   * `fee_charged`. Closed ledgers are final, so confirmations = the chain's confirmations.
   */
  async status(txHash: string): Promise<TransactionState> {
    if (typeof txHash !== 'string' || !HASH.test(txHash)) throw new TypeError('status: txHash must be 64 hex digits');
    const hash = txHash.toLowerCase();
    const answer = await this.get('XLM transaction', `/transactions/${hash}`, true);
    if (answer.status === 404) return { state: 'UNKNOWN' };
    const record = answer.json;
    if (!isObject(record) || record.hash !== hash) throw this.bad('XLM transaction', `a record other than ${hash}`);
    const ledger = record.ledger;
    if (!Number.isSafeInteger(ledger) || (ledger as number) < 1) throw this.bad('XLM transaction', `no ledger for ${hash}`);
    if (typeof record.successful !== 'boolean') throw this.bad('XLM transaction', `no successful flag for ${hash}`);
    const fee = integer(record.fee_charged);
    if (fee === null) throw this.bad('XLM transaction', `no fee_charged for ${hash}`);
    return { state: 'MINED', blockHeight: BigInt(ledger as number), blockHash: String(ledger), confirmations: this.confirmations, succeeded: record.successful, fee };
  }

  // ---- internals ----

  /** A GET; `notFound` lets a 404 problem document through as { status: 404 }. */
  private async get(what: string, path: string, notFound = false, query?: Record<string, string>): Promise<Answer> {
    let status = 0;
    const read = (answer: HttpJsonAnswer): Verdict => {
      status = answer.status;
      if (answer.status === 404 && notFound && problemType(answer.json) === 'not_found') return { ok: true };
      if (answer.status === 429 || answer.status >= 500) return { ok: false, retry: true, message: `HTTP ${answer.status}` };
      if (answer.status !== 200) return { ok: false, retry: false, message: this.refusal(answer) };
      return answer.json === undefined ? { ok: false, retry: false, message: 'the answer is not JSON' } : { ok: true };
    };
    const json = await this.request(what, this.reads, { path, ...(query ? { query } : {}) }, read);
    return { status, json };
  }

  /** The one POST of a broadcast: 200 and 400 answers are read; 504 and other failures throw. */
  private async submit(envelope: string): Promise<Answer> {
    let status = 0;
    const read = (answer: HttpJsonAnswer): Verdict => {
      status = answer.status;
      if ((answer.status === 200 || answer.status === 400) && answer.json !== undefined) return { ok: true };
      if (answer.status === 504 || problemType(answer.json) === 'timeout') return { ok: false, retry: true, message: 'HTTP 504: Horizon timed out waiting for the ledger; the transaction may still be included, send the same transaction again' };
      if (answer.status === 429 || answer.status >= 500) return { ok: false, retry: true, message: this.refusal(answer) };
      return { ok: false, retry: false, message: this.refusal(answer) };
    };
    const json = await this.request('XLM submit', this.submits, { method: 'POST', path: '/transactions', body: `tx=${encodeURIComponent(envelope)}` }, read);
    return { status, json };
  }

  private async request(what: string, client: HttpJsonClient, req: HttpJsonRequest, read: (a: HttpJsonAnswer) => Verdict): Promise<unknown> {
    try {
      return await client.request(req, read);
    } catch (e) {
      throw isHttpJsonError(e) ? restFailure(e, what, this.host) : e;
    }
  }

  /** "HTTP 400", with the title of a Horizon problem document (never its instance or extras). */
  private refusal(answer: HttpJsonAnswer): string {
    const title = isObject(answer.json) ? answer.json.title : undefined;
    return typeof title === 'string' && title.length <= 80 && /^[\w ,.'()-]*$/.test(title) ? `HTTP ${answer.status} (${title})` : `HTTP ${answer.status}`;
  }

  /** GET /accounts/{id}; null when it does not exist (404). */
  private async account(account: string): Promise<Json | null> {
    const answer = await this.get('XLM account', `/accounts/${encodeURIComponent(account)}`, true);
    if (answer.status === 404) return null;
    if (!isObject(answer.json) || (answer.json.account_id ?? answer.json.id) !== account) throw this.bad('XLM account', `no record for ${account}`);
    return answer.json;
  }

  /** The latest ingested ledger: GET /ledgers?order=desc&limit=1. */
  private async latestLedger(): Promise<{ sequence: number; closedAt: bigint; baseReserve: bigint }> {
    const answer = await this.get('XLM ledgers', '/ledgers', false, { order: 'desc', limit: '1' });
    const embedded = isObject(answer.json) && isObject(answer.json._embedded) ? answer.json._embedded : null;
    const record = embedded && Array.isArray(embedded.records) && isObject(embedded.records[0]) ? embedded.records[0] : null;
    const sequence = record?.sequence;
    const closed = typeof record?.closed_at === 'string' ? Date.parse(record.closed_at) : NaN;
    const reserve = integer(record?.base_reserve_in_stroops);
    if (!Number.isSafeInteger(sequence) || (sequence as number) < 1 || !Number.isFinite(closed) || reserve === null) {
      throw this.bad('XLM ledgers', 'no latest ledger with sequence, closed_at and base_reserve_in_stroops');
    }
    return { sequence: sequence as number, closedAt: BigInt(Math.floor(closed / 1000)), baseReserve: reserve };
  }

  private sequenceOf(record: Json): bigint {
    const seq = integer(record.sequence);
    if (seq === null) throw this.bad('XLM account', 'no sequence');
    return seq;
  }

  private amount(value: unknown): bigint {
    if (typeof value !== 'string') throw this.bad('XLM account', 'a balance that is not a decimal string');
    try {
      return parseUnits(value, DECIMALS);
    } catch {
      throw this.bad('XLM account', 'a balance that is not an exact 7-decimal amount');
    }
  }

  private count(value: unknown, what: string): bigint {
    const n = integer(value);
    if (n === null) throw this.bad('XLM account', `a malformed ${what}`);
    return n;
  }

  /** The G… account of a G… or M… address. */
  private accountOf(address: string, what: string): string {
    if (typeof address === 'string' && StrKey.isValidEd25519PublicKey(address)) return address;
    if (typeof address === 'string' && StrKey.isValidMed25519PublicKey(address)) {
      return StrKey.encodeEd25519PublicKey(StrKey.decodeMed25519PublicKey(address).subarray(0, 32));
    }
    throw new TypeError(`${what} ${JSON.stringify(String(address).slice(0, 70))} is not a Stellar account address`);
  }

  private bad(what: string, why: string): ChainRpcError {
    return new ChainRpcError('RPC_ERROR', `${what}: ${this.host} answered ${why}`);
  }

  private tryLater(txHash: string, reason: string, code: string): ChainRpcError {
    return new ChainRpcError('RPC_TRY_LATER', `XLM submit: the network did not take ${txHash} now (${reason}); send the same transaction again later`, { method: 'XLM submit', nodeCode: code });
  }
}

/** "CODE:ISSUER" (the catalogue's form of a credit asset) as its code and issuer; TypeError otherwise. */
function assetOf(contract: string): { code: string; issuer: string } {
  const m = /^([A-Za-z0-9]{1,12}):(G[A-Z2-7]{55})$/.exec(contract);
  if (!m || !StrKey.isValidEd25519PublicKey(m[2]!)) throw new TypeError(`contract must be "CODE:ISSUER", got ${JSON.stringify(contract)}`);
  return { code: m[1]!, issuer: m[2]! };
}
