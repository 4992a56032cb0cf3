/**
 * Test-only (loaded by *.test.ts, never by index.ts): this package's test chains, with the
 * wallet-core coin of each, and derivation vectors valid on every EVM chain.
 */
import type { ChainDefinition } from '@wcs/core';
import { testChain, type WalletCoreCoin } from '@wcs/core/testing';

// Entries of server/src/catalogue/default-catalogue.ts ...
export const ETH_MAINNET = testChain({ id: 2, code: 'ETH', name: 'Ethereum', family: 'evm', environment: 'live', network: 'mainnet', nativeSymbol: 'ETH', decimals: 18, confirmations: 12, evmChainId: 1 });
export const BSC_MAINNET = testChain({ id: 3, code: 'BSC', name: 'BNB Smart Chain', family: 'evm', environment: 'live', network: 'mainnet', nativeSymbol: 'BNB', decimals: 18, confirmations: 20, evmChainId: 56 });
export const POLYGON_MAINNET = testChain({ id: 4, code: 'POLYGON', name: 'Polygon PoS', family: 'evm', environment: 'live', network: 'mainnet', nativeSymbol: 'POL', decimals: 18, confirmations: 128, evmChainId: 137 });
export const ETH_SEPOLIA = testChain({ id: 102, code: 'ETH', name: 'Ethereum Sepolia', family: 'evm', environment: 'test', network: 'sepolia', nativeSymbol: 'ETH', decimals: 18, confirmations: 3, evmChainId: 11155111 });
// ... and a chain that exists only as configuration: no code in this package names it.
export const BASE_MAINNET = testChain({ id: 9, code: 'BASE', name: 'Base', family: 'evm', environment: 'live', network: 'mainnet', nativeSymbol: 'ETH', decimals: 18, confirmations: 10, evmChainId: 8453 });

/** Every test chain with the wallet-core coin whose addresses it is checked against. */
export const EVM_CHAINS: ReadonlyArray<readonly [ChainDefinition, WalletCoreCoin]> = [
  [ETH_MAINNET, 'ethereum'], [BSC_MAINNET, 'smartChain'], [POLYGON_MAINNET, 'polygon'], [ETH_SEPOLIA, 'ethereum'], [BASE_MAINNET, 'base'],
];

export type Derivation = { publicKeyHex: string; address: string; source: string };

// The secp256k1 generator G (the public key of private key 1), compressed and uncompressed (SEC 2, 2.4.1).
const G_COMPRESSED = '0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798';
const G_UNCOMPRESSED = '0479be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8';

/** Vectors valid on every EVM chain (an EVM address is chain-independent). */
export const STATIC_DERIVATIONS: readonly Derivation[] = [
  { publicKeyHex: G_COMPRESSED, address: '0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf', source: 'private key 1 (generator G), compressed; the well-known address, checked against wallet-core in derivation.test' },
  { publicKeyHex: G_UNCOMPRESSED, address: '0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf', source: 'private key 1 (generator G), uncompressed' },
  { publicKeyHex: '0237b0bb7a8288d38ed49a524b5dc98cff3eb5ca824c9f9dc0dfdb3d9cd600f299', address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', source: "abandon…about m/44'/60'/0'/0/0, the widely published test-mnemonic address (checked against wallet-core in derivation.test)" },
];
