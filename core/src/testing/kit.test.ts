import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { expect } from 'chai';
import { CHAIN_FAMILIES, FAMILY_TRAITS } from '../chain';
import { fromHex, slip10Ed25519, testChain, testPublicKey, toHex, walletCore, walletCoreAddress } from './index';

describe('test kit (@wcs/core/testing)', () => {
  it('builds chain definitions as the catalogue does: curve and addressing from the family', () => {
    for (const family of CHAIN_FAMILIES) {
      const chain = testChain({ id: 900, code: 'X', name: 'X', family, environment: 'test', network: 'n', nativeSymbol: 'X', decimals: 0, confirmations: 1 });
      expect(chain).to.deep.include({ curve: FAMILY_TRAITS[family].curve, addressing: FAMILY_TRAITS[family].addressing, evmChainId: null, options: {} });
      expect(Object.isFrozen(chain.options)).to.equal(true);
    }
    const options = { depositAccount: 'wcsdeposit11' };
    const eos = testChain({ id: 8, code: 'EOS', name: 'EOS', family: 'eos', environment: 'live', network: 'mainnet', nativeSymbol: 'EOS', decimals: 4, confirmations: 1, options });
    expect(eos.options).to.deep.equal(options);
    expect(eos.options, 'a frozen copy').to.not.equal(options);
  });

  it('derives SLIP-10 ed25519 keys as the SLIP-0010 test vectors 1 and 2 give them', () => {
    // https://github.com/satoshilabs/slips/blob/master/slip-0010.md (ed25519 test vectors)
    const v1 = fromHex('000102030405060708090a0b0c0d0e0f');
    expect(toHex(slip10Ed25519(v1, 'm'))).to.equal('2b4be7f19ee27bbf30c667b642d5f4aa69fd169872f8fc3059c08ebae2eb19e7');
    expect(toHex(slip10Ed25519(v1, "m/0'/1'/2'/2'"))).to.equal('30d1dc7e5fc04c31219ab25a27ae00b50f6fd66622f6e9c913253d6511d1e662');
    expect(toHex(slip10Ed25519(v1, "m/0'/1'/2'/2'/1000000000'"))).to.equal('8f94d394a8e8fd6b1bc2f3f49f5c47e385281d5c17e65324b0f62483e37e8793');
    const v2 = fromHex('fffcf9f6f3f0edeae7e4e1dedbd8d5d2cfccc9c6c3c0bdbab7b4b1aeaba8a5a29f9c999693908d8a8784817e7b7875726f6c696663605d5a5754514e4b484542');
    expect(toHex(slip10Ed25519(v2, "m/0'/2147483647'/1'/2147483646'/2'"))).to.equal('551d333177df541ad876a60ea71f00447931c0a9da16f227c11ea080d7391b8d');
    expect(() => slip10Ed25519(v1, 'm/0')).to.throw(/hardened levels only/);
  });

  it('derives the published keys of the test mnemonic on both curves', () => {
    // BIP-84 test vector; Phantom / solana-keygen default account.
    expect(toHex(testPublicKey('secp256k1', "m/84'/0'/0'/0/0"))).to.equal('0330d54fd0dd420a6e5f8d3624f5f3482cae350f79d5f0753bf5beef9c2d91af3c');
    expect(toHex(testPublicKey('ed25519', "m/44'/501'/0'/0'"))).to.equal('f036276246a75b9de3349ed42b15e232f6518fc20f5fcd4f1d64e81f9bd258f7');
  });

  it('loads wallet-core once and gives its key and address for (coin, path)', async () => {
    expect(walletCore()).to.equal(walletCore());
    expect(await walletCoreAddress('ethereum', "m/44'/60'/0'/0/0")).to.deep.equal({
      publicKeyHex: '0237b0bb7a8288d38ed49a524b5dc98cff3eb5ca824c9f9dc0dfdb3d9cd600f299', address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94',
    });
    expect(await walletCoreAddress('bitcoin', "m/84'/0'/0'/0/0", { bech32Hrp: 'tb' })).to.deep.equal({
      publicKeyHex: '0330d54fd0dd420a6e5f8d3624f5f3482cae350f79d5f0753bf5beef9c2d91af3c', address: 'tb1qcr8te4kr609gcawutmrza0j4xv80jy8zmfp6l0',
    });
  });

  it('is not loaded by the main entry: production code never loads chai, @scure or wallet-core', () => {
    const main = path.resolve(__dirname, '..', 'index.js');
    const script = `require(${JSON.stringify(main)}); console.log(JSON.stringify(Object.keys(require.cache)))`;
    const loaded: string[] = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
    expect(loaded.length).to.be.greaterThan(1);
    const testOnly = loaded.filter((f) => /[\\/](chai|@scure|@trustwallet|testing)[\\/]/.test(f));
    expect(testOnly).to.deep.equal([]);
  });
});
