/**
 * The derivation oracle shared by the adapter tests: keys derived test-side from a mnemonic
 * (@scure/bip32 for secp256k1, SLIP-10 written from the spec on @noble/hashes for ed25519),
 * and Trust Wallet wallet-core's own keys and addresses for the same (coin, path).
 *
 * Independent of custody/software's derivation code on purpose: it is the oracle side.
 * Test-only: reached through '@wcs/core/testing', never through the main entry.
 * @scure/* and @trustwallet/wallet-core are optional peers, loaded on first use.
 */
import { expect } from 'chai';
import { ed25519 } from '@noble/curves/ed25519';
import { secp256k1 } from '@noble/curves/secp256k1';
import { hmac } from '@noble/hashes/hmac';
import { sha512 } from '@noble/hashes/sha2';
import type { HDKey } from '@scure/bip32';
import type { WalletCore } from '@trustwallet/wallet-core';
import type { ChainAdapter } from '../adapter';
import type { Curve } from '../chain';
import type { KeyPurpose, KeySignature, KeySpec } from '../keystore';

/** The BIP-39 test mnemonic ("abandon" x 11 + "about"), as in BIP-84's and wallet-core's own vectors. */
export const TEST_MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

export const KEY_PURPOSES: readonly KeyPurpose[] = Object.freeze(['deposit', 'hot', 'fee'] as const);

export const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
export const fromHex = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, 'hex'));

/** A key path from a KeySpec template ("m/44'/501'/{account}'/{index}'"). */
export function fillPath(template: string, account: number, index: number): string {
  return template.replace('{account}', String(account)).replace('{index}', String(index));
}

/** Something that lays out keys: an adapter (its keySpec) or a family's KEY_SPECS record. */
export type KeyLayout = { keySpec(purpose: KeyPurpose): KeySpec } | Readonly<Record<KeyPurpose, KeySpec>>;

function specOf(layout: KeyLayout, purpose: KeyPurpose): KeySpec {
  return 'keySpec' in layout && typeof layout.keySpec === 'function' ? layout.keySpec(purpose) : (layout as Readonly<Record<KeyPurpose, KeySpec>>)[purpose];
}

/** Every purpose's paths for one account, indices 0..count-1 (to show the purposes never share a key). */
export function layoutPaths(layout: KeyLayout, account: number, count: number): string[] {
  return KEY_PURPOSES.flatMap((purpose) => Array.from({ length: count }, (_, index) => fillPath(specOf(layout, purpose).pathTemplate, account, index)));
}

// --- Test-side derivation --------------------------------------------------------------------

const seeds = new Map<string, Uint8Array>();
/** The BIP-39 seed of mnemonic (no passphrase), computed once per mnemonic. */
export function testSeed(mnemonic: string = TEST_MNEMONIC): Uint8Array {
  let seed = seeds.get(mnemonic);
  if (!seed) {
    const { mnemonicToSeedSync } = require('@scure/bip39') as typeof import('@scure/bip39');
    seed = mnemonicToSeedSync(mnemonic, '');
    seeds.set(mnemonic, seed);
  }
  return seed;
}

/** SLIP-10 ed25519 private key at a hardened-only path: master = HMAC-SHA512("ed25519 seed", seed). */
export function slip10Ed25519(seed: Uint8Array, path: string): Uint8Array {
  let i = hmac(sha512, new TextEncoder().encode('ed25519 seed'), seed);
  let key = i.slice(0, 32);
  let chainCode = i.slice(32);
  for (const level of path.split('/').slice(1)) {
    if (!level.endsWith("'")) throw new Error(`ed25519 derives hardened levels only: ${path}`);
    const data = new Uint8Array(37); // 0x00 || key || ser32(index + 2^31)
    data.set(key, 1);
    new DataView(data.buffer).setUint32(33, (Number(level.slice(0, -1)) + 0x80000000) >>> 0);
    i = hmac(sha512, chainCode, data);
    key = i.slice(0, 32);
    chainCode = i.slice(32);
  }
  return key;
}

const roots = new Map<string, HDKey>();
function bip32Root(mnemonic: string): HDKey {
  let root = roots.get(mnemonic);
  if (!root) {
    const { HDKey } = require('@scure/bip32') as typeof import('@scure/bip32');
    root = HDKey.fromMasterSeed(testSeed(mnemonic));
    roots.set(mnemonic, root);
  }
  return root;
}

/**
 * The public key at path for mnemonic (no passphrase), derived test-side: compressed secp256k1
 * (33 bytes, @scure/bip32) or ed25519 (32 bytes, SLIP-10 above).
 */
export function testPublicKey(curve: Curve, path: string, mnemonic: string = TEST_MNEMONIC): Uint8Array {
  if (curve === 'ed25519') return ed25519.getPublicKey(slip10Ed25519(testSeed(mnemonic), path));
  const key = bip32Root(mnemonic).derive(path).publicKey;
  if (!key) throw new Error(`no public key at ${path}`);
  return key;
}

// --- wallet-core -----------------------------------------------------------------------------

/** A wallet-core coin by its CoinType name ('bitcoin', 'ethereum', 'smartChain', 'solana', ...). */
export type WalletCoreCoin = Exclude<keyof WalletCore['CoinType'], 'prototype'>;

let loading: Promise<WalletCore> | undefined;
/**
 * wallet-core's WebAssembly build, loaded once per process (~0.2 s). Its exceptions abort the
 * module: only call it on valid input.
 */
export function walletCore(): Promise<WalletCore> {
  loading ??= (require('@trustwallet/wallet-core') as typeof import('@trustwallet/wallet-core')).initWasm();
  return loading;
}

type HDWallet = InstanceType<WalletCore['HDWallet']>;
const wallets = new Map<string, HDWallet>();
/** wallet-core's HD wallet for mnemonic, created once (its seed derivation is the slow part). Do not delete it. */
function walletCoreWallet(wc: WalletCore, mnemonic: string): HDWallet {
  let wallet = wallets.get(mnemonic);
  if (!wallet) {
    wallet = wc.HDWallet.createWithMnemonic(mnemonic, '');
    wallets.set(mnemonic, wallet);
  }
  return wallet;
}

export interface WalletCoreKey {
  /** wallet-core's public key at the path: compressed secp256k1 (33 bytes) or ed25519 (32 bytes), hex. */
  readonly publicKeyHex: string;
  /** The address wallet-core makes of that key for the coin. */
  readonly address: string;
}

export interface WalletCoreAddressOptions {
  /** Make a segwit address under this human-readable part (AnyAddress.createBech32WithPublicKey). */
  readonly bech32Hrp?: string;
  readonly mnemonic?: string;
}

/**
 * The expected address for (coin, path): wallet-core's own key at path (of the mnemonic, default
 * TEST_MNEMONIC) and the address it makes from it with the coin's public key type
 * (AnyAddress.createWithPublicKey, or createBech32WithPublicKey when bech32Hrp is given).
 */
export async function walletCoreAddress(coin: WalletCoreCoin, path: string, options: WalletCoreAddressOptions = {}): Promise<WalletCoreKey> {
  const wc = await walletCore();
  const coinType = wc.CoinType[coin];
  const key = walletCoreWallet(wc, options.mnemonic ?? TEST_MNEMONIC).getKey(coinType, path);
  const pub = key.getPublicKey(coinType);
  // EVM coins take the uncompressed key (secp256k1Extended); compare keys in the compressed form.
  const compressed = pub.keyType().value === wc.PublicKeyType.secp256k1Extended.value ? pub.compressed() : null;
  const address = options.bech32Hrp === undefined ? wc.AnyAddress.createWithPublicKey(pub, coinType) : wc.AnyAddress.createBech32WithPublicKey(pub, coinType, options.bech32Hrp);
  const out = { publicKeyHex: toHex((compressed ?? pub).data()), address: address.description() };
  for (const o of [address, compressed, pub, key]) o?.delete();
  return out;
}

export interface WalletCoreGrid {
  /** Whose path templates: an adapter or a KEY_SPECS record. The key's curve is the spec's. */
  readonly keys: KeyLayout;
  readonly coin: WalletCoreCoin;
  /** Default deposit, hot and fee. */
  readonly purposes?: readonly KeyPurpose[];
  /** Default 1, 2, 3 (applications' accounts; account 0 is the shared memo-chain account). */
  readonly accounts?: readonly number[];
  /** Indices 0..indices-1; default 5. */
  readonly indices?: number;
  readonly bech32Hrp?: string;
}

export interface OracleVector {
  readonly purpose: KeyPurpose;
  readonly account: number;
  readonly index: number;
  readonly path: string;
  readonly curve: Curve;
  /** The test-side key at path (testPublicKey), equal to wallet-core's. */
  readonly publicKey: Uint8Array;
  readonly publicKeyHex: string;
  /** wallet-core's address for that key. */
  readonly address: string;
}

/**
 * For each purpose x account x index (in that order): the key test-side derivation gives at the
 * layout's path, asserted equal to wallet-core's key there, and wallet-core's address for coin.
 * The caller compares the adapter's address with `address`.
 */
export async function walletCoreVectors(grid: WalletCoreGrid): Promise<OracleVector[]> {
  const out: OracleVector[] = [];
  for (const purpose of grid.purposes ?? KEY_PURPOSES) {
    const spec = specOf(grid.keys, purpose);
    for (const account of grid.accounts ?? [1, 2, 3]) {
      for (let index = 0; index < (grid.indices ?? 5); index++) {
        const path = fillPath(spec.pathTemplate, account, index);
        const publicKey = testPublicKey(spec.curve, path);
        const oracle = await walletCoreAddress(grid.coin, path, grid.bech32Hrp === undefined ? {} : { bech32Hrp: grid.bech32Hrp });
        expect(toHex(publicKey), `${spec.curve} key at ${path}: test-side derivation vs wallet-core`).to.equal(oracle.publicKeyHex);
        out.push({ purpose, account, index, path, curve: spec.curve, publicKey, publicKeyHex: oracle.publicKeyHex, address: oracle.address });
      }
    }
  }
  return out;
}

/**
 * The oracle loop for an adapter: walletCoreVectors over the adapter's own key layout (default:
 * deposit, hot and fee; accounts 1-3; indices 0-4), asserting for each that the adapter's address
 * of the test-side key is wallet-core's address. Returns the vectors compared.
 */
export async function expectWalletCoreAddresses(
  adapter: Pick<ChainAdapter, 'chain' | 'keySpec' | 'address'>,
  coin: WalletCoreCoin,
  grid: Omit<WalletCoreGrid, 'keys' | 'coin'> = {},
): Promise<OracleVector[]> {
  const vectors = await walletCoreVectors({ ...grid, keys: adapter, coin });
  for (const v of vectors) {
    expect(adapter.address.addressFromPublicKey({ curve: v.curve, bytes: v.publicKey }), `${adapter.chain.code} (${adapter.chain.network}) ${v.path}`).to.equal(v.address);
  }
  return vectors;
}

/**
 * KeyStore.sign's contract, test-side, for a private key the test holds (@noble/curves, independent
 * of custody/software): secp256k1 signs a 32-byte digest (ECDSA, RFC 6979, low-S, r || s and the
 * recovery id); ed25519 signs the payload as the message.
 */
export function signAsKeyStore(curve: Curve, privateKey: Uint8Array, payload: Uint8Array): KeySignature {
  if (curve === 'ed25519') return { curve, bytes: ed25519.sign(payload, privateKey), recovery: null };
  expect(payload.length, 'a secp256k1 payload is a 32-byte digest').to.equal(32);
  const sig = secp256k1.sign(payload, privateKey, { lowS: true });
  return { curve, bytes: sig.toCompactRawBytes(), recovery: sig.recovery };
}
