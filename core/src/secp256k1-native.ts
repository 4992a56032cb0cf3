/**
 * libsecp256k1 (Bitcoin Core's library, constant time) through the `secp256k1` package's
 * native binding: public-key tweaks (BIP-32 CKDpub is point(I_L) + K_par) in the software key
 * store, signature recovery in the PKCS#11 key store. Loaded from
 * `secp256k1/bindings` directly, never through the package's index, which would fall back
 * to the elliptic JS implementation without a word. When the binding cannot load, the key
 * stores use @noble/curves instead and say so in `wcs keystore status` (secp256k1Backend).
 */
interface NativeSecp256k1 {
  publicKeyTweakAdd(publicKey: Uint8Array, tweak: Uint8Array, compressed?: boolean): Uint8Array;
  publicKeyConvert(publicKey: Uint8Array, compressed?: boolean): Uint8Array;
  /** seckey + tweak mod n, written into seckey (and returned); throws when the tweak is not below n or the sum is zero. */
  privateKeyTweakAdd(seckey: Uint8Array, tweak: Uint8Array): Uint8Array;
  /** The public key that signed msg32 with the 64-byte r||s and recovery id; throws when none does. */
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed?: boolean): Uint8Array;
  /** RFC 6979 deterministic ECDSA, S always in the lower half: r||s (64 bytes) and the recovery id. */
  ecdsaSign(msg32: Uint8Array, seckey: Uint8Array): { signature: Uint8Array; recid: number };
  /** Whether r||s is a valid lower-S signature of msg32 by pubkey (33 or 65 bytes). */
  ecdsaVerify(sig: Uint8Array, msg32: Uint8Array, pubkey: Uint8Array): boolean;
}

function load(): { lib: NativeSecp256k1 | null; error: string | null } {
  if (process.env.WCS_SECP256K1_NATIVE === '0') return { lib: null, error: 'disabled by WCS_SECP256K1_NATIVE=0' };
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return { lib: require('secp256k1/bindings') as NativeSecp256k1, error: null };
  } catch (e) {
    return { lib: null, error: (e as Error).message.split('\n')[0] ?? 'unknown error' };
  }
}

const loaded = load();

/** The native library, or null (see nativeSecpError). */
export const nativeSecp256k1: NativeSecp256k1 | null = loaded.lib;
/** Why the native library is not used, or null when it is. */
export const nativeSecpError: string | null = loaded.error;
/** For status: which implementation derives secp256k1 public keys. */
export const SECP256K1_BACKEND = loaded.lib ? 'libsecp256k1 (native)' : '@noble/curves';
