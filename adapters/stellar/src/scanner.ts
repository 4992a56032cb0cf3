import {
  AmountFormatError, ChainRpcError, ScannerHttp, isHttpJsonError, parseUnits,
  type AddressNature, type ChainEndpoint, type HistoryReadOptions, type HistoryScanner, type HttpJsonAnswer, type ObservedTransfer, type RetryPolicy,
} from '@wcs/core';
import { isMemoId } from './memo';

export { DEFAULT_RETRY, type RetryPolicy } from '@wcs/core';

export interface StellarScannerOptions {
  /** Bounded retry for unavailable servers (default 3 attempts, 250 ms then 500 ms apart). */
  readonly retry?: RetryPolicy;
}

/** Lumens and Stellar assets have 7 decimals (1 XLM = 10^7 stroops). */
export const STELLAR_DECIMALS = 7;

/** Horizon's largest page. */
const MAX_PAGE = 200;

/**
 * Payment operation types that move value to `to` (create_account: to `account`). "path_payment"
 * is Horizon's name for path_payment_strict_receive before Horizon 0.24. account_merge is not
 * read: its amount is only in the operation's effects.
 */
const PAYMENT_TYPES: ReadonlySet<string> = new Set(['payment', 'path_payment', 'path_payment_strict_receive', 'path_payment_strict_send', 'create_account']);

const TOKEN = /^[1-9][0-9]{0,19}$/;
const HASH = /^[0-9a-f]{64}$/;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** What a payment operation record alone says about a transfer into an address. */
export interface PaymentOperation {
  readonly txHash: string;
  /** The operation's index in its transaction (0-based), from the operation id. */
  readonly position: number;
  /** The ledger, from the operation id. */
  readonly ledger: bigint;
  readonly fromAddress: string;
  /** The recipient (an outgoing operation's destination; the address itself for one into it). */
  readonly toAddress: string;
  readonly contract: string | null;
  readonly amount: bigint;
  readonly succeeded: boolean;
  /** The muxed id of an M… destination (SEP-23), if the payment was sent to one. */
  readonly toMuxedId: string | null;
}

/**
 * Horizon operation ids (= paging tokens) are TOIDs: ledger sequence << 32 | application order of
 * the transaction in the ledger << 12 | operation index + 1 (stellar/go toid). The transaction's
 * own TOID is the same with 0 in the low 12 bits, so an operation's index in its transaction is
 * (id & 0xFFF) - 1 and its ledger is id >> 32.
 */
export function decodeOperationId(id: string): { ledger: bigint; applicationOrder: number; position: number } {
  if (!TOKEN.test(id)) throw new RangeError('not a Horizon operation id');
  const n = BigInt(id);
  if (n >= 1n << 63n) throw new RangeError('not a Horizon operation id');
  const opIndex = Number(n & 0xfffn);
  if (opIndex === 0) throw new RangeError('a transaction id, not an operation id');
  return { ledger: n >> 32n, applicationOrder: Number((n >> 12n) & 0xfffffn), position: opIndex - 1 };
}

const bad = (why: string) => new ChainRpcError('RPC_ERROR', `XLM payments: ${why}`);

function stroops(value: unknown, what: string): bigint {
  if (typeof value !== 'string') throw bad(`${what} is not a decimal string`);
  try {
    return parseUnits(value, STELLAR_DECIMALS);
  } catch (e) {
    if (e instanceof AmountFormatError) throw bad(`${what} is not an exact 7-decimal amount`);
    throw e;
  }
}

/** The catalogue's form of the asset a record names under `prefix` ("" or "source_"): null native, "CODE:ISSUER", undefined another type. */
function assetOf(record: Record<string, unknown>, prefix: '' | 'source_', token: string): string | null | undefined {
  const type = record[`${prefix}asset_type`];
  if (type === 'native') return null;
  if (type !== 'credit_alphanum4' && type !== 'credit_alphanum12') return undefined;
  const code = record[`${prefix}asset_code`];
  const issuer = record[`${prefix}asset_issuer`];
  if (typeof code !== 'string' || typeof issuer !== 'string') throw bad(`operation ${token} has an incomplete asset`);
  return `${code}:${issuer}`;
}

/**
 * Reads one record of /accounts/{address}/payments: the transfer into `address` it describes, or
 * null when it is not one (another operation type, another recipient, or sent by the address
 * itself). Amounts are converted exactly ("12.3456789" → 123456789n); asset_type native →
 * contract null, credit assets → "CODE:ISSUER" (the catalogue's form); other asset types → null.
 * With `outgoing`, a record the address sent to another account is read too (fromAddress the
 * address, toAddress the destination): what left the account, i.e. a path payment's
 * `source_amount` of its source asset, a payment's amount, a create_account's starting balance.
 */
export function parsePaymentOperation(record: unknown, address: string, outgoing = false): PaymentOperation | null {
  if (!isObject(record)) throw bad('a record is not an object');
  if (typeof record.type !== 'string' || !PAYMENT_TYPES.has(record.type)) return null;
  const create = record.type === 'create_account';
  const to = create ? record.account : record.to;
  const from = create ? record.funder : record.from;
  if (to === from) return null;
  const into = to === address;
  if (!into && !(outgoing && from === address)) return null;
  if (typeof from !== 'string') throw bad('a payment record has no sender');
  if (typeof to !== 'string') throw bad('a payment record has no recipient');
  const token = record.paging_token;
  if (typeof token !== 'string') throw bad('a payment record has no paging token');
  let toid: ReturnType<typeof decodeOperationId>;
  try {
    toid = decodeOperationId(token);
  } catch {
    throw bad(`paging token ${token.slice(0, 24)} is not an operation id`);
  }
  const txHash = record.transaction_hash;
  if (typeof txHash !== 'string' || !HASH.test(txHash)) throw bad(`operation ${token} has no transaction hash`);
  if (typeof record.transaction_successful !== 'boolean') throw bad(`operation ${token} does not say whether its transaction succeeded`);
  // what the address received, or (outgoing) what left it: a path payment's source side
  const sourceSide = !into && record.type !== 'payment' && !create;
  const contract = create ? null : assetOf(record, sourceSide ? 'source_' : '', token);
  if (contract === undefined) return null;
  const amount = stroops(create ? record.starting_balance : sourceSide ? record.source_amount : record.amount, `operation ${token} amount`);
  const muxed = record.to_muxed_id;
  if (muxed !== undefined && (typeof muxed !== 'string' || !isMemoId(muxed))) throw bad(`operation ${token} has a malformed to_muxed_id`);
  return Object.freeze({
    txHash,
    position: toid.position,
    ledger: toid.ledger,
    fromAddress: from,
    toAddress: to,
    contract,
    amount,
    succeeded: record.transaction_successful,
    toMuxedId: muxed ?? null,
  });
}

/**
 * The deposit memo of a Horizon transaction resource: MEMO_ID → the id in decimal; MEMO_TEXT →
 * the text (an empty text is no memo); MEMO_HASH, MEMO_RETURN and none → null (deposits are told
 * apart by MEMO_ID, or by a text the sender typed).
 */
export function memoOfTransaction(tx: Record<string, unknown>): string | null {
  switch (tx.memo_type) {
    case 'id':
      if (typeof tx.memo !== 'string' || !isMemoId(tx.memo)) throw bad(`transaction ${String(tx.hash ?? tx.id).slice(0, 64)} has a malformed MEMO_ID`);
      return tx.memo;
    case 'text':
      return typeof tx.memo === 'string' && tx.memo.length > 0 ? tx.memo : null;
    case 'hash':
    case 'return':
    case 'none':
    case undefined:
      return null;
    default:
      throw bad('a transaction has an unknown memo_type');
  }
}

/**
 * Deposit scanning over Horizon's REST API. Horizon serves ingested ledgers only, which are
 * closed and final on Stellar (no reorgs).
 *
 * - tipHeight: GET / → history_latest_ledger (the newest ledger Horizon has ingested).
 * - transfersSince: one page of GET /accounts/{address}/payments?order=asc&limit=…&cursor=…
 *   &join=transactions&include_failed=true. Each record's transaction comes joined, with its memo
 *   and ledger; a record reported without it is an RPC_ERROR (the memo would be unknown).
 *   The cursor is the last record's paging_token (every record, reported or not), so the next
 *   page starts strictly after it: no duplicates.
 * - position: the operation's index in its transaction, from the TOID (see decodeOperationId).
 * - blockHeight: the joined transaction's ledger (checked against the TOID's ledger);
 *   blockHash: the ledger sequence in decimal, because neither the payment nor the joined
 *   transaction carries the ledger hash (ledgers are final, nothing is rolled back).
 * - memo: the transaction's MEMO_ID or MEMO_TEXT (memoOfTransaction); a payment to a muxed M…
 *   address uses its muxed id instead, unless the transaction memo differs (then null:
 *   ambiguous, left to the operator).
 * - Failed transactions (transaction_successful false) are reported with succeeded false.
 * - An account that does not exist yet (404: an unfunded shared address) has no transfers.
 * - With `options.outgoing`, the address's own payments to others too (same page, same cursor).
 *   headCursor: the last position of the newest ingested ledger (an address the service does not
 *   own is watched from there). addressNatures: by StrKey kind (stellarAddressNature).
 */
export function createStellarScanner(endpoint: ChainEndpoint, options: StellarScannerOptions = {}): HistoryScanner {
  const http = new ScannerHttp(endpoint, options.retry);
  const label = http.label;

  /** GETs `path` under the Horizon base URL (its own path prefix and query, API keys, kept); 404 is body null. */
  async function get(what: string, path: string, query?: Record<string, string>): Promise<{ status: number; body: unknown }> {
    try {
      return { status: 200, body: await http.request(what, { path, ...(query ? { query } : {}) }, undefined, horizonRefusal) };
    } catch (e) {
      if (e instanceof ChainRpcError && isHttpJsonError(e.cause) && e.cause.responseStatus === 404) return { status: 404, body: null };
      throw e;
    }
  }

  async function tipHeight(): Promise<bigint> {
    const { body } = await get('XLM root', '/');
    const latest = isObject(body) ? body.history_latest_ledger : undefined;
    if (!Number.isSafeInteger(latest) || (latest as number) < 1) throw new ChainRpcError('RPC_ERROR', `XLM root: ${label} did not report history_latest_ledger`);
    return BigInt(latest as number);
  }

  return Object.freeze({
    kind: 'history' as const,

    tipHeight,

    /**
     * The last position of the newest ledger Horizon has ingested (its TOID with every low bit
     * set): payments read from it are those of later ledgers.
     */
    async headCursor(address: string): Promise<string> {
      if (typeof address !== 'string' || !/^G[A-Z2-7]{55}$/.test(address)) throw new TypeError('not a Stellar account address');
      const latest = await tipHeight();
      return (((latest + 1n) << 32n) - 1n).toString();
    },

    /** By StrKey kind: a contract address (C…) is `CONTRACT`; an account (G…, or muxed M…) is held by keys (signers), `EOA`. */
    async addressNatures(addresses: readonly string[]): Promise<readonly AddressNature[]> {
      return addresses.map(stellarAddressNature);
    },

    async transfersSince(address: string, cursor: string | null, limit: number, options: HistoryReadOptions = {}) {
      if (cursor !== null && !TOKEN.test(cursor)) throw new TypeError('not a Stellar scan cursor (a Horizon paging token)');
      const params: Record<string, string> = {
        order: 'asc',
        limit: String(Math.max(1, Math.min(MAX_PAGE, Math.floor(Number.isFinite(limit) ? limit : MAX_PAGE)))),
        join: 'transactions',
        include_failed: 'true',
      };
      if (cursor !== null) params.cursor = cursor;
      const { status, body } = await get('XLM payments', `/accounts/${encodeURIComponent(address)}/payments`, params);
      if (status === 404) return { transfers: [], cursor };
      const records = isObject(body) && isObject(body._embedded) ? body._embedded.records : undefined;
      if (!Array.isArray(records)) throw bad(`${label} answered without _embedded.records`);
      const transfers: ObservedTransfer[] = [];
      let next = cursor;
      for (const record of records) {
        const op = parsePaymentOperation(record, address, options.outgoing === true);
        const token = (record as Record<string, unknown>).paging_token;
        if (typeof token !== 'string' || !TOKEN.test(token)) throw bad('a record has no paging token');
        if (next !== null && BigInt(token) <= BigInt(next)) throw bad(`records are not in ascending order after ${next}`);
        next = token;
        if (!op) continue;
        const tx = (record as Record<string, unknown>).transaction;
        if (!isObject(tx)) throw bad(`operation ${token} came without its transaction (join=transactions is required)`);
        if (tx.hash !== undefined && tx.hash !== op.txHash) throw bad(`operation ${token} came with another transaction`);
        if (!Number.isSafeInteger(tx.ledger) || BigInt(tx.ledger as number) !== op.ledger) throw bad(`operation ${token}: its transaction's ledger does not match the operation id`);
        const txMemo = memoOfTransaction(tx);
        const memo = op.toMuxedId === null ? txMemo : txMemo === null || txMemo === op.toMuxedId ? op.toMuxedId : null;
        transfers.push(Object.freeze({
          txHash: op.txHash,
          position: op.position,
          fromAddress: op.fromAddress,
          toAddress: op.toAddress,
          memo,
          contract: op.contract,
          amount: op.amount,
          blockHeight: op.ledger,
          blockHash: op.ledger.toString(),
          succeeded: op.succeeded,
        }));
      }
      return { transfers, cursor: next };
    },
  } satisfies HistoryScanner);
}

/** A Stellar counterparty's nature from its StrKey: C… (a Soroban contract) `CONTRACT`, anything else `EOA`. */
export function stellarAddressNature(address: string): AddressNature {
  return address.startsWith('C') ? 'CONTRACT' : 'EOA';
}

/** "HTTP 400", with the title of a Horizon problem document for 4xx (never its instance or extras). */
function horizonRefusal(answer: HttpJsonAnswer): string {
  const title = answer.status >= 400 && answer.status < 500 ? (answer.json as { title?: unknown } | undefined)?.title : undefined;
  return typeof title === 'string' && title.length <= 80 && /^[\w ,.'()-]*$/.test(title) ? `HTTP ${answer.status} (${title})` : `HTTP ${answer.status}`;
}
