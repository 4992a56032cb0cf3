import { runAdapterConformance, testChain, type AdapterFixture } from '@wcs/core/testing';
import { plugin } from './index';

// Chain definitions as in server/src/catalogue/default-catalogue.ts (ids 6 and 106).
const XRP_LIVE = testChain({ id: 6, code: 'XRP', name: 'XRP Ledger', family: 'xrp', environment: 'live', network: 'mainnet', nativeSymbol: 'XRP', decimals: 6, confirmations: 1 });
const XRP_TESTNET = testChain({ ...XRP_LIVE, id: 106, name: 'XRP Ledger Testnet', environment: 'test', network: 'testnet' });

const KEYPAIRS = 'xrpl.js packages/ripple-keypairs/test/fixtures/api.json';
const WC = 'trustwallet/wallet-core tests/chains/XRP/AddressTests.cpp';
const XCODEC = 'xrpl.js packages/ripple-address-codec/test/index.test.ts (XLS-5d vectors)';
const SPECIAL = 'xrpl.org docs/concepts/accounts/addresses (Special addresses)';

const derivations: AdapterFixture['derivations'] = [
  { publicKeyHex: '030D58EB48B4420B1F7B9DF55087E0E29FEF0E8468F9A6825B01CA2C361042D435', address: 'rU6K7V3Po4snVhBBaU29sesqs2qTQJWDw1', source: `${KEYPAIRS} (secp256k1)` },
  { publicKeyHex: '0303E20EC6B4A39A629815AE02C0A1393B9225E3B890CAE45B59F42FA29BE9668D', address: 'rnBFvgZphmN39GWzUJeUitaP22Fr9be75H', source: `${WC} (FromPublicKey)` },
  { publicKeyHex: '031d68bc1a142e6766b2bdfb006ccfe135ef2e0e2e94abb5cf5c9ab6104776fbae', address: 'rHsMGQEkVNJmpGWs8XUBoTBiAAbwxZN5v3', source: "BIP-39 test mnemonic, m/44'/144'/0'/0/0 (wallet-core 4.8.2; re-derived live in derivation.test.ts)" },
];

const R_GW = 'rGWrZyQqhTp9Xu7G5Pkayo7bXjH4k4QYpf';

/** Valid on both networks: classic addresses carry no network. */
const validClassic: AdapterFixture['valid'] = [
  { address: R_GW, normalized: R_GW, normalizedMemo: null, source: XCODEC },
  { address: R_GW, memo: '12345', normalized: R_GW, normalizedMemo: '12345', source: 'classic address + destination tag' },
  { address: R_GW, memo: '0', normalized: R_GW, normalizedMemo: '0', source: 'tag 0 is a tag' },
  { address: R_GW, memo: '4294967295', normalized: R_GW, normalizedMemo: '4294967295', source: 'largest uint32 tag' },
  { address: 'r36yxStAh7qgTQNHTzjZvXybCTzUFhrfav', normalized: 'r36yxStAh7qgTQNHTzjZvXybCTzUFhrfav', source: `${WC} (isValid)` },
  { address: 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh', normalized: 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh', source: `${SPECIAL}: the genesis account is not a black hole` },
];

const validMainnetX: AdapterFixture['valid'] = [
  { address: 'XVLhHMPHU98es4dbozjVtdWzVrDjtV5fdx1mHp98tDMoQXb', normalized: R_GW, normalizedMemo: null, source: `${XCODEC}: no tag` },
  { address: 'XVLhHMPHU98es4dbozjVtdWzVrDjtV8AqEL4xcZj5whKbmc', normalized: R_GW, normalizedMemo: '0', source: `${XCODEC}: tag 0` },
  { address: 'XVLhHMPHU98es4dbozjVtdWzVrDjtV18pX8yuPT7y4xaEHi', normalized: R_GW, normalizedMemo: '4294967295', source: `${XCODEC}: tag 4294967295` },
  { address: 'X7AcgcsBL6XDcUb289X4mJ8djcdyKaGZMhc9YTE92ehJ2Fu', normalized: 'r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59', normalizedMemo: '1', source: `${XCODEC}: tag 1` },
  { address: 'X7d3eHCXzwBeWrZec1yT24iZerQjYL8m8zCJ16ACxu1BrBY', memo: '23480', normalized: 'rsA2LpzuawewSBQXkiju3YQTMzW13pAAdW', normalizedMemo: '23480', source: `${XCODEC}: tag 23480, the same memo given` },
  { address: 'XVZVpQj8YSVpNyiwXYSqvQoQqgBttTxAZwMcuJd4xteQHyt', memo: '77', normalized: 'rLczgQHxPhWtjkaQqn3Q6UM8AbRbbRvs5K', normalizedMemo: '77', source: `${XCODEC}: no tag, memo given` },
  { address: 'X76UnYEMbQfEs3mUqgtjp4zFy9exgThRj7XVZ6UxsdrBptF', normalized: 'rnBFvgZphmN39GWzUJeUitaP22Fr9be75H', normalizedMemo: '12345', source: `${WC} (RippleXAddress, tag 12345)` },
];

const validTestX: AdapterFixture['valid'] = [
  { address: 'TVE26TYGhfLC7tQDno7G8dGtxSkYQn49b3qD26PK7FcGSKE', normalized: R_GW, normalizedMemo: null, source: `${XCODEC}: test, no tag` },
  { address: 'TVE26TYGhfLC7tQDno7G8dGtxSkYQnXoy6kSDh6rZzApc69', normalized: R_GW, normalizedMemo: '4294967295', source: `${XCODEC}: test, tag 4294967295` },
  { address: 'T7YChPFWifjCAXLEtg5N74c7fSAYsvSokwcmBPBUZWhxH5P', memo: '23480', normalized: 'rsA2LpzuawewSBQXkiju3YQTMzW13pAAdW', normalizedMemo: '23480', source: `${XCODEC}: test, tag 23480, the same memo given` },
];

const invalidCommon: AdapterFixture['invalid'] = [
  { address: 'rGWrZyQqhTp9Xu7G5Pkayo7bXjH4k4QYpF', why: 'classic address with its last character changed: bad checksum' },
  { address: 'XVLhHMPHU98es4dbozjVtdWzVrDjtV5fdx1mHp98tDMoQXa', why: `X-address with a bad checksum (${XCODEC})` },
  { address: 'dGzKGt8CVpWoa8aWL1k18tAdy9Won3PxynvbbpkAqp3V47g', why: `X-address with a bad prefix (${XCODEC})` },
  { address: 'XVLhHMPHU98es4dbozjVtdWzVrDjtV18pX8zeUygYrCgrPh', why: `X-address with a 64-bit tag (${XCODEC})` },
  { address: 'r' + R_GW, why: 'extra leading r (an extra zero byte)' },
  { address: ' ' + R_GW, why: 'leading space: no trimming' },
  { address: R_GW + '\n', why: 'trailing newline: no trimming' },
  { address: 'r', why: `too short (${XCODEC})` },
  { address: '1Ma2DrB78K7jmAwaomqZNRMCvgQrNjE2QC', why: `a Bitcoin address (${WC})` },
  { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', why: 'an EVM address' },
  { address: R_GW, memo: '4294967296', why: 'tag above uint32' },
  { address: R_GW, memo: '007', why: 'tag with leading zeros' },
  { address: R_GW, memo: '-1', why: 'signed tag' },
  { address: R_GW, memo: '+5', why: 'tag with a plus sign' },
  { address: R_GW, memo: ' 5', why: 'tag with whitespace' },
  { address: R_GW, memo: '1e3', why: 'tag in exponent notation' },
  { address: R_GW, memo: 'deposit', why: 'text memo: XRP deposits are told apart by destination tag' },
  { address: R_GW, memo: '', why: 'empty memo: pass null for none' },
  { address: 'rrrrrrrrrrrrrrrrrrrrrhoLvTp', why: `ACCOUNT_ZERO (${SPECIAL})` },
  { address: 'rrrrrrrrrrrrrrrrrrrrBZbvji', why: `ACCOUNT_ONE (${SPECIAL})` },
  { address: 'rrrrrrrrrrrrrrrrrNAMEtxvNvQ', why: `name reservation black hole (${SPECIAL})` },
  { address: 'rrrrrrrrrrrrrrrrrrrn5RM1rHd', why: `NaN address (${SPECIAL})` },
];

const invalidMainnet: AdapterFixture['invalid'] = [
  ...invalidCommon,
  { address: 'TVE26TYGhfLC7tQDno7G8dGtxSkYQnXoy6kSDh6rZzApc69', why: `a test-network X-address on mainnet (${XCODEC})` },
  { address: 'T719a5UwUCnEs54UsxG9CJYYDhwmFCqkr7wxCcNcfZ6p5GZ', why: `a test-network X-address without tag on mainnet (${XCODEC})` },
  { address: 'X7d3eHCXzwBeWrZec1yT24iZerQjYL8m8zCJ16ACxu1BrBY', memo: '11747', why: 'X-address tag 23480 conflicts with memo 11747' },
  { address: 'XVLhHMPHU98es4dbozjVtdWzVrDjtV8AqEL4xcZj5whKbmc', memo: '00', why: 'X-address tag 0 with a malformed memo "00"' },
];

const invalidTestnet: AdapterFixture['invalid'] = [
  ...invalidCommon,
  { address: 'XVLhHMPHU98es4dbozjVtdWzVrDjtV18pX8yuPT7y4xaEHi', why: `a mainnet X-address on a test network (${XCODEC})` },
  { address: 'T7YChPFWifjCAXLEtg5N74c7fSAYsvSokwcmBPBUZWhxH5P', memo: '11747', why: 'X-address tag 23480 conflicts with memo 11747' },
];

const memos: AdapterFixture['memos'] = {
  formatted: [
    { index: 1n, memo: '1' },
    { index: 2n, memo: '2' },
    { index: 1000n, memo: '1000' },
    { index: 4294967295n, memo: '4294967295' },
  ],
  invalid: ['', '0123', '00', '-1', '+1', ' 1', '1 ', '4294967296', '99999999999', '1.0', '1e3', '0x1F', 'abc', '\u0661\u0662', '１２'],
};

runAdapterConformance(plugin, [
  { chain: XRP_LIVE, derivations, valid: [...validClassic, ...validMainnetX], invalid: invalidMainnet, memos },
  { chain: XRP_TESTNET, derivations, valid: [...validClassic, ...validTestX], invalid: invalidTestnet, memos },
]);
