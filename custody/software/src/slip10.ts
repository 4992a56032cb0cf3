import { hmac } from '@noble/hashes/hmac';
import { sha512 } from '@noble/hashes/sha2';
import { ed25519 } from '@noble/curves/ed25519';
import { HARDENED } from './path';

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
  return split(hmac(sha512, MASTER_KEY, seed));
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
    return split(hmac(sha512, parent.chainCode, data));
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

/** The 32-byte ed25519 public key of a node (RFC 8032: from SHA-512 of the private key). */
export function ed25519PublicKey(node: Ed25519Node): Uint8Array {
  return ed25519.getPublicKey(node.key);
}

export function wipeEd25519Node(node: Ed25519Node): void {
  node.key.fill(0);
  node.chainCode.fill(0);
}
