import { expect } from 'chai';
import { HDNodeWallet, SigningKey, getBytes } from 'ethers';
import type { ChainDefinition, KeyPurpose, KeySignature, PublicKey } from '@wcs/core';
import { TEST_MNEMONIC, fillPath, testPublicKey, toHex } from '@wcs/core/testing';
import { evmKeySpec, plugin } from './index';

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/**
 * A key as the KeyStore would serve it: derived test-side for a purpose (the adapter's keySpec,
 * TEST_MNEMONIC), its public key checked against core's oracle (@scure/bip32), and a signer that
 * follows KeyStore.sign's secp256k1 contract: a 32-byte digest in, r || s (64 bytes, low-S) and a
 * recovery id 0/1 out.
 */
export interface TestKey {
  readonly address: string;
  readonly publicKey: PublicKey;
  readonly privateKey: string;
  sign(payload: Uint8Array): KeySignature;
}

export function testKey(chain: ChainDefinition, account: number, index: number, purpose: KeyPurpose = 'hot'): TestKey {
  const path = fillPath(evmKeySpec(purpose).pathTemplate, account, index);
  const wallet = HDNodeWallet.fromPhrase(TEST_MNEMONIC, undefined, path);
  const bytes = getBytes(wallet.signingKey.compressedPublicKey);
  expect(toHex(bytes), `oracle key at ${path}`).to.equal(toHex(testPublicKey('secp256k1', path)));
  const publicKey: PublicKey = { curve: 'secp256k1', bytes };
  const key = new SigningKey(wallet.privateKey);
  return {
    address: plugin.create(chain).address.addressFromPublicKey(publicKey),
    publicKey,
    privateKey: wallet.privateKey,
    sign: (payload) => signDigest(key, payload),
  };
}

export function signDigest(key: SigningKey, payload: Uint8Array): KeySignature {
  if (!(payload instanceof Uint8Array) || payload.length !== 32) throw new TypeError('secp256k1 payloads are 32-byte digests');
  const sig = key.sign(payload);
  let s = BigInt(sig.s);
  let recovery = sig.yParity as number;
  if (s > N >> 1n) { // normalise to low-S (flipping the recovery id), as the KeyStore contract demands
    s = N - s;
    recovery ^= 1;
  }
  const bytes = new Uint8Array(64);
  bytes.set(getBytes(sig.r), 0);
  bytes.set(getBytes(`0x${s.toString(16).padStart(64, '0')}`), 32);
  return { curve: 'secp256k1', bytes, recovery };
}
