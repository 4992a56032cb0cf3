/**
 * What every spend this adapter crafts shares: its errors, fee rates, virtual sizes, dust
 * thresholds, output scripts and the checks of amounts and outputs.
 */
import { address as btcAddress } from 'bitcoinjs-lib';
import { ChainTransferError, type SpendableOutput } from '@wcs/core';
import type { BitcoinNetwork } from './network';

// ---- Errors -----------------------------------------------------------------------------------

/**
 * Crafting failures (the request, its input or the signatures; never I/O) are core's
 * ChainTransferError, by errorName. Inputs that do not cover a payment's amount + fee are not one:
 * craft() returns them as core's CraftResult `{ ok: false, reason: 'INSUFFICIENT_INPUTS', shortfall }`.
 * The errors:
 * - INVALID_REQUEST: the request or the transfer input is not one this adapter can craft (memo,
 *   contract, fee payer or token account closing set, `from` not the P2WPKH address of
 *   `fromPublicKey`, an input owner's address not the P2WPKH address of its key, a bad address,
 *   malformed or duplicate inputs, a malformed fee rate, a transaction above the standard size;
 *   with `subtractFee`, an amount other than the sum of the inputs). A caller in plain JS is held
 *   to the request's types too: a payment without a string changeAddress, a non-boolean subtractFee.
 * - AMOUNT_BELOW_DUST: the payment would be a dust output for its script type (nodes refuse it).
 * - DUST_AFTER_FEE: `subtractFee` (a consolidation): the inputs less the fee leave a payment below
 *   the destination's dust threshold, or nothing: uneconomic to spend now; `fee` says the fee.
 * - INVALID_SIGNATURE: combine(): a signature is missing, malformed, high-S, or not the key's
 *   signature of its payload (`inputIndex` says which).
 * - INVALID_STATE: combine(): the unsigned transfer is not one craft() made (state or payloads altered).
 */
export const invalid = (message: string, cause?: unknown) => new ChainTransferError('INVALID_REQUEST', message, { cause });

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
export function p2wpkhScript(hash: Uint8Array): Uint8Array {
  return Uint8Array.from([0x00, 0x14, ...hash]);
}

/** BIP-143 scriptCode of a P2WPKH input: the P2PKH script of its key hash. */
export function p2wpkhScriptCode(hash: Uint8Array): Uint8Array {
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

// ---- Amounts and outputs ----------------------------------------------------------------------

const TXID_RE = /^[0-9a-f]{64}$/;

function checkOutput(o: SpendableOutput, what: string): void {
  if (o === null || typeof o !== 'object') throw invalid(`${what} is not an output`);
  if (typeof o.txHash !== 'string' || !TXID_RE.test(o.txHash)) throw invalid(`${what}: txHash must be a txid (64 lower-case hex characters)`);
  if (!Number.isInteger(o.vout) || o.vout < 0 || o.vout > 0xffffffff) throw invalid(`${what}: vout must be an integer from 0 to 2^32-1`);
  if (typeof o.amount !== 'bigint' || o.amount <= 0n || o.amount > MAX_MONEY) throw invalid(`${what}: amount must be a positive bigint of satoshis`);
}

export function checkAmount(amount: bigint): void {
  if (typeof amount !== 'bigint' || amount <= 0n || amount > MAX_MONEY) throw invalid('amount must be a positive bigint of satoshis, at most 21 million BTC');
}

/** Checks every output and that none appears twice (the same outpoint can only be spent once). */
export function checkOutputs(outputs: readonly SpendableOutput[], what: string): void {
  const seen = new Set<string>();
  outputs.forEach((o, i) => {
    checkOutput(o, `${what}[${i}]`);
    const key = `${o.txHash}:${o.vout}`;
    if (seen.has(key)) throw invalid(`${what}[${i}]: output ${key} appears twice`);
    seen.add(key);
  });
}

export function sum(outputs: readonly SpendableOutput[]): bigint {
  return outputs.reduce((s, o) => s + o.amount, 0n);
}
