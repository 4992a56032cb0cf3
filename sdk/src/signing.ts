/**
 * The spec's request signature ("Authentication"):
 *
 *   stringToSign = METHOD \n path-without-query \n X-Timestamp \n X-Nonce \n sha256hex(raw body)
 *   X-Signature  = lowercase hex HMAC-SHA256(key = the API secret's UTF-8 bytes, stringToSign)
 *
 * X-Timestamp is 13-digit UNIX milliseconds; X-Nonce a fresh random value per request (32 hex
 * characters here, 16 random bytes). Callbacks from the service are signed the same way with
 * the method POST and the callback URL's path (webhooks/verifier.ts checks them).
 */
import { HmacKey, randomHex, resolveBackend, sha256HexAsync, type CryptoPreference } from './crypto.js';

/** The hex SHA-256 of the empty string: the body hash of requests without a body. */
export const EMPTY_BODY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** The request path without its query string (and without a fragment). */
export function stripQuery(target: string): string {
  const q = target.search(/[?#]/);
  return q === -1 ? target : target.slice(0, q);
}

/** The five lines joined by a line feed, the method upper-cased and the path stripped of its query. */
export function stringToSign(method: string, path: string, timestamp: string, nonce: string, bodySha256Hex: string): string {
  return `${method.toUpperCase()}\n${stripQuery(path)}\n${timestamp}\n${nonce}\n${bodySha256Hex}`;
}

/** A new X-Nonce: 32 lowercase hex characters (16 random bytes). */
export function newNonce(): string {
  return randomHex(16);
}

export interface SignInput {
  method: string;
  /** The path as sent on the request line; a query string, if any, is not signed. */
  path: string;
  /** The exact body bytes sent (a string is taken as UTF-8); none for GET. */
  body?: Uint8Array | string;
  /** Default: Date.now(). */
  timestamp?: number | string;
  /** Default: newNonce(). */
  nonce?: string;
}

export interface SignedHeaders {
  'X-Api-Key': string;
  'X-Timestamp': string;
  'X-Nonce': string;
  'X-Signature': string;
}

export interface SignResult {
  headers: SignedHeaders;
  stringToSign: string;
  timestamp: string;
  nonce: string;
  signature: string;
}

/**
 * Signs requests with one application's credentials. Reuses the HMAC key, so signing many
 * requests costs one HMAC and one SHA-256 each.
 */
export class RequestSigner {
  private readonly key: HmacKey;
  private readonly backend: 'node' | 'webcrypto';

  constructor(
    readonly apiKey: string,
    apiSecret: string,
    crypto: CryptoPreference = 'auto',
  ) {
    if (typeof apiKey !== 'string' || apiKey.length === 0) throw new TypeError('@wcs/sdk: apiKey must be a non-empty string');
    this.key = new HmacKey(apiSecret, crypto);
    this.backend = resolveBackend(crypto);
  }

  async sign(input: SignInput): Promise<SignResult> {
    const timestamp = input.timestamp === undefined ? String(Date.now()) : String(input.timestamp);
    if (!/^\d{13}$/.test(timestamp)) throw new RangeError(`@wcs/sdk: X-Timestamp must be 13-digit UNIX milliseconds, got ${timestamp}`);
    const nonce = input.nonce ?? newNonce();
    const body = input.body ?? '';
    const bodyHash = body.length === 0 ? EMPTY_BODY_SHA256 : await sha256HexAsync(body, this.backend);
    const sts = stringToSign(input.method, input.path, timestamp, nonce, bodyHash);
    const signature = await this.key.signHex(sts);
    return {
      headers: { 'X-Api-Key': this.apiKey, 'X-Timestamp': timestamp, 'X-Nonce': nonce, 'X-Signature': signature },
      stringToSign: sts,
      timestamp,
      nonce,
      signature,
    };
  }
}

/** One-off signature (see RequestSigner for many). */
export function signRequest(credentials: { apiKey: string; apiSecret: string; crypto?: CryptoPreference }, input: SignInput): Promise<SignResult> {
  return new RequestSigner(credentials.apiKey, credentials.apiSecret, credentials.crypto).sign(input);
}
