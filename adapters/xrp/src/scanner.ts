import { ChainRpcError, ScannerHttp, type ChainEndpoint, type HistoryReadOptions, type HistoryScanner, type ObservedTransfer, type RetryPolicy } from '@wcs/core';
import { MAX_DESTINATION_TAG } from './memo';
import { isObject, judgeRippled, rippledError, validatedLedgerIndex } from './rippled';

export { DEFAULT_RETRY, type RetryPolicy } from '@wcs/core';

export interface XrpScannerOptions {
  /** Bounded retry for unavailable nodes (default 3 attempts, 250 ms then 500 ms apart). */
  readonly retry?: RetryPolicy;
}

/** tfPartialPayment: the Payment may deliver less than its Amount. */
const TF_PARTIAL_PAYMENT = 0x00020000;

/** rippled's largest account_tx page for non-admin connections. */
const MAX_PAGE = 400;

const DROPS = /^(0|[1-9][0-9]{0,18})$/;

/**
 * Where a scan of one account stands, serialised into the opaque cursor: the last transaction
 * handed out (ledger index + TransactionIndex; absent before the first one) and rippled's marker
 * when the previous page said there is more.
 */
interface XrpCursor {
  readonly last: { readonly ledger: number; readonly index: number } | null;
  readonly marker?: unknown;
}

function encodeCursor(c: XrpCursor): string {
  const o: Record<string, unknown> = { v: 1 };
  if (c.last) {
    o.ledger = c.last.ledger;
    o.index = c.last.index;
  }
  if (c.marker !== undefined) o.marker = c.marker;
  return JSON.stringify(o);
}

function decodeCursor(cursor: string): XrpCursor {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(cursor) as Record<string, unknown>;
  } catch {
    throw new TypeError('not an XRP scan cursor');
  }
  if (!isObject(o) || o.v !== 1) throw new TypeError('not an XRP scan cursor');
  const hasLast = o.ledger !== undefined || o.index !== undefined;
  if (hasLast && (!Number.isSafeInteger(o.ledger) || (o.ledger as number) < 1 || !Number.isSafeInteger(o.index) || (o.index as number) < 0)) {
    throw new TypeError('not an XRP scan cursor');
  }
  if (!hasLast && o.marker === undefined) throw new TypeError('not an XRP scan cursor');
  const last = hasLast ? { ledger: o.ledger as number, index: o.index as number } : null;
  return o.marker === undefined ? { last } : { last, marker: o.marker };
}

/** One account_tx entry in either API version's shape (v1: `tx` with hash inside; v2: `tx_json` + top-level hash/ledger_hash). */
interface Entry {
  readonly tx: Record<string, unknown>;
  readonly meta: Record<string, unknown>;
  readonly hash: string;
  readonly ledger: number;
  readonly index: number;
  readonly ledgerHash: string | null;
  readonly validated: boolean;
}

function readEntry(raw: unknown, bad: (why: string) => ChainRpcError): Entry {
  if (!isObject(raw)) throw bad('a transaction entry is not an object');
  const tx = raw.tx_json ?? raw.tx;
  const meta = raw.meta;
  if (!isObject(tx)) throw bad('a transaction entry has no JSON transaction (binary mode is not supported)');
  if (!isObject(meta)) throw bad('a transaction entry has no JSON metadata');
  const hash = raw.hash ?? tx.hash;
  const ledger = raw.ledger_index ?? tx.ledger_index ?? tx.inLedger;
  const index = meta.TransactionIndex;
  if (typeof hash !== 'string' || !/^[0-9A-Fa-f]{64}$/.test(hash)) throw bad('a transaction entry has no hash');
  if (!Number.isSafeInteger(ledger) || (ledger as number) < 1) throw bad('a transaction entry has no ledger index');
  if (!Number.isSafeInteger(index) || (index as number) < 0) throw bad('a transaction entry has no TransactionIndex');
  const ledgerHash = typeof raw.ledger_hash === 'string' && /^[0-9A-Fa-f]{64}$/.test(raw.ledger_hash) ? raw.ledger_hash.toUpperCase() : null;
  return { tx, meta, hash: hash.toUpperCase(), ledger: ledger as number, index: index as number, ledgerHash, validated: raw.validated === true };
}

function drops(value: unknown, bad: (why: string) => ChainRpcError, what: string): bigint {
  if (typeof value !== 'string' || !DROPS.test(value)) throw bad(`${what} is not an amount of drops`);
  return BigInt(value);
}

/**
 * The XRP transfer an entry carries into `address` (or, with `outgoing`, out of it), or null. Rules:
 * - Payment transactions whose Destination is the address (not sent by the address itself);
 *   with `outgoing`, also those the address sent (Account) to another Destination, reported with
 *   fromAddress the address and toAddress the Destination.
 * - Amount = meta.delivered_amount, never Amount (partial payments deliver less). Where rippled
 *   reports "unavailable" (pre-2014 ledgers) Amount is used only for payments without
 *   tfPartialPayment, which deliver Amount exactly; a partial payment without a known delivered
 *   amount is an RPC_ERROR.
 * - Failed transactions (any result other than tesSUCCESS) are reported with succeeded false
 *   and the requested amount (DeliverMax / Amount): nothing was delivered, nothing is credited.
 * - Only XRP is reported (contract null): issued-currency and MPT deliveries are skipped because
 *   their amounts have no fixed decimals this scanner could convert exactly.
 * - memo = DestinationTag in decimal, null without one; position 0 (a Payment delivers once).
 */
function transferFromEntry(entry: Entry, address: string, bad: (why: string) => ChainRpcError, outgoing = false): ObservedTransfer | null {
  const { tx, meta } = entry;
  if (tx.TransactionType !== 'Payment' || tx.Account === tx.Destination) return null;
  const into = tx.Destination === address;
  if (!into && !(outgoing && tx.Account === address)) return null;
  if (!into && typeof tx.Destination !== 'string') throw bad(`payment ${entry.hash} has no Destination`);
  const succeeded = meta.TransactionResult === 'tesSUCCESS';
  const flags = typeof tx.Flags === 'number' ? tx.Flags : 0;
  const requested = tx.DeliverMax ?? tx.Amount;
  let amount: bigint;
  if (succeeded) {
    const delivered = meta.delivered_amount;
    if (isObject(delivered) || (delivered === undefined && isObject(requested))) return null;
    if (delivered === undefined || delivered === 'unavailable') {
      if ((flags & TF_PARTIAL_PAYMENT) !== 0) throw bad(`payment ${entry.hash} is partial and its delivered amount is unavailable`);
      if (isObject(requested)) return null;
      amount = drops(requested, bad, `payment ${entry.hash} Amount`);
    } else {
      amount = drops(delivered, bad, `payment ${entry.hash} delivered_amount`);
    }
  } else {
    if (isObject(requested)) return null;
    amount = drops(requested, bad, `payment ${entry.hash} Amount`);
  }
  let memo: string | null = null;
  if (tx.DestinationTag !== undefined) {
    const tag = tx.DestinationTag;
    if (!Number.isSafeInteger(tag) || (tag as number) < 0 || BigInt(tag as number) > MAX_DESTINATION_TAG) throw bad(`payment ${entry.hash} has a malformed DestinationTag`);
    memo = String(tag);
  }
  return Object.freeze({
    txHash: entry.hash,
    position: 0,
    fromAddress: typeof tx.Account === 'string' ? tx.Account : null,
    toAddress: into ? address : tx.Destination as string,
    memo,
    contract: null,
    amount,
    blockHeight: BigInt(entry.ledger),
    blockHash: entry.ledgerHash ?? String(entry.ledger),
    succeeded,
  });
}

/**
 * Deposit scanning over rippled / Clio JSON-RPC (POST {method, params: [{…}]}), validated ledgers only.
 *
 * - tipHeight: `ledger` with ledger_index "validated" → its ledger_index.
 * - transfersSince: one `account_tx` page (forward, ledger_index_min = cursor ledger or -1,
 *   ledger_index_max -1 = latest validated, limit ≤ 400, marker from the cursor), entries sorted by
 *   (ledger, TransactionIndex) since rippled orders pages, not entries within a page. Entries at
 *   or before the cursor's (ledger, TransactionIndex) are skipped, so re-reading the cursor's
 *   ledger (no marker: the history ended there last time) never repeats a transfer. Reading stops
 *   at the first entry not marked validated.
 * - An account that does not exist yet (actNotFound: an unfunded shared address) has no
 *   transfers: the same cursor comes back.
 * - With `options.outgoing`, the account's own Payments to another account too (chain events OUT,
 *   custody outflows). headCursor: the latest validated ledger counted as read (an address the
 *   service does not own is watched from there). No addressNatures: every XRPL account is
 *   controlled by keys (a master key, a regular key or a signer list); the XRP Ledger has no
 *   contract accounts, so every counterparty is `EOA`.
 * - blockHash: the entry's ledger_hash when the server includes it (API v2), else the ledger
 *   index in decimal (API v1 entries carry no ledger hash; validated ledgers are final).
 */
export function createXrpScanner(endpoint: ChainEndpoint, options: XrpScannerOptions = {}): HistoryScanner {
  const http = new ScannerHttp(endpoint, options.retry);
  const label = http.label;

  /** One call's result object; a (non-transient) rippled error as { status: 'error', error: code }. */
  async function rpc(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const body = await http.request(`XRP ${method}`, { body: JSON.stringify({ method, params: [params] }) }, judgeRippled);
    const result = (body as { result: Record<string, unknown> }).result;
    const code = rippledError(result);
    return code === null ? result : { status: 'error', error: code };
  }

  async function tipHeight(): Promise<bigint> {
    const result = await rpc('ledger', { ledger_index: 'validated' });
    if (result.status === 'error') throw new ChainRpcError('RPC_ERROR', `XRP ledger: rippled error ${String(result.error)}`, { method: 'XRP ledger', nodeCode: String(result.error) });
    const n = validatedLedgerIndex(result);
    if (n === null) throw new ChainRpcError('RPC_ERROR', `XRP ledger: ${label} did not report a validated ledger index`);
    return BigInt(n);
  }

  return Object.freeze({
    kind: 'history' as const,

    tipHeight,

    /**
     * The latest validated ledger, every transaction in it counted as read: account_tx from this
     * cursor returns only what later ledgers hold.
     */
    async headCursor(address: string): Promise<string> {
      if (typeof address !== 'string' || !/^r[1-9A-HJ-NP-Za-km-z]{24,34}$/.test(address)) throw new TypeError('not an XRP address');
      const tip = await tipHeight();
      return encodeCursor({ last: { ledger: Number(tip), index: Number.MAX_SAFE_INTEGER } });
    },

    async transfersSince(address: string, cursor: string | null, limit: number, options: HistoryReadOptions = {}) {
      const from = cursor === null ? null : decodeCursor(cursor);
      const bad = (why: string) => new ChainRpcError('RPC_ERROR', `XRP account_tx: ${why}`);
      const params: Record<string, unknown> = {
        account: address,
        ledger_index_min: from?.last ? from.last.ledger : -1,
        ledger_index_max: -1,
        binary: false,
        forward: true,
        limit: Math.max(1, Math.min(MAX_PAGE, Math.floor(Number.isFinite(limit) ? limit : MAX_PAGE))),
      };
      if (from?.marker !== undefined) params.marker = from.marker;
      const result = await rpc('account_tx', params);
      if (result.status === 'error') {
        if (result.error === 'actNotFound') return { transfers: [], cursor };
        throw bad(`rippled error ${String(result.error)}`);
      }
      if (!Array.isArray(result.transactions)) throw bad(`${label} answered without a transactions list`);
      const entries = result.transactions.map((e) => readEntry(e, bad));
      entries.sort((a, b) => a.ledger - b.ledger || a.index - b.index);

      const transfers: ObservedTransfer[] = [];
      let last = from?.last ?? null;
      let complete = true;
      for (const entry of entries) {
        if (!entry.validated) {
          complete = false;
          break;
        }
        if (last && (entry.ledger < last.ledger || (entry.ledger === last.ledger && entry.index <= last.index))) continue;
        const t = transferFromEntry(entry, address, bad, options.outgoing === true);
        if (t) transfers.push(t);
        last = { ledger: entry.ledger, index: entry.index };
      }
      const marker = complete && result.marker !== undefined && result.marker !== null ? result.marker : undefined;
      if (!last && marker === undefined) return { transfers, cursor };
      const next = encodeCursor(marker === undefined ? { last } : { last, marker });
      return { transfers, cursor: from && next === encodeCursor(from) ? cursor : next };
    },
  } satisfies HistoryScanner);
}
