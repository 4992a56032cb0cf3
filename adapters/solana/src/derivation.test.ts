import { expect } from 'chai';
import { ed25519 } from '@noble/curves/ed25519';
import { hmac } from '@noble/hashes/hmac';
import { sha512 } from '@noble/hashes/sha512';
import { mnemonicToSeedSync } from '@scure/bip39';
import { initWasm, type WalletCore } from '@trustwallet/wallet-core';
import { PublicKey } from '@solana/web3.js';
import { AdapterConfigError, type ChainDefinition } from '@wcs/core';
import { SOLANA_KEY_SPECS, isOnCurve, plugin, solanaAddressFromPublicKey } from './index';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

/** SLIP-10 for ed25519 (hardened levels only), written from the spec as an independent oracle. */
function slip10Ed25519(seed: Uint8Array, path: string): Uint8Array {
  let i = hmac(sha512, new TextEncoder().encode('ed25519 seed'), seed);
  let key = i.slice(0, 32);
  let chainCode = i.slice(32);
  for (const level of path.split('/').slice(1)) {
    if (!level.endsWith("'")) throw new Error(`ed25519 derives hardened levels only: ${path}`);
    const data = new Uint8Array(37);
    data.set(key, 1);
    new DataView(data.buffer).setUint32(33, (Number(level.slice(0, -1)) + 0x80000000) >>> 0);
    i = hmac(sha512, chainCode, data);
    key = i.slice(0, 32);
    chainCode = i.slice(32);
  }
  return key;
}

const fill = (template: string, account: number, index: number) =>
  template.replace('{account}', String(account)).replace('{index}', String(index));

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

const SOL_LIVE: ChainDefinition = {
  id: 5, code: 'SOL', name: 'Solana', family: 'solana', environment: 'live', network: 'mainnet-beta',
  curve: 'ed25519', addressing: 'hd', nativeSymbol: 'SOL', decimals: 9, confirmations: 32, evmChainId: null, options: {},
};

describe('solana derivation', () => {
  const seed = mnemonicToSeedSync(MNEMONIC, '');
  const adapter = plugin.create(SOL_LIVE);
  let core: WalletCore;

  before(async () => {
    core = await initWasm();
  });

  it("derives the published default account for m/44'/501'/0'/0' (deposit template, account 0, index 0)", () => {
    // Phantom / solana-keygen default account of the BIP-39 test mnemonic.
    const path = fill(adapter.keySpec('deposit').pathTemplate, 0, 0);
    expect(path).to.equal("m/44'/501'/0'/0'");
    const address = adapter.address.addressFromPublicKey({ curve: 'ed25519', bytes: ed25519.getPublicKey(slip10Ed25519(seed, path)) });
    expect(address).to.equal('HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk');
  });

  it('matches Trust Wallet wallet-core for accounts 1..3, indices 0..4 on the deposit, hot and fee templates', () => {
    const wallet = core.HDWallet.createWithMnemonic(MNEMONIC, '');
    let checked = 0;
    try {
      for (const purpose of ['deposit', 'hot', 'fee'] as const) {
        for (let account = 1; account <= 3; account++) {
          for (let index = 0; index <= 4; index++) {
            const path = fill(adapter.keySpec(purpose).pathTemplate, account, index);
            const ours = ed25519.getPublicKey(slip10Ed25519(seed, path));
            const key = wallet.getKey(core.CoinType.solana, path);
            const pub = key.getPublicKeyEd25519();
            const theirs = core.AnyAddress.createWithPublicKey(pub, core.CoinType.solana);
            expect(hex(ours), path).to.equal(hex(pub.data()));
            expect(adapter.address.addressFromPublicKey({ curve: 'ed25519', bytes: ours }), path).to.equal(theirs.description());
            theirs.delete();
            pub.delete();
            key.delete();
            checked++;
          }
        }
      }
    } finally {
      wallet.delete();
    }
    expect(checked).to.equal(45);
  });

  it('keeps deposit, hot and fee paths apart', () => {
    const paths = new Set<string>();
    for (const purpose of ['deposit', 'hot', 'fee'] as const) {
      expect(adapter.keySpec(purpose)).to.equal(SOLANA_KEY_SPECS[purpose]);
      expect(adapter.keySpec(purpose).namespace).to.equal('sol');
      for (let index = 0; index < 20; index++) paths.add(fill(adapter.keySpec(purpose).pathTemplate, 7, index));
    }
    expect(paths.size).to.equal(60);
  });

  it('refuses keys that are not 32-byte ed25519 points', () => {
    const good = ed25519.getPublicKey(slip10Ed25519(seed, "m/44'/501'/0'/0'"));
    expect(() => solanaAddressFromPublicKey({ curve: 'secp256k1', bytes: good })).to.throw(TypeError, /ed25519/);
    expect(() => solanaAddressFromPublicKey({ curve: 'ed25519', bytes: good.slice(1) })).to.throw(TypeError, /32 bytes/);
    expect(() => solanaAddressFromPublicKey({ curve: 'ed25519', bytes: Uint8Array.from([0, ...good]) })).to.throw(TypeError, /32 bytes/);
    // The associated token account 6X4X1A… is off the curve (wallet-core's isValidOnCurve vector):
    // valid as a target, but never a deposit key.
    const offCurve = '6X4X1Ae24mkoWeCEpktevySVG9jzeCufut5vtUW3wFrD';
    expect(isOnCurve(offCurve)).to.equal(false);
    expect(adapter.address.validate(offCurve).valid).to.equal(true);
    expect(() => solanaAddressFromPublicKey({ curve: 'ed25519', bytes: new PublicKey(offCurve).toBytes() })).to.throw(TypeError, /not a point/);
  });

  it('refuses chains of another family or kind', () => {
    expect(() => plugin.create({ ...SOL_LIVE, family: 'stellar' })).to.throw(AdapterConfigError);
    expect(() => plugin.create({ ...SOL_LIVE, addressing: 'memo' })).to.throw(AdapterConfigError);
    expect(() => plugin.create({ ...SOL_LIVE, curve: 'secp256k1' })).to.throw(AdapterConfigError);
  });
});
