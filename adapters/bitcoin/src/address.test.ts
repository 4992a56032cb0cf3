import { expect } from 'chai';
import { address as btcAddress } from 'bitcoinjs-lib';
import { plugin } from './index';
import { BTC_MAINNET, BTC_TESTNET } from './fixtures.test-helper';

const hexBytes = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'hex'));
// BIP-84 vector key m/84'/0'/0'/0/0, compressed and (same point) uncompressed.
const BIP84_KEY = '0330d54fd0dd420a6e5f8d3624f5f3482cae350f79d5f0753bf5beef9c2d91af3c';
const BIP84_KEY_UNCOMPRESSED = '0430d54fd0dd420a6e5f8d3624f5f3482cae350f79d5f0753bf5beef9c2d91af3c04717159ce0828a7f686c2c7510b7aa7d4c685ebc2051642ccbebc7099e2f679';

describe('bitcoin address codec', () => {
  const mainnet = plugin.create(BTC_MAINNET).address;
  const testnet = plugin.create(BTC_TESTNET).address;

  it('derives P2WPKH from a compressed key only', () => {
    expect(mainnet.addressFromPublicKey({ curve: 'secp256k1', bytes: hexBytes(BIP84_KEY) })).to.equal('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu');
    expect(testnet.addressFromPublicKey({ curve: 'secp256k1', bytes: hexBytes(BIP84_KEY) })).to.equal('tb1qcr8te4kr609gcawutmrza0j4xv80jy8zmfp6l0');
    const bad: Array<[string, Uint8Array, RegExp]> = [
      ['uncompressed (65 bytes)', hexBytes(BIP84_KEY_UNCOMPRESSED), /33-byte compressed.*got 65 bytes/],
      ['32 bytes', hexBytes(BIP84_KEY.slice(2)), /got 32 bytes/],
      ['33 bytes with prefix 04', hexBytes('04' + BIP84_KEY.slice(2)), /33-byte compressed/],
      ['x = 0 is not on secp256k1', hexBytes('02' + '00'.repeat(32)), /not on the curve/],
      ['x >= p', hexBytes('02' + 'ff'.repeat(32)), /not on the curve/],
      ['empty', new Uint8Array(0), /got 0 bytes/],
    ];
    for (const [what, bytes, re] of bad) expect(() => mainnet.addressFromPublicKey({ curve: 'secp256k1', bytes }), what).to.throw(Error, re);
    expect(() => mainnet.addressFromPublicKey({ curve: 'ed25519', bytes: new Uint8Array(32) })).to.throw(/secp256k1/);
  });

  it('says why an address is refused', () => {
    const cases: Array<[typeof mainnet, string, string | null, RegExp]> = [
      [mainnet, 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', '7', /BTC has no memo/],
      [mainnet, 'tb1qcr8te4kr609gcawutmrza0j4xv80jy8zmfp6l0', null, /testnet.*mainnet/],
      [testnet, 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', null, /mainnet.*testnet/],
      [mainnet, 'mrCDrCybB6J1vRfbwM5hemdJz73FwDBC8r', null, /testnet\/regtest P2PKH.*not mainnet/],
      [testnet, '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy', null, /mainnet P2SH.*not testnet/],
      [mainnet, 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5', null, /checksum/],
      [mainnet, '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb', null, /base58check checksum/],
      [mainnet, 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd', null, /version 1 with a bech32 checksum/],
      [mainnet, 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh', null, /version 0 with a bech32m checksum/],
      [mainnet, 'BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P', null, /16-byte version 0 program/],
      [mainnet, 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyU', null, /mixes upper and lower case/],
      [mainnet, 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu ', null, /whitespace/],
      [mainnet, 'BC1SW50QGDZ25J', null, /witness version 16/],
    ];
    for (const [codec, address, memo, re] of cases) {
      const r = codec.validate(address, memo);
      expect(r.valid, address).to.equal(false);
      if (!r.valid) expect(r.reason, address).to.match(re);
    }
  });

  it('treats an absent memo (undefined or null) as no memo', () => {
    for (const memo of [undefined, null]) {
      expect(mainnet.validate('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', memo)).to.deep.equal({ valid: true, normalized: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', memo: null });
    }
  });

  it('returns (never throws) for non-string input', () => {
    for (const junk of [undefined, null, 42, {}]) expect(mainnet.validate(junk as unknown as string).valid).to.equal(false);
  });

  it('checks base58check legacy addresses (version byte, 20-byte hash, checksum)', () => {
    // Genesis block coinbase address (hash160 62e907b1…) and the BIP-49 test vector (testnet P2SH-P2WPKH, script hash 336caa13…).
    expect(mainnet.validate('1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa')).to.deep.equal({ valid: true, normalized: '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', memo: null });
    expect(testnet.validate('2Mww8dCYPUpKHofjgcXcBCEGmniw9CoaiD2')).to.deep.equal({ valid: true, normalized: '2Mww8dCYPUpKHofjgcXcBCEGmniw9CoaiD2', memo: null });
    const bad: Array<[string, RegExp]> = [
      ['1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb', /invalid base58check checksum/],
      ['1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfN0', /not a mainnet bitcoin address/],
      ['1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNI', /not a mainnet bitcoin address/],
      ['1111', /invalid base58check checksum/],
      // Valid checksums around payloads that are not version byte + 20 bytes (bitcoinjs-lib address.toBase58Check cannot make these).
      ['1gS87VeDEagQs9UfVQ7eEXHg6gSFSin8PKW', /carries more than a version byte and a 20-byte hash/], // 0x00 + 21 bytes (62 00…)
      ['132QAF8WCAmy6kU8paVBDwswYPFvsXFu9', /carries less than a version byte and a 20-byte hash/], // 0x00 + 19 bytes (62 00…)
      ['', /empty/],
      ['x'.repeat(200), /too long/],
    ];
    for (const [address, re] of bad) {
      const r = mainnet.validate(address);
      expect(r.valid, address).to.equal(false);
      if (!r.valid) expect(r.reason, address).to.match(re);
    }
  });

  it('refuses non-ASCII look-alikes that bitcoinjs-lib lower-cases into a valid address', () => {
    // U+212A KELVIN SIGN lower-cases to "k": bech32@2 under address.fromBech32 accepts the string.
    const kelvin = 'BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7\u212AV8F3T4';
    expect(btcAddress.fromBech32(kelvin).version, 'bitcoinjs-lib accepts it').to.equal(0);
    const r = mainnet.validate(kelvin);
    expect(r.valid).to.equal(false);
    if (!r.valid) expect(r.reason).to.match(/outside US-ASCII/);
    expect(mainnet.validate('BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4').valid).to.equal(true);
  });

  it('adds the segwit rules that bitcoinjs-lib address.fromBech32 does not check', () => {
    // fromBech32 returns these; validate() refuses them (BIP-350 invalid vectors and a BIP-350 valid string).
    const lax: Array<[string, RegExp]> = [
      ['BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R', /witness version 17 \(0-16 allowed\)/],
      ['bc1pw5dgrnzv', /1-byte witness program \(2-40 allowed\)/],
      ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v8n0nx0muaewav253zgeav', /41-byte witness program \(2-40 allowed\)/],
      ['BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P', /16-byte version 0 program \(20 or 32 per BIP-141\)/],
      ['a1lqfn3a', /empty data part/],
    ];
    for (const [address, re] of lax) {
      expect(() => btcAddress.fromBech32(address), `bitcoinjs-lib decodes ${address}`).to.not.throw();
      const r = mainnet.validate(address);
      expect(r.valid, address).to.equal(false);
      if (!r.valid) expect(r.reason, address).to.match(re);
    }
  });
});

// Test vectors from BIP-173 (https://github.com/bitcoin/bips/blob/master/bip-0173.mediawiki#test-vectors)
// and BIP-350 (https://github.com/bitcoin/bips/blob/master/bip-0350.mediawiki#test-vectors), every one of
// them, exercised through validate(). Encoding, checksums and padding are bitcoinjs-lib's; version and
// length rules, hrp and spendability are the adapter's.
describe('bitcoin address codec: BIP-173 and BIP-350 vectors', () => {
  const mainnet = plugin.create(BTC_MAINNET).address;
  const testnet = plugin.create(BTC_TESTNET).address;
  const codecFor = (address: string) => (/^tb1/i.test(address) ? testnet : mainnet);

  const refusal = (codec: typeof mainnet, address: string): string => {
    const r = codec.validate(address);
    expect(r.valid, JSON.stringify(address)).to.equal(false);
    return r.valid ? '' : r.reason;
  };

  // Reasons validate() can give only once a bech32 or bech32m checksum has matched: what the string carries is refused.
  const AFTER_CHECKSUM = /^bech32 address (has an empty data part|has witness version \d+ \(0-16 allowed\)|has non-zero padding|has more than 4 bits of padding|has a \d+-byte (version 0 |witness )program|is witness version \d+ with a bech32m? checksum)|^address (has witness version|is for |has human-readable part )/;

  // [string, why validate() refuses it]: none is an address (hrp "a", "abcdef", "?", …), but each checksum matches.
  const VALID_BECH32: Array<[string, RegExp]> = [
    ['A12UEL5L', /empty data part/],
    ['a12uel5l', /empty data part/],
    ['an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs', /empty data part/],
    ['abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw', /non-zero padding/],
    ['11qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqc8247j', /more than 4 bits of padding/],
    ['split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w', /witness version 24 \(0-16 allowed\)/],
    ['?1ezyfcl', /empty data part/],
  ];
  const VALID_BECH32M: Array<[string, RegExp]> = [
    ['A1LQFN3A', /empty data part/],
    ['a1lqfn3a', /empty data part/],
    ['an83characterlonghumanreadablepartthatcontainsthetheexcludedcharactersbioandnumber11sg7hg6', /empty data part/],
    ['abcdef1l7aum6echk45nj3s0wdvt2fg8x9yrzpqzd3ryx', /witness version 31 \(0-16 allowed\)/],
    ['11llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllludsr8', /witness version 31 \(0-16 allowed\)/],
    ['split1checkupstagehandshakeupstreamerranterredcaperredlc445v', /witness version 24 \(0-16 allowed\)/],
    ['?1v759aa', /empty data part/],
  ];
  // [string, BIP's reason]
  const INVALID_BECH32: Array<[string, string]> = [
    ['\x201nwldj5', 'HRP character out of range'],
    ['\x7f1axkwrx', 'HRP character out of range'],
    ['\x801eym55h', 'HRP character out of range'],
    ['an84characterslonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1569pvx', 'overall max length exceeded'],
    ['pzry9x0s0muk', 'No separator character'],
    ['1pzry9x0s0muk', 'Empty HRP'],
    ['x1b4n0q5v', 'Invalid data character'],
    ['li1dgmt3', 'Too short checksum'],
    ['de1lg7wt\xff', 'Invalid character in checksum'],
    ['A1G7SGD8', 'checksum calculated with uppercase form of HRP'],
    ['10a06t8', 'empty HRP'],
    ['1qzzfhee', 'empty HRP'],
  ];
  const INVALID_BECH32M: Array<[string, string]> = [
    ['\x201xj0phk', 'HRP character out of range'],
    ['\x7f1g6xzxy', 'HRP character out of range'],
    ['\x801vctc34', 'HRP character out of range'],
    ['an84characterslonghumanreadablepartthatcontainsthetheexcludedcharactersbioandnumber11d6pts4', 'overall max length exceeded'],
    ['qyrz8wqd2c9m', 'No separator character'],
    ['1qyrz8wqd2c9m', 'Empty HRP'],
    ['y1b0jsk6g', 'Invalid data character'],
    ['lt1igcx5c0', 'Invalid data character'],
    ['in1muywd', 'Too short checksum'],
    ['mm1crxm3i', 'Invalid character in checksum'],
    ['au1s5cgom', 'Invalid character in checksum'],
    ['M1VUXWEZ', 'checksum calculated with uppercase form of HRP'],
    ['16plkw9', 'empty HRP'],
    ['1p2gdwpf', 'empty HRP'],
  ];

  // BIP-350's valid segwit addresses with their scriptPubKey (BIP-173's list, v1+ re-encoded as bech32m), and
  // what validate() answers on the address's own network: v0 and 32-byte v1 are paid to, the rest would burn coins.
  const VALID_SEGWIT: Array<[string, string, true | RegExp]> = [
    ['BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4', '0014751e76e8199196d454941c45d1b3a323f1433bd6', true],
    ['tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7', '00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262', true],
    ['bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y', '5128751e76e8199196d454941c45d1b3a323f1433bd6751e76e8199196d454941c45d1b3a323f1433bd6', /witness version 1 and a 40-byte program: not an output type we pay to/],
    ['BC1SW50QGDZ25J', '6002751e', /witness version 16 and a 2-byte program: not an output type we pay to/],
    ['bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs', '5210751e76e8199196d454941c45d1b3a323', /witness version 2 and a 16-byte program: not an output type we pay to/],
    ['tb1qqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesrxh6hy', '0020000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433', true],
    ['tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c', '5120000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433', true],
    ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0', '512079be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798', true],
  ];
  // [address, source and BIP's reason, validate()'s reason]
  const INVALID_SEGWIT: Array<[string, string, RegExp]> = [
    // BIP-350
    ['tc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq5zuyut', 'BIP-350: Invalid human-readable part', /human-readable part "tc"/],
    ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd', 'BIP-350: Invalid checksum (Bech32 instead of Bech32m)', /witness version 1 with a bech32 checksum/],
    ['tb1z0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqglt7rf', 'BIP-350: Invalid checksum (Bech32 instead of Bech32m)', /witness version 2 with a bech32 checksum/],
    ['BC1S0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ54WELL', 'BIP-350: Invalid checksum (Bech32 instead of Bech32m)', /witness version 16 with a bech32 checksum/],
    ['bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh', 'BIP-350: Invalid checksum (Bech32m instead of Bech32)', /witness version 0 with a bech32m checksum/],
    ['tb1q0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq24jc47', 'BIP-350: Invalid checksum (Bech32m instead of Bech32)', /witness version 0 with a bech32m checksum/],
    ['bc1p38j9r5y49hruaue7wxjce0updqjuyyx0kh56v8s25huc6995vvpql3jow4', 'BIP-350: Invalid character in checksum', /contains "o", not a bech32 data character/],
    ['BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R', 'BIP-350: Invalid witness version', /witness version 17 \(0-16 allowed\)/],
    ['bc1pw5dgrnzv', 'BIP-350: Invalid program length (1 byte)', /1-byte witness program/],
    ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v8n0nx0muaewav253zgeav', 'BIP-350: Invalid program length (41 bytes)', /41-byte witness program/],
    ['BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P', 'BIP-173, BIP-350: Invalid program length for witness version 0 (per BIP141)', /16-byte version 0 program/],
    ['tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq47Zagq', 'BIP-350: Mixed case', /mixes upper and lower case/],
    ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf', 'BIP-350: zero padding of more than 4 bits', /more than 4 bits of padding/],
    ['tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vpggkg4j', 'BIP-350: Non-zero padding in 8-to-5 conversion', /non-zero padding/],
    ['bc1gmk9yu', 'BIP-173, BIP-350: Empty data section', /empty data part/],
    // BIP-173
    ['tc1qw508d6qejxtdg4y5r3zarvary0c5xw7kg3g4ty', 'BIP-173: Invalid human-readable part', /human-readable part "tc"/],
    ['bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5', 'BIP-173: Invalid checksum', /invalid bech32\/bech32m checksum/],
    ['BC13W508D6QEJXTDG4Y5R3ZARVARY0C5XW7KN40WF2', 'BIP-173: Invalid witness version', /witness version 17 \(0-16 allowed\)/],
    ['bc1rw5uspcuh', 'BIP-173: Invalid program length', /witness version 3 with a bech32 checksum/],
    ['bc10w508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kw5rljs90', 'BIP-173: Invalid program length', /witness version 15 with a bech32 checksum/],
    ['tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sL5k7', 'BIP-173: Mixed case', /mixes upper and lower case/],
    ['bc1zw508d6qejxtdg4y5r3zarvaryvqyzf3du', 'BIP-173: zero padding of more than 4 bits', /witness version 2 with a bech32 checksum/],
    ['tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3pjxtptv', 'BIP-173: Non-zero padding in 8-to-5 conversion', /non-zero padding/],
    // BIP-173's valid v1+ addresses: bech32 checksums, which BIP-350 invalidates.
    ['bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7k7grplx', 'BIP-173 valid vector, invalid since BIP-350 (v1, bech32)', /witness version 1 with a bech32 checksum/],
    ['BC1SW50QA3JX3S', 'BIP-173 valid vector, invalid since BIP-350 (v16, bech32)', /witness version 16 with a bech32 checksum/],
    ['bc1zw508d6qejxtdg4y5r3zarvaryvg6kdaj', 'BIP-173 valid vector, invalid since BIP-350 (v2, bech32)', /witness version 2 with a bech32 checksum/],
  ];

  /** The same string with its last character replaced by the next bech32 character, in the same case. */
  function substituteLast(s: string): string {
    const charset = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
    const last = s.slice(-1);
    const next = charset[(charset.indexOf(last.toLowerCase()) + 1) % charset.length]!;
    return s.slice(0, -1) + (last === last.toUpperCase() ? next.toUpperCase() : next);
  }

  it('valid Bech32 and Bech32m strings: the checksum matches, and what they carry is refused', () => {
    for (const [s, re] of [...VALID_BECH32, ...VALID_BECH32M]) {
      const reason = refusal(mainnet, s);
      expect(reason, s).to.match(AFTER_CHECKSUM).and.to.match(re);
      // One substituted character: now refused as text (BIP-173: any single substitution is detected).
      const bad = substituteLast(s);
      expect(refusal(mainnet, bad), bad).to.not.match(AFTER_CHECKSUM);
    }
  });

  it('invalid Bech32 and Bech32m strings are refused as text', () => {
    for (const [s, why] of [...INVALID_BECH32, ...INVALID_BECH32M]) {
      for (const codec of [mainnet, testnet]) expect(refusal(codec, s), `${JSON.stringify(s)}: ${why}`).to.be.a('string').and.not.match(AFTER_CHECKSUM).and.not.equal('');
    }
  });

  it('valid segwit addresses: bitcoinjs-lib decodes the scriptPubKey; validate() accepts v0 and P2TR on their network only', () => {
    for (const [address, spk, expected] of VALID_SEGWIT) {
      const { version, data } = btcAddress.fromBech32(address);
      expect(Buffer.from([version === 0 ? 0 : 0x50 + version, data.length, ...data]).toString('hex'), address).to.equal(spk);
      const own = codecFor(address);
      const other = own === mainnet ? testnet : mainnet;
      if (expected === true) {
        expect(own.validate(address), address).to.deep.equal({ valid: true, normalized: address.toLowerCase(), memo: null });
        expect(own.validate(address, ''), `${address} with a memo`).to.deep.include({ valid: false });
        expect(refusal(other, address), address).to.match(/address is for (mainnet|testnet)/);
      } else {
        expect(refusal(own, address), address).to.match(expected);
      }
    }
  });

  it('invalid segwit addresses are refused, each for its own reason', () => {
    for (const [address, why, re] of INVALID_SEGWIT) {
      const codecs = /^tc1/.test(address) ? [mainnet, testnet] : [codecFor(address)];
      for (const codec of codecs) expect(refusal(codec, address), `${address} (${why})`).to.match(re);
    }
  });
});

