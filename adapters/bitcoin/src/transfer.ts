import { address as btcAddress, crypto as btcCrypto, Psbt, script as btcScript, Transaction } from 'bitcoinjs-lib';
import type {
  JsonValue, KeySignature, PublicKey, SignedTransaction, SpendableOutput, TransferCrafter, TransferInput, TransferRequest, UnsignedTransfer,
} from '@wcs/core';
import { BitcoinAddressCodec } from './address';
import { isLowS, splitSignature, verifyDigest } from './ecdsa';
import type { BitcoinNetwork } from './network';

// ---- Errors -----------------------------------------------------------------------------------

/**
 * Stable codes of crafting failures (the request, its input or the signatures; never I/O).
 * - INVALID_REQUEST: the request or the transfer input is not one this adapter can craft (memo or
 *   contract set, `from` not the P2WPKH address of `fromPublicKey`, a bad address, malformed or
 *   duplicate inputs, a malformed fee rate, a transaction above the standard size).
 * - AMOUNT_BELOW_DUST: the payment would be a dust output for its script type (nodes refuse it).
 * - INSUFFICIENT_INPUTS: the inputs do not cover amount + fee; `shortfall` says by how much.
 * - INVALID_SIGNATURE: combine(): a signature is missing, malformed, high-S, or not the key's
 *   signature of its payload (`inputIndex` says which).
 * - INVALID_STATE: combine(): the unsigned transfer is not one craft() made (state or payloads altered).
 */
export type BitcoinTransferErrorCode = 'INVALID_REQUEST' | 'AMOUNT_BELOW_DUST' | 'INSUFFICIENT_INPUTS' | 'INVALID_SIGNATURE' | 'INVALID_STATE';

export class BitcoinTransferError extends Error {
  readonly code: BitcoinTransferErrorCode;
  /** INSUFFICIENT_INPUTS: satoshis missing (amount + fee − inputs); null otherwise. */
  readonly shortfall: bigint | null;
  /** INVALID_SIGNATURE / INVALID_STATE: the input concerned, when one is. */
  readonly inputIndex: number | null;

  constructor(code: BitcoinTransferErrorCode, message: string, extra: { shortfall?: bigint; inputIndex?: number; cause?: unknown } = {}) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'BitcoinTransferError';
    this.code = code;
    this.shortfall = extra.shortfall ?? null;
    this.inputIndex = extra.inputIndex ?? null;
  }
}

export function isBitcoinTransferError(e: unknown): e is BitcoinTransferError {
  return e instanceof BitcoinTransferError;
}

const invalid = (message: string, cause?: unknown) => new BitcoinTransferError('INVALID_REQUEST', message, { cause });

// ---- Fee rates, sizes, dust -------------------------------------------------------------------

/** 21 million BTC in satoshis: no amount is larger. */
export const MAX_MONEY = 2_100_000_000_000_000n;
/** BIP-125 opt-in replace-by-fee: the sequence of every input (also enables nLockTime). */
export const RBF_SEQUENCE = 0xfffffffd;
/** Bitcoin Core's MAX_STANDARD_TX_WEIGHT: larger transactions are not relayed. */
export const MAX_STANDARD_WEIGHT = 400_000;
/** Virtual bytes one P2WPKH input adds: 41 bytes outside the witness, 108 witness bytes (72-byte signature). */
export const P2WPKH_INPUT_VBYTES = 68;
/** Bitcoin Core's default -dustrelayfee, sat/kvB. */
const DUST_RELAY_FEE = 3000;

const FEE_RATE_RE = /^(0|[1-9]\d{0,8})(?:\.(\d{1,3}))?$/;

/**
 * A fee rate in sat/vB, written as a decimal string with at most 3 decimals ("1", "2.5", "12.345"),
 * as sat/kvB (the unit of the node's BTC/kvB estimates: 0.00001234 BTC/kvB = 1234 sat/kvB =
 * "1.234" sat/vB). Positive, below 10^9 sat/vB. Throws INVALID_REQUEST otherwise.
 */
export function parseFeeRate(text: unknown): bigint {
  const m = typeof text === 'string' ? FEE_RATE_RE.exec(text) : null;
  if (!m) throw invalid(`feeRate must be sat/vB as a decimal string with at most 3 decimals (got ${JSON.stringify(text)})`);
  const satPerKvB = BigInt(m[1]!) * 1000n + BigInt((m[2] ?? '').padEnd(3, '0'));
  if (satPerKvB <= 0n) throw invalid('feeRate must be positive');
  return satPerKvB;
}

/** sat/kvB as the sat/vB decimal text parseFeeRate reads ("1234" sat/kvB → "1.234"). */
export function formatFeeRate(satPerKvB: bigint): string {
  if (typeof satPerKvB !== 'bigint' || satPerKvB <= 0n) throw new RangeError('a fee rate is a positive bigint (sat/kvB)');
  const whole = satPerKvB / 1000n;
  const frac = (satPerKvB % 1000n).toString().padStart(3, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : `${whole}`;
}

const varIntSize = (n: number): number => (n < 0xfd ? 1 : n <= 0xffff ? 3 : n <= 0xffffffff ? 5 : 9);

/**
 * Weight of a version-2 transaction spending `inputCount` P2WPKH outputs to outputs with these
 * script lengths, every signature counted at its worst case: 72 bytes (a DER signature is at most
 * 71 bytes when s is low, as the KeyStore contract guarantees: 6 bytes of framing, r up to 33
 * bytes with its sign padding, s up to 32; plus the sighash byte). Actual signatures are 71 or 72
 * bytes, so the real weight is at most this, and the fee rate paid at least the one asked.
 *
 * Outside the witness: version 4, input count, per input 32 + 4 + 1 (empty scriptSig) + 4,
 * output count, per output 8 + script length prefix + script, locktime 4. Witness: marker and
 * flag 2, per input 1 (item count) + 1 + 72 (signature) + 1 + 33 (compressed key).
 */
export function p2wpkhSpendWeight(inputCount: number, outputScriptLengths: readonly number[]): number {
  let base = 4 + varIntSize(inputCount) + 41 * inputCount + varIntSize(outputScriptLengths.length) + 4;
  for (const len of outputScriptLengths) base += 8 + varIntSize(len) + len;
  return base * 4 + 2 + 108 * inputCount;
}

/** Virtual size (BIP-141): weight / 4 rounded up. */
export function p2wpkhSpendVsize(inputCount: number, outputScriptLengths: readonly number[]): number {
  return Math.ceil(p2wpkhSpendWeight(inputCount, outputScriptLengths) / 4);
}

/** The fee of `vsize` virtual bytes at satPerKvB, rounded up to the satoshi. */
export function feeForVsize(vsize: number, satPerKvB: bigint): bigint {
  return (satPerKvB * BigInt(vsize) + 999n) / 1000n;
}

/** Whether a script is a witness program (OP_0..OP_16 and one 2-40 byte push: BIP-141). */
function isWitnessProgram(script: Uint8Array): boolean {
  const op = script[0]!;
  return script.length >= 4 && script.length <= 42 && (op === 0x00 || (op >= 0x51 && op <= 0x60)) && script[1] === script.length - 2;
}

/**
 * Bitcoin Core's dust threshold of an output (GetDustThreshold at the default dust relay fee of
 * 3 sat/vB): what the output plus an input spending it would cost. P2WPKH 294, P2WSH and P2TR
 * 330, P2SH 540, P2PKH 546 satoshis. An output below it is not relayed.
 */
export function dustThreshold(script: Uint8Array): bigint {
  const outputSize = 8 + varIntSize(script.length) + script.length;
  const spendSize = isWitnessProgram(script) ? 32 + 4 + 1 + Math.floor(107 / 4) + 4 : 32 + 4 + 1 + 107 + 4;
  return BigInt(Math.ceil((DUST_RELAY_FEE * (outputSize + spendSize)) / 1000));
}

// ---- Scripts ----------------------------------------------------------------------------------

/** P2WPKH output script of a key hash: OP_0 <20>. */
function p2wpkhScript(hash: Uint8Array): Uint8Array {
  return Uint8Array.from([0x00, 0x14, ...hash]);
}

/** BIP-143 scriptCode of a P2WPKH input: the P2PKH script of its key hash. */
function p2wpkhScriptCode(hash: Uint8Array): Uint8Array {
  return Uint8Array.from([0x76, 0xa9, 0x14, ...hash, 0x88, 0xac]);
}

/**
 * The output script paying `address`, which must already be valid for `network`
 * (BitcoinAddressCodec.validate): P2WPKH / P2WSH (v0), P2TR (v1), P2PKH, P2SH.
 */
export function addressScript(address: string, network: BitcoinNetwork): Uint8Array {
  let segwit: { version: number; data: Uint8Array } | null = null;
  try {
    segwit = btcAddress.fromBech32(address);
  } catch {
    // not bech32: base58 below
  }
  if (segwit) return Uint8Array.from([segwit.version === 0 ? 0x00 : 0x50 + segwit.version, segwit.data.length, ...segwit.data]);
  const { version, hash } = btcAddress.fromBase58Check(address);
  if (version === network.p2pkhVersion) return Uint8Array.from([0x76, 0xa9, 0x14, ...hash, 0x88, 0xac]);
  if (version === network.p2shVersion) return Uint8Array.from([0xa9, 0x14, ...hash, 0x87]);
  throw invalid(`address ${address} has base58 version 0x${version.toString(16)}, not one of ${network.name}`);
}

// ---- The plan of a spend: fee and change -------------------------------------------------------

/** What a set of inputs pays: the fee and the change (null when there is none). */
export interface SpendPlan {
  readonly fee: bigint;
  readonly change: bigint | null;
  /** Virtual size the fee was computed for (worst-case signatures). */
  readonly vsize: number;
}

type PlanResult = { readonly ok: true; readonly plan: SpendPlan } | { readonly ok: false; readonly shortfall: bigint };

interface Shape {
  readonly paymentScriptLength: number;
  readonly changeScriptLength: number;
  readonly changeDust: bigint;
}

/**
 * The one rule craft() and selectInputs() share. Without change the fee is feeRate × vsize; if
 * the inputs fall short of amount + that fee, the shortfall is the difference. With a change
 * output the fee is that of the larger transaction, and the change what is left; a change below
 * the change script's dust threshold is not made and goes to the fee instead.
 */
function planSpend(total: bigint, inputCount: number, amount: bigint, satPerKvB: bigint, shape: Shape): PlanResult {
  const vsizeNoChange = p2wpkhSpendVsize(inputCount, [shape.paymentScriptLength]);
  const feeNoChange = feeForVsize(vsizeNoChange, satPerKvB);
  if (total < amount + feeNoChange) return { ok: false, shortfall: amount + feeNoChange - total };
  const vsizeChange = p2wpkhSpendVsize(inputCount, [shape.paymentScriptLength, shape.changeScriptLength]);
  const feeChange = feeForVsize(vsizeChange, satPerKvB);
  const change = total - amount - feeChange;
  if (change >= shape.changeDust) return { ok: true, plan: { fee: feeChange, change, vsize: vsizeChange } };
  return { ok: true, plan: { fee: total - amount, change: null, vsize: vsizeNoChange } };
}

// ---- Input selection --------------------------------------------------------------------------

const TXID_RE = /^[0-9a-f]{64}$/;

function checkOutput(o: SpendableOutput, what: string): void {
  if (o === null || typeof o !== 'object') throw invalid(`${what} is not an output`);
  if (typeof o.txHash !== 'string' || !TXID_RE.test(o.txHash)) throw invalid(`${what}: txHash must be a txid (64 lower-case hex characters)`);
  if (!Number.isInteger(o.vout) || o.vout < 0 || o.vout > 0xffffffff) throw invalid(`${what}: vout must be an integer from 0 to 2^32-1`);
  if (typeof o.amount !== 'bigint' || o.amount <= 0n || o.amount > MAX_MONEY) throw invalid(`${what}: amount must be a positive bigint of satoshis`);
}

function checkAmount(amount: bigint): void {
  if (typeof amount !== 'bigint' || amount <= 0n || amount > MAX_MONEY) throw invalid('amount must be a positive bigint of satoshis, at most 21 million BTC');
}

/** Checks every output and that none appears twice (the same outpoint can only be spent once). */
function checkOutputs(outputs: readonly SpendableOutput[], what: string): void {
  const seen = new Set<string>();
  outputs.forEach((o, i) => {
    checkOutput(o, `${what}[${i}]`);
    const key = `${o.txHash}:${o.vout}`;
    if (seen.has(key)) throw invalid(`${what}[${i}]: output ${key} appears twice`);
    seen.add(key);
  });
}

/** Deterministic order: amount descending, then txid and vout ascending. */
function byValue(a: SpendableOutput, b: SpendableOutput): number {
  if (a.amount !== b.amount) return a.amount > b.amount ? -1 : 1;
  if (a.txHash !== b.txHash) return a.txHash < b.txHash ? -1 : 1;
  return a.vout - b.vout;
}

export interface SelectionOptions {
  /** The payment's output script (its size counts in the fee); default a P2WPKH script. */
  readonly paymentScript?: Uint8Array;
  /** The change's output script (its size and dust threshold); default a P2WPKH script. */
  readonly changeScript?: Uint8Array;
  /**
   * Most inputs in one transaction (default 1000: about 68 000 vB, below the 100 000 vB standard
   * limit). The shortfall is then what the `maxInputs` largest worthwhile outputs lack.
   */
  readonly maxInputs?: number;
  /** Search steps of branch-and-bound before largest-first is used (default 100 000). */
  readonly maxTries?: number;
}

/** The outcome of selectInputs. */
export type InputSelection =
  | {
    readonly ok: true;
    /** The outputs to spend, each once, in the order craft() should get them. */
    readonly inputs: readonly SpendableOutput[];
    /** The fee and change craft() computes for them (same rule). */
    readonly fee: bigint;
    readonly change: bigint | null;
    readonly method: 'branch-and-bound' | 'largest-first';
  }
  | {
    readonly ok: false;
    /**
     * Satoshis missing: amount + fee of a transaction spending every worthwhile output (at most
     * maxInputs, largest first) without change, minus their sum. With no worthwhile output at all,
     * amount + the fee of a one-input transaction. One more output covers the withdrawal when it is
     * worth at least shortfall + its own input's fee (68 vB × fee rate).
     */
    readonly shortfall: bigint;
  };

const P2WPKH_PLACEHOLDER = p2wpkhScript(new Uint8Array(20));

/**
 * The service's UTXO selection for a withdrawal of `amount` at `feeRate` (sat/vB text, as in the
 * transfer input): pure and deterministic for the same arguments (outputs ordered by amount
 * descending, then txid and vout, whatever the order of `available`). An output is never chosen
 * twice (a duplicate in `available` is refused), and outputs worth no more than the fee of
 * spending them (68 vB × fee rate) are never chosen.
 *
 * Method, after Bitcoin Core's: two candidates, the cheaper one wins.
 * - branch-and-bound (Erhardt 2016): a changeless set, one whose excess over amount + fee is too
 *   small for a change output (craft() gives it to the fee), with the lowest cost (everything
 *   above `amount` goes to the fee: cost = total − amount), then the fewest inputs; depth-first
 *   over the ordered outputs, at most `maxTries` steps.
 * - largest-first: the largest outputs until amount + fee is covered (the fewest inputs
 *   possible), usually with change; its cost is the fee plus, when it makes change, the fee of
 *   spending that change later (68 vB at the same rate).
 * The changeless set is used when it costs no more than largest-first.
 */
export function selectInputs(available: readonly SpendableOutput[], amount: bigint, feeRate: string, options: SelectionOptions = {}): InputSelection {
  checkAmount(amount);
  if (!Array.isArray(available)) throw invalid('available must be an array of outputs');
  checkOutputs(available, 'available');
  const satPerKvB = parseFeeRate(feeRate);
  const changeScript = options.changeScript ?? P2WPKH_PLACEHOLDER;
  const shape: Shape = {
    paymentScriptLength: (options.paymentScript ?? P2WPKH_PLACEHOLDER).length,
    changeScriptLength: changeScript.length,
    changeDust: dustThreshold(changeScript),
  };
  const maxInputs = options.maxInputs ?? 1000;
  const maxTries = options.maxTries ?? 100_000;
  if (!Number.isInteger(maxInputs) || maxInputs < 1) throw new RangeError('maxInputs must be a positive integer');
  if (!Number.isInteger(maxTries) || maxTries < 0) throw new RangeError('maxTries must be a non-negative integer');

  const inputFee = feeForVsize(P2WPKH_INPUT_VBYTES, satPerKvB);
  const pool = available.filter((o) => o.amount > inputFee).sort(byValue);
  const limit = Math.min(pool.length, maxInputs);
  // Fees without / with change for 0..limit+1 inputs (the same sizes planSpend computes).
  const fees = Array.from({ length: limit + 2 }, (_, n) => ({
    none: feeForVsize(p2wpkhSpendVsize(n, [shape.paymentScriptLength]), satPerKvB),
    change: feeForVsize(p2wpkhSpendVsize(n, [shape.paymentScriptLength, shape.changeScriptLength]), satPerKvB),
  }));

  let total = 0n;
  let largest: InputSelection | null = null;
  for (let n = 1; n <= limit; n++) {
    total += pool[n - 1]!.amount;
    const planned = planSpend(total, n, amount, satPerKvB, shape);
    if (planned.ok) {
      largest = { ok: true, inputs: pool.slice(0, n), fee: planned.plan.fee, change: planned.plan.change, method: 'largest-first' };
      break;
    }
  }
  if (largest === null || !largest.ok) {
    // The largest `limit` outputs do not cover: no set of at most maxInputs outputs does.
    return limit === 0 ? { ok: false, shortfall: amount + fees[1]!.none } : { ok: false, shortfall: amount + fees[limit]!.none - total };
  }
  const largestCost = largest.fee + (largest.change === null ? 0n : inputFee);
  const changeless = branchAndBound(pool, amount, fees, shape.changeDust, limit, maxTries);
  if (changeless && sum(changeless) - amount <= largestCost) {
    const planned = planSpend(sum(changeless), changeless.length, amount, satPerKvB, shape);
    if (planned.ok && planned.plan.change === null) return { ok: true, inputs: changeless, fee: planned.plan.fee, change: null, method: 'branch-and-bound' };
  }
  return largest;
}

function sum(outputs: readonly SpendableOutput[]): bigint {
  return outputs.reduce((s, o) => s + o.amount, 0n);
}

/**
 * Depth-first search over `pool` (ordered, every output worth more than its input fee, so adding
 * one always raises the excess) for a changeless set of at most `limit` outputs: excess =
 * total − amount − fee(no change) ≥ 0 and total − amount − fee(with change) below the change's
 * dust threshold. Keeps the set of the lowest cost (total − amount: the fee it pays), then the
 * fewest inputs, then the first found. Null when none is found within maxTries steps.
 */
function branchAndBound(
  pool: readonly SpendableOutput[], amount: bigint, fees: ReadonlyArray<{ none: bigint; change: bigint }>, changeDust: bigint, limit: number, maxTries: number,
): SpendableOutput[] | null {
  // after[i]: the sum of pool[i..].
  const after: bigint[] = new Array<bigint>(pool.length + 1).fill(0n);
  for (let i = pool.length - 1; i >= 0; i--) after[i] = after[i + 1]! + pool[i]!.amount;

  let tries = 0;
  let best: { picks: number[]; cost: bigint } | null = null;
  const picks: number[] = [];

  const visit = (i: number, total: bigint): void => {
    if (++tries > maxTries) return;
    const n = picks.length;
    if (n > 0 && total - amount - fees[n]!.none >= 0n) {
      // Covered. Adding more only raises the excess: this branch ends here, a solution or an overshoot.
      const cost = total - amount;
      if (total - amount - fees[n]!.change < changeDust && (best === null || cost < best.cost || (cost === best.cost && n < best.picks.length))) {
        best = { picks: picks.slice(), cost };
      }
      return;
    }
    if (i >= pool.length || n >= limit) return;
    // Any covering set below this node has more inputs and pays at least their fee.
    if (best !== null && fees[n + 1]!.none > (best as { cost: bigint }).cost) return;
    // Even every remaining output (up to the limit) cannot cover: nothing below this node can.
    const room = Math.min(pool.length - i, limit - n);
    if (total + after[i]! - after[i + room]! - amount - fees[n + room]!.none < 0n) return;
    picks.push(i);
    visit(i + 1, total + pool[i]!.amount);
    picks.pop();
    // Leaving pool[i] out: leaving out the equal outputs after it too, since a set that takes one
    // of them in its place is one the branch above already saw.
    let j = i + 1;
    while (j < pool.length && pool[j]!.amount === pool[i]!.amount) j++;
    visit(j, total);
  };
  visit(0, 0n);
  const found = best as { picks: number[]; cost: bigint } | null;
  return found ? found.picks.map((k) => pool[k]!) : null;
}

// ---- The crafter ------------------------------------------------------------------------------

/** Version tag of UnsignedTransfer.state. */
const STATE_FORMAT = 'wcs-btc-p2wpkh/1';

/** UnsignedTransfer.state of this adapter (JSON). */
interface CraftState {
  readonly format: typeof STATE_FORMAT;
  /** BIP-174 PSBT (base64) of the unsigned transaction, each input with its witnessUtxo. */
  readonly psbt: string;
  /** The hot key (33 bytes, hex) every input is signed with. */
  readonly publicKey: string;
  /** Decimal satoshis. */
  readonly fee: string;
  /** The change output (vout 1), or null. */
  readonly change: { readonly vout: number; readonly amount: string } | null;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;

/** Txid (display order) → the input's hash field (internal byte order). */
function txidBytes(txid: string): Uint8Array {
  return Uint8Array.from(Buffer.from(txid, 'hex').reverse());
}

function readState(unsigned: UnsignedTransfer): CraftState {
  const s = unsigned?.state as Partial<CraftState> | null;
  const ok = s !== null && typeof s === 'object' && !Array.isArray(s) && s.format === STATE_FORMAT && typeof s.psbt === 'string'
    && typeof s.publicKey === 'string' && /^0[23][0-9a-f]{64}$/.test(s.publicKey) && typeof s.fee === 'string' && /^\d+$/.test(s.fee)
    && (s.change === null || (typeof s.change === 'object' && s.change.vout === 1 && typeof s.change.amount === 'string' && /^\d+$/.test(s.change.amount)));
  if (!ok) throw new BitcoinTransferError('INVALID_STATE', `the unsigned transfer's state is not a ${STATE_FORMAT} state made by craft()`);
  return s as CraftState;
}

/**
 * The change output of a crafted transfer, as the service records it in its UTXO table once the
 * transaction is broadcast (txid known before signing), or null when craft() made no change.
 */
export function transferChange(unsigned: UnsignedTransfer): SpendableOutput | null {
  const state = readState(unsigned);
  if (state.change === null) return null;
  if (typeof unsigned.txHash !== 'string') throw new BitcoinTransferError('INVALID_STATE', 'the unsigned transfer has no txHash');
  return { txHash: unsigned.txHash, vout: state.change.vout, amount: BigInt(state.change.amount) };
}

/**
 * Offline withdrawal crafting for P2WPKH hot wallets (BIP-84 keys of purpose 'hot').
 *
 * craft(): a version-2 transaction, locktime 0, spending `request.inputs` in the given order (all
 * P2WPKH outputs of `request.fromPublicKey`, each input signalling BIP-125 RBF with sequence
 * 0xfffffffd), paying `amount` to `to` at vout 0 and the change, when it is at least its dust
 * threshold, to `changeAddress` at vout 1 (else it goes to the fee). fee = input.feeRate (sat/vB,
 * 3 decimals at most) × the virtual size with 72-byte signatures, rounded up; maxFee = that fee.
 * payloads: the BIP-143 SIGHASH_ALL digest of each input (it commits to the input's amount: a
 * wrong amount in the request makes the signature invalid on chain, never a different fee).
 * txHash: the txid, which segwit makes independent of the signatures. state: the PSBT (base64),
 * the key, the fee and the change output. Same request and input → same bytes.
 *
 * combine(): checks the payloads are those of the PSBT, each signature (r || s, low S) against
 * its digest and the key, writes DER signature + SIGHASH_ALL and the key into each witness, and
 * returns the raw transaction and its txid (the one craft() announced).
 */
export class BitcoinTransferCrafter implements TransferCrafter {
  private readonly codec: BitcoinAddressCodec;

  constructor(private readonly network: BitcoinNetwork) {
    this.codec = new BitcoinAddressCodec(network);
  }

  /** The output script of a withdrawal destination or change address of this network; throws INVALID_REQUEST when invalid. */
  scriptOf(address: string, field = 'address'): Uint8Array {
    const v = this.codec.validate(address, null);
    if (!v.valid) throw invalid(`${field}: ${v.reason}`);
    return addressScript(v.normalized, this.network);
  }

  /**
   * selectInputs() for a request's destination and change address (their script sizes and the
   * change's dust threshold), at the transfer input's fee rate.
   */
  selectInputs(available: readonly SpendableOutput[], request: Pick<TransferRequest, 'to' | 'amount' | 'changeAddress'>, input: TransferInput, options: Omit<SelectionOptions, 'paymentScript' | 'changeScript'> = {}): InputSelection {
    if (typeof request.changeAddress !== 'string') throw invalid('changeAddress is required');
    return selectInputs(available, request.amount, input['feeRate'] as string, {
      ...options,
      paymentScript: this.scriptOf(request.to, 'to'),
      changeScript: this.scriptOf(request.changeAddress, 'changeAddress'),
    });
  }

  craft(request: TransferRequest, input: TransferInput): UnsignedTransfer {
    if (request.memo !== null) throw invalid('bitcoin transfers carry no memo (memo must be null)');
    if (request.contract !== null) throw invalid('bitcoin transfers are native BTC only (contract must be null)');
    checkAmount(request.amount);
    const publicKey = this.hotKey(request.fromPublicKey);
    let own: string;
    try {
      own = this.codec.addressFromPublicKey({ curve: 'secp256k1', bytes: publicKey });
    } catch (e) {
      throw invalid(`fromPublicKey: ${(e as Error).message}`, e);
    }
    if (request.from !== own) throw invalid(`from ${JSON.stringify(request.from)} is not the P2WPKH address of fromPublicKey (${own})`);
    const toScript = this.scriptOf(request.to, 'to');
    if (typeof request.changeAddress !== 'string') throw invalid('changeAddress is required');
    const changeScript = this.scriptOf(request.changeAddress, 'changeAddress');
    const inputs = request.inputs;
    if (!Array.isArray(inputs) || inputs.length === 0) throw invalid('inputs: at least one output of the hot wallet to spend');
    checkOutputs(inputs, 'inputs');
    if (input === null || typeof input !== 'object') throw invalid('the transfer input must be an object with feeRate');
    const satPerKvB = parseFeeRate(input['feeRate']);

    const dust = dustThreshold(toScript);
    if (request.amount < dust) {
      throw new BitcoinTransferError('AMOUNT_BELOW_DUST', `amount ${request.amount} sat is below the dust threshold of the destination's output type (${dust} sat)`);
    }
    const total = sum(inputs);
    const planned = planSpend(total, inputs.length, request.amount, satPerKvB, {
      paymentScriptLength: toScript.length,
      changeScriptLength: changeScript.length,
      changeDust: dustThreshold(changeScript),
    });
    if (!planned.ok) {
      throw new BitcoinTransferError(
        'INSUFFICIENT_INPUTS',
        `inputs of ${total} sat do not cover amount ${request.amount} + fee; ${planned.shortfall} sat short at ${formatFeeRate(satPerKvB)} sat/vB`,
        { shortfall: planned.shortfall },
      );
    }
    const { fee, change } = planned.plan;
    const weight = p2wpkhSpendWeight(inputs.length, change === null ? [toScript.length] : [toScript.length, changeScript.length]);
    if (weight > MAX_STANDARD_WEIGHT) throw invalid(`${inputs.length} inputs make a transaction of ${weight} weight units, above the standard ${MAX_STANDARD_WEIGHT}`);

    const keyHash = btcCrypto.hash160(publicKey);
    const prevScript = p2wpkhScript(keyHash);
    const scriptCode = p2wpkhScriptCode(keyHash);
    const tx = new Transaction();
    tx.version = 2;
    tx.locktime = 0;
    const psbt = new Psbt();
    psbt.setVersion(2);
    psbt.setLocktime(0);
    for (const o of inputs) {
      tx.addInput(txidBytes(o.txHash), o.vout, RBF_SEQUENCE);
      psbt.addInput({ hash: o.txHash, index: o.vout, sequence: RBF_SEQUENCE, witnessUtxo: { script: prevScript, value: o.amount } });
    }
    tx.addOutput(toScript, request.amount);
    psbt.addOutput({ script: toScript, value: request.amount });
    if (change !== null) {
      tx.addOutput(changeScript, change);
      psbt.addOutput({ script: changeScript, value: change });
    }
    const payloads = inputs.map((o, i) => tx.hashForWitnessV0(i, scriptCode, o.amount, Transaction.SIGHASH_ALL));
    const state: CraftState = {
      format: STATE_FORMAT,
      psbt: psbt.toBase64(),
      publicKey: hex(publicKey),
      fee: fee.toString(),
      change: change === null ? null : { vout: 1, amount: change.toString() },
    };
    return { payloads, maxFee: fee, txHash: tx.getId(), state: state as unknown as JsonValue };
  }

  combine(unsigned: UnsignedTransfer, signatures: readonly KeySignature[]): SignedTransaction {
    const state = readState(unsigned);
    let psbt: Psbt;
    let tx: Transaction;
    try {
      psbt = Psbt.fromBase64(state.psbt);
      tx = Transaction.fromBuffer(psbt.data.getTransaction());
    } catch (e) {
      throw new BitcoinTransferError('INVALID_STATE', `the unsigned transfer's PSBT does not decode (${(e as Error).message})`, { cause: e });
    }
    if (tx.getId() !== unsigned.txHash) throw new BitcoinTransferError('INVALID_STATE', 'the unsigned transfer\'s txHash is not the txid of its PSBT');
    const n = psbt.inputCount;
    if (!Array.isArray(unsigned.payloads) || unsigned.payloads.length !== n) throw new BitcoinTransferError('INVALID_STATE', `the unsigned transfer has ${unsigned.payloads?.length} payloads for ${n} inputs`);
    if (!Array.isArray(signatures) || signatures.length !== n) throw new BitcoinTransferError('INVALID_SIGNATURE', `${n} signatures are needed (one per input), got ${signatures?.length}`);

    const publicKey = Uint8Array.from(Buffer.from(state.publicKey, 'hex'));
    const keyHash = btcCrypto.hash160(publicKey);
    const prevScript = p2wpkhScript(keyHash);
    const scriptCode = p2wpkhScriptCode(keyHash);
    for (let i = 0; i < n; i++) {
      const utxo = psbt.data.inputs[i]?.witnessUtxo;
      if (!utxo || !sameBytes(utxo.script, prevScript)) throw new BitcoinTransferError('INVALID_STATE', `input ${i} of the PSBT is not a P2WPKH output of the state's key`, { inputIndex: i });
      const digest = tx.hashForWitnessV0(i, scriptCode, utxo.value, Transaction.SIGHASH_ALL);
      const payload = unsigned.payloads[i];
      if (!(payload instanceof Uint8Array) || !sameBytes(payload, digest)) {
        throw new BitcoinTransferError('INVALID_STATE', `payload ${i} is not the BIP-143 digest of input ${i} of the PSBT`, { inputIndex: i });
      }
      const sig = signatures[i];
      const what = `signature ${i}`;
      if (!sig || sig.curve !== 'secp256k1' || !(sig.bytes instanceof Uint8Array) || sig.bytes.length !== 64) {
        throw new BitcoinTransferError('INVALID_SIGNATURE', `${what} is not a 64-byte secp256k1 r || s signature`, { inputIndex: i });
      }
      const { s } = splitSignature(sig.bytes);
      if (!isLowS(s)) throw new BitcoinTransferError('INVALID_SIGNATURE', `${what} is not low-S (the KeyStore contract; nodes refuse high S, BIP-146)`, { inputIndex: i });
      if (!verifyDigest(digest, sig.bytes, publicKey)) {
        throw new BitcoinTransferError('INVALID_SIGNATURE', `${what} does not verify against input ${i}'s digest and the hot key ${state.publicKey}`, { inputIndex: i });
      }
      psbt.updateInput(i, { partialSig: [{ pubkey: publicKey, signature: btcScript.signature.encode(sig.bytes, Transaction.SIGHASH_ALL) }] });
    }
    psbt.finalizeAllInputs();
    // The fee was checked at craft(); bitcoinjs-lib's own cap (5000 sat/vB) is not this adapter's policy.
    const signed = psbt.extractTransaction(true);
    const txHash = signed.getId();
    if (txHash !== unsigned.txHash) throw new BitcoinTransferError('INVALID_STATE', `the signed transaction's txid ${txHash} is not ${unsigned.txHash}`);
    return { txHash, raw: signed.toBuffer() };
  }

  private hotKey(key: PublicKey): Uint8Array {
    if (key === null || typeof key !== 'object' || key.curve !== 'secp256k1' || !(key.bytes instanceof Uint8Array) || key.bytes.length !== 33) {
      throw invalid('fromPublicKey must be a 33-byte compressed secp256k1 key');
    }
    return key.bytes;
  }
}
