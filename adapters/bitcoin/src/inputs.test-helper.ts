/**
 * Test-only (loaded by *.test.ts, never by index.ts): transaction inputs of every shape, signed for
 * real (bitcoinjs-lib Psbt, low-S ECDSA by @noble/curves) and finalized as bitcoinjs-lib finalizes
 * them, for the input-address and scanner tests.
 */
import { createHash } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1';
import { networks, Psbt, Transaction, type Network, type Payment, type Signer } from 'bitcoinjs-lib';
import type { BitcoinNetwork } from './network';

export type Input = Transaction['ins'][number];

/** bitcoinjs-lib's network parameters for one of ours (payments encode addresses with them). */
export const bjsNetwork = (n: BitcoinNetwork): Network => ({ ...networks.regtest, bech32: n.hrp, pubKeyHash: n.p2pkhVersion, scriptHash: n.p2shVersion });

export type TestKey = Signer & { readonly privateKey: Uint8Array };

/** A deterministic secp256k1 key (its private key from a label) as a bitcoinjs-lib signer. */
export function key(label: string, compressed = true): TestKey {
  const privateKey = createHash('sha256').update(`input-address ${label}`).digest();
  return {
    privateKey,
    publicKey: secp256k1.getPublicKey(privateKey, compressed),
    sign: (hash: Uint8Array) => secp256k1.sign(hash, privateKey, { lowS: true }).toCompactRawBytes(),
  };
}

/** A DER signature with SIGHASH_ALL by `k` (of a digest made from n), as scripts carry it. */
export function derSignature(k: TestKey, n = 1): Uint8Array {
  const digest = createHash('sha256').update(`m${n}`).digest();
  return Uint8Array.from(Buffer.concat([secp256k1.sign(digest, k.privateKey, { lowS: true }).toDERRawBytes(), Buffer.from([0x01])]));
}

export interface SpendHow {
  readonly redeemScript?: Uint8Array;
  readonly witnessScript?: Uint8Array;
  /** Segwit inputs are given their witnessUtxo, others the whole previous transaction. */
  readonly segwit: boolean;
}

/**
 * The input of a transaction spending the output of `payment` (its output script, and its redeem /
 * witness script), signed by `signers` with bitcoinjs-lib's Psbt and finalized.
 */
export function spend(payment: Payment, signers: readonly Signer[], how: SpendHow): Input {
  const value = 100_000n;
  const prev = new Transaction();
  prev.version = 2;
  prev.addInput(Buffer.alloc(32, 7), 0);
  prev.addOutput(payment.output!, value);
  const psbt = new Psbt();
  psbt.addInput({
    hash: prev.getId(),
    index: 0,
    ...(how.segwit ? { witnessUtxo: { script: payment.output!, value } } : { nonWitnessUtxo: prev.toBuffer() }),
    ...(how.redeemScript ? { redeemScript: how.redeemScript } : {}),
    ...(how.witnessScript ? { witnessScript: how.witnessScript } : {}),
  });
  psbt.addOutput({ script: Buffer.concat([Buffer.from([0x00, 0x14]), Buffer.alloc(20, 5)]), value: value - 1_000n });
  for (const s of signers) psbt.signInput(0, s);
  psbt.finalizeAllInputs();
  return Transaction.fromHex(psbt.extractTransaction(true).toHex()).ins[0]!;
}

/** A transaction input with exactly this scriptSig and witness (for shapes Psbt does not make). */
export function rawInput(scriptSig: Uint8Array, witness: readonly Uint8Array[]): Input {
  const tx = new Transaction();
  tx.addInput(Buffer.alloc(32, 9), 1, 0xffffffff, Buffer.from(scriptSig));
  tx.addOutput(Buffer.from([0x51]), 1n);
  tx.setWitness(0, witness.map((w) => Buffer.from(w)));
  return Transaction.fromHex(tx.toHex()).ins[0]!;
}
