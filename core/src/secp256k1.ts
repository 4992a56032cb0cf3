import { ECDH } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1';
import type { PublicKey } from './keystore';
import { nativeSecp256k1 } from './secp256k1-native';

/** The field prime of secp256k1. */
const P = 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2fn;

function toBig(b: Uint8Array, from: number, to: number): bigint {
  return BigInt('0x' + Buffer.from(b.buffer, b.byteOffset + from, to - from).toString('hex'));
}

/** Whether 65 bytes 04 || x || y are a point on the curve: x, y < p and y² = x³ + 7 (mod p). */
function onCurve(u: Uint8Array): boolean {
  if (u.length !== 65 || u[0] !== 0x04) return false;
  const x = toBig(u, 1, 33);
  const y = toBig(u, 33, 65);
  if (x >= P || y >= P) return false;
  return (y * y) % P === (((x * x) % P) * x + 7n) % P;
}

/**
 * The 65-byte uncompressed form (04 || x || y) of a secp256k1 public key, checked to be a
 * point on the curve; throws a TypeError otherwise. Accepts 33-byte compressed and 65-byte
 * uncompressed keys. A key store may hand the uncompressed form along (PublicKey.uncompressed):
 * it is then checked against the compressed bytes (same x, matching y parity) and the curve
 * equation, which costs a few big-integer products instead of a square root.
 */
export function secp256k1Uncompressed(key: PublicKey | Uint8Array): Uint8Array {
  const bytes = key instanceof Uint8Array ? key : key.bytes;
  const given = key instanceof Uint8Array ? undefined : key.uncompressed;
  if (bytes.length === 65) {
    if (!onCurve(bytes)) throw new TypeError('the public key is not a point on secp256k1');
    return bytes;
  }
  if (bytes.length !== 33 || (bytes[0] !== 0x02 && bytes[0] !== 0x03)) {
    throw new TypeError(`a secp256k1 public key is 33 bytes compressed (02/03 prefix) or 65 bytes uncompressed (04 prefix), got ${bytes.length} bytes`);
  }
  if (given) {
    const sameX = given.length === 65 && Buffer.compare(Buffer.from(given.buffer, given.byteOffset + 1, 32), Buffer.from(bytes.buffer, bytes.byteOffset + 1, 32)) === 0;
    if (!sameX || (given[64]! & 1) !== (bytes[0] === 0x03 ? 1 : 0) || !onCurve(given)) {
      throw new TypeError('the uncompressed form given with the public key is not the same point');
    }
    return given;
  }
  try {
    // OpenSSL decodes the point (a square root) and checks it is on the curve
    return ECDH.convertKey(Buffer.from(bytes), 'secp256k1', undefined, undefined, 'uncompressed') as Buffer;
  } catch {
    throw new TypeError('the public key is not a point on secp256k1');
  }
}

/** Whether bytes are a 33-byte compressed secp256k1 point on the curve. */
export function isCompressedSecp256k1Point(bytes: Uint8Array): boolean {
  if (bytes.length !== 33) return false;
  try {
    secp256k1Uncompressed(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * The public key that made the 64-byte r||s signature with recovery id `recovery` over a 32-byte
 * digest (33 bytes compressed, else 65 uncompressed), or null when none did: libsecp256k1 when
 * it loads (about 45 µs), else @noble/curves (about 1.2 ms). Recovering the expected key is
 * verifying the signature.
 */
export function recoverSecp256k1(signature: Uint8Array, recovery: number, digest: Uint8Array, compressed = true): Uint8Array | null {
  if (signature.length !== 64 || digest.length !== 32 || !Number.isInteger(recovery) || recovery < 0 || recovery > 3) return null;
  try {
    if (nativeSecp256k1) return nativeSecp256k1.ecdsaRecover(signature, recovery, digest, compressed);
    return secp256k1.Signature.fromCompact(signature).addRecoveryBit(recovery).recoverPublicKey(digest).toRawBytes(compressed);
  } catch {
    return null;
  }
}
