import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { secp256k1 } from '@noble/curves/secp256k1';
import { bytesToNumberBE } from '@noble/curves/utils';
import { recoverSecp256k1 } from '@wcs/core';
import { nativeSecp256k1, nativeSecpError, SECP256K1_BACKEND } from './secp-native';

describe('native libsecp256k1 for CKDpub, signing and recovery', () => {
  it('loads (a broken native build must fail here, not slow the service down unseen)', () => {
    expect(nativeSecpError, 'secp256k1/bindings did not load').to.equal(null);
    expect(SECP256K1_BACKEND).to.equal('libsecp256k1 (native)');
  });

  it('point(tweak) + K equals @noble/curves for 300 random keys and tweaks, and refuses a zero result', () => {
    const lib = nativeSecp256k1!;
    for (let i = 0; i < 300; i++) {
      const k = secp256k1.utils.randomPrivateKey();
      const K = secp256k1.getPublicKey(k, true);
      const tweak = randomBytes(32);
      const t = bytesToNumberBE(tweak);
      if (t >= secp256k1.CURVE.n) continue;
      const want = secp256k1.ProjectivePoint.fromHex(K).add(secp256k1.ProjectivePoint.BASE.multiply(t)).toRawBytes(true);
      expect(Buffer.from(lib.publicKeyTweakAdd(K, tweak, true)).toString('hex')).to.equal(Buffer.from(want).toString('hex'));
    }
    // K + point(n - k) = infinity: the library throws, and HdKeys defers such an index to @scure/bip32
    const k = 7n;
    const K = secp256k1.ProjectivePoint.BASE.multiply(k).toRawBytes(true);
    const negK = Buffer.from((secp256k1.CURVE.n - k).toString(16).padStart(64, '0'), 'hex');
    expect(() => lib.publicKeyTweakAdd(K, negK, true)).to.throw();
  });

  it('signs exactly as @noble/curves (RFC 6979, low-S, same recovery id) for 300 random keys and digests; verify refuses high-S and another key', () => {
    const lib = nativeSecp256k1!;
    const n = secp256k1.CURVE.n;
    for (let i = 0; i < 300; i++) {
      const k = secp256k1.utils.randomPrivateKey();
      const digest = randomBytes(32);
      const want = secp256k1.sign(digest, k, { lowS: true });
      const got = lib.ecdsaSign(digest, k);
      expect(Buffer.from(got.signature).toString('hex'), `signature ${i}`).to.equal(Buffer.from(want.toCompactRawBytes()).toString('hex'));
      expect(got.recid, `recovery id ${i}`).to.equal(want.recovery);
      const K = secp256k1.getPublicKey(k, true);
      expect(lib.ecdsaVerify(got.signature, digest, K)).to.equal(true);
      expect(Buffer.from(recoverSecp256k1(got.signature, got.recid, digest, true)!).toString('hex')).to.equal(Buffer.from(K).toString('hex'));
      if (i < 20) {
        const high = Buffer.from(got.signature);
        high.set(Buffer.from((n - bytesToNumberBE(got.signature.subarray(32))).toString(16).padStart(64, '0'), 'hex'), 32);
        expect(lib.ecdsaVerify(high, digest, K), 'high-S').to.equal(false);
        expect(lib.ecdsaVerify(got.signature, digest, secp256k1.getPublicKey(secp256k1.utils.randomPrivateKey(), true)), 'another key').to.equal(false);
        expect(recoverSecp256k1(got.signature, got.recid ^ 1, digest, true), 'wrong recovery id').to.not.deep.equal(K);
      }
    }
    expect(recoverSecp256k1(new Uint8Array(64), 0, randomBytes(32)), 'r = s = 0').to.equal(null);
  });
});
