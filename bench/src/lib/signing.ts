/**
 * Client-side request signing, written from the spec (docs/api.md, "Authentication"):
 *
 *   stringToSign = METHOD \n path (no query) \n X-Timestamp \n X-Nonce \n sha256hex(exact body bytes)
 *   X-Signature  = lowercase hex HMAC-SHA256(key = the API secret string, message = stringToSign)
 */
import * as crypto from 'node:crypto';

export interface Credentials {
  apiKey: string;
  apiSecret: string;
}

export function sha256Hex(data: Buffer | string): string {
  return crypto.createHash('sha256').update(data).digest('hex');
}

export const EMPTY_BODY_SHA256 = sha256Hex('');

/** The spec's four headers, with a fresh timestamp (ms) and a fresh single-use nonce (16 random bytes, hex) per call. */
export function signedHeaders(creds: Credentials, method: string, path: string, bodySha256: string = EMPTY_BODY_SHA256): Record<string, string> {
  const timestamp = String(Date.now());
  const nonce = crypto.randomBytes(16).toString('hex');
  const message = `${method}\n${path}\n${timestamp}\n${nonce}\n${bodySha256}`;
  const signature = crypto.createHmac('sha256', creds.apiSecret).update(message, 'utf8').digest('hex');
  return { 'X-Api-Key': creds.apiKey, 'X-Timestamp': timestamp, 'X-Nonce': nonce, 'X-Signature': signature };
}

/**
 * A signed POST with a JSON body: the body bytes and the headers that sign exactly those
 * bytes, built together (so they can never disagree).
 */
export function signedJsonPost(creds: Credentials, path: string, json: string): { body: Buffer; headers: Record<string, string> } {
  const body = Buffer.from(json, 'utf8');
  return { body, headers: { 'Content-Type': 'application/json', ...signedHeaders(creds, 'POST', path, sha256Hex(body)) } };
}
