import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1';
import { ed25519 } from '@noble/curves/ed25519';
import { ed25519KeyObject, finishEcdsa, verifyEddsa } from './signature';

const N = secp256k1.CURVE.n;
const to32 = (v: bigint) => Buffer.from(v.toString(16).padStart(64, '0'), 'hex');

/**
 * The HSM output path without an HSM: signatures made by @noble/curves (RFC 6979), given to
 * finishEcdsa as raw r || s with S either as made (low) or flipped high, as SoftHSM returns about
 * half the time. Both recovery ids occur in 200 signatures (each about half the time).
 */
describe('finishEcdsa (low-S, recovery id, verification against the stored key)', () => {
  const priv = secp256k1.utils.randomPrivateKey();
  const pub = secp256k1.getPublicKey(priv, true);

  it('returns low-S and the recovery id that recovers the stored key, for S low or high and both ids', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const digest = randomBytes(32);
      const sig = secp256k1.sign(digest, priv);
      const high = i % 2 === 1;
      const raw = Buffer.concat([to32(sig.r), to32(high ? N - sig.s : sig.s)]);
      const done = finishEcdsa(raw, digest, pub);
      expect(done, `signature ${i}`).to.not.equal(null);
      expect(done!.recovery).to.equal(sig.recovery);
      seen.add(done!.recovery);
      const back = secp256k1.Signature.fromCompact(done!.bytes);
      expect(back.s <= N >> 1n).to.equal(true);
      expect(back.addRecoveryBit(done!.recovery).recoverPublicKey(digest).toRawBytes(true)).to.deep.equal(pub);
      expect(secp256k1.verify(done!.bytes, digest, pub)).to.equal(true);
    }
    expect([...seen].sort()).to.deep.equal([0, 1]);
  });

  it('returns null for a signature that does not verify: another key, another digest, a changed r or s, zero, out of range, garbage', () => {
    const other = secp256k1.getPublicKey(secp256k1.utils.randomPrivateKey(), true);
    for (let i = 0; i < 50; i++) {
      const digest = randomBytes(32);
      const sig = secp256k1.sign(digest, priv);
      const raw = Buffer.concat([to32(sig.r), to32(sig.s)]);
      expect(finishEcdsa(raw, digest, other), 'other key').to.equal(null);
      expect(finishEcdsa(raw, randomBytes(32), pub), 'other digest').to.equal(null);
      expect(finishEcdsa(Buffer.concat([to32(sig.r), to32((sig.s + 1n) % N)]), digest, pub), 's + 1').to.equal(null);
      expect(finishEcdsa(Buffer.concat([to32((sig.r + 1n) % N), to32(sig.s)]), digest, pub), 'r + 1').to.equal(null);
    }
    const digest = randomBytes(32);
    const sig = secp256k1.sign(digest, priv);
    expect(finishEcdsa(Buffer.concat([to32(0n), to32(sig.s)]), digest, pub)).to.equal(null);
    expect(finishEcdsa(Buffer.concat([to32(sig.r), to32(N)]), digest, pub)).to.equal(null);
    expect(finishEcdsa(randomBytes(63), digest, pub)).to.equal(null);
    expect(finishEcdsa(Buffer.alloc(64, 0xff), digest, pub)).to.equal(null);
  });

  it('accepts a DER signature as some modules return it', () => {
    const digest = randomBytes(32);
    const sig = secp256k1.sign(digest, priv);
    const done = finishEcdsa(sig.toDERRawBytes(), digest, pub);
    expect(done?.recovery).to.equal(sig.recovery);
  });
});

describe('verifyEddsa (OpenSSL, off the event loop)', () => {
  it('accepts a valid RFC 8032 signature and refuses a changed message, signature or key', async () => {
    const priv = ed25519.utils.randomPrivateKey();
    const key = ed25519KeyObject(ed25519.getPublicKey(priv));
    const otherKey = ed25519KeyObject(ed25519.getPublicKey(ed25519.utils.randomPrivateKey()));
    const msg = randomBytes(200);
    const sig = ed25519.sign(msg, priv);
    expect(await verifyEddsa(sig, msg, key)).to.equal(true);
    expect(await verifyEddsa(sig, Buffer.concat([msg, Buffer.from([0])]), key)).to.equal(false);
    const bad = Buffer.from(sig);
    bad[10]! ^= 1;
    expect(await verifyEddsa(bad, msg, key)).to.equal(false);
    expect(await verifyEddsa(sig, msg, otherKey)).to.equal(false);
    expect(await verifyEddsa(sig.subarray(0, 63), msg, key)).to.equal(false);
  });
});
