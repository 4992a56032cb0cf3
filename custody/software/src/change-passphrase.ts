import { timingSafeEqual } from 'node:crypto';
import { promises as fs } from 'node:fs';
import type { KeyStoreOptions } from '@wcs/core';
import { seedFromEntropy } from './bip39';
import { describePassphraseSource, loadNewPassphrase, loadPassphrase, resolveConfig } from './config';
import { KeyStoreError } from './errors';
import { withFileLock } from './file-lock';
import { decryptKeystore, encryptKeystore, parseKeystore, replaceFileAtomic, serializeKeystore, type KeystoreFileV1 } from './keystore-file';
import { BACKEND, fingerprintOfSeed, scryptN, type SoftwareKeyStoreTuning } from './software-keystore';

function samePassphrase(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * `wcs keystore change-passphrase`: re-encrypts the key-store file's seed under the new passphrase
 * (WCS_KEYSTORE_NEW_PASSPHRASE / _FILE), with a fresh salt and IV, keeping the fingerprint, the
 * creation time and the key-index marks. Under the file's lock (so a running service's mark raise
 * neither overwrites it nor is lost): the current passphrase must open the file and the seed must
 * match its fingerprint; the new file is decrypted in memory with the new passphrase before it is
 * written; it replaces the old one atomically (temporary file, fsync, rename, directory fsync), so
 * a crash at any point leaves the old file or the new one, never a broken one. Running processes
 * keep working (they hold the seed); each needs the new passphrase before its next start.
 * Returns operator facts, never secrets.
 */
export async function changeSoftwareKeystorePassphrase(options: KeyStoreOptions, tuning: SoftwareKeyStoreTuning = {}): Promise<Record<string, unknown>> {
  const config = resolveConfig(options);
  const N = scryptN(tuning);
  if (config.passphrase?.kind === 'dev-file') {
    throw new KeyStoreError('KEYSTORE_CONFIG', 'the dev-mode keystore has a generated passphrase file; set WCS_KEYSTORE_PASSPHRASE_FILE (or WCS_KEYSTORE_PASSPHRASE) to change it');
  }
  const current = await loadPassphrase(options, config, false);
  let next: Buffer | null = null;
  try {
    const loaded = await loadNewPassphrase(options);
    next = loaded.passphrase;
    if (samePassphrase(current, next)) throw new KeyStoreError('KEYSTORE_CONFIG', 'the new keystore passphrase is the current one');
    const newSource = loaded.source;
    return await withFileLock(config.file, async () => {
      let text: string;
      try {
        text = await fs.readFile(config.file, 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
          throw new KeyStoreError('KEYSTORE_NOT_INITIALIZED', `keystore file ${config.file} does not exist: run \`wcs keystore init\` first`);
        }
        throw e;
      }
      const old = parseKeystore(text, `keystore file ${config.file}`);
      const entropy = await decryptKeystore(old, current, { minN: Math.min(N, old.kdfParams.N), where: config.file });
      try {
        const seed = seedFromEntropy(entropy);
        try {
          if (fingerprintOfSeed(seed) !== old.fingerprint) {
            throw new KeyStoreError('KEYSTORE_FILE_INVALID', `keystore file ${config.file} is corrupt: the seed does not match its fingerprint`);
          }
        } finally {
          seed.fill(0);
        }
        const sealed = await encryptKeystore(entropy, next!, old.fingerprint, { N, createdAt: new Date(old.createdAt) });
        const renewed: KeystoreFileV1 = { ...sealed, ...(old.indexMarks ? { indexMarks: old.indexMarks } : {}) };
        // the new file opens with the new passphrase and holds the same seed, before it replaces the old
        const check = await decryptKeystore(renewed, next!, { minN: N, where: 'the re-encrypted file' });
        try {
          if (!check.equals(entropy)) throw new Error('the re-encrypted key store does not hold the same seed');
        } finally {
          check.fill(0);
        }
        await replaceFileAtomic(config.file, serializeKeystore(renewed));
        const written = parseKeystore(await fs.readFile(config.file, 'utf8'), `keystore file ${config.file}`);
        if (written.ciphertext !== renewed.ciphertext || written.fingerprint !== old.fingerprint) {
          throw new KeyStoreError('KEYSTORE_FILE_INVALID', `keystore file ${config.file} does not read back as written`);
        }
        return {
          backend: BACKEND,
          file: config.file,
          fingerprint: old.fingerprint,
          createdAt: old.createdAt,
          changedAt: new Date().toISOString(),
          kdf: { name: 'scrypt', N: renewed.kdfParams.N, r: renewed.kdfParams.r, p: renewed.kdfParams.p },
          indexMarks: renewed.indexMarks?.length ?? 0,
          newPassphraseSource: describePassphraseSource(newSource),
          next: `set ${describePassphraseSource(config.passphrase)} to the new passphrase for every process before its next start`,
        };
      } finally {
        entropy.fill(0);
      }
    });
  } finally {
    current.fill(0);
    next?.fill(0);
  }
}
