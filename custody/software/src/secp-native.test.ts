import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { secp256k1 } from '@noble/curves/secp256k1';
import { bytesToNumberBE } from '@noble/curves/utils';
import { nativeSecp256k1, nativeSecpError, SECP256K1_BACKEND } from './secp-native';

describe('native libsecp256k1 for CKDpub', () => {
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
});
