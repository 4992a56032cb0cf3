/**
 * Consolidations (core's UtxoConsolidationRequest, `subtractFee: true`): one transaction spending
 * the outputs of many P2WPKH keys (each input's SpendableOutput.owner, else `from`) to a single
 * output of their sum less the fee, without change. Its size, its fee, its refusals, and the key that signs each input.
 */
import { ChainTransferError, type PublicKey, type SpendableOutput } from '@wcs/core';
import type { BitcoinAddressCodec } from './address';
import {
  dustThreshold, feeForVsize, formatFeeRate, invalid, p2wpkhSpendVsize, p2wpkhSpendWeight, MAX_STANDARD_WEIGHT,
} from './spend';

/** Bytes of a P2WPKH output script (OP_0 <20-byte key hash>). */
export const P2WPKH_SCRIPT_LENGTH = 22;

function checkInputCount(inputCount: number): void {
  if (!Number.isInteger(inputCount) || inputCount < 1) throw new RangeError('inputCount must be a positive integer');
}

function checkScriptLength(outputScriptLength: number): void {
  if (!Number.isInteger(outputScriptLength) || outputScriptLength < 1 || outputScriptLength > 0xfc) throw new RangeError('outputScriptLength must be an integer from 1 to 252');
}

/**
 * Virtual size of a consolidation: `inputCount` P2WPKH inputs, one output of `outputScriptLength`
 * bytes of script (default P2WPKH, 22), every signature counted at its worst case of 72 bytes (DER
 * with low S at most 71, plus the sighash byte; see p2wpkhSpendWeight). This is the size craft()
 * charges the fee for: fee = ⌈feeRate × vsize⌉.
 *
 * To a P2WPKH output, n inputs:
 *   weight = 4 × (10 + 31 + 41·n) + 2 + 108·n = 166 + 272·n          (n ≤ 252)
 *   vsize  = ⌈weight / 4⌉ = 42 + 68·n                                  (n ≤ 252)
 *   vsize  = 44 + 68·n  (253 ≤ n: the input count takes 3 bytes, weight 174 + 272·n)
 * where 10 = version 4 + input count 1 + output count 1 + locktime 4, 31 = the output (8 + 1 + 22),
 * 41 = an input outside the witness (outpoint 36, empty scriptSig 1, sequence 4), 2 = segwit
 * marker and flag, 108 = an input's witness (item count 1, 1 + 72 signature, 1 + 33 key).
 *
 * Which signatures: the worst case, so the fee is known before signing (the txid too) and the
 * rate paid is never below the one asked. The signed transaction is exactly this shape with the
 * real signatures, each byte a signature is shorter than 72 making it 1 weight unit (¼ vB)
 * lighter: real weight = 166 + 272·n − Σ(72 − signature length). A low-S signature is 72 bytes
 * when r's top bit is set (half of them), else 71, and 70 or less about 1 time in 256. So the
 * real vsize is at most this, and with every signature 71 bytes or more this is at most
 * ⌈(166 + 272·n)/4⌉ / ⌈(166 + 271·n)/4⌉ of it: 1.0 at n = 1, 1.0057 at n = 2 (the largest),
 * 1.0027 at n = 5, 1.0037 at n = 100 (1.0092 at most even with every signature 70 bytes).
 */
export function consolidationVsize(inputCount: number, outputScriptLength: number = P2WPKH_SCRIPT_LENGTH): number {
  checkInputCount(inputCount);
  checkScriptLength(outputScriptLength);
  return p2wpkhSpendVsize(inputCount, [outputScriptLength]);
}

/**
 * The most inputs one consolidation to an output of `outputScriptLength` bytes may have within
 * Bitcoin Core's standard weight (400 000): 1469 to a P2WPKH output. craft() refuses more.
 */
export function maxConsolidationInputs(outputScriptLength: number = P2WPKH_SCRIPT_LENGTH): number {
  checkScriptLength(outputScriptLength);
  // Weight grows by 272 per input (4 × 41 + 108); from 253 inputs the count takes 3 bytes.
  let n = Math.floor((MAX_STANDARD_WEIGHT - p2wpkhSpendWeight(0, [outputScriptLength])) / 272);
  while (n > 0 && p2wpkhSpendWeight(n, [outputScriptLength]) > MAX_STANDARD_WEIGHT) n--;
  return n;
}

/** What a consolidation pays: the fee, the payment (the inputs less the fee) and the vsize charged. */
export interface ConsolidationPlan {
  readonly fee: bigint;
  readonly payment: bigint;
  readonly vsize: number;
}

/**
 * The plan of a consolidation spending `total` satoshis in `inputCount` inputs to `paymentScript`
 * at satPerKvB. `amount` must be `total` (INVALID_REQUEST otherwise); fee = ⌈rate × vsize⌉ of
 * consolidationVsize; a payment (total − fee) below the script's dust threshold, or none at all,
 * is DUST_AFTER_FEE (with `fee`). More than maxConsolidationInputs inputs is INVALID_REQUEST.
 */
export function planConsolidation(total: bigint, inputCount: number, amount: bigint, satPerKvB: bigint, paymentScript: Uint8Array): ConsolidationPlan {
  if (amount !== total) throw invalid(`subtractFee: amount ${amount} sat must be the sum of the inputs (${total} sat)`);
  const weight = p2wpkhSpendWeight(inputCount, [paymentScript.length]);
  if (weight > MAX_STANDARD_WEIGHT) {
    throw invalid(`${inputCount} inputs make a consolidation of ${weight} weight units, above the standard ${MAX_STANDARD_WEIGHT} (at most ${maxConsolidationInputs(paymentScript.length)} inputs)`);
  }
  const vsize = consolidationVsize(inputCount, paymentScript.length);
  const fee = feeForVsize(vsize, satPerKvB);
  const payment = total - fee;
  const dust = dustThreshold(paymentScript);
  if (payment < dust) {
    throw new ChainTransferError(
      'DUST_AFTER_FEE',
      `inputs of ${total} sat less the fee of ${fee} sat (${vsize} vB at ${formatFeeRate(satPerKvB)} sat/vB) leave ${payment} sat, below the destination's dust threshold of ${dust} sat: uneconomic to consolidate now`,
      { fee },
    );
  }
  return { fee, payment, vsize };
}

/** The key that signs one input: its P2WPKH address and 33-byte compressed key. */
export interface InputSigner {
  readonly address: string;
  readonly publicKey: Uint8Array;
}

/** A 33-byte compressed secp256k1 key, or INVALID_REQUEST naming `field`. */
export function compressedKey(key: PublicKey, field: string): Uint8Array {
  if (key === null || typeof key !== 'object' || key.curve !== 'secp256k1' || !(key.bytes instanceof Uint8Array) || key.bytes.length !== 33) {
    throw invalid(`${field} must be a 33-byte compressed secp256k1 key`);
  }
  return key.bytes;
}

/**
 * The signer of each input, in order: its `owner` when it has one, else `from` (already checked
 * to be the P2WPKH address of its key). An owner's address must be the P2WPKH address, on this
 * network, of the owner's public key: a mismatch (another key's address, another network's, a
 * non-P2WPKH address, an off-curve key) is INVALID_REQUEST naming the input.
 */
export function inputSigners(inputs: readonly SpendableOutput[], from: InputSigner, codec: BitcoinAddressCodec): InputSigner[] {
  const known = new Map<string, InputSigner>([[from.address, from]]);
  return inputs.map((o, i) => {
    const owner = o.owner;
    if (owner === undefined || owner === null) return from;
    const what = `inputs[${i}].owner`;
    if (typeof owner !== 'object' || typeof owner.address !== 'string') throw invalid(`${what} must be { address, publicKey }`);
    const bytes = compressedKey(owner.publicKey, `${what}.publicKey`);
    let own: string;
    try {
      own = codec.addressFromPublicKey({ curve: 'secp256k1', bytes });
    } catch (e) {
      throw invalid(`${what}.publicKey: ${(e as Error).message}`, e);
    }
    if (owner.address !== own) throw invalid(`${what}: address ${JSON.stringify(owner.address)} is not the P2WPKH address of its public key (${own})`);
    const seen = known.get(own);
    if (seen) return seen;
    const signer = { address: own, publicKey: Uint8Array.from(bytes) };
    known.set(own, signer);
    return signer;
  });
}
