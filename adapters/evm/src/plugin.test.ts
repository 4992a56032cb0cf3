import { expect } from 'chai';
import { AdapterConfigError, AdapterRegistry, PLUGIN_API_VERSION, type KeyPurpose } from '@wcs/core';
import { plugin } from './index';
import { BASE_MAINNET, BSC_MAINNET, ETH_MAINNET, ETH_SEPOLIA, POLYGON_MAINNET } from './fixtures.test-helper';

const ALL = [ETH_MAINNET, BSC_MAINNET, POLYGON_MAINNET, ETH_SEPOLIA, BASE_MAINNET];

describe('EVM plugin', () => {
  it('is the package plugin for the evm family', () => {
    expect(plugin.name).to.equal('@wcs/adapter-evm');
    expect(plugin.pluginApiVersion).to.equal(PLUGIN_API_VERSION);
    expect(plugin.families).to.deep.equal(['evm']);
    const reg = AdapterRegistry.load(['@wcs/adapter-evm']);
    expect(reg.forChain(BASE_MAINNET).chain.evmChainId).to.equal(8453);
  });

  it('shares one key layout, namespace "evm", across every EVM chain', () => {
    const change: Record<KeyPurpose, number> = { deposit: 0, hot: 1, fee: 2 };
    for (const chain of ALL) {
      const adapter = plugin.create(chain);
      for (const purpose of ['deposit', 'hot', 'fee'] as const) {
        expect(adapter.keySpec(purpose), `${chain.code} ${purpose}`).to.deep.equal({
          namespace: 'evm', curve: 'secp256k1', pathTemplate: `m/44'/60'/{account}'/${change[purpose]}/{index}`,
        });
      }
    }
    expect(() => plugin.create(ETH_MAINNET).keySpec('cold' as KeyPurpose)).to.throw(/unknown key purpose/);
  });

  it('serves a chain it has never heard of from its definition alone', () => {
    const chain = { ...BASE_MAINNET, id: 77, code: 'ARB', name: 'Arbitrum One', evmChainId: 42161 };
    const adapter = plugin.create(chain);
    expect(adapter.chain).to.equal(chain);
    expect(adapter.address.validate('0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed')).to.deep.include({ valid: true, normalized: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' });
  });

  it('refuses chains it cannot serve with AdapterConfigError', () => {
    const bad = [
      { ...ETH_MAINNET, evmChainId: null },
      { ...ETH_MAINNET, evmChainId: 0 },
      { ...ETH_MAINNET, evmChainId: -1 },
      { ...ETH_MAINNET, evmChainId: 1.5 },
      { ...ETH_MAINNET, evmChainId: Number.NaN },
      { ...ETH_MAINNET, family: 'bitcoin' as const },
      { ...ETH_MAINNET, curve: 'ed25519' as const },
      { ...ETH_MAINNET, addressing: 'memo' as const },
    ];
    for (const chain of bad) expect(() => plugin.create(chain), JSON.stringify(chain)).to.throw(AdapterConfigError);
  });
});
