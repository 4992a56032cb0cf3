import { expect } from 'chai';
import { plugin } from './index';
import { BTC_MAINNET, BTC_REGTEST_RB, BTC_TESTNET, fillPath, hex, scurePublicKey, walletCore, walletCoreP2wpkh } from './testkit';

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
      expect(adapter.address.addressFromPublicKey({ curve: 'secp256k1', bytes: scurePublicKey(path) })).to.equal(address);
    }
  });

  it('matches wallet-core for every purpose, applications 1-3 and indices 0-4, on each network', async () => {
    const wc = await walletCore();
    let compared = 0;
    for (const [chain, hrp] of [[BTC_MAINNET, 'bc'], [BTC_TESTNET, 'tb'], [BTC_REGTEST_RB, 'rb']] as const) {
      const adapter = plugin.create(chain);
      for (const purpose of ['deposit', 'hot', 'fee'] as const) {
        const template = adapter.keySpec(purpose).pathTemplate;
        for (let account = 1; account <= 3; account++) {
          for (let index = 0; index <= 4; index++) {
            const path = fillPath(template, account, index);
            const key = scurePublicKey(path);
            const oracle = walletCoreP2wpkh(wc, path, hrp);
            expect(hex(key), `key at ${path}`).to.equal(oracle.publicKeyHex);
            const address = adapter.address.addressFromPublicKey({ curve: 'secp256k1', bytes: key });
            expect(address, `${chain.network} ${path}`).to.equal(oracle.address);
            expect(wc.AnyAddress.isValidBech32(address, wc.CoinType.bitcoin, hrp)).to.equal(true);
            compared++;
          }
        }
      }
    }
    expect(compared).to.equal(3 * 3 * 3 * 5);
  });
});
