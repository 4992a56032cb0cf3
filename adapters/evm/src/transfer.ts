import { decodeRlp, encodeRlp, getBytes, hexlify, keccak256, toBeArray, type RlpStructuredData } from 'ethers';
import type { ContractCall, JsonValue, KeySignature, SequenceCrafter, SequenceTransferRequest, SignedTransaction, TransferInput, TransferIntent, UnsignedTransfer } from '@wcs/core';
import { ChainTransferError, recoverSecp256k1, refuseTrustline, requireSenderPays } from '@wcs/core';
import { EvmAddressCodec } from './address';
import { authorizationTuple, checkAuthorization, checkCallData } from './transfer-call';

/**
 * The TransferInput of an EVM transfer, as EvmTransferNode.transferInput reads it from the node
 * and craft() reads it back (stored with the order). Every integer is a decimal string.
 *
 * - `baseFeePerGas` non-null (London and later, the latest block has a base fee): the transfer is
 *   EIP-1559 (type 2) with `maxFeePerGas` and `maxPriorityFeePerGas`; `gasPrice` is null.
 * - `baseFeePerGas` null (no base fee: pre-London chains, anvil --hardfork berlin): the transfer is
 *   legacy EIP-155 (type 0) with `gasPrice`; the two 1559 fields are null.
 */
export interface EvmTransferInput {
  readonly [key: string]: JsonValue;
  readonly format: typeof INPUT_FORMAT;
  /** The node's eth_chainId; craft() refuses an input of another chain. */
  readonly chainId: string;
  /** The block the fees were read at (information). */
  readonly blockHeight: string;
  readonly baseFeePerGas: string | null;
  readonly maxFeePerGas: string | null;
  readonly maxPriorityFeePerGas: string | null;
  readonly gasPrice: string | null;
  /** eth_estimateGas for this transfer (information: gasLimit is what is used). */
  readonly gasEstimate: string;
  readonly gasLimit: string;
  /** eth_getTransactionCount(from, 'pending') when read: the allocator's floor (information; craft uses request.sequence). */
  readonly nextSequence: string;
}

export const INPUT_FORMAT = 'evm-transfer-input/1';
const STATE_FORMAT = 'evm-unsigned/1';

/** The least raise of a replacement's fees nodes accept (geth's and anvil's --txpool.pricebump default), percent. */
export const MIN_FEE_BUMP_PERCENT = 10;

/** secp256k1 group order, and half of it (the low-S bound). */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_N = N >> 1n;
const UINT256_MAX = (1n << 256n) - 1n;
const DECIMAL = /^(0|[1-9][0-9]{0,77})$/;

/** ABI words: a 20-byte address and a uint256, each left-padded to 32 bytes (no checksum work: the address is checked by the caller). */
function word(hex: string): string {
  return hex.padStart(64, '0');
}

/** ABI call data of ERC-20 transfer(to, amount): selector 0xa9059cbb, then the two words. */
export function erc20TransferData(to: string, amount: bigint): string {
  if (!/^0x[0-9a-fA-F]{40}$/.test(to)) throw new TypeError(`erc20 transfer: ${JSON.stringify(to)} is not an address`);
  if (amount < 0n || amount > UINT256_MAX) throw new RangeError('erc20 transfer: the amount must be a uint256');
  return `0xa9059cbb${word(to.slice(2).toLowerCase())}${word(amount.toString(16))}`;
}

/** ABI call data of ERC-20 balanceOf(owner): selector 0x70a08231, then the word. */
export function erc20BalanceOfData(owner: string): string {
  if (!/^0x[0-9a-fA-F]{40}$/.test(owner)) throw new TypeError(`erc20 balanceOf: ${JSON.stringify(owner)} is not an address`);
  return `0x70a08231${word(owner.slice(2).toLowerCase())}`;
}

/** An RLP integer: big-endian, no leading zeros, 0 as the empty string. */
const rlpInt = (n: bigint): Uint8Array => toBeArray(n);

interface ParsedInput {
  readonly eip1559: boolean;
  readonly maxFeePerGas: bigint;
  readonly maxPriorityFeePerGas: bigint;
  readonly gasPrice: bigint;
  readonly gasLimit: bigint;
}

function decimal(o: { readonly [key: string]: JsonValue }, key: string, what: string, nullable: true): bigint | null;
function decimal(o: { readonly [key: string]: JsonValue }, key: string, what: string, nullable?: false): bigint;
function decimal(o: { readonly [key: string]: JsonValue }, key: string, what: string, nullable = false): bigint | null {
  const v = o[key];
  if (v === null && nullable) return null;
  if (typeof v !== 'string' || !DECIMAL.test(v) || BigInt(v) > UINT256_MAX) {
    throw new TypeError(`${what}.${key} must be a decimal string of a uint256${nullable ? ' or null' : ''}, got ${JSON.stringify(v)}`);
  }
  return BigInt(v);
}

/** The fee fields of an input, checked: the fields its kind needs, and nothing contradictory. */
function parseInput(input: TransferInput, chainId: number | null, what: string): ParsedInput {
  if (!input || typeof input !== 'object' || Array.isArray(input)) throw new TypeError(`${what} must be a JSON object`);
  if (input.format !== INPUT_FORMAT) throw new TypeError(`${what}.format must be ${JSON.stringify(INPUT_FORMAT)}, got ${JSON.stringify(input.format)}`);
  const inputChain = decimal(input, 'chainId', what);
  if (chainId !== null && inputChain !== BigInt(chainId)) throw new TypeError(`${what} was read on chain id ${inputChain}, not this chain's ${chainId}`);
  const baseFee = decimal(input, 'baseFeePerGas', what, true);
  const gasLimit = decimal(input, 'gasLimit', what);
  if (gasLimit < 21_000n) throw new TypeError(`${what}.gasLimit ${gasLimit} is below the 21000 every transaction costs`);
  if (baseFee !== null) {
    const maxFeePerGas = decimal(input, 'maxFeePerGas', what);
    const maxPriorityFeePerGas = decimal(input, 'maxPriorityFeePerGas', what);
    if (maxPriorityFeePerGas > maxFeePerGas) throw new TypeError(`${what}: maxPriorityFeePerGas ${maxPriorityFeePerGas} is above maxFeePerGas ${maxFeePerGas}`);
    if (input.gasPrice !== null) throw new TypeError(`${what}: an EIP-1559 input (baseFeePerGas set) has gasPrice null`);
    return { eip1559: true, maxFeePerGas, maxPriorityFeePerGas, gasPrice: 0n, gasLimit };
  }
  const gasPrice = decimal(input, 'gasPrice', what);
  if (input.maxFeePerGas !== null || input.maxPriorityFeePerGas !== null) throw new TypeError(`${what}: a legacy input (baseFeePerGas null) has maxFeePerGas and maxPriorityFeePerGas null`);
  return { eip1559: false, maxFeePerGas: 0n, maxPriorityFeePerGas: 0n, gasPrice, gasLimit };
}

/** x raised by `bps` basis points, rounded up, and by at least 1. */
function raise(x: bigint, bps: bigint): bigint {
  const up = (x * (10_000n + bps) + 9_999n) / 10_000n;
  return up > x ? up : x + 1n;
}

const isBytes = (v: unknown): v is Uint8Array => v instanceof Uint8Array;

/**
 * request.call, checked in shape (null when absent): its data 0x-hex of whole bytes, lower-case,
 * and its authorizations an array (each is checked, signature included, when it is written).
 */
function checkCall(request: TransferIntent): ContractCall | null {
  const call: unknown = request.call;
  if (call === undefined || call === null) return null;
  if (typeof call !== 'object' || Array.isArray(call)) throw new ChainTransferError('INVALID_REQUEST', 'craft: request.call must be a ContractCall { data, authorizations }');
  const { data, authorizations } = call as { data?: unknown; authorizations?: unknown };
  if (!Array.isArray(authorizations)) throw new ChainTransferError('INVALID_REQUEST', 'craft: request.call.authorizations must be an array (empty: an ordinary call)');
  return { data: checkCallData(data, 'craft: request.call.data'), authorizations };
}

/**
 * Offline crafting of EVM withdrawals (no I/O, deterministic): EIP-1559 (type 2) when the input
 * has a base fee, else legacy EIP-155 (type 0); native transfers (to, value), ERC-20
 * transfer(to, amount) (to = the contract, value 0), and contract calls (request.call: to = the
 * contract, value = amount, its data). A call carrying EIP-7702 authorizations is a type 4
 * transaction (EIP-1559 fees only), each authorization checked first: for this chain, low-S, and
 * signed by its authority. Serialization is the RLP of the typed transaction (EIP-2718 /
 * EIP-1559 / EIP-7702, EIP-155), checked against ethers' Transaction in the tests.
 */
export class EvmTransferCrafter implements SequenceCrafter {
  private readonly codec = new EvmAddressCodec();

  /** chainId: the chain's EIP-155 id (chain.evmChainId), signed into every transaction. */
  constructor(readonly chainId: number) {
    if (!Number.isSafeInteger(chainId) || chainId <= 0) throw new TypeError(`chainId must be a positive integer, got ${chainId}`);
  }

  craft(request: SequenceTransferRequest, input: TransferInput): UnsignedTransfer {
    requireSenderPays(request, 'an EVM chain');
    refuseTrustline(request, 'an EVM chain');
    const r = this.checkRequest(request);
    const fees = parseInput(input, this.chainId, 'transfer input');
    const call = r.call !== null
      ? { to: r.to, value: r.amount, data: r.call.data }
      : r.contract === null
        ? { to: r.to, value: r.amount, data: '0x' }
        : { to: r.contract, value: 0n, data: erc20TransferData(r.to, r.amount) };
    // EIP-7702: 0x04 || rlp([chainId, nonce, tip, maxFee, gas, to, value, data, accessList, authorizationList]);
    // EIP-1559: 0x02 || rlp([chainId, nonce, tip, maxFee, gas, to, value, data, accessList]);
    // legacy EIP-155: rlp([nonce, gasPrice, gas, to, value, data, chainId, 0, 0]); the signing hash is keccak256 of it
    const tail = [getBytes(call.to), rlpInt(call.value), getBytes(call.data)];
    const authorizations = r.call?.authorizations ?? [];
    let unsignedSerialized: string;
    if (authorizations.length > 0) {
      if (!fees.eip1559) throw new ChainTransferError('INVALID_REQUEST', 'craft: EIP-7702 authorizations need a type 4 transaction, which has EIP-1559 fees: this input has no base fee (a chain before London cannot run them)');
      const chainId = BigInt(this.chainId);
      const list = authorizations.map((a, i) => authorizationTuple(checkAuthorization(a, chainId, `request.call.authorizations[${i}]`)));
      const fields = [rlpInt(chainId), rlpInt(BigInt(r.nonce)), rlpInt(fees.maxPriorityFeePerGas), rlpInt(fees.maxFeePerGas), rlpInt(fees.gasLimit), ...tail, [], list];
      unsignedSerialized = `0x04${encodeRlp(fields).slice(2)}`;
    } else {
      unsignedSerialized = fees.eip1559
        ? `0x02${encodeRlp([rlpInt(BigInt(this.chainId)), rlpInt(BigInt(r.nonce)), rlpInt(fees.maxPriorityFeePerGas), rlpInt(fees.maxFeePerGas), rlpInt(fees.gasLimit), ...tail, []]).slice(2)}`
        : encodeRlp([rlpInt(BigInt(r.nonce)), rlpInt(fees.gasPrice), rlpInt(fees.gasLimit), ...tail, rlpInt(BigInt(this.chainId)), '0x', '0x']);
    }
    return {
      payloads: [getBytes(keccak256(unsignedSerialized))],
      maxFee: fees.gasLimit * (fees.eip1559 ? fees.maxFeePerGas : fees.gasPrice),
      txHash: null, // the hash covers the signature
      state: { format: STATE_FORMAT, unsigned: unsignedSerialized, from: r.from },
    };
  }

  combine(unsigned: UnsignedTransfer, signatures: readonly KeySignature[]): SignedTransaction {
    const state = unsigned?.state as { format?: unknown; unsigned?: unknown; from?: unknown } | null;
    if (!state || typeof state !== 'object' || state.format !== STATE_FORMAT || typeof state.unsigned !== 'string' || typeof state.from !== 'string') {
      throw new TypeError(`combine: not the state of an EVM transfer crafted here (${STATE_FORMAT})`);
    }
    // the state's transaction, decoded as crafted above (type 4, type 2, or legacy EIP-155)
    let fields: RlpStructuredData[];
    let type: 0 | 2 | 4;
    try {
      type = state.unsigned.startsWith('0x04') ? 4 : state.unsigned.startsWith('0x02') ? 2 : 0;
      const decoded = decodeRlp(type === 0 ? state.unsigned : `0x${state.unsigned.slice(4)}`);
      const count = type === 4 ? 10 : 9;
      if (!Array.isArray(decoded) || decoded.length !== count) throw new Error(`${Array.isArray(decoded) ? decoded.length : 'no'} fields, not ${count}`);
      fields = decoded;
      const emptyList = (v: RlpStructuredData | undefined) => Array.isArray(v) && v.length === 0;
      const crafted = type === 0
        ? fields[7] === '0x' && fields[8] === '0x'
        : emptyList(fields[8]) && (type === 2 || (Array.isArray(fields[9]) && fields[9].length > 0 && fields[9].every((t) => Array.isArray(t) && t.length === 6)));
      if (!crafted || fields.slice(0, 8).some((f) => typeof f !== 'string')) throw new Error('not an unsigned transaction crafted here');
    } catch (e) {
      throw new TypeError(`combine: the unsigned transaction does not parse: ${(e as Error).message}`);
    }
    const chainId = BigInt((type === 0 ? fields[6] : fields[0]) as string);
    if (chainId !== BigInt(this.chainId)) throw new TypeError(`combine: the transaction is for chain id ${chainId}, not ${this.chainId}`);
    if (unsigned.payloads.length !== 1 || !isBytes(unsigned.payloads[0]) || hexlify(unsigned.payloads[0]) !== keccak256(state.unsigned)) {
      throw new TypeError('combine: the payload is not the signing hash of the transaction in the state');
    }
    if (signatures.length !== 1) throw new TypeError(`combine: an EVM transfer takes 1 signature, got ${signatures.length}`);
    const sig = signatures[0]!;
    if (sig.curve !== 'secp256k1' || !isBytes(sig.bytes) || sig.bytes.length !== 64) throw new TypeError('combine: the signature must be secp256k1 r || s, 64 bytes');
    if (sig.recovery !== 0 && sig.recovery !== 1) throw new TypeError(`combine: the signature's recovery id must be 0 or 1, got ${sig.recovery}`);
    const r = BigInt(hexlify(sig.bytes.subarray(0, 32)));
    const s = BigInt(hexlify(sig.bytes.subarray(32, 64)));
    if (r === 0n || r >= N || s === 0n || s >= N) throw new TypeError('combine: r and s must be in [1, n-1]');
    if (s > HALF_N) throw new TypeError('combine: the signature is high-S (EIP-2: nodes refuse it); the KeyStore must return low-S');
    // the signer, by public-key recovery from the signing hash (libsecp256k1 where it loads)
    const key = recoverSecp256k1(sig.bytes, sig.recovery, unsigned.payloads[0]!, false);
    const signer = key === null ? null : `0x${keccak256(key.subarray(1)).slice(-40)}`;
    if (signer === null || signer !== state.from.toLowerCase()) {
      throw new ChainTransferError('WRONG_SIGNER', `combine: the signature recovers ${signer ?? 'no key'}, not the sender ${state.from}: signed with another key or the wrong recovery id`);
    }
    // signed: the unsigned fields with yParity, r, s (EIP-7702, EIP-1559: the same type byte), or with v = chainId * 2 + 35 + recovery, r, s in place of chainId, 0, 0 (EIP-155)
    const signature = [rlpInt(r), rlpInt(s)];
    const raw = type === 0
      ? getBytes(encodeRlp([...fields.slice(0, 6), rlpInt(chainId * 2n + 35n + BigInt(sig.recovery)), ...signature]))
      : getBytes(`0x0${type}${encodeRlp([...fields, rlpInt(BigInt(sig.recovery)), ...signature]).slice(2)}`);
    return { txHash: keccak256(raw), raw };
  }

  /** craft()'s maxFee: gasLimit x maxFeePerGas (legacy: gasPrice), whatever the amount. */
  maxFeeOf(_request: TransferIntent, input: TransferInput): bigint {
    const fees = parseInput(input, this.chainId, 'transfer input');
    return fees.gasLimit * (fees.eip1559 ? fees.maxFeePerGas : fees.gasPrice);
  }

  /**
   * The input for a replacement at the same nonce: maxFeePerGas and maxPriorityFeePerGas (legacy:
   * gasPrice) each raised by `percent` (at least MIN_FEE_BUMP_PERCENT, the least raise nodes
   * accept; rounded up, by 1 wei at least), maxFeePerGas (gasPrice) capped at `cap` wei per gas,
   * the tip at the capped max fee. Null when the cap leaves either raise below MIN_FEE_BUMP_PERCENT.
   * Everything else (gas limit, chain, ...) is kept: craft the same request with it.
   * It raises the stored input's fees only; a caller that sees the network's fees rise faster can
   * bump by more (percent) — see the README.
   */
  bumpFee(input: TransferInput, percent: number, cap: bigint): TransferInput | null {
    const fees = parseInput(input, this.chainId, 'bumpFee input');
    if (typeof percent !== 'number' || !Number.isFinite(percent) || percent < 0) throw new TypeError(`bumpFee: percent must be a finite number >= 0, got ${percent}`);
    if (typeof cap !== 'bigint' || cap <= 0n) throw new TypeError('bumpFee: cap must be a positive bigint (wei per gas)');
    const bps = BigInt(Math.ceil(Math.max(percent, MIN_FEE_BUMP_PERCENT) * 100));
    const least = BigInt(MIN_FEE_BUMP_PERCENT * 100);
    if (!fees.eip1559) {
      const gasPrice = raise(fees.gasPrice, bps) > cap ? cap : raise(fees.gasPrice, bps);
      if (gasPrice < raise(fees.gasPrice, least)) return null;
      return { ...input, gasPrice: gasPrice.toString() };
    }
    const maxFee = raise(fees.maxFeePerGas, bps) > cap ? cap : raise(fees.maxFeePerGas, bps);
    if (maxFee < raise(fees.maxFeePerGas, least)) return null;
    const tip = raise(fees.maxPriorityFeePerGas, bps) > maxFee ? maxFee : raise(fees.maxPriorityFeePerGas, bps);
    if (tip < raise(fees.maxPriorityFeePerGas, least)) return null;
    return { ...input, maxFeePerGas: maxFee.toString(), maxPriorityFeePerGas: tip.toString() };
  }

  /**
   * The input of a transfer whose fee charged is exactly craft()'s maxFee (gasLimit × the price),
   * for sweeps that must leave nothing of the fee behind. EIP-1559: maxPriorityFeePerGas =
   * maxFeePerGas = the price, so the effective price min(maxFee, baseFee + tip) is the price
   * itself in any block that includes it; the price is the most the next block's base fee can be
   * (the latest base fee + 12.5 %, rounded up) plus the tip, never above the input's own
   * maxFeePerGas, and at most `maxFeePerUnit` when given. Legacy: gasPrice, capped the same way.
   * A price below a later block's base fee waits in the pool (the tracker alerts when stuck).
   * The gas limit is the node's estimate itself, without the payout margin: a sweep runs against
   * the state it was estimated on (its sender is only ever spent by the service), so what its
   * top-up funds beyond the gas it uses is only the estimate's own slack (refund headroom).
   */
  exactFee(input: TransferInput, maxFeePerUnit: bigint | null): TransferInput {
    const fees = parseInput(input, this.chainId, 'exactFee input');
    const estimate = decimal(input, 'gasEstimate', 'exactFee input');
    const gasLimit = estimate >= 21_000n && estimate < fees.gasLimit ? estimate.toString() : input.gasLimit;
    if (maxFeePerUnit !== null && (typeof maxFeePerUnit !== 'bigint' || maxFeePerUnit <= 0n)) throw new TypeError('exactFee: maxFeePerUnit must be a positive bigint (wei per gas) or null');
    const capped = (p: bigint) => (maxFeePerUnit !== null && maxFeePerUnit < p ? maxFeePerUnit : p);
    if (!fees.eip1559) return { ...input, gasLimit, gasPrice: capped(fees.gasPrice).toString() };
    const base = decimal(input, 'baseFeePerGas', 'exactFee input');
    const next = base + (base + 7n) / 8n + fees.maxPriorityFeePerGas;
    const price = capped(next < fees.maxFeePerGas ? next : fees.maxFeePerGas);
    return { ...input, gasLimit, maxFeePerGas: price.toString(), maxPriorityFeePerGas: price.toString() };
  }

  /**
   * The request's fields, checked: the type guarantees them to TypeScript callers, these checks
   * refuse what a plain JS caller (or a request read back from storage) may still hand over.
   */
  private checkRequest(request: SequenceTransferRequest): { from: string; to: string; contract: string | null; amount: bigint; nonce: number; call: ContractCall | null } {
    if (!request || typeof request !== 'object') throw new TypeError('craft: request must be a SequenceTransferRequest');
    // a request of another spend model, or without its sequence, as a plain JS caller could pass it
    const loose: { readonly sequence?: unknown; readonly inputs?: unknown; readonly changeAddress?: unknown } = request;
    if (loose.sequence === undefined || loose.sequence === null) throw new TypeError('craft: request.sequence (the nonce allocated to this transfer) is required on EVM chains');
    if (typeof loose.sequence !== 'bigint' || loose.sequence < 0n || loose.sequence > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new TypeError(`craft: request.sequence must be a bigint in [0, 2^53), got ${typeof loose.sequence === 'bigint' ? loose.sequence : `${typeof loose.sequence} ${String(loose.sequence)}`}`);
    }
    if (loose.inputs !== undefined || loose.changeAddress !== undefined) throw new TypeError('craft: inputs / changeAddress are for utxo chains, not EVM');
    if (request.memo !== null && request.memo !== undefined) throw new TypeError('craft: EVM transfers carry no memo');
    const call = checkCall(request);
    const least = call === null ? 1n : 0n; // a call may send no value; a payment moves something
    if (typeof request.amount !== 'bigint' || request.amount < least || request.amount > UINT256_MAX) throw new TypeError(`craft: request.amount must be a bigint in [${least}, 2^256)`);
    const from = this.address(request.from, 'from');
    let keyAddress: string;
    try {
      keyAddress = this.codec.addressFromPublicKey(request.fromPublicKey);
    } catch (e) {
      throw new TypeError(`craft: request.fromPublicKey: ${(e as Error).message}`);
    }
    if (keyAddress !== from) throw new TypeError(`craft: request.fromPublicKey is the key of ${keyAddress}, not of from ${from}`);
    const to = this.address(request.to, 'to');
    const contract = request.contract === null || request.contract === undefined ? null : this.address(request.contract, 'contract');
    if (call !== null && contract !== null) throw new ChainTransferError('INVALID_REQUEST', 'craft: a contract call calls `to` with its own data: contract must be null (a token transfer is not a call here)');
    return { from, to, contract, amount: request.amount, nonce: Number(request.sequence), call };
  }

  private address(v: string, what: string): string {
    const r = this.codec.validate(v);
    if (!r.valid) throw new TypeError(`craft: request.${what} ${JSON.stringify(v)} is not a valid EVM address: ${r.reason}`);
    return r.normalized;
  }
}
