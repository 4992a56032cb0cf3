// @wcs/custody-software: encrypted BIP-39 seed, BIP-32 (secp256k1) and SLIP-10 (ed25519) derivation.
export { plugin } from './plugin';
export {
  SoftwareKeyStore,
  initializeSoftwareKeystore,
  PACKAGE_NAME,
  BACKEND,
  MAX_ED25519_PAYLOAD,
  type SoftwareKeyStoreTuning,
} from './software-keystore';
export { changeSoftwareKeystorePassphrase } from './change-passphrase';
export { SoftwareIndexMarks } from './index-marks';
export { KeyStoreError, type KeyStoreErrorCode } from './errors';
export { ENV, DEFAULT_KEYSTORE_FILE, DEV_PASSPHRASE_FILE, MIN_NEW_PASSPHRASE_BYTES, resolveConfig, type SoftwareKeyStoreConfig, type PassphraseSource } from './config';
export { SCRYPT_N, SCRYPT_R, SCRYPT_P, type KeystoreFileV1 } from './keystore-file';
export { CACHE_LIMITS } from './hd';
