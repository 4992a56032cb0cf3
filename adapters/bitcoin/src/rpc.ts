import type { ChainEndpoint } from '@wcs/core';

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

  constructor(code: BitcoinRpcErrorCode, method: string, message: string, extra: { rpcCode?: number | null; httpStatus?: number | null; cause?: unknown } = {}) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'BitcoinRpcError';
    this.code = code;
    this.method = method;
    this.rpcCode = extra.rpcCode ?? null;
    this.httpStatus = extra.httpStatus ?? null;
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
  /** Extra attempts after a network failure / timeout / 5xx / 429 (default 2; 0 for non-idempotent calls). */
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

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Runs fn over items with at most `limit` in flight; results in input order; the first failure rejects. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        out[i] = await fn(items[i]!, i);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}

interface JsonRpcResponse {
  readonly id?: unknown;
  readonly result?: unknown;
  readonly error?: { readonly code?: unknown; readonly message?: unknown } | null;
}

const isResponse = (v: unknown): v is JsonRpcResponse => typeof v === 'object' && v !== null && !Array.isArray(v) && ('result' in v || 'error' in v);

/** Thrown inside one attempt: retryable or not, already worded without credentials. */
class AttemptError extends Error {
  constructor(readonly retryable: boolean, readonly rpcError: BitcoinRpcError) {
    super(rpcError.message);
  }
}

/**
 * Bitcoin Core–style JSON-RPC 1.0 over HTTP POST with global fetch. The endpoint URL may carry
 * credentials (http://user:pass@host:port): they are sent as Basic auth and never appear in
 * errors; an Authorization entry in endpoint.headers takes precedence.
 */
export class BitcoinRpcClient {
  /** Where requests go: the URL without userinfo. */
  private readonly target: string;
  /** What messages call the endpoint: protocol, host and port only (paths and queries may hold provider keys). */
  readonly displayName: string;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly retryDelayMs: number;
  private readonly concurrency: number;
  private batchSupported: boolean;
  private nextId = 1;
  /** Secrets of the endpoint (userinfo, header values) to blank out of text the server sends back. */
  private readonly secrets: string[];

  constructor(endpoint: ChainEndpoint, options: RpcClientOptions = {}) {
    let url: URL;
    try {
      url = new URL(endpoint.url);
    } catch {
      // The URL parser's error carries the input (credentials included): say nothing of it.
      throw new BitcoinRpcError('RPC_ERROR', '(none)', 'bitcoin RPC endpoint URL is not a valid URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new BitcoinRpcError('RPC_ERROR', '(none)', `bitcoin RPC endpoint must be http(s), not ${url.protocol}`);
    }
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    const password = url.password;
    if (url.username !== '' || url.password !== '') {
      const user = decodeURIComponentSafe(url.username);
      const pass = decodeURIComponentSafe(url.password);
      headers['authorization'] = `Basic ${Buffer.from(`${user}:${pass}`, 'utf8').toString('base64')}`;
      url.username = '';
      url.password = '';
    }
    for (const [k, v] of Object.entries(endpoint.headers ?? {})) headers[k.toLowerCase()] = v;
    this.secrets = [password, decodeURIComponentSafe(password), ...Object.values(endpoint.headers ?? {})].filter((x) => x.length >= 4);
    this.headers = headers;
    this.target = url.toString();
    this.displayName = `${url.protocol}//${url.host}`;
    this.timeoutMs = endpoint.timeoutMs ?? options.timeoutMs ?? 30_000;
    this.retries = Math.max(0, Math.floor(options.retries ?? 2));
    this.retryDelayMs = options.retryDelayMs ?? 100;
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
    let out = text.replace(/\/\/[^/@\s]*@/g, '//***@');
    for (const s of this.secrets) out = out.split(s).join('***');
    return out.length > 500 ? `${out.slice(0, 500)}…` : out;
  }

  private outcome<T>(method: string, r: JsonRpcResponse): RpcOutcome<T> {
    if (r.error !== null && r.error !== undefined) {
      const rpcCode = typeof r.error.code === 'number' ? r.error.code : -32603;
      const text = this.redact(typeof r.error.message === 'string' ? r.error.message : 'error');
      return { ok: false, error: new BitcoinRpcError('RPC_ERROR', method, `bitcoin RPC ${method} at ${this.displayName}: ${text} (code ${rpcCode})`, { rpcCode }) };
    }
    return { ok: true, result: r.result as T };
  }

  /** POSTs a body with bounded retries; returns the parsed JSON (an object, or an array for batches). */
  private async post(method: string, body: string, isBatch = false): Promise<unknown> {
    let lastError: BitcoinRpcError | undefined;
    for (let attempt = 0; attempt <= this.retries; attempt++) {
      if (attempt > 0) await sleep(this.retryDelayMs * 2 ** (attempt - 1));
      try {
        return await this.attempt(method, body, isBatch);
      } catch (e) {
        if (!(e instanceof AttemptError)) throw e;
        if (!e.retryable) throw e.rpcError;
        lastError = e.rpcError;
      }
    }
    const attempts = this.retries + 1;
    throw new BitcoinRpcError('RPC_UNAVAILABLE', method, `${lastError!.message}${attempts > 1 ? ` (${attempts} attempts)` : ''}`, {
      httpStatus: lastError!.httpStatus,
      cause: lastError!.cause,
    });
  }

  private async attempt(method: string, body: string, isBatch: boolean): Promise<unknown> {
    const what = `bitcoin RPC ${isBatch ? `batch (${method}, …)` : method} at ${this.displayName}`;
    let res: Response;
    let text: string;
    try {
      res = await fetch(this.target, { method: 'POST', headers: this.headers, body, signal: AbortSignal.timeout(this.timeoutMs) });
      text = await res.text();
    } catch (e) {
      throw new AttemptError(true, new BitcoinRpcError('RPC_UNAVAILABLE', method, `${what}: ${describeNetworkError(e, this.timeoutMs)}`, { cause: e }));
    }
    let json: unknown;
    let parsed = false;
    try {
      json = JSON.parse(text);
      parsed = true;
    } catch {
      // Not JSON: judged by the status below.
    }
    const rpcShaped = parsed && (isResponse(json) || (isBatch && Array.isArray(json)));
    // Bitcoin Core answers RPC errors of single calls with HTTP 500 / 404 and a JSON-RPC body: the body wins.
    if (rpcShaped) return json;
    const status = res.status;
    if (status === 401 || status === 403) {
      throw new AttemptError(false, new BitcoinRpcError('RPC_ERROR', method, `${what}: HTTP ${status}: the node refused the credentials`, { httpStatus: status }));
    }
    if (status >= 500 || status === 429 || status === 408) {
      throw new AttemptError(true, new BitcoinRpcError('RPC_UNAVAILABLE', method, `${what}: HTTP ${status}`, { httpStatus: status }));
    }
    if (status >= 400) {
      throw new AttemptError(false, new BitcoinRpcError('RPC_ERROR', method, `${what}: HTTP ${status}`, { httpStatus: status }));
    }
    throw new AttemptError(true, new BitcoinRpcError('RPC_UNAVAILABLE', method, `${what}: HTTP ${status} with a body that is not JSON-RPC`, { httpStatus: status }));
  }
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function describeNetworkError(e: unknown, timeoutMs: number): string {
  const err = e as { name?: string; code?: string; cause?: { code?: string; name?: string } };
  if (err?.name === 'TimeoutError' || err?.name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  const code = err?.cause?.code ?? err?.code;
  if (typeof code === 'string' && /^[A-Z_]+$/.test(code)) return `unreachable (${code})`;
  return 'unreachable';
}
