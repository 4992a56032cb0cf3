import type { Curve } from './chain';
import type { KeyIndexMarks } from './index-marks';

/** What a key is for. Deposit keys are per user (HD chains) or per application (memo chains). */
export type KeyPurpose = 'deposit' | 'hot' | 'fee';

/**
 * How a family lays out its keys. The software keystore reads the path template
 * (BIP-32 for secp256k1, SLIP-10 for ed25519); an HSM keystore uses `namespace` only,
 * as part of the key's identity, and generates one key per KeyRef.
 */
export interface KeySpec {
  /** Stable key namespace: chains that share keys share it (all EVM chains use "evm"). */
  readonly namespace: string;
  readonly curve: Curve;
  /**
   * Derivation path with placeholders {account} (the application's hardened account) and
   * {index} (the key index), e.g. "m/84'/1'/{account}'/0/{index}". For secp256k1 the levels
   * after {account}' should be unhardened, so per-user keys come from the cached account xpub.
   */
  readonly pathTemplate: string;
}

export interface KeyRef {
  readonly applicationId: number;
  readonly spec: KeySpec;
  readonly purpose: KeyPurpose;
  /** Non-negative key index below 2^31. */
  readonly index: number;
}

export interface PublicKey {
  readonly curve: Curve;
  /** secp256k1: 33-byte compressed point; ed25519: 32 bytes. */
  readonly bytes: Uint8Array;
  /**
   * secp256k1, optional: the same point uncompressed (65 bytes, 04 prefix), when the key store
   * has it at no cost. Consumers check it against `bytes` (secp256k1Uncompressed) before use.
   */
  readonly uncompressed?: Uint8Array;
}

export interface KeySignature {
  readonly curve: Curve;
  /** secp256k1: r || s (64 bytes, low-S); ed25519: the 64-byte signature. */
  readonly bytes: Uint8Array;
  /** secp256k1 only: recovery id 0 or 1. */
  readonly recovery: number | null;
}

/**
 * The only place private keys exist. Backends (software, PKCS#11) are lifecycle
 * strategies: init before use, destroy at shutdown.
 */
export interface KeyStore {
  readonly name: string;
  readonly pluginApiVersion: number;
  init(): Promise<void>;
  destroy(): Promise<void>;
  /** Creates (HSM) or derives (HD) the key for ref if needed and returns its public key. */
  getPublicKey(ref: KeyRef): Promise<PublicKey>;
  /**
   * Signs for ref. secp256k1: `payload` is a 32-byte digest (ECDSA, low-S, with recovery id).
   * ed25519: `payload` is the message itself (EdDSA hashes internally).
   */
  sign(ref: KeyRef, payload: Uint8Array): Promise<KeySignature>;
  /** Operator-facing facts, never secret material (fingerprints, key counts). */
  status(): Promise<Record<string, unknown>>;
  /**
   * Optional capability: key-index marks kept in the key store itself, where a database restore
   * cannot roll them back (index-marks.ts; docs/deployment.md, "Key-index marks"). The server
   * reserves no deposit index above a mark without raising the mark first. Both built-in
   * backends have it; a backend without it leaves the service unprotected against a restore.
   */
  readonly indexMarks?: KeyIndexMarks;
}

/** A generated (non-HD) key as the directory records it: the device's object id and its public key. */
export interface KeyRecord {
  readonly curve: Curve;
  /** The backend's identifier of the key object (PKCS#11: CKA_ID). */
  readonly keyId: Uint8Array;
  /** secp256k1: 33-byte compressed point; ed25519: 32 bytes. */
  readonly publicKey: Uint8Array;
}

/**
 * Where a key-per-ref backend (PKCS#11) records which key serves which KeyRef, outside the device
 * (the server keeps it in Postgres). Only public facts: never private material.
 */
export interface KeyDirectory {
  /** The record of ref, or null when no key was created for it yet. */
  lookup(backend: string, ref: KeyRef): Promise<KeyRecord | null>;
  /**
   * Under a lock on ref held across processes: the stored record if there is one; otherwise
   * calls create() and stores what it returns, in the same transaction. If create() throws,
   * nothing is stored. Concurrent callers for one ref get the one stored record.
   */
  lookupOrCreate(backend: string, ref: KeyRef, create: () => Promise<KeyRecord>): Promise<KeyRecord>;
}

/** How a KeyStore backend is configured: the server's data directory and environment. */
export interface KeyStoreOptions {
  readonly dataDir: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** embedded/dev set-up: may create missing key material on first start */
  readonly devMode: boolean;
  /**
   * Key directory for backends that generate one key per ref (PKCS#11). Without it such a
   * backend finds keys on the device alone and is safe in one process only.
   */
  readonly directory?: KeyDirectory;
}

/** What a keystore backend package exports (as `plugin`); the backend is selected by config. */
export interface KeyStorePlugin {
  /** The npm package name. */
  readonly name: string;
  readonly pluginApiVersion: number;
  /** Config value that selects this backend ("software", "pkcs11"). */
  readonly backend: string;
  create(options: KeyStoreOptions): KeyStore;
  /** `wcs keystore init`: create key material (software: new encrypted seed) or check the device; returns operator facts, never secrets */
  initialize(options: KeyStoreOptions, params: { mnemonic?: string }): Promise<Record<string, unknown>>;
  /**
   * Optional: `wcs keystore change-passphrase` (software: re-encrypt the key-store file under the
   * new passphrase, atomically); returns operator facts, never secrets. A backend without it has
   * no passphrase of its own (PKCS#11: the user PIN is changed on the token).
   */
  changePassphrase?(options: KeyStoreOptions): Promise<Record<string, unknown>>;
}

/**
 * What status() reports, at least. `unlocked`: the store can serve now (software: seed decrypted;
 * PKCS#11: token present and logged in). Backends add their own facts.
 */
export interface KeyStoreStatus extends Record<string, unknown> {
  readonly backend: string;
  readonly unlocked: boolean;
}
