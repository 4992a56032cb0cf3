import { expect } from 'chai';
import { PublicKey } from '@solana/web3.js';
import { AdapterConfigError } from '@wcs/core';
import { KEY_PURPOSES, expectWalletCoreAddresses, fillPath, layoutPaths, testChain, testPublicKey } from '@wcs/core/testing';
import { SOLANA_KEY_SPECS, isOnCurve, plugin, solanaAddressFromPublicKey } from './index';

const SOL_LIVE = testChain({ id: 5, code: 'SOL', name: 'Solana', family: 'solana', environment: 'live', network: 'mainnet-beta', nativeSymbol: 'SOL', decimals: 9, confirmations: 32 });

describe('solana derivation', () => {
  const adapter = plugin.create(SOL_LIVE);

  it("derives the published default account for m/44'/501'/0'/0' (deposit template, account 0, index 0)", () => {
    // Phantom / solana-keygen default account of the BIP-39 test mnemonic.
    const path = fillPath(adapter.keySpec('deposit').pathTemplate, 0, 0);
    expect(path).to.equal("m/44'/501'/0'/0'");
    const address = adapter.address.addressFromPublicKey({ curve: 'ed25519', bytes: testPublicKey('ed25519', path) });
    expect(address).to.equal('HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk');
  });

  it('matches Trust Wallet wallet-core for accounts 1..3, indices 0..4 on the deposit, hot and fee templates', async () => {
    // Each vector's SLIP-10 key is checked against wallet-core's key, then the adapter's address against wallet-core's.
    expect(await expectWalletCoreAddresses(adapter, 'solana')).to.have.length(45);
  });

  it('keeps deposit, hot and fee paths apart', () => {
    for (const purpose of KEY_PURPOSES) expect(adapter.keySpec(purpose)).to.equal(SOLANA_KEY_SPECS[purpose]).and.have.property('namespace', 'sol');
    expect(new Set(layoutPaths(adapter, 7, 20)).size).to.equal(60);
  });

  it('refuses keys that are not 32-byte ed25519 points', () => {
    const good = testPublicKey('ed25519', "m/44'/501'/0'/0'");
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
