import { expect } from 'chai';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { initWasm, type WalletCore } from '@trustwallet/wallet-core';
import { AdapterConfigError, type ChainDefinition } from '@wcs/core';
import { MAX_DESTINATION_TAG, XRP_KEY_SPECS, destinationTagCodec, isTestNetwork, plugin, xrpAddressFromPublicKey } from './index';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const fill = (template: string, account: number, index: number) =>
  template.replace('{account}', String(account)).replace('{index}', String(index));
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

const XRP_LIVE: ChainDefinition = {
  id: 6, code: 'XRP', name: 'XRP Ledger', family: 'xrp', environment: 'live', network: 'mainnet',
  curve: 'secp256k1', addressing: 'memo', nativeSymbol: 'XRP', decimals: 6, confirmations: 1, evmChainId: null, options: {},
};

describe('xrp derivation', () => {
  const root = HDKey.fromMasterSeed(mnemonicToSeedSync(MNEMONIC, ''));
  const adapter = plugin.create(XRP_LIVE);
  let core: WalletCore;

  before(async () => {
    core = await initWasm();
  });

  it('derives the shared deposit account at deposit index 0', () => {
    expect(fill(adapter.keySpec('deposit').pathTemplate, 0, 0)).to.equal("m/44'/144'/0'/0/0");
    const key = root.derive("m/44'/144'/0'/0/0").publicKey!;
    expect(adapter.address.addressFromPublicKey({ curve: 'secp256k1', bytes: key })).to.equal('rHsMGQEkVNJmpGWs8XUBoTBiAAbwxZN5v3');
  });

  it('matches Trust Wallet wallet-core for accounts 1..3, indices 0..4 on the deposit, hot and fee templates', () => {
    const wallet = core.HDWallet.createWithMnemonic(MNEMONIC, '');
    let checked = 0;
    try {
      for (const purpose of ['deposit', 'hot', 'fee'] as const) {
        for (let account = 1; account <= 3; account++) {
          for (let index = 0; index <= 4; index++) {
            const path = fill(adapter.keySpec(purpose).pathTemplate, account, index);
            const ours = root.derive(path).publicKey!;
            const key = wallet.getKey(core.CoinType.xrp, path);
            const pub = key.getPublicKeySecp256k1(true);
            const theirs = core.AnyAddress.createWithPublicKey(pub, core.CoinType.xrp);
            expect(hex(ours), path).to.equal(hex(pub.data()));
            expect(adapter.address.addressFromPublicKey({ curve: 'secp256k1', bytes: ours }), path).to.equal(theirs.description());
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
      expect(adapter.keySpec(purpose)).to.equal(XRP_KEY_SPECS[purpose]);
      expect(adapter.keySpec(purpose).namespace).to.equal('xrp');
      for (let index = 0; index < 20; index++) paths.add(fill(adapter.keySpec(purpose).pathTemplate, 7, index));
    }
    expect(paths.size).to.equal(60);
  });

  it('refuses keys that are not compressed secp256k1 points', () => {
    const good = root.derive("m/44'/144'/0'/0/0").publicKey!;
    expect(() => xrpAddressFromPublicKey({ curve: 'ed25519', bytes: good })).to.throw(TypeError, /secp256k1/);
    expect(() => xrpAddressFromPublicKey({ curve: 'secp256k1', bytes: good.slice(1) })).to.throw(TypeError, /33-byte/);
    // ripple-keypairs' ed25519 key (ED prefix): deriveAddress would accept it, the adapter does not.
    const ed = Uint8Array.from(Buffer.from('ED01FA53FA5A7E77798F882ECE20B1ABC00BB358A9E55A202D0D0676BD0CE37A63', 'hex'));
    expect(() => xrpAddressFromPublicKey({ curve: 'secp256k1', bytes: ed })).to.throw(TypeError, /33-byte/);
    expect(() => xrpAddressFromPublicKey({ curve: 'secp256k1', bytes: Uint8Array.from([2, ...new Uint8Array(32)]) })).to.throw(TypeError, /not a point/);
  });

  it('writes destination tags only in range', () => {
    expect(destinationTagCodec.format(MAX_DESTINATION_TAG)).to.equal('4294967295');
    expect(() => destinationTagCodec.format(MAX_DESTINATION_TAG + 1n)).to.throw(RangeError);
    expect(() => destinationTagCodec.format(-1n)).to.throw(RangeError);
  });

  it('treats only network "mainnet" as mainnet, and refuses chains of another family or kind', () => {
    expect(isTestNetwork(XRP_LIVE)).to.equal(false);
    expect(isTestNetwork({ ...XRP_LIVE, network: 'devnet' })).to.equal(true);
    const devnet = plugin.create({ ...XRP_LIVE, id: 999, network: 'devnet', environment: 'test' });
    expect(devnet.address.validate('TVE26TYGhfLC7tQDno7G8dGtxSkYQnXoy6kSDh6rZzApc69')).to.deep.include({ valid: true, memo: '4294967295' });
    expect(() => plugin.create({ ...XRP_LIVE, family: 'eos' })).to.throw(AdapterConfigError);
    expect(() => plugin.create({ ...XRP_LIVE, addressing: 'hd' })).to.throw(AdapterConfigError);
    expect(() => plugin.create({ ...XRP_LIVE, curve: 'ed25519' })).to.throw(AdapterConfigError);
  });
});
