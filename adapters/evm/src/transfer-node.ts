import { keccak256, hexlify } from 'ethers';
import { ChainRpcError, sequenceVerdict, singleAnswer, type BroadcastOutcome, type SenderCheck, type SenderLedger, type ChainEndpoint, type JsonRpcClient, type JsonRpcClientOptions, type JsonRpcOutcome, type SequenceTransferNode, type SignedTransaction, type TransactionState, type TransferIntent } from '@wcs/core';
import { EvmAddressCodec } from './address';
import { HASH, Reader, chainIdCheck, evmRpcClient, hex, type Json } from './node-json';
import { INPUT_FORMAT, erc20BalanceOfData, erc20TransferData, type EvmTransferInput } from './transfer';
import { callEstimateObject } from './transfer-call';
import { EvmDelegationNode } from './transfer-delegation';

export interface EvmTransferNodeOptions extends JsonRpcClientOptions {
  /** The chain's EIP-155 id: the first call checks eth_chainId and refuses another chain's node (RPC_WRONG_CHAIN). */
  readonly expectedChainId?: number;
  /** Added to the node's gas estimate (default 20 %); a plain native transfer to an account (estimate 21000) gets none. */
  readonly gasMarginPercent?: number;
  /** maxFeePerGas = baseFeeMultiplier × the latest base fee + the tip (default 2: room for six full blocks of +12.5 %). */
  readonly baseFeeMultiplier?: number;
  /** The tip when the node does not serve eth_maxPriorityFeePerGas (default 1 gwei), wei per gas. */
  readonly defaultPriorityFeePerGas?: bigint;
}

/** Gas of a transaction that only moves the native coin to an account without code. */
const PLAIN_TRANSFER_GAS = 21_000n;
const GWEI = 1_000_000_000n;

/** The node already has this very transaction (geth/erigon/reth "already known", anvil "already imported", besu "Known transaction", nethermind "AlreadyKnown"). */
const ALREADY_KNOWN = /already known|alreadyknown|already imported|\bknown transaction|transaction already exists|already in (the )?(mempool|tx ?pool)/i;
/** Refusals for now, not for good: broadcast again later (the pool is full, a nonce gap before the transaction). */
const TRY_LATER = /txpool is full|transaction pool is full|pool is full|too many (pending |queued )?transactions|nonce too high|nonce gap|gapped|future transaction tries to replace|in-flight transaction limit|try again later|temporarily/i;
/** JSON-RPC codes of a node's own trouble (internal error, limit exceeded): not a verdict on the transaction. */
const TRY_LATER_CODES = new Set([-32603, -32005]);

/**
 * Withdrawal I/O for an EVM chain over raw JSON-RPC (the scanner's client: retries, batches,
 * redacted messages). Every call checks the node's eth_chainId first (once). Network faults and
 * malformed answers throw ChainRpcError; the node's verdicts on a transaction are returned.
 */
export class EvmTransferNode implements SequenceTransferNode {
  private readonly rpc: JsonRpcClient;
  private readonly read: Reader;
  private readonly checkChain: () => Promise<void>;
  private readonly codec = new EvmAddressCodec();
  private readonly marginPercent: bigint;
  private readonly baseFeeMultiplier: bigint;
  private readonly defaultTip: bigint;
  /** EIP-7702 reads (account code, nonces at latest, whether the node runs it), over this node's client. */
  readonly delegation: EvmDelegationNode;

  constructor(endpoint: ChainEndpoint, options: EvmTransferNodeOptions = {}) {
    this.rpc = evmRpcClient(endpoint, options);
    this.read = new Reader(this.rpc);
    this.checkChain = chainIdCheck(this.rpc, this.read, options.expectedChainId ?? null);
    this.delegation = new EvmDelegationNode(this.rpc, this.read, this.checkChain);
    const margin = options.gasMarginPercent ?? 20;
    if (!Number.isInteger(margin) || margin < 0 || margin > 1000) throw new TypeError(`gasMarginPercent must be an integer in [0, 1000], got ${margin}`);
    this.marginPercent = BigInt(margin);
    const mult = options.baseFeeMultiplier ?? 2;
    if (!Number.isInteger(mult) || mult < 1 || mult > 100) throw new TypeError(`baseFeeMultiplier must be an integer in [1, 100], got ${mult}`);
    this.baseFeeMultiplier = BigInt(mult);
    this.defaultTip = options.defaultPriorityFeePerGas ?? GWEI;
    if (typeof this.defaultTip !== 'bigint' || this.defaultTip < 0n) throw new TypeError('defaultPriorityFeePerGas must be a bigint >= 0');
  }

  /**
   * What craft() needs, read in one batch: the latest block (base fee: present → EIP-1559, absent
   * → legacy; gas limit), eth_maxPriorityFeePerGas (default tip when the node lacks it),
   * eth_gasPrice (legacy chains), eth_estimateGas of the very call, and the pending nonce.
   * A contract call (request.call) is estimated as it will be sent: to the contract, the amount as
   * value (0 allowed), its data, and its EIP-7702 authorizations as `authorizationList` (a type 4
   * estimate, the delegations applied first); its gas limit always takes the margin.
   * An estimate the node refuses (the transfer would revert, the hot wallet lacks the amount)
   * throws RPC_ERROR with the node's reason: there is nothing sound to craft.
   */
  async transferInput(request: TransferIntent): Promise<EvmTransferInput> {
    return singleAnswer(this.transferInputs([request]));
  }

  /**
   * transferInput for many requests in one JSON-RPC batch: the block, tip, gas price and chain id
   * once, an eth_estimateGas per request and a pending nonce per sender. A request that is not
   * well formed throws (a caller bug); a refused estimate is that request's error.
   */
  async transferInputs(requests: readonly TransferIntent[]): Promise<Array<EvmTransferInput | Error>> {
    const calls = requests.map((request) => {
      const from = this.address(request.from, 'from');
      const to = this.address(request.to, 'to');
      const contract = request.contract === null || request.contract === undefined ? null : this.address(request.contract, 'contract');
      if (request.call !== undefined && request.call !== null) return { from, plain: false, call: callEstimateObject(from, to, contract, request) };
      if (typeof request.amount !== 'bigint' || request.amount <= 0n) throw new TypeError('transferInput: request.amount must be a positive bigint');
      const call = contract === null
        ? { from, to, value: hex(request.amount) }
        : { from, to: contract, value: '0x0', data: erc20TransferData(to, request.amount) };
      return { from, plain: contract === null, call };
    });
    if (calls.length === 0) return [];
    await this.checkChain();
    const senders = [...new Set(calls.map((c) => c.from))];
    const outcomes = await this.rpc.batch([
      { method: 'eth_getBlockByNumber', params: ['latest', false] },
      { method: 'eth_maxPriorityFeePerGas', params: [] },
      { method: 'eth_gasPrice', params: [] },
      { method: 'eth_chainId', params: [] },
      ...senders.map((from) => ({ method: 'eth_getTransactionCount', params: [from, 'pending'] })),
      ...calls.map((c) => ({ method: 'eth_estimateGas', params: [c.call] })),
    ]);
    const [block, tip, gasPrice, chainIdOutcome] = outcomes;
    const b = this.read.object(this.rpc.unwrap(block!, 'eth_getBlockByNumber'), 'latest block');
    const height = this.read.quantity(b, 'number', 'latest block');
    const blockGasLimit = this.read.quantity(b, 'gasLimit', 'latest block');
    const baseFee = b.baseFeePerGas === undefined || b.baseFeePerGas === null ? null : this.read.quantity(b, 'baseFeePerGas', 'latest block');
    const fees = baseFee === null
      ? { maxFeePerGas: null, maxPriorityFeePerGas: null, gasPrice: this.read.quantityResult(this.rpc.unwrap(gasPrice!, 'eth_gasPrice'), 'eth_gasPrice').toString() }
      : this.fees1559(baseFee, tip!);
    const chainId = this.read.quantityResult(this.rpc.unwrap(chainIdOutcome!, 'eth_chainId'), 'eth_chainId').toString();
    const nonces = new Map(senders.map((from, i) => [from, this.read.quantityResult(this.rpc.unwrap(outcomes[4 + i]!, 'eth_getTransactionCount'), 'eth_getTransactionCount').toString()]));
    return calls.map((c, i) => {
      const estimate = outcomes[4 + senders.length + i]!;
      if (!estimate.ok) {
        return new ChainRpcError('RPC_ERROR', `${this.rpc.endpointName}: eth_estimateGas refused the transfer (it would fail: funds, token balance, or the contract refuses it): ${this.rpc.redact(estimate.rpc.message)} (JSON-RPC error ${estimate.rpc.code})`, { method: 'eth_estimateGas', rpcCode: estimate.rpc.code });
      }
      const gasEstimate = this.read.quantityResult(estimate.result, 'eth_estimateGas');
      let gasLimit = c.plain && gasEstimate === PLAIN_TRANSFER_GAS ? PLAIN_TRANSFER_GAS : (gasEstimate * (100n + this.marginPercent) + 99n) / 100n;
      if (gasLimit > blockGasLimit) gasLimit = blockGasLimit > gasEstimate ? blockGasLimit : gasEstimate;
      return {
        format: INPUT_FORMAT,
        chainId,
        blockHeight: height.toString(),
        baseFeePerGas: baseFee === null ? null : baseFee.toString(),
        ...fees,
        gasEstimate: gasEstimate.toString(),
        gasLimit: gasLimit.toString(),
        nextSequence: nonces.get(c.from)!,
      };
    });
  }

  /**
   * eth_getTransactionCount(address, 'pending'): the nonce after every transaction of the account
   * the node knows, mined or waiting in its pool. 'latest' counts mined ones only: with
   * withdrawals in flight it would hand out a nonce already taken (the new transaction would then
   * replace, or be refused as underpriced). Still only a floor: another node's pool, or a pool that
   * dropped a transaction, differs, so the allocator keeps its own counter above it.
   */
  async nextSequence(address: string): Promise<bigint> {
    const a = this.address(address, 'address');
    await this.checkChain();
    return this.read.quantityResult(await this.rpc.call('eth_getTransactionCount', [a, 'pending']), 'eth_getTransactionCount');
  }

  /** eth_getTransactionCount(address, height): the nonce after the block (state of that block: an archive node, or a recent block). */
  async sequenceAt(address: string, height: bigint): Promise<bigint> {
    const a = this.address(address, 'address');
    if (height < 0n) throw new RangeError(`height must be >= 0, got ${height}`);
    await this.checkChain();
    return this.read.quantityResult(await this.rpc.call('eth_getTransactionCount', [a, `0x${height.toString(16)}`]), 'eth_getTransactionCount');
  }

  /** eth_getTransactionCount(address, 'pending') for every address in one JSON-RPC batch. */
  async nextSequences(addresses: readonly string[]): Promise<Array<bigint | Error>> {
    const list = addresses.map((a) => this.address(a, 'address'));
    if (list.length === 0) return [];
    await this.checkChain();
    const outcomes = await this.rpc.batch(list.map((a) => ({ method: 'eth_getTransactionCount', params: [a, 'pending'] })));
    return outcomes.map((o) => {
      try {
        return this.read.quantityResult(this.rpc.unwrap(o, 'eth_getTransactionCount'), 'eth_getTransactionCount');
      } catch (e) {
        return e instanceof Error ? e : new Error(String(e));
      }
    });
  }

  /**
   * The chain check before signing: the sender's nonce on chain, mined (`latest`) and with the
   * node's pool (`pending`), against the database's next nonce (read after the node answered); a
   * sender the database has signed nothing from is compared with nonce 0. AHEAD when either is
   * past it: the chain holds transactions from the sender that the database does not know.
   */
  async senderCheck(sender: string, ledger: SenderLedger): Promise<SenderCheck> {
    return singleAnswer(this.senderChecks([sender], ledger));
  }

  /** senderCheck for many senders: both nonces of every sender in one JSON-RPC batch, then the ledger once. */
  async senderChecks(senders: readonly string[], ledger: SenderLedger): Promise<Array<SenderCheck | Error>> {
    const list = senders.map((a) => this.address(a, 'sender'));
    if (list.length === 0) return [];
    await this.checkChain();
    const outcomes = await this.rpc.batch(list.flatMap((a) => [
      { method: 'eth_getTransactionCount', params: [a, 'latest'] },
      { method: 'eth_getTransactionCount', params: [a, 'pending'] },
    ]));
    const nonces = list.map((_a, i) => {
      try {
        const latest = this.read.quantityResult(this.rpc.unwrap(outcomes[2 * i]!, 'eth_getTransactionCount'), 'eth_getTransactionCount');
        const pending = this.read.quantityResult(this.rpc.unwrap(outcomes[2 * i + 1]!, 'eth_getTransactionCount'), 'eth_getTransactionCount');
        return { latest, pending };
      } catch (e) {
        return asError(e);
      }
    });
    const known = await ledger.nextSequences(senders);
    return senders.map((sender, i) => {
      const n = nonces[i]!;
      if (n instanceof Error) return n;
      return sequenceVerdict(sender, known.get(sender) ?? null, n.latest, n.pending, 0n)!;
    });
  }

  /** balance for many pairs in one JSON-RPC batch. */
  async balances(pairs: ReadonlyArray<{ readonly address: string; readonly contract: string | null }>): Promise<Array<bigint | Error>> {
    const list = pairs.map((p) => ({ a: this.address(p.address, 'address'), c: p.contract === null ? null : this.address(p.contract, 'contract') }));
    if (list.length === 0) return [];
    await this.checkChain();
    const outcomes = await this.rpc.batch(list.map(({ a, c }) => (c === null
      ? { method: 'eth_getBalance', params: [a, 'latest'] }
      : { method: 'eth_call', params: [{ to: c, data: erc20BalanceOfData(a) }, 'latest'] })));
    return outcomes.map((o, i) => {
      try {
        const { c } = list[i]!;
        return c === null
          ? this.read.quantityResult(this.rpc.unwrap(o, 'eth_getBalance'), 'eth_getBalance')
          : this.tokenBalance(c, this.rpc.unwrap(o, 'eth_call'));
      } catch (e) {
        return e instanceof Error ? e : new Error(String(e));
      }
    });
  }

  /** At the latest block: eth_getBalance (null contract), else ERC-20 balanceOf through eth_call. */
  async balance(address: string, contract: string | null): Promise<bigint> {
    const a = this.address(address, 'address');
    const c = contract === null ? null : this.address(contract, 'contract');
    await this.checkChain();
    if (c === null) return this.read.quantityResult(await this.rpc.call('eth_getBalance', [a, 'latest']), 'eth_getBalance');
    return this.tokenBalance(c, await this.rpc.call('eth_call', [{ to: c, data: erc20BalanceOfData(a) }, 'latest']));
  }

  private tokenBalance(c: string, v: unknown): bigint {
    if (typeof v !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(v)) {
      throw this.read.bad(`balanceOf on ${c} answered ${JSON.stringify(v).slice(0, 80)}: not an ERC-20 contract (no code at the address?)`);
    }
    return BigInt(v);
  }

  /**
   * eth_sendRawTransaction. ACCEPTED with the hash; ALREADY_KNOWN when the node has this very
   * transaction (its "already known" answer, or any refusal — "nonce too low" after it was mined —
   * while eth_getTransactionByHash finds it); REJECTED with the node's reason for a refusal of
   * this transaction for good (nonce too low, replacement underpriced, insufficient funds,
   * intrinsic gas too low, fee below the base fee, ...): its nonce stays unused. A refusal for now
   * (pool full, nonce gap, the node's internal error) throws RPC_TRY_LATER; network faults throw.
   */
  async broadcast(tx: SignedTransaction): Promise<BroadcastOutcome> {
    return singleAnswer(this.broadcastMany([tx]));
  }

  /**
   * broadcast for many transactions in one JSON-RPC batch (the node's pool holds a later nonce
   * until the earlier one arrives, so their order does not matter); a refusal for now is that
   * transaction's RPC_TRY_LATER error. Bytes that are not a transaction throw (a caller bug).
   */
  async broadcastMany(txs: readonly SignedTransaction[]): Promise<Array<BroadcastOutcome | Error>> {
    const hashes = txs.map((tx) => {
      if (!tx || !(tx.raw instanceof Uint8Array) || tx.raw.length === 0) throw new TypeError('broadcast: tx.raw must be the signed transaction bytes');
      const txHash = keccak256(tx.raw);
      if (typeof tx.txHash !== 'string' || tx.txHash.toLowerCase() !== txHash) throw new TypeError(`broadcast: tx.txHash ${tx.txHash} is not the hash of tx.raw (${txHash})`);
      return txHash;
    });
    if (txs.length === 0) return [];
    await this.checkChain();
    const sent = await this.rpc.batch(txs.map((tx) => ({ method: 'eth_sendRawTransaction', params: [hexlify(tx.raw)] })));
    return Promise.all(sent.map(async (s, i): Promise<BroadcastOutcome | Error> => {
      const txHash = hashes[i]!;
      try {
        if (!s.ok) return await this.refusal(s, txHash);
        if (typeof s.result !== 'string' || s.result.toLowerCase() !== txHash) throw this.read.bad(`eth_sendRawTransaction answered ${JSON.stringify(s.result)}, not the transaction's hash ${txHash}`);
        return { outcome: 'ACCEPTED', txHash };
      } catch (e) {
        return asError(e);
      }
    }));
  }

  /** eth_blockNumber. */
  async tipHeight(): Promise<bigint> {
    await this.checkChain();
    return this.read.quantityResult(await this.rpc.call('eth_blockNumber'), 'eth_blockNumber');
  }

  /**
   * Receipt, transaction and tip in one batch: MINED (height, block hash, confirmations = tip −
   * height + 1, status, fee = gasUsed × effectiveGasPrice, plus the receipt's l1Fee on rollups
   * that report one, and the receipt's logs: emitter EIP-55, topics and data lower-case),
   * PENDING (known, in no block), UNKNOWN (never seen, dropped or replaced).
   */
  async status(txHash: string): Promise<TransactionState> {
    if (typeof txHash !== 'string' || !HASH.test(txHash)) throw new TypeError('status: txHash must be 0x + 64 hex digits');
    await this.checkChain();
    for (let attempt = 1; ; attempt++) {
      const [tx, receipt, tip] = await this.rpc.batchResults([
        { method: 'eth_getTransactionByHash', params: [txHash] },
        { method: 'eth_getTransactionReceipt', params: [txHash] },
        { method: 'eth_blockNumber', params: [] },
      ]);
      if (receipt !== null && receipt !== undefined) return this.mined(receipt, tx, this.read.quantityResult(tip, 'eth_blockNumber'), txHash);
      if (tx === null || tx === undefined) return { state: 'UNKNOWN' };
      const t = this.read.object(tx, `transaction ${txHash}`);
      if (t.blockNumber === null || t.blockNumber === undefined) return { state: 'PENDING' };
      // In a block without a receipt: mined a moment ago, or reorged between the reads.
      if (attempt >= 3) throw new ChainRpcError('RPC_INCONSISTENT', `${this.rpc.endpointName}: transaction ${txHash} is in a block but has no receipt`);
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }

  /**
   * status for many hashes: one batch of receipts and the tip, then the transactions of those
   * without a receipt (pending, or unknown) in a second; the rare one in a block without a
   * receipt is asked again on its own (status).
   */
  async statusMany(txHashes: readonly string[]): Promise<Array<TransactionState | Error>> {
    for (const h of txHashes) if (typeof h !== 'string' || !HASH.test(h)) throw new TypeError('status: txHash must be 0x + 64 hex digits');
    if (txHashes.length === 0) return [];
    await this.checkChain();
    const first = await this.rpc.batch([{ method: 'eth_blockNumber', params: [] }, ...txHashes.map((h) => ({ method: 'eth_getTransactionReceipt', params: [h] }))]);
    const tip = this.read.quantityResult(this.rpc.unwrap(first[0]!, 'eth_blockNumber'), 'eth_blockNumber');
    const out: Array<TransactionState | Error | undefined> = new Array(txHashes.length);
    const unmined: number[] = [];
    const oldReceipts: number[] = [];
    txHashes.forEach((h, i) => {
      const r = first[i + 1]!;
      try {
        const receipt = this.rpc.unwrap(r, 'eth_getTransactionReceipt');
        if (receipt === null || receipt === undefined) unmined.push(i);
        // a node before London has no effectiveGasPrice: the fee needs the transaction's gasPrice (status reads both)
        else if (typeof receipt === 'object' && ((receipt as Json).effectiveGasPrice === undefined || (receipt as Json).effectiveGasPrice === null)) oldReceipts.push(i);
        else out[i] = this.mined(receipt, null, tip, h);
      } catch (e) {
        out[i] = asError(e);
      }
    });
    if (unmined.length > 0) {
      const txs = await this.rpc.batch(unmined.map((i) => ({ method: 'eth_getTransactionByHash', params: [txHashes[i]] })));
      await Promise.all(unmined.map(async (i, k) => {
        try {
          const tx = this.rpc.unwrap(txs[k]!, 'eth_getTransactionByHash');
          if (tx === null || tx === undefined) out[i] = { state: 'UNKNOWN' };
          else if (this.read.object(tx, `transaction ${txHashes[i]}`).blockNumber === null || (tx as Json).blockNumber === undefined) out[i] = { state: 'PENDING' };
          else out[i] = await this.status(txHashes[i]!); // mined since the receipts were read, or reorged: ask again
        } catch (e) {
          out[i] = asError(e);
        }
      }));
    }
    await Promise.all(oldReceipts.map(async (i) => {
      try {
        out[i] = await this.status(txHashes[i]!);
      } catch (e) {
        out[i] = asError(e);
      }
    }));
    return out as Array<TransactionState | Error>;
  }

  // ---- internals ----

  private fees1559(baseFee: bigint, tipOutcome: JsonRpcOutcome) {
    // A node without eth_maxPriorityFeePerGas (method not found, or any refusal): the default tip.
    const tip = tipOutcome.ok ? this.read.quantityResult(tipOutcome.result, 'eth_maxPriorityFeePerGas') : this.defaultTip;
    return { maxFeePerGas: (baseFee * this.baseFeeMultiplier + tip).toString(), maxPriorityFeePerGas: tip.toString(), gasPrice: null };
  }

  private async refusal(sent: Extract<JsonRpcOutcome, { ok: false }>, txHash: string): Promise<BroadcastOutcome> {
    const reason = this.rpc.redact(sent.rpc.message);
    if (ALREADY_KNOWN.test(sent.rpc.message)) return { outcome: 'ALREADY_KNOWN', txHash };
    // Ambiguous ("nonce too low": ours, mined already, or another transaction at that nonce): ask.
    const known = await this.rpc.call('eth_getTransactionByHash', [txHash]);
    if (known !== null && known !== undefined) return { outcome: 'ALREADY_KNOWN', txHash };
    if (TRY_LATER.test(sent.rpc.message) || TRY_LATER_CODES.has(sent.rpc.code)) {
      throw new ChainRpcError('RPC_TRY_LATER', `${this.rpc.endpointName}: eth_sendRawTransaction refused ${txHash} for now: ${reason} (JSON-RPC error ${sent.rpc.code}); broadcast it again later`, { method: 'eth_sendRawTransaction', rpcCode: sent.rpc.code });
    }
    return { outcome: 'REJECTED', reason: `${reason} (JSON-RPC error ${sent.rpc.code})` };
  }

  private mined(receipt: unknown, tx: unknown, tip: bigint, txHash: string): TransactionState {
    const r = this.read.object(receipt, `receipt of ${txHash}`);
    const blockHeight = this.read.quantity(r, 'blockNumber', 'receipt');
    const gasUsed = this.read.quantity(r, 'gasUsed', 'receipt');
    let price: bigint | null = null;
    if (r.effectiveGasPrice !== undefined && r.effectiveGasPrice !== null) price = this.read.quantity(r, 'effectiveGasPrice', 'receipt');
    else if (tx && typeof tx === 'object' && (tx as Json).gasPrice !== undefined) price = this.read.quantity(tx as Json, 'gasPrice', 'transaction'); // nodes before London
    const l1Fee = r.l1Fee === undefined || r.l1Fee === null ? 0n : this.read.quantity(r, 'l1Fee', 'receipt');
    const logs = this.read.logs(r, `receipt of ${txHash}`);
    return {
      state: 'MINED',
      blockHeight,
      blockHash: this.read.hash(r, 'blockHash', 'receipt'),
      // A lagging backend behind a load balancer may report a tip below the receipt's block: count 1.
      confirmations: Number(tip >= blockHeight ? tip - blockHeight + 1n : 1n),
      succeeded: this.read.status(r, `receipt of ${txHash}`),
      fee: price === null ? null : gasUsed * price + l1Fee,
      ...(logs === undefined ? {} : { logs }),
    };
  }

  private address(v: string, what: string): string {
    const r = this.codec.validate(v);
    if (!r.valid) throw new TypeError(`${what} ${JSON.stringify(v)} is not a valid EVM address: ${r.reason}`);
    return r.normalized;
  }
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}
