import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { sha256 } from '@noble/hashes/sha2';
import { mnemonicToEntropy, validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english';
import { KeyStoreError } from './errors';

/** Entropy sizes BIP-39 allows (12, 15, 18, 21, 24 words). */
export const ENTROPY_BYTES = [16, 20, 24, 28, 32] as const;

/** Words for an entropy length: (bits + bits/32) / 11. */
export function wordCount(entropyBytes: number): number {
  return ((entropyBytes * 8) * 33) / 32 / 11;
}

/** New random entropy for a 24-word mnemonic (256 bits). */
export function generateEntropy(): Buffer {
  return randomBytes(32);
}

/**
 * Validates an operator-provided English mnemonic (words, checksum) and returns its entropy.
 * Whitespace is normalised and case folded; the text itself is never stored.
 */
export function entropyFromMnemonic(mnemonic: string): Buffer {
  const normalized = typeof mnemonic === 'string' ? mnemonic.normalize('NFKD').trim().toLowerCase().split(/\s+/).join(' ') : '';
  if (!validateMnemonic(normalized, wordlist)) {
    throw new KeyStoreError('KEYSTORE_MNEMONIC_INVALID', 'the mnemonic is not a valid English BIP-39 mnemonic (12-24 words from the wordlist, with a correct checksum)');
  }
  return Buffer.from(mnemonicToEntropy(normalized, wordlist));
}

/**
 * The English mnemonic for entropy, as UTF-8 bytes in a Buffer the caller wipes (BIP-39:
 * checksum = first ENT/32 bits of SHA-256(entropy); 11-bit groups index the wordlist).
 * Built as bytes, never as a JS string, so it can be zeroed after use.
 */
export function mnemonicBytesFromEntropy(entropy: Uint8Array): Buffer {
  if (!(ENTROPY_BYTES as readonly number[]).includes(entropy.length)) {
    throw new KeyStoreError('KEYSTORE_FILE_INVALID', `BIP-39 entropy must be 16-32 bytes in steps of 4, not ${entropy.length}`);
  }
  const hash = sha256(entropy);
  const bits = entropy.length * 8 + entropy.length / 4;
  const bit = (i: number): number => {
    const byte = i < entropy.length * 8 ? entropy[i >> 3]! : hash[(i - entropy.length * 8) >> 3]!;
    return (byte >> (7 - (i & 7))) & 1;
  };
  const words = bits / 11;
  let length = words - 1;
  const indices: number[] = [];
  for (let w = 0; w < words; w++) {
    let idx = 0;
    for (let b = 0; b < 11; b++) idx = (idx << 1) | bit(w * 11 + b);
    indices.push(idx);
    length += wordlist[idx]!.length;
  }
  hash.fill(0);
  const out = Buffer.alloc(length);
  let pos = 0;
  indices.forEach((idx, w) => {
    if (w > 0) out[pos++] = 0x20;
    pos += out.write(wordlist[idx]!, pos, 'ascii');
  });
  indices.fill(0);
  return out;
}

/**
 * BIP-39 seed: PBKDF2-HMAC-SHA512(mnemonic, "mnemonic" + passphrase, 2048 rounds, 64 bytes).
 * The keystore always uses the empty BIP-39 passphrase; tests pass "TREZOR" for the official vectors.
 * Returns a Buffer the caller wipes; the intermediate mnemonic bytes are wiped here.
 */
export function seedFromEntropy(entropy: Uint8Array, bip39Passphrase = ''): Buffer {
  const mnemonic = mnemonicBytesFromEntropy(entropy);
  try {
    return pbkdf2Sync(mnemonic, Buffer.from(`mnemonic${bip39Passphrase.normalize('NFKD')}`, 'utf8'), 2048, 64, 'sha512');
  } finally {
    mnemonic.fill(0);
  }
}

/** Mnemonic text -> validated entropy -> seed (the path `wcs keystore init --mnemonic` takes). */
export function seedFromMnemonic(mnemonic: string, bip39Passphrase = ''): Buffer {
  const entropy = entropyFromMnemonic(mnemonic);
  try {
    return seedFromEntropy(entropy, bip39Passphrase);
  } finally {
    entropy.fill(0);
  }
}
