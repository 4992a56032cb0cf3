import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1';
import { recoverSecp256k1 } from '@wcs/core';

const N = secp256k1.CURVE.n;
const HALF_N = N >> 1n;

function toBig(b: Uint8Array): bigint {
  return BigInt('0x' + Buffer.from(b).toString('hex'));
}

function to32(v: bigint): Buffer {
  return Buffer.from(v.toString(16).padStart(64, '0'), 'hex');
}

/** r and s from a CKM_ECDSA output: 64 bytes r || s (PKCS#11), or DER from a module that gives it. */
function parseRS(raw: Uint8Array): { r: bigint; s: bigint } | null {
  if (raw.length === 64) return { r: toBig(raw.subarray(0, 32)), s: toBig(raw.subarray(32)) };
  if (raw[0] === 0x30) {
    try {
      const sig = secp256k1.Signature.fromDER(raw);
      return { r: sig.r, s: sig.s };
    } catch {
      return null;
    }
  }
  return null;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.length), Buffer.from(b.buffer, b.byteOffset, b.length)) === 0;
}

/**
 * Turns an HSM's ECDSA output into the KeyStore form: S normalised to the lower half (s := n - s),
 * then the recovery id found by recovering the public key from (r, s, digest) with id 0 and
 * 1 and comparing it with the stored key (1.5 recoveries on average, about 80 µs each with
 * libsecp256k1). A signature that recovers neither id's key to the stored key does not verify:
 * null (the caller signs again). Recovery to the right key is verification.
 */
export function finishEcdsa(raw: Uint8Array, digest: Uint8Array, publicKey: Uint8Array): { bytes: Uint8Array; recovery: number } | null {
  const rs = parseRS(raw);
  if (!rs) return null;
  let { r, s } = rs;
  if (r <= 0n || r >= N || s <= 0n || s >= N) return null;
  if (s > HALF_N) s = N - s;
  const sig = Buffer.concat([to32(r), to32(s)]);
  for (const recovery of [0, 1]) {
    const key = recoverSecp256k1(sig, recovery, digest, true);
    if (key && equalBytes(key, publicKey)) return { bytes: new Uint8Array(sig), recovery };
  }
  return null;
}

/** RFC 8410 SubjectPublicKeyInfo prefix of an Ed25519 key. */
const ED25519_SPKI = Buffer.from('302a300506032b6570032100', 'hex');

/** An Ed25519 public key as a node:crypto KeyObject (OpenSSL verifies). */
export function ed25519KeyObject(publicKey: Uint8Array): KeyObject {
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI, publicKey]), format: 'der', type: 'spki' });
}

/**
 * Whether a 64-byte EdDSA signature verifies against the key (RFC 8032, through OpenSSL). The
 * check runs on the libuv thread pool (crypto.verify with a callback), not on the event loop,
 * which dispatches every other signature.
 */
export function verifyEddsa(raw: Uint8Array, message: Uint8Array, key: KeyObject): Promise<boolean> {
  if (raw.length !== 64) return Promise.resolve(false);
  return new Promise((resolve) => {
    try {
      verify(null, message, key, raw, (error, ok) => resolve(!error && ok));
    } catch {
      resolve(false);
    }
  });
}
