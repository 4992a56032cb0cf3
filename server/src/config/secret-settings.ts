import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConfigError } from './config';

type Env = Record<string, string | undefined>;

/**
 * The secret settings the service reads itself, each of which may instead name a file with
 * `<NAME>_FILE` (a secret manager's mount, mode 0600). The key-store backends read their own
 * (WCS_KEYSTORE_PASSPHRASE / _FILE, WCS_PKCS11_PIN / _FILE) and re-read the PIN file at every
 * login, so those are not resolved here.
 */
export const SECRET_SETTINGS = [
  'DATABASE_URL',
  'WCS_MASTER_KEY',
  'WCS_MASTER_KEY_NEXT',
  'WCS_METRICS_TOKEN',
  'WCS_METRICS_TOKEN_PREVIOUS',
  'WCS_RATE_LIMIT_REDIS_URL',
] as const;

/** Secret settings whose file may be empty: an empty file means "not set" (ending a rotation by emptying the file). */
const EMPTY_FILE_MEANS_UNSET: ReadonlySet<string> = new Set(['WCS_METRICS_TOKEN_PREVIOUS', 'WCS_MASTER_KEY_NEXT']);

/** WCS_RPC_<ENV>_<CODE>: node URLs often carry an API key, so each has a _FILE form too. */
const RPC_FILE_VAR = /^(WCS_RPC_(?:TEST|LIVE)_[A-Z][A-Z0-9_]{1,15})_FILE$/;

/** A file's text with one trailing newline (LF or CRLF) removed; nothing else is trimmed. */
export function readSecretFile(name: string, file: string): string {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`${name}_FILE: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  return stripOneNewline(text);
}

export function stripOneNewline(text: string): string {
  if (text.endsWith('\r\n')) return text.slice(0, -2);
  if (text.endsWith('\n')) return text.slice(0, -1);
  return text;
}

export interface ResolvedSecrets {
  /** The environment with every `<NAME>_FILE` of a secret setting replaced by `<NAME>` holding the file's text. */
  readonly env: Env;
  /** Absolute path of the file each setting was read from (settings given inline are absent). */
  readonly files: Readonly<Record<string, string>>;
}

const set = (v: string | undefined): v is string => v !== undefined && v !== '';

/**
 * Reads the `_FILE` form of every secret setting: the file's text (one trailing newline removed)
 * becomes the setting's value. Both forms at once is refused naming both; an unreadable file is
 * refused naming `<NAME>_FILE` and the path; an empty file is refused except for the settings
 * where empty means unset. Never echoes a secret.
 */
export function resolveSecretSettings(env: Env, cwd: string): ResolvedSecrets {
  const out: Env = { ...env };
  const files: Record<string, string> = {};
  const names = new Set<string>(SECRET_SETTINGS);
  for (const key of Object.keys(env)) {
    const m = RPC_FILE_VAR.exec(key);
    if (m) names.add(m[1]!);
  }
  for (const name of names) {
    const fileVar = `${name}_FILE`;
    const inline = env[name];
    const file = env[fileVar];
    delete out[fileVar];
    if (!set(file)) continue;
    if (set(inline)) throw new ConfigError(`${name} and ${fileVar} are both set: set only one of them`);
    const abs = path.resolve(cwd, file);
    const value = readSecretFile(name, abs);
    if (value === '' && !EMPTY_FILE_MEANS_UNSET.has(name)) throw new ConfigError(`${fileVar}: ${abs} is empty`);
    files[name] = abs;
    if (value === '') delete out[name];
    else out[name] = value;
  }
  return { env: out, files };
}
