import { KeyType, publicKeyToLegacyString, publicKeyToString } from 'eosjs/dist/eosjs-numeric';
import { secp256k1Uncompressed, type PublicKey } from '@wcs/core';

/** Checks a 33-byte compressed secp256k1 point; returns its bytes. */
export function checkK1PublicKey(key: PublicKey | Uint8Array): Uint8Array {
  const bytes = key instanceof Uint8Array ? key : key.bytes;
  if (!(key instanceof Uint8Array) && key.curve !== 'secp256k1') throw new TypeError(`EOS keys are secp256k1, got ${key.curve}`);
  if (bytes.length !== 33 || (bytes[0] !== 2 && bytes[0] !== 3)) throw new TypeError('an EOS K1 key is a 33-byte compressed point (02/03 prefix)');
  secp256k1Uncompressed(key); // throws a TypeError when the point is not on the curve
  return bytes;
}

/**
 * For operators: the key as EOS writes it (PUB_K1_…), to put in the deposit account's permission
 * (e.g. `cleos set account permission <account> active PUB_K1_… owner`).
 */
export function eosPublicKeyToString(key: PublicKey | Uint8Array): string {
  return publicKeyToString({ type: KeyType.k1, data: checkK1PublicKey(key) });
}

/** The same key in the legacy EOS… form that older tools show. */
export function eosPublicKeyToLegacyString(key: PublicKey | Uint8Array): string {
  return publicKeyToLegacyString({ type: KeyType.k1, data: checkK1PublicKey(key) });
}
