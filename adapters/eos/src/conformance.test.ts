import { expect } from 'chai';
import { AdapterConfigError, AdapterRegistry } from '@wcs/core';
import { fromHex, runAdapterConformance, testChain, type AdapterFixture } from '@wcs/core/testing';
import { plugin } from './index';

// Chain definitions as in server/src/catalogue/default-catalogue.ts (ids 8 and 108), with the
// operator's deposit account configured (the catalogue ships without one).
const EOS_LIVE = testChain({ id: 8, code: 'EOS', name: 'EOS', family: 'eos', environment: 'live', network: 'mainnet', nativeSymbol: 'EOS', decimals: 4, confirmations: 1, options: { depositAccount: 'wcsdeposit11' } });
const EOS_JUNGLE = testChain({ ...EOS_LIVE, id: 108, name: 'EOS Jungle Testnet', environment: 'test', network: 'jungle4', options: { depositAccount: 'wcs.deposit' } });

const DEV_KEY = 'EOSIO development key EOS6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5GDW5CV (AntelopeIO tests)';
const RULE = 'EOS name rules: 1-12 of a-z 1-5 ., no trailing .';

/** EOS addresses are accounts: any valid key maps to the configured deposit account. */
function derivations(account: string): AdapterFixture['derivations'] {
  return [
    { publicKeyHex: '02c0ded2bc1f1305fb0faac5e6c03ee3a1924234985427b6167ca569d13df435cf', address: account, source: `${DEV_KEY} -> options.depositAccount` },
    { publicKeyHex: '0315c358024ce46767102578947584c4342a6982b922d454f63588effa34597197', address: account, source: "BIP-39 test mnemonic m/44'/194'/0'/0/0 (wallet-core 4.8.2) -> options.depositAccount" },
  ];
}

const valid: AdapterFixture['valid'] = [
  { address: 'eosio', normalized: 'eosio', normalizedMemo: null, source: 'the system account' },
  { address: 'eosio.token', normalized: 'eosio.token', source: 'system token contract (a dot inside is allowed)' },
  { address: 'tethertether', normalized: 'tethertether', source: 'USDT contract, 12 characters (default catalogue token 801)' },
  { address: 'a', normalized: 'a', source: 'one character (premium name)' },
  { address: 'b1', normalized: 'b1', source: 'digits 1-5 are allowed' },
  { address: 'wcsdeposit11', memo: '123', normalized: 'wcsdeposit11', normalizedMemo: '123', source: 'account + decimal memo' },
  { address: 'binancecleos', memo: 'order 42: thanks \u{1F642}', normalized: 'binancecleos', normalizedMemo: 'order 42: thanks \u{1F642}', source: 'account + text memo with an emoji' },
  { address: 'wcsdeposit11', memo: 'a'.repeat(256), normalized: 'wcsdeposit11', normalizedMemo: 'a'.repeat(256), source: 'memo of exactly 256 bytes (eosio.token limit)' },
];

const invalid: AdapterFixture['invalid'] = [
  { address: 'EOSIO', why: `upper case (${RULE})` },
  { address: 'eosio.', why: `trailing dot: decodes as "eosio" (${RULE})` },
  { address: 'abcdefghijklm', why: `13 characters: the chain creates no account over 12 (${RULE})` },
  { address: 'zzzzzzzzzzzzj', why: '13 characters with an allowed 13th symbol: a name, but never an account' },
  { address: 'a6', why: `digit 6 (${RULE})` },
  { address: 'a0', why: `digit 0 (${RULE})` },
  { address: 'a-b', why: `hyphen (${RULE})` },
  { address: 'a_b', why: `underscore (${RULE})` },
  { address: ' eosio', why: 'leading space: no trimming' },
  { address: 'eosio\n', why: 'trailing newline: no trimming' },
  { address: '.', why: 'a lone dot' },
  { address: 'eosio.null', why: 'the burn account' },
  { address: 'EOS6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5GDW5CV', why: `a public key, not an account (${DEV_KEY})` },
  { address: 'PUB_K1_6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5BoDq63', why: 'the same key in PUB_K1_ form' },
  { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', why: 'an EVM address' },
  { address: 'wcsdeposit11', memo: 'a'.repeat(257), why: 'memo over 256 bytes' },
  { address: 'wcsdeposit11', memo: '\u00e9'.repeat(129), why: 'memo of 129 two-byte characters = 258 bytes' },
  { address: 'wcsdeposit11', memo: '', why: 'empty memo: pass null for none' },
  { address: 'wcsdeposit11', memo: 'line\nbreak', why: 'control character in the memo' },
  { address: 'wcsdeposit11', memo: 'a\ud800', why: 'lone surrogate in the memo' },
];

const memos: AdapterFixture['memos'] = {
  formatted: [
    { index: 1n, memo: '1' },
    { index: 2n, memo: '2' },
    { index: 9007199254740991n, memo: '9007199254740991' },
  ],
  invalid: ['', 'a'.repeat(257), '\n', 'tab\there', '\u0000', '\u007f', '\u0085', 'a\udc00'],
};

runAdapterConformance(plugin, [
  { chain: EOS_LIVE, derivations: derivations('wcsdeposit11'), valid, invalid, memos },
  { chain: EOS_JUNGLE, derivations: derivations('wcs.deposit'), valid, invalid, memos },
]);

describe('plugin loading', () => {
  // Loading by package name for EOS_LIVE and EOS_JUNGLE is part of the conformance suite.
  it('loads through the core registry for a chain without options, as the default catalogue lists EOS', () => {
    // A fresh registry: forChain caches one adapter per environment and code.
    const bare = AdapterRegistry.load(['@wcs/adapter-eos']).forChain({ ...EOS_LIVE, options: {} });
    expect(bare.address.validate('eosio').valid).to.equal(true);
    expect(() => bare.address.addressFromPublicKey({ curve: 'secp256k1', bytes: fromHex(derivations('x')[0]!.publicKeyHex) }))
      .to.throw(AdapterConfigError, /no depositAccount option/);
  });
});
