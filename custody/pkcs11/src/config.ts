import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { KeyStoreError, type KeyStoreOptions } from '@wcs/core';

export const ENV = Object.freeze({
  library: 'WCS_PKCS11_LIBRARY',
  tokenLabel: 'WCS_PKCS11_TOKEN_LABEL',
  slot: 'WCS_PKCS11_SLOT',
  pin: 'WCS_PKCS11_PIN',
  pinFile: 'WCS_PKCS11_PIN_FILE',
  sessions: 'WCS_PKCS11_SESSIONS',
  signAttempts: 'WCS_PKCS11_SIGN_ATTEMPTS',
  keyDomain: 'WCS_PKCS11_KEY_DOMAIN',
});

export const DEFAULT_SESSIONS = 4;
export const MAX_SESSIONS = 64;
export const DEFAULT_SIGN_ATTEMPTS = 3;
export const DEFAULT_KEY_DOMAIN = 'wcs';

export type TokenSelector = { readonly kind: 'label'; readonly label: string } | { readonly kind: 'slot'; readonly slot: bigint };
export type PinSource = { readonly kind: 'env'; readonly variable: string } | { readonly kind: 'file'; readonly path: string };

export interface Pkcs11Config {
  /** Absolute path of the PKCS#11 module (.so). */
  readonly library: string;
  readonly token: TokenSelector;
  readonly pin: PinSource;
  readonly sessions: number;
  readonly signAttempts: number;
  /** Mixed into every key's CKA_ID and label, so deployments sharing a token never share keys. */
  readonly keyDomain: string;
}

function value(env: KeyStoreOptions['env'], name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

function configError(message: string): KeyStoreError {
  return new KeyStoreError('KEYSTORE_CONFIG', `pkcs11 keystore: ${message}`);
}

function intSetting(env: KeyStoreOptions['env'], name: string, def: number, min: number, max: number): number {
  const raw = value(env, name);
  if (raw === undefined) return def;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) throw configError(`${name} must be an integer from ${min} to ${max}`);
  return Number(raw);
}

/** Reads the configuration from options.env; no I/O, never reads the PIN itself. */
export function resolveConfig(options: KeyStoreOptions): Pkcs11Config {
  const env = options?.env ?? {};
  const library = value(env, ENV.library);
  if (library === undefined) throw configError(`${ENV.library} must name the PKCS#11 module (e.g. /usr/lib/softhsm/libsofthsm2.so)`);
  const label = value(env, ENV.tokenLabel);
  const slot = value(env, ENV.slot);
  if ((label === undefined) === (slot === undefined)) throw configError(`set exactly one of ${ENV.tokenLabel} and ${ENV.slot}`);
  let token: TokenSelector;
  if (label !== undefined) {
    if (label.length > 32) throw configError(`${ENV.tokenLabel} is at most 32 characters (a PKCS#11 token label)`);
    token = { kind: 'label', label };
  } else {
    if (!/^(0x[0-9a-fA-F]{1,16}|\d{1,20})$/.test(slot!)) throw configError(`${ENV.slot} must be a slot id, decimal or 0x-hex`);
    const id = BigInt(slot!);
    if (id >= 2n ** 64n) throw configError(`${ENV.slot} is beyond 64 bits`);
    token = { kind: 'slot', slot: id };
  }
  const pin = value(env, ENV.pin);
  const pinFile = value(env, ENV.pinFile);
  if (pin !== undefined && pinFile !== undefined) throw configError(`set either ${ENV.pin} or ${ENV.pinFile}, not both`);
  if (pin === undefined && pinFile === undefined) throw configError(`set ${ENV.pin} or ${ENV.pinFile} (a file holding the user PIN)`);
  const domain = value(env, ENV.keyDomain) ?? DEFAULT_KEY_DOMAIN;
  if (!/^[A-Za-z0-9_.-]{1,32}$/.test(domain)) throw configError(`${ENV.keyDomain} must be 1 to 32 characters of letters, digits and _ . -`);
  return {
    library: path.resolve(library),
    token,
    pin: pin !== undefined ? { kind: 'env', variable: ENV.pin } : { kind: 'file', path: path.resolve(pinFile!) },
    sessions: intSetting(env, ENV.sessions, DEFAULT_SESSIONS, 1, MAX_SESSIONS),
    signAttempts: intSetting(env, ENV.signAttempts, DEFAULT_SIGN_ATTEMPTS, 1, 10),
    keyDomain: domain,
  };
}

/** Operator-facing description of the token selector. */
export function describeToken(t: TokenSelector): string {
  return t.kind === 'label' ? `token labelled ${JSON.stringify(t.label)}` : `slot ${t.slot}`;
}

/** Operator-facing description of where the PIN comes from (never the PIN). */
export function describePinSource(p: PinSource): string {
  return p.kind === 'env' ? `environment variable ${p.variable}` : `file ${p.path}`;
}

/**
 * The user PIN, read fresh on every login (a PIN file may be fixed while the service runs).
 * A trailing CR/LF in the file is ignored. pkcs11js takes the PIN as a string, which cannot be wiped.
 */
export async function readPin(options: KeyStoreOptions, source: PinSource): Promise<string> {
  if (source.kind === 'env') return options.env[source.variable]!;
  let raw: string;
  try {
    raw = await fs.readFile(source.path, 'utf8');
  } catch (e) {
    throw new KeyStoreError('KEYSTORE_CONFIG', `pkcs11 keystore: cannot read the PIN file ${source.path} (${ENV.pinFile}): ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  const pin = raw.replace(/[\r\n]+$/, '');
  if (pin === '') throw new KeyStoreError('KEYSTORE_CONFIG', `pkcs11 keystore: the PIN file ${source.path} is empty`);
  return pin;
}
