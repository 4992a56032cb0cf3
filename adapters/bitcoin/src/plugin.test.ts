import { expect } from 'chai';
import { AdapterConfigError, AdapterRegistry, PLUGIN_API_VERSION, type KeyPurpose } from '@wcs/core';
import { plugin } from './index';
import { testChain } from '@wcs/core/testing';
import { BTC_MAINNET, BTC_REGTEST_RB, BTC_TESTNET } from './fixtures.test-helper';

const regtest = (options: Record<string, string>) =>
  testChain({ id: 902, code: 'BTC', name: 'Bitcoin Regtest', family: 'bitcoin', environment: 'test', network: 'regtest', nativeSymbol: 'BTC', decimals: 8, confirmations: 1, options });

describe('bitcoin plugin', () => {
  it('is the package plugin for the bitcoin family', () => {
    expect(plugin.name).to.equal('@wcs/adapter-bitcoin');
    expect(plugin.pluginApiVersion).to.equal(PLUGIN_API_VERSION);
    expect(plugin.families).to.deep.equal(['bitcoin']);
    // Loads through the core registry by package name.
    const reg = AdapterRegistry.load(['@wcs/adapter-bitcoin']);
    expect(reg.forChain(BTC_TESTNET).address.validate('tb1qcr8te4kr609gcawutmrza0j4xv80jy8zmfp6l0').valid).to.equal(true);
  });

  it('lays out BIP-84 keys per network and purpose', () => {
    const expected: Array<[typeof BTC_MAINNET, string, number]> = [
      [BTC_MAINNET, 'btc:mainnet', 0],
      [BTC_TESTNET, 'btc:testnet', 1],
      [BTC_REGTEST_RB, 'btc:regtest:rb', 1],
      [regtest({}), 'btc:regtest:bcrt', 1],
    ];
    const change: Record<KeyPurpose, number> = { deposit: 0, hot: 1, fee: 2 };
    for (const [chain, namespace, coin] of expected) {
      const adapter = plugin.create(chain);
      for (const purpose of ['deposit', 'hot', 'fee'] as const) {
        expect(adapter.keySpec(purpose), `${chain.network} ${purpose}`).to.deep.equal({
          namespace, curve: 'secp256k1', pathTemplate: `m/84'/${coin}'/{account}'/${change[purpose]}/{index}`,
        });
      }
    }
    expect(() => plugin.create(BTC_MAINNET).keySpec('cold' as KeyPurpose)).to.throw(/unknown key purpose/);
  });

  it('uses the regtest hrp from options (default bcrt)', () => {
    const key = { curve: 'secp256k1' as const, bytes: Uint8Array.from(Buffer.from('0330d54fd0dd420a6e5f8d3624f5f3482cae350f79d5f0753bf5beef9c2d91af3c', 'hex')) };
    // wallet-core 4.8.2 AnyAddress.createBech32WithPublicKey(key, bitcoin, 'bcrt' | 'rb')
    expect(plugin.create(regtest({})).address.addressFromPublicKey(key)).to.equal('bcrt1qcr8te4kr609gcawutmrza0j4xv80jy8zeqchgx');
    expect(plugin.create(BTC_REGTEST_RB).address.addressFromPublicKey(key)).to.equal('rb1qcr8te4kr609gcawutmrza0j4xv80jy8zv06dl6');
    expect(plugin.create(regtest({})).address.validate('bcrt1qcr8te4kr609gcawutmrza0j4xv80jy8zeqchgx').valid).to.equal(true);
  });

  it('refuses chains it cannot serve with AdapterConfigError', () => {
    const bad = [
      { ...BTC_TESTNET, network: 'signet' },
      { ...BTC_TESTNET, network: 'Mainnet' },
      { ...BTC_MAINNET, options: { bech32Hrp: 'bc' } },
      { ...BTC_TESTNET, options: { bech32Hrp: 'rb' } },
      regtest({ bech32Hrp: 'RB' }),
      regtest({ bech32Hrp: '' }),
      regtest({ bech32Hrp: 'bc' }),
      regtest({ bech32Hrp: 'tb' }),
      regtest({ bech32Hrp: 'r b' }),
      { ...BTC_MAINNET, family: 'evm' as const },
      { ...BTC_MAINNET, curve: 'ed25519' as const },
    ];
    for (const chain of bad) expect(() => plugin.create(chain), JSON.stringify(chain)).to.throw(AdapterConfigError);
  });
});
