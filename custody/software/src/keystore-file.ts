import { createCipheriv, createDecipheriv, randomBytes, scrypt as scryptCb, type ScryptOptions } from 'node:crypto';
import { promises as fs, constants as fsConstants } from 'node:fs';
import * as path from 'node:path';
import { checkIndexMark, checkLineage, type KeyIndexMark } from '@wcs/core';
import { KeyStoreError } from './errors';

/** scrypt work factor for new files (2^15, r = 8, p = 1: 32 MiB, about 0.1 s). */
export const SCRYPT_N = 2 ** 15;
export const SCRYPT_R = 8;
export const SCRYPT_P = 1;
/** Upper bounds accepted when reading a file (a hostile file must not exhaust memory). */
const MAX_N = 2 ** 20;
const MAX_R = 16;
const MAX_P = 4;
/** At most 256 MiB of scrypt memory (128 * N * r * p). */
const MAX_MEM = 256 * 1024 * 1024;

/** On-disk format, version 1. Everything but `ciphertext` is public; `fingerprint` is the BIP-32 master fingerprint. */
export interface KeystoreFileV1 {
  readonly version: 1;
  readonly kdf: 'scrypt';
  readonly kdfParams: { readonly N: number; readonly r: number; readonly p: number; readonly salt: string };
  readonly cipher: 'aes-256-gcm';
  readonly iv: string;
  readonly tag: string;
  /** AES-256-GCM of the BIP-39 entropy (16-32 bytes), with the header fields as associated data. */
  readonly ciphertext: string;
  readonly fingerprint: string;
  readonly createdAt: string;
  /**
   * Optional: the key-index marks ([lineage, applicationId, namespace, next] each), public facts
   * outside the encrypted part (index-marks.ts). Absent in files written before marks existed.
   */
  readonly indexMarks?: readonly IndexMarkEntry[];
}

/** One key-index mark as the file holds it: [lineage, applicationId, namespace, next]. */
export type IndexMarkEntry = readonly [string, number, string, number];

/** The marks of one lineage in a file. */
export function lineageMarks(file: KeystoreFileV1, lineage: string): KeyIndexMark[] {
  return (file.indexMarks ?? []).filter((e) => e[0] === lineage).map(([, applicationId, namespace, next]) => ({ applicationId, namespace, next }));
}

/** Entries with one per (lineage, application, namespace), the highest, in a stable order. */
export function normalizeMarks(entries: readonly IndexMarkEntry[]): IndexMarkEntry[] {
  const all = new Map<string, IndexMarkEntry>();
  for (const e of entries) {
    const k = JSON.stringify([e[0], e[1], e[2]]);
    const had = all.get(k);
    if (!had || e[3] > had[3]) all.set(k, e);
  }
  const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return [...all.values()].sort((a, b) => cmp(a[0], b[0]) || a[1] - b[1] || cmp(a[2], b[2]));
}

/** The file's marks with `marks` of `lineage` raised into them (highest wins). */
export function withRaisedMarks(file: KeystoreFileV1, lineage: string, marks: readonly KeyIndexMark[]): IndexMarkEntry[] {
  return normalizeMarks([...(file.indexMarks ?? []), ...marks.map((m): IndexMarkEntry => [lineage, m.applicationId, m.namespace, m.next])]);
}

/** The file's text: the header as indented JSON, one mark per line. */
export function serializeKeystore(file: KeystoreFileV1): string {
  const { indexMarks, ...rest } = file;
  const head = JSON.stringify(rest, null, 2);
  if (!indexMarks || indexMarks.length === 0) return `${head}\n`;
  const lines = indexMarks.map((e) => `    ${JSON.stringify(e)}`).join(',\n');
  return `${head.slice(0, -2)},\n  "indexMarks": [\n${lines}\n  ]\n}\n`;
}

function scrypt(passphrase: Uint8Array, salt: Uint8Array, N: number, r: number, p: number): Promise<Buffer> {
  const options: ScryptOptions = { N, r, p, maxmem: 128 * N * r * p + 1024 * 1024 };
  return new Promise((resolve, reject) => scryptCb(passphrase, salt, 32, options, (err, key) => (err ? reject(err) : resolve(key))));
}

/** Associated data: binds the public header to the ciphertext, so editing the fingerprint or KDF parameters fails decryption. */
function associatedData(f: Omit<KeystoreFileV1, 'iv' | 'tag' | 'ciphertext'>): Buffer {
  return Buffer.from(
    JSON.stringify(['wcs-keystore', f.version, f.kdf, f.kdfParams.N, f.kdfParams.r, f.kdfParams.p, f.kdfParams.salt, f.cipher, f.fingerprint, f.createdAt]),
    'utf8',
  );
}

/** Encrypts BIP-39 entropy under a passphrase. `N` below 2^15 is for tests only (see SoftwareKeyStoreTuning). */
export async function encryptKeystore(
  entropy: Uint8Array,
  passphrase: Uint8Array,
  fingerprint: string,
  options: { N?: number; createdAt?: Date } = {},
): Promise<KeystoreFileV1> {
  const N = options.N ?? SCRYPT_N;
  const salt = randomBytes(32);
  const iv = randomBytes(12);
  const header = {
    version: 1 as const,
    kdf: 'scrypt' as const,
    kdfParams: { N, r: SCRYPT_R, p: SCRYPT_P, salt: salt.toString('hex') },
    cipher: 'aes-256-gcm' as const,
    fingerprint,
    createdAt: (options.createdAt ?? new Date()).toISOString(),
  };
  const key = await scrypt(passphrase, salt, N, SCRYPT_R, SCRYPT_P);
  try {
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(associatedData(header));
    const ciphertext = Buffer.concat([cipher.update(entropy), cipher.final()]);
    return {
      version: header.version,
      kdf: header.kdf,
      kdfParams: header.kdfParams,
      cipher: header.cipher,
      iv: iv.toString('hex'),
      tag: cipher.getAuthTag().toString('hex'),
      ciphertext: ciphertext.toString('hex'),
      fingerprint: header.fingerprint,
      createdAt: header.createdAt,
    };
  } finally {
    key.fill(0);
  }
}

/**
 * Decrypts the entropy (a Buffer the caller wipes). Wrong passphrase and tampering both fail
 * GCM authentication and surface as one clear KEYSTORE_DECRYPT error.
 */
export async function decryptKeystore(file: KeystoreFileV1, passphrase: Uint8Array, options: { minN?: number; where?: string } = {}): Promise<Buffer> {
  const where = options.where ? ` (${options.where})` : '';
  const { N, r, p } = file.kdfParams;
  const minN = options.minN ?? SCRYPT_N;
  if (N < minN) {
    throw new KeyStoreError('KEYSTORE_FILE_INVALID', `keystore file${where} uses scrypt N=${N}, below the minimum ${minN}`);
  }
  let key: Buffer;
  try {
    key = await scrypt(passphrase, Buffer.from(file.kdfParams.salt, 'hex'), N, r, p);
  } catch (e) {
    throw new KeyStoreError('KEYSTORE_FILE_INVALID', `keystore file${where} has unusable scrypt parameters`, { cause: e });
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(file.iv, 'hex'), { authTagLength: 16 });
    decipher.setAAD(associatedData(file));
    decipher.setAuthTag(Buffer.from(file.tag, 'hex'));
    const head = decipher.update(Buffer.from(file.ciphertext, 'hex'));
    let tail: Buffer;
    try {
      tail = decipher.final();
    } catch {
      head.fill(0);
      throw new KeyStoreError('KEYSTORE_DECRYPT', `keystore passphrase is wrong or the file is corrupt${where}`);
    }
    const entropy = Buffer.concat([head, tail]);
    head.fill(0);
    return entropy;
  } finally {
    key.fill(0);
  }
}

const HEX = /^(?:[0-9a-f]{2})+$/;

/** Parses and validates a keystore file's JSON text. */
export function parseKeystore(text: string, where: string): KeystoreFileV1 {
  const bad = (why: string): KeyStoreError => new KeyStoreError('KEYSTORE_FILE_INVALID', `${where} is not a valid keystore file: ${why}`);
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch {
    throw bad('not JSON');
  }
  const f = j as Record<string, unknown>;
  if (!f || typeof f !== 'object' || Array.isArray(f)) throw bad('not a JSON object');
  if (f.version !== 1) throw bad(`unsupported version ${JSON.stringify(f.version)}`);
  if (f.kdf !== 'scrypt') throw bad(`unsupported kdf ${JSON.stringify(f.kdf)}`);
  if (f.cipher !== 'aes-256-gcm') throw bad(`unsupported cipher ${JSON.stringify(f.cipher)}`);
  const k = f.kdfParams as Record<string, unknown> | undefined;
  if (!k || typeof k !== 'object') throw bad('kdfParams missing');
  const { N, r, p, salt } = k;
  if (typeof N !== 'number' || !Number.isInteger(N) || N < 2 || N > MAX_N || (N & (N - 1)) !== 0) throw bad('kdfParams.N must be a power of two up to 2^20');
  if (typeof r !== 'number' || !Number.isInteger(r) || r < 1 || r > MAX_R) throw bad('kdfParams.r out of range');
  if (typeof p !== 'number' || !Number.isInteger(p) || p < 1 || p > MAX_P) throw bad('kdfParams.p out of range');
  if (128 * N * r * p > MAX_MEM) throw bad('scrypt parameters need too much memory');
  if (typeof salt !== 'string' || !HEX.test(salt) || salt.length < 32) throw bad('kdfParams.salt must be at least 16 bytes of hex');
  if (typeof f.iv !== 'string' || !HEX.test(f.iv) || f.iv.length !== 24) throw bad('iv must be 12 bytes of hex');
  if (typeof f.tag !== 'string' || !HEX.test(f.tag) || f.tag.length !== 32) throw bad('tag must be 16 bytes of hex');
  if (typeof f.ciphertext !== 'string' || !HEX.test(f.ciphertext) || ![32, 40, 48, 56, 64].includes(f.ciphertext.length)) {
    throw bad('ciphertext must hold 16-32 bytes of BIP-39 entropy');
  }
  if (typeof f.fingerprint !== 'string' || !/^[0-9a-f]{8}$/.test(f.fingerprint)) throw bad('fingerprint must be 8 hex digits');
  if (typeof f.createdAt !== 'string' || Number.isNaN(Date.parse(f.createdAt))) throw bad('createdAt must be an ISO date');
  let indexMarks: IndexMarkEntry[] | undefined;
  if (f.indexMarks !== undefined) {
    if (!Array.isArray(f.indexMarks)) throw bad('indexMarks must be a list');
    const entries: IndexMarkEntry[] = [];
    for (const e of f.indexMarks as unknown[]) {
      if (!Array.isArray(e) || e.length !== 4) throw bad('each indexMarks entry is [lineage, applicationId, namespace, next]');
      try {
        const lineage = checkLineage(e[0]);
        const m = checkIndexMark({ applicationId: e[1] as number, namespace: e[2] as string, next: e[3] as number });
        entries.push([lineage, m.applicationId, m.namespace, m.next]);
      } catch (err) {
        throw bad(`indexMarks entry ${JSON.stringify(e)}: ${(err as Error).message}`);
      }
    }
    indexMarks = normalizeMarks(entries);
  }
  return {
    version: 1,
    kdf: 'scrypt',
    kdfParams: { N, r, p, salt },
    cipher: 'aes-256-gcm',
    iv: f.iv,
    tag: f.tag,
    ciphertext: f.ciphertext,
    fingerprint: f.fingerprint,
    createdAt: f.createdAt,
    ...(indexMarks ? { indexMarks } : {}),
  };
}

export async function fileExists(file: string): Promise<boolean> {
  try {
    await fs.access(file, fsConstants.F_OK);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
}

/** Reads and parses a keystore file; a missing file is KEYSTORE_NOT_INITIALIZED. */
export async function readKeystore(file: string): Promise<KeystoreFileV1> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new KeyStoreError('KEYSTORE_NOT_INITIALIZED', `keystore file ${file} does not exist: run \`wcs keystore init\` first`);
    }
    throw new KeyStoreError('KEYSTORE_FILE_INVALID', `cannot read keystore file ${file}: ${(e as Error).message}`, { cause: e });
  }
  return parseKeystore(text, `keystore file ${file}`);
}

/**
 * Writes `content` to `file` atomically, mode 0600, never replacing an existing file: the data
 * goes to a temporary file in the same directory (flag wx, fsync), which is then hard-linked to
 * the final name (link fails with EEXIST if the name exists, so the check cannot race). Where the
 * file system has no hard links, it falls back to an existence check and rename.
 */
export async function writeFileExclusive(file: string, content: string): Promise<void> {
  const dir = path.dirname(file);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const exists = (): KeyStoreError => new KeyStoreError('KEYSTORE_EXISTS', `keystore file ${file} already exists; refusing to overwrite it`);
  if (await fileExists(file)) throw exists();
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await fs.open(tmp, 'wx', 0o600);
  try {
    try {
      await handle.chmod(0o600);
      await handle.writeFile(content, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await fs.link(tmp, file);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw exists();
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS' && code !== 'EXDEV') throw e;
      if (await fileExists(file)) throw exists();
      await fs.rename(tmp, file);
    }
  } finally {
    await fs.rm(tmp, { force: true });
  }
  try {
    const d = await fs.open(dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  } catch {
    // directory fsync is best effort (not supported everywhere)
  }
}

/** fsync of a directory, so a rename in it is durable (best effort: not supported everywhere). */
async function syncDirectory(dir: string): Promise<void> {
  try {
    const d = await fs.open(dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  } catch {
    // directory fsync is not supported everywhere
  }
}

/**
 * Replaces `file` with `content` atomically, mode 0600: the data goes to a new temporary file in
 * the same directory (flag wx, fsync), which is then renamed over the file, and the directory is
 * fsync'd. A crash at any point leaves either the old file or the new one, never a mix; at worst a
 * temporary file `.<name>.<pid>.<random>.tmp` is left beside it.
 */
export async function replaceFileAtomic(file: string, content: string): Promise<void> {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let renamed = false;
  try {
    const handle = await fs.open(tmp, 'wx', 0o600);
    try {
      await handle.chmod(0o600);
      await handle.writeFile(content, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(tmp, file);
    renamed = true;
  } finally {
    if (!renamed) await fs.rm(tmp, { force: true });
  }
  await syncDirectory(dir);
}
