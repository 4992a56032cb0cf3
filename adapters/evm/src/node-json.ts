import { ChainRpcError, JsonRpcClient, type ChainEndpoint, type JsonRpcClientOptions, type TransactionLog } from '@wcs/core';
import { checksummed } from './address';

/** The kit's JSON-RPC client with the EVM adapter's defaults (3 attempts, 150 ms first backoff, 30 s timeout). */
export function evmRpcClient(endpoint: ChainEndpoint, options: JsonRpcClientOptions = {}): JsonRpcClient {
  return new JsonRpcClient(endpoint, { ...options, backoffMs: options.backoffMs ?? 150 });
}

// ---- The node's JSON, checked as it is read (shared by the scanner and the transfer node) ----

export type Json = Record<string, unknown>;
export const HASH = /^0x[0-9a-fA-F]{64}$/;
export const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
export const QUANTITY = /^0x[0-9a-fA-F]{1,64}$/;
const LOG_DATA = /^0x(?:[0-9a-fA-F]{2})*$/;

/** A JSON-RPC quantity ("0x" + hex, no leading zeros but for 0x0). */
export const hex = (n: bigint) => `0x${n.toString(16)}`;

export class Reader {
  constructor(private readonly rpc: JsonRpcClient) {}

  bad(why: string): ChainRpcError {
    return new ChainRpcError('RPC_BAD_RESPONSE', `${this.rpc.endpointName}: ${why}`);
  }

  object(v: unknown, what: string): Json {
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw this.bad(`${what} is not an object`);
    return v as Json;
  }

  quantity(o: Json, key: string, what: string): bigint {
    const v = o[key];
    if (typeof v !== 'string' || !QUANTITY.test(v)) throw this.bad(`${what}.${key} is not a hex quantity`);
    return BigInt(v);
  }

  /** A bare quantity answer (eth_blockNumber, eth_gasPrice, ...). */
  quantityResult(v: unknown, what: string): bigint {
    if (typeof v !== 'string' || !QUANTITY.test(v)) throw this.bad(`${what} is not a hex quantity`);
    return BigInt(v);
  }

  hash(o: Json, key: string, what: string): string {
    const v = o[key];
    if (typeof v !== 'string' || !HASH.test(v)) throw this.bad(`${what}.${key} is not a 32-byte hash`);
    return v.toLowerCase();
  }

  /** An address field, lower-case, or null when absent / null (contract creation). */
  address(o: Json, key: string, what: string): string | null {
    const v = o[key];
    if (v === null || v === undefined) return null;
    if (typeof v !== 'string' || !ADDRESS.test(v)) throw this.bad(`${what}.${key} is not an address`);
    return v.toLowerCase();
  }

  blockRef(v: unknown, what: string): { height: bigint; hash: string; parentHash: string } {
    const b = this.object(v, what);
    return { height: this.quantity(b, 'number', what), hash: this.hash(b, 'hash', what), parentHash: this.hash(b, 'parentHash', what) };
  }

  /**
   * A receipt's logs, in order (undefined when the receipt has no `logs` field): each log's
   * emitting contract EIP-55 (the codec's canonical form, as the service stores addresses), its
   * topics (0 to 4) and data lower-case 0x-hex.
   */
  logs(receipt: Json, what: string): TransactionLog[] | undefined {
    const logs = receipt.logs;
    if (logs === undefined || logs === null) return undefined;
    if (!Array.isArray(logs)) throw this.bad(`${what}.logs is not an array`);
    return logs.map((l: unknown, i) => {
      const o = this.object(l, `${what}.logs[${i}]`);
      const address = this.address(o, 'address', `${what}.logs[${i}]`);
      if (address === null) throw this.bad(`${what}.logs[${i}] has no address`);
      const topics = o.topics;
      if (!Array.isArray(topics) || topics.length > 4 || !topics.every((t) => typeof t === 'string' && HASH.test(t))) throw this.bad(`${what}.logs[${i}].topics is not a list of at most 4 32-byte hashes`);
      if (typeof o.data !== 'string' || !LOG_DATA.test(o.data)) throw this.bad(`${what}.logs[${i}].data is not 0x-hex of whole bytes`);
      return { address: checksummed(address.slice(2)), topics: topics.map((t: string) => t.toLowerCase()), data: o.data.toLowerCase() };
    });
  }

  /** Receipt status: 0x1 succeeded, 0x0 reverted. Receipts without one (pre-Byzantium) cannot say, and are refused. */
  status(receipt: Json, what: string): boolean {
    const s = receipt.status;
    if (s === '0x1' || s === '0x01') return true;
    if (s === '0x0' || s === '0x00') return false;
    throw this.bad(`${what} has no status 0x0/0x1 (pre-Byzantium receipt?): success cannot be told`);
  }
}

/**
 * A check that the node serves the expected chain (eth_chainId = the chain's evmChainId), asked
 * once: only a success is remembered, a node that was down is asked again next time. Throws
 * RPC_WRONG_CHAIN on a mismatch. No expected id: no check.
 */
export function chainIdCheck(rpc: JsonRpcClient, read: Reader, expectedChainId: number | null): () => Promise<void> {
  let checked: Promise<void> | null = null;
  return () => {
    if (expectedChainId === null) return Promise.resolve();
    if (!checked) {
      checked = (async () => {
        const id = read.quantityResult(await rpc.call('eth_chainId'), 'eth_chainId');
        if (id !== BigInt(expectedChainId)) {
          throw new ChainRpcError('RPC_WRONG_CHAIN', `${rpc.endpointName} serves chain id ${id}, not the configured ${expectedChainId}`);
        }
      })();
      checked.catch(() => { checked = null; });
    }
    return checked;
  };
}
