import { expect } from 'chai';
import {
  AdapterConfigError, CapabilityMissingError, PLUGIN_API_VERSION, canPay, canScan, craftTransfer, defineAdapter, paying, refuseTrustline, requirePlainTransfer, requireSenderPays, scanning, sequenceNode, utxoNode, withAmount,
  type ChainAdapter, type MemoCodec, type PayingAdapter, type TransferIntent, type TransferNode, type UnsignedTransfer,
} from './index';
import { ChainTransferError } from './chain-errors';
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

  it('a crafter and a transfer node come together, and the spend model is one of the three', () => {
    const parts = (extra: object) => defineAdapter({
      name: '@wcs/adapter-x', family: 'stellar', curve: 'ed25519', addressing: 'memo',
      build: () => ({ spendModel: 'sequence', keySpec: { deposit: spec, hot: spec, fee: spec }, address: { addressFromPublicKey: () => 'G', validate: () => ({ valid: false, reason: 'no' }) }, memo: memoCodec, ...extra }),
    });
    const crafter = { craft: () => { throw new Error('unused'); }, combine: () => { throw new Error('unused'); } };
    expect(() => parts({ transfers: crafter }).create(CHAIN)).to.throw(AdapterConfigError, /a transfer crafter and a transfer node come together/);
    expect(() => parts({ createTransferNode: () => ({}) }).create(CHAIN)).to.throw(AdapterConfigError, /come together/);
    expect(() => parts({ spendModel: 'account' }).create(CHAIN)).to.throw(AdapterConfigError, /unknown spend model account/);
  });
});

describe('crafting by spend model', () => {
  const intent: TransferIntent = { from: 'A', fromPublicKey: { curve: 'ed25519', bytes: new Uint8Array(32) }, to: 'B', memo: null, contract: null, amount: 10n };
  const unsigned: UnsignedTransfer = { payloads: [], maxFee: 3n, txHash: null, state: null };
  const seen: unknown[] = [];
  const base = { chain: CHAIN, curve: 'ed25519', addressing: 'memo', memo: { maxIndex: 1n, format: String, isValid: () => true }, keySpec: () => { throw new Error('unused'); }, address: { addressFromPublicKey: () => 'A', validate: () => ({ valid: false, reason: 'no' }) } } as const;
  const combine = () => { throw new Error('unused'); };
  const sequence = { ...base, spendModel: 'sequence', transfers: { craft: (r: unknown) => (seen.push(r), unsigned), combine }, createTransferNode: () => ({}) } as unknown as PayingAdapter;
  const utxo = { ...base, spendModel: 'utxo', transfers: { craft: () => ({ ok: false, reason: 'INSUFFICIENT_INPUTS', shortfall: 7n }), combine }, createTransferNode: () => ({}) } as unknown as PayingAdapter;

  it('craftTransfer hands each crafter its own request, a utxo shortfall as the typed result, and refuses a transfer of another model', () => {
    expect(craftTransfer(sequence, { spendModel: 'sequence', request: { ...intent, sequence: 4n } }, {})).to.deep.equal({ ok: true, unsigned });
    expect(seen.pop()).to.deep.include({ sequence: 4n, amount: 10n });
    expect(craftTransfer(utxo, { spendModel: 'utxo', request: { ...intent, inputs: [], changeAddress: 'A' } }, {})).to.deep.equal({ ok: false, reason: 'INSUFFICIENT_INPUTS', shortfall: 7n });
    expect(() => craftTransfer(sequence, { spendModel: 'expiring', request: intent }, {})).to.throw(TypeError, /XLM is a sequence chain; the transfer was allocated as expiring/);
    expect(() => craftTransfer(utxo, { spendModel: 'sequence', request: { ...intent, sequence: 1n } }, {})).to.throw(TypeError);
  });

  it('withAmount keeps the model and its part, changing only the amount', () => {
    const t = withAmount({ spendModel: 'sequence', request: { ...intent, sequence: 9n } }, 4n);
    expect(t).to.deep.equal({ spendModel: 'sequence', request: { ...intent, sequence: 9n, amount: 4n } });
    const u = withAmount({ spendModel: 'utxo', request: { ...intent, inputs: [], subtractFee: true } }, 1n);
    expect(u).to.deep.equal({ spendModel: 'utxo', request: { ...intent, inputs: [], subtractFee: true, amount: 1n } });
  });

  it('sequenceNode / utxoNode narrow a node of the right model, else CHAIN_NOT_CONFIGURED', () => {
    const node = { nextSequence: async () => 0n } as unknown as TransferNode;
    expect(sequenceNode(sequence, node)).to.equal(node);
    expect(() => utxoNode(sequence, node)).to.throw(CapabilityMissingError);
    expect(() => sequenceNode(sequence, {} as TransferNode)).to.throw(CapabilityMissingError);
    expect(() => sequenceNode(utxo, node)).to.throw(CapabilityMissingError);
  });

  it('requireSenderPays refuses a fee payer or a token account to close, and takes a plain intent', () => {
    expect(() => requireSenderPays(intent, 'X')).to.not.throw();
    expect(() => requireSenderPays({ ...intent, feePayer: { address: 'P', publicKey: intent.fromPublicKey } }, 'X')).to.throw(ChainTransferError, 'X has no separate fee payer');
    expect(() => requireSenderPays({ ...intent, closeTokenAccount: true }, 'X')).to.throw(ChainTransferError, /no token accounts to close/);
    expect(() => requireSenderPays({ ...intent, closeTokenAccount: false }, 'X')).to.not.throw();
    // a trustline is a Stellar request: requireSenderPays lets it through, requirePlainTransfer and refuseTrustline refuse it
    expect(() => requireSenderPays({ ...intent, trustline: true }, 'X')).to.not.throw();
    expect(() => requirePlainTransfer({ ...intent, trustline: true }, 'X')).to.throw(ChainTransferError, 'X has no trustlines');
    expect(() => refuseTrustline({ ...intent, trustline: true }, 'X')).to.throw(ChainTransferError, /trustline must be absent/);
    expect(() => requirePlainTransfer({ ...intent, feePayer: { address: 'P', publicKey: intent.fromPublicKey } }, 'X')).to.throw(ChainTransferError, 'X has no separate fee payer');
    expect(() => requirePlainTransfer(intent, 'X')).to.not.throw();
  });
});
