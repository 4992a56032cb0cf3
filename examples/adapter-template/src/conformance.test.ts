import path from 'node:path';
import { expect } from 'chai';
import { runAdapterConformance, type AdapterFixture } from '@wcs/core/testing';
import { DEMO_KEY_SPECS, plugin } from './index';
import { demoChain } from './test-support/chains';

// Derivation vectors from an independent implementation: the checksum computed with coreutils
// (`(printf dt; printf %s <key hex> | xxd -r -p) | sha256sum`, its first 8 hex digits), not by this
// package's code. A real chain takes them from the chain's reference library or wallet.
const ONE = '0000000000000000000000000000000000000000000000000000000000000001';
const KEY = '8d6ca5bec4774252bc700c5a8b4c2bb1904029f7421aa2afc21d6d038f275f83'; // SLIP-10 m/44'/607'/1'/0' of the test mnemonic
const src = 'coreutils sha256sum over the prefix and the key bytes';
const testOne = `dt${ONE}e95bd09c`;
const testKey = `dt${KEY}db5fd8c4`;

const fixtures: AdapterFixture[] = [
  {
    chain: demoChain(),
    derivations: [
      { publicKeyHex: ONE, address: testOne, source: src },
      { publicKeyHex: KEY, address: testKey, source: src },
    ],
    valid: [
      { address: testOne, normalized: testOne, source: 'canonical' },
      { address: testKey.toUpperCase(), normalized: testKey, source: 'upper case → lower case' },
    ],
    invalid: [
      { address: `dm${ONE}b685a110`, why: 'a mainnet address on a test network' },
      { address: `dt${ONE}e95bd09d`, why: 'checksum' },
      { address: `dt${ONE}e95bd0`, why: 'short' },
      { address: `dt${ONE.slice(0, -1)}ge95bd09c`, why: 'not hexadecimal' },
      { address: testOne, memo: '7', why: 'the chain has no memos' },
    ],
  },
  {
    chain: demoChain({ id: 9900, code: 'DEMO', environment: 'live', network: 'mainnet' }),
    derivations: [{ publicKeyHex: KEY, address: `dm${KEY}9a5b721e`, source: src }],
    valid: [{ address: `dm${ONE}b685a110`, normalized: `dm${ONE}b685a110`, source: 'canonical' }],
    invalid: [{ address: testOne, why: 'a test-network address on mainnet' }],
  },
];

describe('demo adapter (template)', () => {
  // the package's own folder (dist/ is one below it): the suite loads the package from there by its name
  runAdapterConformance(plugin, fixtures, { packageDir: path.resolve(__dirname, '..') });

  it('lays out deposit, hot and fee keys in one namespace, every level hardened', () => {
    const adapter = plugin.create(demoChain());
    for (const purpose of ['deposit', 'hot', 'fee'] as const) {
      expect(adapter.keySpec(purpose)).to.equal(DEMO_KEY_SPECS[purpose]);
      expect(adapter.keySpec(purpose).pathTemplate.split('/').slice(1).every((level) => level.endsWith("'")), purpose).to.equal(true);
    }
  });

  it('scans only: no withdrawals (crafter and node absent together), a spend model all the same', () => {
    const adapter = plugin.create(demoChain());
    expect([adapter.transfers, adapter.createTransferNode]).to.deep.equal([undefined, undefined]);
    expect(adapter.spendModel).to.equal('sequence');
    expect(adapter.createScanner).to.be.a('function');
  });
});
