import {
  ChainRpcError,
  type BalanceAnswer, type BalanceHistory, type BalancePoint, type BalanceQuery, type BalanceReader,
  type ChainEndpoint, type JsonRpcCall, type JsonRpcClient, type JsonRpcClientOptions, type JsonRpcOutcome,
} from '@wcs/core';
import { checksummed } from './address';
import { ADDRESS, Reader, chainIdCheck, evmRpcClient, hex } from './node-json';
import { decodeAggregate3, decodeBalanceWord, encodeAggregate3, encodeBalanceOf } from './multicall3';

/** The canonical Multicall3 (mds1/multicall), at the same address on every chain that has it. */
export const MULTICALL3_ADDRESS = '0xcA11bde05977b3631167028862bE2a173976CA11';

/**
 * How deep a node that is not an archive answers state: geth's (and most full nodes') in-memory
 * state window, 128 blocks. Asked further back, such a node answers "missing trie node".
 */
export const RECENT_STATE_DEPTH = 128n;

export interface EvmBalanceReaderOptions extends JsonRpcClientOptions {
  /** The chain's EIP-155 id: the first read checks eth_chainId (RPC_WRONG_CHAIN on a mismatch). */
  readonly expectedChainId?: number;
  /** JSON-RPC calls per HTTP request (default 100). */
  readonly batchSize?: number;
  /** balanceOf calls aggregated into one Multicall3 aggregate3 eth_call (default 500: about 5 M gas for plain ERC-20s). */
  readonly multicallSize?: number;
  /**
   * Largest HTTP request body the aggregate3 calls are grouped into (default 1 MiB: five calls of
   * 500 pairs; nodes limit request bodies, anvil refuses a batch of forty such calls).
   */
  readonly maxRequestBytes?: number;
  /** 'detect' (default): use Multicall3 where eth_getCode finds it at MULTICALL3_ADDRESS (asked once); 'off': one eth_call per (token, address). */
  readonly multicall?: 'detect' | 'off';
  /**
   * How every call of one balancesAt is pinned to its point: 'hash' (default) with an EIP-1898
   * block parameter `{ blockHash, requireCanonical: true }`; 'number' (nodes without EIP-1898) with
   * the block number, the block's hash checked before and after the reads.
   */
  readonly pin?: 'hash' | 'number';
}

/** A query checked and lower-cased. */
interface Checked {
  readonly address: string;
  readonly contract: string | null;
}

/**
 * Balances of many EVM addresses at one block (reconciliation): native coin with eth_getBalance,
 * tokens with ERC-20 balanceOf, one per (token, address), aggregated through Multicall3's
 * aggregate3 (allowFailure, so one answer names the pair that failed) where the chain has it,
 * one eth_call each otherwise; everything in JSON-RPC batches of `batchSize`.
 *
 * Every call of a balancesAt is pinned to the one block `at` names (EIP-1898 block hash, or
 * number plus a hash check): answers are never a mix of two blocks. When `at` is no longer on
 * the node's chain (a reorg under the read), balancesAt throws ChainRpcError RPC_INCONSISTENT:
 * the caller reads a new head and starts again.
 *
 * history: probed at the first head() (eth_getBalance at block 1): answered, 'archive';
 * refused, 'recent' with depth RECENT_STATE_DEPTH (128, a full node's state window). Until the
 * first head() resolves it reads 'recent' (the conservative answer).
 */
export class EvmBalanceReader implements BalanceReader {
  private readonly rpc: JsonRpcClient;
  private readonly read: Reader;
  private readonly checkChain: () => Promise<void>;
  private readonly batchSize: number;
  private readonly multicallSize: number;
  private readonly maxRequestBytes: number;
  private readonly pin: 'hash' | 'number';
  private multicall: Promise<boolean> | null;
  private probed: BalanceHistory | null = null;

  constructor(endpoint: ChainEndpoint, options: EvmBalanceReaderOptions = {}) {
    this.rpc = evmRpcClient(endpoint, options);
    this.read = new Reader(this.rpc);
    this.checkChain = chainIdCheck(this.rpc, this.read, options.expectedChainId ?? null);
    this.batchSize = positive(options.batchSize ?? 100, 'batchSize');
    this.multicallSize = positive(options.multicallSize ?? 500, 'multicallSize');
    this.maxRequestBytes = positive(options.maxRequestBytes ?? 1 << 20, 'maxRequestBytes');
    this.pin = options.pin ?? 'hash';
    if (this.pin !== 'hash' && this.pin !== 'number') throw new TypeError(`pin must be 'hash' or 'number', got ${String(this.pin)}`);
    const mode = options.multicall ?? 'detect';
    if (mode !== 'detect' && mode !== 'off') throw new TypeError(`multicall must be 'detect' or 'off', got ${String(mode)}`);
    this.multicall = mode === 'off' ? Promise.resolve(false) : null;
  }

  get history(): BalanceHistory {
    return this.probed ?? { kind: 'recent', depth: RECENT_STATE_DEPTH };
  }

  /** The node's latest block; the first call also probes how far back the node answers (history). */
  async head(): Promise<BalancePoint> {
    // the latest block and (first time) the history probe are asked while the node's chain is
    // checked: one round trip instead of three; no answer is used before the check passed
    const latest = this.rpc.call('eth_getBlockByNumber', ['latest', false]);
    const probe = this.probed === null ? this.probeHistory() : null;
    latest.catch(() => undefined);
    probe?.catch(() => undefined);
    await this.checkChain();
    const ref = this.read.blockRef(await latest, 'latest block');
    if (probe) this.probed = await probe;
    return { height: ref.height, blockHash: ref.hash };
  }

  /** Whether Multicall3 is deployed on this chain (eth_getCode at 'latest', asked once; a failed ask is asked again). */
  usesMulticall(): Promise<boolean> {
    if (!this.multicall) {
      const asked = (async () => {
        const code = await this.rpc.call('eth_getCode', [MULTICALL3_ADDRESS, 'latest']);
        if (typeof code !== 'string' || !/^0x(?:[0-9a-fA-F]{2})*$/.test(code)) throw this.read.bad('eth_getCode is not hex bytes');
        return code.length > 2;
      })();
      asked.catch(() => { if (this.multicall === asked) this.multicall = null; });
      this.multicall = asked;
    }
    return this.multicall;
  }

  async balancesAt(queries: readonly BalanceQuery[], at: BalancePoint): Promise<{ readonly at: BalancePoint; readonly answers: readonly BalanceAnswer[] }> {
    const checked = checkQueries(queries);
    checkPoint(at);
    if (checked.length === 0) return { at, answers: [] };
    await this.checkChain();
    const byHash = this.pin === 'hash' && at.blockHash !== null;
    const tag: unknown = byHash ? { blockHash: at.blockHash, requireCanonical: true } : hex(at.height);
    if (!byHash) await this.expectHash(at);

    // One read per distinct (contract, address).
    const natives = [...new Set(checked.filter((q) => q.contract === null).map((q) => q.address))];
    const pairs = uniquePairs(checked.filter((q) => q.contract !== null) as Array<{ address: string; contract: string }>);
    const found = new Map<string, bigint>();

    const small: JsonRpcCall[] = natives.map((a) => ({ method: 'eth_getBalance', params: [a, tag] }));
    const multicall = pairs.length > 0 && (await this.usesMulticall());
    const chunks = multicall ? chunk(pairs, this.multicallSize) : [];
    const big: JsonRpcCall[] = chunks.map((c) => ({ method: 'eth_call', params: [{ to: MULTICALL3_ADDRESS, data: encodeAggregate3(c) }, tag] }));
    if (!multicall) for (const p of pairs) small.push({ method: 'eth_call', params: [{ to: p.contract, data: encodeBalanceOf(p.address) }, tag] });

    // aggregate3 calls are large (192 bytes of call data a pair): few to an HTTP request, so a request stays under maxRequestBytes
    const perRequest = Math.max(1, Math.floor(this.maxRequestBytes / (this.multicallSize * 384 + 256)));
    const [smallOut, bigOut] = await Promise.all([
      small.length > 0 ? this.rpc.batch(small, { maxBatch: this.batchSize }) : Promise.resolve([]),
      big.length > 0 ? this.rpc.batch(big, { maxBatch: perRequest }) : Promise.resolve([]),
    ]);
    const calls = [...small, ...big];
    const outcomes = [...smallOut, ...bigOut];
    await this.failOn(outcomes, calls, at);
    natives.forEach((a, i) => found.set(key(null, a), this.read.quantityResult(result(outcomes[i]!), `eth_getBalance(${a})`)));
    let rest = natives.length;
    const perPair: Array<{ address: string; contract: string }> = [];
    if (multicall) {
      for (const c of chunks) {
        const data = result(outcomes[rest++]!);
        if (data === '0x') {
          // No Multicall3 at this block (read below its deployment): these pairs one by one.
          perPair.push(...c);
          continue;
        }
        const items = decodeAggregate3(data, c.length, (why) => this.read.bad(`Multicall3 aggregate3: ${why}`));
        c.forEach((p, i) => {
          const item = items[i]!;
          if (!item.success) throw this.tokenFailure(p, at, 'reverted');
          found.set(key(p.contract, p.address), this.word(item.returnData, p, at));
        });
      }
    } else {
      pairs.forEach((p) => found.set(key(p.contract, p.address), this.word(result(outcomes[rest++]!), p, at)));
    }
    if (perPair.length > 0) {
      const single = perPair.map((p): JsonRpcCall => ({ method: 'eth_call', params: [{ to: p.contract, data: encodeBalanceOf(p.address) }, tag] }));
      const answered = await this.rpc.batch(single, { maxBatch: this.batchSize });
      await this.failOn(answered, single, at);
      perPair.forEach((p, i) => found.set(key(p.contract, p.address), this.word(result(answered[i]!), p, at)));
    }
    if (!byHash) await this.expectHash(at);
    return { at, answers: checked.map((q): BalanceAnswer => ({ kind: 'AMOUNT', amount: found.get(key(q.contract, q.address))! })) };
  }

  // ---- internals ----

  /** eth_getBalance at block 1: an archive node answers it, a full node past its state window refuses. */
  private async probeHistory(): Promise<BalanceHistory> {
    const [outcome] = await this.rpc.batch([{ method: 'eth_getBalance', params: [MULTICALL3_ADDRESS, '0x1'] }]);
    return outcome!.ok ? { kind: 'archive' } : { kind: 'recent', depth: RECENT_STATE_DEPTH };
  }

  /** Number pinning: the block at `at.height` must still be `at.blockHash` (RPC_INCONSISTENT otherwise). */
  private async expectHash(at: BalancePoint): Promise<void> {
    if (at.blockHash === null) return;
    const v = await this.rpc.call('eth_getBlockByNumber', [hex(at.height), false]);
    const now = v === null ? null : this.read.blockRef(v, `block ${at.height}`).hash;
    if (now !== at.blockHash.toLowerCase()) throw this.reorged(at, now);
  }

  /** Any item error: RPC_INCONSISTENT when `at` left the chain (a reorg under the read), else that error. */
  private async failOn(outcomes: ReadonlyArray<JsonRpcOutcome>, calls: readonly JsonRpcCall[], at: BalancePoint): Promise<void> {
    const failed = outcomes.findIndex((o) => !o.ok);
    if (failed < 0) return;
    if (at.blockHash !== null) await this.expectHash(at);
    const o = outcomes[failed] as Extract<JsonRpcOutcome, { ok: false }>;
    const what = calls[failed]!.method === 'eth_getBalance' ? `eth_getBalance(${String((calls[failed]!.params as unknown[])[0])})` : 'eth_call';
    throw new ChainRpcError('RPC_ERROR', `${this.rpc.endpointName}: ${what} at block ${at.height}: ${o.rpc.message}`, {
      method: calls[failed]!.method, rpcCode: o.rpc.code, nodeMessage: o.rpc.message, cause: o.error,
    });
  }

  private reorged(at: BalancePoint, now: string | null): ChainRpcError {
    return new ChainRpcError('RPC_INCONSISTENT', `${this.rpc.endpointName}: block ${at.height} is ${now ?? 'gone'}, no longer ${at.blockHash} (reorganised during the read): read a new head`);
  }

  private word(data: unknown, p: { address: string; contract: string }, at: BalancePoint): bigint {
    const v = decodeBalanceWord(data);
    if (v === null) throw this.tokenFailure(p, at, `answered ${typeof data === 'string' ? `${(data.length - 2) / 2} bytes` : 'no bytes'}, not one uint256 (no ERC-20 contract there at that block?)`);
    return v;
  }

  private tokenFailure(p: { address: string; contract: string }, at: BalancePoint, why: string): ChainRpcError {
    return new ChainRpcError('RPC_BAD_RESPONSE', `${this.rpc.endpointName}: balanceOf(${p.address}) of token ${p.contract} at block ${at.height} ${why}`);
  }
}

const result = (o: JsonRpcOutcome): unknown => (o as { result: unknown }).result;
const key = (contract: string | null, address: string) => `${contract ?? ''}/${address}`;

function uniquePairs(queries: ReadonlyArray<{ address: string; contract: string }>): Array<{ address: string; contract: string }> {
  const seen = new Map<string, { address: string; contract: string }>();
  for (const q of queries) if (!seen.has(key(q.contract, q.address))) seen.set(key(q.contract, q.address), q);
  return [...seen.values()];
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function positive(n: number, what: string): number {
  if (!Number.isSafeInteger(n) || n < 1) throw new TypeError(`${what} must be a positive integer, got ${String(n)}`);
  return n;
}

/** An EVM address (0x + 40 hex, one case or EIP-55), lower-cased; TypeError otherwise. */
export function evmAddressKey(a: unknown, what: string): string {
  if (typeof a !== 'string' || !ADDRESS.test(a)) throw new TypeError(`balancesAt: ${what} is not an EVM address (0x + 40 hex digits): ${String(a).slice(0, 100)}`);
  const hex40 = a.slice(2);
  if (hex40 !== hex40.toLowerCase() && hex40 !== hex40.toUpperCase() && checksummed(hex40) !== a) throw new TypeError(`balancesAt: ${what} fails its EIP-55 checksum: ${a}`);
  return a.toLowerCase();
}

/** Every query checked before any node call (TypeError for a malformed one). */
function checkQueries(queries: readonly BalanceQuery[]): Checked[] {
  if (!Array.isArray(queries)) throw new TypeError('balancesAt: queries must be an array');
  return queries.map((q, i) => {
    if (!q || typeof q !== 'object') throw new TypeError(`balancesAt: query ${i} is not an object`);
    return { address: evmAddressKey(q.address, `query ${i} address`), contract: q.contract === null ? null : evmAddressKey(q.contract, `query ${i} contract`) };
  });
}

function checkPoint(at: BalancePoint): void {
  if (!at || typeof at.height !== 'bigint' || at.height < 0n) throw new TypeError('balancesAt: at.height must be a non-negative bigint');
  if (at.blockHash !== null && (typeof at.blockHash !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(at.blockHash))) throw new TypeError('balancesAt: at.blockHash must be a 32-byte hex hash or null');
}
