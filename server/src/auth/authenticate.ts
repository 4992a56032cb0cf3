import type { Request } from 'express';
import { WcsError } from '@wcs/core';
import type { AppCredentials, CredentialStore } from './credentials';
import type { NonceStore } from './nonces';
import { EMPTY_BODY_SHA256, hmacHex, sha256Hex, signaturesEqual, stringToSign } from './signature';

export const MAX_CLOCK_SKEW_MS = 300_000;
const TIMESTAMP_RE = /^\d{13}$/;
const NONCE_RE = /^[A-Za-z0-9._~+/=-]{8,128}$/;
const SIGNATURE_RE = /^[0-9a-f]{64}$/;
const API_KEY_RE = /^pk_(test|live)_[A-Za-z0-9]{8,56}$/;
const HEADERS = ['x-api-key', 'x-timestamp', 'x-nonce', 'x-signature'] as const;
const HEADER_DISPLAY: Record<(typeof HEADERS)[number], string> = {
  'x-api-key': 'X-Api-Key', 'x-timestamp': 'X-Timestamp', 'x-nonce': 'X-Nonce', 'x-signature': 'X-Signature',
};

function header(req: Request, name: (typeof HEADERS)[number]): string {
  const v = req.headers[name];
  if (v === undefined || v === '') {
    throw new WcsError('AUTH_HEADER_MISSING', { message: `Missing header ${HEADER_DISPLAY[name]}` });
  }
  return Array.isArray(v) ? v.join(',') : v;
}

/** The request path exactly as sent, without the query string. */
export function signedPath(req: Request): string {
  const url = req.originalUrl;
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * Verifies the spec's HMAC scheme over the exact bytes received, before any parsing.
 * Order: headers present, timestamp, nonce and signature well-formed, key known,
 * signature valid (any unexpired secret), application active, admitted (rate limit), nonce fresh.
 */
export class Authenticator {
  constructor(
    private readonly credentials: CredentialStore,
    private readonly nonces: NonceStore,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * `admit` runs once the signature is verified and the application is active, before the nonce
   * is claimed: a request it refuses (rate limit) costs no database write and keeps its nonce.
   */
  async authenticate(req: Request, rawBody: Buffer, admit?: (app: AppCredentials) => Promise<void>): Promise<AppCredentials> {
    const apiKey = header(req, 'x-api-key');
    const timestamp = header(req, 'x-timestamp');
    const nonce = header(req, 'x-nonce');
    const signature = header(req, 'x-signature');

    if (!TIMESTAMP_RE.test(timestamp)) throw new WcsError('AUTH_TIMESTAMP_INVALID');
    const ts = Number(timestamp);
    if (Math.abs(this.now() - ts) > MAX_CLOCK_SKEW_MS) throw new WcsError('AUTH_TIMESTAMP_EXPIRED');
    if (!NONCE_RE.test(nonce)) throw new WcsError('AUTH_NONCE_INVALID');
    if (!SIGNATURE_RE.test(signature)) throw new WcsError('AUTH_SIGNATURE_MALFORMED');
    if (!API_KEY_RE.test(apiKey)) throw new WcsError('AUTH_API_KEY_UNKNOWN');

    const app = await this.credentials.get(apiKey);
    if (!app) throw new WcsError('AUTH_API_KEY_UNKNOWN');

    const message = stringToSign(req.method, signedPath(req), timestamp, nonce, rawBody.length === 0 ? EMPTY_BODY_SHA256 : sha256Hex(rawBody));
    const nowMs = this.now();
    let valid = false;
    for (const s of app.secrets) {
      if (s.expiresAt !== null && s.expiresAt <= nowMs) continue;
      // evaluate every secret (no early exit) so timing does not reveal which one matched
      valid = signaturesEqual(hmacHex(s.key, message), signature) || valid;
    }
    if (!valid) throw new WcsError('AUTH_SIGNATURE_INVALID');
    if (app.status !== 'ACTIVE') throw new WcsError('AUTH_APPLICATION_DISABLED');
    if (admit) await admit(app);
    if (!(await this.nonces.claim(apiKey, nonce, ts))) throw new WcsError('AUTH_NONCE_REPLAYED');
    return app;
  }
}
