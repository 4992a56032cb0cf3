import { expect } from 'chai';
import type { ClientResponse } from '../client/signing-client';

/**
 * The stable error codes (core/src/errors.ts), written out as literals on purpose:
 * merchants hard-code these numbers, so a renumbering in core must break these tests.
 */
export const Codes = {
  OK: 0,
  INVALID_JSON: 1000001001,
  BODY_TOO_LARGE: 1000001002,
  INVALID_PARAMETER: 1000001003,
  UNSUPPORTED_MEDIA_TYPE: 1000001004,
  BODY_NOT_ALLOWED: 1000001005,
  NOT_FOUND: 1000002001,
  METHOD_NOT_ALLOWED: 1000002002,
  INTERNAL_ERROR: 1000009001,
  SERVICE_UNAVAILABLE: 1000009002,
  KEYSTORE_UNAVAILABLE: 1000009003,
  AUTH_HEADER_MISSING: 1001001001,
  AUTH_TIMESTAMP_INVALID: 1001001002,
  AUTH_TIMESTAMP_EXPIRED: 1001001003,
  AUTH_NONCE_INVALID: 1001001004,
  AUTH_NONCE_REPLAYED: 1001001005,
  AUTH_API_KEY_UNKNOWN: 1001001006,
  AUTH_SIGNATURE_INVALID: 1001001007,
  AUTH_SIGNATURE_MALFORMED: 1001001008,
  AUTH_APPLICATION_DISABLED: 1001001009,
  APPLICATION_NOT_FOUND: 1002001001,
  APPLICATION_INVALID: 1002001002,
  CALLBACK_URL_INVALID: 1002001003,
  CHAIN_UNKNOWN: 1003001001,
  CHAIN_NOT_ENABLED: 1003001002,
  TOKEN_UNKNOWN: 1003001003,
  CHAIN_NOT_CONFIGURED: 1003001004,
  ADDRESS_MEMO_EXHAUSTED: 1004001001,
} as const;

function describeResponse(res: ClientResponse): string {
  return `HTTP ${res.status} ${res.text.slice(0, 500)}`;
}

/** Asserts the {code, data, msg} envelope with a JSON content type and returns it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function expectEnvelope(res: ClientResponse): { code: number; data: any; msg: string } {
  expect(res.headers['content-type'], `content-type of ${describeResponse(res)}`).to.match(/^application\/json\b/);
  expect(res.json, `JSON body of ${describeResponse(res)}`).to.be.an('object');
  expect(res.headers['x-request-id'], `X-Request-Id of ${describeResponse(res)}`).to.be.a('string').and.not.equal('');
  expect(Object.keys(res.json).sort(), describeResponse(res)).to.deep.equal(['code', 'data', 'msg']);
  expect(res.json.code, describeResponse(res)).to.be.a('number');
  expect(res.json.msg, describeResponse(res)).to.be.a('string');
  return res.json;
}

/** Asserts HTTP 200 with code 0 and an empty msg; returns data. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function expectOk(res: ClientResponse): any {
  const env = expectEnvelope(res);
  expect({ status: res.status, code: env.code, msg: env.msg }, describeResponse(res)).to.deep.equal({ status: 200, code: 0, msg: '' });
  return env.data;
}

/** Asserts an error envelope: the HTTP status, the exact code, data null and a non-empty msg. */
export function expectError(res: ClientResponse, httpStatus: number, code: number, msgIncludes?: string | RegExp): string {
  const env = expectEnvelope(res);
  expect({ status: res.status, code: env.code }, describeResponse(res)).to.deep.equal({ status: httpStatus, code });
  expect(env.data, describeResponse(res)).to.equal(null);
  expect(env.msg, describeResponse(res)).to.not.equal('');
  if (typeof msgIncludes === 'string') expect(env.msg).to.include(msgIncludes);
  else if (msgIncludes) expect(env.msg).to.match(msgIncludes);
  return env.msg;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Repeats attempt() until accept(result) holds or timeoutMs passes; returns the last
 * result and how long it took. Used only where the system is eventually consistent
 * (cross-connection change notifications), never to paper over a wrong answer.
 */
export async function pollUntil<T>(attempt: () => Promise<T>, accept: (r: T) => boolean, timeoutMs: number, intervalMs = 50): Promise<{ result: T; ok: boolean; elapsedMs: number }> {
  const start = Date.now();
  for (;;) {
    const result = await attempt();
    const elapsedMs = Date.now() - start;
    if (accept(result)) return { result, ok: true, elapsedMs };
    if (elapsedMs >= timeoutMs) return { result, ok: false, elapsedMs };
    await sleep(intervalMs);
  }
}

export function isCode(code: number): (r: ClientResponse) => boolean {
  return (r) => r.json?.code === code;
}
