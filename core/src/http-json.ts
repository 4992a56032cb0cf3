import type { ChainEndpoint } from './scanning';
import { WcsError } from './errors';

/**
 * JSON over HTTP for the adapters' node endpoints (JSON-RPC POSTs and REST GETs): one URL with
 * its headers and timeout, bounded retries of transient failures, and errors that never carry the
 * endpoint's credentials. What an answer means (a node's error codes, its busy signals) is the
 * adapter's to say, through the `read` function of each request (readJson covers most).
 */

/**
 * Why a request failed.
 * - UNAVAILABLE: no usable answer within the attempts (network errors, timeouts, transient
 *   statuses or answers); asking again later is expected to work.
 * - REFUSED: the server answered with a non-2xx status that is not transient.
 * - BAD_ANSWER: the server answered 2xx with something unusable (not JSON, or judged wrong).
 */
export type HttpJsonFailure = 'UNAVAILABLE' | 'REFUSED' | 'BAD_ANSWER';

/**
 * A failed JSON-over-HTTP request. The message and `reason` name what went wrong, never the
 * endpoint URL, its user info, path, query or headers; adapters add their own prefix and label.
 */
export class HttpJsonError extends WcsError {
  readonly failure: HttpJsonFailure;
  /** The (last) problem, safe to show: "HTTP 503", "no answer within 100 ms", a scrubbed server message. */
  readonly reason: string;
  /** HTTP status of the (last) answer; null when there was none (network error, timeout). */
  readonly responseStatus: number | null;
  /** A node error code the reader reported with the (last) failure. */
  readonly rpcCode: number | null;
  /** Requests made. */
  readonly attempts: number;

  constructor(failure: HttpJsonFailure, reason: string, info: { responseStatus?: number | null; rpcCode?: number | null; attempts?: number; cause?: unknown } = {}) {
    const attempts = info.attempts ?? 0;
    super(failure === 'UNAVAILABLE' ? 'SERVICE_UNAVAILABLE' : 'INTERNAL_ERROR', {
      message: failure === 'UNAVAILABLE' ? `no usable answer after ${attempts} attempt(s) (last: ${reason})` : reason,
      cause: info.cause,
    });
    this.name = 'HttpJsonError';
    this.failure = failure;
    this.reason = reason;
    this.responseStatus = info.responseStatus ?? null;
    this.rpcCode = info.rpcCode ?? null;
    this.attempts = attempts;
  }
}

export function isHttpJsonError(e: unknown): e is HttpJsonError {
  return e instanceof HttpJsonError;
}

/** One HTTP answer as the reader sees it. */
export interface HttpJsonAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body parsed with the client's `parse`; undefined when it is not JSON. */
  readonly json: unknown;
}

/** What an answer means: use it, ask again (transient), or give up. Messages are scrubbed before use. */
export type Verdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly retry: boolean; readonly message: string; readonly rpcCode?: number };

const USABLE: Verdict = Object.freeze({ ok: true });

export interface HttpJsonRequest {
  /** Default: POST with a body, GET without. */
  readonly method?: 'GET' | 'POST';
  /** Appended to the endpoint URL's path ("/v1/chain/get_info"); the endpoint's query string is kept. */
  readonly path?: string;
  /** Added to the query string. */
  readonly query?: Readonly<Record<string, string>>;
  /** The JSON text to send. */
  readonly body?: string;
}

export interface HttpJsonOptions {
  /** Requests per call before giving up on a transient failure, 1 to 10 (default 3). */
  readonly attempts?: number;
  /** Delay before the first retry, doubled for each further one (default 250 ms). */
  readonly retryDelayMs?: number;
  /** Longest delay between attempts, Retry-After included (default 5 s). */
  readonly maxRetryDelayMs?: number;
  /** Wait as a retried answer's Retry-After header (seconds) says, up to maxRetryDelayMs (default false). */
  readonly honourRetryAfter?: boolean;
  /** Per-request timeout when the endpoint gives none (default 15 s). */
  readonly defaultTimeoutMs?: number;
  /** Body parser (default JSON.parse); a body it throws on has json undefined. */
  readonly parse?: (text: string) => unknown;
  /** How a network failure reads in messages (default "network error (ECONNREFUSED)"); timeouts are always "no answer within N ms". */
  readonly describeNetworkError?: (e: unknown) => string;
  /** Redirects: followed (default) or an error (a network failure). */
  readonly redirect?: 'follow' | 'error';
  /** fetch implementation (default: the global fetch). */
  readonly fetch?: typeof fetch;
}

/** HTTP 408, 429 and 5xx: the server may answer on another attempt. */
export function isTransientStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

export interface JsonReadRules {
  /** Statuses worth another attempt (default isTransientStatus). */
  readonly transientStatus?: (status: number) => boolean;
  /** The message of a non-2xx answer that is not transient (default "HTTP <status>"). */
  readonly refusal?: (answer: HttpJsonAnswer) => string;
}

/**
 * The usual reading: transient statuses are retried, other non-2xx answers refused, a 2xx body
 * that is not JSON is a bad answer, and a JSON body is what `judge` says it is (default: usable).
 */
export function readJson(judge: (json: unknown) => Verdict = () => USABLE, rules: JsonReadRules = {}): (answer: HttpJsonAnswer) => Verdict {
  const transient = rules.transientStatus ?? isTransientStatus;
  return (answer) => {
    if (transient(answer.status)) return { ok: false, retry: true, message: `HTTP ${answer.status}` };
    if (answer.status < 200 || answer.status >= 300) {
      return { ok: false, retry: false, message: rules.refusal ? rules.refusal(answer) : `HTTP ${answer.status}` };
    }
    if (answer.json === undefined) return { ok: false, retry: false, message: 'the answer is not JSON' };
    return judge(answer.json);
  };
}

/**
 * A refusal worded "HTTP 400: <the server's own message>" (nodeos error.what, JSON-RPC
 * error.message or a REST message, at most 200 characters), or "HTTP 400" when it has none.
 */
export function refusalWithMessage(answer: HttpJsonAnswer): string {
  const j = answer.json as { message?: unknown; error?: { what?: unknown; message?: unknown } } | null | undefined;
  const m = typeof j?.error?.what === 'string' ? j.error.what : typeof j?.error?.message === 'string' ? j.error.message : typeof j?.message === 'string' ? j.message : null;
  return m === null ? `HTTP ${answer.status}` : `HTTP ${answer.status}: ${m.replace(/[\u0000-\u001f]/g, ' ').slice(0, 200)}`;
}

/** The error code of a fetch failure (ECONNREFUSED, UND_ERR_SOCKET, ...), if it has a plain one. */
export function networkErrorCode(e: unknown): string | undefined {
  const err = e as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = err?.cause?.code ?? err?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{2,40}$/.test(code) ? code : undefined;
}

function isTimeout(e: unknown): boolean {
  const err = e as { name?: string; cause?: { name?: string } } | undefined;
  return err?.name === 'TimeoutError' || err?.name === 'AbortError' || err?.cause?.name === 'TimeoutError';
}

function defaultNetworkError(e: unknown): string {
  const code = networkErrorCode(e);
  return code ? `network error (${code})` : 'network error';
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

const DEFAULT_TIMEOUT_MS = 15_000;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * HTTP transport of one endpoint. User info in the URL is sent as Basic authentication (fetch
 * refuses URLs with credentials) unless the endpoint's headers carry an Authorization; anything
 * that may be a credential (user info, header values, query values, path, host name) is blanked
 * from every message.
 */
export class HttpJsonClient {
  /** scheme://host[:port]: how messages may name the endpoint. */
  readonly origin: string;
  /** host[:port]. */
  readonly host: string;
  readonly timeoutMs: number;
  private readonly url: URL;
  private readonly headers: Readonly<Record<string, string>>;
  private readonly secrets: readonly string[];
  private readonly attempts: number;
  private readonly retryDelayMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly options: HttpJsonOptions;

  /**
   * Throws TypeError for an unusable endpoint or options (nothing is sent; the message never
   * repeats the URL, which may hold an API key).
   */
  constructor(endpoint: ChainEndpoint, options: HttpJsonOptions = {}) {
    let url: URL;
    try {
      url = new URL(endpoint.url);
    } catch {
      throw new TypeError('the RPC endpoint URL is not a valid URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TypeError(`the RPC endpoint URL must be http(s), not ${url.protocol.replace(/:$/, '')}`);
    }
    const timeoutMs = endpoint.timeoutMs ?? options.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new TypeError('the RPC endpoint timeoutMs must be a positive integer');
    const attempts = options.attempts ?? 3;
    if (!Number.isInteger(attempts) || attempts < 1 || attempts > 10) throw new TypeError('attempts must be an integer from 1 to 10');
    const retryDelayMs = options.retryDelayMs ?? 250;
    const maxRetryDelayMs = options.maxRetryDelayMs ?? 5_000;
    if (!(retryDelayMs >= 0) || !(maxRetryDelayMs >= 0)) throw new TypeError('retry delays must be non-negative');

    const headers: Record<string, string> = { accept: 'application/json' };
    const user = decode(url.username);
    const pass = decode(url.password);
    if (url.username || url.password) headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`, 'utf8').toString('base64')}`;
    for (const [k, v] of Object.entries(endpoint.headers ?? {})) headers[k.toLowerCase()] = v;
    // Credentials and whole path / query strings from 3 characters on; parts of the URL from 4.
    const long = [url.username, url.password, user, pass, ...Object.values(endpoint.headers ?? {}), headers.authorization ?? '', url.pathname, url.search.slice(1)]
      .filter((s) => s.length >= 3);
    const parts = [...url.searchParams.values(), ...url.pathname.split('/').map(decode), url.hostname].filter((s) => s.length >= 4);
    // Longest first, so a secret that holds another is blanked whole.
    this.secrets = [...new Set([...long, ...parts])].sort((a, b) => b.length - a.length);
    url.username = '';
    url.password = '';

    this.url = url;
    this.headers = headers;
    this.origin = `${url.protocol}//${url.host}`;
    this.host = url.host;
    this.timeoutMs = timeoutMs;
    this.attempts = attempts;
    this.retryDelayMs = retryDelayMs;
    this.maxRetryDelayMs = maxRetryDelayMs;
    this.options = options;
  }

  /** Text from outside (a server's message) with URL user info and every secret of the endpoint blanked. */
  scrub(text: string): string {
    let out = text.replace(/\/\/[^/@\s]*@/g, '//***@');
    for (const s of this.secrets) out = out.split(s).join('***');
    return out;
  }

  /**
   * Sends the request until `read` finds an answer usable, and returns the answer's JSON.
   * Network errors, timeouts and answers read as transient are retried up to the attempt limit
   * (then UNAVAILABLE); answers read as wrong fail at once (REFUSED for a non-2xx status, else
   * BAD_ANSWER). Request failures are HttpJsonErrors; an exception of `read` passes through.
   */
  async request(req: HttpJsonRequest, read: (answer: HttpJsonAnswer) => Verdict = readJson()): Promise<unknown> {
    const url = this.target(req);
    const method = req.method ?? (req.body === undefined ? 'GET' : 'POST');
    const headers = req.body === undefined ? this.headers : { ...this.headers, 'content-type': 'application/json' };
    const fetchImpl = this.options.fetch ?? fetch;
    let last: { reason: string; status: number | null; rpcCode: number | null; cause?: unknown } = { reason: 'no attempt made', status: null, rpcCode: null };
    let retryAfterMs: number | null = null;
    for (let attempt = 1; attempt <= this.attempts; attempt++) {
      if (attempt > 1) {
        const delay = Math.min(this.maxRetryDelayMs, retryAfterMs ?? this.retryDelayMs * 2 ** (attempt - 2));
        if (delay > 0) await sleep(delay);
        retryAfterMs = null;
      }
      let answer: HttpJsonAnswer;
      try {
        const res = await fetchImpl(url, {
          method,
          headers,
          ...(req.body === undefined ? {} : { body: req.body }),
          signal: AbortSignal.timeout(this.timeoutMs),
          redirect: this.options.redirect ?? 'follow',
        });
        const text = await res.text();
        answer = { status: res.status, headers: res.headers, text, json: this.parse(text) };
      } catch (e) {
        const reason = isTimeout(e) ? `no answer within ${this.timeoutMs} ms` : (this.options.describeNetworkError ?? defaultNetworkError)(e);
        last = { reason: this.scrub(reason), status: null, rpcCode: null, cause: e };
        continue;
      }
      const verdict = read(answer);
      if (verdict.ok) return answer.json;
      const info = { responseStatus: answer.status, rpcCode: verdict.rpcCode ?? null, attempts: attempt };
      const reason = this.scrub(verdict.message);
      if (!verdict.retry) throw new HttpJsonError(answer.status >= 200 && answer.status < 300 ? 'BAD_ANSWER' : 'REFUSED', reason, info);
      last = { reason, status: answer.status, rpcCode: info.rpcCode };
      const retryAfter = Number(answer.headers.get('retry-after'));
      if (this.options.honourRetryAfter && Number.isFinite(retryAfter) && retryAfter > 0) retryAfterMs = retryAfter * 1000;
    }
    throw new HttpJsonError('UNAVAILABLE', last.reason, { responseStatus: last.status, rpcCode: last.rpcCode, attempts: this.attempts, cause: last.cause });
  }

  private parse(text: string): unknown {
    try {
      return (this.options.parse ?? JSON.parse)(text);
    } catch {
      return undefined;
    }
  }

  /** The endpoint URL with `path` appended to its path and `query` added to its query string. */
  private target(req: HttpJsonRequest): URL {
    const url = new URL(this.url.href);
    if (req.path !== undefined) url.pathname = url.pathname.replace(/\/+$/, '') + req.path;
    for (const [k, v] of Object.entries(req.query ?? {})) url.searchParams.set(k, v);
    return url;
  }
}
