import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { KeyStoreOptions } from '@wcs/core';
import { KeyStoreError } from './errors';
import { fileExists } from './keystore-file';

export const ENV = Object.freeze({
  file: 'WCS_KEYSTORE_FILE',
  passphrase: 'WCS_KEYSTORE_PASSPHRASE',
  passphraseFile: 'WCS_KEYSTORE_PASSPHRASE_FILE',
  /** `wcs keystore change-passphrase` only: the passphrase the file is re-encrypted under. */
  newPassphrase: 'WCS_KEYSTORE_NEW_PASSPHRASE',
  newPassphraseFile: 'WCS_KEYSTORE_NEW_PASSPHRASE_FILE',
});

/** Name of the generated passphrase file in dataDir (dev set-ups without a passphrase variable). */
export const DEV_PASSPHRASE_FILE = 'keystore.passphrase';
export const DEFAULT_KEYSTORE_FILE = 'keystore.json';

export type PassphraseSource =
  | { readonly kind: 'env'; readonly variable: string }
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'dev-file'; readonly path: string };

export interface SoftwareKeyStoreConfig {
  /** Absolute path of the encrypted seed file. */
  readonly file: string;
  /** Where the passphrase comes from; null when none is configured (an error unless devMode). */
  readonly passphrase: PassphraseSource | null;
  readonly devMode: boolean;
}

function envValue(env: KeyStoreOptions['env'], name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

/** Reads the configuration from options.env (no I/O, never reads the passphrase itself). */
export function resolveConfig(options: KeyStoreOptions): SoftwareKeyStoreConfig {
  if (!options || typeof options.dataDir !== 'string' || options.dataDir === '') {
    throw new KeyStoreError('KEYSTORE_CONFIG', 'software keystore: options.dataDir is required');
  }
  const env = options.env ?? {};
  const dataDir = path.resolve(options.dataDir);
  const fileVar = envValue(env, ENV.file);
  const file = fileVar !== undefined ? path.resolve(fileVar) : path.join(dataDir, DEFAULT_KEYSTORE_FILE);
  const inline = envValue(env, ENV.passphrase);
  const fromFile = envValue(env, ENV.passphraseFile);
  if (inline !== undefined && fromFile !== undefined) {
    throw new KeyStoreError('KEYSTORE_CONFIG', `set either ${ENV.passphrase} or ${ENV.passphraseFile}, not both`);
  }
  let passphrase: PassphraseSource | null = null;
  if (inline !== undefined) passphrase = { kind: 'env', variable: ENV.passphrase };
  else if (fromFile !== undefined) passphrase = { kind: 'file', path: path.resolve(fromFile) };
  else if (options.devMode) passphrase = { kind: 'dev-file', path: path.join(dataDir, DEV_PASSPHRASE_FILE) };
  return { file, passphrase, devMode: !!options.devMode };
}

/** Operator-facing description of the passphrase source (never the passphrase). */
export function describePassphraseSource(s: PassphraseSource | null): string {
  if (!s) return 'none';
  return s.kind === 'env' ? `environment variable ${s.variable}` : `${s.kind === 'dev-file' ? 'generated dev file' : 'file'} ${s.path}`;
}

async function readPassphraseFile(file: string, variable: string): Promise<Buffer> {
  let raw: Buffer;
  try {
    raw = await fs.readFile(file);
  } catch (e) {
    throw new KeyStoreError('KEYSTORE_CONFIG', `cannot read the keystore passphrase file ${file} (${variable}): ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  let end = raw.length;
  while (end > 0 && (raw[end - 1] === 0x0a || raw[end - 1] === 0x0d)) end--;
  const out = Buffer.from(raw.subarray(0, end));
  raw.fill(0);
  if (out.length === 0) throw new KeyStoreError('KEYSTORE_CONFIG', `the keystore passphrase file ${file} is empty`);
  return out;
}

/** Lower-case hex of `raw` as ASCII bytes (no intermediate string); `raw` is wiped. */
function hexBytes(raw: Buffer): Buffer {
  const digits = '0123456789abcdef';
  const out = Buffer.alloc(raw.length * 2);
  for (let i = 0; i < raw.length; i++) {
    out[2 * i] = digits.charCodeAt(raw[i]! >> 4);
    out[2 * i + 1] = digits.charCodeAt(raw[i]! & 15);
  }
  raw.fill(0);
  return out;
}

/**
 * The passphrase as a Buffer the caller wipes. devMode without a passphrase variable uses
 * <dataDir>/keystore.passphrase, creating it (32 random bytes as hex, mode 0600, flag wx) only
 * when `mayCreateDevFile` and the keystore file does not exist yet.
 */
export async function loadPassphrase(options: KeyStoreOptions, config: SoftwareKeyStoreConfig, mayCreateDevFile: boolean): Promise<Buffer> {
  const source = config.passphrase;
  if (!source) {
    throw new KeyStoreError(
      'KEYSTORE_CONFIG',
      `no keystore passphrase: set ${ENV.passphrase} (or ${ENV.passphraseFile} to a file holding it) for the software keystore`,
    );
  }
  if (source.kind === 'env') return Buffer.from(options.env[source.variable]!, 'utf8');
  if (source.kind === 'file') return readPassphraseFile(source.path, ENV.passphraseFile);
  if (await fileExists(source.path)) return readPassphraseFile(source.path, 'dev mode');
  if (!mayCreateDevFile || (await fileExists(config.file))) {
    throw new KeyStoreError(
      'KEYSTORE_CONFIG',
      `dev keystore passphrase file ${source.path} is missing but keystore file ${config.file} exists: restore it, or set ${ENV.passphrase}`,
    );
  }
  await fs.mkdir(path.dirname(source.path), { recursive: true, mode: 0o700 });
  const secret = hexBytes(randomBytes(32));
  try {
    const handle = await fs.open(source.path, 'wx', 0o600);
    try {
      await handle.writeFile(secret);
      await handle.sync();
    } finally {
      await handle.close();
    }
    return secret;
  } catch (e) {
    secret.fill(0);
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return readPassphraseFile(source.path, 'dev mode');
    throw e;
  }
}

/** Shortest new passphrase `wcs keystore change-passphrase` accepts (bytes). */
export const MIN_NEW_PASSPHRASE_BYTES = 12;

/**
 * The new passphrase of `wcs keystore change-passphrase` (a Buffer the caller wipes), from
 * WCS_KEYSTORE_NEW_PASSPHRASE or the file WCS_KEYSTORE_NEW_PASSPHRASE_FILE names (trailing CR/LF
 * ignored), and where it came from.
 */
export async function loadNewPassphrase(options: KeyStoreOptions): Promise<{ passphrase: Buffer; source: PassphraseSource }> {
  const env = options.env ?? {};
  const inline = envValue(env, ENV.newPassphrase);
  const fromFile = envValue(env, ENV.newPassphraseFile);
  if (inline !== undefined && fromFile !== undefined) {
    throw new KeyStoreError('KEYSTORE_CONFIG', `set either ${ENV.newPassphrase} or ${ENV.newPassphraseFile}, not both`);
  }
  if (inline === undefined && fromFile === undefined) {
    throw new KeyStoreError('KEYSTORE_CONFIG', `set ${ENV.newPassphraseFile} (a file holding the new passphrase) or ${ENV.newPassphrase}`);
  }
  const source: PassphraseSource = inline !== undefined ? { kind: 'env', variable: ENV.newPassphrase } : { kind: 'file', path: path.resolve(fromFile!) };
  const passphrase = inline !== undefined ? Buffer.from(inline, 'utf8') : await readPassphraseFile(path.resolve(fromFile!), ENV.newPassphraseFile);
  if (passphrase.length < MIN_NEW_PASSPHRASE_BYTES) {
    passphrase.fill(0);
    throw new KeyStoreError('KEYSTORE_CONFIG', `the new keystore passphrase is shorter than ${MIN_NEW_PASSPHRASE_BYTES} bytes`);
  }
  return { passphrase, source };
}
