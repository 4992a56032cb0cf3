import { runAdapterConformance, walletCoreVectors, type AdapterFixture } from '@wcs/core/testing';
import { plugin } from './index';
import { EVM_CHAINS, STATIC_DERIVATIONS, type Derivation } from './fixtures.test-helper';

const VALID: AdapterFixture['valid'] = [
  // EIP-55 test cases (https://eips.ethereum.org/EIPS/eip-55#test-cases): all caps, all lower, normal.
  { address: '0x52908400098527886E0F7030069857D2E4169EE7', normalized: '0x52908400098527886E0F7030069857D2E4169EE7', normalizedMemo: null, source: 'EIP-55 test case (all caps)' },
  { address: '0x8617E340B3D01FA5F11F306F4090FD50E238070D', normalized: '0x8617E340B3D01FA5F11F306F4090FD50E238070D', source: 'EIP-55 test case (all caps)' },
  { address: '0xde709f2102306220921060314715629080e2fb77', normalized: '0xde709f2102306220921060314715629080e2fb77', source: 'EIP-55 test case (all lower)' },
  { address: '0x27b1fdb04752bbc536007a920d24acb045561c26', normalized: '0x27b1fdb04752bbc536007a920d24acb045561c26', source: 'EIP-55 test case (all lower)' },
  { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', normalized: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', source: 'EIP-55 test case (normal)' },
  { address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', normalized: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', source: 'EIP-55 test case (normal)' },
  { address: '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB', normalized: '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB', source: 'EIP-55 test case (normal)' },
  { address: '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb', normalized: '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb', source: 'EIP-55 test case (normal)' },
  // Single-case forms normalise to EIP-55.
  { address: '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', normalized: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', source: 'EIP-55 test case, lower-cased' },
  { address: '0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED', normalized: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', source: 'EIP-55 test case, upper-cased' },
  { address: '0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359', normalized: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', source: "EIP-55 implementation example toChecksumAddress('0xfb69…')" },
  { address: '0xdac17f958d2ee523a2206206994597c13d831ec7', normalized: '0xdAC17F958D2ee523a2206206994597C13D831ec7', source: "Tether's published USDT contract, lower-cased" },
];

const GOOD = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const INVALID: AdapterFixture['invalid'] = [
  { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD', why: 'EIP-55 checksum: last letter case flipped' },
  { address: '0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', why: 'EIP-55 checksum: second letter case flipped' },
  { address: '0xdAC17F958D2ee523a2206206994597C13D831eC7', why: 'EIP-55 checksum: USDT contract with one letter case flipped' },
  { address: '5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', why: 'no 0x prefix' },
  { address: '0X5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED', why: 'upper-case 0X prefix' },
  { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe', why: '39 hex digits' },
  { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed0', why: '41 hex digits' },
  { address: '0x', why: 'no hex digits' },
  { address: '0x' + 'ab'.repeat(32), why: '64 hex digits (a hash, not an address)' },
  { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg', why: 'non-hex character g' },
  { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1Be-ed', why: 'non-hex character -' },
  { address: 'XE7338O073KYGTWWZN0F2WZ0R8PX5ZPPZS', why: 'ICAP address (ethers getAddress would accept it; we do not)' },
  { address: 'vitalik.eth', why: 'ENS name' },
  { address: 'wallet.base.eth', why: 'ENS (Basename) name' },
  { address: '0x0000000000000000000000000000000000000000', why: 'zero address' },
  { address: GOOD, memo: '1', why: 'EVM chains have no memo' },
  { address: GOOD, memo: '', why: 'EVM chains have no memo (an empty memo is still a memo)' },
  { address: ` ${GOOD}`, why: 'leading whitespace' },
  { address: `${GOOD} `, why: 'trailing whitespace' },
  { address: `${GOOD}\n`, why: 'trailing newline' },
  { address: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', why: 'a Bitcoin address' },
  { address: 'ethereum:0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', why: 'an EIP-681 URI, not an address' },
];

const fixtures = EVM_CHAINS.map(([chain, coin]) => {
  const derivations: Derivation[] = [...STATIC_DERIVATIONS];
  const fixture: AdapterFixture = { chain, derivations, valid: VALID, invalid: INVALID };
  return { coin, derivations, fixture };
});

describe('@wcs/adapter-evm', () => {
  // Oracle-derived vectors added to every chain's fixture: for applications (accounts) 1-3 and
  // indices 0-4, the key at the adapter's deposit path derived by @scure/bip32, and wallet-core's
  // address (for that chain's coin type) of its own key at that path (walletCoreVectors fails the
  // hook if the two keys differ).
  before(async () => {
    for (const { fixture, coin, derivations } of fixtures) {
      for (const v of await walletCoreVectors({ keys: plugin.create(fixture.chain), coin, purposes: ['deposit'] })) {
        derivations.push({ publicKeyHex: v.publicKeyHex, address: v.address, source: `${v.path}: @scure/bip32 key, wallet-core 4.8.2 address (CoinType.${coin})` });
      }
    }
  });

  runAdapterConformance(plugin, fixtures.map((f) => f.fixture));
});
