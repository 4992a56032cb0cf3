import { expect } from 'chai';
import { initWasm, type WalletCore } from '@trustwallet/wallet-core';
import type { KeyRef, KeySpec } from '@wcs/core';
import type { SoftwareKeyStore } from './software-keystore';
import { ABANDON, removeTempDirs, storeWithMnemonic } from './test-support';

/**
 * Independent oracle: Trust Wallet Core (C++ compiled to WebAssembly, @trustwallet/wallet-core)
 * derives the same paths from the same mnemonic; its public keys must equal ours.
 */
const CASES: ReadonlyArray<{ spec: KeySpec; coin: 'ethereum' | 'bitcoin' | 'solana' | 'stellar' | 'xrp' }> = [
  { spec: { namespace: 'evm', curve: 'secp256k1', pathTemplate: "m/44'/60'/{account}'/0/{index}" }, coin: 'ethereum' },
  { spec: { namespace: 'btc', curve: 'secp256k1', pathTemplate: "m/84'/0'/{account}'/0/{index}" }, coin: 'bitcoin' },
  { spec: { namespace: 'solana', curve: 'ed25519', pathTemplate: "m/44'/501'/{account}'/{index}'" }, coin: 'solana' },
  // shapes the adapters use for hot/fee keys: a level after {index}, and another change level
  { spec: { namespace: 'xlm', curve: 'ed25519', pathTemplate: "m/44'/148'/{account}'/{index}'/1'" }, coin: 'stellar' },
  { spec: { namespace: 'xrp', curve: 'secp256k1', pathTemplate: "m/44'/144'/{account}'/2/{index}" }, coin: 'xrp' },
];
const APPLICATIONS = [1, 2, 7, 2 ** 31 - 1];
const INDICES = [0, 1, 5, 1000, 2 ** 31 - 1];

function hex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}

describe('oracle: public keys equal Trust Wallet Core (mnemonic "abandon ... about")', function () {
  this.timeout(60_000);
  let core: WalletCore;
  let store: SoftwareKeyStore;

  before(async () => {
    core = await initWasm();
    store = await storeWithMnemonic(ABANDON);
  });

  after(async () => {
    await store?.destroy();
    await removeTempDirs();
  });

  for (const { spec, coin } of CASES) {
    it(`${spec.pathTemplate} (${spec.curve}, wallet-core CoinType.${coin})`, async () => {
      const wallet = core.HDWallet.createWithMnemonic(ABANDON, '');
      try {
        let checked = 0;
        for (const applicationId of APPLICATIONS) {
          for (const index of INDICES) {
            const ref: KeyRef = { applicationId, spec, purpose: 'deposit', index };
            const path = spec.pathTemplate.replace('{account}', String(applicationId)).replace('{index}', String(index));
            const key = wallet.getKey(core.CoinType[coin], path);
            const pub = spec.curve === 'secp256k1' ? key.getPublicKeySecp256k1(true) : key.getPublicKeyEd25519();
            const expected = hex(pub.data());
            pub.delete();
            key.delete();
            const ours = await store.getPublicKey(ref);
            expect(ours.curve).to.equal(spec.curve);
            expect(hex(ours.bytes), path).to.equal(expected);
            checked++;
          }
        }
        expect(checked).to.equal(APPLICATIONS.length * INDICES.length);
      } finally {
        wallet.delete();
      }
    });
  }

  it('signatures equal wallet-core\'s (RFC 6979 ECDSA with low S and recovery id; RFC 8032 EdDSA)', async () => {
    const wallet = core.HDWallet.createWithMnemonic(ABANDON, '');
    try {
      for (const { spec, coin } of CASES) {
        for (const [applicationId, index] of [[1, 0], [2, 17], [9, 4242]] as const) {
          const path = spec.pathTemplate.replace('{account}', String(applicationId)).replace('{index}', String(index));
          const key = wallet.getKey(core.CoinType[coin], path);
          const payload = Uint8Array.from(Buffer.from(`oracle ${path}`.padEnd(32, '.').slice(0, 32), 'utf8'));
          const ours = await store.sign({ applicationId, spec, purpose: 'deposit', index }, payload);
          if (spec.curve === 'secp256k1') {
            // wallet-core: 65 bytes r || s || v
            const theirs = key.sign(payload, core.Curve.secp256k1);
            expect(hex(ours.bytes), path).to.equal(hex(theirs.subarray(0, 64)));
            expect(ours.recovery, path).to.equal(theirs[64]);
          } else {
            const theirs = key.sign(payload, core.Curve.ed25519);
            expect(hex(ours.bytes), path).to.equal(hex(theirs));
            expect(ours.recovery).to.equal(null);
          }
          key.delete();
        }
      }
    } finally {
      wallet.delete();
    }
  });

  it('a known address anchors the oracle: m/44\'/60\'/0\'/0/0 of "abandon ... about"', () => {
    // Widely published first Ethereum address of the all-"abandon" test mnemonic (e.g. MetaMask,
    // Ian Coleman's BIP-39 tool): 0x9858EfFD232B4033E47d90003D41EC34EcaEda94. Account 0 is not an
    // application account, so this goes through wallet-core only, to check the oracle itself.
    const wallet = core.HDWallet.createWithMnemonic(ABANDON, '');
    expect(wallet.getAddressForCoin(core.CoinType.ethereum)).to.equal('0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
    wallet.delete();
  });
});
