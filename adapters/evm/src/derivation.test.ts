import { expect } from 'chai';
import { plugin } from './index';
import { BASE_MAINNET, BSC_MAINNET, ETH_MAINNET, ETH_SEPOLIA, MNEMONIC, POLYGON_MAINNET, STATIC_DERIVATIONS, fillPath, hex, scurePublicKey, walletCore, walletCoreEvm, type WalletCoreCoin } from './testkit';

const bytes = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'hex'));
const CHAINS: Array<[typeof ETH_MAINNET, WalletCoreCoin]> = [
  [ETH_MAINNET, 'ethereum'], [BSC_MAINNET, 'smartChain'], [POLYGON_MAINNET, 'polygon'], [ETH_SEPOLIA, 'ethereum'], [BASE_MAINNET, 'base'],
];

describe('EVM key paths and derivation', () => {
  it('wallet-core agrees with the static derivation vectors', async () => {
    const wc = await walletCore();
    for (const d of STATIC_DERIVATIONS) {
      const type = d.publicKeyHex.length === 66 ? wc.PublicKeyType.secp256k1 : wc.PublicKeyType.secp256k1Extended;
      const key = wc.PublicKey.createWithData(bytes(d.publicKeyHex), type);
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
    expect(adapter.address.addressFromPublicKey({ curve: 'secp256k1', bytes: scurePublicKey(path) })).to.equal('0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
  });

  it('matches wallet-core on every chain, for every purpose, applications 1-3 and indices 0-4', async () => {
    const wc = await walletCore();
    let compared = 0;
    for (const purpose of ['deposit', 'hot', 'fee'] as const) {
      for (let account = 1; account <= 3; account++) {
        for (let index = 0; index <= 4; index++) {
          const seen = new Set<string>();
          for (const [chain, coin] of CHAINS) {
            const adapter = plugin.create(chain);
            const path = fillPath(adapter.keySpec(purpose).pathTemplate, account, index);
            const key = scurePublicKey(path);
            const oracle = walletCoreEvm(wc, path, coin);
            expect(hex(key), `key at ${path}`).to.equal(oracle.publicKeyHex);
            const address = adapter.address.addressFromPublicKey({ curve: 'secp256k1', bytes: key });
            expect(address, `${chain.code} ${path}`).to.equal(oracle.address);
            seen.add(address);
            compared++;
          }
          // The same key is the same address string on ETH, BSC, POLYGON, Sepolia and BASE.
          expect(seen.size, `${purpose} ${account}/${index}`).to.equal(1);
        }
      }
    }
    expect(compared).to.equal(3 * 3 * 5 * CHAINS.length);
  });

  it('gives the same address for the compressed and uncompressed form of a key', async () => {
    const wc = await walletCore();
    const wallet = wc.HDWallet.createWithMnemonic(MNEMONIC, '');
    const key = wallet.getKey(wc.CoinType.ethereum, "m/44'/60'/2'/0/4");
    const [compressed, uncompressed] = [key.getPublicKeySecp256k1(true), key.getPublicKeySecp256k1(false)];
    const codec = plugin.create(BSC_MAINNET).address;
    const a = codec.addressFromPublicKey({ curve: 'secp256k1', bytes: compressed.data() });
    const b = codec.addressFromPublicKey({ curve: 'secp256k1', bytes: uncompressed.data() });
    expect(a).to.equal(b);
    for (const o of [compressed, uncompressed, key, wallet]) o.delete();
  });
});
