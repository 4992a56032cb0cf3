import { runAdapterConformance, testChain, testPublicKey, toHex, type AdapterFixture } from '@wcs/core/testing';
import { plugin } from './index';

// Chain definitions as in server/src/catalogue/default-catalogue.ts (ids 7 and 107).
const XLM_LIVE = testChain({ id: 7, code: 'XLM', name: 'Stellar', family: 'stellar', environment: 'live', network: 'pubnet', nativeSymbol: 'XLM', decimals: 7, confirmations: 1 });
const XLM_TESTNET = testChain({ ...XLM_LIVE, id: 107, name: 'Stellar Testnet', environment: 'test', network: 'testnet' });

const SEP5 = 'stellar-protocol ecosystem/sep-0005.md';
const SEP23 = 'stellar-protocol ecosystem/sep-0023.md';
const SEP5_TEST1 = 'illness spike retreat truth genius clock brain pass fit cave bargain toe';
const SEP5_TEST3 = 'bench hurt jump file august wise shallow faculty impulse spring exact slush thunder author capable act festival slice deposit sauce coconut afford frown better';

// Public keys from the test kit's SLIP-10 (written from the spec); addresses as published in SEP-0005.
const publicKeyHexAt = (mnemonic: string, path: string): string => toHex(testPublicKey('ed25519', path, mnemonic));
const derivations: AdapterFixture['derivations'] = [
  { publicKeyHex: publicKeyHexAt(SEP5_TEST1, "m/44'/148'/0'"), address: 'GDRXE2BQUC3AZNPVFSCEZ76NJ3WWL25FYFK6RGZGIEKWE4SOOHSUJUJ6', source: `${SEP5} Test 1, m/44'/148'/0'` },
  { publicKeyHex: publicKeyHexAt(SEP5_TEST1, "m/44'/148'/1'"), address: 'GBAW5XGWORWVFE2XTJYDTLDHXTY2Q2MO73HYCGB3XMFMQ562Q2W2GJQX', source: `${SEP5} Test 1, m/44'/148'/1'` },
  { publicKeyHex: publicKeyHexAt(SEP5_TEST3, "m/44'/148'/0'"), address: 'GC3MMSXBWHL6CPOAVERSJITX7BH76YU252WGLUOM5CJX3E7UCYZBTPJQ', source: `${SEP5} Test 3, m/44'/148'/0'` },
  { publicKeyHex: publicKeyHexAt(SEP5_TEST3, "m/44'/148'/9'"), address: 'GDXOY6HXPIDT2QD352CH7VWX257PHVFR72COWQ74QE3TEV4PK2KCKZX7', source: `${SEP5} Test 3, m/44'/148'/9'` },
  // SEP-23 valid case 1: the binary key 3f0c34bf… and its G strkey.
  { publicKeyHex: '3f0c34bf93ad0d9971d04ccc90f705511c838aad9734a4a2fb0d7a03fc7fe89a', address: 'GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZ', source: `${SEP23} valid case 1` },
];

const G = 'GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZ';
const M0 = 'MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUAAAAAAAAAAAACJUQ';
const M63 = 'MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVAAAAAAAAAAAAAJLK';

const valid: AdapterFixture['valid'] = [
  { address: G, normalized: G, normalizedMemo: null, source: `${SEP23} valid case 1` },
  { address: G, memo: '12345', normalized: G, normalizedMemo: '12345', source: 'G address + MEMO_ID' },
  { address: G, memo: '18446744073709551615', normalized: G, normalizedMemo: '18446744073709551615', source: 'G address + largest MEMO_ID' },
  { address: G, memo: 'invoice 42', normalized: G, normalizedMemo: 'invoice 42', source: 'G address + MEMO_TEXT' },
  { address: G, memo: '0123', normalized: G, normalizedMemo: '0123', source: 'leading zero: not a MEMO_ID, but a 4-byte MEMO_TEXT' },
  { address: G, memo: 'a'.repeat(28), normalized: G, normalizedMemo: 'a'.repeat(28), source: 'MEMO_TEXT of exactly 28 bytes' },
  { address: G, memo: '\u00e9'.repeat(14), normalized: G, normalizedMemo: '\u00e9'.repeat(14), source: 'MEMO_TEXT of 14 two-byte characters = 28 bytes' },
  { address: M0, normalized: M0, normalizedMemo: null, source: `${SEP23} valid case 2 (muxed, id 0)` },
  { address: M63, normalized: M63, normalizedMemo: null, source: `${SEP23} valid case 3 (muxed, id 2^63)` },
  { address: 'GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN', normalized: 'GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN', source: "Circle's USDC issuer (default catalogue token 702)" },
];

const invalid: AdapterFixture['invalid'] = [
  // SEP-23 invalid cases, in the SEP's order.
  { address: 'GAAAAAAAACGC6', why: `${SEP23}: invalid length (5-byte key)` },
  { address: 'MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUAAAAAAAAAAAACJUR', why: `${SEP23}: unused trailing bit not zero` },
  { address: 'GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZA', why: `${SEP23}: length congruent to 1 mod 8` },
  { address: 'GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUACUSI', why: `${SEP23}: decodes to 36 bytes, not 35` },
  { address: 'G47QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVP2I', why: `${SEP23}: invalid algorithm (low bits 7)` },
  { address: 'MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVAAAAAAAAAAAAAJLKA', why: `${SEP23}: length congruent to 6 mod 8` },
  { address: 'MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVAAAAAAAAAAAAAAV75I', why: `${SEP23}: decodes to 44 bytes, not 43` },
  { address: 'M47QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUAAAAAAAAAAAACJUQ', why: `${SEP23}: invalid algorithm (muxed)` },
  { address: 'MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUAAAAAAAAAAAACJUK===', why: `${SEP23}: padding not allowed` },
  { address: 'MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUAAAAAAAAAAAACJUO', why: `${SEP23}: invalid checksum` },
  // Valid strkeys that are not accounts.
  { address: 'CA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUWDA', why: `${SEP23} valid contract: not a payment target here` },
  { address: 'LA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUPJN', why: `${SEP23} valid liquidity pool id` },
  { address: 'BAAD6DBUX6J22DMZOHIEZTEQ64CVCHEDRKWZONFEUL5Q26QD7R76RGR4TU', why: `${SEP23} valid claimable balance id` },
  { address: 'PA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUAAAAAQACAQDAQCQMBYIBEFAWDANBYHRAEISCMKBKFQXDAMRUGY4DUPB6IBZGM', why: `${SEP23} valid signed payload signer` },
  { address: 'SBGWSG6BTNCKCOB3DIFBGCVMUPQFYPA2G4O34RMTB343OYPXU5DJDVMN', why: `${SEP5} Test 1 secret seed: never an address` },
  // Other refusals.
  { address: G.toLowerCase(), why: 'lower case: strkeys are upper-case base32' },
  { address: 'GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGA', why: 'last character changed: bad checksum' },
  { address: ' ' + G, why: 'leading space: no trimming' },
  { address: G + '\n', why: 'trailing newline: no trimming' },
  { address: 'GAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAWHF', why: 'all-zero key: a burn address' },
  { address: M0, memo: '1', why: 'muxed address with a memo: the muxed id already identifies the recipient' },
  { address: G, memo: '', why: 'empty memo: pass null for none' },
  { address: G, memo: 'a'.repeat(29), why: 'MEMO_TEXT of 29 bytes' },
  { address: G, memo: '\u00e9'.repeat(15), why: 'MEMO_TEXT of 15 two-byte characters = 30 bytes' },
  { address: G, memo: 'line\nbreak', why: 'control character in the memo' },
  { address: G, memo: 'a\ud800', why: 'lone surrogate in the memo (not UTF-8 encodable)' },
  { address: 'rGWrZyQqhTp9Xu7G5Pkayo7bXjH4k4QYpf', why: 'an XRP address' },
  { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', why: 'an EVM address' },
];

const memos: AdapterFixture['memos'] = {
  formatted: [
    { index: 1n, memo: '1' },
    { index: 2n, memo: '2' },
    { index: 9007199254740993n, memo: '9007199254740993' },
    { index: 18446744073709551615n, memo: '18446744073709551615' },
  ],
  invalid: ['', '01', '-1', '+1', ' 1', '1 ', '1.5', '1e3', '18446744073709551616', '99999999999999999999', 'invoice 42', '\u0661'],
};

runAdapterConformance(plugin, [
  { chain: XLM_LIVE, derivations, valid, invalid, memos },
  { chain: XLM_TESTNET, derivations, valid, invalid, memos },
]);
