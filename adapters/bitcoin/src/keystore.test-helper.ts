/**
 * Test-only (loaded by *.test.ts, never by index.ts): a test-side key store following the KeyStore
 * contract for secp256k1: keys derived from the test mnemonic at the ref's path template
 * (@scure/bip32), sign(ref, digest) = r || s low-S (64 bytes) with the recovery id
 * (@noble/curves). Independent of custody/software.
 */
import { secp256k1 } from '@noble/curves/secp256k1';
import { HDKey } from '@scure/bip32';
import { PLUGIN_API_VERSION, type KeyRef, type KeySignature, type KeyStore, type PublicKey } from '@wcs/core';
import { fillPath, testSeed } from '@wcs/core/testing';

export class TestKeyStore implements KeyStore {
  readonly name = 'test-hd';
  readonly pluginApiVersion = PLUGIN_API_VERSION;
  private readonly root = HDKey.fromMasterSeed(testSeed());
  async init(): Promise<void> {}
  async destroy(): Promise<void> {}
  private key(ref: KeyRef): HDKey {
    return this.root.derive(fillPath(ref.spec.pathTemplate, ref.applicationId, ref.index));
  }
  async getPublicKey(ref: KeyRef): Promise<PublicKey> {
    return { curve: 'secp256k1', bytes: this.key(ref).publicKey! };
  }
  async sign(ref: KeyRef, payload: Uint8Array): Promise<KeySignature> {
    if (payload.length !== 32) throw new Error('secp256k1 signs 32-byte digests');
    const sig = secp256k1.sign(payload, this.key(ref).privateKey!, { lowS: true });
    return { curve: 'secp256k1', bytes: sig.toCompactRawBytes(), recovery: sig.recovery };
  }
  async status(): Promise<Record<string, unknown>> {
    return { backend: 'test-hd', unlocked: true };
  }
}

/**
 * A fresh random compressed secp256k1 public key (@noble/curves). Tests make thousands of these:
 * node:crypto's generateKeyPairSync('ec') once hung a test process for good in CI (the main
 * thread parked on an OpenSSL lock), so it is not used for them.
 */
export function randomPublicKey(): Uint8Array {
  return secp256k1.getPublicKey(secp256k1.utils.randomPrivateKey(), true);
}
