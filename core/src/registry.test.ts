import { expect } from 'chai';
import { AdapterRegistry, PluginError } from './registry';
import { PLUGIN_API_VERSION, type AdapterPlugin, type ChainAdapter } from './adapter';
import { WcsError } from './errors';
import type { ChainDefinition } from './chain';

const chain = (family: ChainDefinition['family'], code = 'X'): ChainDefinition => ({
  id: 1, code, name: code, family, environment: 'live', network: 'mainnet', curve: 'secp256k1', addressing: 'hd',
  nativeSymbol: code, decimals: 8, confirmations: 1, evmChainId: family === 'evm' ? 1 : null, options: {},
});

function fakePlugin(name: string, families: AdapterPlugin['families'], version = PLUGIN_API_VERSION, traits?: AdapterPlugin['traits']): AdapterPlugin & { created: number } {
  const p = {
    name, pluginApiVersion: version, families, created: 0, ...(traits ? { traits } : {}),
    create(c: ChainDefinition): ChainAdapter {
      p.created++;
      return { chain: c } as unknown as ChainAdapter;
    },
  };
  return p;
}

describe('adapter registry', () => {
  it('serves a chain by its family and builds each chain adapter once', () => {
    const evm = fakePlugin('@x/evm', ['evm']);
    const reg = AdapterRegistry.load(['@x/evm'], () => ({ plugin: evm }));
    const eth = chain('evm', 'ETH');
    expect(reg.forChain(eth).chain).to.equal(eth);
    reg.forChain(eth);
    expect(evm.created).to.equal(1);
    // the package serving a family, to load the same adapter elsewhere (a worker thread); none for a family nobody serves
    expect(reg.pluginPackage(eth)).to.equal('@x/evm');
    expect(reg.pluginPackage(chain('solana'))).to.equal(null);
    expect(reg.families()).to.deep.equal(['evm']);
  });

  it('throws on a chain whose family no plugin serves (no fallback)', () => {
    const reg = AdapterRegistry.load(['@x/evm'], () => ({ plugin: fakePlugin('@x/evm', ['evm']) }));
    expect(() => reg.forChain(chain('bitcoin', 'BTC'))).to.throw(WcsError, /No adapter is loaded for chain BTC/);
  });

  it('refuses a plugin built for another plugin-API version, a second plugin for a family, and a bad export', () => {
    expect(() => AdapterRegistry.load(['@x/old'], () => ({ plugin: fakePlugin('@x/old', ['evm'], PLUGIN_API_VERSION + 1) })))
      .to.throw(PluginError, new RegExp(`@x/old is built for plugin API ${PLUGIN_API_VERSION + 1}; this core provides ${PLUGIN_API_VERSION}`));
    const mods: Record<string, unknown> = { a: { plugin: fakePlugin('a', ['evm']) }, b: { plugin: fakePlugin('b', ['evm']) } };
    expect(() => AdapterRegistry.load(['a', 'b'], (id) => mods[id])).to.throw(PluginError, /family evm is served by both a and b/);
    expect(() => AdapterRegistry.load(['c'], () => ({ something: 1 }))).to.throw(PluginError, /c does not export an adapter plugin/);
    expect(() => AdapterRegistry.load(['@x/missing'], (id) => { throw new Error(`Cannot find module '${id}'`); })).to.throw(PluginError, /cannot load adapter package @x\/missing/);
  });

  it('a family core does not know comes with its package: served once the plugin declares its traits; refused without them or when they contradict core', () => {
    const ton = fakePlugin('@x/ton', ['ton'], PLUGIN_API_VERSION, { ton: { curve: 'ed25519', addressing: 'memo' } });
    const reg = AdapterRegistry.load(['@x/ton', '@x/evm'], (id) => ({ plugin: id === '@x/ton' ? ton : fakePlugin('@x/evm', ['evm']) }));
    expect(reg.traitsOf('ton')).to.deep.equal({ curve: 'ed25519', addressing: 'memo' });
    expect(reg.traitsOf('evm')).to.deep.equal({ curve: 'secp256k1', addressing: 'hd' }); // core's, the plugin declared none
    expect(reg.traitsOf('cosmos')).to.equal(null);
    expect(reg.forChain(chain('ton', 'TON')).chain.code).to.equal('TON');
    expect(() => AdapterRegistry.load(['@x/bare'], () => ({ plugin: fakePlugin('@x/bare', ['ton']) })))
      .to.throw(PluginError, /@x\/bare serves family ton, which core does not know: the plugin must declare its traits/);
    expect(() => AdapterRegistry.load(['@x/odd'], () => ({ plugin: fakePlugin('@x/odd', ['evm'], PLUGIN_API_VERSION, { evm: { curve: 'ed25519', addressing: 'hd' } }) })))
      .to.throw(PluginError, /@x\/odd declares family evm as ed25519\/hd; core's evm is secp256k1\/hd/);
    expect(() => AdapterRegistry.load(['@x/curve'], () => ({ plugin: fakePlugin('@x/curve', ['ton'], PLUGIN_API_VERSION, { ton: { curve: 'p256' as 'ed25519', addressing: 'memo' } }) })))
      .to.throw(PluginError, /unknown curve p256/);
    expect(() => AdapterRegistry.load(['@x/name'], () => ({ plugin: fakePlugin('@x/name', ['TON!']) }))).to.throw(PluginError, /not a family name/);
  });
});
