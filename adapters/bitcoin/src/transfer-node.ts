import { Transaction } from 'bitcoinjs-lib';
import {
  AGREES, ChainRpcError, ChainTransferError, isChainRpcError, outpointKey, type BroadcastOutcome, type Outpoint, type SenderCheck, type SenderLedger, type ChainEndpoint, type JsonRpcClient, type JsonRpcOutcome, type ListedOutput,
  type SignedTransaction, type SpendableOutput, type TransactionState, type TransferInput, type TransferIntent, type UtxoTransferNode,
} from '@wcs/core';
import { BitcoinAddressCodec } from './address';
import type { BitcoinNetwork } from './network';
import { bitcoinRpc, type BitcoinRpcOptions } from './rpc';
import { addressScript, formatFeeRate, parseFeeRate } from './spend';

const TXID_RE = /^[0-9a-f]{64}$/;
/** Blocks before a coinbase output may be spent. */
const COINBASE_MATURITY = 100n;

/** An unspent output of an address as the node reports it. */
export interface AddressUnspent extends SpendableOutput {
  /** Height of the block that created it; null while unconfirmed (bcoin's address index only). */
  readonly height: bigint | null;
  /** A coinbase output (spendable 100 blocks after its block). */
  readonly coinbase: boolean;
}

export interface BitcoinTransferNodeOptions extends BitcoinRpcOptions {
  /** estimatesmartfee confirmation target, blocks (default 3). */
  readonly confTarget?: number;
  /**
   * Fee rate (sat/vB text) when the node has no estimate (regtest always, a freshly started node):
   * default "1" on regtest and null elsewhere, where transferInput then throws rather than guess.
   */
  readonly fallbackFeeRate?: string | null;
  /** The lowest fee rate ever used (sat/vB text, default "1": Bitcoin Core's default -minrelaytxfee). */
  readonly minFeeRate?: string;
  /**
   * How long broadcast() waits for the node to hold a transaction its sendrawtransaction answered
   * for (default 5000 ms: bcoin answers before its mempool has decided).
   */
  readonly acceptTimeoutMs?: number;
}

/** Which getblockchaininfo `chain` names each network accepts (Bitcoin Core and bcoin names). */
const CHAIN_NAMES: Readonly<Record<BitcoinNetwork['name'], readonly string[]>> = {
  mainnet: ['main'],
  testnet: ['test', 'testnet', 'testnet4', 'signet'],
  regtest: ['regtest'],
};

/**
 * What a node's refusal of sendrawtransaction means: ALREADY_KNOWN (the node has this very
 * transaction), REJECTED (refused for good: spent or missing inputs, fee, policy, consensus,
 * undecodable), or null (not an answer about the transaction: thrown as a fault).
 * Bitcoin Core: -27 already in the chain ("Transaction already in block chain", since v26
 * "Transaction outputs already in utxo set"), -26 mempool policy, -25 missing/spent inputs or
 * max fee exceeded, -22 decode failure. Messages of older or other nodes are matched too.
 */
export function classifyBroadcastRefusal(rpcCode: number | null, message: string): 'ALREADY_KNOWN' | 'REJECTED' | null {
  if (rpcCode === -27 || /already in block ?chain|outputs already in utxo set|txn-already-known|txn-already-in-mempool|already have transaction|transaction already exists/i.test(message)) {
    return 'ALREADY_KNOWN';
  }
  if (rpcCode === -25 || rpcCode === -26 || rpcCode === -22) return 'REJECTED';
  if (/bad-txns|missingorspent|missing inputs|insufficient fee|min relay fee|mempool min fee|dust|non-final|non-bip68|script-verify|txn-mempool-conflict|too-long-mempool-chain|max-fee-exceeded|absurdly-high-fee|fee exceeds maximum|tx-size|version|bad-witness|scriptsig|decode failed|rejected/i.test(message)) {
    return 'REJECTED';
  }
  return null;
}

/** Exact satoshis of an RPC BTC amount (a JSON number with at most 8 decimals); null when it is not one. */
export function btcToSats(value: unknown): bigint | null {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 21_000_000) return null;
  const text = value.toFixed(8);
  if (Number(text) !== value) return null;
  const [whole, frac] = text.split('.') as [string, string];
  return BigInt(whole) * 100_000_000n + BigInt(frac);
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

type Found =
  | { readonly state: 'UNKNOWN' }
  | { readonly state: 'PENDING' }
  | { readonly state: 'MINED'; readonly blockHeight: bigint; readonly blockHash: string; readonly confirmations: number; readonly tx: Transaction };

/**
 * Withdrawal I/O against a Bitcoin Core–style JSON-RPC node (bitcoind, bcoin), through
 * core's JsonRpcClient (rpc.ts: bitcoinRpc). Every call first checks, once per instance, that
 * the node is on this adapter's network (getblockchaininfo `chain`).
 *
 * Node requirements: a transaction index for status() of mined transactions (bitcoind
 * -txindex=1, bcoin --index-tx), as for the scanner; for balance() / listUnspent() /
 * unspentOutputs() either Bitcoin Core's scantxoutset (v0.17+) or bcoin's address index
 * (--index-address); bcoin also needs --replace-by-fee, since these transactions signal BIP-125
 * and bcoin refuses such transactions by default.
 */
export class BitcoinTransferNode implements UtxoTransferNode {
  private readonly rpc: JsonRpcClient;
  private readonly codec: BitcoinAddressCodec;
  private readonly confTarget: number;
  private readonly fallback: bigint | null;
  private readonly floor: bigint;
  private readonly acceptTimeoutMs: number;
  private networkChecked: Promise<void> | null = null;

  constructor(private readonly network: BitcoinNetwork, endpoint: ChainEndpoint, options: BitcoinTransferNodeOptions = {}) {
    this.rpc = bitcoinRpc(endpoint, options);
    this.codec = new BitcoinAddressCodec(network);
    this.confTarget = options.confTarget ?? 3;
    if (!Number.isInteger(this.confTarget) || this.confTarget < 1 || this.confTarget > 1008) throw new RangeError('confTarget must be an integer from 1 to 1008 blocks');
    const fallback = options.fallbackFeeRate === undefined ? (network.name === 'regtest' ? '1' : null) : options.fallbackFeeRate;
    this.fallback = fallback === null ? null : parseFeeRate(fallback);
    this.floor = parseFeeRate(options.minFeeRate ?? '1');
    this.acceptTimeoutMs = options.acceptTimeoutMs ?? 5000;
    if (!Number.isInteger(this.acceptTimeoutMs) || this.acceptTimeoutMs < 0) throw new RangeError('acceptTimeoutMs must be a non-negative integer');
  }

  /**
   * { feeRate, feeRateSource, confTarget }: feeRate (sat/vB text, what craft() reads) is the node's
   * estimatesmartfee for confTarget blocks (BTC/kvB, exact to the sat/kvB), or the fallback when
   * the node has none (bitcoind's `errors`, bcoin's -1 or "Fee estimation not available"), raised
   * to the largest of minFeeRate and the node's mempoolminfee / minrelaytxfee (getmempoolinfo).
   * Without an estimate and without a fallback it throws RPC_ERROR.
   */
  async transferInput(request: TransferIntent): Promise<TransferInput> {
    if (request.memo !== null) throw new ChainTransferError('INVALID_REQUEST', 'bitcoin transfers carry no memo (memo must be null)');
    if (request.contract !== null) throw new ChainTransferError('INVALID_REQUEST', 'bitcoin transfers are native BTC only (contract must be null)');
    await this.checkNetwork();
    const [estimate, mempool] = await this.rpc.batch<Record<string, unknown>>([
      { method: 'estimatesmartfee', params: [this.confTarget] },
      { method: 'getmempoolinfo', params: [] },
    ]);
    let floor = this.floor;
    if (mempool!.ok) {
      for (const key of ['mempoolminfee', 'minrelaytxfee']) {
        const v = mempool!.result?.[key];
        if (v === undefined) continue;
        const sats = btcToSats(v);
        if (sats === null) throw this.shapeError('getmempoolinfo', `${key} in BTC/kvB`);
        if (sats > floor) floor = sats;
      }
    } else if (mempool!.error.rpcCode !== -32601) {
      throw mempool!.error;
    }
    let rate: bigint | null = null;
    let noEstimate: ChainRpcError | null = null;
    if (estimate!.ok) {
      // Bitcoin Core: { feerate, blocks } or { errors, blocks }; bcoin 1.0.2: { fee, blocks } with -1 for none.
      const v = estimate!.result?.['feerate'] ?? estimate!.result?.['fee'];
      if (typeof v === 'number' && v > 0) {
        rate = btcToSats(v);
        if (rate === null) throw this.shapeError('estimatesmartfee', 'a fee rate in BTC/kvB');
      }
    } else {
      // bcoin without an estimator: "Fee estimation not available."
      noEstimate = estimate!.error;
    }
    let source = 'estimatesmartfee';
    if (rate === null) {
      if (this.fallback === null) {
        throw new ChainRpcError('RPC_ERROR', `${this.rpc.endpointName}: estimatesmartfee: the node has no fee estimate for ${this.confTarget} blocks${noEstimate ? ` (${noEstimate.nodeMessage})` : ''} and no fallbackFeeRate is configured`, { method: 'estimatesmartfee', cause: noEstimate ?? undefined });
      }
      rate = this.fallback;
      source = 'fallback';
    }
    if (rate < floor) {
      rate = floor;
      source = 'minimum';
    }
    return { feeRate: formatFeeRate(rate), feeRateSource: source, confTarget: this.confTarget };
  }

  /**
   * Confirmed spendable balance of a native address (contract must be null): the sum of
   * listUnspent() outputs that are in a block, coinbase outputs only once mature. With Bitcoin
   * Core (scantxoutset: the UTXO set of the tip) outputs that a mempool transaction spends still
   * count; bcoin's address index leaves them out. The service tracks its hot wallet's outputs
   * itself; this is for reconciliation.
   */
  async balance(address: string, contract: string | null): Promise<bigint> {
    if (contract !== null) throw new ChainTransferError('INVALID_REQUEST', 'bitcoin has no tokens: contract must be null');
    const unspent = await this.listUnspent(address);
    let tip: bigint | null = null;
    if (unspent.some((u) => u.coinbase && u.height !== null)) tip = BigInt(await this.rpc.call<number>('getblockcount'));
    let total = 0n;
    for (const u of unspent) {
      if (u.height === null) continue;
      if (u.coinbase && tip! - u.height + 1n < COINBASE_MATURITY) continue;
      total += u.amount;
    }
    return total;
  }

  /**
   * The unspent outputs of an address (to seed the service's UTXO table), in the node's order:
   * - Bitcoin Core: `scantxoutset start ["addr(<address>)"]`: confirmed outputs only (the UTXO
   *   set at the tip, mempool ignored), one scan at a time per node, a scan of the whole UTXO
   *   set (tens of seconds on mainnet: give the endpoint a long timeoutMs).
   * - bcoin (no scantxoutset): `GET /coin/address/<address>` of its HTTP API, which needs
   *   --index-address (without it bcoin answers an empty list, which cannot be told from an
   *   empty address): confirmed and mempool outputs, less those a mempool transaction spends.
   * Amounts are exact satoshis; each output's script is checked to be the address's.
   */
  async listUnspent(address: string): Promise<AddressUnspent[]> {
    const v = this.codec.validate(address, null);
    if (!v.valid) throw new ChainTransferError('INVALID_REQUEST', `address: ${v.reason}`);
    const canonical = v.normalized;
    const scriptHex = Buffer.from(addressScript(canonical, this.network)).toString('hex');
    await this.checkNetwork();
    let scan: { success?: unknown; unspents?: unknown } | null;
    try {
      scan = await this.rpc.call('scantxoutset', ['start', [`addr(${canonical})`]]);
    } catch (e) {
      if (isChainRpcError(e) && e.rpcCode === -32601) return this.bcoinCoins(canonical, scriptHex);
      throw e;
    }
    if (scan === null || typeof scan !== 'object' || scan.success !== true || !Array.isArray(scan.unspents)) {
      throw this.shapeError('scantxoutset', 'a completed scan with unspents');
    }
    return scan.unspents.map((u: Record<string, unknown>) => {
      const amount = btcToSats(u?.['amount']);
      const txid = u?.['txid'];
      const vout = u?.['vout'];
      const height = u?.['height'];
      if (amount === null || typeof txid !== 'string' || !TXID_RE.test(txid) || !Number.isInteger(vout) || !Number.isSafeInteger(height)) {
        throw this.shapeError('scantxoutset', 'unspents with txid, vout, amount and height');
      }
      if (u['scriptPubKey'] !== undefined && u['scriptPubKey'] !== scriptHex) throw this.shapeError('scantxoutset', `outputs of ${canonical}`);
      return { txHash: txid, vout: vout as number, amount, height: BigInt(height as number), coinbase: u['coinbase'] === true };
    });
  }

  /**
   * The core's UtxoTransferNode.unspentOutputs (what the service's hot_wallet_utxos table is synced
   * from): listUnspent() with each output's confirmations, tip − height + 1 from the node's block
   * count read after the listing, 0 for an output still in the mempool (bcoin lists those; Bitcoin
   * Core's scantxoutset does not). Coinbase outputs are left out until mature (100 confirmations):
   * a transaction spending one earlier is refused. Outputs a mempool transaction spends: bcoin
   * leaves them out, Bitcoin Core lists them (the service knows which of them it spent).
   */
  async unspentOutputs(address: string): Promise<ListedOutput[]> {
    const unspent = await this.listUnspent(address);
    let tip: bigint | null = null;
    if (unspent.some((u) => u.height !== null)) {
      const count = await this.rpc.call<unknown>('getblockcount');
      if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0) throw this.shapeError('getblockcount', 'a block height');
      tip = BigInt(count);
    }
    const out: ListedOutput[] = [];
    for (const u of unspent) {
      let confirmations = 0n;
      if (u.height !== null) {
        confirmations = tip! - u.height + 1n;
        // the listing saw a block the tip read after it no longer has (a reorg in between): still in a block
        if (confirmations < 1n) confirmations = 1n;
      }
      if (u.coinbase && confirmations < COINBASE_MATURITY) continue;
      out.push({ txHash: u.txHash, vout: u.vout, amount: u.amount, confirmations: Number(confirmations) });
    }
    return out;
  }

  private async bcoinCoins(address: string, scriptHex: string): Promise<AddressUnspent[]> {
    const coins = await this.rpc.rest<unknown>(`/coin/address/${address}`);
    if (!Array.isArray(coins)) throw this.shapeError('GET /coin/address', 'a list of coins');
    return coins.map((c: Record<string, unknown>) => {
      const { hash, index, value, height, script } = c ?? {};
      if (typeof hash !== 'string' || !TXID_RE.test(hash) || !Number.isInteger(index) || !Number.isSafeInteger(value) || (value as number) <= 0 || !Number.isSafeInteger(height)) {
        throw this.shapeError('GET /coin/address', 'coins with hash, index, value and height');
      }
      if (script !== scriptHex) throw this.shapeError('GET /coin/address', `coins of ${address}`);
      const h = height as number;
      return { txHash: hash, vout: index as number, amount: BigInt(value as number), height: h < 0 ? null : BigInt(h), coinbase: c['coinbase'] === true };
    });
  }

  /**
   * The chain check before signing: are the outputs the database believes unspent
   * (`ledger.unspentOutputs`: its hot wallet's, or an unsigned consolidation's inputs) still
   * unspent on the node? One gettxout batch (with the
   * mempool) for all of them; an output missing there whose own transaction the node still has
   * (not reorged out or dropped) is spent, and when the database still knows no transaction of
   * its own spending it (`ledger.spentByService`, read after the node answered) the chain holds a
   * spend the database does not know: AHEAD with those outputs. Outputs the database never knew
   * (one a restore lost entirely) cannot be checked this way. Bitcoin Core's gettxout leaves out
   * an output a mempool transaction spends; bcoin's does not, so there a spend shows once mined.
   */
  async senderCheck(sender: string, ledger: SenderLedger): Promise<SenderCheck> {
    const v = this.codec.validate(sender, null);
    if (!v.valid) throw new TypeError(`senderCheck: sender: ${v.reason}`);
    const believed = await ledger.unspentOutputs(sender);
    if (believed.length === 0) return AGREES;
    await this.checkNetwork();
    const answers = await this.rpc.batch(believed.map((o) => ({ method: 'gettxout', params: [o.txHash, o.vout, true] })));
    const missing: Outpoint[] = [];
    for (const [i, a] of answers.entries()) {
      if (!a.ok) throw a.error;
      if (a.result === null) missing.push(believed[i]!);
    }
    const spent: Outpoint[] = [];
    for (const o of missing) if ((await this.find(o.txHash, true)).state !== 'UNKNOWN') spent.push(o);
    if (spent.length === 0) return AGREES;
    const ours = await ledger.spentByService(spent);
    const unknown = spent.filter((o) => !ours.has(outpointKey(o)));
    if (unknown.length === 0) return AGREES;
    return {
      kind: 'AHEAD',
      evidence: { kind: 'SPENT_OUTPUTS', outputs: unknown },
      summary: `${unknown.length} of ${sender}'s outputs the database believes unspent ${unknown.length === 1 ? 'is' : 'are'} spent on chain by a transaction it does not know (${unknown.slice(0, 3).map(outpointKey).join(', ')}${unknown.length > 3 ? ', …' : ''})`,
    };
  }

  /**
   * Sends the raw transaction (sendrawtransaction) unless the node already has it (then
   * ALREADY_KNOWN without sending). The node's refusals are read by classifyBroadcastRefusal.
   * A success answer is believed once the node holds the transaction (mempool or chain), polled
   * for up to acceptTimeoutMs: bcoin 1.0.2's sendrawtransaction answers the txid before (and
   * whatever) its mempool decides. If meanwhile an input is found spent or missing (gettxout),
   * the answer is REJECTED "bad-txns-inputs-missingorspent"; if neither happens the node gave no
   * verdict, and this throws RPC_ERROR (see the node's log; status() tells later).
   */
  async broadcast(tx: SignedTransaction): Promise<BroadcastOutcome> {
    let decoded: Transaction;
    try {
      decoded = Transaction.fromBuffer(tx.raw);
    } catch (e) {
      throw new TypeError(`broadcast: raw is not a bitcoin transaction (${(e as Error).message})`);
    }
    const txid = decoded.getId();
    if (txid !== tx.txHash) throw new TypeError(`broadcast: raw is transaction ${txid}, not ${tx.txHash}`);
    await this.checkNetwork();
    if ((await this.find(txid, false)).state !== 'UNKNOWN') return { outcome: 'ALREADY_KNOWN', txHash: txid };
    try {
      await this.rpc.call('sendrawtransaction', [Buffer.from(tx.raw).toString('hex')]);
    } catch (e) {
      if (!isChainRpcError(e) || e.rpcCode === null) throw e;
      const reason = e.nodeMessage ?? e.message;
      const verdict = classifyBroadcastRefusal(e.rpcCode, reason);
      if (verdict === 'ALREADY_KNOWN') return { outcome: 'ALREADY_KNOWN', txHash: txid };
      if (verdict === 'REJECTED') return { outcome: 'REJECTED', reason };
      throw e;
    }
    const deadline = Date.now() + this.acceptTimeoutMs;
    for (let wait = 10; ; wait = Math.min(wait * 2, 250)) {
      if ((await this.find(txid, false)).state !== 'UNKNOWN') return { outcome: 'ACCEPTED', txHash: txid };
      const missing = await this.missingInput(decoded);
      if (missing !== null) {
        // Bitcoin Core's gettxout leaves out outputs a mempool transaction spends: ours, if it just got in.
        if ((await this.find(txid, false)).state !== 'UNKNOWN') return { outcome: 'ACCEPTED', txHash: txid };
        return { outcome: 'REJECTED', reason: `bad-txns-inputs-missingorspent: input ${missing} is spent or unknown to the node` };
      }
      if (Date.now() >= deadline) break;
      await sleep(wait);
    }
    throw new ChainRpcError('RPC_ERROR', `${this.rpc.endpointName}: sendrawtransaction: the node answered for ${txid} but does not hold it after ${this.acceptTimeoutMs} ms and gave no reason (bcoin does not report mempool refusals over RPC: see its log)`, { method: 'sendrawtransaction' });
  }

  /**
   * UNKNOWN (neither in the mempool nor in a block of the best chain), PENDING (mempool) or MINED
   * with the block, its confirmations (tip − height + 1), succeeded true (a mined bitcoin
   * transaction cannot fail) and the fee (inputs' values read from their transactions, null when
   * one cannot be read). getrawtransaction <txid> true, then getblockheader and getblockhash to
   * check the block is on the best chain. Needs the node's transaction index for mined
   * transactions: bitcoind says so (thrown as RPC_ERROR); for a node that says "not found"
   * although it holds an output of the transaction (gettxout <txid> 0), this throws too rather
   * than answer UNKNOWN for a mined transaction.
   */
  async status(txHash: string): Promise<TransactionState> {
    if (typeof txHash !== 'string' || !TXID_RE.test(txHash)) throw new TypeError('txHash must be a txid (64 lower-case hex characters)');
    await this.checkNetwork();
    const found = await this.find(txHash, true);
    if (found.state !== 'MINED') return { state: found.state };
    return {
      state: 'MINED',
      blockHeight: found.blockHeight,
      blockHash: found.blockHash,
      confirmations: found.confirmations,
      succeeded: true,
      fee: await this.feeOf(found.tx),
    };
  }

  /** Where the node has txid. `strict`: a node without the index it needs is an error (else UNKNOWN). */
  private async find(txid: string, strict: boolean): Promise<Found> {
    let answer: { blockhash?: unknown; hex?: unknown } | null;
    try {
      answer = await this.rpc.call('getrawtransaction', [txid, true]);
    } catch (e) {
      if (!isChainRpcError(e) || e.rpcCode === null) throw e;
      if (/-txindex/.test(e.message)) {
        // bitcoind without -txindex: mempool transactions are found, mined ones are not.
        if (!strict) return { state: 'UNKNOWN' };
        throw new ChainRpcError('RPC_ERROR', `${e.message} [the node needs a transaction index: bitcoind -txindex=1, bcoin --index-tx]`, { method: 'getrawtransaction', rpcCode: e.rpcCode, nodeMessage: e.nodeMessage, cause: e });
      }
      // bitcoind: -5 "No such mempool or blockchain transaction"; bcoin: -1 "Transaction not found."
      if (e.rpcCode !== -5 && !/not found/i.test(e.message)) throw e;
      if (strict) {
        const out = await this.rpc.call<unknown>('gettxout', [txid, 0, true]);
        if (out !== null) {
          throw new ChainRpcError('RPC_ERROR', `${this.rpc.endpointName}: getrawtransaction: the node says ${txid} is not found but holds its output 0 [the node needs a transaction index: bitcoind -txindex=1, bcoin --index-tx]`, { method: 'getrawtransaction' });
        }
      }
      return { state: 'UNKNOWN' };
    }
    if (answer === null || typeof answer !== 'object') throw this.shapeError('getrawtransaction', 'a transaction object');
    // In the mempool: bitcoind leaves blockhash out, bcoin sets it to null.
    if (answer.blockhash === undefined || answer.blockhash === null) return { state: 'PENDING' };
    const blockHash = answer.blockhash;
    if (typeof blockHash !== 'string' || !TXID_RE.test(blockHash)) throw this.shapeError('getrawtransaction', 'a block hash');
    if (typeof answer.hex !== 'string') throw this.shapeError('getrawtransaction', 'the transaction hex');
    let tx: Transaction;
    try {
      tx = Transaction.fromHex(answer.hex);
    } catch {
      throw this.shapeError('getrawtransaction', 'a decodable transaction');
    }
    if (tx.getId() !== txid) throw this.shapeError('getrawtransaction', `transaction ${txid}`);
    let header: { height?: unknown; confirmations?: unknown };
    try {
      header = await this.rpc.call('getblockheader', [blockHash, true]);
    } catch (e) {
      if (isChainRpcError(e) && e.rpcCode !== null) return { state: 'UNKNOWN' };
      throw e;
    }
    const height = header?.height;
    const confirmations = header?.confirmations;
    if (typeof height !== 'number' || !Number.isSafeInteger(height) || height < 0) throw this.shapeError('getblockheader', 'a height');
    if (typeof confirmations !== 'number' || !Number.isSafeInteger(confirmations)) throw this.shapeError('getblockheader', 'confirmations');
    // A block off the best chain: bitcoind reports confirmations -1; the hash at that height settles it.
    if (confirmations < 1) return { state: 'UNKNOWN' };
    const [main] = await this.rpc.batch<string>([{ method: 'getblockhash', params: [height] }]);
    if (!main!.ok) {
      if (main!.error.rpcCode === -8) return { state: 'UNKNOWN' };
      throw main!.error;
    }
    if (main!.result !== blockHash) return { state: 'UNKNOWN' };
    return { state: 'MINED', blockHeight: BigInt(height), blockHash, confirmations, tx };
  }

  /** Inputs' values (their transactions, one batch) minus outputs; null if one cannot be read. */
  private async feeOf(tx: Transaction): Promise<bigint | null> {
    const prevIds = [...new Set(tx.ins.map((i) => Buffer.from(i.hash).reverse().toString('hex')))];
    const answers: Array<JsonRpcOutcome<string>> = await this.rpc.batch<string>(prevIds.map((id) => ({ method: 'getrawtransaction', params: [id, false] })));
    const prevs = new Map<string, Transaction>();
    for (let k = 0; k < prevIds.length; k++) {
      const a = answers[k]!;
      if (!a.ok || typeof a.result !== 'string') return null;
      try {
        const prev = Transaction.fromHex(a.result);
        if (prev.getId() !== prevIds[k]) return null;
        prevs.set(prevIds[k]!, prev);
      } catch {
        return null;
      }
    }
    let fee = 0n;
    for (const input of tx.ins) {
      const out = prevs.get(Buffer.from(input.hash).reverse().toString('hex'))?.outs[input.index];
      if (!out) return null;
      fee += out.value;
    }
    for (const out of tx.outs) fee -= out.value;
    return fee;
  }

  /** The first input (txid:vout) the node has no unspent output for (gettxout with the mempool), or null. */
  private async missingInput(tx: Transaction): Promise<string | null> {
    const outpoints = tx.ins.map((i) => ({ txid: Buffer.from(i.hash).reverse().toString('hex'), vout: i.index }));
    const answers = await this.rpc.batch(outpoints.map((o) => ({ method: 'gettxout', params: [o.txid, o.vout, true] })));
    for (let k = 0; k < answers.length; k++) {
      const a = answers[k]!;
      if (!a.ok) throw a.error;
      if (a.result === null) return `${outpoints[k]!.txid}:${outpoints[k]!.vout}`;
    }
    return null;
  }

  /** Once per instance (again after a failure): the node's chain must be this adapter's network. */
  private checkNetwork(): Promise<void> {
    this.networkChecked ??= (async () => {
      const info = await this.rpc.call<{ chain?: unknown }>('getblockchaininfo');
      const chain = info?.chain;
      if (typeof chain !== 'string') throw this.shapeError('getblockchaininfo', 'a chain name');
      if (!CHAIN_NAMES[this.network.name].includes(chain)) {
        throw new ChainRpcError('RPC_WRONG_CHAIN', `${this.rpc.endpointName}: getblockchaininfo: the node is on chain "${chain}", this chain is ${this.network.name}`, { method: 'getblockchaininfo' });
      }
    })().catch((e: unknown) => {
      this.networkChecked = null;
      throw e;
    });
    return this.networkChecked;
  }

  private shapeError(method: string, expected: string): ChainRpcError {
    return new ChainRpcError('RPC_BAD_RESPONSE', `${this.rpc.endpointName}: ${method}: the answer is not ${expected}`, { method });
  }
}
