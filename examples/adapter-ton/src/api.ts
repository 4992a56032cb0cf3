import { Address, Cell, beginCell, loadTransaction, type Transaction } from '@ton/core';
import { HttpJsonClient, HttpJsonError, readJson, type ChainEndpoint, type HttpJsonAnswer, type Verdict } from '@wcs/core';

/**
 * The node API the adapter speaks: a toncenter-like subset over HTTP (JSON, `{ ok, result }`
 * envelopes, hashes as lower-case hex, amounts as decimal strings). The package's test support
 * serves it over @ton/sandbox (src/test-support/sandbox-server.ts); an operator puts it in front
 * of a TON node (a small proxy over toncenter or a liteserver client).
 *
 * - GET  /getMasterchainInfo → { last: { seqno } }
 * - GET  /getAddressInformation?address= → { balance, state: active | uninitialized | frozen, last_transaction_id: { lt, hash } | null }
 * - GET  /getTransactions?address=&limit=[&lt=&hash=][&to_lt=] → newest first, from (lt, hash)
 *        inclusive when given, down to to_lt exclusive: [{ transaction_id: { lt, hash }, utime, mc_block_seqno, data }]
 *        (`data`: the transaction, base64 BOC)
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

export interface ApiTransaction {
  readonly lt: bigint;
  /** lower-case hex */
  readonly hash: string;
  readonly utime: number;
  readonly mcBlockSeqno: bigint;
  readonly tx: Transaction;
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
    return r.map((t) => {
      if (!isObject(t) || !isObject(t.transaction_id) || typeof t.data !== 'string') throw bad('getTransactions', 'a transaction without transaction_id / data');
      const hash = String(t.transaction_id.hash);
      if (!HEX64.test(hash)) throw bad('getTransactions', `hash ${JSON.stringify(hash)} is not 64 lower-case hex digits`);
      let tx: Transaction;
      try {
        tx = loadTransaction(Cell.fromBase64(t.data).beginParse());
      } catch (e) {
        throw bad('getTransactions', `data is not a transaction BOC (${(e as Error).message})`);
      }
      const lt = dec(t.transaction_id.lt, 'getTransactions lt');
      if (tx.lt !== lt || tx.hash().toString('hex') !== hash) throw bad('getTransactions', `data does not match transaction ${lt}:${hash}`);
      return { lt, hash, utime: Number(dec(t.utime, 'getTransactions utime')), mcBlockSeqno: dec(t.mc_block_seqno, 'getTransactions mc_block_seqno'), tx };
    });
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
