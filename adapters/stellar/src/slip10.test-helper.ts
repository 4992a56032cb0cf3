// Test-only: SLIP-10 ed25519 derivation written from the spec, an oracle independent of the
// key store and of the libraries under test.
import { ed25519 } from '@noble/curves/ed25519';
import { hmac } from '@noble/hashes/hmac';
import { sha512 } from '@noble/hashes/sha512';
import { mnemonicToSeedSync } from '@scure/bip39';

/** The private key at a hardened-only path: master = HMAC-SHA512("ed25519 seed", seed). */
export function slip10Ed25519(seed: Uint8Array, path: string): Uint8Array {
  let i = hmac(sha512, new TextEncoder().encode('ed25519 seed'), seed);
  let key = i.slice(0, 32);
  let chainCode = i.slice(32);
  for (const level of path.split('/').slice(1)) {
    if (!level.endsWith("'")) throw new Error(`ed25519 derives hardened levels only: ${path}`);
    const data = new Uint8Array(37); // 0x00 || key || ser32(index + 2^31)
    data.set(key, 1);
    new DataView(data.buffer).setUint32(33, (Number(level.slice(0, -1)) + 0x80000000) >>> 0);
    i = hmac(sha512, chainCode, data);
    key = i.slice(0, 32);
    chainCode = i.slice(32);
  }
  return key;
}

/** The ed25519 public key (hex) at path for a BIP-39 mnemonic without passphrase. */
export function publicKeyHexAt(mnemonic: string, path: string): string {
  return Buffer.from(ed25519.getPublicKey(slip10Ed25519(mnemonicToSeedSync(mnemonic, ''), path))).toString('hex');
}
