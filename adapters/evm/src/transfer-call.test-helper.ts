import { getAddress, hexlify, randomBytes } from 'ethers';
import type { SequenceTransferRequest, SignedAuthorization, TransferIntent } from '@wcs/core';
import { testChain } from '@wcs/core/testing';
import { testKey, type TestKey } from './keys.test-helper';
import { authorizationDigest } from './delegation/authorization';

/** The anvil chain as the catalogue would define it (chain id 31337). */
export const ANVIL_CHAIN = testChain({ id: 900, code: 'ANVIL', name: 'anvil devnet', family: 'evm', environment: 'test', network: 'anvil', nativeSymbol: 'ETH', decimals: 18, confirmations: 1, evmChainId: 31337 });
export const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** A fresh EIP-55 address nobody uses. */
export const fresh = () => getAddress(hexlify(randomBytes(20)));

/** A fee wallet's key as the KeyStore serves it ('fee' purpose, TEST_MNEMONIC). */
export const feeKey = (account: number, index: number): TestKey => testKey(ANVIL_CHAIN, account, index, 'fee');

/** A deposit address's key as the KeyStore serves it: the accounts that delegate in a delegated sweep. */
export const depositKey = (account: number, index: number): TestKey => testKey(ANVIL_CHAIN, account, index, 'deposit');

/**
 * An authorization signed as the KeyStore signs one: the digest (authorizationDigest) signed by
 * the authority's key through KeyStore.sign's secp256k1 contract (r || s low-S, recovery id),
 * written as SignedAuthorization.
 */
export function signAuthorization(authority: TestKey, delegate: string, nonce: bigint, chainId = 31337n): SignedAuthorization {
  const sig = authority.sign(authorizationDigest({ chainId, address: delegate, nonce }));
  return {
    authority: authority.address, chainId: chainId.toString(), address: delegate, nonce: nonce.toString(),
    yParity: sig.recovery as 0 | 1, r: hexlify(sig.bytes.subarray(0, 32)), s: hexlify(sig.bytes.subarray(32)),
  };
}

/** A contract call from `key` (before its nonce is allocated). */
export function callIntent(key: TestKey, to: string, value: bigint, data: string, authorizations: readonly SignedAuthorization[] = []): TransferIntent {
  return { from: key.address, fromPublicKey: key.publicKey, to, memo: null, contract: null, amount: value, call: { data, authorizations } };
}

export function callRequest(key: TestKey, to: string, value: bigint, data: string, authorizations: readonly SignedAuthorization[], sequence: bigint): SequenceTransferRequest {
  return { ...callIntent(key, to, value, data, authorizations), sequence };
}
