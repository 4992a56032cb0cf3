/**
 * Test-only helpers (loaded by *.test.ts, never by index.ts): chain definitions built the
 * way the server's catalogue builds them, and the independent derivation oracle
 * (@scure/bip32 for keys, @trustwallet/wallet-core for keys and addresses).
 */
import { FAMILY_TRAITS, type ChainDefinition, type ChainFamily, type Environment } from '@wcs/core';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { initWasm, type WalletCore } from '@trustwallet/wallet-core';

/** The BIP-39 test mnemonic ("abandon" x 11 + "about"). */
export const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

export interface ChainConfigLike {
  id: number;
  code: string;
  name: string;
  family: ChainFamily;
  environment: Environment;
  network: string;
  nativeSymbol: string;
  decimals: number;
  confirmations: number;
  evmChainId: number | null;
  options?: Record<string, string>;
}

/** Same fields and derivations as server/src/catalogue/catalogue.ts resolveCatalogue(). */
export function chainDefinition(c: ChainConfigLike): ChainDefinition {
  return {
    id: c.id, code: c.code, name: c.name, family: c.family, environment: c.environment, network: c.network,
    curve: FAMILY_TRAITS[c.family].curve, addressing: FAMILY_TRAITS[c.family].addressing,
    nativeSymbol: c.nativeSymbol, decimals: c.decimals, confirmations: c.confirmations, evmChainId: c.evmChainId ?? null,
    options: Object.freeze({ ...(c.options ?? {}) }),
  };
}

// Entries of server/src/catalogue/default-catalogue.ts ...
export const ETH_MAINNET = chainDefinition({ id: 2, code: 'ETH', name: 'Ethereum', family: 'evm', environment: 'live', network: 'mainnet', nativeSymbol: 'ETH', decimals: 18, confirmations: 12, evmChainId: 1 });
export const BSC_MAINNET = chainDefinition({ id: 3, code: 'BSC', name: 'BNB Smart Chain', family: 'evm', environment: 'live', network: 'mainnet', nativeSymbol: 'BNB', decimals: 18, confirmations: 20, evmChainId: 56 });
export const POLYGON_MAINNET = chainDefinition({ id: 4, code: 'POLYGON', name: 'Polygon PoS', family: 'evm', environment: 'live', network: 'mainnet', nativeSymbol: 'POL', decimals: 18, confirmations: 128, evmChainId: 137 });
export const ETH_SEPOLIA = chainDefinition({ id: 102, code: 'ETH', name: 'Ethereum Sepolia', family: 'evm', environment: 'test', network: 'sepolia', nativeSymbol: 'ETH', decimals: 18, confirmations: 3, evmChainId: 11155111 });
// ... and a chain that exists only as configuration: no code in this package names it.
export const BASE_MAINNET = chainDefinition({ id: 9, code: 'BASE', name: 'Base', family: 'evm', environment: 'live', network: 'mainnet', nativeSymbol: 'ETH', decimals: 18, confirmations: 10, evmChainId: 8453 });

const root = HDKey.fromMasterSeed(mnemonicToSeedSync(MNEMONIC));

/** The compressed public key at path, derived by @scure/bip32. */
export function scurePublicKey(path: string): Uint8Array {
  const key = root.derive(path).publicKey;
  if (!key) throw new Error(`no public key at ${path}`);
  return key;
}

export function fillPath(template: string, account: number, index: number): string {
  return template.replace('{account}', String(account)).replace('{index}', String(index));
}

let core: Promise<WalletCore> | undefined;
/** wallet-core's WebAssembly build, loaded once (~0.2 s). Its exceptions abort the module: only call it on valid input. */
export function walletCore(): Promise<WalletCore> {
  core ??= initWasm();
  return core;
}

let hdWallet: InstanceType<WalletCore['HDWallet']> | undefined;
/** wallet-core's HD wallet for MNEMONIC, created once (its seed derivation is the slow part). */
function walletCoreWallet(wc: WalletCore): InstanceType<WalletCore['HDWallet']> {
  hdWallet ??= wc.HDWallet.createWithMnemonic(MNEMONIC, '');
  return hdWallet;
}

export const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

export type WalletCoreCoin = 'ethereum' | 'smartChain' | 'polygon' | 'base';

/** wallet-core's own key at path (compressed hex) and its address for coin (from the uncompressed key). */
export function walletCoreEvm(wc: WalletCore, path: string, coin: WalletCoreCoin = 'ethereum'): { publicKeyHex: string; address: string } {
  const wallet = walletCoreWallet(wc);
  const key = wallet.getKey(wc.CoinType[coin], path);
  const compressed = key.getPublicKeySecp256k1(true);
  const uncompressed = key.getPublicKeySecp256k1(false);
  const address = wc.AnyAddress.createWithPublicKey(uncompressed, wc.CoinType[coin]);
  const out = { publicKeyHex: hex(compressed.data()), address: address.description() };
  for (const o of [address, uncompressed, compressed, key]) o.delete();
  return out;
}

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

