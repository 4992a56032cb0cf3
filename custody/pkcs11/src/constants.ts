import * as pkcs11js from 'pkcs11js';

/**
 * PKCS#11 3.0 EdDSA constants that pkcs11js does not define (values from the PKCS#11 3.0
 * specification, pkcs11t.h).
 */
export const CKM_EC_EDWARDS_KEY_PAIR_GEN = 0x1055;
export const CKM_EDDSA = 0x1057;
export const CKK_EC_EDWARDS = 0x40;

/** DER of the named-curve OIDs for CKA_EC_PARAMS: secp256k1 1.3.132.0.10 (SEC 2), Ed25519 1.3.101.112 (RFC 8410). */
export const EC_PARAMS = Object.freeze({
  secp256k1: Buffer.from('06052b8104000a', 'hex'),
  ed25519: Buffer.from('06032b6570', 'hex'),
});

export interface CurveMechanisms {
  readonly keyType: number;
  readonly generate: number;
  readonly sign: number;
  readonly names: { readonly generate: string; readonly sign: string };
}

/** The mechanisms each curve needs on the token. */
export const MECHANISMS: Readonly<Record<'secp256k1' | 'ed25519', CurveMechanisms>> = Object.freeze({
  secp256k1: {
    keyType: pkcs11js.CKK_EC,
    generate: pkcs11js.CKM_EC_KEY_PAIR_GEN,
    sign: pkcs11js.CKM_ECDSA,
    names: { generate: 'CKM_EC_KEY_PAIR_GEN', sign: 'CKM_ECDSA' },
  },
  ed25519: {
    keyType: CKK_EC_EDWARDS,
    generate: CKM_EC_EDWARDS_KEY_PAIR_GEN,
    sign: CKM_EDDSA,
    names: { generate: 'CKM_EC_EDWARDS_KEY_PAIR_GEN', sign: 'CKM_EDDSA' },
  },
});

/** CK_TOKEN_INFO flags. */
export const CKF_TOKEN_INITIALIZED = 0x400;
export const CKF_USER_PIN_INITIALIZED = 0x8;
export const CKF_USER_PIN_LOCKED = 0x40000;

/** Return values after which the sessions (or the whole module) are re-opened before a retry. */
export const RECONNECT_CODES: ReadonlySet<number> = new Set([
  pkcs11js.CKR_SESSION_HANDLE_INVALID,
  pkcs11js.CKR_SESSION_CLOSED,
  pkcs11js.CKR_DEVICE_REMOVED,
  pkcs11js.CKR_DEVICE_ERROR,
  pkcs11js.CKR_TOKEN_NOT_PRESENT,
  pkcs11js.CKR_TOKEN_NOT_RECOGNIZED,
  pkcs11js.CKR_USER_NOT_LOGGED_IN,
  pkcs11js.CKR_CRYPTOKI_NOT_INITIALIZED,
  pkcs11js.CKR_SLOT_ID_INVALID,
  pkcs11js.CKR_OBJECT_HANDLE_INVALID,
  pkcs11js.CKR_KEY_HANDLE_INVALID,
  pkcs11js.CKR_GENERAL_ERROR,
]);

/** Login refusals: never retried with the same PIN (a real HSM locks the PIN after a few tries). */
export const LOGIN_REFUSED_CODES: ReadonlySet<number> = new Set([
  pkcs11js.CKR_PIN_INCORRECT,
  pkcs11js.CKR_PIN_LOCKED,
  pkcs11js.CKR_PIN_EXPIRED,
  pkcs11js.CKR_PIN_INVALID,
  pkcs11js.CKR_PIN_LEN_RANGE,
]);

/** The CKR_ name of a return value (for messages). */
export function ckrName(code: number): string {
  for (const [k, v] of Object.entries(pkcs11js)) if (k.startsWith('CKR_') && v === code) return k;
  return `CKR 0x${code.toString(16)}`;
}

/** The return value of a pkcs11js error, or null for other errors. */
export function ckrOf(e: unknown): number | null {
  const code = (e as { code?: unknown })?.code;
  const name = (e as { message?: unknown })?.message;
  if (typeof code === 'number' && typeof name === 'string' && name.startsWith('CKR_')) return code;
  return null;
}
