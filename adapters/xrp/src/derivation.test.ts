import { expect } from 'chai';
import { AdapterConfigError } from '@wcs/core';
import { KEY_PURPOSES, expectWalletCoreAddresses, fillPath, layoutPaths, testChain, testPublicKey } from '@wcs/core/testing';
import { MAX_DESTINATION_TAG, XRP_KEY_SPECS, destinationTagCodec, isTestNetwork, plugin, xrpAddressFromPublicKey } from './index';

const XRP_LIVE = testChain({ id: 6, code: 'XRP', name: 'XRP Ledger', family: 'xrp', environment: 'live', network: 'mainnet', nativeSymbol: 'XRP', decimals: 6, confirmations: 1 });

describe('xrp derivation', () => {
  const adapter = plugin.create(XRP_LIVE);

  it('derives the shared deposit account at deposit index 0', () => {
    expect(fillPath(adapter.keySpec('deposit').pathTemplate, 0, 0)).to.equal("m/44'/144'/0'/0/0");
    const key = testPublicKey('secp256k1', "m/44'/144'/0'/0/0");
    expect(adapter.address.addressFromPublicKey({ curve: 'secp256k1', bytes: key })).to.equal('rHsMGQEkVNJmpGWs8XUBoTBiAAbwxZN5v3');
  });

  it('matches Trust Wallet wallet-core for accounts 1..3, indices 0..4 on the deposit, hot and fee templates', async () => {
    // Each vector's @scure/bip32 key is checked against wallet-core's key, then the adapter's address against wallet-core's.
    expect(await expectWalletCoreAddresses(adapter, 'xrp')).to.have.length(45);
  });

  it('keeps deposit, hot and fee paths apart', () => {
    for (const purpose of KEY_PURPOSES) expect(adapter.keySpec(purpose)).to.equal(XRP_KEY_SPECS[purpose]).and.have.property('namespace', 'xrp');
    expect(new Set(layoutPaths(adapter, 7, 20)).size).to.equal(60);
  });

  it('refuses keys that are not compressed secp256k1 points', () => {
    const good = testPublicKey('secp256k1', "m/44'/144'/0'/0/0");
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
