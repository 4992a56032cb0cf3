import { address as btcAddress, Block, type Transaction } from 'bitcoinjs-lib';
import { ChainRpcError, type AddressNature, type BlockRef, type BlockScanner, type ChainEndpoint, type JsonRpcClient, type JsonRpcOutcome, type ObservedTransfer, type ScanRangeOptions, type TransactionLookup } from '@wcs/core';
import { BitcoinAddressCodec } from './address';
import { inputAddress, InputAddressIndex } from './input-address';
import type { BitcoinNetwork } from './network';
import { bitcoinRpc, type BitcoinRpcOptions } from './rpc';

const ZERO_HASH = '0'.repeat(64);
const HASH_RE = /^[0-9a-f]{64}$/;

/**
 * The address an output pays, in the canonical form AddressCodec.validate gives (lower-case
 * bech32 / bech32m, base58 as encoded), or null for scripts no address of ours can be:
 * P2WPKH and P2WSH (v0, 20 / 32 bytes), P2TR (v1, 32 bytes), P2PKH and P2SH of the network's
 * version bytes. Witness v2-16 and other v1 programs are null (the codec refuses them, so they
 * are never watched), as are P2PK, bare multisig, OP_RETURN and non-standard scripts.
 *
 * Same answers as bitcoinjs-lib's address.fromOutputScript for these templates (cross-checked in
 * the tests), without its exception per template tried per output, and for P2TR without an ECC
 * library (fromOutputScript cannot decode P2TR outputs without one, and with one it refuses
 * programs that are not valid x-only keys, which the chain accepts).
 */
export function outputAddress(script: Uint8Array, network: BitcoinNetwork): string | null {
  const n = script.length;
  const op = script[0];
  // Witness program: OP_0 / OP_1 then one direct push of the rest (BIP-141).
  if ((op === 0x00 || op === 0x51) && n >= 4 && script[1] === n - 2) {
    const program = script.subarray(2);
    if (op === 0x00 && (program.length === 20 || program.length === 32)) return btcAddress.toBech32(program, 0, network.hrp);
    if (op === 0x51 && program.length === 32) return btcAddress.toBech32(program, 1, network.hrp);
    return null;
  }
  // P2PKH: OP_DUP OP_HASH160 <20> OP_EQUALVERIFY OP_CHECKSIG
  if (n === 25 && op === 0x76 && script[1] === 0xa9 && script[2] === 0x14 && script[23] === 0x88 && script[24] === 0xac) {
    return btcAddress.toBase58Check(script.subarray(3, 23), network.p2pkhVersion);
  }
  // P2SH: OP_HASH160 <20> OP_EQUAL
  if (n === 23 && op === 0xa9 && script[1] === 0x14 && script[22] === 0x87) {
    return btcAddress.toBase58Check(script.subarray(2, 22), network.p2shVersion);
  }
  return null;
}

/** Display (RPC) order of a 32-byte hash in internal byte order. */
function reversedHex(bytes: Uint8Array): string {
  return Buffer.from(bytes).reverse().toString('hex');
}

export interface BitcoinScannerOptions extends BitcoinRpcOptions {
  /** Heights per getblockhash batch (default 100). */
  readonly hashBatch?: number;
  /**
   * Raw blocks per getblock batch at the start of a scan (default 4). Later batches are sized
   * from the blocks seen so far to carry about `blockBatchChars` of hex (a full mainnet block is
   * up to ~8 MB of hex, a regtest block a few hundred characters), at most `maxBlockBatch`.
   */
  readonly blockBatch?: number;
  /** Target hex characters per getblock batch answer (default 8 000 000). */
  readonly blockBatchChars?: number;
  /** Most blocks per getblock batch (default 100). */
  readonly maxBlockBatch?: number;
  /**
   * Report coinbase outputs paid to watched addresses (default false: a coinbase output cannot be
   * spent for 100 blocks, and when its block leaves the chain the coinbase is gone for good).
   */
  readonly includeCoinbase?: boolean;
}

/** A decoded block of the scan: its ref and transactions. */
interface DecodedBlock {
  readonly ref: BlockRef;
  readonly block: Block;
}

/**
 * Deposit scanning over a Bitcoin Core–style JSON-RPC (Bitcoin Core, bcoin): block hashes by
 * height (getblockhash, batched), raw blocks (getblock <hash> 0) decoded with bitcoinjs-lib,
 * outputs matched to the watched addresses. Amounts are the outputs' satoshi values as bigint,
 * read from the raw transactions (never through the RPC's BTC floats). Blocks carry no previous
 * outputs: an input's address is read from the input itself (input-address.ts), which tells
 * P2PKH, P2SH, P2WPKH and P2WSH spends, not taproot ones. That is the incoming transfers'
 * fromAddress (the first input that tells one) and how spends of `options.senders` are found.
 *
 * lookupTransaction needs the node's transaction index: bitcoind -txindex=1, bcoin --index-tx
 * (indexTX: true). Without it a mined transaction is not found (bitcoind says so and this throws
 * RPC_ERROR; bcoin cannot be told apart and answers UNKNOWN).
 */
export class BitcoinBlockScanner implements BlockScanner {
  readonly kind = 'blocks' as const;
  private readonly rpc: JsonRpcClient;
  private readonly hashBatch: number;
  private readonly blockBatch: number;
  private readonly blockBatchChars: number;
  private readonly maxBlockBatch: number;
  private readonly concurrency: number;
  private readonly includeCoinbase: boolean;
  private readonly codec: BitcoinAddressCodec;
  /** Senders sets seen, indexed by input hash (a set is immutable while the same object is handed in). */
  private readonly senderIndexes = new WeakMap<ReadonlySet<string>, InputAddressIndex>();

  constructor(private readonly network: BitcoinNetwork, endpoint: ChainEndpoint, options: BitcoinScannerOptions = {}) {
    this.rpc = bitcoinRpc(endpoint, options);
    this.hashBatch = Math.max(1, options.hashBatch ?? 100);
    this.blockBatch = Math.max(1, options.blockBatch ?? 4);
    this.blockBatchChars = Math.max(1, options.blockBatchChars ?? 8_000_000);
    this.maxBlockBatch = Math.max(1, options.maxBlockBatch ?? 100);
    this.concurrency = Math.max(1, Math.floor(options.concurrency ?? 4));
    this.includeCoinbase = options.includeCoinbase ?? false;
    this.codec = new BitcoinAddressCodec(network);
  }

  async tipHeight(): Promise<bigint> {
    const n = await this.rpc.call<number>('getblockcount');
    if (!Number.isSafeInteger(n) || n < 0) throw this.shapeError('getblockcount', 'a height');
    return BigInt(n);
  }

  async blockAt(height: bigint): Promise<BlockRef | null> {
    checkHeight(height, 'height');
    const hash = await this.hashAt(height);
    if (hash === null) return null;
    // The raw 80-byte header (verbose false): the parent link without a second JSON decoding of fields.
    const hex = await this.rpc.call<string>('getblockheader', [hash, false]);
    if (typeof hex !== 'string' || hex.length !== 160) throw this.shapeError('getblockheader', 'an 80-byte header in hex');
    const header = Block.fromBuffer(Buffer.from(hex, 'hex'));
    if (header.getId() !== hash) throw this.shapeError('getblockheader', `the header of block ${hash}`);
    return { height, hash, parentHash: reversedHex(header.prevHash!) };
  }

  async scanRange(from: bigint, to: bigint, watched: ReadonlySet<string>, options?: ScanRangeOptions): Promise<{ readonly blocks: readonly BlockRef[]; readonly transfers: readonly ObservedTransfer[] }> {
    checkHeight(from, 'from');
    checkHeight(to, 'to');
    if (to < from) return { blocks: [], transfers: [] };
    const senders = this.senderIndex(options?.senders);
    const blocks = await this.fetchBlocks(from, to);
    const transfers: ObservedTransfer[] = [];
    if (watched.size > 0 || senders !== null) {
      for (const { ref, block } of blocks) this.collect(ref, block, watched, senders, transfers);
    }
    return { blocks: blocks.map((b) => b.ref), transfers };
  }

  /**
   * P2SH and P2WSH addresses are CONTRACT (a script controls them); P2PKH, P2WPKH and P2TR are EOA.
   * A P2TR output key may commit to scripts too (a taproot tree), which its address cannot show:
   * such an address is EOA here. No I/O. Throws TypeError for an address that is not valid on
   * this network (AddressCodec.validate).
   */
  async addressNatures(addresses: readonly string[]): Promise<readonly AddressNature[]> {
    if (!Array.isArray(addresses)) throw new TypeError('addresses must be an array of addresses');
    return addresses.map((a) => addressNature(this.codec, this.network, a));
  }

  async lookupTransaction(txHash: string): Promise<TransactionLookup> {
    if (typeof txHash !== 'string' || !HASH_RE.test(txHash)) throw new TypeError('txHash must be 64 lower-case hex characters (a txid)');
    let tx: { blockhash?: string | null } | null;
    try {
      tx = await this.rpc.call<{ blockhash?: string | null }>('getrawtransaction', [txHash, true]);
    } catch (e) {
      if (!(e instanceof ChainRpcError) || e.rpcCode === null) throw e;
      if (/-txindex/.test(e.message)) {
        throw new ChainRpcError('RPC_ERROR', `${e.message} [the node needs a transaction index: bitcoind -txindex=1, bcoin --index-tx]`, { method: 'getrawtransaction', rpcCode: e.rpcCode, nodeMessage: e.nodeMessage, cause: e });
      }
      // bitcoind: -5 "No such mempool or blockchain transaction"; bcoin: -1 "Transaction not found."
      if (e.rpcCode === -5 || /not found/i.test(e.message)) return { state: 'UNKNOWN' };
      throw e;
    }
    if (tx === null || typeof tx !== 'object') throw this.shapeError('getrawtransaction', 'a transaction object');
    // In the mempool: bitcoind leaves blockhash out, bcoin sets it to null.
    if (tx.blockhash === undefined || tx.blockhash === null) return { state: 'PENDING' };
    const blockHash = tx.blockhash;
    if (typeof blockHash !== 'string' || !HASH_RE.test(blockHash)) throw this.shapeError('getrawtransaction', 'a block hash');
    let header: { height?: unknown; confirmations?: unknown };
    try {
      header = await this.rpc.call('getblockheader', [blockHash, true]);
    } catch (e) {
      if (e instanceof ChainRpcError && e.rpcCode !== null) return { state: 'UNKNOWN' };
      throw e;
    }
    const height = header?.height;
    if (typeof height !== 'number' || !Number.isSafeInteger(height) || height < 0) throw this.shapeError('getblockheader', 'a height');
    // A block off the best chain (bitcoind's txindex keeps such entries; confirmations -1): the
    // transaction is in no block of the chain and not in the mempool.
    if (typeof header.confirmations === 'number' && header.confirmations < 1) return { state: 'UNKNOWN' };
    // Belt and braces for nodes that do not report -1: the best chain must have this block at that height.
    const main = await this.hashAt(BigInt(height));
    if (main !== blockHash) return { state: 'UNKNOWN' };
    return { state: 'MINED', blockHeight: BigInt(height), blockHash, succeeded: true };
  }

  /** The hash at a height on the best chain, or null above the tip. */
  private async hashAt(height: bigint): Promise<string | null> {
    const [outcome] = await this.rpc.batch<string>([{ method: 'getblockhash', params: [Number(height)] }]);
    return this.hashOutcome(outcome!);
  }

  private hashOutcome(outcome: JsonRpcOutcome<string>): string | null {
    if (!outcome.ok) {
      // -8 "Block height out of range" (bitcoind and bcoin).
      if (outcome.error.rpcCode === -8) return null;
      throw outcome.error;
    }
    if (typeof outcome.result !== 'string' || !HASH_RE.test(outcome.result)) throw this.shapeError('getblockhash', 'a block hash');
    return outcome.result;
  }

  /**
   * Blocks from `from` upwards, contiguous, ending at `to`, or earlier when the node's best chain
   * is lower (it got shorter since the caller read the tip) or a block left the node mid-scan:
   * heights are never skipped.
   */
  private async fetchBlocks(from: bigint, to: bigint): Promise<DecodedBlock[]> {
    const heights: bigint[] = [];
    for (let h = from; h <= to; h++) heights.push(h);
    const hashOutcomes = await this.rpc.batch<string>(heights.map((h) => ({ method: 'getblockhash', params: [Number(h)] })), { maxBatch: this.hashBatch });
    const hashes: string[] = [];
    for (const o of hashOutcomes) {
      const hash = this.hashOutcome(o);
      if (hash === null) break;
      hashes.push(hash);
    }
    const raw = await this.rawBlocks(hashes);
    // A block gone between getblockhash and getblock (bcoin deletes the blocks of an invalidateblock
    // reset) ends the range there: what comes back is a consistent prefix the engine can ask past.
    const gone = raw.findIndex((o) => !o.ok && (o.error.rpcCode === -5 || /not found/i.test(o.error.message)));
    if (gone >= 0) raw.length = gone;
    return raw.map((o, i) => {
      const hash = hashes[i]!;
      if (!o.ok) throw o.error;
      if (typeof o.result !== 'string') throw this.shapeError('getblock', 'raw block hex (verbosity 0)');
      let block: Block;
      try {
        block = Block.fromBuffer(Buffer.from(o.result, 'hex'));
      } catch (e) {
        throw new ChainRpcError('RPC_BAD_RESPONSE', `${this.rpc.endpointName}: getblock: block ${hash} does not decode (${(e as Error).message})`, { method: 'getblock', cause: e });
      }
      if (block.getId() !== hash) throw this.shapeError('getblock', `block ${hash}`);
      const parentHash = block.prevHash ? reversedHex(block.prevHash) : ZERO_HASH;
      return { ref: { height: from + BigInt(i), hash, parentHash }, block };
    });
  }

  /**
   * getblock <hash> 0 for each hash, in order: waves of `concurrency` batches (the kit's batch
   * with this wave's maxBatch), each batch sized from the average block seen so far (bounded
   * memory on mainnet, few requests on small blocks).
   */
  private async rawBlocks(hashes: readonly string[]): Promise<Array<JsonRpcOutcome<string>>> {
    const out: Array<JsonRpcOutcome<string>> = [];
    let per = this.blockBatch;
    let chars = 0;
    let seen = 0;
    for (let i = 0; i < hashes.length; ) {
      const wave = hashes.slice(i, i + per * this.concurrency);
      i += wave.length;
      for (const o of await this.rpc.batch<string>(wave.map((hash) => ({ method: 'getblock', params: [hash, 0] })), { maxBatch: per })) {
        out.push(o);
        if (o.ok && typeof o.result === 'string') {
          chars += o.result.length;
          seen++;
        }
      }
      if (seen > 0) per = Math.min(this.maxBlockBatch, Math.max(1, Math.floor(this.blockBatchChars / (chars / seen))));
    }
    return out;
  }

  /** The index of a senders set (built once per set object), or null when there is none to match. */
  private senderIndex(senders: ReadonlySet<string> | undefined): InputAddressIndex | null {
    if (senders === undefined || senders === null || senders.size === 0) return null;
    let index = this.senderIndexes.get(senders);
    if (index === undefined) {
      index = new InputAddressIndex(senders, this.network);
      this.senderIndexes.set(senders, index);
    }
    return index.empty ? null : index;
  }

  /**
   * The block's transfers, in transaction order then output order: each output paying a watched
   * address (fromAddress: the first input whose address can be told), and for each sender among
   * the transaction's inputs, each output with an address that is not that sender's (not its
   * change). An output that is both (a watched output, the sender its fromAddress) is given once.
   */
  private collect(ref: BlockRef, block: Block, watched: ReadonlySet<string>, senders: InputAddressIndex | null, out: ObservedTransfer[]): void {
    const txs: readonly Transaction[] = block.transactions ?? [];
    for (let t = 0; t < txs.length; t++) {
      const tx = txs[t]!;
      const coinbase = t === 0;
      if (coinbase && !this.includeCoinbase) continue;
      // The distinct senders among the inputs, in input order (null: none).
      let spenders: string[] | null = null;
      if (senders !== null && !coinbase) {
        for (const input of tx.ins) {
          const s = senders.match(input.script, input.witness);
          if (s === null) continue;
          if (spenders === null) spenders = [s];
          else if (!spenders.includes(s)) spenders.push(s);
        }
      }
      let txHash: string | null = null;
      // The incoming transfers' fromAddress, read once per transaction that pays a watched address.
      let fromAddress: string | null | undefined;
      for (let vout = 0; vout < tx.outs.length; vout++) {
        const output = tx.outs[vout]!;
        const to = outputAddress(output.script, this.network);
        if (to === null) continue;
        const incoming = watched.has(to);
        if (!incoming && spenders === null) continue;
        // The txid is hashed only for transactions that give a transfer.
        txHash ??= tx.getId();
        if (incoming) {
          if (fromAddress === undefined) fromAddress = coinbase ? null : this.firstInputAddress(tx);
          out.push(this.transfer(ref, txHash, vout, fromAddress, to, output.value));
        }
        if (spenders === null) continue;
        for (const s of spenders) {
          if (s === to || (incoming && s === fromAddress)) continue;
          out.push(this.transfer(ref, txHash, vout, s, to, output.value));
        }
      }
    }
  }

  private transfer(ref: BlockRef, txHash: string, position: number, fromAddress: string | null, toAddress: string, amount: bigint): ObservedTransfer {
    return { txHash, position, fromAddress, toAddress, memo: null, contract: null, amount, blockHeight: ref.height, blockHash: ref.hash, succeeded: true };
  }

  /** The address of the first input whose address the input itself tells (input-address.ts), or null. */
  private firstInputAddress(tx: Transaction): string | null {
    for (const input of tx.ins) {
      const a = inputAddress(input.script, input.witness, this.network);
      if (a !== null) return a;
    }
    return null;
  }

  private shapeError(method: string, expected: string): ChainRpcError {
    return new ChainRpcError('RPC_BAD_RESPONSE', `${this.rpc.endpointName}: ${method}: the answer is not ${expected}`, { method });
  }
}

/** See BitcoinBlockScanner.addressNatures. */
function addressNature(codec: BitcoinAddressCodec, network: BitcoinNetwork, address: string): AddressNature {
  if (typeof address !== 'string') throw new TypeError('an address must be a string');
  const v = codec.validate(address);
  if (!v.valid) throw new TypeError(`${JSON.stringify(address.slice(0, 100))} is not a ${network.name} bitcoin address: ${v.reason}`);
  let segwit: { version: number; data: Uint8Array } | null = null;
  try {
    segwit = btcAddress.fromBech32(v.normalized);
  } catch {
    // base58 (P2PKH or P2SH of this network, as validate accepted it)
  }
  // Segwit as validate accepts it: v0 of 20 (P2WPKH) or 32 bytes (P2WSH), v1 of 32 bytes (P2TR).
  if (segwit !== null) return segwit.version === 0 && segwit.data.length === 32 ? 'CONTRACT' : 'EOA';
  return btcAddress.fromBase58Check(v.normalized).version === network.p2shVersion ? 'CONTRACT' : 'EOA';
}

function checkHeight(h: bigint, name: string): void {
  if (typeof h !== 'bigint' || h < 0n || h > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`${name} must be a non-negative bigint height`);
}
