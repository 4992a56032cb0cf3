import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Operator passwords under scrypt (RFC 7914), a memory-hard KDF in Node's crypto: N = 2^15,
 * r = 8, p = 1 (32 MiB and about 0.1 s per guess here), a 16-byte random salt, a 32-byte key.
 * Stored as `scrypt$<log2 N>$<r>$<p>$<salt b64>$<key b64>`, so the cost can be raised later and
 * old hashes still verify. Verification compares in constant time.
 */
/** scrypt's cost: log2 of N, block size r, parallelism p. */
export interface PasswordCost {
  readonly log2N: number;
  readonly r: number;
  readonly p: number;
}
export const PASSWORD_COST: PasswordCost = Object.freeze({ log2N: 15, r: 8, p: 1 });
const KEY_BYTES = 32;
const SALT_BYTES = 16;
/** Passwords are at least this long (the generated ones are 24 characters). */
export const MIN_PASSWORD_LENGTH = 12;
/** And at most this long (scrypt takes any length; this bounds the work per attempt). */
export const MAX_PASSWORD_LENGTH = 256;

function scrypt(password: string, salt: Buffer, log2N: number, r: number, p: number): Promise<Buffer> {
  const N = 2 ** log2N;
  // Node refuses more than 32 MiB by default; give each call what its own parameters need
  const options: ScryptOptions = { N, r, p, maxmem: 256 * N * r + 1024 * 1024 };
  return new Promise((resolve, reject) => scryptCb(password.normalize('NFC'), salt, KEY_BYTES, options, (e, key) => (e ? reject(e) : resolve(key))));
}

/** Why a password is refused, or null. */
export function passwordProblem(password: string): string | null {
  if (typeof password !== 'string') return 'the password must be text';
  if (password.length < MIN_PASSWORD_LENGTH) return `the password must be at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH) return `the password must be at most ${MAX_PASSWORD_LENGTH} characters`;
  return null;
}

export async function hashPassword(password: string, cost: PasswordCost = PASSWORD_COST): Promise<string> {
  const problem = passwordProblem(password);
  if (problem) throw new RangeError(problem);
  const salt = randomBytes(SALT_BYTES);
  const key = await scrypt(password, salt, cost.log2N, cost.r, cost.p);
  return `scrypt$${cost.log2N}$${cost.r}$${cost.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

const STORED = /^scrypt\$(\d{1,2})\$(\d{1,2})\$(\d{1,2})\$([A-Za-z0-9+/=]{16,64})\$([A-Za-z0-9+/=]{40,64})$/;

/**
 * Whether `password` is the one behind `stored`. A stored value that is not one of ours (or
 * asks for absurd costs) verifies nothing. Time does not depend on where the keys differ.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = STORED.exec(stored);
  if (!m || typeof password !== 'string' || password.length > MAX_PASSWORD_LENGTH) return false;
  const [log2N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (log2N < 10 || log2N > 20 || r < 1 || r > 32 || p < 1 || p > 16) return false;
  const expected = Buffer.from(m[5]!, 'base64');
  if (expected.length !== KEY_BYTES) return false;
  const key = await scrypt(password, Buffer.from(m[4]!, 'base64'), log2N, r, p);
  return timingSafeEqual(key, expected);
}

/** Whether a stored hash was made with weaker parameters than today's (rehash at the next login). */
export function needsRehash(stored: string, cost: PasswordCost = PASSWORD_COST): boolean {
  const m = STORED.exec(stored);
  return !m || Number(m[1]) < cost.log2N || Number(m[2]) < cost.r || Number(m[3]) < cost.p;
}

const PASSWORD_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

/** A random password for a new or reset account: 24 characters from a 57-character alphabet without look-alikes (~140 bits). */
export function generatePassword(): string {
  // rejection sampling: bytes at or above the largest multiple of the alphabet's size are dropped, so no character is likelier than another
  const limit = Math.floor(256 / PASSWORD_ALPHABET.length) * PASSWORD_ALPHABET.length;
  let out = '';
  while (out.length < 24) {
    for (const b of randomBytes(32)) {
      if (b < limit && out.length < 24) out += PASSWORD_ALPHABET[b % PASSWORD_ALPHABET.length];
    }
  }
  return out;
}
