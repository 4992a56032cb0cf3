import { secp256k1 } from '@noble/curves/secp256k1';
import { HDKey } from '@scure/bip32';
import type { KeySignature } from '@wcs/core';
import { fillPath, signAsKeyStore, testSeed } from '@wcs/core/testing';
import { EOS_KEY_SPECS, eosPublicKeyToString } from './index';

/**
 * A test-side stand-in for KeyStore.sign on secp256k1 (as the software key store does it):
 * ECDSA over the 32-byte digest, RFC 6979, low-S, r || s and the recovery id. No nonce loop:
 * the signature is whatever RFC 6979 gives, canonical in EOS's sense or not.
 */
export interface TestKey {
  readonly publicKey: Uint8Array;
  readonly eosKey: string;
  sign(digest: Uint8Array): KeySignature;
}

export function keyFromPrivate(privateKey: Uint8Array): TestKey {
  const publicKey = secp256k1.getPublicKey(privateKey, true);
  return {
    publicKey,
    eosKey: eosPublicKeyToString(publicKey),
    sign: (digest) => signAsKeyStore('secp256k1', privateKey, digest),
  };
}

/** The hot key (account 1, index i) of the BIP-39 test mnemonic, at EOS_KEY_SPECS.hot. */
export function hotPrivateKey(index: number): Uint8Array {
  return HDKey.fromMasterSeed(testSeed()).derive(fillPath(EOS_KEY_SPECS.hot.pathTemplate, 1, index)).privateKey!;
}
