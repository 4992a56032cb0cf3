// @wcs/custody-pkcs11: keys generated and kept inside a PKCS#11 HSM; ECDSA secp256k1 and EdDSA ed25519.
export { plugin } from './plugin';
export { Pkcs11KeyStore, PACKAGE_NAME, BACKEND, MAX_ED25519_PAYLOAD, RECONNECT_INTERVAL_MS, KEY_CACHE_SIZE } from './pkcs11-keystore';
export { checkPkcs11Token, type CheckResult } from './initialize';
export { ENV, DEFAULT_SESSIONS, DEFAULT_SIGN_ATTEMPTS, DEFAULT_KEY_DOMAIN, resolveConfig, type Pkcs11Config } from './config';
export { CKM_EC_EDWARDS_KEY_PAIR_GEN, CKM_EDDSA, CKK_EC_EDWARDS, EC_PARAMS, MECHANISMS } from './constants';
export { keyIdentity, type KeyIdentity } from './objects';
export { finishEcdsa } from './signature';
