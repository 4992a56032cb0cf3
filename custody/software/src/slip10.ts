import * as crypto from 'node:crypto';
import { HARDENED } from './path';

/** HMAC-SHA512 through OpenSSL (native); the intermediate Buffer is wiped. */
function hmacSha512(key: Uint8Array, data: Uint8Array): Uint8Array {
  const out = crypto.createHmac('sha512', key).update(data).digest();
  const copy = new Uint8Array(out);
  out.fill(0);
  return copy;
}



/** A SLIP-10 ed25519 extended private key. Both buffers are owned by the holder and wiped by wipeEd25519Node. */
export interface Ed25519Node {
  readonly key: Uint8Array;
  readonly chainCode: Uint8Array;
}

const MASTER_KEY = new TextEncoder().encode('ed25519 seed');

function split(i: Uint8Array): Ed25519Node {
  const node = { key: i.slice(0, 32), chainCode: i.slice(32, 64) };
  i.fill(0);
  return node;
}

/** SLIP-10 master: I = HMAC-SHA512(key = "ed25519 seed", seed); k = IL, c = IR. */
export function ed25519MasterFromSeed(seed: Uint8Array): Ed25519Node {
  return split(hmacSha512(MASTER_KEY, seed));
}

/** SLIP-10 CKDpriv for ed25519 (hardened only): I = HMAC-SHA512(c, 0x00 || k || ser32(i)). */
export function ed25519DeriveChild(parent: Ed25519Node, index: number): Ed25519Node {
  if (!Number.isInteger(index) || index < HARDENED || index > 0xffffffff) {
    throw new RangeError('SLIP-10 ed25519 supports hardened derivation only');
  }
  const data = new Uint8Array(37);
  data.set(parent.key, 1);
  new DataView(data.buffer).setUint32(33, index, false);
  try {
    return split(hmacSha512(parent.chainCode, data));
  } finally {
    data.fill(0);
  }
}

/** Derives a path (child indices, all hardened) from a node; intermediate nodes are wiped. */
export function ed25519DerivePath(root: Ed25519Node, indices: readonly number[]): Ed25519Node {
  let node: Ed25519Node = { key: root.key.slice(), chainCode: root.chainCode.slice() };
  for (const i of indices) {
    const child = ed25519DeriveChild(node, i);
    wipeEd25519Node(node);
    node = child;
  }
  return node;
}

/**
 * The 32-byte ed25519 public key of a node (RFC 8032), computed natively by OpenSSL.
 * The key goes in as a JWK (OpenSSL 3 imports JWK several times faster than DER here);
 * like @noble's internal scalars, that transient encoding cannot be wiped, only dropped.
 */
export function ed25519PublicKey(node: Ed25519Node): Uint8Array {
  // Node requires an `x` member but OpenSSL derives the public half from `d` (checked by the SLIP-10 vectors).
  const priv = crypto.createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: Buffer.from(node.key).toString('base64url'), x: '' }, format: 'jwk' });
  const jwk = crypto.createPublicKey(priv).export({ format: 'jwk' });
  return new Uint8Array(Buffer.from(String(jwk.x), 'base64url'));
}

export function wipeEd25519Node(node: Ed25519Node): void {
  node.key.fill(0);
  node.chainCode.fill(0);
}
