import { expect } from 'chai';
import { isCompressedSecp256k1Point, secp256k1Uncompressed } from './secp256k1';

// The generator G and 2G of secp256k1 (SEC 2 v2, section 2.4.1; 2G from the same curve by doubling).
const GX = '79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798';
const GY = '483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8';
const G2X = 'c6047f9441ed7d6d3045406e95c07cd85c778e4b8cef3ca7abac09b95c709ee5';
const G2Y = '1ae168fea63dc339a3c58419466ceaeef7f632653266d0e1236431a950cfe52a';
const hex = (h: string) => Uint8Array.from(Buffer.from(h, 'hex'));
const key = (bytes: Uint8Array, uncompressed?: Uint8Array) => ({ curve: 'secp256k1' as const, bytes, ...(uncompressed ? { uncompressed } : {}) });

describe('secp256k1Uncompressed', () => {
  it('decompresses G and 2G (even y: prefix 02)', () => {
    expect(Buffer.from(secp256k1Uncompressed(hex('02' + GX))).toString('hex')).to.equal('04' + GX + GY);
    expect(Buffer.from(secp256k1Uncompressed(key(hex('02' + G2X)))).toString('hex')).to.equal('04' + G2X + G2Y);
  });

  it('takes a matching uncompressed form as given and checks it', () => {
    const u = hex('04' + GX + GY);
    expect(secp256k1Uncompressed(key(hex('02' + GX), u))).to.equal(u);
    expect(Buffer.from(secp256k1Uncompressed(hex('04' + GX + GY))).toString('hex')).to.equal('04' + GX + GY);
  });

  it('refuses an uncompressed form that is another point, the other y, or off the curve', () => {
    expect(() => secp256k1Uncompressed(key(hex('02' + GX), hex('04' + G2X + G2Y)))).to.throw(TypeError, /not the same point/);
    expect(() => secp256k1Uncompressed(key(hex('03' + GX), hex('04' + GX + GY)))).to.throw(TypeError, /not the same point/);
    const offCurveY = (BigInt('0x' + GY) + 2n).toString(16).padStart(64, '0');
    expect(() => secp256k1Uncompressed(key(hex('02' + GX), hex('04' + GX + offCurveY)))).to.throw(TypeError, /not the same point/);
    expect(() => secp256k1Uncompressed(hex('04' + GX + offCurveY))).to.throw(TypeError, /not a point/);
  });

  it('refuses x without a point, bad lengths and prefixes', () => {
    expect(() => secp256k1Uncompressed(hex('02' + '00'.repeat(32)))).to.throw(TypeError, /not a point/);
    expect(() => secp256k1Uncompressed(hex(GX))).to.throw(TypeError, /got 32 bytes/);
    expect(() => secp256k1Uncompressed(hex('04' + GX))).to.throw(TypeError, /got 33 bytes/);
    expect(isCompressedSecp256k1Point(hex('03' + GX))).to.equal(true);
    expect(isCompressedSecp256k1Point(hex('02' + '00'.repeat(32)))).to.equal(false);
    expect(isCompressedSecp256k1Point(hex('04' + GX + GY))).to.equal(false);
  });
});
