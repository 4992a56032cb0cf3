import { expect } from 'chai';
import { expectWalletCoreAddresses, fillPath, testPublicKey, walletCore } from '@wcs/core/testing';
import { plugin } from './index';
import { BTC_CHAINS, BTC_MAINNET } from './fixtures.test-helper';

describe('bitcoin key paths and derivation', () => {
  it("reproduces the BIP-84 vectors from the adapter's own path templates (account 0)", () => {
    // https://github.com/bitcoin/bips/blob/master/bip-0084.mediawiki#test-vectors
    const adapter = plugin.create(BTC_MAINNET);
    const deposit = adapter.keySpec('deposit').pathTemplate;
    const hot = adapter.keySpec('hot').pathTemplate;
    const vectors: Array<[string, string, string]> = [
      [fillPath(deposit, 0, 0), "m/84'/0'/0'/0/0", 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu'],
      [fillPath(deposit, 0, 1), "m/84'/0'/0'/0/1", 'bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g'],
      // BIP-84's first change address sits where this service keeps its hot wallet (change level 1).
      [fillPath(hot, 0, 0), "m/84'/0'/0'/1/0", 'bc1q8c6fshw2dlwun7ekn9qwf37cu2rn755upcp6el'],
    ];
    for (const [path, bipPath, address] of vectors) {
      expect(path).to.equal(bipPath);
      expect(adapter.address.addressFromPublicKey({ curve: 'secp256k1', bytes: testPublicKey('secp256k1', path) })).to.equal(address);
    }
  });

  it('matches wallet-core for every purpose, applications 1-3 and indices 0-4, on each network', async () => {
    const wc = await walletCore();
    let compared = 0;
    for (const [chain, hrp] of BTC_CHAINS) {
      // Each vector's @scure/bip32 key is checked against wallet-core's key, then the adapter's address against wallet-core's.
      for (const v of await expectWalletCoreAddresses(plugin.create(chain), 'bitcoin', { bech32Hrp: hrp })) {
        expect(wc.AnyAddress.isValidBech32(v.address, wc.CoinType.bitcoin, hrp), v.address).to.equal(true);
        compared++;
      }
    }
    expect(compared).to.equal(3 * 3 * 3 * 5);
  });
});
