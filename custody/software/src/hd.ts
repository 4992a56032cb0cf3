import { createHmac } from 'node:crypto';
import { HDKey } from '@scure/bip32';
import { secp256k1 } from '@noble/curves/secp256k1';
import { bytesToNumberBE } from '@noble/curves/utils';
import { ed25519DeriveChild, ed25519DerivePath, ed25519MasterFromSeed, ed25519PublicKey, wipeEd25519Node, type Ed25519Node } from './slip10';
import { formatPath, HARDENED } from './path';
import { LruCache } from '@wcs/core';
import { nativeSecp256k1 } from './secp-native';

/**
 * Cache bounds (entries): xpub-only nodes and public keys; and the private parents of signing
 * keys (secp256k1) and of ed25519 keys, wiped on eviction and when the store locks.
 */
export const CACHE_LIMITS = Object.freeze({ publicNodes: 4096, publicKeys: 16384, secpSigningParents: 1024 });

type Point = InstanceType<typeof secp256k1.ProjectivePoint>;

/** A cached xpub-only node and (once needed) its decompressed public point. */
interface PublicNode {
  readonly node: HDKey;
  point?: Point;
}

const CURVE_ORDER = secp256k1.CURVE.n;

/** Drops the private half of a node: an xpub-only HDKey with the same depth, index, parent and chain code. */
export function neuter(node: HDKey): HDKey {
  return new HDKey({
    versions: node.versions,
    depth: node.depth,
    index: node.index,
    parentFingerprint: node.parentFingerprint,
    chainCode: node.chainCode!,
    publicKey: node.publicKey!,
  });
}

/**
 * The two master keys of one BIP-39 seed (BIP-32 secp256k1 and SLIP-10 ed25519), with caches of
 * public material. secp256k1 public keys are derived from cached xpub-only nodes: the node at the
 * last hardened level (the application's account) is derived privately once, neutered and cached;
 * unhardened levels below it are derived publicly (CKDpub) and their parents cached too.
 */
export class HdKeys {
  private secpMaster: HDKey | null;
  private edMaster: Ed25519Node | null;
  private readonly publicNodes = new LruCache<string, PublicNode>(CACHE_LIMITS.publicNodes);
  private readonly publicKeys = new LruCache<string, Uint8Array>(CACHE_LIMITS.publicKeys);
  /**
   * SLIP-10 parents (the level above the last, e.g. an application's account): ed25519 has no
   * public derivation, so a new user key is one private step from its cached parent instead of
   * a walk from the master. They are private nodes: wiped on eviction and in wipe().
   */
  private readonly edParents = new LruCache<string, Ed25519Node>(CACHE_LIMITS.publicNodes, wipeEd25519Node);
  /**
   * secp256k1 parents of signing keys (the level above the leaf, e.g. a hot wallet's change
   * level): a signature is one private step (CKDpriv) from its cached parent instead of a walk
   * from the master, five levels of point multiplications. Private nodes: wiped on eviction and
   * in wipe(), as edParents.
   */
  private readonly secpParents = new LruCache<string, HDKey>(CACHE_LIMITS.secpSigningParents, (n) => n.wipePrivateData());
  /** Counters for status and tests: how many derivations went which way (walks from the master; single private steps from a cached parent). */
  readonly counters = { secpPrivateDerivations: 0, secpPrivateSteps: 0, secpPublicDerivations: 0, ed25519Derivations: 0 };

  private constructor(secp: HDKey, ed: Ed25519Node) {
    this.secpMaster = secp;
    this.edMaster = ed;
  }

  /** Builds both masters from a BIP-39 seed. The caller still owns (and wipes) `seed`. */
  static fromSeed(seed: Uint8Array): HdKeys {
    return new HdKeys(HDKey.fromMasterSeed(seed), ed25519MasterFromSeed(seed));
  }

  /** BIP-32 master fingerprint (first 4 bytes of HASH160 of the master public key), 8 hex digits. */
  get fingerprint(): string {
    return this.secp().fingerprint.toString(16).padStart(8, '0');
  }

  get cacheSizes(): { publicNodes: number; publicKeys: number; secpSigningParents: number } {
    return { publicNodes: this.publicNodes.size, publicKeys: this.publicKeys.size, secpSigningParents: this.secpParents.size };
  }

  private secp(): HDKey {
    if (!this.secpMaster) throw new Error('key material was wiped');
    return this.secpMaster;
  }

  private ed(): Ed25519Node {
    if (!this.edMaster) throw new Error('key material was wiped');
    return this.edMaster;
  }

  /**
   * Full private derivation from the master, level by level, wiping every intermediate node.
   * The caller must call wipePrivateData() on the result.
   */
  secpPrivateNode(indices: readonly number[]): HDKey {
    if (indices.length === 0) throw new RangeError('refusing to hand out the master key');
    let node = this.secp();
    for (const i of indices) {
      const child = node.deriveChild(i);
      if (node !== this.secpMaster) node.wipePrivateData();
      node = child;
    }
    this.counters.secpPrivateDerivations++;
    return node;
  }

  /** xpub-only node for a path: cached; hardened levels privately (once), unhardened ones publicly. */
  secpPublicNode(indices: readonly number[]): HDKey {
    return this.cachedPublicNode(indices).node;
  }

  private cachedPublicNode(indices: readonly number[]): PublicNode {
    if (indices.length === 0) return { node: neuter(this.secp()) };
    const key = formatPath(indices);
    const cached = this.publicNodes.get(key);
    if (cached) return cached;
    const last = indices[indices.length - 1]!;
    let node: HDKey;
    if (last >= HARDENED) {
      const priv = this.secpPrivateNode(indices);
      node = neuter(priv);
      priv.wipePrivateData();
    } else {
      node = this.cachedPublicNode(indices.slice(0, -1)).node.deriveChild(last);
      this.counters.secpPublicDerivations++;
    }
    const entry: PublicNode = { node };
    this.publicNodes.set(key, entry);
    return entry;
  }

  /**
   * BIP-32 CKDpub for a leaf from its cached parent xpub:
   * I = HMAC-SHA512(c_par, serP(K_par) || ser32(i)); K_i = point(I_L) + K_par, with native
   * libsecp256k1 when it loads (secp-native.ts), else @noble/curves on the cached parent point.
   * The (probability ~2^-127) invalid cases defer to @scure/bip32, so results always match it.
   */
  private secpChildPublicKey(parent: PublicNode, index: number): Uint8Array {
    const { node } = parent;
    const data = new Uint8Array(37);
    data.set(node.publicKey!, 0);
    new DataView(data.buffer).setUint32(33, index, false);
    const I = createHmac('sha512', node.chainCode!).update(data).digest();
    const IL = I.subarray(0, 32);
    try {
      const tweak = bytesToNumberBE(IL);
      if (tweak === 0n || tweak >= CURVE_ORDER) return node.deriveChild(index).publicKey!.slice();
      if (nativeSecp256k1) {
        try {
          return nativeSecp256k1.publicKeyTweakAdd(node.publicKey!, IL, true);
        } catch {
          return node.deriveChild(index).publicKey!.slice(); // the point at infinity: BIP-32 says skip; scure handles it
        }
      }
      parent.point ??= secp256k1.ProjectivePoint.fromHex(node.publicKey!);
      const child = parent.point.add(secp256k1.ProjectivePoint.BASE.multiply(tweak));
      if (child.equals(secp256k1.ProjectivePoint.ZERO)) return node.deriveChild(index).publicKey!.slice();
      return child.toRawBytes(true);
    } finally {
      I.fill(0);
    }
  }

  /**
   * 33-byte compressed public key. Unhardened leaf: CKDpub from the cached parent xpub
   * (no private derivation). Hardened leaf: private derivation (private key wiped at once).
   */
  secpPublicKey(indices: readonly number[]): Uint8Array {
    const key = `s${formatPath(indices)}`;
    const cached = this.publicKeys.get(key);
    if (cached) return cached.slice();
    if (indices.length === 0) throw new RangeError('refusing to derive the master key');
    const last = indices[indices.length - 1]!;
    let pub: Uint8Array;
    if (last >= HARDENED) {
      const priv = this.secpPrivateNode(indices);
      pub = priv.publicKey!.slice();
      priv.wipePrivateData();
    } else {
      pub = this.secpChildPublicKey(this.cachedPublicNode(indices.slice(0, -1)), last);
      this.counters.secpPublicDerivations++;
    }
    this.publicKeys.set(key, pub);
    return pub.slice();
  }

  /** Runs fn with the private key for a path (one private step from its cached parent) and wipes the key afterwards. */
  withSecpPrivateKey<T>(indices: readonly number[], fn: (privateKey: Uint8Array, publicKey: Uint8Array) => T): T {
    let node: HDKey;
    if (indices.length < 2) {
      node = this.secpPrivateNode(indices);
    } else {
      const prefix = indices.slice(0, -1);
      const key = formatPath(prefix);
      let parent = this.secpParents.get(key);
      if (!parent) {
        parent = this.secpPrivateNode(prefix);
        this.secpParents.set(key, parent);
      }
      const last = indices[indices.length - 1]!;
      this.counters.secpPrivateSteps++;
      const child = last < HARDENED ? this.secpChildPrivateKey(parent, last) : null;
      if (child !== null) {
        // the public key from the public side (CKDpub, cached): the signer's verification then checks the two derivations agree
        try {
          return fn(child, this.secpPublicKey(indices));
        } finally {
          child.fill(0);
        }
      }
      node = parent.deriveChild(last);
    }
    try {
      return fn(node.privateKey!, node.publicKey!);
    } finally {
      node.wipePrivateData();
    }
  }

  /**
   * BIP-32 CKDpriv of an unhardened child with libsecp256k1: I = HMAC-SHA512(c_par, serP(K_par) ||
   * ser32(i)), k_i = I_L + k_par mod n, in a buffer the caller wipes. No point multiplication (the
   * library's deriveChild also computes the child's public key, most of a signature's cost).
   * Null without the native library, and in the (probability ~2^-127) invalid cases, which the
   * caller leaves to @scure/bip32.
   */
  private secpChildPrivateKey(parent: HDKey, index: number): Uint8Array | null {
    if (!nativeSecp256k1 || !parent.privateKey) return null;
    const data = new Uint8Array(37);
    data.set(parent.publicKey!, 0);
    new DataView(data.buffer).setUint32(33, index, false);
    const I = createHmac('sha512', parent.chainCode!).update(data).digest();
    const child = Uint8Array.from(parent.privateKey);
    try {
      nativeSecp256k1.privateKeyTweakAdd(child, I.subarray(0, 32));
      return child;
    } catch {
      child.fill(0);
      return null;
    } finally {
      I.fill(0);
    }
  }

  /** SLIP-10 ed25519 node for a path (all levels hardened). The caller wipes it. */
  ed25519Node(indices: readonly number[]): Ed25519Node {
    for (const i of indices) if (i < HARDENED) throw new RangeError('SLIP-10 ed25519 supports hardened levels only');
    this.counters.ed25519Derivations++;
    if (indices.length < 2) return ed25519DerivePath(this.ed(), indices);
    const prefix = indices.slice(0, -1);
    const key = formatPath(prefix);
    let parent = this.edParents.get(key);
    if (!parent) {
      parent = ed25519DerivePath(this.ed(), prefix);
      this.edParents.set(key, parent);
    }
    return ed25519DeriveChild(parent, indices[indices.length - 1]!);
  }

  /** 32-byte ed25519 public key (private derivation, cached in a bounded map). */
  ed25519PublicKey(indices: readonly number[]): Uint8Array {
    const key = `e${formatPath(indices)}`;
    const cached = this.publicKeys.get(key);
    if (cached) return cached.slice();
    const pub = this.withEd25519Node(indices, (node) => ed25519PublicKey(node));
    this.publicKeys.set(key, pub);
    return pub.slice();
  }

  withEd25519Node<T>(indices: readonly number[], fn: (node: Ed25519Node) => T): T {
    const node = this.ed25519Node(indices);
    try {
      return fn(node);
    } finally {
      wipeEd25519Node(node);
    }
  }

  /** Wipes both masters and drops the caches. The object is unusable afterwards. */
  wipe(): void {
    this.secpMaster?.wipePrivateData();
    this.secpMaster = null;
    if (this.edMaster) wipeEd25519Node(this.edMaster);
    this.edMaster = null;
    this.publicNodes.clear();
    this.publicKeys.clear();
    this.edParents.clear();
    this.secpParents.clear();
  }
}
