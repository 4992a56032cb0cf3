import { CURVES, type Curve } from './chain';
import type { KeyRef } from './keystore';

/** Why a key-store operation was refused or failed. Messages never contain secret material. */
export type KeyStoreErrorCode =
  /** Configuration is missing or contradictory (passphrase / PIN variables, file paths, library path, test options). */
  | 'KEYSTORE_CONFIG'
  /** The key material does not exist yet (software: no keystore file; run `wcs keystore init`). */
  | 'KEYSTORE_NOT_INITIALIZED'
  /** `wcs keystore init` found existing key material and refused to overwrite it. */
  | 'KEYSTORE_EXISTS'
  /** Wrong passphrase, or the file was modified (AES-GCM authentication failed). */
  | 'KEYSTORE_DECRYPT'
  /** The keystore file is not a well-formed version-1 keystore. */
  | 'KEYSTORE_FILE_INVALID'
  /** The store is not unlocked (init() not called, or destroy() was called). */
  | 'KEYSTORE_LOCKED'
  /** The operator-provided mnemonic is not a valid English BIP-39 mnemonic. */
  | 'KEYSTORE_MNEMONIC_INVALID'
  /** The device cannot be used now: library missing, token absent or removed, session lost and not re-opened. */
  | 'KEYSTORE_UNAVAILABLE'
  /** The device refused the credentials (wrong PIN, PIN locked or expired). */
  | 'KEYSTORE_LOGIN'
  /** The device lacks a mechanism or curve the store needs. */
  | 'KEYSTORE_MECHANISM'
  /** The KeyRef is malformed (applicationId, index, namespace, path template). */
  | 'KEY_REF_INVALID'
  /** The KeyRef's curve is unsupported or contradicts the curve its namespace already uses. */
  | 'KEY_CURVE_MISMATCH'
  /** One namespace + purpose asked for two different path templates (a key-per-namespace backend could not mirror it). */
  | 'KEY_SPEC_CONFLICT'
  /** The payload to sign has the wrong type or size. */
  | 'KEY_PAYLOAD_INVALID'
  /** The key is recorded (directory) but its object is not on the device. */
  | 'KEY_NOT_FOUND'
  /** The device kept returning signatures that do not verify against the stored public key. */
  | 'KEY_SIGNATURE_INVALID';

/** Codes that mean "the key store cannot serve now; retry later" (the API answers 503). */
export const KEYSTORE_UNAVAILABLE_CODES: ReadonlySet<KeyStoreErrorCode> = new Set<KeyStoreErrorCode>([
  'KEYSTORE_LOCKED',
  'KEYSTORE_UNAVAILABLE',
  'KEYSTORE_LOGIN',
  'KEYSTORE_NOT_INITIALIZED',
  'KEYSTORE_DECRYPT',
  'KEYSTORE_MECHANISM',
  'KEY_NOT_FOUND',
  'KEY_SIGNATURE_INVALID',
]);

/** The error every key-store backend throws, with a stable code and a cause chain. */
export class KeyStoreError extends Error {
  readonly code: KeyStoreErrorCode;

  constructor(code: KeyStoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KeyStoreError';
    this.code = code;
  }
}

export function isKeyStoreError(e: unknown): e is KeyStoreError {
  return e instanceof KeyStoreError;
}

/** Key index / account limit: indices are below 2^31 (BIP-32's hardened boundary). */
export const KEY_INDEX_LIMIT = 0x80000000;

function checkIndex(name: string, v: unknown, min: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v >= KEY_INDEX_LIMIT) {
    throw new KeyStoreError('KEY_REF_INVALID', `${name} must be an integer from ${min} to 2^31-1, not ${String(v)}`);
  }
  return v;
}

/**
 * The shape checks every backend applies to a KeyRef: a spec object with a supported curve and a
 * namespace of 1-128 characters, applicationId 1..2^31-1, index 0..2^31-1. `backend` names the
 * store in the unsupported-curve message.
 */
export function checkKeyRef(ref: KeyRef, backend: string, curves: readonly Curve[] = CURVES): { curve: Curve; applicationId: number; index: number } {
  if (!ref || typeof ref !== 'object' || !ref.spec || typeof ref.spec !== 'object') {
    throw new KeyStoreError('KEY_REF_INVALID', 'a KeyRef with a spec is required');
  }
  const curve = ref.spec.curve;
  if (!(curves as readonly string[]).includes(curve)) {
    throw new KeyStoreError('KEY_CURVE_MISMATCH', `unsupported curve ${JSON.stringify(curve)} (the ${backend} keystore has ${curves.join(', ')})`);
  }
  const ns = ref.spec.namespace;
  if (typeof ns !== 'string' || ns === '' || ns.length > 128) throw new KeyStoreError('KEY_REF_INVALID', 'spec.namespace must be a string of 1 to 128 characters');
  if (!['deposit', 'hot', 'fee'].includes(String(ref.purpose))) throw new KeyStoreError('KEY_REF_INVALID', `purpose must be deposit, hot or fee, not ${String(ref.purpose)}`);
  return { curve, applicationId: checkIndex('applicationId', ref.applicationId, 1), index: checkIndex('index', ref.index, 0) };
}

/**
 * One curve per namespace: a key-per-namespace backend could not give two curves one identity.
 * Remembers the first curve seen for each namespace and refuses another.
 */
export class NamespaceCurves {
  private readonly curves = new Map<string, Curve>();

  check(namespace: string, curve: Curve): void {
    const known = this.curves.get(namespace);
    if (known !== undefined && known !== curve) {
      throw new KeyStoreError('KEY_CURVE_MISMATCH', `namespace ${JSON.stringify(namespace)} holds ${known} keys, not ${curve}`);
    }
    if (known === undefined) this.curves.set(namespace, curve);
  }
}
