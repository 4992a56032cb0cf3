import { expect } from 'chai';
import { AdapterConfigError, PLUGIN_API_VERSION, defineAdapter, type ChainAdapter } from './adapter';
import type { ChainDefinition } from './chain';

const CHAIN: ChainDefinition = {
  id: 1, code: 'XLM', name: 'Stellar', family: 'stellar', environment: 'live', network: 'pubnet', curve: 'ed25519', addressing: 'memo',
  nativeSymbol: 'XLM', decimals: 7, confirmations: 1, evmChainId: null, options: {},
} as ChainDefinition;

describe('defineAdapter', () => {
  const spec = { namespace: 'xlm', curve: 'ed25519', pathTemplate: "m/44'/148'/{account}'/{index}'" } as const;
  const plugin = defineAdapter({
    name: '@wcs/adapter-test',
    family: 'stellar',
    curve: 'ed25519',
    addressing: 'memo',
    build: (chain) => {
      if (chain.options.bad) throw new AdapterConfigError('bad option');
      return {
        spendModel: 'sequence',
        keySpec: { deposit: spec, hot: spec, fee: spec },
        address: { addressFromPublicKey: () => 'G', validate: () => ({ valid: false, reason: 'no' }) },
        memo: null,
      };
    },
  });

  it('builds the plugin record and a frozen adapter with the fixed parts filled in', () => {
    expect(plugin).to.include({ name: '@wcs/adapter-test', pluginApiVersion: PLUGIN_API_VERSION });
    expect(plugin.families).to.deep.equal(['stellar']);
    expect(Object.isFrozen(plugin)).to.equal(true);
    const a: ChainAdapter = plugin.create(CHAIN);
    expect(Object.isFrozen(a)).to.equal(true);
    expect([a.chain, a.curve, a.addressing, a.spendModel]).to.deep.equal([CHAIN, 'ed25519', 'memo', 'sequence']);
    expect(a.keySpec('hot')).to.equal(spec);
    expect(() => a.keySpec('other' as never)).to.throw(TypeError, /unknown key purpose/);
    expect(() => a.keySpec('toString' as never)).to.throw(TypeError, /unknown key purpose/);
  });

  it('refuses chains of another family, curve or addressing, and passes build errors on', () => {
    for (const bad of [{ family: 'xrp' }, { curve: 'secp256k1' }, { addressing: 'hd' }]) {
      expect(() => plugin.create({ ...CHAIN, ...bad } as ChainDefinition), JSON.stringify(bad)).to.throw(AdapterConfigError, /@wcs\/adapter-test serves family stellar/);
    }
    expect(() => plugin.create({ ...CHAIN, options: { bad: '1' } })).to.throw(AdapterConfigError, 'bad option');
  });
});
