/** Why a software keystore operation was refused. Messages never contain secret material. */
export type KeyStoreErrorCode =
  /** Configuration is missing or contradictory (passphrase variables, file paths, test options). */
  | 'KEYSTORE_CONFIG'
  /** The keystore file does not exist (run `wcs keystore init`). */
  | 'KEYSTORE_NOT_INITIALIZED'
  /** `wcs keystore init` found an existing keystore file and refused to overwrite it. */
  | 'KEYSTORE_EXISTS'
  /** Wrong passphrase, or the file was modified (AES-GCM authentication failed). */
  | 'KEYSTORE_DECRYPT'
  /** The keystore file is not a well-formed version-1 keystore. */
  | 'KEYSTORE_FILE_INVALID'
  /** The store is not unlocked (init() not called, or destroy() was called). */
  | 'KEYSTORE_LOCKED'
  /** The operator-provided mnemonic is not a valid English BIP-39 mnemonic. */
  | 'KEYSTORE_MNEMONIC_INVALID'
  /** The KeyRef is malformed (applicationId, index, namespace, path template). */
  | 'KEY_REF_INVALID'
  /** The KeyRef's curve is unsupported or contradicts the curve its namespace already uses. */
  | 'KEY_CURVE_MISMATCH'
  /** One namespace + purpose asked for two different path templates (a key-per-namespace backend could not mirror it). */
  | 'KEY_SPEC_CONFLICT'
  /** The payload to sign has the wrong type or size. */
  | 'KEY_PAYLOAD_INVALID';

export class KeyStoreError extends Error {
  readonly code: KeyStoreErrorCode;

  constructor(code: KeyStoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KeyStoreError';
    this.code = code;
  }
}
