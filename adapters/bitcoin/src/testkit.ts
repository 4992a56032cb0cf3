/**
 * Test-only helpers (loaded by *.test.ts, never by index.ts): chain definitions built the
 * way the server's catalogue builds them, and the independent derivation oracle
 * (@scure/bip32 for keys, @trustwallet/wallet-core for keys and addresses).
 */
import { FAMILY_TRAITS, type ChainDefinition, type ChainFamily, type Environment } from '@wcs/core';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { initWasm, type WalletCore } from '@trustwallet/wallet-core';

/** The BIP-39 test mnemonic used by BIP-84's own vectors. */
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

// Entries of server/src/catalogue/default-catalogue.ts, and a regtest chain like our bcoin test node's.
export const BTC_MAINNET = chainDefinition({ id: 1, code: 'BTC', name: 'Bitcoin', family: 'bitcoin', environment: 'live', network: 'mainnet', nativeSymbol: 'BTC', decimals: 8, confirmations: 2, evmChainId: null });
export const BTC_TESTNET = chainDefinition({ id: 101, code: 'BTC', name: 'Bitcoin Testnet', family: 'bitcoin', environment: 'test', network: 'testnet', nativeSymbol: 'BTC', decimals: 8, confirmations: 1, evmChainId: null });
export const BTC_REGTEST_RB = chainDefinition({ id: 901, code: 'BTC', name: 'Bitcoin Regtest (bcoin)', family: 'bitcoin', environment: 'test', network: 'regtest', nativeSymbol: 'BTC', decimals: 8, confirmations: 1, evmChainId: null, options: { bech32Hrp: 'rb' } });

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

/** wallet-core's own key at path (compressed) and its P2WPKH address under hrp. */
export function walletCoreP2wpkh(wc: WalletCore, path: string, hrp: string): { publicKeyHex: string; address: string } {
  const wallet = walletCoreWallet(wc);
  const key = wallet.getKey(wc.CoinType.bitcoin, path);
  const pub = key.getPublicKeySecp256k1(true);
  const address = wc.AnyAddress.createBech32WithPublicKey(pub, wc.CoinType.bitcoin, hrp);
  const out = { publicKeyHex: hex(pub.data()), address: address.description() };
  address.delete();
  pub.delete();
  key.delete();
  return out;
}
