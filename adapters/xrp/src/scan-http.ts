import type { ChainEndpoint } from '@wcs/core';

/**
 * Stable scanner failure codes:
 * - RPC_UNAVAILABLE: the node could not be reached or answered "busy" (network error, timeout,
 *   HTTP 429 / 5xx, rippled tooBusy / noNetwork / noCurrent / noClosed / slowDown) after the
 *   bounded retries; retrying later is expected to work.
 * - RPC_ERROR: the node answered, but with an error or a response the scanner cannot read.
 */
export type ScannerErrorCode = 'RPC_UNAVAILABLE' | 'RPC_ERROR';

/**
 * A scanner failure. The message names the endpoint by host only: never its path, query,
 * user info or headers (RPC providers put API keys there).
 */
export class ScannerError extends Error {
  readonly code: ScannerErrorCode;
  constructor(code: ScannerErrorCode, message: string) {
    super(message);
    this.name = 'ScannerError';
    this.code = code;
  }
}

/** Bounded retry: `attempts` requests in all, waiting backoffMs, 2x, 4x … between them. */
export interface RetryPolicy {
  readonly attempts: number;
  readonly backoffMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = Object.freeze({ attempts: 3, backoffMs: 250 });
export const DEFAULT_TIMEOUT_MS = 10_000;

/** A failure worth another attempt; `reason` is safe to show (no URL, no headers). */
export class TransientFailure extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'TransientFailure';
  }
}

/** The endpoint as it may appear in messages: host[:port] only. */
export function endpointLabel(url: string): string {
  try {
    return new URL(url).host || 'the configured endpoint';
  } catch {
    return 'the configured endpoint';
  }
}

/**
 * fetch refuses URLs with user info (https://user:pass@host/…), which some RPC providers hand
 * out: the credentials move into an Authorization: Basic header (unless one is configured).
 */
function withoutUserInfo(url: string, headers: Record<string, string>): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ScannerError('RPC_ERROR', 'the RPC endpoint URL is not a valid URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ScannerError('RPC_ERROR', 'the RPC endpoint URL must be http(s)');
  if (!u.username && !u.password) return url;
  const hasAuth = Object.keys(headers).some((k) => k.toLowerCase() === 'authorization');
  if (!hasAuth) {
    const user = decodeURIComponent(u.username);
    const pass = decodeURIComponent(u.password);
    headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
  }
  u.username = '';
  u.password = '';
  return u.toString();
}

function checkPolicy(policy: RetryPolicy): void {
  if (!Number.isInteger(policy.attempts) || policy.attempts < 1 || policy.attempts > 10) throw new RangeError('retry attempts must be 1..10');
  if (!Number.isFinite(policy.backoffMs) || policy.backoffMs < 0 || policy.backoffMs > 60_000) throw new RangeError('retry backoffMs must be 0..60000');
}

/**
 * One HTTP exchange with the endpoint's headers and timeout. Network errors, timeouts, 429 and
 * 5xx become TransientFailure; other statuses are returned to the caller with the body text.
 */
export async function exchange(
  endpoint: ChainEndpoint,
  url: string,
  init: { method: 'GET' | 'POST'; body?: string },
): Promise<{ status: number; text: string }> {
  const timeoutMs = endpoint.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const headers: Record<string, string> = { accept: 'application/json', ...(endpoint.headers ?? {}) };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const target = withoutUserInfo(url, headers);
  let response: Response;
  try {
    response = await fetch(target, { method: init.method, headers, body: init.body, signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
  } catch (e) {
    const err = e as { name?: string; cause?: { code?: unknown } };
    if (err.name === 'TimeoutError' || err.name === 'AbortError') throw new TransientFailure(`no answer within ${timeoutMs} ms`);
    const code = typeof err.cause?.code === 'string' && /^[A-Z_]{2,40}$/.test(err.cause.code) ? ` (${err.cause.code})` : '';
    throw new TransientFailure(`connection failed${code}`);
  }
  let text: string;
  try {
    text = await response.text();
  } catch {
    throw new TransientFailure(`HTTP ${response.status} with an unreadable body`);
  }
  if (response.status === 429 || response.status >= 500) throw new TransientFailure(`HTTP ${response.status}`);
  return { status: response.status, text };
}

/** Runs `attempt` until it succeeds, throws a non-transient error, or the policy is spent. */
export async function withRetry<T>(what: string, label: string, policy: RetryPolicy, attempt: () => Promise<T>): Promise<T> {
  checkPolicy(policy);
  let last = 'no attempt made';
  for (let i = 0; i < policy.attempts; i++) {
    if (i > 0 && policy.backoffMs > 0) await new Promise((r) => setTimeout(r, policy.backoffMs * 2 ** (i - 1)));
    try {
      return await attempt();
    } catch (e) {
      if (!(e instanceof TransientFailure)) throw e;
      last = e.reason;
    }
  }
  throw new ScannerError('RPC_UNAVAILABLE', `${what}: ${label} unavailable after ${policy.attempts} attempt(s): ${last}`);
}

/** Parses a JSON body or throws RPC_ERROR (the body itself is never echoed). */
export function parseJson(what: string, label: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ScannerError('RPC_ERROR', `${what}: ${label} answered with a body that is not JSON`);
  }
}
