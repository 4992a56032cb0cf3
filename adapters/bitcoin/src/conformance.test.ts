import { runAdapterConformance, walletCoreVectors, type AdapterFixture } from '@wcs/core/testing';
import { plugin } from './index';
import { BTC_CHAINS, BTC_MAINNET, BTC_REGTEST_RB, BTC_TESTNET } from './fixtures.test-helper';

type Derivation = { publicKeyHex: string; address: string; source: string };

// BIP-84 test vectors (https://github.com/bitcoin/bips/blob/master/bip-0084.mediawiki), mnemonic "abandon … about".
const BIP84_KEYS = {
  receive0: '0330d54fd0dd420a6e5f8d3624f5f3482cae350f79d5f0753bf5beef9c2d91af3c', // m/84'/0'/0'/0/0
  receive1: '03e775fd51f0dfb8cd865d9ff1cca2a158cf651fe997fdc9fee9c1d3b5e995ea77', // m/84'/0'/0'/0/1
  change0: '03025324888e429ab8e3dbaf1f7802648b9cd01e9b418485c5fa4c1b9b5700e1a6', // m/84'/0'/0'/1/0
};
const WC = '@trustwallet/wallet-core 4.8.2 AnyAddress.createBech32WithPublicKey';

const mainnetDerivations: Derivation[] = [
  { publicKeyHex: BIP84_KEYS.receive0, address: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', source: "BIP-84 vector m/84'/0'/0'/0/0" },
  { publicKeyHex: BIP84_KEYS.receive1, address: 'bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g', source: "BIP-84 vector m/84'/0'/0'/0/1" },
  { publicKeyHex: BIP84_KEYS.change0, address: 'bc1q8c6fshw2dlwun7ekn9qwf37cu2rn755upcp6el', source: "BIP-84 vector m/84'/0'/0'/1/0" },
];
const testnetDerivations: Derivation[] = [
  { publicKeyHex: BIP84_KEYS.receive0, address: 'tb1qcr8te4kr609gcawutmrza0j4xv80jy8zmfp6l0', source: `BIP-84 key 0/0, hrp tb (${WC})` },
  { publicKeyHex: BIP84_KEYS.receive1, address: 'tb1qnjg0jd8228aq7egyzacy8cys3knf9xvrn9d67m', source: `BIP-84 key 0/1, hrp tb (${WC})` },
  { publicKeyHex: BIP84_KEYS.change0, address: 'tb1q8c6fshw2dlwun7ekn9qwf37cu2rn755ut76fzv', source: `BIP-84 key 1/0, hrp tb (${WC})` },
];
const regtestDerivations: Derivation[] = [
  { publicKeyHex: BIP84_KEYS.receive0, address: 'rb1qcr8te4kr609gcawutmrza0j4xv80jy8zv06dl6', source: `BIP-84 key 0/0, hrp rb (${WC})` },
  { publicKeyHex: BIP84_KEYS.receive1, address: 'rb1qnjg0jd8228aq7egyzacy8cys3knf9xvryrkd7w', source: `BIP-84 key 0/1, hrp rb (${WC})` },
  { publicKeyHex: BIP84_KEYS.change0, address: 'rb1q8c6fshw2dlwun7ekn9qwf37cu2rn755uucp7ze', source: `BIP-84 key 1/0, hrp rb (${WC})` },
];

const WS_ADDR = 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu';

const mainnet: AdapterFixture = {
  chain: BTC_MAINNET,
  derivations: mainnetDerivations,
  valid: [
    { address: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', normalized: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', normalizedMemo: null, source: 'BIP-84 vector (P2WPKH)' },
    { address: 'BC1QCR8TE4KR609GCAWUTMRZA0J4XV80JY8Z306FYU', normalized: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', source: 'BIP-84 vector upper-cased (BIP-173: all-upper is valid)' },
    { address: 'BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4', normalized: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', source: 'BIP-173/BIP-350 valid segwit vector (P2WPKH)' },
    { address: 'bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3', normalized: 'bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3', source: 'BIP-173 examples, mainnet P2WSH' },
    { address: 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0', normalized: 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0', source: 'BIP-350 valid segwit vector (P2TR)' },
    { address: '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', normalized: '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', source: 'genesis block coinbase (P2PKH)' },
    { address: '1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA', normalized: '1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA', source: "abandon…about m/44'/0'/0'/0/0 (P2PKH, wallet-core)" },
    { address: '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy', normalized: '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy', source: 'Bitcoin wiki P2SH example (wallet-core isValid)' },
    { address: '37VucYSaXLCAsxYyAPfbSi9eh4iEcbShgf', normalized: '37VucYSaXLCAsxYyAPfbSi9eh4iEcbShgf', source: "abandon…about m/49'/0'/0'/0/0 (P2SH-P2WPKH, wallet-core)" },
  ],
  invalid: [
    { address: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', memo: '12345', why: 'BTC has no memo' },
    { address: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', memo: '', why: 'BTC has no memo (an empty memo is still a memo)' },
    { address: 'tb1qcr8te4kr609gcawutmrza0j4xv80jy8zmfp6l0', why: 'testnet bech32 address on mainnet' },
    { address: 'bcrt1qcr8te4kr609gcawutmrza0j4xv80jy8zeqchgx', why: 'regtest (bcrt) address on mainnet' },
    { address: 'rb1qcr8te4kr609gcawutmrza0j4xv80jy8zv06dl6', why: 'bcoin regtest (rb) address on mainnet' },
    { address: 'mrCDrCybB6J1vRfbwM5hemdJz73FwDBC8r', why: 'testnet base58 P2PKH on mainnet' },
    { address: '2Mww8dCYPUpKHofjgcXcBCEGmniw9CoaiD2', why: 'testnet base58 P2SH on mainnet (BIP-49 vector)' },
    { address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5', why: 'bad bech32 checksum (BIP-173 vector)' },
    { address: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyv', why: 'bad bech32 checksum (BIP-84 address, last character changed)' },
    { address: '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb', why: 'bad base58check checksum' },
    { address: 'bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7k7grplx', why: 'v1 with a bech32 checksum (BIP-173 vector, invalid since BIP-350)' },
    { address: 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd', why: 'v1 with a bech32 checksum (BIP-350 invalid vector)' },
    { address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh', why: 'v0 with a bech32m checksum (BIP-350 invalid vector)' },
    { address: 'BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P', why: '16-byte v0 program (BIP-350 invalid vector)' },
    { address: 'bc1pw5dgrnzv', why: '1-byte program (BIP-350 invalid vector)' },
    { address: 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v8n0nx0muaewav253zgeav', why: '41-byte program (BIP-350 invalid vector)' },
    { address: 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf', why: 'zero padding of more than 4 bits (BIP-350 invalid vector)' },
    { address: 'BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R', why: 'witness version 17 (BIP-350 invalid vector)' },
    { address: 'bc1gmk9yu', why: 'empty data section (BIP-350 invalid vector)' },
    { address: 'tc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq5zuyut', why: 'unknown human-readable part tc (BIP-350 invalid vector)' },
    { address: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyU', why: 'mixed case (BIP-173)' },
    { address: 'Bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', why: 'mixed case (BIP-173)' },
    { address: 'BC1SW50QGDZ25J', why: 'witness v16 (BIP-350 valid vector): not a spendable output type today' },
    { address: 'bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs', why: 'witness v2 (BIP-350 valid vector): not a spendable output type today' },
    { address: 'bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y', why: 'v1 with a 40-byte program (BIP-350 valid vector): not P2TR' },
    { address: ` ${WS_ADDR}`, why: 'leading whitespace' },
    { address: `${WS_ADDR} `, why: 'trailing whitespace' },
    { address: `${WS_ADDR}\n`, why: 'trailing newline' },
    { address: 'bc1qcr8te4kr609gcawutm rza0j4xv80jy8z306fyu', why: 'inner whitespace' },
    { address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', why: 'an Ethereum address' },
    { address: 'bitcoin:bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', why: 'a BIP-21 URI, not an address' },
  ],
};

const testnet: AdapterFixture = {
  chain: BTC_TESTNET,
  derivations: testnetDerivations,
  valid: [
    { address: 'tb1qcr8te4kr609gcawutmrza0j4xv80jy8zmfp6l0', normalized: 'tb1qcr8te4kr609gcawutmrza0j4xv80jy8zmfp6l0', normalizedMemo: null, source: `BIP-84 key, hrp tb (${WC})` },
    { address: 'TB1QCR8TE4KR609GCAWUTMRZA0J4XV80JY8ZMFP6L0', normalized: 'tb1qcr8te4kr609gcawutmrza0j4xv80jy8zmfp6l0', source: 'the same upper-cased (BIP-173)' },
    { address: 'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7', normalized: 'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7', source: 'BIP-173/BIP-350 valid segwit vector (P2WSH)' },
    { address: 'tb1qqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesrxh6hy', normalized: 'tb1qqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesrxh6hy', source: 'BIP-173/BIP-350 valid segwit vector (P2WSH)' },
    { address: 'tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c', normalized: 'tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c', source: 'BIP-350 valid segwit vector (P2TR)' },
    { address: 'mrCDrCybB6J1vRfbwM5hemdJz73FwDBC8r', normalized: 'mrCDrCybB6J1vRfbwM5hemdJz73FwDBC8r', source: 'testnet P2PKH of hash160 751e76e8… (the BIP-173 key hash; wallet-core Base58)' },
    { address: 'my6RhGaMEf8v9yyQKqiuUYniJLfyU4gzqe', normalized: 'my6RhGaMEf8v9yyQKqiuUYniJLfyU4gzqe', source: 'BIP-84 key 0/0 as testnet P2PKH (wallet-core BitcoinAddress prefix 0x6f)' },
    { address: '2Mww8dCYPUpKHofjgcXcBCEGmniw9CoaiD2', normalized: '2Mww8dCYPUpKHofjgcXcBCEGmniw9CoaiD2', source: 'BIP-49 test vector (P2SH-P2WPKH)' },
  ],
  invalid: [
    { address: 'tb1qcr8te4kr609gcawutmrza0j4xv80jy8zmfp6l0', memo: '1', why: 'BTC has no memo' },
    { address: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', why: 'mainnet bech32 address on testnet' },
    { address: 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0', why: 'mainnet P2TR on testnet' },
    { address: 'rb1qcr8te4kr609gcawutmrza0j4xv80jy8zv06dl6', why: 'bcoin regtest address on testnet' },
    { address: '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', why: 'mainnet base58 P2PKH on testnet' },
    { address: '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy', why: 'mainnet base58 P2SH on testnet' },
    { address: 'tb1qcr8te4kr609gcawutmrza0j4xv80jy8zmfp6l1', why: 'bad bech32 checksum' },
    { address: 'tb1z0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqglt7rf', why: 'v2 with a bech32 checksum (BIP-350 invalid vector)' },
    { address: 'tb1q0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq24jc47', why: 'v0 with a bech32m checksum (BIP-350 invalid vector)' },
    { address: 'tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq47Zagq', why: 'mixed case (BIP-350 invalid vector)' },
    { address: 'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sL5k7', why: 'mixed case (BIP-173 invalid vector)' },
    { address: 'tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vpggkg4j', why: 'non-zero padding (BIP-350 invalid vector)' },
    { address: 'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3pjxtptv', why: 'non-zero padding (BIP-173 invalid vector)' },
    { address: 'mrCDrCybB6J1vRfbwM5hemdJz73FwDBC8s', why: 'bad base58check checksum' },
    { address: '\ttb1qcr8te4kr609gcawutmrza0j4xv80jy8zmfp6l0', why: 'leading tab' },
  ],
};

const regtest: AdapterFixture = {
  chain: BTC_REGTEST_RB,
  derivations: regtestDerivations,
  valid: [
    { address: 'rb1qcr8te4kr609gcawutmrza0j4xv80jy8zv06dl6', normalized: 'rb1qcr8te4kr609gcawutmrza0j4xv80jy8zv06dl6', normalizedMemo: null, source: `BIP-84 key, hrp rb (${WC})` },
    { address: 'RB1QCR8TE4KR609GCAWUTMRZA0J4XV80JY8ZV06DL6', normalized: 'rb1qcr8te4kr609gcawutmrza0j4xv80jy8zv06dl6', source: 'the same upper-cased (BIP-173)' },
    { address: 'rb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qffcjef', normalized: 'rb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qffcjef', source: 'BIP-173 P2WSH program under hrp rb (wallet-core isValidBech32)' },
    { address: 'rb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqn89m8h', normalized: 'rb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqn89m8h', source: 'BIP-350 P2TR program under hrp rb (wallet-core isValidBech32)' },
    { address: 'mrCDrCybB6J1vRfbwM5hemdJz73FwDBC8r', normalized: 'mrCDrCybB6J1vRfbwM5hemdJz73FwDBC8r', source: 'regtest shares testnet base58 versions (Bitcoin Core chainparams)' },
    { address: '2Mww8dCYPUpKHofjgcXcBCEGmniw9CoaiD2', normalized: '2Mww8dCYPUpKHofjgcXcBCEGmniw9CoaiD2', source: 'BIP-49 test vector (P2SH-P2WPKH)' },
  ],
  invalid: [
    { address: 'rb1qcr8te4kr609gcawutmrza0j4xv80jy8zv06dl6', memo: 'x', why: 'BTC has no memo' },
    { address: 'bcrt1qcr8te4kr609gcawutmrza0j4xv80jy8zeqchgx', why: 'Bitcoin Core regtest hrp (bcrt) on a chain configured with rb' },
    { address: 'tb1qcr8te4kr609gcawutmrza0j4xv80jy8zmfp6l0', why: 'testnet bech32 address on regtest' },
    { address: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', why: 'mainnet bech32 address on regtest' },
    { address: '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', why: 'mainnet base58 on regtest' },
    { address: 'rb1qcr8te4kr609gcawutmrza0j4xv80jy8zv06dL6', why: 'mixed case' },
    { address: 'rb1qcr8te4kr609gcawutmrza0j4xv80jy8zv06dl7', why: 'bad bech32 checksum' },
    { address: 'rb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqn89m8', why: 'truncated (checksum no longer matches)' },
  ],
};

describe('@wcs/adapter-bitcoin', () => {
  // Oracle-derived vectors added to the fixtures: for applications (accounts) 1-3 and indices 0-4,
  // the key at the adapter's deposit path derived by @scure/bip32, and wallet-core's P2WPKH address
  // for its own key at that path (walletCoreVectors fails the hook if the two keys differ).
  before(async () => {
    for (const [fixture, list] of [[mainnet, mainnetDerivations], [testnet, testnetDerivations], [regtest, regtestDerivations]] as const) {
      const hrp = BTC_CHAINS.find(([chain]) => chain === fixture.chain)![1];
      for (const v of await walletCoreVectors({ keys: plugin.create(fixture.chain), coin: 'bitcoin', purposes: ['deposit'], bech32Hrp: hrp })) {
        list.push({ publicKeyHex: v.publicKeyHex, address: v.address, source: `${v.path}: @scure/bip32 key, ${WC} (hrp ${hrp})` });
      }
    }
  });

  runAdapterConformance(plugin, [mainnet, testnet, regtest]);
});
