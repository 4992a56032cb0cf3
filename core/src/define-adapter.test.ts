import { expect } from 'chai';
import { AdapterConfigError, CapabilityMissingError, PLUGIN_API_VERSION, canPay, canScan, defineAdapter, paying, scanning, type ChainAdapter, type MemoCodec } from './adapter';
import { WcsError } from './errors';
import type { ChainDefinition } from './chain';

const CHAIN: ChainDefinition = {
  id: 1, code: 'XLM', name: 'Stellar', family: 'stellar', environment: 'live', network: 'pubnet', curve: 'ed25519', addressing: 'memo',
  nativeSymbol: 'XLM', decimals: 7, confirmations: 1, evmChainId: null, options: {},
} as ChainDefinition;

describe('defineAdapter', () => {
  const spec = { namespace: 'xlm', curve: 'ed25519', pathTemplate: "m/44'/148'/{account}'/{index}'" } as const;
  const memoCodec: MemoCodec = { maxIndex: 10n, format: (i) => String(i), isValid: (m) => /^[0-9]+$/.test(m) };
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
        memo: chain.options.noMemo ? null : memoCodec,
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

  it('a memo chain\'s adapter carries its memo codec and an HD chain\'s none: the union tells them apart, and a mismatch is refused', () => {
    const a = plugin.create(CHAIN);
    expect(a.addressing).to.equal('memo');
    if (a.addressing === 'memo') expect(a.memo.format(7n)).to.equal('7'); // no `!`: the type says a memo chain has a codec
    expect(() => plugin.create({ ...CHAIN, options: { noMemo: '1' } })).to.throw(AdapterConfigError, /a memo chain's adapter needs a memo codec/);
    const hd = defineAdapter({
      name: '@wcs/adapter-hd', family: 'evm', curve: 'secp256k1', addressing: 'hd',
      build: () => ({ spendModel: 'sequence', keySpec: { deposit: spec, hot: spec, fee: spec }, address: { addressFromPublicKey: () => '0x', validate: () => ({ valid: false, reason: 'no' }) }, memo: memoCodec }),
    });
    expect(() => hd.create({ ...CHAIN, family: 'evm', curve: 'secp256k1', addressing: 'hd', evmChainId: 1 })).to.throw(AdapterConfigError, /an HD chain's adapter has no memo codec/);
  });

  it('capabilities narrow without `!`: paying() and scanning() return the typed adapter, or a coded CHAIN_NOT_CONFIGURED error naming the chain', () => {
    const a = plugin.create(CHAIN);
    expect([canPay(a), canScan(a)]).to.deep.equal([false, false]);
    expect(() => paying(a)).to.throw(CapabilityMissingError, 'The adapter of chain XLM has no withdrawals');
    expect(() => scanning(a)).to.throw(WcsError).with.property('code', 1003001004);
    const withAll: ChainAdapter = {
      ...a,
      transfers: { craft: () => { throw new Error('unused'); }, combine: () => { throw new Error('unused'); } },
      createTransferNode: () => { throw new Error('unused'); },
      createScanner: () => { throw new Error('unused'); },
    };
    expect(paying(withAll).transfers).to.equal(withAll.transfers);
    expect(typeof scanning(withAll).createScanner).to.equal('function');
  });
});
