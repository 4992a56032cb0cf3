import { expect } from 'chai';
import { Keypair, TransactionBuilder, type Transaction } from '@stellar/stellar-sdk';
import type { KeySignature, SequenceTransferRequest, TransferIntent, UnsignedTransfer } from '@wcs/core';
import { fillPath, slip10Ed25519, testPublicKey, testSeed } from '@wcs/core/testing';
import { STELLAR_KEY_SPECS } from './index';
import type { StellarTransferCrafter } from './transfer';

/** A test-side stand-in for KeyStore.sign on ed25519: signs the payload bytes as the message. */
export interface TestKey {
  readonly address: string;
  readonly publicKey: Uint8Array;
  sign(payload: Uint8Array): KeySignature;
}

export function keyFromSeed(seed: Uint8Array): TestKey {
  const kp = Keypair.fromRawEd25519Seed(Buffer.from(seed));
  return {
    address: kp.publicKey(),
    publicKey: Uint8Array.from(kp.rawPublicKey()),
    sign: (payload) => ({ curve: 'ed25519', bytes: Uint8Array.from(kp.sign(Buffer.from(payload))), recovery: null }),
  };
}

/** The hot key (account 1, index i) of the BIP-39 test mnemonic, at STELLAR_KEY_SPECS.hot. */
export function hotKey(index: number): TestKey {
  const path = fillPath(STELLAR_KEY_SPECS.hot.pathTemplate, 1, index);
  const key = keyFromSeed(slip10Ed25519(testSeed(), path));
  expect(Buffer.from(key.publicKey).equals(Buffer.from(testPublicKey('ed25519', path)))).to.equal(true);
  return key;
}

/** What the transfer says before a sequence is allocated (what the node's transferInput takes). */
export function intent(from: TestKey, to: string, amount: bigint, memo: string | null = null, contract: string | null = null): TransferIntent {
  return { from: from.address, fromPublicKey: { curve: 'ed25519', bytes: from.publicKey }, to, memo, contract, amount };
}

/** The transfer at its allocated sequence (what the crafter takes). */
export function request(from: TestKey, to: string, amount: bigint, sequence: bigint, memo: string | null = null, contract: string | null = null): SequenceTransferRequest {
  return { ...intent(from, to, amount, memo, contract), sequence };
}

export const signAndCombine = (crafter: StellarTransferCrafter, unsigned: UnsignedTransfer, key: TestKey) =>
  crafter.combine(unsigned, unsigned.payloads.map((p) => key.sign(p)));

/** The signed envelope decoded by the SDK. */
export function decoded(raw: Uint8Array, passphrase: string): Transaction {
  const tx = TransactionBuilder.fromXDR(Buffer.from(raw).toString('base64'), passphrase);
  expect(tx.constructor.name).to.equal('Transaction');
  return tx as Transaction;
}
