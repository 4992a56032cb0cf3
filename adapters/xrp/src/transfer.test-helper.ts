import { secp256k1 } from '@noble/curves/secp256k1';
import { HDKey } from '@scure/bip32';
import type { KeySignature, SequenceTransferRequest, TransferIntent, UnsignedTransfer } from '@wcs/core';
import { fillPath, signAsKeyStore, testSeed } from '@wcs/core/testing';
import { XRP_KEY_SPECS, xrpAddressFromPublicKey } from './index';
import type { XrpTransferCrafter } from './transfer';

/**
 * A test-side stand-in for KeyStore.sign on secp256k1 (as the software key store does it):
 * ECDSA over the 32-byte digest, RFC 6979, low-S, r || s and the recovery id.
 */
export interface TestKey {
  readonly address: string;
  readonly publicKey: Uint8Array;
  sign(digest: Uint8Array): KeySignature;
}

export function keyFromPrivate(privateKey: Uint8Array): TestKey {
  const publicKey = secp256k1.getPublicKey(privateKey, true);
  return {
    address: xrpAddressFromPublicKey({ curve: 'secp256k1', bytes: publicKey }),
    publicKey,
    sign: (digest) => signAsKeyStore('secp256k1', privateKey, digest),
  };
}

/** The hot key (account 1, index i) of the BIP-39 test mnemonic, at XRP_KEY_SPECS.hot. */
export function hotKey(index: number): TestKey {
  const node = HDKey.fromMasterSeed(testSeed()).derive(fillPath(XRP_KEY_SPECS.hot.pathTemplate, 1, index));
  return keyFromPrivate(node.privateKey!);
}

/** What the transfer says before a sequence is allocated (what the node's transferInput takes). */
export function intent(from: TestKey, to: string, amount: bigint, memo: string | null = null, contract: string | null = null): TransferIntent {
  return { from: from.address, fromPublicKey: { curve: 'secp256k1', bytes: from.publicKey }, to, memo, contract, amount };
}

/** The transfer at its allocated sequence (what the crafter takes). */
export function request(from: TestKey, to: string, amount: bigint, sequence: bigint, memo: string | null = null, contract: string | null = null): SequenceTransferRequest {
  return { ...intent(from, to, amount, memo, contract), sequence };
}

export const signAndCombine = (crafter: XrpTransferCrafter, unsigned: UnsignedTransfer, key: TestKey) =>
  crafter.combine(unsigned, unsigned.payloads.map((p) => key.sign(p)));
