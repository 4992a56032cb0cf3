import { hashes, isValidClassicAddress } from 'xrpl';
import {
  AGREES, ChainRpcError, ScannerHttp, sequenceVerdict, unknownSentVerdict,
  type BroadcastOutcome, type SenderCheck, type SenderLedger, type ChainEndpoint, type RetryPolicy, type SignedTransaction, type SequenceTransferNode, type TransactionState, type TransferIntent,
} from '@wcs/core';
import { isObject, judgeRippled, rippledError, validatedLedgerIndex } from './rippled';

/**
 * The XRP transfer node fails with core's ChainRpcError (`nodeCode`: rippled's engine result or
 * error code, when it gave one; messages name the endpoint by host only):
 * - RPC_UNAVAILABLE: rippled could not be reached or was busy after the bounded retries; ask again later.
 * - RPC_ERROR: rippled answered with an error or something unreadable (also: the hot wallet
 *   account does not exist yet, when its sequence is asked for).
 * - RPC_TRY_LATER: rippled refused the transaction for now, not for good (ter* other than
 *   terQUEUED, a full queue, a fee below this server's load): broadcast the same bytes again
 *   later; its LastLedgerSequence bounds how long that can go on.
 */
export interface XrpTransferNodeOptions {
  /** Bounded retry for unavailable nodes (default 3 attempts, 250 ms then 500 ms apart). */
  readonly retry?: RetryPolicy;
  /** LastLedgerSequence = the validated ledger + this many ledgers (default 20, about a minute). */
  readonly ledgerMargin?: number;
  /** The highest Fee offered, drops (default 2 XRP = 2000000, xrpl.js's default cap). */
  readonly maxFeeDrops?: bigint;
  /** The chain's confirmations; a validated transaction is reported with at least this many (default 1). */
  readonly confirmations?: number;
}

const DROPS = /^(0|[1-9][0-9]{0,17})$/;
const HASH = /^[0-9A-Fa-f]{64}$/;
const DEFAULT_MAX_FEE_DROPS = 2_000_000n;
/** account_tx entries read by the sender check when the database has signed nothing from the account. */
const HISTORY_PAGE = 20;

/** Server text as it may appear in reasons: control characters blanked. */
function clean(text: string): string {
  return text.replace(/[\u0000-\u001f]/g, ' ');
}

/** What transferInput returns: the crafter's input (XrpTransferInput) and the validated ledger it was read at. */
export type XrpNodeTransferInput = { readonly fee: string; readonly lastLedgerSequence: number; readonly validatedLedger: number };

/** tel* results that mean "not now" (queue full, fee below this server's current load), not "never". */
const TEL_TRY_LATER: ReadonlySet<string> = new Set([
  'telCAN_NOT_QUEUE', 'telCAN_NOT_QUEUE_BALANCE', 'telCAN_NOT_QUEUE_BLOCKS', 'telCAN_NOT_QUEUE_BLOCKED',
  'telCAN_NOT_QUEUE_FEE', 'telCAN_NOT_QUEUE_FULL', 'telINSUF_FEE_P', 'telFAILED_PROCESSING',
]);

/** submit errors that are a verdict on the transaction itself (it does not parse or verify). */
const SUBMIT_REJECTIONS: ReadonlySet<string> = new Set(['invalidTransaction', 'invalidParams']);

/**
 * Withdrawal I/O against rippled / Clio JSON-RPC (the scanner's HTTP client: endpoint headers
 * and timeout, retries of busy / unavailable nodes, messages that name the host only).
 *
 * - transferInput: `fee` (open-ledger fee) and `ledger` (validated) → `{ fee, lastLedgerSequence }`.
 * - nextSequence: `account_info` on the current (open) ledger with `queue: true`.
 * - balance: `account_info` on the validated ledger minus the reserve from `server_state`.
 * - broadcast: `submit` (tx_blob), the engine result mapped; `tx` decides the ambiguous ones.
 * - status: `tx` by hash.
 */
export class XrpTransferNode implements SequenceTransferNode {
  private readonly http: ScannerHttp;
  private readonly ledgerMargin: number;
  private readonly maxFeeDrops: bigint;
  private readonly confirmations: number;

  constructor(endpoint: ChainEndpoint, options: XrpTransferNodeOptions = {}) {
    this.http = new ScannerHttp(endpoint, options.retry);
    const margin = options.ledgerMargin ?? 20;
    if (!Number.isInteger(margin) || margin < 2 || margin > 1000) throw new RangeError(`ledgerMargin must be an integer in 2..1000, got ${margin}`);
    this.ledgerMargin = margin;
    const cap = options.maxFeeDrops ?? DEFAULT_MAX_FEE_DROPS;
    if (typeof cap !== 'bigint' || cap < 10n || cap > 100_000_000n) throw new RangeError('maxFeeDrops must be a bigint in 10..100000000 drops');
    this.maxFeeDrops = cap;
    const confirmations = options.confirmations ?? 1;
    if (!Number.isInteger(confirmations) || confirmations < 1) throw new RangeError('confirmations must be a positive integer');
    this.confirmations = confirmations;
  }

  /**
   * What craft() needs: `fee` = the open-ledger fee (`fee` method, drops.open_ledger_fee, at least
   * drops.base_fee) capped at maxFeeDrops (above the cap the transaction waits in the queue or is
   * refused for now), and `lastLedgerSequence` = the validated ledger + ledgerMargin.
   * Native XRP only: a request with a contract is refused (TypeError).
   */
  async transferInput(request: TransferIntent): Promise<XrpNodeTransferInput> {
    if (request.contract !== null && request.contract !== undefined) throw new TypeError('XRP transfers are native XRP only (contract must be null)');
    const fee = await this.call('fee', {});
    const drops = isObject(fee.drops) ? fee.drops : {};
    const base = this.drops(drops.base_fee, 'fee', 'a drops.base_fee');
    const open = this.drops(drops.open_ledger_fee, 'fee', 'a drops.open_ledger_fee');
    let offer = open > base ? open : base;
    if (offer > this.maxFeeDrops) offer = this.maxFeeDrops;
    const ledger = await this.call('ledger', { ledger_index: 'validated' });
    const validated = validatedLedgerIndex(ledger);
    if (validated === null) throw this.bad('ledger', 'no validated ledger index');
    return { fee: offer.toString(), lastLedgerSequence: validated + this.ledgerMargin, validatedLedger: validated };
  }

  /**
   * `account_info` on the current (open) ledger with `queue: true`: the account's Sequence after
   * the transactions applied to the open ledger, or after the highest one this server holds in
   * its queue if that is higher. A floor for the allocator (another server's queue may differ).
   * An account that does not exist yet (actNotFound: the hot wallet is not funded) is RPC_ERROR.
   */
  async nextSequence(address: string): Promise<bigint> {
    const account = this.address(address);
    const info = await this.call('account_info', { account, ledger_index: 'current', queue: true }, true);
    if (info.status === 'error') {
      if (info.error === 'actNotFound') throw new ChainRpcError('RPC_ERROR', `XRP account_info: account ${account} does not exist on the ledger (fund it first)`, { nodeCode: 'actNotFound' });
      throw new ChainRpcError('RPC_ERROR', `XRP account_info: rippled error ${String(info.error)}`, { nodeCode: String(info.error) });
    }
    const { current, queued } = this.sequences(info, account);
    return queued !== null && queued > current ? queued : current;
  }

  /**
   * The chain check before signing: `account_info` (current ledger, with the queue) against the
   * database's next sequence, read after it: AHEAD when the account's Sequence, or the one after
   * the highest this server queues for it, is past the database's. An account's first Sequence is
   * the ledger it was created in, so when the database has signed nothing from it the account's
   * latest `account_tx` entries (20) are read instead: one it sent that the database does not
   * know is AHEAD; none it sent with no older history is AGREES; none in a page with older
   * history beyond is UNCHECKED (older ones are not read). An account that does not exist has
   * sent nothing.
   */
  async senderCheck(sender: string, ledger: SenderLedger): Promise<SenderCheck> {
    const account = this.address(sender);
    const info = await this.call('account_info', { account, ledger_index: 'current', queue: true }, true);
    if (info.status === 'error') {
      if (info.error === 'actNotFound') return AGREES;
      throw new ChainRpcError('RPC_ERROR', `XRP account_info: rippled error ${String(info.error)}`, { nodeCode: String(info.error) });
    }
    const { current, queued } = this.sequences(info, account);
    const known = (await ledger.nextSequences([sender])).get(sender) ?? null;
    if (known !== null) return sequenceVerdict(sender, known, current, queued, null)!;
    const page = await this.call('account_tx', { account, ledger_index_min: -1, ledger_index_max: -1, limit: HISTORY_PAGE, forward: false });
    if (!Array.isArray(page.transactions)) throw this.bad('account_tx', 'no transactions list');
    const sent: string[] = [];
    for (const e of page.transactions as unknown[]) {
      // API v1: {tx: {…, hash}}; API v2: {tx_json: {…}, hash}
      const tx = isObject(e) ? (isObject(e.tx) ? e.tx : isObject(e.tx_json) ? e.tx_json : null) : null;
      const hash = tx && typeof tx.hash === 'string' ? tx.hash : isObject(e) && typeof e.hash === 'string' ? e.hash : null;
      if (!tx || hash === null || !HASH.test(hash)) throw this.bad('account_tx', 'an entry without a transaction and its hash');
      if (tx.Account === account) sent.push(hash.toUpperCase());
    }
    const ahead = await unknownSentVerdict(account, sent, ledger);
    if (ahead) return ahead;
    if (sent.length === 0 && page.marker !== undefined && page.marker !== null) {
      return { kind: 'UNCHECKED', reason: `the database has signed nothing from ${account} and its latest ${HISTORY_PAGE} transactions include none it sent; older ones are not read` };
    }
    return AGREES;
  }

  /** account_info's Sequence (the current ledger) and the one after the highest this server queues for the account (null: no queue data). */
  private sequences(info: Record<string, unknown>, account: string): { current: bigint; queued: bigint | null } {
    const data = this.accountData(info, account);
    const seq = data.Sequence;
    if (!Number.isSafeInteger(seq) || (seq as number) < 1) throw this.bad('account_info', 'no account_data.Sequence');
    const queue = isObject(info.queue_data) ? info.queue_data : null;
    let queued: bigint | null = null;
    if (queue && queue.highest_sequence !== undefined) {
      const highest = queue.highest_sequence;
      if (!Number.isSafeInteger(highest) || (highest as number) < 0) throw this.bad('account_info', 'a malformed queue_data.highest_sequence');
      queued = BigInt(highest as number) + 1n;
    }
    return { current: BigInt(seq as number), queued };
  }

  /**
   * The spendable XRP of an account: Balance on the validated ledger minus its reserve, the base
   * reserve plus OwnerCount × the owner reserve (`server_state` validated_ledger.reserve_base /
   * reserve_inc, drops). The reserve can never be sent, so it is not available for withdrawals;
   * the result is never below 0. An account that does not exist yet has 0. Native XRP only.
   */
  async balance(address: string, contract: string | null): Promise<bigint> {
    if (contract !== null) throw new TypeError('XRP balances are native XRP only (contract must be null)');
    const account = this.address(address);
    const info = await this.call('account_info', { account, ledger_index: 'validated' }, true);
    if (info.status === 'error') {
      if (info.error === 'actNotFound') return 0n;
      throw new ChainRpcError('RPC_ERROR', `XRP account_info: rippled error ${String(info.error)}`, { nodeCode: String(info.error) });
    }
    const data = this.accountData(info, account);
    const balance = this.drops(data.Balance, 'account_info', 'an account_data.Balance');
    const owners = data.OwnerCount ?? 0;
    if (!Number.isSafeInteger(owners) || (owners as number) < 0) throw this.bad('account_info', 'a malformed account_data.OwnerCount');
    const { base, increment } = await this.reserves();
    const spendable = balance - base - BigInt(owners as number) * increment;
    return spendable > 0n ? spendable : 0n;
  }

  /**
   * `submit` with the signed blob. ACCEPTED: tesSUCCESS, terQUEUED, and tec* (applied with a
   * claimed fee: the transaction will be in a ledger and status reports it failed). ALREADY_KNOWN:
   * tefALREADY, or any other tef* (tefPAST_SEQ after it was validated) when `tx` finds this very
   * transaction. REJECTED (with rippled's code and message): tem*, tef* not found by `tx`, tel*
   * other than the queue / load ones, and a blob rippled cannot parse or verify. Throws
   * RPC_TRY_LATER for other ter* (a sequence gap, an unfunded fee) and a full queue or local load.
   */
  async broadcast(tx: SignedTransaction): Promise<BroadcastOutcome> {
    if (!tx || !(tx.raw instanceof Uint8Array) || tx.raw.length === 0) throw new TypeError('broadcast: tx.raw must be the signed transaction bytes');
    const blob = Buffer.from(tx.raw).toString('hex').toUpperCase();
    let txHash: string;
    try {
      txHash = hashes.hashSignedTx(blob);
    } catch (e) {
      throw new TypeError(`broadcast: raw is not a signed XRP transaction (${(e as Error).message})`);
    }
    if (typeof tx.txHash !== 'string' || tx.txHash.toUpperCase() !== txHash) throw new TypeError(`broadcast: tx.txHash ${tx.txHash} is not the hash of tx.raw (${txHash})`);

    const result = await this.call('submit', { tx_blob: blob }, true);
    if (result.status === 'error') {
      const code = String(result.error);
      const detail = typeof result.error_exception === 'string' ? result.error_exception : typeof result.error_message === 'string' ? result.error_message : '';
      if (SUBMIT_REJECTIONS.has(code)) return { outcome: 'REJECTED', reason: `${code}${detail ? `: ${clean(detail)}` : ''}` };
      throw new ChainRpcError('RPC_ERROR', `XRP submit: rippled error ${code}`, { nodeCode: code });
    }
    const engine = result.engine_result;
    if (typeof engine !== 'string' || !/^(tes|tec|tef|tel|tem|ter)[A-Z_]+$/.test(engine)) throw this.bad('submit', 'no engine_result');
    const echoed = isObject(result.tx_json) ? result.tx_json.hash : undefined;
    if (echoed !== undefined && (typeof echoed !== 'string' || echoed.toUpperCase() !== txHash)) throw this.bad('submit', `tx_json.hash ${String(echoed).slice(0, 64)}, not the submitted transaction ${txHash}`);
    const message = typeof result.engine_result_message === 'string' ? clean(result.engine_result_message).slice(0, 200) : '';
    const reason = message ? `${engine}: ${message}` : engine;

    if (engine === 'tesSUCCESS' || engine === 'terQUEUED' || engine.startsWith('tec')) return { outcome: 'ACCEPTED', txHash };
    if (engine === 'tefALREADY') return { outcome: 'ALREADY_KNOWN', txHash };
    if (engine.startsWith('tef')) {
      // tefPAST_SEQ / tefMAX_LEDGER: this very transaction may be the one that took the sequence
      const seen = await this.status(txHash);
      return seen.state === 'UNKNOWN' ? { outcome: 'REJECTED', reason } : { outcome: 'ALREADY_KNOWN', txHash };
    }
    if (engine.startsWith('tem')) return { outcome: 'REJECTED', reason };
    if (engine.startsWith('tel')) {
      if (TEL_TRY_LATER.has(engine)) throw this.tryLater(txHash, reason, engine);
      return { outcome: 'REJECTED', reason };
    }
    // ter*: not applied now, may apply later (terPRE_SEQ: an earlier sequence is missing)
    throw this.tryLater(txHash, reason, engine);
  }

  /**
   * `tx` by hash: UNKNOWN (txnNotFound: never seen, dropped, or past its LastLedgerSequence),
   * PENDING (known but not in a validated ledger), MINED (validated: ledger index, ledger_hash
   * when the server gives one (API v2) else the ledger index in decimal as the scanner does,
   * succeeded = meta.TransactionResult tesSUCCESS (a validated tec* failed and still paid its
   * fee), fee = the Fee field (the ledger charges exactly that)). Validated ledgers are final,
   * so confirmations is the chain's confirmations (at least 1).
   */
  async status(txHash: string): Promise<TransactionState> {
    if (typeof txHash !== 'string' || !HASH.test(txHash)) throw new TypeError('status: txHash must be 64 hex digits');
    const hash = txHash.toUpperCase();
    const result = await this.call('tx', { transaction: hash, binary: false }, true);
    if (result.status === 'error') {
      if (result.error === 'txnNotFound') return { state: 'UNKNOWN' };
      throw new ChainRpcError('RPC_ERROR', `XRP tx: rippled error ${String(result.error)}`, { nodeCode: String(result.error) });
    }
    // API v1: transaction fields beside meta; API v2: tx_json with hash, ledger_index, ledger_hash at the top
    const fields = isObject(result.tx_json) ? result.tx_json : result;
    const found = result.hash ?? fields.hash;
    if (typeof found !== 'string' || found.toUpperCase() !== hash) throw this.bad('tx', `another transaction (${String(found).slice(0, 64)}) for ${hash}`);
    if (result.validated !== true) return { state: 'PENDING' };
    const meta = isObject(result.meta) ? result.meta : null;
    const code = meta?.TransactionResult;
    if (typeof code !== 'string') throw this.bad('tx', `validated transaction ${hash} without meta.TransactionResult`);
    const ledger = result.ledger_index ?? fields.ledger_index ?? fields.inLedger;
    if (!Number.isSafeInteger(ledger) || (ledger as number) < 1) throw this.bad('tx', `validated transaction ${hash} without a ledger index`);
    const ledgerHash = typeof result.ledger_hash === 'string' && HASH.test(result.ledger_hash) ? result.ledger_hash.toUpperCase() : String(ledger);
    return {
      state: 'MINED',
      blockHeight: BigInt(ledger as number),
      blockHash: ledgerHash,
      confirmations: this.confirmations,
      succeeded: code === 'tesSUCCESS',
      fee: this.drops(fields.Fee, 'tx', `a Fee for ${hash}`),
    };
  }

  // ---- internals ----

  /** One JSON-RPC call's result; rippled errors throw RPC_ERROR unless `errorsAsResult` (then `{status:'error', error}` plus the result's fields). */
  private async call(method: string, params: Record<string, unknown>, errorsAsResult = false): Promise<Record<string, unknown>> {
    const body = await this.http.request(`XRP ${method}`, { body: JSON.stringify({ method, params: [params] }) }, judgeRippled);
    const result = (body as { result: Record<string, unknown> }).result;
    const code = rippledError(result);
    if (code === null) return result;
    if (!errorsAsResult) throw new ChainRpcError('RPC_ERROR', `XRP ${method}: rippled error ${code}`, { method, nodeCode: code });
    return { ...result, status: 'error', error: code };
  }

  /** account_info's AccountRoot, checked to be the account asked for. */
  private accountData(info: Record<string, unknown>, account: string): Record<string, unknown> {
    const data = isObject(info.account_data) ? info.account_data : null;
    if (!data || data.Account !== account) throw this.bad('account_info', `no account_data for ${account}`);
    return data;
  }

  /** `server_state` validated_ledger (closed_ledger while not synced) reserves, drops. */
  private async reserves(): Promise<{ base: bigint; increment: bigint }> {
    const result = await this.call('server_state', { ledger_index: 'current' });
    const state = isObject(result.state) ? result.state : {};
    const ledger = isObject(state.validated_ledger) ? state.validated_ledger : isObject(state.closed_ledger) ? state.closed_ledger : null;
    const base = ledger?.reserve_base;
    const inc = ledger?.reserve_inc;
    if (!Number.isSafeInteger(base) || (base as number) < 0 || !Number.isSafeInteger(inc) || (inc as number) < 0) {
      throw this.bad('server_state', 'no validated_ledger.reserve_base / reserve_inc in drops');
    }
    return { base: BigInt(base as number), increment: BigInt(inc as number) };
  }

  private drops(value: unknown, method: string, what: string): bigint {
    if (typeof value !== 'string' || !DROPS.test(value)) throw this.bad(method, `${what} that is not an amount of drops`);
    return BigInt(value);
  }

  private address(address: string): string {
    if (typeof address !== 'string' || !isValidClassicAddress(address)) throw new TypeError(`${JSON.stringify(String(address).slice(0, 60))} is not a classic XRP address`);
    return address;
  }

  private bad(method: string, why: string): ChainRpcError {
    return new ChainRpcError('RPC_ERROR', `XRP ${method}: ${this.http.label} answered ${why}`);
  }

  private tryLater(txHash: string, reason: string, engine: string): ChainRpcError {
    return new ChainRpcError('RPC_TRY_LATER', `XRP submit: ${this.http.label} did not take ${txHash} now (${reason}); broadcast the same transaction again later`, { nodeCode: engine });
  }
}
