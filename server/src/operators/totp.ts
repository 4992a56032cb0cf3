import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * TOTP second factor (RFC 6238 over RFC 4226 HOTP): HMAC-SHA1, 30-second steps, 6 digits, as
 * every authenticator app reads from an `otpauth://` URI. A code is accepted for the current
 * step and one step either side (clock drift), and never twice: the caller stores the step a
 * code was accepted for and passes it back as `lastStep`.
 */
export const TOTP = Object.freeze({ stepSeconds: 30, digits: 6, window: 1 });

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Encode(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

export function base32Decode(text: string): Uint8Array {
  const clean = text.replace(/[\s=]/g, '').toUpperCase();
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const c of clean) {
    const v = BASE32.indexOf(c);
    if (v < 0) throw new RangeError('not base32');
    value = (value << 5) | v;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Uint8Array.from(out);
}

/** A new 20-byte (160-bit, RFC 4226's recommendation) secret. */
export function newTotpSecret(): Uint8Array {
  return randomBytes(20);
}

/** HOTP value of `counter` (RFC 4226 section 5.3), `digits` long, zero-padded. */
export function hotp(secret: Uint8Array, counter: bigint, digits: number = TOTP.digits, algorithm: 'sha1' | 'sha256' | 'sha512' = 'sha1'): string {
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(counter);
  const mac = createHmac(algorithm, secret).update(msg).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const code = ((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!;
  return (code % 10 ** digits).toString().padStart(digits, '0');
}

/** The TOTP step of a time (ms since the epoch). */
export function totpStep(nowMs: number): bigint {
  return BigInt(Math.floor(nowMs / 1000 / TOTP.stepSeconds));
}

export function totpCode(secret: Uint8Array, nowMs: number): string {
  return hotp(secret, totpStep(nowMs));
}

/**
 * The step `code` is valid for (now, or one step either side), or null. A step at or before
 * `lastStep` (a code already used) is refused. Compared in constant time.
 */
export function verifyTotp(secret: Uint8Array, code: string, nowMs: number, lastStep: bigint | null): bigint | null {
  if (typeof code !== 'string' || !/^\d{6}$/.test(code)) return null;
  const now = totpStep(nowMs);
  let hit: bigint | null = null;
  for (let d = -TOTP.window; d <= TOTP.window; d++) {
    const step = now + BigInt(d);
    if (step < 0n) continue;
    // every candidate is computed and compared, whatever matched before
    if (timingSafeEqual(Buffer.from(hotp(secret, step)), Buffer.from(code)) && (lastStep === null || step > lastStep)) hit = step;
  }
  return hit;
}

/** The URI authenticator apps scan (Key Uri Format): issuer and account name, the base32 secret. */
export function otpauthUri(issuer: string, account: string, secret: Uint8Array): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  return `otpauth://totp/${label}?secret=${base32Encode(secret)}&issuer=${encodeURIComponent(issuer)}&algorithm=SHA1&digits=${TOTP.digits}&period=${TOTP.stepSeconds}`;
}
