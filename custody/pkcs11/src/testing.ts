/**
 * Test support: throwaway SoftHSM2 tokens (Debian package softhsm2). The first call creates a
 * temporary token directory and points SOFTHSM2_CONF at it for this process and its children:
 * it must run before any PKCS#11 module is initialised in the process. Fails loudly when SoftHSM2
 * is not installed; nothing is skipped.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const SOFTHSM_LIBRARY = process.env.WCS_TEST_SOFTHSM_LIBRARY ?? '/usr/lib/softhsm/libsofthsm2.so';
const UTIL = 'softhsm2-util';

let root: string | null = null;

export interface TestToken {
  readonly label: string;
  readonly pin: string;
  readonly soPin: string;
  readonly serial: string;
  /** Environment for a pkcs11 key store on this token (WCS_KEYSTORE_BACKEND, library, label, PIN, and SOFTHSM2_CONF for child processes). */
  readonly env: Record<string, string>;
}

/** The temporary SoftHSM2 directory of this process (created on first use). */
export function softHsmRoot(): string {
  if (root) return root;
  if (!fs.existsSync(SOFTHSM_LIBRARY)) {
    throw new Error(`SoftHSM2 is not installed: ${SOFTHSM_LIBRARY} is missing (apt-get install softhsm2, or set WCS_TEST_SOFTHSM_LIBRARY)`);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-softhsm-'));
  fs.mkdirSync(path.join(dir, 'tokens'), { mode: 0o700 });
  const conf = path.join(dir, 'softhsm2.conf');
  fs.writeFileSync(conf, `directories.tokendir = ${path.join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n`);
  process.env.SOFTHSM2_CONF = conf;
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  root = dir;
  return dir;
}

function util(args: string[]): string {
  softHsmRoot();
  try {
    return execFileSync(UTIL, args, { env: process.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    const err = e as { code?: string; stderr?: string; stdout?: string };
    if (err.code === 'ENOENT') throw new Error(`${UTIL} is not installed (apt-get install softhsm2)`);
    throw new Error(`${UTIL} ${args.filter((a) => !/pin/i.test(a)).join(' ')} failed: ${err.stderr || err.stdout}`);
  }
}

/** Initialises a new token with a random label (or the given one) and random PINs. */
export function createTestToken(label = `wcs-${randomBytes(4).toString('hex')}`, pin = randomBytes(8).toString('hex')): TestToken {
  const soPin = randomBytes(8).toString('hex');
  const out = util(['--init-token', '--free', '--label', label, '--pin', pin, '--so-pin', soPin]);
  const slot = /reassigned to slot (\d+)/.exec(out);
  if (!slot) throw new Error(`${UTIL} did not report the new token's slot: ${out}`);
  const show = util(['--show-slots']);
  const block = show.split(/\n(?=Slot )/).find((b) => b.includes(`Label:            ${label}`));
  const serial = block ? /Serial number:\s+([0-9a-f]+)/.exec(block)?.[1] : undefined;
  if (!serial) throw new Error(`cannot find the serial number of token ${label}`);
  return {
    label,
    pin,
    soPin,
    serial,
    env: { SOFTHSM2_CONF: process.env.SOFTHSM2_CONF!, WCS_KEYSTORE_BACKEND: 'pkcs11', WCS_PKCS11_LIBRARY: SOFTHSM_LIBRARY, WCS_PKCS11_TOKEN_LABEL: label, WCS_PKCS11_PIN: pin },
  };
}

/** The token's directory in the object store (its name ends with the serial number). */
export function tokenDirectory(token: TestToken): string {
  const tokens = path.join(softHsmRoot(), 'tokens');
  const name = fs.readdirSync(tokens).find((d) => d.replace(/-/g, '').endsWith(token.serial));
  if (!name) throw new Error(`no directory for token ${token.label} (serial ${token.serial})`);
  return path.join(tokens, name);
}

/** Takes the token away, as if it were unplugged (moves its files out of the object store). */
export function removeTestToken(token: TestToken): () => void {
  const dir = tokenDirectory(token);
  const aside = path.join(softHsmRoot(), `removed-${token.serial}`);
  fs.renameSync(dir, aside);
  return () => fs.renameSync(aside, dir);
}

/** Deletes the temporary SoftHSM2 directory (tokens included). */
export function removeSoftHsm(): void {
  if (root) fs.rmSync(root, { recursive: true, force: true });
  root = null;
}
