import { expect } from 'chai';
import { plugin } from './index';
import { ETH_MAINNET } from './fixtures.test-helper';

const bytes = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'hex'));
const G = '79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798';

describe('EVM address codec', () => {
  const codec = plugin.create(ETH_MAINNET).address;

  it('accepts 33-byte compressed and 65-byte uncompressed keys, and nothing else', () => {
    expect(codec.addressFromPublicKey({ curve: 'secp256k1', bytes: bytes('02' + G) })).to.equal('0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf');
    const bad: Array<[string, Uint8Array, RegExp]> = [
      ['32 bytes (would be read as a private key by ethers)', bytes(G), /got 32 bytes/],
      ['64 bytes, no prefix', bytes(G + G), /got 64 bytes/],
      ['33 bytes with prefix 04', bytes('04' + G), /got 33 bytes/],
      ['65 bytes with prefix 02', bytes('02' + G + G), /got 65 bytes/],
      ['x = 0 not on the curve', bytes('02' + '00'.repeat(32)), /not a secp256k1 public key/],
      ['empty', new Uint8Array(0), /got 0 bytes/],
    ];
    for (const [what, b, re] of bad) expect(() => codec.addressFromPublicKey({ curve: 'secp256k1', bytes: b }), what).to.throw(Error, re);
    expect(() => codec.addressFromPublicKey({ curve: 'ed25519', bytes: new Uint8Array(32) })).to.throw(/secp256k1/);
  });

  it('says why an address is refused', () => {
    const good = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
    const cases: Array<[string, string | null, RegExp]> = [
      ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD', null, /checksum/],
      ['5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', null, /lacks the "0x" prefix/],
      ['0X5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED', null, /lower-case "0x"/],
      ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe', null, /39 hex digits/],
      ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg', null, /non-hex/],
      ['XE7338O073KYGTWWZN0F2WZ0R8PX5ZPPZS', null, /ICAP/],
      ['vitalik.eth', null, /ENS/],
      ['0x0000000000000000000000000000000000000000', null, /zero address/],
      [good, '1', /EVM chains have no memo/],
      [` ${good}`, null, /whitespace/],
    ];
    for (const [address, memo, re] of cases) {
      const r = codec.validate(address, memo);
      expect(r.valid, address).to.equal(false);
      if (!r.valid) expect(r.reason, address).to.match(re);
    }
  });

  it('treats an absent memo (undefined or null) as no memo', () => {
    for (const memo of [undefined, null]) {
      expect(codec.validate('0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', memo)).to.deep.equal({ valid: true, normalized: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', memo: null });
    }
  });

  it('returns (never throws) for non-string input', () => {
    for (const junk of [undefined, null, 42, {}]) expect(codec.validate(junk as unknown as string).valid).to.equal(false);
  });
});
