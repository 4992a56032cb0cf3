import { expect } from 'chai';
import { TEST_MNEMONIC, expectWalletCoreAddresses, fillPath, fromHex, testPublicKey, walletCore } from '@wcs/core/testing';
import { plugin } from './index';
import { BSC_MAINNET, ETH_MAINNET, EVM_CHAINS, STATIC_DERIVATIONS } from './fixtures.test-helper';

describe('EVM key paths and derivation', () => {
  it('wallet-core agrees with the static derivation vectors', async () => {
    const wc = await walletCore();
    for (const d of STATIC_DERIVATIONS) {
      const type = d.publicKeyHex.length === 66 ? wc.PublicKeyType.secp256k1 : wc.PublicKeyType.secp256k1Extended;
      const key = wc.PublicKey.createWithData(fromHex(d.publicKeyHex), type);
      const full = key.isCompressed() ? key.uncompressed() : key;
      const address = wc.AnyAddress.createWithPublicKey(full, wc.CoinType.ethereum);
      expect(address.description(), d.source).to.equal(d.address);
      address.delete();
    }
  });

  it("derives the test mnemonic's first address from the adapter's own path template (account 0)", () => {
    const adapter = plugin.create(ETH_MAINNET);
    const path = fillPath(adapter.keySpec('deposit').pathTemplate, 0, 0);
    expect(path).to.equal("m/44'/60'/0'/0/0");
    expect(adapter.address.addressFromPublicKey({ curve: 'secp256k1', bytes: testPublicKey('secp256k1', path) })).to.equal('0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
  });

  it('matches wallet-core on every chain, for every purpose, applications 1-3 and indices 0-4', async () => {
    let compared = 0;
    const seen = new Map<string, Set<string>>();
    for (const [chain, coin] of EVM_CHAINS) {
      // Each vector's @scure/bip32 key is checked against wallet-core's key, then the adapter's address against wallet-core's.
      for (const v of await expectWalletCoreAddresses(plugin.create(chain), coin)) {
        const key = `${v.purpose} ${v.account}/${v.index}`;
        seen.set(key, (seen.get(key) ?? new Set<string>()).add(v.address));
        compared++;
      }
    }
    // The same key is the same address string on ETH, BSC, POLYGON, Sepolia and BASE.
    expect(seen.size).to.equal(3 * 3 * 5);
    for (const [key, addresses] of seen) expect(addresses.size, key).to.equal(1);
    expect(compared).to.equal(3 * 3 * 5 * EVM_CHAINS.length);
  });

  it('gives the same address for the compressed and uncompressed form of a key', async () => {
    const wc = await walletCore();
    const wallet = wc.HDWallet.createWithMnemonic(TEST_MNEMONIC, '');
    const key = wallet.getKey(wc.CoinType.ethereum, "m/44'/60'/2'/0/4");
    const [compressed, uncompressed] = [key.getPublicKeySecp256k1(true), key.getPublicKeySecp256k1(false)];
    const codec = plugin.create(BSC_MAINNET).address;
    const a = codec.addressFromPublicKey({ curve: 'secp256k1', bytes: compressed.data() });
    const b = codec.addressFromPublicKey({ curve: 'secp256k1', bytes: uncompressed.data() });
    expect(a).to.equal(b);
    for (const o of [compressed, uncompressed, key, wallet]) o.delete();
  });
});
