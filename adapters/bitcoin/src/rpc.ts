import {
  HttpJsonClient, isHttpJsonError, mapLimit, isTransientStatus, networkErrorCode, readJson, refusalWithMessage, scannerErrorCode,
  type ChainEndpoint, type HttpJsonAnswer, type Verdict,
} from '@wcs/core';

/**
 * Stable codes of bitcoin RPC failures.
 * - RPC_UNAVAILABLE: no usable answer (connection refused or reset, DNS, timeout, HTTP 5xx / 429
 *   without a JSON-RPC body, a body that is not JSON-RPC), after the bounded retries. Transient.
 * - RPC_ERROR: the node answered and refused (a JSON-RPC error object, HTTP 401/403/404, an
 *   answer of the wrong shape). Retrying the same request will not help.
 */
export type BitcoinRpcErrorCode = 'RPC_UNAVAILABLE' | 'RPC_ERROR';

/** A failed bitcoin JSON-RPC call. Messages name the method and the endpoint's origin, never its credentials, path or query. */
export class BitcoinRpcError extends Error {
  readonly code: BitcoinRpcErrorCode;
  /** The RPC method (first one of a batch). */
  readonly method: string;
  /** JSON-RPC error code from the node (e.g. -5, -8), when it sent one. */
  readonly rpcCode: number | null;
  /** HTTP status, when a response arrived. */
  readonly httpStatus: number | null;
  /** The node's own error text (JSON-RPC error.message), scrubbed of endpoint secrets, when it sent one. */
  readonly nodeMessage: string | null;

  constructor(code: BitcoinRpcErrorCode, method: string, message: string, extra: { rpcCode?: number | null; httpStatus?: number | null; nodeMessage?: string | null; cause?: unknown } = {}) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'BitcoinRpcError';
    this.code = code;
    this.method = method;
    this.rpcCode = extra.rpcCode ?? null;
    this.httpStatus = extra.httpStatus ?? null;
    this.nodeMessage = extra.nodeMessage ?? null;
  }
}

export function isBitcoinRpcError(e: unknown): e is BitcoinRpcError {
  return e instanceof BitcoinRpcError;
}

export interface RpcCall {
  readonly method: string;
  readonly params: readonly unknown[];
}

/** One call's outcome in a batch: the result, or the node's error (as a BitcoinRpcError with code RPC_ERROR). */
export type RpcOutcome<T = unknown> = { readonly ok: true; readonly result: T } | { readonly ok: false; readonly error: BitcoinRpcError };

export interface RpcClientOptions {
  /** Extra attempts after a network failure / timeout / 5xx / 429 (default 2, at most 9; 0 for non-idempotent calls). */
  readonly retries?: number;
  /** First back-off delay, doubled per attempt (default 100 ms). */
  readonly retryDelayMs?: number;
  /** Per-request timeout when the endpoint gives none (default 30 000 ms). */
  readonly timeoutMs?: number;
  /**
   * JSON-RPC batches: 'auto' (default) sends arrays and falls back to single calls for good if the
   * server answers an array with something other than an array; false never batches.
   */
  readonly batch?: 'auto' | false;
  /** Most requests in flight at once from one batch() / all() (default 4). */
  readonly concurrency?: number;
}

/**
 * A raw JSON fragment written as-is into a request body (exact decimal amounts: bcoin's RPC reads
 * amounts only as JSON numbers, and the decimal text must not pass through a float on our side).
 */
export class RawJson {
  constructor(readonly text: string) {
    if (!/^-?\d+(\.\d+)?$/.test(text)) throw new Error('RawJson only carries a plain decimal number');
  }
}

function stringifyWithRaw(value: unknown): string {
  const raws: string[] = [];
  const json = JSON.stringify(value, (_k, v: unknown) => {
    if (v instanceof RawJson) {
      raws.push(v.text);
      return `\u0000RAW${raws.length - 1}\u0000`;
    }
    return typeof v === 'bigint' ? v.toString() : v;
  });
  if (raws.length === 0) return json;
  // JSON.stringify escapes U+0000 as \u0000, so a placeholder cannot collide with real string content.
  return json.replace(/"\\u0000RAW(\d+)\\u0000"/g, (_m, i: string) => raws[Number(i)]!);
}

interface JsonRpcResponse {
  readonly id?: unknown;
  readonly result?: unknown;
  readonly error?: { readonly code?: unknown; readonly message?: unknown } | null;
}

const isResponse = (v: unknown): v is JsonRpcResponse => typeof v === 'object' && v !== null && !Array.isArray(v) && ('result' in v || 'error' in v);

/**
 * What a bitcoin node's answer means. Bitcoin Core answers the RPC errors of single calls with
 * HTTP 500 / 404 and a JSON-RPC body: the body wins over the status. Otherwise 401 / 403 (the
 * credentials) and other 4xx are refused, 408 / 429 / 5xx asked again, and so is a body that is
 * not JSON-RPC.
 */
function readNodeAnswer(answer: HttpJsonAnswer, isBatch: boolean): Verdict {
  const { status, json } = answer;
  if (isResponse(json) || (isBatch && Array.isArray(json))) return { ok: true };
  if (status === 401 || status === 403) return { ok: false, retry: false, message: `HTTP ${status}: the node refused the credentials` };
  if (isTransientStatus(status)) return { ok: false, retry: true, message: `HTTP ${status}` };
  if (status >= 400) return { ok: false, retry: false, message: `HTTP ${status}` };
  return { ok: false, retry: true, message: `HTTP ${status} with a body that is not JSON-RPC` };
}

function unreachable(e: unknown): string {
  const code = networkErrorCode(e);
  return code ? `unreachable (${code})` : 'unreachable';
}

/**
 * Bitcoin Core–style JSON-RPC 1.0 over HTTP POST (core's HttpJsonClient). The endpoint URL may
 * carry credentials (http://user:pass@host:port): they are sent as Basic auth and never appear in
 * errors; an Authorization entry in endpoint.headers takes precedence.
 */
export class BitcoinRpcClient {
  /** What messages call the endpoint: protocol, host and port only (paths and queries may hold provider keys). */
  readonly displayName: string;
  private readonly http: HttpJsonClient;
  private readonly concurrency: number;
  private batchSupported: boolean;
  private nextId = 1;

  constructor(endpoint: ChainEndpoint, options: RpcClientOptions = {}) {
    try {
      this.http = new HttpJsonClient(endpoint, {
        attempts: Math.min(9, Math.max(0, Math.floor(options.retries ?? 2))) + 1,
        retryDelayMs: options.retryDelayMs ?? 100,
        defaultTimeoutMs: options.timeoutMs ?? 30_000,
        describeNetworkError: unreachable,
      });
    } catch (e) {
      // The message never repeats the URL (credentials included).
      throw e instanceof TypeError ? new BitcoinRpcError('RPC_ERROR', '(none)', `bitcoin RPC: ${e.message}`) : e;
    }
    this.displayName = this.http.origin;
    this.concurrency = Math.max(1, Math.floor(options.concurrency ?? 4));
    this.batchSupported = options.batch !== false;
  }

  /** One call; throws BitcoinRpcError. */
  async call<T = unknown>(method: string, params: readonly unknown[] = []): Promise<T> {
    const id = this.nextId++;
    const body = await this.post(method, stringifyWithRaw({ jsonrpc: '1.0', id, method, params }));
    if (!isResponse(body)) throw new BitcoinRpcError('RPC_ERROR', method, `bitcoin RPC ${method} at ${this.displayName}: the answer is not a JSON-RPC response`);
    const outcome = this.outcome(method, body);
    if (!outcome.ok) throw outcome.error;
    return outcome.result as T;
  }

  /**
   * Several calls, in order: one JSON-RPC batch per `chunk` calls (chunks in flight at most
   * `concurrency`), or single calls with the same bound when the server does not take batches.
   * Per-call node errors come back as outcomes; transport failures throw.
   */
  async batch<T = unknown>(calls: readonly RpcCall[], chunk = 50): Promise<Array<RpcOutcome<T>>> {
    if (calls.length === 0) return [];
    if (calls.length === 1 || !this.batchSupported) return this.singles<T>(calls);
    const chunks: RpcCall[][] = [];
    for (let i = 0; i < calls.length; i += chunk) chunks.push(calls.slice(i, i + chunk));
    const parts = await mapLimit(chunks, this.concurrency, (c) => this.batchOnce<T>(c));
    return parts.flat();
  }

  private async singles<T>(calls: readonly RpcCall[]): Promise<Array<RpcOutcome<T>>> {
    return mapLimit(calls, this.concurrency, async (c): Promise<RpcOutcome<T>> => {
      try {
        return { ok: true, result: await this.call<T>(c.method, c.params) };
      } catch (e) {
        if (isBitcoinRpcError(e) && e.rpcCode !== null) return { ok: false, error: e };
        throw e;
      }
    });
  }

  private async batchOnce<T>(calls: readonly RpcCall[]): Promise<Array<RpcOutcome<T>>> {
    if (!this.batchSupported) return this.singles<T>(calls);
    const first = calls[0]!.method;
    const ids = calls.map(() => this.nextId++);
    const payload = calls.map((c, i) => ({ jsonrpc: '1.0', id: ids[i], method: c.method, params: c.params }));
    let body: unknown;
    try {
      body = await this.post(first, stringifyWithRaw(payload), true);
    } catch (e) {
      // A server that refuses arrays outright (HTTP 4xx, or a JSON-RPC error for the whole request).
      if (isBitcoinRpcError(e) && e.code === 'RPC_ERROR' && e.httpStatus !== 401 && e.httpStatus !== 403) {
        this.batchSupported = false;
        return this.singles<T>(calls);
      }
      throw e;
    }
    if (!Array.isArray(body)) {
      this.batchSupported = false;
      return this.singles<T>(calls);
    }
    const byId = new Map<unknown, JsonRpcResponse>();
    for (const r of body) if (isResponse(r)) byId.set(r.id, r);
    return calls.map((c, i) => {
      const r = byId.get(ids[i]);
      if (!r) throw new BitcoinRpcError('RPC_ERROR', c.method, `bitcoin RPC batch at ${this.displayName}: no answer for ${c.method}`);
      return this.outcome<T>(c.method, r);
    });
  }

  /** Node messages may echo a request or a URL: credentials never pass through. */
  private redact(text: string): string {
    const out = this.http.scrub(text);
    return out.length > 500 ? `${out.slice(0, 500)}…` : out;
  }

  private outcome<T>(method: string, r: JsonRpcResponse): RpcOutcome<T> {
    if (r.error !== null && r.error !== undefined) {
      const rpcCode = typeof r.error.code === 'number' ? r.error.code : -32603;
      const text = this.redact(typeof r.error.message === 'string' ? r.error.message : 'error');
      return { ok: false, error: new BitcoinRpcError('RPC_ERROR', method, `bitcoin RPC ${method} at ${this.displayName}: ${text} (code ${rpcCode})`, { rpcCode, nodeMessage: text }) };
    }
    return { ok: true, result: r.result as T };
  }

  /**
   * A REST GET on the same endpoint (bcoin's HTTP API: GET /coin/address/:address), with the same
   * credentials, retries and error wording as the RPC calls; `path` is appended to the endpoint
   * URL's path. Non-2xx answers are RPC_ERROR (5xx / 429 / 408 after retries RPC_UNAVAILABLE).
   */
  async rest<T = unknown>(path: string): Promise<T> {
    const label = `GET ${path.replace(/\?.*$/, '')}`;
    try {
      return (await this.http.request({ method: 'GET', path }, readJson(undefined, { refusal: refusalWithMessage }))) as T;
    } catch (e) {
      if (!isHttpJsonError(e)) throw e;
      const attempts = e.failure === 'UNAVAILABLE' && e.attempts > 1 ? ` (${e.attempts} attempts)` : '';
      throw new BitcoinRpcError(scannerErrorCode(e), label, `bitcoin REST ${label} at ${this.displayName}: ${this.redact(e.reason)}${attempts}`, { httpStatus: e.responseStatus, cause: e });
    }
  }

  /** POSTs a body with bounded retries; returns the parsed JSON (an object, or an array for batches). */
  private async post(method: string, body: string, isBatch = false): Promise<unknown> {
    try {
      return await this.http.request({ body }, (answer) => readNodeAnswer(answer, isBatch));
    } catch (e) {
      if (!isHttpJsonError(e)) throw e;
      const what = `bitcoin RPC ${isBatch ? `batch (${method}, …)` : method} at ${this.displayName}`;
      const attempts = e.failure === 'UNAVAILABLE' && e.attempts > 1 ? ` (${e.attempts} attempts)` : '';
      throw new BitcoinRpcError(scannerErrorCode(e), method, `${what}: ${e.reason}${attempts}`, { httpStatus: e.responseStatus, cause: e });
    }
  }
}
