// Helpers for this package's tests (not exported from the package index).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { KeyStoreOptions } from '@wcs/core';
import { initializeSoftwareKeystore, SoftwareKeyStore, type SoftwareKeyStoreTuning } from './software-keystore';

/** Tests only: scrypt N = 2^10 instead of 2^15, so unlocking takes milliseconds. */
export const FAST: SoftwareKeyStoreTuning = Object.freeze({ insecureTestScryptN: 1024 });

export const ABANDON = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

const dirs: string[] = [];

export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'wcs-keystore-test-'));
  dirs.push(dir);
  return dir;
}

export async function removeTempDirs(): Promise<void> {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}

export function options(dataDir: string, env: Record<string, string | undefined> = {}, devMode = false): KeyStoreOptions {
  return { dataDir, env, devMode };
}

/** A new keystore file holding `mnemonic` in a temp dir, and an unlocked store over it. */
export async function storeWithMnemonic(mnemonic: string, tuning: SoftwareKeyStoreTuning = FAST): Promise<SoftwareKeyStore> {
  const opts = options(await tempDir(), { WCS_KEYSTORE_PASSPHRASE: 'correct horse battery staple' });
  await initializeSoftwareKeystore(opts, { mnemonic }, tuning);
  const store = new SoftwareKeyStore(opts, tuning);
  await store.init();
  return store;
}
