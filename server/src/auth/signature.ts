import * as crypto from 'node:crypto';

export const EMPTY_BODY_SHA256 = crypto.createHash('sha256').update('').digest('hex');

export function sha256Hex(body: Buffer | string): string {
  return crypto.createHash('sha256').update(body).digest('hex');
}

/** The spec's stringToSign: METHOD, path (no query), X-Timestamp, X-Nonce, sha256(body), joined by "\n". */
export function stringToSign(method: string, path: string, timestamp: string, nonce: string, bodySha256Hex: string): string {
  return `${method.toUpperCase()}\n${path}\n${timestamp}\n${nonce}\n${bodySha256Hex}`;
}

/** Lowercase hex HMAC-SHA256 keyed with the API secret (its UTF-8 bytes). */
export function hmacHex(secret: Buffer | string, message: string): string {
  return crypto.createHmac('sha256', secret).update(message, 'utf8').digest('hex');
}

/** Constant-time comparison of two hex signatures; the length is checked first. */
export function signaturesEqual(expectedHex: string, givenHex: string): boolean {
  const a = Buffer.from(expectedHex, 'utf8');
  const b = Buffer.from(givenHex, 'utf8');
  if (a.length !== b.length) return false;
  return crypto.timingSafeEqual(a, b);
}
