/**
 * One signed request over fetch, with a timeout per attempt and retries where they are safe.
 *
 * Retry policy (docs/sdk.md, "Retries"):
 *   - which answers: network errors, timeouts, HTTP 502/503/504 — only for operations that are
 *     safe to repeat (`read`: GETs and the side-effect-free address/validate; `idempotent`:
 *     writes the service makes idempotent by a key: address create and batch-create,
 *     withdraw create and batch-create (appOrderNo), chain-event subscription create
 *     (appSubscriptionNo)); HTTP 429 for every operation, because the service answers it before
 *     doing anything (the nonce is not even used), honouring Retry-After (a 503's Retry-After
 *     too, for the operations retried on it);
 *   - never: any other 4xx, business errors (HTTP 200 with a non-zero code), HTTP 500.
 *   - each attempt is signed anew: a new X-Timestamp and a new X-Nonce;
 *   - delays: exponential from baseDelayMs, capped at maxDelayMs, with jitter (half fixed, half
 *     random); a Retry-After longer than maxRetryAfterMs is not waited for (the 429 is thrown).
 */
import { WcsApiError, WcsHttpError, WcsNetworkError, WcsTimeoutError, type Envelope, type RequestInfo } from './errors.js';
import type { RequestSigner } from './signing.js';

/** How safe an operation is to send again after an unknown outcome. */
export type RetryClass = 'read' | 'idempotent' | 'unsafe';

export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 = none). */
  maxRetries?: number;
  /** First delay (default 250 ms), doubled each retry. */
  baseDelayMs?: number;
  /** Cap of one delay (default 5000 ms). */
  maxDelayMs?: number;
  /** Longest Retry-After waited for (default 60000 ms); a longer one ends the retries. */
  maxRetryAfterMs?: number;
}

export const DEFAULT_RETRY: Required<RetryOptions> = { maxRetries: 3, baseDelayMs: 250, maxDelayMs: 5000, maxRetryAfterMs: 60_000 };

export const DEFAULT_TIMEOUT_MS = 30_000;

/** Per-call options of every client method. */
export interface CallOptions {
  /** Timeout of one attempt in ms (connect, send and the whole answer); default the client's. */
  timeoutMs?: number;
  /** Retry settings for this call, or false for a single attempt. */
  retry?: RetryOptions | false;
  /** Aborts the call (and any retry wait). */
  signal?: AbortSignal;
}

/** What the transport tells an observer about each attempt (for logging and metrics). */
export interface AttemptInfo {
  operation: string;
  method: string;
  path: string;
  attempt: number;
  nonce: string | null;
  /** HTTP status, or null when none came. */
  status: number | null;
  /** The envelope code, when there was an envelope. */
  code: number | null;
  error: Error | null;
  durationMs: number;
  /** The delay before the next attempt, or null when this was the last. */
  retryInMs: number | null;
}

export interface TransportOptions {
  baseUrl: string;
  signer: RequestSigner | null;
  fetch?: typeof fetch;
  timeoutMs?: number;
  retry?: RetryOptions | false;
  userAgent?: string;
  onAttempt?: (info: AttemptInfo) => void;
  /** For tests: the random source of the jitter and the sleep. */
  random?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface Route {
  operation: string;
  method: 'GET' | 'POST';
  path: string;
  signed: boolean;
  retry: RetryClass;
  /** Whether the answer is the {code, data, msg} envelope (all but /openapi.json). */
  envelope?: boolean;
}

export interface SendInput {
  query?: object;
  body?: unknown;
}

/** The outcome of a call that came back with an envelope, before it is judged. */
export interface RawAnswer {
  status: number;
  envelope: Envelope | null;
  json: unknown;
  text: string;
  requestId: string | null;
  /** Whether an earlier attempt of this call may have reached the service with an unknown outcome. */
  uncertain: boolean;
  attempts: number;
  /** Retry-After of the answer in seconds (429; 503 for an operation retried on it), else null. */
  retryAfterSeconds: number | null;
}

const RETRY_STATUS = new Set([502, 503, 504]);

function abortError(signal: AbortSignal): Error {
  const r = signal.reason;
  return r instanceof Error ? r : new Error('aborted');
}

export function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(abortError(signal!));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Serialises a query object: undefined and null values are left out, arrays repeat the name. */
export function buildQuery(query: object | undefined): string {
  if (!query) return '';
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) for (const x of v) q.append(k, String(x));
    else q.append(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

function parseRetryAfter(value: string | null, now: number): number | null {
  if (value === null) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

function isEnvelope(x: unknown): x is Envelope {
  return typeof x === 'object' && x !== null && typeof (x as Envelope).code === 'number' && 'data' in x && typeof (x as Envelope).msg === 'string';
}

export class Transport {
  readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  private readonly retry: Required<RetryOptions> | false;
  private readonly random: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(private readonly o: TransportOptions) {
    if (typeof o.baseUrl !== 'string' || !/^https?:\/\//i.test(o.baseUrl)) throw new TypeError(`@wcs/sdk: baseUrl must be an http(s) URL, got ${String(o.baseUrl)}`);
    this.baseUrl = o.baseUrl.replace(/\/+$/, '');
    const f = o.fetch ?? (globalThis as { fetch?: typeof fetch }).fetch;
    if (!f) throw new Error('@wcs/sdk: no fetch implementation (pass options.fetch)');
    this.fetchImpl = f;
    this.timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.retry = o.retry === false ? false : { ...DEFAULT_RETRY, ...(o.retry ?? {}) };
    this.random = o.random ?? Math.random;
    this.sleep = o.sleep ?? defaultSleep;
  }

  /** The delay before retry number `retry` (1-based): exponential, capped, half of it random. */
  backoff(retry: number, r: Required<RetryOptions>): number {
    const d = Math.min(r.maxDelayMs, r.baseDelayMs * 2 ** (retry - 1));
    return Math.round(d / 2 + this.random() * (d / 2));
  }

  /**
   * Sends the request, retrying as the route's class allows, and returns the last answer that
   * was not retried. Throws WcsNetworkError / WcsTimeoutError / WcsHttpError when no envelope came.
   */
  async send(route: Route, input: SendInput, opts: CallOptions = {}): Promise<RawAnswer> {
    const retry = opts.retry === false ? false : this.retry === false && opts.retry === undefined ? false : { ...(this.retry || DEFAULT_RETRY), ...(opts.retry ?? {}) };
    const maxRetries = retry ? retry.maxRetries : 0;
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const qs = buildQuery(input.query);
    const url = this.baseUrl + route.path + qs;
    const signedPath = new URL(url).pathname;
    const bodyText = input.body === undefined ? undefined : JSON.stringify(input.body);
    const bodyBytes = bodyText === undefined ? undefined : new TextEncoder().encode(bodyText);
    const info: RequestInfo = { operation: route.operation, method: route.method, path: route.path };
    let uncertain = false;

    for (let attempt = 1; ; attempt++) {
      if (opts.signal?.aborted) throw new WcsNetworkError(`aborted (${route.method} ${route.path})`, info, attempt - 1, { cause: abortError(opts.signal) });
      const headers: Record<string, string> = { Accept: 'application/json' };
      if (this.o.userAgent) headers['User-Agent'] = this.o.userAgent;
      if (bodyBytes) headers['Content-Type'] = 'application/json';
      let nonce: string | null = null;
      if (route.signed) {
        if (!this.o.signer) throw new TypeError('@wcs/sdk: this client has no apiKey/apiSecret, so it cannot call signed operations');
        const s = await this.o.signer.sign({ method: route.method, path: signedPath, body: bodyBytes });
        Object.assign(headers, s.headers);
        nonce = s.nonce;
      }
      const started = Date.now();
      const ctrl = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        ctrl.abort(new Error('timeout'));
      }, timeoutMs);
      const onCallerAbort = () => ctrl.abort(abortError(opts.signal!));
      opts.signal?.addEventListener('abort', onCallerAbort, { once: true });

      let status: number | null = null;
      let failure: Error | null = null;
      let retryable = false;
      let retryAfter: number | null = null;
      let answer: RawAnswer | null = null;
      try {
        const res = await this.fetchImpl(url, { method: route.method, headers, body: bodyBytes, signal: ctrl.signal, redirect: 'manual' });
        status = res.status;
        const text = await res.text();
        const requestId = res.headers.get('x-request-id');
        let json: unknown;
        try {
          json = text === '' ? undefined : JSON.parse(text);
        } catch {
          json = undefined;
        }
        const envelope = isEnvelope(json) ? json : null;
        if (status === 429) {
          retryAfter = parseRetryAfter(res.headers.get('retry-after'), Date.now());
          retryable = true;
        } else if (RETRY_STATUS.has(status) && route.retry !== 'unsafe') {
          retryable = true;
          // the service's 503 (its database unreachable, a restart) says when to come back
          if (status === 503) retryAfter = parseRetryAfter(res.headers.get('retry-after'), Date.now());
        }
        if ((route.envelope ?? true) && envelope === null) {
          failure = new WcsHttpError(status, text, info, attempt, requestId);
        } else if (retryable && envelope !== null && envelope.code !== 0) {
          failure = new WcsApiError(envelope, status, info, attempt, requestId, retryAfter);
        }
        answer = { status, envelope, json, text, requestId, uncertain, attempts: attempt, retryAfterSeconds: retryAfter };
      } catch (e) {
        if (opts.signal?.aborted) {
          failure = new WcsNetworkError(`aborted (${route.method} ${route.path})`, info, attempt, { cause: e });
        } else if (timedOut) {
          failure = new WcsTimeoutError(timeoutMs, info, attempt);
          retryable = route.retry !== 'unsafe';
        } else {
          const cause = (e as { cause?: { code?: string; message?: string } })?.cause;
          const why = cause?.code ?? cause?.message ?? (e as Error)?.message ?? String(e);
          failure = new WcsNetworkError(`request failed: ${why} (${route.method} ${route.path})`, info, attempt, { cause: e });
          retryable = route.retry !== 'unsafe';
        }
      } finally {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onCallerAbort);
      }

      // A failure other than 429 may have reached the service: the outcome of this attempt is unknown.
      const unknownOutcome = failure !== null && status !== 429;
      let delay: number | null = null;
      if (retryable && retry && attempt <= maxRetries && !opts.signal?.aborted) {
        delay = this.backoff(attempt, retry);
        if ((status === 429 || status === 503) && retryAfter !== null) {
          if (retryAfter * 1000 > retry.maxRetryAfterMs) delay = null;
          else delay = Math.max(delay, retryAfter * 1000);
        }
      }
      this.o.onAttempt?.({
        operation: route.operation, method: route.method, path: route.path, attempt, nonce, status,
        code: answer?.envelope?.code ?? null, error: failure, durationMs: Date.now() - started, retryInMs: delay,
      });
      if (delay === null) {
        if (failure && !(failure instanceof WcsApiError)) throw failure;
        return answer!;
      }
      if (unknownOutcome) uncertain = true;
      try {
        await this.sleep(delay, opts.signal);
      } catch (e) {
        throw new WcsNetworkError(`aborted (${route.method} ${route.path})`, info, attempt, { cause: e });
      }
    }
  }

  /** send(), then the envelope's data, or a WcsApiError for a non-zero code. */
  async call<T>(route: Route, input: SendInput, opts?: CallOptions): Promise<T> {
    const a = await this.send(route, input, opts);
    return unwrap<T>(a, route);
  }
}

export function unwrap<T>(a: RawAnswer, route: Route): T {
  const info: RequestInfo = { operation: route.operation, method: route.method, path: route.path };
  if (route.envelope === false) {
    if (a.status !== 200) throw new WcsHttpError(a.status, a.text, info, a.attempts, a.requestId);
    return a.json as T;
  }
  const env = a.envelope!;
  if (env.code !== 0) throw new WcsApiError(env, a.status, info, a.attempts, a.requestId, a.retryAfterSeconds);
  return env.data as T;
}
