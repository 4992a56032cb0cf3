import {
  ChainRpcError, isChainRpcError, isHttpJsonError,
  type BalanceAnswer, type BalanceHistory, type BalancePoint, type BalanceQuery, type BalanceReader, type ChainEndpoint, type JsonRpcClient, type ListedOutput,
} from '@wcs/core';
import { BitcoinAddressCodec } from './address';
import type { BitcoinNetwork } from './network';
import { bitcoinRpc, type BitcoinRpcOptions } from './rpc';
import { addressScript } from './spend';
import { btcToSats } from './transfer-node';

export interface BitcoinBalanceReaderOptions extends BitcoinRpcOptions {
  /** Addresses per UTXO-set scan (Bitcoin Core scantxoutset descriptors) or per bcoin POST /coin/address (default 500). */
  readonly scanSize?: number;
  /** Listings tried again when a block arrives during one (default 3); then RPC_INCONSISTENT. */
  readonly consistencyAttempts?: number;
}

/** Which getblockchaininfo `chain` names each network accepts (Bitcoin Core and bcoin names). */
const CHAIN_NAMES: Readonly<Record<BitcoinNetwork['name'], readonly string[]>> = {
  mainnet: ['main'],
  testnet: ['test', 'testnet', 'testnet4', 'signet'],
  regtest: ['regtest'],
};

const TXID = /^[0-9a-f]{64}$/;
const HASH = /^[0-9a-f]{64}$/;

/** One output as listed, before confirmations are counted. */
interface Listed {
  readonly txHash: string;
  readonly vout: number;
  readonly amount: bigint;
  /** Height of its block; null while in the mempool (bcoin only). */
  readonly height: bigint | null;
}

/**
 * Balances of bitcoin addresses from the UTXO set (reconciliation), read at the node's head only
 * (history 'head': a node keeps the UTXO set of its tip, not of past blocks).
 *
 * The outputs of many addresses in one listing: Bitcoin Core `scantxoutset start [addr(..), ...]`
 * (one scan of the UTXO set for up to scanSize addresses; confirmed outputs, mempool ignored), or
 * bcoin `POST /coin/address` (needs --index-address; confirmed and mempool outputs, less those a
 * mempool transaction spends). The head (getblockchaininfo) is read before and after: a block
 * that arrived in between makes the listing start again (consistencyAttempts), so every output
 * of one answer is of the same tip.
 *
 * balancesAt sums the outputs in a block (mempool outputs are not in the balance); unspentOutputs
 * gives the outputs themselves with their confirmations (0: in the mempool, bcoin only),
 * immature coinbase outputs included (money all the same).
 */
export class BitcoinBalanceReader implements BalanceReader {
  readonly history: BalanceHistory = { kind: 'head' };
  private readonly rpc: JsonRpcClient;
  private readonly codec: BitcoinAddressCodec;
  private readonly scanSize: number;
  private readonly attempts: number;
  /** 'core' (scantxoutset) or 'bcoin' (no scantxoutset: its address index), learnt at the first listing. */
  private backend: 'core' | 'bcoin' | null = null;

  constructor(private readonly network: BitcoinNetwork, endpoint: ChainEndpoint, options: BitcoinBalanceReaderOptions = {}) {
    this.rpc = bitcoinRpc(endpoint, options);
    this.codec = new BitcoinAddressCodec(network);
    this.scanSize = options.scanSize ?? 500;
    if (!Number.isSafeInteger(this.scanSize) || this.scanSize < 1) throw new TypeError(`scanSize must be a positive integer, got ${String(this.scanSize)}`);
    this.attempts = Math.max(1, options.consistencyAttempts ?? 3);
  }

  /** The node's best block (getblockchaininfo: blocks, bestblockhash), on this adapter's network (RPC_WRONG_CHAIN otherwise). */
  async head(): Promise<BalancePoint> {
    const info = await this.rpc.call<{ chain?: unknown; blocks?: unknown; bestblockhash?: unknown }>('getblockchaininfo');
    const chain = info?.chain;
    if (typeof chain !== 'string' || !Number.isSafeInteger(info.blocks) || typeof info.bestblockhash !== 'string' || !HASH.test(info.bestblockhash)) {
      throw this.shapeError('getblockchaininfo', 'a chain name, blocks and bestblockhash');
    }
    if (!CHAIN_NAMES[this.network.name].includes(chain)) {
      throw new ChainRpcError('RPC_WRONG_CHAIN', `${this.rpc.endpointName}: getblockchaininfo: the node is on chain "${chain}", this chain is ${this.network.name}`, { method: 'getblockchaininfo' });
    }
    return { height: BigInt(info.blocks as number), blockHash: info.bestblockhash };
  }

  /** At the head (history 'head'): `at` is only checked; the answer names the block it was read at. */
  async balancesAt(queries: readonly BalanceQuery[], at: BalancePoint): Promise<{ readonly at: BalancePoint; readonly answers: readonly BalanceAnswer[] }> {
    const addresses = this.checkQueries(queries);
    checkPoint(at);
    if (addresses.length === 0) return { at, answers: [] };
    const listed = await this.consistent([...new Set(addresses)]);
    const answers = addresses.map((a): BalanceAnswer => {
      let amount = 0n;
      for (const o of listed.outputs.get(a)!) if (o.height !== null) amount += o.amount;
      return { kind: 'AMOUNT', amount };
    });
    return { at: listed.at, answers };
  }

  async unspentOutputs(addresses: readonly string[]): Promise<{ readonly at: BalancePoint; readonly outputs: ReadonlyArray<readonly ListedOutput[]> }> {
    if (!Array.isArray(addresses)) throw new TypeError('unspentOutputs: addresses must be an array');
    const canonical = addresses.map((a, i) => this.canonical(a, `address ${i}`));
    if (canonical.length === 0) return { at: await this.head(), outputs: [] };
    const listed = await this.consistent([...new Set(canonical)]);
    const tip = listed.at.height;
    return {
      at: listed.at,
      outputs: canonical.map((a) => listed.outputs.get(a)!.map((o): ListedOutput => ({
        txHash: o.txHash, vout: o.vout, amount: o.amount, confirmations: o.height === null ? 0 : Number(tip - o.height + 1n),
      }))),
    };
  }

  // ---- internals ----

  /** The outputs of every address, all of one tip: the head read before and after the listing must agree. */
  private async consistent(addresses: readonly string[]): Promise<{ at: BalancePoint; outputs: Map<string, Listed[]> }> {
    let last: [BalancePoint, BalancePoint] | null = null;
    for (let attempt = 1; attempt <= this.attempts; attempt++) {
      const before = await this.head();
      const outputs = await this.list(addresses, before);
      const after = await this.head();
      if (outputs !== null && after.blockHash === before.blockHash) return { at: before, outputs };
      last = [before, after];
    }
    throw new ChainRpcError('RPC_INCONSISTENT', `${this.rpc.endpointName}: the tip kept moving during the UTXO listing (${last![0].height} ${last![0].blockHash} → ${last![1].height} ${last![1].blockHash}, ${this.attempts} attempts)`);
  }

  /** The listing, in chunks of scanSize; null when a scan reports another tip than `tip` (ask again). */
  private async list(addresses: readonly string[], tip: BalancePoint): Promise<Map<string, Listed[]> | null> {
    const outputs = new Map<string, Listed[]>(addresses.map((a) => [a, []]));
    for (let i = 0; i < addresses.length; i += this.scanSize) {
      const chunk = addresses.slice(i, i + this.scanSize);
      const scripts = new Map(chunk.map((a) => [Buffer.from(addressScript(a, this.network)).toString('hex'), a]));
      if (this.backend !== 'bcoin') {
        const scanned = await this.scan(chunk, scripts, tip);
        if (scanned === 'bcoin') this.backend = 'bcoin';
        else {
          this.backend = 'core';
          if (scanned === null) return null;
          for (const [a, o] of scanned) outputs.get(a)!.push(o);
          continue;
        }
      }
      for (const [a, o] of await this.bcoinCoins(chunk, scripts)) outputs.get(a)!.push(o);
    }
    return outputs;
  }

  /** Bitcoin Core: one scantxoutset of the chunk's descriptors; 'bcoin' when the node has no scantxoutset; null when it scanned another tip. */
  private async scan(chunk: readonly string[], scripts: ReadonlyMap<string, string>, tip: BalancePoint): Promise<Array<[string, Listed]> | 'bcoin' | null> {
    let scan: { success?: unknown; unspents?: unknown; bestblock?: unknown } | null;
    try {
      scan = await this.rpc.call('scantxoutset', ['start', chunk.map((a) => `addr(${a})`)]);
    } catch (e) {
      if (this.backend === null && isChainRpcError(e) && e.rpcCode === -32601) return 'bcoin';
      throw e;
    }
    if (scan === null || typeof scan !== 'object' || scan.success !== true || !Array.isArray(scan.unspents)) throw this.shapeError('scantxoutset', 'a completed scan with unspents');
    if (typeof scan.bestblock === 'string' && scan.bestblock !== tip.blockHash) return null;
    return scan.unspents.map((u: Record<string, unknown>): [string, Listed] => {
      const amount = btcToSats(u?.['amount']);
      const { txid, vout, height, scriptPubKey } = u ?? {};
      const owner = typeof scriptPubKey === 'string' ? scripts.get(scriptPubKey) : undefined;
      if (amount === null || typeof txid !== 'string' || !TXID.test(txid) || !Number.isInteger(vout) || !Number.isSafeInteger(height) || owner === undefined) {
        throw this.shapeError('scantxoutset', 'unspents of the addresses asked, with txid, vout, amount, height and scriptPubKey');
      }
      return [owner, { txHash: txid, vout: vout as number, amount, height: BigInt(height as number) }];
    });
  }

  /** bcoin: POST /coin/address { addresses } (its address index); height -1 is a mempool output. */
  private async bcoinCoins(chunk: readonly string[], scripts: ReadonlyMap<string, string>): Promise<Array<[string, Listed]>> {
    let coins: unknown;
    try {
      coins = await this.rpc.http.request({ method: 'POST', path: '/coin/address', body: JSON.stringify({ addresses: chunk }) });
    } catch (e) {
      if (!isHttpJsonError(e)) throw e;
      const name = e.failure === 'UNAVAILABLE' ? 'RPC_UNAVAILABLE' : e.failure === 'REFUSED' ? 'RPC_ERROR' : 'RPC_BAD_RESPONSE';
      throw new ChainRpcError(name, `${this.rpc.endpointName}: POST /coin/address: ${this.rpc.redact(e.reason)}`, { method: 'POST /coin/address', responseStatus: e.responseStatus, attempts: e.attempts, cause: e });
    }
    if (!Array.isArray(coins)) throw this.shapeError('POST /coin/address', 'a list of coins');
    return coins.map((c: Record<string, unknown>): [string, Listed] => {
      const { hash, index, value, height, script } = c ?? {};
      const owner = typeof script === 'string' ? scripts.get(script) : undefined;
      if (typeof hash !== 'string' || !TXID.test(hash) || !Number.isInteger(index) || !Number.isSafeInteger(value) || (value as number) < 0 || !Number.isSafeInteger(height) || owner === undefined) {
        throw this.shapeError('POST /coin/address', 'coins of the addresses asked, with hash, index, value, height and script');
      }
      const h = height as number;
      return [owner, { txHash: hash, vout: index as number, amount: BigInt(value as number), height: h < 0 ? null : BigInt(h) }];
    });
  }

  private canonical(address: unknown, what: string): string {
    const v = this.codec.validate(address as string, null);
    if (!v.valid) throw new TypeError(`${what}: not a ${this.network.name} address: ${v.reason}`);
    return v.normalized;
  }

  private checkQueries(queries: readonly BalanceQuery[]): string[] {
    if (!Array.isArray(queries)) throw new TypeError('balancesAt: queries must be an array');
    return queries.map((q, i) => {
      if (!q || typeof q !== 'object') throw new TypeError(`balancesAt: query ${i} is not an object`);
      if (q.contract !== null) throw new TypeError(`balancesAt: query ${i}: bitcoin has no tokens, contract must be null`);
      return this.canonical(q.address, `balancesAt: query ${i} address`);
    });
  }

  private shapeError(method: string, expected: string): ChainRpcError {
    return new ChainRpcError('RPC_BAD_RESPONSE', `${this.rpc.endpointName}: ${method}: the answer is not ${expected}`, { method });
  }
}

function checkPoint(at: BalancePoint): void {
  if (!at || typeof at.height !== 'bigint' || at.height < 0n) throw new TypeError('balancesAt: at.height must be a non-negative bigint');
}
