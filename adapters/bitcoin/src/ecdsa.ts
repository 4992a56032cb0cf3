import { secp256k1Uncompressed } from '@wcs/core';

/**
 * secp256k1 ECDSA verification of a 32-byte digest (SEC 1 4.1.4), for combine()'s check of the
 * key store's signatures before a transaction is finalized. Public data only (digest, signature,
 * public key), so nothing here needs to run in constant time. This package declares no ECC
 * library (bitcoinjs-lib ships none, core's libsecp256k1 binding exposes no verify and may be
 * absent): the arithmetic is bigint, Jacobian coordinates, one joint double-and-add (Shamir's
 * trick) per verification, a few milliseconds. Cross-checked in the tests against @noble/curves
 * and against node:crypto's OpenSSL signatures.
 */

const P = 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2fn;
/** The group order. */
export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const N = SECP256K1_N;
const HALF_N = N >> 1n;
const GX = 0x79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798n;
const GY = 0x483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8n;

/** A point in Jacobian coordinates (x = X/Z², y = Y/Z³); Z = 0 is the point at infinity. */
interface Jacobian {
  readonly x: bigint;
  readonly y: bigint;
  readonly z: bigint;
}

const INFINITY: Jacobian = { x: 0n, y: 1n, z: 0n };

const mod = (a: bigint, m: bigint = P): bigint => {
  const r = a % m;
  return r < 0n ? r + m : r;
};

/** a^-1 mod m (m prime, a not a multiple of m), by the extended Euclidean algorithm. */
function invert(a: bigint, m: bigint): bigint {
  let [r0, r1] = [mod(a, m), m];
  let [s0, s1] = [1n, 0n];
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1] = [r1, r0 - q * r1];
    [s0, s1] = [s1, s0 - q * s1];
  }
  if (r0 !== 1n) throw new RangeError('not invertible');
  return mod(s0, m);
}

function double(p: Jacobian): Jacobian {
  if (p.z === 0n || p.y === 0n) return INFINITY;
  const yy = mod(p.y * p.y);
  const s = mod(4n * p.x * yy);
  const m = mod(3n * p.x * p.x); // a = 0
  const x = mod(m * m - 2n * s);
  const y = mod(m * (s - x) - 8n * yy * yy);
  const z = mod(2n * p.y * p.z);
  return { x, y, z };
}

function add(p: Jacobian, q: Jacobian): Jacobian {
  if (p.z === 0n) return q;
  if (q.z === 0n) return p;
  const pz2 = mod(p.z * p.z);
  const qz2 = mod(q.z * q.z);
  const u1 = mod(p.x * qz2);
  const u2 = mod(q.x * pz2);
  const s1 = mod(p.y * qz2 * q.z);
  const s2 = mod(q.y * pz2 * p.z);
  if (u1 === u2) return s1 === s2 ? double(p) : INFINITY;
  const h = mod(u2 - u1);
  const r = mod(s2 - s1);
  const h2 = mod(h * h);
  const h3 = mod(h2 * h);
  const u1h2 = mod(u1 * h2);
  const x = mod(r * r - h3 - 2n * u1h2);
  const y = mod(r * (u1h2 - x) - s1 * h3);
  const z = mod(h * p.z * q.z);
  return { x, y, z };
}

/** a·A + b·B (a, b in [0, n)). */
function twoMultiply(a: bigint, pa: Jacobian, b: bigint, pb: Jacobian): Jacobian {
  const both = add(pa, pb);
  let acc = INFINITY;
  for (let i = 255; i >= 0; i--) {
    acc = double(acc);
    const bitA = (a >> BigInt(i)) & 1n;
    const bitB = (b >> BigInt(i)) & 1n;
    if (bitA && bitB) acc = add(acc, both);
    else if (bitA) acc = add(acc, pa);
    else if (bitB) acc = add(acc, pb);
  }
  return acc;
}

const toBig = (bytes: Uint8Array): bigint => (bytes.length === 0 ? 0n : BigInt(`0x${Buffer.from(bytes).toString('hex')}`));

/** r and s of a 64-byte r || s signature. */
export function splitSignature(sig: Uint8Array): { r: bigint; s: bigint } {
  if (sig.length !== 64) throw new RangeError(`a compact secp256k1 signature is 64 bytes (r || s), got ${sig.length}`);
  return { r: toBig(sig.subarray(0, 32)), s: toBig(sig.subarray(32)) };
}

/** Whether s is in the lower half of the order (BIP-62/BIP-146 LOW_S, standard policy). */
export function isLowS(s: bigint): boolean {
  return s >= 1n && s <= HALF_N;
}

/**
 * Whether sig (64 bytes, r || s) is a valid ECDSA signature by publicKey (33 or 65 bytes, checked
 * to be on the curve) over the 32-byte digest. High-S signatures are valid ECDSA (callers that
 * need LOW_S check isLowS). Malformed input is simply not valid: never throws for it.
 */
export function verifyDigest(digest: Uint8Array, sig: Uint8Array, publicKey: Uint8Array): boolean {
  if (digest.length !== 32 || sig.length !== 64) return false;
  let point: Uint8Array;
  try {
    point = secp256k1Uncompressed(publicKey);
  } catch {
    return false;
  }
  const { r, s } = splitSignature(sig);
  if (r < 1n || r >= N || s < 1n || s >= N) return false;
  const q: Jacobian = { x: toBig(point.subarray(1, 33)), y: toBig(point.subarray(33, 65)), z: 1n };
  // A 256-bit digest is taken whole (bits2int of a 32-byte value), reduced mod n.
  const z = mod(toBig(digest), N);
  const w = invert(s, N);
  const u1 = mod(z * w, N);
  const u2 = mod(r * w, N);
  const sum = twoMultiply(u1, { x: GX, y: GY, z: 1n }, u2, q);
  if (sum.z === 0n) return false;
  const zInv = invert(sum.z, P);
  const x = mod(sum.x * zInv * zInv);
  return mod(x, N) === r;
}
