import { HDKey } from '@scure/bip32';
import { secp256k1 } from '@noble/curves/secp256k1';
import { ed25519 } from '@noble/curves/ed25519';
import {
  CURVES,
  NamespaceCurves,
  PLUGIN_API_VERSION,
  checkKeyRef,
  type Curve,
  type KeyRef,
  type KeySignature,
  type KeyStore,
  type KeyStoreOptions,
  type PublicKey,
} from '@wcs/core';
import { entropyFromMnemonic, generateEntropy, seedFromEntropy, wordCount } from './bip39';
import { describePassphraseSource, loadPassphrase, resolveConfig, type SoftwareKeyStoreConfig } from './config';
import { KeyStoreError } from './errors';
import { HdKeys } from './hd';
import { decryptKeystore, encryptKeystore, fileExists, readKeystore, SCRYPT_N, serializeKeystore, writeFileExclusive } from './keystore-file';
import { parseTemplate, resolvePath } from './path';
import { nativeSecp256k1, SECP256K1_BACKEND } from './secp-native';
import { SoftwareIndexMarks } from './index-marks';

export const PACKAGE_NAME = '@wcs/custody-software';
export const BACKEND = 'software';
/** Largest ed25519 message accepted (transactions are far smaller). */
export const MAX_ED25519_PAYLOAD = 64 * 1024;

/** Options for tests only. Never set them in production. */
export interface SoftwareKeyStoreTuning {
  /**
   * scrypt N for files this process writes, and the lowest N it accepts when reading
   * (default and production minimum: 2^15). A power of two from 2^4; lower values make tests fast.
   */
  readonly insecureTestScryptN?: number;
}

/** The scrypt N of files this process writes (and the least it reads), from the tuning. */
export function scryptN(tuning: SoftwareKeyStoreTuning): number {
  const n = tuning.insecureTestScryptN;
  if (n === undefined) return SCRYPT_N;
  if (!Number.isInteger(n) || n < 16 || n > SCRYPT_N || (n & (n - 1)) !== 0) {
    throw new KeyStoreError('KEYSTORE_CONFIG', 'insecureTestScryptN must be a power of two from 2^4 to 2^15');
  }
  return n;
}

/** The BIP-32 master fingerprint of a seed (8 hex digits), as the key-store file records it. */
export function fingerprintOfSeed(seed: Uint8Array): string {
  const master = HDKey.fromMasterSeed(seed);
  try {
    return master.fingerprint.toString(16).padStart(8, '0');
  } finally {
    master.wipePrivateData();
  }
}

/**
 * `wcs keystore init` for the software backend: writes a new encrypted seed file (from the
 * operator's mnemonic, or 256 bits of fresh entropy) and returns operator facts, never secrets.
 * Refuses to overwrite an existing file.
 */
export async function initializeSoftwareKeystore(
  options: KeyStoreOptions,
  params: { mnemonic?: string } = {},
  tuning: SoftwareKeyStoreTuning = {},
): Promise<Record<string, unknown>> {
  const config = resolveConfig(options);
  const N = scryptN(tuning);
  if (await fileExists(config.file)) {
    throw new KeyStoreError('KEYSTORE_EXISTS', `keystore file ${config.file} already exists; refusing to overwrite it`);
  }
  const provided = params.mnemonic !== undefined && params.mnemonic !== null;
  const entropy = provided ? entropyFromMnemonic(params.mnemonic!) : generateEntropy();
  let passphrase: Buffer | null = null;
  try {
    passphrase = await loadPassphrase(options, config, true);
    const seed = seedFromEntropy(entropy);
    let fingerprint: string;
    try {
      fingerprint = fingerprintOfSeed(seed);
    } finally {
      seed.fill(0);
    }
    const content = await encryptKeystore(entropy, passphrase, fingerprint, { N });
    await writeFileExclusive(config.file, serializeKeystore(content));
    return {
      backend: BACKEND,
      file: config.file,
      fingerprint,
      createdAt: content.createdAt,
      words: wordCount(entropy.length),
      mnemonic: provided ? 'provided' : 'generated',
      passphraseSource: describePassphraseSource(config.passphrase),
      kdf: { name: 'scrypt', N: content.kdfParams.N, r: content.kdfParams.r, p: content.kdfParams.p },
    };
  } finally {
    entropy.fill(0);
    passphrase?.fill(0);
  }
}

interface ResolvedRef {
  readonly curve: Curve;
  readonly indices: number[];
}

/**
 * Software KeyStore: one BIP-39 seed, encrypted at rest (scrypt + AES-256-GCM); BIP-32 for
 * secp256k1 and SLIP-10 for ed25519. An application's keys live under its own hardened account
 * level ({account}' = applicationId), so applications never share keys.
 */
export class SoftwareKeyStore implements KeyStore {
  readonly name = PACKAGE_NAME;
  readonly pluginApiVersion = PLUGIN_API_VERSION;
  readonly config: SoftwareKeyStoreConfig;
  private keys: HdKeys | null = null;
  private meta: { fingerprint: string; createdAt: string } | null = null;
  private initializing: Promise<void> | null = null;
  /** Bumped by destroy(), so an init() that finishes after destroy() drops what it built. */
  private generation = 0;
  /** Namespace -> curve; namespace + purpose -> template (see resolve). */
  private readonly namespaceCurves = new NamespaceCurves();
  private readonly purposeTemplates = new Map<string, string>();
  /** Key-index marks, kept in the key-store file (index-marks.ts). */
  readonly indexMarks: SoftwareIndexMarks;

  constructor(
    private readonly options: KeyStoreOptions,
    private readonly tuning: SoftwareKeyStoreTuning = {},
  ) {
    this.config = resolveConfig(options);
    scryptN(tuning);
    this.indexMarks = new SoftwareIndexMarks({
      file: this.config.file,
      unlockedFingerprint: () => {
        if (!this.keys || !this.meta) throw new KeyStoreError('KEYSTORE_LOCKED', 'the software keystore is not unlocked (call init() first)');
        return this.meta.fingerprint;
      },
      getPublicKey: (ref) => this.getPublicKey(ref),
    });
  }

  get file(): string {
    return this.config.file;
  }

  get unlocked(): boolean {
    return this.keys !== null;
  }

  /**
   * Decrypts the seed and keeps the two master keys in memory. devMode: creates the passphrase
   * and seed files on first start. Idempotent; concurrent calls share one unlock.
   */
  async init(): Promise<void> {
    if (this.keys) return;
    if (!this.initializing) {
      const pending: Promise<void> = this.unlock().finally(() => {
        if (this.initializing === pending) this.initializing = null;
      });
      this.initializing = pending;
    }
    return this.initializing;
  }

  private async unlock(): Promise<void> {
    const generation = this.generation;
    if (!(await fileExists(this.config.file))) {
      if (!this.config.devMode) {
        throw new KeyStoreError('KEYSTORE_NOT_INITIALIZED', `keystore file ${this.config.file} does not exist: run \`wcs keystore init\` first`);
      }
      try {
        await initializeSoftwareKeystore(this.options, {}, this.tuning);
      } catch (e) {
        if (!(e instanceof KeyStoreError && e.code === 'KEYSTORE_EXISTS')) throw e;
      }
    }
    const file = await readKeystore(this.config.file);
    const passphrase = await loadPassphrase(this.options, this.config, false);
    let entropy: Buffer;
    try {
      entropy = await decryptKeystore(file, passphrase, { minN: scryptN(this.tuning), where: this.config.file });
    } finally {
      passphrase.fill(0);
    }
    let keys: HdKeys;
    try {
      const seed = seedFromEntropy(entropy);
      try {
        keys = HdKeys.fromSeed(seed);
      } finally {
        seed.fill(0);
      }
    } finally {
      entropy.fill(0);
    }
    if (keys.fingerprint !== file.fingerprint) {
      keys.wipe();
      throw new KeyStoreError('KEYSTORE_FILE_INVALID', `keystore file ${this.config.file} is corrupt: the seed does not match its fingerprint`);
    }
    if (generation !== this.generation) {
      keys.wipe();
      throw new KeyStoreError('KEYSTORE_LOCKED', 'the keystore was destroyed while it was being unlocked');
    }
    this.keys = keys;
    this.meta = { fingerprint: file.fingerprint, createdAt: file.createdAt };
  }

  /** Wipes the master keys and drops every cache. init() may be called again. */
  async destroy(): Promise<void> {
    this.generation++;
    this.initializing = null;
    this.keys?.wipe();
    this.keys = null;
  }

  private unlockedKeys(): HdKeys {
    if (!this.keys) throw new KeyStoreError('KEYSTORE_LOCKED', 'the software keystore is not unlocked (call init() first)');
    return this.keys;
  }

  /**
   * Validates a ref and resolves its path. Besides the shape checks, a namespace must keep one
   * curve, and one namespace + purpose must keep one template (a key-per-namespace HSM would give
   * one key where the paths give two). Two namespaces may share a template (e.g. Bitcoin testnet and
   * regtest, both coin type 1): here they then share keys, which a HSM would not.
   */
  private resolve(ref: KeyRef): ResolvedRef {
    const { curve, applicationId: account, index } = checkKeyRef(ref, BACKEND);
    const { spec } = ref;
    const template = parseTemplate(spec.pathTemplate);
    if (curve === 'ed25519' && !template.allHardened) {
      throw new KeyStoreError('KEY_REF_INVALID', `ed25519 keys use SLIP-10, which has hardened levels only: ${spec.pathTemplate}`);
    }
    this.checkSpec(spec.namespace, curve, template.text, String(ref.purpose));
    return { curve, indices: resolvePath(template, account, index) };
  }

  private checkSpec(namespace: string, curve: Curve, template: string, purpose: string): void {
    this.namespaceCurves.check(namespace, curve);
    const usedTemplate = this.purposeTemplates.get(`${namespace} ${purpose}`);
    if (usedTemplate !== undefined && usedTemplate !== template) {
      throw new KeyStoreError('KEY_SPEC_CONFLICT', `namespace ${JSON.stringify(namespace)} (${purpose} keys) already uses path template ${usedTemplate}, not ${template}`);
    }
    this.purposeTemplates.set(`${namespace} ${purpose}`, template);
  }

  /**
   * The key's public key. secp256k1: CKDpub from the cached account-level xpub (and its cached
   * unhardened parents); ed25519: SLIP-10 private derivation, result cached.
   */
  async getPublicKey(ref: KeyRef): Promise<PublicKey> {
    const keys = this.unlockedKeys();
    const { curve, indices } = this.resolve(ref);
    if (curve !== 'secp256k1') return { curve, bytes: keys.ed25519PublicKey(indices) };
    const bytes = keys.secpPublicKey(indices);
    // the uncompressed form costs the native library a few microseconds, an adapter a square root
    return nativeSecp256k1 ? { curve, bytes, uncompressed: nativeSecp256k1.publicKeyConvert(bytes, false) } : { curve, bytes };
  }

  /**
   * secp256k1: ECDSA over a 32-byte digest (RFC 6979, low-S, recovery id); ed25519: EdDSA over the
   * message. Each signature is verified before it is returned; the derived private key is wiped.
   */
  async sign(ref: KeyRef, payload: Uint8Array): Promise<KeySignature> {
    const keys = this.unlockedKeys();
    const { curve, indices } = this.resolve(ref);
    if (!(payload instanceof Uint8Array)) throw new KeyStoreError('KEY_PAYLOAD_INVALID', 'payload must be a Uint8Array');
    if (curve === 'secp256k1') {
      if (payload.length !== 32) {
        throw new KeyStoreError('KEY_PAYLOAD_INVALID', `secp256k1 signing takes a 32-byte digest, not ${payload.length} bytes`);
      }
      const digest = payload.slice();
      return keys.withSecpPrivateKey(indices, (privateKey, publicKey) => ({ curve, ...signSecp256k1(digest, privateKey, publicKey) }));
    }
    if (payload.length === 0 || payload.length > MAX_ED25519_PAYLOAD) {
      throw new KeyStoreError('KEY_PAYLOAD_INVALID', `ed25519 signing takes a message of 1 to ${MAX_ED25519_PAYLOAD} bytes, not ${payload.length}`);
    }
    const message = payload.slice();
    return keys.withEd25519Node(indices, (node) => {
      const publicKey = ed25519.getPublicKey(node.key);
      const bytes = ed25519.sign(message, node.key);
      if (!ed25519.verify(bytes, message, publicKey)) throw new Error('ed25519 signature failed verification');
      return { curve, bytes, recovery: null };
    });
  }

  /** Operator facts: file, master fingerprint, creation time, lock state. Never secret material. */
  async status(): Promise<Record<string, unknown>> {
    const base = {
      backend: BACKEND,
      file: this.config.file,
      passphraseSource: describePassphraseSource(this.config.passphrase),
      curves: [...CURVES],
      secp256k1Backend: SECP256K1_BACKEND,
      unlocked: this.keys !== null,
      indexMarkWrites: this.indexMarks.writes,
    };
    if (this.keys && this.meta) {
      return { ...base, initialized: true, fingerprint: this.meta.fingerprint, createdAt: this.meta.createdAt, cache: this.keys.cacheSizes, derivations: { ...this.keys.counters } };
    }
    if (!(await fileExists(this.config.file))) return { ...base, initialized: false, fingerprint: null, createdAt: null };
    const file = await readKeystore(this.config.file);
    return {
      ...base,
      initialized: true,
      fingerprint: file.fingerprint,
      createdAt: file.createdAt,
      kdf: { name: file.kdf, N: file.kdfParams.N, r: file.kdfParams.r, p: file.kdfParams.p },
    };
  }
}

/**
 * RFC 6979 ECDSA with S in the lower half, verified against the key before it is handed out:
 * libsecp256k1 when it loads (about 70 µs for both), else @noble/curves (about 1.5 ms). Both give
 * the same bytes for the same key and digest.
 */
function signSecp256k1(digest: Uint8Array, privateKey: Uint8Array, publicKey: Uint8Array): { bytes: Uint8Array; recovery: number } {
  if (nativeSecp256k1) {
    const { signature, recid } = nativeSecp256k1.ecdsaSign(digest, privateKey);
    if (!nativeSecp256k1.ecdsaVerify(signature, digest, publicKey)) throw new Error('secp256k1 signature failed verification');
    return { bytes: new Uint8Array(signature), recovery: recid };
  }
  const sig = secp256k1.sign(digest, privateKey, { lowS: true });
  const bytes = sig.toCompactRawBytes();
  if (!secp256k1.verify(bytes, digest, publicKey, { format: 'compact', lowS: true }) || sig.recovery === undefined) {
    throw new Error('secp256k1 signature failed verification');
  }
  return { bytes, recovery: sig.recovery };
}
