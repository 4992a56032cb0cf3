import type { ChainEndpoint } from '@wcs/core';

/**
 * Stable codes of scanner errors. RPC_UNAVAILABLE: the node could not be reached or did not answer
 * usefully (network error, timeout, HTTP 408/429/5xx, a transient node error) after the bounded
 * retries; the engine retries the step later. RPC_ERROR: the node answered with an error or with
 * something the scanner cannot read; retrying the same request will not help without a change.
 */
export type SolanaRpcErrorCode = 'RPC_UNAVAILABLE' | 'RPC_ERROR';

/**
 * An error of the Solana deposit scanner. The message names the RPC method and what went wrong,
 * never the endpoint URL, its query string, user info or request headers (API keys live there).
 */
export class SolanaRpcError extends Error {
  readonly code: SolanaRpcErrorCode;
  /** The RPC method (getSlot, getTransaction, …). */
  readonly method: string;
  readonly httpStatus: number | undefined;
  /** JSON-RPC error code, when the node answered with one. */
  readonly rpcCode: number | undefined;
  /** Requests made before giving up. */
  readonly attempts: number;

  constructor(code: SolanaRpcErrorCode, method: string, message: string, details: { httpStatus?: number; rpcCode?: number; attempts?: number } = {}) {
    super(`Solana RPC ${method}: ${message}`);
    this.name = 'SolanaRpcError';
    this.code = code;
    this.method = method;
    this.httpStatus = details.httpStatus;
    this.rpcCode = details.rpcCode;
    this.attempts = details.attempts ?? 1;
  }
}

export interface RpcHttpOptions {
  /** Requests per call before giving up on a transient failure (default 3). */
  readonly attempts?: number;
  /** Delay before the first retry, doubled for each further one, capped at 5 s (default 250 ms). */
  readonly retryDelayMs?: number;
  /** fetch implementation (default: the global fetch). */
  readonly fetch?: typeof fetch;
}

/** What a parsed answer means: use it, retry it (transient), or fail with RPC_ERROR. */
export type Verdict = { readonly ok: true } | { readonly ok: false; readonly retry: boolean; readonly message: string; readonly rpcCode?: number };

const DEFAULT_TIMEOUT_MS = 15_000;
const MAX_DELAY_MS = 5_000;

/**
 * Parses JSON keeping integers beyond 2^53 exact: such literals (outside strings) come back as
 * decimal strings instead of rounded numbers. Lamports, slots and sequence numbers are u64 on
 * chain; readers convert with toBigInt(), which accepts either form.
 */
export function parseJsonExact(text: string): unknown {
  let out = '';
  let last = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // a string: skip to its closing quote (escapes skip the next character)
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i += 2;
        else if (d === 0x22) { i++; break; } else i++;
      }
      continue;
    }
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const start = i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if ((d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d) i++;
        else break;
      }
      const literal = text.slice(start, i);
      if (/^-?\d{16,}$/.test(literal) && !Number.isSafeInteger(Number(literal))) {
        out += `${text.slice(last, start)}"${literal}"`;
        last = i;
      }
      continue;
    }
    i++;
  }
  return JSON.parse(last === 0 ? text : out + text.slice(last));
}

/** An integer field as bigint: a safe JSON number or a decimal string (see parseJsonExact), else null. */
export function toBigInt(v: unknown): bigint | null {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^-?\d{1,40}$/.test(v)) return BigInt(v);
  return null;
}

/** The endpoint made ready for fetch: user info moved to a Basic Authorization header. */
interface Prepared {
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** Text that may be a credential (query values, path segments, user info, header values). */
  readonly secrets: readonly string[];
}

function prepare(endpoint: ChainEndpoint): Prepared {
  let url: URL;
  try {
    url = new URL(endpoint.url);
  } catch {
    // The URL itself is not repeated: it may carry an API key.
    throw new TypeError('the RPC endpoint URL is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError('the RPC endpoint URL must be http or https');
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  const secrets = [
    ...[...url.searchParams.values()],
    ...url.pathname.split('/').map((p) => decodeURIComponent(p)),
    decodeURIComponent(url.username),
    decodeURIComponent(url.password),
    url.hostname,
    ...Object.values(endpoint.headers ?? {}),
  ].filter((v) => v.length >= 4);
  if (url.username || url.password) {
    // fetch refuses URLs with credentials; send them the way a browser would.
    const user = decodeURIComponent(url.username);
    const pass = decodeURIComponent(url.password);
    headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`, 'utf8').toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  for (const [k, v] of Object.entries(endpoint.headers ?? {})) headers[k.toLowerCase()] = v;
  const timeoutMs = endpoint.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new TypeError('the RPC endpoint timeoutMs must be a positive integer');
  return { url, headers, timeoutMs, secrets };
}

/** Replaces anything that may be a credential of the endpoint by "***" (node messages may echo it). */
function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) out = out.split(s).join('***');
  return out;
}

/** A failure reason that is safe to show: no URL, host or address, only a kind and a code. */
function describeFailure(e: unknown, timeoutMs: number): string {
  const err = e as { name?: string; code?: string; cause?: { code?: string; name?: string } } | undefined;
  if (err?.name === 'TimeoutError' || err?.name === 'AbortError' || err?.cause?.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  const code = err?.cause?.code ?? err?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{2,40}$/.test(code) ? `network error (${code})` : 'network error';
}

/** The error text of a JSON error answer (nodeos error.what, Hyperion / JSON-RPC message), at most 200 characters. */
function nodeMessage(text: string): string | null {
  try {
    const j = JSON.parse(text) as { message?: unknown; error?: { what?: unknown; message?: unknown } };
    const m = typeof j?.error?.what === 'string' ? j.error.what : typeof j?.error?.message === 'string' ? j.error.message : typeof j?.message === 'string' ? j.message : null;
    return m === null ? null : m.replace(/[\u0000-\u001f]/g, ' ').slice(0, 200);
  } catch {
    return null;
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * HTTP transport of the scanner: one URL, the endpoint's headers and timeout, bounded retries of
 * transient failures, and errors that never carry the endpoint's credentials.
 */
export class RpcHttp {
  private readonly prepared: Prepared;
  private readonly attempts: number;
  private readonly retryDelayMs: number;
  private readonly fetchImpl: typeof fetch;

  constructor(endpoint: ChainEndpoint, options: RpcHttpOptions = {}) {
    this.prepared = prepare(endpoint);
    this.attempts = options.attempts ?? 3;
    if (!Number.isInteger(this.attempts) || this.attempts < 1 || this.attempts > 10) throw new TypeError('attempts must be an integer from 1 to 10');
    this.retryDelayMs = options.retryDelayMs ?? 250;
    this.fetchImpl = options.fetch ?? fetch;
  }

  /**
   * POSTs a JSON body to the endpoint URL and returns the parsed answer once `judge` accepts it.
   * Network errors, timeouts, HTTP 408/429/5xx and answers judged transient are retried up to the
   * attempt limit (then RPC_UNAVAILABLE); other HTTP errors and answers judged wrong are RPC_ERROR.
   */
  async post(method: string, body: unknown, judge: (answer: unknown) => Verdict): Promise<unknown> {
    const payload = JSON.stringify(body);
    let last = '';
    let lastRpcCode: number | undefined;
    let lastStatus: number | undefined;
    for (let attempt = 1; attempt <= this.attempts; attempt++) {
      if (attempt > 1) await sleep(Math.min(MAX_DELAY_MS, this.retryDelayMs * 2 ** (attempt - 2)));
      let status: number;
      let text: string;
      try {
        const res = await this.fetchImpl(this.prepared.url, {
          method: 'POST',
          headers: this.prepared.headers,
          body: payload,
          signal: AbortSignal.timeout(this.prepared.timeoutMs),
        });
        status = res.status;
        text = await res.text();
      } catch (e) {
        last = describeFailure(e, this.prepared.timeoutMs);
        lastStatus = undefined;
        continue;
      }
      if (status === 408 || status === 429 || status >= 500) {
        last = `HTTP ${status}`;
        lastStatus = status;
        continue;
      }
      if (status < 200 || status >= 300) {
        const said = nodeMessage(text);
        throw new SolanaRpcError('RPC_ERROR', method, said ? `HTTP ${status}: ${scrub(said, this.prepared.secrets)}` : `HTTP ${status}`, { httpStatus: status, attempts: attempt });
      }
      let answer: unknown;
      try {
        answer = parseJsonExact(text);
      } catch {
        throw new SolanaRpcError('RPC_ERROR', method, 'the answer is not JSON', { httpStatus: status, attempts: attempt });
      }
      const verdict = judge(answer);
      if (verdict.ok) return answer;
      if (!verdict.retry) {
        throw new SolanaRpcError('RPC_ERROR', method, scrub(verdict.message, this.prepared.secrets), { httpStatus: status, attempts: attempt, ...(verdict.rpcCode === undefined ? {} : { rpcCode: verdict.rpcCode }) });
      }
      last = scrub(verdict.message, this.prepared.secrets);
      lastRpcCode = verdict.rpcCode;
      lastStatus = status;
    }
    throw new SolanaRpcError('RPC_UNAVAILABLE', method, `no usable answer after ${this.attempts} attempt(s) (last: ${last})`, {
      attempts: this.attempts,
      ...(lastStatus === undefined ? {} : { httpStatus: lastStatus }),
      ...(lastRpcCode === undefined ? {} : { rpcCode: lastRpcCode }),
    });
  }
}
