import { Address, Cell, beginCell, loadTransaction, type Transaction } from '@ton/core';
import { HttpJsonClient, HttpJsonError, readJson, type ChainEndpoint, type HttpJsonAnswer, type Verdict } from '@wcs/core';

/**
 * The node API the adapter speaks: a toncenter-like subset over HTTP (JSON, `{ ok, result }`
 * envelopes, hashes as lower-case hex, amounts as decimal strings). The package's test support
 * serves it over @ton/sandbox (src/test-support/sandbox-server.ts); an operator puts it in front
 * of a TON node (a small proxy over toncenter or a liteserver client).
 *
 * - GET  /getMasterchainInfo → { last: { seqno } }
 * - GET  /getAddressInformation?address= → { balance, state: active | uninitialized | frozen, last_transaction_id: { lt, hash } | null,
 *        code, data } (code and data: base64 BOCs of the account's code and data cells, "" when it has none, as toncenter gives them)
 * - GET  /getTransactions?address=&limit=[&lt=&hash=][&to_lt=] → newest first, from (lt, hash)
 *        inclusive when given, down to to_lt exclusive: [{ transaction_id: { lt, hash },
 *        prev_transaction_id: { lt, hash } (lt "0": none), utime, mc_block_seqno,
 *        description: { type, aborted, bounce: ok | negative-funds | no-funds | null },
 *        in_msg: null | { source (raw address; "" or null for an external message), destination (raw),
 *          value, bounce, bounced, hash (the message's), msg_data: { @type: msg.dataText, text: base64 of
 *          the comment's UTF-8 } | { @type: msg.dataRaw, body: base64 BOC of the body }, message },
 *        data }]
 *        (`data`: the transaction, base64 BOC). The parsed fields are toncenter's (v2 raw.message for
 *        in_msg; description and prev_transaction_id as v3 gives them), addresses raw and hashes hex.
 *        The scanner reads the fields and decodes a message body only when it is not a comment
 *        (jetton notifications); `tx` decodes `data`, checked against lt and hash, when read.
 * - POST /sendBocReturnHash { boc } → { hash } (the external message's hash); refused: HTTP 400 { ok: false, error }
 * - POST /runGetMethod { address, method, stack } → { exit_code, stack }; stack items { type: num, value: decimal }
 *        or { type: cell | slice, value: base64 BOC }
 */

export type StackItem = { readonly type: 'num'; readonly value: string } | { readonly type: 'cell' | 'slice'; readonly value: string };

export interface AccountInfo {
  readonly balance: bigint;
  readonly state: 'active' | 'uninitialized' | 'frozen';
  readonly lastTransaction: { readonly lt: bigint; readonly hash: string } | null;
}

export interface ApiInMessage {
  /** Raw form ("0:<hex>"); null for an external message. */
  readonly source: string | null;
  /** Raw form. */
  readonly destination: string;
  readonly value: bigint;
  readonly bounce: boolean;
  readonly bounced: boolean;
  /** The message's hash, lower-case hex. */
  readonly hash: string;
  /** The comment's text (msg.dataText): null when the body is not a comment as the node read it. */
  readonly text: string | null;
  /** The body (msg.dataRaw), base64 BOC: null when the node gave a comment's text. */
  readonly body: string | null;
}

export type BouncePhase = 'ok' | 'negative-funds' | 'no-funds';

export interface ApiTransaction {
  readonly lt: bigint;
  /** lower-case hex */
  readonly hash: string;
  /** The account's previous transaction (lt 0n: none). */
  readonly prev: { readonly lt: bigint; readonly hash: string };
  readonly utime: number;
  readonly mcBlockSeqno: bigint;
  readonly inMsg: ApiInMessage | null;
  readonly description: { readonly type: string; readonly aborted: boolean; readonly bounce: BouncePhase | null };
  /** The transaction decoded from `data` (on first read), checked against lt and hash: BAD_ANSWER when it does not match. */
  readonly tx: Transaction;
}

/** An account's code and data cells (getAddressInformation's code / data): null when it has none (not active). */
export interface AccountCode {
  readonly state: 'active' | 'uninitialized' | 'frozen';
  readonly code: Cell | null;
  readonly data: Cell | null;
}

/** A request the node refused (HTTP 400 with its message): the message is the node's. */
export class TonNodeRefusal extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'TonNodeRefusal';
  }
}

const HEX64 = /^[0-9a-f]{64}$/;
const DEC = /^(0|[1-9][0-9]{0,39})$/;
const BOUNCE = new Set<unknown>(['ok', 'negative-funds', 'no-funds']);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const envelope: (answer: HttpJsonAnswer) => Verdict = readJson((json) => {
  if (!isObject(json) || json.ok !== true || !('result' in json)) return { ok: false, retry: false, message: 'not an { ok: true, result } answer' };
  return { ok: true };
});

function bad(what: string, why: string): HttpJsonError {
  return new HttpJsonError('BAD_ANSWER', `TON ${what}: ${why}`);
}

export function dec(v: unknown, what: string): bigint {
  if (typeof v === 'string' && DEC.test(v)) return BigInt(v);
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  throw bad(what, `not a decimal: ${JSON.stringify(v)}`);
}

/** Whether s[from..] is 64 lower-case hex digits and nothing more (a loop: the regex takes ~0.3 µs a hash, 1,000s of them a page). */
function isHex64(s: string, from: number): boolean {
  if (s.length !== from + 64) return false;
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

function hex64(v: unknown, what: string): string {
  if (typeof v === 'string' && isHex64(v, 0)) return v;
  throw bad(what, `hash ${JSON.stringify(v)} is not 64 lower-case hex digits`);
}

function txId(v: unknown, what: string): { lt: bigint; hash: string } {
  if (!isObject(v)) throw bad('getTransactions', `no ${what}`);
  return { lt: dec(v.lt, `getTransactions ${what}.lt`), hash: hex64(v.hash, `getTransactions ${what}.hash`) };
}

function rawAddress(v: unknown, what: string): string {
  if (typeof v === 'string' && ((v.charCodeAt(0) === 48 && v.charCodeAt(1) === 58 && isHex64(v, 2)) || (v.startsWith('-1:') && isHex64(v, 3)))) return v;
  throw bad('getTransactions', `${what} ${JSON.stringify(v)} is not a raw address (workchain:64 lower-case hex digits)`);
}

function flag(v: unknown, what: string): boolean {
  if (typeof v === 'boolean') return v;
  throw bad('getTransactions', `${what} is not a boolean`);
}

/** The comment's text from msg.dataText's base64 UTF-8: null when the bytes are not UTF-8 (as readComment). */
function commentText(v: unknown): string | null {
  if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v)) throw bad('getTransactions', 'msg.dataText text is not base64');
  const text = Buffer.from(v, 'base64').toString('utf8');
  return text.includes('\ufffd') ? null : text;
}

function inMessage(v: unknown): ApiInMessage | null {
  if (v === null || v === undefined) return null;
  if (!isObject(v)) throw bad('getTransactions', 'in_msg is not an object');
  const source = v.source === '' || v.source === null || v.source === undefined ? null : rawAddress(v.source, 'in_msg.source');
  const data = v.msg_data;
  if (!isObject(data)) throw bad('getTransactions', 'in_msg without msg_data');
  let text: string | null = null;
  let body: string | null = null;
  if (data['@type'] === 'msg.dataText') {
    // not UTF-8: no comment a user typed (as readComment), text null
    text = commentText(data.text);
  } else if (data['@type'] === 'msg.dataRaw') {
    if (typeof data.body !== 'string') throw bad('getTransactions', 'msg.dataRaw without a body');
    body = data.body;
  } else {
    throw bad('getTransactions', `unknown msg_data type ${JSON.stringify(data['@type'])}`);
  }
  return {
    source,
    destination: rawAddress(v.destination, 'in_msg.destination'),
    value: dec(v.value, 'getTransactions in_msg.value'),
    bounce: flag(v.bounce, 'in_msg.bounce'),
    bounced: flag(v.bounced, 'in_msg.bounced'),
    hash: hex64(v.hash, 'getTransactions in_msg.hash'),
    text,
    body,
  };
}

/** A listed transaction: the node's fields; the BOC decoded (and checked) only when `tx` is read. */
class ListedTransaction implements ApiTransaction {
  private decoded: Transaction | null = null;

  constructor(
    readonly lt: bigint,
    readonly hash: string,
    readonly prev: { lt: bigint; hash: string },
    readonly utime: number,
    readonly mcBlockSeqno: bigint,
    readonly inMsg: ApiInMessage | null,
    readonly description: { type: string; aborted: boolean; bounce: BouncePhase | null },
    private readonly data: string,
  ) {}

  get tx(): Transaction {
    if (this.decoded) return this.decoded;
    let tx: Transaction;
    try {
      tx = loadTransaction(Cell.fromBase64(this.data).beginParse());
    } catch (e) {
      throw bad('getTransactions', `data is not a transaction BOC (${(e as Error).message})`);
    }
    if (tx.lt !== this.lt || tx.hash().toString('hex') !== this.hash) throw bad('getTransactions', `data does not match transaction ${this.lt}:${this.hash}`);
    this.decoded = tx;
    return tx;
  }
}

/** The last mc_block_seqno read and its value: the transactions of a page mostly share a few. */
let lastSeqno: { text: unknown; value: bigint } = { text: null, value: 0n };

function utimeOf(v: unknown): number {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return v;
  return Number(dec(v, 'getTransactions utime'));
}

function seqnoOf(v: unknown): bigint {
  if (v !== lastSeqno.text || typeof v !== 'string') lastSeqno = { text: v, value: dec(v, 'getTransactions mc_block_seqno') };
  return lastSeqno.value;
}

/** One getTransactions item: every field checked for its form (not against the BOC: see ApiTransaction.tx). */
export function listedTransaction(t: unknown): ApiTransaction {
  if (!isObject(t) || typeof t.data !== 'string') throw bad('getTransactions', 'a transaction without transaction_id / data');
  const id = txId(t.transaction_id, 'transaction_id');
  const prev = txId(t.prev_transaction_id, 'prev_transaction_id');
  const d = t.description;
  if (!isObject(d) || typeof d.type !== 'string') throw bad('getTransactions', 'a transaction without description');
  const bounce = d.bounce === null || d.bounce === undefined ? null : d.bounce;
  if (bounce !== null && !BOUNCE.has(bounce)) throw bad('getTransactions', `unknown bounce phase ${JSON.stringify(bounce)}`);
  return new ListedTransaction(
    id.lt, id.hash, prev,
    utimeOf(t.utime), seqnoOf(t.mc_block_seqno),
    inMessage(t.in_msg),
    { type: d.type, aborted: flag(d.aborted, 'description.aborted'), bounce: bounce as BouncePhase | null },
    t.data,
  );
}

/** A base64 BOC of one cell ("" / absent: none). */
function bocCell(v: unknown, what: string): Cell | null {
  if (v === '' || v === null || v === undefined) return null;
  if (typeof v !== 'string') throw bad('getAddressInformation', `${what} is not a base64 BOC`);
  try {
    return Cell.fromBase64(v);
  } catch (e) {
    throw bad('getAddressInformation', `${what} is not a BOC (${(e as Error).message})`);
  }
}

export class TonApi {
  private readonly http: HttpJsonClient;
  private readonly writes: HttpJsonClient;

  constructor(endpoint: ChainEndpoint) {
    this.http = new HttpJsonClient(endpoint);
    // a broadcast is sent once: a retried POST after a timeout is the caller's re-broadcast
    this.writes = new HttpJsonClient(endpoint, { attempts: 1 });
  }

  private async get(path: string, query: Record<string, string> = {}): Promise<unknown> {
    const json = await this.http.request({ method: 'GET', path, query }, envelope);
    return (json as { result: unknown }).result;
  }

  async masterchainSeqno(): Promise<bigint> {
    const r = await this.get('/getMasterchainInfo');
    if (!isObject(r) || !isObject(r.last)) throw bad('getMasterchainInfo', 'no last block');
    return dec(r.last.seqno, 'getMasterchainInfo');
  }

  async account(address: Address): Promise<AccountInfo> {
    const r = await this.get('/getAddressInformation', { address: address.toRawString() });
    if (!isObject(r)) throw bad('getAddressInformation', 'no account record');
    const state = r.state;
    if (state !== 'active' && state !== 'uninitialized' && state !== 'frozen') throw bad('getAddressInformation', `unknown state ${JSON.stringify(state)}`);
    const last = isObject(r.last_transaction_id) && r.last_transaction_id.lt !== '0' ? r.last_transaction_id : null;
    return {
      balance: dec(r.balance, 'getAddressInformation balance'),
      state,
      lastTransaction: last ? { lt: dec(last.lt, 'last_transaction_id'), hash: String(last.hash) } : null,
    };
  }

  /** The account's code and data (the jetton wallet check reads a known jetton's cells instead of running its get methods). */
  async accountCode(address: Address): Promise<AccountCode> {
    const r = await this.get('/getAddressInformation', { address: address.toRawString() });
    if (!isObject(r)) throw bad('getAddressInformation', 'no account record');
    const state = r.state;
    if (state !== 'active' && state !== 'uninitialized' && state !== 'frozen') throw bad('getAddressInformation', `unknown state ${JSON.stringify(state)}`);
    return { state, code: bocCell(r.code, 'code'), data: bocCell(r.data, 'data') };
  }

  /** Up to `limit` transactions of address, newest first, from `from` (inclusive) down to toLt (exclusive). */
  async transactions(address: Address, limit: number, from?: { lt: bigint; hash: string } | null, toLt?: bigint | null): Promise<ApiTransaction[]> {
    const query: Record<string, string> = { address: address.toRawString(), limit: String(limit) };
    if (from) {
      query.lt = from.lt.toString();
      query.hash = from.hash;
    }
    if (toLt !== undefined && toLt !== null) query.to_lt = toLt.toString();
    const r = await this.get('/getTransactions', query);
    if (!Array.isArray(r)) throw bad('getTransactions', 'not a list');
    return r.map(listedTransaction);
  }

  /** Sends an external message; its hash (hex) as the node computed it, or TonNodeRefusal. */
  async sendBoc(boc: Buffer): Promise<string> {
    let json: unknown;
    try {
      json = await this.writes.request({ method: 'POST', path: '/sendBocReturnHash', body: JSON.stringify({ boc: boc.toString('base64') }) }, envelope);
    } catch (e) {
      if (e instanceof HttpJsonError && e.responseStatus === 400) throw new TonNodeRefusal(e.reason);
      throw e;
    }
    const r = (json as { result: unknown }).result;
    if (!isObject(r) || typeof r.hash !== 'string' || !HEX64.test(r.hash)) throw bad('sendBocReturnHash', 'no message hash');
    return r.hash;
  }

  async runGetMethod(address: Address, method: string, stack: readonly StackItem[] = []): Promise<{ exitCode: number; stack: StackItem[] }> {
    const json = await this.http.request({ method: 'POST', path: '/runGetMethod', body: JSON.stringify({ address: address.toRawString(), method, stack }) }, envelope);
    const r = (json as { result: unknown }).result;
    if (!isObject(r) || typeof r.exit_code !== 'number' || !Array.isArray(r.stack)) throw bad('runGetMethod', 'no exit_code / stack');
    return { exitCode: r.exit_code, stack: r.stack as StackItem[] };
  }
}

export function stackNum(item: StackItem | undefined, what: string): bigint {
  if (!item || item.type !== 'num') throw bad(what, 'expected a number on the stack');
  const v = item.value;
  if (!/^-?(0|[1-9][0-9]{0,80})$/.test(v)) throw bad(what, `not a decimal: ${JSON.stringify(v)}`);
  return BigInt(v);
}

export function stackAddress(item: StackItem | undefined, what: string): Address {
  if (!item || (item.type !== 'slice' && item.type !== 'cell')) throw bad(what, 'expected an address slice on the stack');
  try {
    return Cell.fromBase64(item.value).beginParse().loadAddress();
  } catch (e) {
    throw bad(what, `not an address slice (${(e as Error).message})`);
  }
}

export function addressSlice(address: Address): StackItem {
  return { type: 'slice', value: beginCell().storeAddress(address).endCell().toBoc().toString('base64') };
}
