import { getCreateAddress } from 'ethers';
import { ChainRpcError, LruCache, type AddressNature, type BlockRef, type BlockScanner, type ChainEndpoint, type JsonRpcCall, type JsonRpcClient, type JsonRpcClientOptions, type ObservedTransfer, type ScanRangeOptions, type TransactionLookup } from '@wcs/core';
import { checksummed } from './address';
import { ADDRESS, HASH, QUANTITY, Reader, chainIdCheck, evmRpcClient, hex, type Json } from './node-json';
import {
  TRACE_METHODS, blockWithdrawals, callTracerTransfers, parityTransfers, traceParams, withdrawalPosition, type InternalTransfer, type TraceMethod, type TraceMode,
} from './traces';

/** topic0 of ERC-20 (and ERC-721) Transfer(address indexed from, address indexed to, uint256 value): keccak256("Transfer(address,address,uint256)"). */
export const ERC20_TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

export interface EvmScannerOptions extends JsonRpcClientOptions {
  /**
   * The chain's EIP-155 id: when set, the first read checks eth_chainId and refuses a node of
   * another chain (RPC_WRONG_CHAIN) rather than scanning it.
   */
  readonly expectedChainId?: number;
  /** Attempts of one scanRange / lookupTransaction when the node's answers contradict each other (default 3). */
  readonly consistencyAttempts?: number;
  /**
   * Internal transfers (native coin sent by contracts) from call traces: 'auto' (the default)
   * uses the trace API the node serves, asked once (traceMode); 'off' never asks for traces.
   * Validator withdrawals are read either way (they are in the blocks already fetched).
   */
  readonly traces?: 'auto' | 'off';
}

/** A 32-byte topic holding an address: 12 zero bytes, then the 20 address bytes. */
const ADDRESS_TOPIC = /^0x0{24}([0-9a-fA-F]{40})$/;
const WORD = /^0x[0-9a-fA-F]{64}$/;
/** eth_getCode's answer: 0x and whole bytes. */
const CODE = /^0x(?:[0-9a-fA-F]{2})*$/;
/** An EIP-7702 delegation designator: 0xef0100 || 20-byte address. The account stays key-controlled. */
const DELEGATION = /^0xef0100[0-9a-fA-F]{40}$/i;

/** Address natures remembered per scanner (a chain's counterparties repeat: hot wallets, exchanges, tokens). */
const NATURE_CACHE_SIZE = 100_000;
/**
 * How long an EOA answer is trusted, ms. Code can appear at an address without code (a CREATE2
 * deployment to a counterfactual address, e.g. a smart wallet used before it is deployed), never
 * the other way round since Cancun (SELFDESTRUCT only removes code created in the same
 * transaction), so CONTRACT answers are kept until evicted and EOA answers only this long.
 */
export const EOA_NATURE_TTL_MS = 10 * 60_000;

const NO_ADDRESSES: ReadonlySet<string> = new Set();
/** Sorting rank of a block's withdrawals: after every transaction (EIP-4895 processes them after the transactions). */
const WITHDRAWALS_TX_INDEX = 2n ** 53n;

interface NativeCandidate {
  readonly txHash: string;
  readonly txIndex: bigint;
  readonly from: string | null;
  /** Null for a contract creation (value sent by a sender into the contract it creates): read from the receipt. */
  readonly to: string | null;
  /** The transaction's nonce, for a contract creation only (its address when the receipt lacks it). */
  readonly nonce: bigint | null;
  readonly value: bigint;
  readonly block: BlockRef;
}

/** A set handed to scanRange and its lower-cased copy (computed again if the set's size changed). */
type LowerCased = { readonly source: ReadonlySet<string>; readonly size: number; readonly lower: ReadonlySet<string> };

type Sortable = { readonly transfer: ObservedTransfer; readonly txIndex: bigint };

/**
 * Deposit scanning for an EVM chain over raw JSON-RPC (HTTP, global fetch), built for speed:
 * a range is one JSON-RPC batch (every block with its transactions and one eth_getLogs of ERC-20
 * Transfer logs for the whole range), filtered against the watched set locally, plus at most one
 * more batch: the receipts of the native transfers found (to tell reverted ones) and, when the
 * node serves traces, one trace per block that has transactions (empty blocks are not traced).
 * The number of watched addresses (and of senders, whose outgoing transfers are matched the same
 * way) costs nothing on the wire.
 *
 * Native coin sent by contracts (internal transfers) is read from the block's call traces
 * (debug_traceBlockByNumber with the callTracer, else parity-style trace_block; traces.ts for the
 * rules and positions), validator withdrawals from the block's `withdrawals` list.
 */
export class EvmBlockScanner implements BlockScanner {
  readonly kind = 'blocks' as const;
  private readonly rpc: JsonRpcClient;
  private readonly read: Reader;
  /** Checks eth_chainId once before the first read (RPC_WRONG_CHAIN). */
  private readonly checkChain: () => Promise<void>;
  private readonly consistencyAttempts: number;
  /** The last watched set handed in and its lower-cased copy (the engine passes the same set until it changes). */
  private watchedCache: LowerCased | null = null;
  /** The same for options.senders. */
  private sendersCache: LowerCased | null = null;
  /** Lower-case address → its nature and until when (Date.now() ms) it holds. */
  private readonly natures = new LruCache<string, { readonly nature: AddressNature; readonly until: number }>(NATURE_CACHE_SIZE);
  private readonly tracesOn: boolean;
  /** The trace API found by the first probe that got an answer (a failed probe is not kept). */
  private detected: Promise<TraceMode> | null = null;

  constructor(endpoint: ChainEndpoint, options: EvmScannerOptions = {}) {
    if (options.traces !== undefined && options.traces !== 'auto' && options.traces !== 'off') throw new TypeError(`EvmScannerOptions.traces must be 'auto' or 'off', got ${JSON.stringify(options.traces)}`);
    this.rpc = evmRpcClient(endpoint, options);
    this.read = new Reader(this.rpc);
    this.checkChain = chainIdCheck(this.rpc, this.read, options.expectedChainId ?? null);
    this.consistencyAttempts = Math.max(1, options.consistencyAttempts ?? 3);
    this.tracesOn = options.traces !== 'off';
  }

  /**
   * How internal transfers are read: 'off' when the option turned traces off; else the first of
   * debug_traceBlockByNumber (callTracer) and trace_block that the node answers for its latest
   * block, asked once per scanner (a node that answers neither: 'unavailable', and internal
   * transfers are not seen). A node that cannot be reached throws (ChainRpcError) and is asked
   * again next time.
   */
  traceMode(): Promise<TraceMode> {
    if (!this.tracesOn) return Promise.resolve('off');
    if (!this.detected) {
      const probe = this.probeTraces();
      this.detected = probe;
      probe.catch(() => {
        if (this.detected === probe) this.detected = null;
      });
    }
    return this.detected;
  }

  async tipHeight(): Promise<bigint> {
    await this.checkChain();
    const v = await this.rpc.call('eth_blockNumber');
    if (typeof v !== 'string' || !QUANTITY.test(v)) throw this.read.bad('eth_blockNumber is not a hex quantity');
    return BigInt(v);
  }

  async blockAt(height: bigint): Promise<BlockRef | null> {
    checkHeight(height, 'height');
    await this.checkChain();
    const v = await this.rpc.call('eth_getBlockByNumber', [hex(height), false]);
    if (v === null) return null;
    const ref = this.read.blockRef(v, `block ${height}`);
    if (ref.height !== height) throw this.read.bad(`eth_getBlockByNumber(${height}) answered block ${ref.height}`);
    return ref;
  }

  async scanRange(from: bigint, to: bigint, watched: ReadonlySet<string>, options?: ScanRangeOptions): Promise<{ readonly blocks: readonly BlockRef[]; readonly transfers: readonly ObservedTransfer[] }> {
    checkHeight(from, 'from');
    checkHeight(to, 'to');
    if (to < from) throw new RangeError(`scanRange: to (${to}) is below from (${from})`);
    await this.checkChain();
    this.watchedCache = lowerCased(watched, this.watchedCache);
    const watchedLower = this.watchedCache.lower;
    const senders = options?.senders;
    let sendersLower = NO_ADDRESSES;
    if (senders !== undefined && senders.size > 0) {
      this.sendersCache = lowerCased(senders, this.sendersCache);
      sendersLower = this.sendersCache.lower;
    }
    return this.consistently(() => this.scanOnce(from, to, watchedLower, sendersLower));
  }

  /**
   * eth_getCode at 'latest' of the addresses not cached, in one JSON-RPC batch: no code is an
   * EOA, and so is an EIP-7702 delegation designator (a key-controlled account that delegated
   * its execution); any other code is a CONTRACT. CONTRACT answers are cached until evicted, EOA
   * answers for EOA_NATURE_TTL_MS (an address without code may be deployed to later: CREATE2).
   * Throws TypeError for anything but 0x + 40 hex digits (mixed case must be EIP-55).
   */
  async addressNatures(addresses: readonly string[]): Promise<readonly AddressNature[]> {
    if (!Array.isArray(addresses)) throw new TypeError('addressNatures: addresses must be an array');
    const keys = addresses.map((a) => {
      if (typeof a !== 'string' || !ADDRESS.test(a)) throw new TypeError(`addressNatures: not an EVM address (0x + 40 hex digits): ${String(a).slice(0, 100)}`);
      const hex40 = a.slice(2);
      const singleCase = hex40 === hex40.toLowerCase() || hex40 === hex40.toUpperCase();
      if (!singleCase && checksummed(hex40) !== a) throw new TypeError(`addressNatures: EIP-55 checksum mismatch: ${a}`);
      return a.toLowerCase();
    });
    const now = Date.now();
    const known = new Map<string, AddressNature>();
    const missing: string[] = [];
    for (const k of new Set(keys)) {
      const cached = this.natures.get(k);
      if (cached !== undefined && cached.until > now) known.set(k, cached.nature);
      else missing.push(k);
    }
    if (missing.length > 0) {
      await this.checkChain();
      const codes = await this.rpc.batchResults(missing.map((a) => ({ method: 'eth_getCode', params: [a, 'latest'] })));
      missing.forEach((a, i) => {
        const code = codes[i];
        if (typeof code !== 'string' || !CODE.test(code)) throw this.read.bad(`eth_getCode(${a}) is not hex bytes`);
        const nature: AddressNature = code === '0x' || DELEGATION.test(code) ? 'EOA' : 'CONTRACT';
        // From the time asked, not answered: the answer may be older than the response.
        this.natures.set(a, { nature, until: nature === 'CONTRACT' ? Infinity : now + EOA_NATURE_TTL_MS });
        known.set(a, nature);
      });
    }
    return keys.map((k) => known.get(k)!);
  }

  async lookupTransaction(txHash: string): Promise<TransactionLookup> {
    if (typeof txHash !== 'string' || !HASH.test(txHash)) throw new TypeError('lookupTransaction: txHash must be 0x + 64 hex digits');
    await this.checkChain();
    return this.consistently(async () => {
      const [tx, receipt] = await this.rpc.batchResults([
        { method: 'eth_getTransactionByHash', params: [txHash] },
        { method: 'eth_getTransactionReceipt', params: [txHash] },
      ]);
      if (receipt !== null && receipt !== undefined) {
        const r = this.read.object(receipt, `receipt of ${txHash}`);
        return {
          state: 'MINED' as const,
          blockHeight: this.read.quantity(r, 'blockNumber', 'receipt'),
          blockHash: this.read.hash(r, 'blockHash', 'receipt'),
          succeeded: this.read.status(r, `receipt of ${txHash}`),
        };
      }
      if (tx === null || tx === undefined) return this.blockAsTransaction(txHash);
      const t = this.read.object(tx, `transaction ${txHash}`);
      if (t.blockNumber === null || t.blockNumber === undefined) return { state: 'PENDING' as const };
      // In a block but without a receipt: mined a moment ago or reorged between the two reads.
      throw new ChainRpcError('RPC_INCONSISTENT', `${this.rpc.endpointName}: transaction ${txHash} is in a block but has no receipt`);
    });
  }

  // ---- internals ----

  /** Each trace API in turn on the latest block: the first answered with a list is the one used. */
  private async probeTraces(): Promise<TraceMode> {
    await this.checkChain();
    for (const method of TRACE_METHODS) {
      try {
        const [outcome] = await this.rpc.batch([{ method, params: traceParams(method, 'latest') }]);
        if (outcome!.ok && Array.isArray(outcome!.result)) return method;
      } catch (e) {
        // a node (or provider) that refuses the method over HTTP (4xx) does not serve it; no answer at all is thrown
        if (!(e instanceof ChainRpcError) || e.errorName !== 'RPC_ERROR') throw e;
      }
    }
    return 'unavailable';
  }

  /**
   * A hash that is no transaction the node knows may be a block's: the "transaction" of its
   * validator withdrawals (their txHash is the block hash). MINED in that block while the block is
   * on the best chain (eth_getBlockByHash, then the best chain's block at its height), UNKNOWN
   * otherwise: a withdrawal whose block a reorg removed is not mined again under the same hash.
   */
  private async blockAsTransaction(hash: string): Promise<TransactionLookup> {
    const raw = await this.rpc.call('eth_getBlockByHash', [hash, false]);
    if (raw === null || raw === undefined) return { state: 'UNKNOWN' };
    const block = this.read.blockRef(raw, `block ${hash}`);
    if (block.hash !== hash) throw this.read.bad(`eth_getBlockByHash(${hash}) answered block ${block.hash}`);
    const best = await this.rpc.call('eth_getBlockByNumber', [hex(block.height), false]);
    if (best === null || best === undefined) return { state: 'UNKNOWN' };
    if (this.read.blockRef(best, `block ${block.height}`).hash !== hash) return { state: 'UNKNOWN' };
    return { state: 'MINED', blockHeight: block.height, blockHash: hash, succeeded: true };
  }

  /** Runs a read again when the node's answers contradicted each other (a reorg during the read). */
  private async consistently<T>(read: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await read();
      } catch (e) {
        if (!(e instanceof ChainRpcError) || e.errorName !== 'RPC_INCONSISTENT' || attempt >= this.consistencyAttempts) throw e;
      }
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt)); // let the node settle on its new chain
    }
  }

  /**
   * `senders` empty: exactly the deposit scan (nothing more asked, nothing more matched).
   *
   * Two round trips at most: the blocks and the range's logs in one batch; then, in one more
   * batch, the traces of the blocks that have transactions and the receipts of the native
   * candidates (sent before the logs are matched, so the node works while this process does).
   * An empty block is never traced: no transaction, no frame; its trace could only be empty
   * (callTracer: one entry per transaction; trace_block: rewards only, which are not transfers).
   */
  private async scanOnce(from: bigint, to: bigint, watched: ReadonlySet<string>, senders: ReadonlySet<string>) {
    const wantTransfers = watched.size > 0 || senders.size > 0;
    const mode = wantTransfers ? await this.traceMode() : 'off';
    const tracing: TraceMethod | null = mode === 'debug_traceBlockByNumber' || mode === 'trace_block' ? mode : null;
    const calls: JsonRpcCall[] = [];
    for (let h = from; h <= to; h++) calls.push({ method: 'eth_getBlockByNumber', params: [hex(h), wantTransfers] });
    if (wantTransfers) calls.push({ method: 'eth_getLogs', params: [{ fromBlock: hex(from), toBlock: hex(to), topics: [ERC20_TRANSFER_TOPIC] }] });
    const outcomes = await this.rpc.batch(calls);

    const count = Number(to - from + 1n);
    const blocks: BlockRef[] = [];
    const natives: NativeCandidate[] = [];
    const found: Sortable[] = [];
    /** The blocks to trace (those with transactions) and their transactions' hashes. */
    const toTrace: Array<{ readonly block: BlockRef; readonly txHashes: readonly string[] }> = [];
    for (let i = 0; i < count; i++) {
      const height = from + BigInt(i);
      const raw = this.rpc.unwrap(outcomes[i]!, 'eth_getBlockByNumber');
      if (raw === null || raw === undefined) {
        throw new ChainRpcError('RPC_INCONSISTENT', `${this.rpc.endpointName}: block ${height} not found (above the node's tip, or the chain shortened during the read)`);
      }
      const ref = this.read.blockRef(raw, `block ${height}`);
      if (ref.height !== height) throw this.read.bad(`eth_getBlockByNumber(${height}) answered block ${ref.height}`);
      blocks.push(ref);
      if (!wantTransfers) continue;
      const txHashes = this.nativeCandidates(raw as Json, ref, watched, senders, natives, tracing !== null);
      this.withdrawals(raw as Json, ref, watched, found);
      if (tracing && txHashes.length > 0) toTrace.push({ block: ref, txHashes });
    }
    if (!wantTransfers) return { blocks, transfers: [] };

    // The second batch leaves before the logs are matched; its failure is awaited below.
    const receiptHashes = [...new Set(natives.map((n) => n.txHash))];
    const second: JsonRpcCall[] = [
      ...toTrace.map((t) => ({ method: tracing!, params: traceParams(tracing!, hex(t.block.height)) })),
      ...receiptHashes.map((h) => ({ method: 'eth_getTransactionReceipt', params: [h] })),
    ];
    const secondAnswers = second.length > 0 ? this.rpc.batch(second) : Promise.resolve([]);
    secondAnswers.catch(() => undefined);

    const logsOutcome = outcomes[count]!;
    const logs = logsOutcome.ok ? logsOutcome.result : await this.logsSplitting(from, to);
    this.erc20Transfers(logs, from, blocks, watched, senders, found);

    const answers = await secondAnswers;
    const keep = (fromAddress: string, toAddress: string) => watched.has(toAddress) || senders.has(fromAddress);
    toTrace.forEach(({ block, txHashes }, j) => {
      const what = `${tracing} (block ${block.height})`;
      const answer = this.rpc.unwrap(answers[j]!, what);
      const internal = tracing === 'debug_traceBlockByNumber'
        ? callTracerTransfers(this.read, answer, txHashes, what, keep)
        : parityTransfers(this.read, answer, block.hash, txHashes, what, keep);
      for (const x of internal) found.push(internalTransfer(x, block));
    });
    if (natives.length > 0) {
      const receipts = answers.slice(toTrace.length).map((o) => this.rpc.unwrap(o));
      this.nativeTransfers(natives, receiptHashes, receipts, found);
    }
    found.sort((a, b) => cmp(a.transfer.blockHeight, b.transfer.blockHeight) || cmp(a.txIndex, b.txIndex) || rank(a.transfer.position) - rank(b.transfer.position));
    return { blocks, transfers: found.map((f) => f.transfer) };
  }

  /** A block's validator withdrawals to watched addresses: txHash the block hash, position -1_000_000 - i (traces.ts). */
  private withdrawals(block: Json, ref: BlockRef, watched: ReadonlySet<string>, out: Sortable[]): void {
    for (const w of blockWithdrawals(this.read, block, `block ${ref.height}`, (a) => watched.has(a))) {
      out.push({
        txIndex: WITHDRAWALS_TX_INDEX + BigInt(w.index),
        transfer: {
          txHash: ref.hash,
          position: withdrawalPosition(w.index),
          fromAddress: null,
          toAddress: checksummed(w.address.slice(2)),
          memo: null,
          contract: null,
          amount: w.amount,
          blockHeight: ref.height,
          blockHash: ref.hash,
          succeeded: true,
        },
      });
    }
  }

  /**
   * eth_getLogs over [from, to] when the one-shot query was refused (providers cap results or
   * ranges): halves the range until each part is answered; a single block refused is an error.
   */
  private async logsSplitting(from: bigint, to: bigint): Promise<unknown[]> {
    const query = (a: bigint, b: bigint): JsonRpcCall => ({ method: 'eth_getLogs', params: [{ fromBlock: hex(a), toBlock: hex(b), topics: [ERC20_TRANSFER_TOPIC] }] });
    if (from === to) return this.logList(await this.rpc.call('eth_getLogs', query(from, to).params));
    const mid = from + (to - from) / 2n;
    const ranges: Array<[bigint, bigint]> = [[from, mid], [mid + 1n, to]];
    const all: unknown[] = [];
    while (ranges.length > 0) {
      const [a, b] = ranges.shift()!;
      const [outcome] = await this.rpc.batch([query(a, b)]);
      if (outcome!.ok) {
        all.push(...this.logList(outcome!.result));
      } else if (a === b) {
        this.rpc.unwrap(outcome!, `eth_getLogs (block ${a})`);
      } else {
        const m = a + (b - a) / 2n;
        ranges.unshift([a, m], [m + 1n, b]);
      }
    }
    return all;
  }

  private logList(v: unknown): unknown[] {
    if (!Array.isArray(v)) throw this.read.bad('eth_getLogs did not answer a list');
    return v;
  }

  /**
   * Transactions with value into a watched address or out of a sender (once when both). A
   * sender's contract creation with value counts: its destination is the created contract.
   * With `allHashes`, returns the hashes of the block's transactions in order (what its trace
   * must match); else an empty list.
   */
  private nativeCandidates(block: Json, ref: BlockRef, watched: ReadonlySet<string>, senders: ReadonlySet<string>, out: NativeCandidate[], allHashes: boolean): string[] {
    const txs = block.transactions;
    if (!Array.isArray(txs)) throw this.read.bad(`block ${ref.height} has no transaction list`);
    const withSenders = senders.size > 0;
    const hashes: string[] = [];
    for (const raw of txs) {
      const tx = this.read.object(raw, `a transaction of block ${ref.height}`);
      if (allHashes) hashes.push(this.read.hash(tx, 'hash', 'transaction'));
      const to = this.read.address(tx, 'to', 'transaction');
      const incoming = to !== null && watched.has(to);
      // `from` is only read when someone asked for outgoing transfers: the deposit scan stays as it was.
      const sender = incoming || !withSenders ? null : this.read.address(tx, 'from', 'transaction');
      if (!incoming && (sender === null || !senders.has(sender))) continue;
      const value = this.read.quantity(tx, 'value', 'transaction');
      if (value <= 0n) continue;
      out.push({
        txHash: allHashes ? hashes[hashes.length - 1]! : this.read.hash(tx, 'hash', 'transaction'),
        txIndex: this.read.quantity(tx, 'transactionIndex', 'transaction'),
        from: sender ?? this.read.address(tx, 'from', 'transaction'),
        to,
        nonce: to === null ? this.read.quantity(tx, 'nonce', 'transaction') : null,
        value,
        block: ref,
      });
    }
    return hashes;
  }

  /**
   * The matching native transfers, incoming and outgoing, from their receipts (`receipts[i]` the
   * receipt of `hashes[i]`): status, that they sit in the block scanned, and the address a
   * contract creation made.
   */
  private nativeTransfers(natives: readonly NativeCandidate[], hashes: readonly string[], receipts: readonly unknown[], out: Sortable[]): void {
    const blockOf = new Map(natives.map((n) => [n.txHash, n.block.hash]));
    const status = new Map<string, boolean>();
    const creations = new Set(natives.filter((n) => n.to === null).map((n) => n.txHash));
    const created = new Map<string, string>();
    hashes.forEach((h, i) => {
      const raw = receipts[i];
      if (raw === null || raw === undefined) throw new ChainRpcError('RPC_INCONSISTENT', `${this.rpc.endpointName}: no receipt for transaction ${h} of a scanned block`);
      const r = this.read.object(raw, `receipt of ${h}`);
      const blockHash = this.read.hash(r, 'blockHash', 'receipt');
      const expected = blockOf.get(h)!;
      if (blockHash !== expected) throw new ChainRpcError('RPC_INCONSISTENT', `${this.rpc.endpointName}: the receipt of ${h} is in block ${blockHash}, not ${expected} (reorg during the scan)`);
      status.set(h, this.read.status(r, `receipt of ${h}`));
      if (creations.has(h)) {
        const contract = this.read.address(r, 'contractAddress', 'receipt');
        if (contract !== null) created.set(h, contract);
      }
    });
    for (const n of natives) {
      const to = n.to ?? created.get(n.txHash) ?? createdAddress(n);
      out.push({
        txIndex: n.txIndex,
        transfer: {
          txHash: n.txHash,
          position: -1,
          fromAddress: n.from === null ? null : checksummed(n.from.slice(2)),
          toAddress: checksummed(to.slice(2)),
          memo: null,
          contract: null,
          amount: n.value,
          blockHeight: n.block.height,
          blockHash: n.block.hash,
          succeeded: status.get(n.txHash)!,
        },
      });
    }
  }

  /**
   * ERC-20 Transfer logs to watched addresses or from senders (once when both). Only well-formed
   * ERC-20 logs count: 3 topics (ERC-721's Transfer has 4), address-shaped topics, a 32-byte
   * amount. Logs only exist for transactions that succeeded, so these are all succeeded.
   */
  private erc20Transfers(rawLogs: unknown, from: bigint, blocks: readonly BlockRef[], watched: ReadonlySet<string>, senders: ReadonlySet<string>, out: Sortable[]): void {
    const withSenders = senders.size > 0;
    if (!Array.isArray(rawLogs)) throw this.read.bad('eth_getLogs did not answer a list');
    for (const raw of rawLogs) {
      const log = this.read.object(raw, 'a log');
      if (log.removed === true) continue;
      const topics = log.topics;
      if (!Array.isArray(topics) || topics.length !== 3) continue;
      const [t0, t1, t2] = topics as unknown[];
      if (typeof t0 !== 'string' || t0.toLowerCase() !== ERC20_TRANSFER_TOPIC) continue;
      const toMatch = typeof t2 === 'string' ? ADDRESS_TOPIC.exec(t2) : null;
      if (!toMatch) continue;
      const to = `0x${toMatch[1]!.toLowerCase()}`;
      const incoming = watched.has(to);
      if (!incoming && !withSenders) continue;
      const fromMatch = typeof t1 === 'string' ? ADDRESS_TOPIC.exec(t1) : null;
      if (!fromMatch || (!incoming && !senders.has(`0x${fromMatch[1]!.toLowerCase()}`))) continue;
      const data = log.data;
      if (typeof data !== 'string' || !WORD.test(data)) continue;
      const contract = this.read.address(log, 'address', 'log');
      if (contract === null) continue;
      const height = this.read.quantity(log, 'blockNumber', 'log');
      const block = blocks[Number(height - from)];
      if (height < from || !block) throw new ChainRpcError('RPC_INCONSISTENT', `${this.rpc.endpointName}: eth_getLogs answered a log of block ${height}, outside the range asked`);
      const blockHash = this.read.hash(log, 'blockHash', 'log');
      if (blockHash !== block.hash) throw new ChainRpcError('RPC_INCONSISTENT', `${this.rpc.endpointName}: a log of block ${height} is in block ${blockHash}, not ${block.hash} (reorg during the scan)`);
      out.push({
        txIndex: this.read.quantity(log, 'transactionIndex', 'log'),
        transfer: {
          txHash: this.read.hash(log, 'transactionHash', 'log'),
          position: Number(this.read.quantity(log, 'logIndex', 'log')),
          fromAddress: checksummed(fromMatch[1]!),
          toAddress: checksummed(to.slice(2)),
          memo: null,
          contract: checksummed(contract.slice(2)),
          amount: BigInt(data),
          blockHeight: height,
          blockHash,
          succeeded: true,
        },
      });
    }
  }
}

/** A set lower-cased, reusing `cached` while it is the same set object of the same size. */
function lowerCased(set: ReadonlySet<string>, cached: LowerCased | null): LowerCased {
  if (cached && cached.source === set && cached.size === set.size) return cached;
  const lower = new Set<string>();
  for (const a of set) lower.add(a.toLowerCase());
  return { source: set, size: set.size, lower };
}

/**
 * The address a contract creation made, from its sender and nonce (CREATE): for nodes whose
 * receipt of a failed creation carries no contractAddress (geth and anvil fill it in either way).
 */
function createdAddress(n: NativeCandidate): string {
  return getCreateAddress({ from: n.from!, nonce: n.nonce! }).toLowerCase();
}

function checkHeight(h: bigint, name: string): void {
  if (typeof h !== 'bigint' || h < 0n) throw new RangeError(`${name} must be a non-negative bigint`);
}

/** An internal transfer (traces.ts) as the scanner reports it: succeeded (reverted frames are never reported), txHash the outer transaction's. */
function internalTransfer(x: InternalTransfer, block: BlockRef): Sortable {
  return {
    txIndex: BigInt(x.txIndex),
    transfer: {
      txHash: x.txHash,
      position: x.position,
      fromAddress: checksummed(x.from.slice(2)),
      toAddress: checksummed(x.to.slice(2)),
      memo: null,
      contract: null,
      amount: x.value,
      blockHeight: block.height,
      blockHash: block.hash,
      succeeded: true,
    },
  };
}

/** Order of transfers within a transaction: its own value (-1), its internal transfers (-2 - k), its logs (>= 0); withdrawals by index. */
function rank(position: number): number {
  if (position === -1) return 0;
  return position >= 0 ? 2 ** 31 + position : -1 - position;
}

function cmp(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
