import type { ChainEndpoint } from './scanning';
import { ChainRpcError } from './chain-errors';
import { mapLimit } from './concurrency';
import { HttpJsonClient, isHttpJsonError, readJson, refusalWithMessage, type HttpJsonOptions } from './http-json';

/**
 * JSON-RPC (2.0, or bitcoin's 1.0) over core's HttpJsonClient, for every adapter: single calls
 * and batches (split above maxBatch, a few HTTP requests in flight), answers matched to requests
 * by id, a result or an error per batch item, bounded retries of transient failures, and errors
 * (ChainRpcError) that never carry the endpoint's credentials, path, query or headers.
 */

/** Bounded retry, the one spelling every adapter uses. */
export interface RetryOptions {
  /** Requests per call before giving up on a transient failure, 1 to 10 (default 3). */
  readonly attempts?: number;
  /** Delay before the first retry, doubled for each further one (ms). */
  readonly backoffMs?: number;
  /** Per-request timeout when the endpoint gives none (ms). */
  readonly timeoutMs?: number;
}

/** Per-batch settings. */
export interface JsonRpcBatchOptions {
  /** Largest chunk of this batch sent in one HTTP request (default the client's maxBatch). */
  readonly maxBatch?: number;
  /** Ask again for items answered with a retryItem error (default true; false for calls that must not repeat, e.g. a send). */
  readonly retryItems?: boolean;
}

export interface JsonRpcCall {
  readonly method: string;
  readonly params?: unknown;
}

/** A node's JSON-RPC error object, as answered (the message with the endpoint's secrets blanked). */
export interface JsonRpcItemError {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/** One answer of a batch: a result, or the node's JSON-RPC error for that request (RPC_ERROR). */
export type JsonRpcOutcome<T = unknown> =
  | { readonly ok: true; readonly result: T }
  | { readonly ok: false; readonly error: ChainRpcError; readonly rpc: JsonRpcItemError };

export interface JsonRpcClientOptions extends RetryOptions {
  /** Names the endpoint in messages: "<label> RPC scheme://host[:port]" (default "RPC scheme://host[:port]"). */
  readonly label?: string;
  /** "2.0" (default) or bitcoin's "1.0". */
  readonly version?: '2.0' | '1.0';
  /** Largest batch sent in one HTTP request (default 50); bigger batches are split into even chunks. */
  readonly maxBatch?: number;
  /** HTTP requests in flight at once for a split batch (default 4). */
  readonly concurrency?: number;
  /** Wait as a retried answer's Retry-After says, up to 5 s (default true). */
  readonly honourRetryAfter?: boolean;
  /** HTTP statuses asked again (default 429 and 5xx; other non-2xx statuses are refused at once). */
  readonly transientStatus?: (status: number) => boolean;
  /**
   * A JSON-RPC body answered with a non-2xx status (bitcoind answers errors with HTTP 500 / 404)
   * is the answer, not an HTTP failure (default false).
   */
  readonly bodyOverStatus?: boolean;
  /**
   * When the endpoint refuses a batch (HTTP 4xx other than 401 / 403, a single JSON-RPC error or
   * any non-array answer to an array), send the calls one by one from then on (default false).
   * Until a batch has gone through, the first chunk of a split batch is sent alone.
   */
  readonly batchFallback?: boolean;
  /** Batch items answered with this error are sent again, within the attempts (default: rate limits, code 429 or "rate limit" / "too many requests" / "throttl"). */
  readonly retryItem?: (error: JsonRpcItemError) => boolean;
  /**
   * An item still answered with a retryItem error once the attempts are spent is RPC_UNAVAILABLE
   * (attempts set), not RPC_ERROR (default false): for nodes whose retryItem errors mean "not now"
   * (Solana's node behind, block not yet available).
   */
  readonly itemRetriesUnavailable?: boolean;
  /** Request body writer (default JSON.stringify with bigints as decimal strings). */
  readonly stringify?: (value: unknown) => string;
  /** Body parser (default JSON.parse; e.g. parseJsonExact for exact large integers). */
  readonly parse?: (text: string) => unknown;
  /** How a network failure reads in messages (default "ECONNREFUSED (connect ECONNREFUSED …)"); scrubbed. */
  readonly describeNetworkError?: (e: unknown) => string;
  /** Redirects: followed (default) or a network failure. */
  readonly redirect?: 'follow' | 'error';
  readonly fetch?: typeof fetch;
}

/** Longest node text quoted in a message. */
const MAX_QUOTED = 300;
/** Below this, a batch is not worth spreading over parallel requests. */
const MIN_SHARED_CHUNK = 10;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A JSON-RPC error that means "slow down" rather than "no". */
export function isRateLimitedRpcError(error: JsonRpcItemError): boolean {
  return error.code === 429 || /rate.?limit|too many requests|throttl/i.test(error.message);
}

/** HTTP 429 and 5xx. */
const defaultTransient = (status: number): boolean => status === 429 || status >= 500;

const defaultStringify = (value: unknown): string => JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));

/** A network failure as messages show it: the error code and its message. */
function describeFetchError(e: unknown): string {
  const err = e as { message?: string; cause?: { code?: string; message?: string } };
  const cause = err?.cause;
  return cause?.code ? `${cause.code}${cause.message ? ` (${cause.message})` : ''}` : (cause?.message ?? err?.message ?? String(e));
}

interface Answer {
  readonly id?: unknown;
  readonly result?: unknown;
  readonly error?: { readonly code?: unknown; readonly message?: unknown; readonly data?: unknown } | null;
}

/** A batch the endpoint refused as a batch (batchFallback): the calls go one by one. */
class BatchRefused extends Error {}

const isAnswer = (v: unknown): v is Answer => typeof v === 'object' && v !== null && !Array.isArray(v) && ('result' in v || 'error' in v);

export class JsonRpcClient {
  /** "<label> RPC scheme://host[:port]": how messages name the endpoint. */
  readonly endpointName: string;
  /** scheme://host[:port] of the endpoint. */
  readonly origin: string;
  /** The HTTP transport (REST calls on the same endpoint share its credentials, retries and scrubbing). */
  readonly http: HttpJsonClient;
  readonly attempts: number;
  private readonly backoffMs: number;
  private readonly maxBatch: number;
  private readonly concurrency: number;
  private readonly options: JsonRpcClientOptions;
  private nextId = 1;
  /** batchFallback: unknown until a batch went through or was refused. */
  private batches: 'unknown' | 'yes' | 'no' = 'unknown';

  /** Throws ChainRpcError RPC_CONFIG for an unusable endpoint or options (the message never repeats the URL). */
  constructor(endpoint: ChainEndpoint, options: JsonRpcClientOptions = {}) {
    const prefix = options.label ? `${options.label} RPC` : 'RPC';
    this.options = options;
    this.attempts = options.attempts ?? 3;
    this.backoffMs = Math.max(0, options.backoffMs ?? 250);
    const http: HttpJsonOptions = {
      attempts: this.attempts,
      retryDelayMs: this.backoffMs,
      honourRetryAfter: options.honourRetryAfter ?? true,
      defaultTimeoutMs: options.timeoutMs ?? 30_000,
      describeNetworkError: (e) => this.redact((options.describeNetworkError ?? describeFetchError)(e)),
      ...(options.parse ? { parse: options.parse } : {}),
      ...(options.redirect ? { redirect: options.redirect } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
    };
    try {
      this.http = new HttpJsonClient(endpoint, http);
    } catch (e) {
      throw e instanceof TypeError ? new ChainRpcError('RPC_CONFIG', `${prefix}: ${e.message}`) : e;
    }
    this.origin = this.http.origin;
    this.endpointName = `${prefix} ${this.http.origin}`;
    this.maxBatch = Math.max(1, Math.floor(options.maxBatch ?? 50));
    this.concurrency = Math.max(1, Math.floor(options.concurrency ?? 4));
  }

  /** Text from outside (a node's message) with every secret of the endpoint blanked, and bounded. */
  redact(text: string): string {
    const out = this.http.scrub(text);
    return out.length > MAX_QUOTED ? `${out.slice(0, MAX_QUOTED)}…` : out;
  }

  /** One call; a JSON-RPC error answer throws ChainRpcError RPC_ERROR (rpcCode set). */
  async call<T = unknown>(method: string, params: unknown = []): Promise<T> {
    const [outcome] = await this.batch<T>([{ method, params }]);
    return this.unwrap(outcome!);
  }

  /**
   * A batch outcome's result, or its error thrown; `what` renames the call in the message
   * ("eth_getLogs (block 12)") when the method alone would not say enough.
   */
  unwrap<T = unknown>(outcome: JsonRpcOutcome<T>, what?: string): T {
    if (outcome.ok) return outcome.result;
    if (what === undefined || what === outcome.error.method) throw outcome.error;
    const { rpc } = outcome;
    throw new ChainRpcError('RPC_ERROR', `${this.endpointName}: ${what} failed: ${outcome.error.nodeMessage} (JSON-RPC error ${rpc.code})`, { method: outcome.error.method, rpcCode: rpc.code, nodeMessage: outcome.error.nodeMessage });
  }

  /** Results of a batch in request order; any JSON-RPC error answer throws it (RPC_ERROR). */
  async batchResults(calls: readonly JsonRpcCall[]): Promise<unknown[]> {
    return (await this.batch(calls)).map((o) => this.unwrap(o));
  }

  /**
   * Every call's outcome, in request order. Split into HTTP requests of at most maxBatch calls
   * (at most `concurrency` in flight); items answered with a retryItem error are asked again
   * within the attempts. Transport failures and unusable answers throw ChainRpcError.
   */
  async batch<T = unknown>(calls: readonly JsonRpcCall[], options: JsonRpcBatchOptions = {}): Promise<Array<JsonRpcOutcome<T>>> {
    if (calls.length === 0) return [];
    // Even chunks of at most maxBatch, at least `concurrency` of them when there is enough to
    // share: nodes answer parallel HTTP requests in parallel, the items of one batch mostly in turn.
    const max = options.maxBatch === undefined ? this.maxBatch : Math.max(1, Math.floor(options.maxBatch));
    const wanted = Math.min(max, Math.max(MIN_SHARED_CHUNK, Math.ceil(calls.length / this.concurrency)));
    const size = Math.ceil(calls.length / Math.ceil(calls.length / wanted));
    const starts: number[] = [];
    for (let i = 0; i < calls.length; i += size) starts.push(i);
    const send = (i: number) => this.sendChunk<T>(calls.slice(i, i + size), options.retryItems !== false);
    // batchFallback: one array first, so that a node refusing batches is asked in arrays once.
    if (this.options.batchFallback === true && this.batches === 'unknown' && starts.length > 1) {
      const first = await send(starts[0]!);
      const rest = await mapLimit(starts.slice(1), this.concurrency, send);
      return [first, ...rest].flat();
    }
    return (await mapLimit(starts, this.concurrency, send)).flat();
  }

  /**
   * A REST GET on the same endpoint (bcoin's /coin/address/:address, ...): its credentials,
   * retries and scrubbing; `path` is appended to the endpoint URL's path. Non-2xx answers are
   * RPC_ERROR (429 / 5xx after the retries RPC_UNAVAILABLE), with the node's message when it gave one.
   */
  async rest<T = unknown>(path: string): Promise<T> {
    const what = `GET ${path.replace(/\?.*$/, '')}`;
    try {
      return (await this.http.request({ method: 'GET', path }, readJson(undefined, { refusal: refusalWithMessage, transientStatus: this.options.transientStatus ?? defaultTransient }))) as T;
    } catch (e) {
      throw this.transportError(e, what, what);
    }
  }

  /** An HttpJsonClient failure as a ChainRpcError (anything else as it is). */
  private transportError(e: unknown, what: string, method: string): unknown {
    if (!isHttpJsonError(e)) return e;
    const status = e.responseStatus;
    const info = { method, responseStatus: status, attempts: e.attempts, cause: e };
    if (e.failure === 'UNAVAILABLE') return new ChainRpcError('RPC_UNAVAILABLE', `${this.endpointName} unavailable: ${what}: ${this.redact(e.reason)} (${e.attempts} attempts)`, info);
    if (e.failure === 'REFUSED') {
      const hint = status === 401 || status === 403 ? ': check the endpoint credentials / API key' : '';
      const said = e.reason.replace(/^HTTP \d+:?\s*/, '');
      return new ChainRpcError('RPC_ERROR', `${this.endpointName}: ${what} refused with HTTP ${status}${hint}${said ? `: ${this.redact(said)}` : ''}`, info);
    }
    return new ChainRpcError('RPC_BAD_RESPONSE', `${this.endpointName}: ${what}: ${this.redact(e.reason)}`, info);
  }

  /** One chunk, asking again for the items answered with a retryItem error. */
  private async sendChunk<T>(calls: readonly JsonRpcCall[], retryItems: boolean): Promise<Array<JsonRpcOutcome<T>>> {
    const retryItem = retryItems ? (this.options.retryItem ?? isRateLimitedRpcError) : () => false;
    const out: Array<JsonRpcOutcome<T>> = new Array(calls.length);
    let pending = calls.map((_, i) => i);
    for (let attempt = 1; ; attempt++) {
      const outcomes = await this.postOrSingles<T>(pending.map((i) => calls[i]!));
      const again: number[] = [];
      pending.forEach((i, k) => {
        const o = outcomes[k]!;
        out[i] = o;
        if (!o.ok && retryItem(o.rpc)) again.push(i);
      });
      if (again.length > 0 && attempt >= this.attempts && this.options.itemRetriesUnavailable === true) {
        for (const i of again) {
          const o = out[i]!;
          if (o.ok) continue;
          const { error } = o;
          const unavailable = new ChainRpcError('RPC_UNAVAILABLE', `${this.endpointName} unavailable: ${error.method}: node error ${o.rpc.code}: ${error.nodeMessage} (${attempt} attempts)`, {
            method: error.method, rpcCode: error.rpcCode, nodeMessage: error.nodeMessage, attempts: attempt, cause: error,
          });
          out[i] = { ok: false, error: unavailable, rpc: o.rpc };
        }
      }
      if (again.length === 0 || attempt >= this.attempts) return out;
      pending = again;
      await sleep(this.backoffMs * 2 ** (attempt - 1));
    }
  }

  /** post(), or the calls one by one when the endpoint does not take batches (batchFallback). */
  private async postOrSingles<T>(calls: readonly JsonRpcCall[]): Promise<Array<JsonRpcOutcome<T>>> {
    if (calls.length === 1 || this.batches !== 'no') {
      try {
        const out = await this.post<T>(calls);
        if (calls.length > 1) this.batches = 'yes';
        return out;
      } catch (e) {
        if (!(e instanceof BatchRefused)) throw e;
        this.batches = 'no';
      }
    }
    return (await mapLimit(calls, this.concurrency, (c) => this.post<T>([c]))).flat();
  }

  /** One HTTP request carrying the calls (a JSON-RPC batch when more than one), retried on transient failures. */
  private async post<T>(calls: readonly JsonRpcCall[]): Promise<Array<JsonRpcOutcome<T>>> {
    const single = calls.length === 1;
    const ids = calls.map(() => this.nextId++);
    const version = this.options.version ?? '2.0';
    const requests = calls.map((c, k) => ({ jsonrpc: version, id: ids[k], method: c.method, params: c.params ?? [] }));
    const body = (this.options.stringify ?? defaultStringify)(single ? requests[0] : requests);
    const what = single ? calls[0]!.method : `batch of ${calls.length} (${[...new Set(calls.map((c) => c.method))].join(', ')})`;
    const method = calls[0]!.method;
    const transient = this.options.transientStatus ?? defaultTransient;
    const bodyOverStatus = this.options.bodyOverStatus === true;
    let json: unknown;
    try {
      json = await this.http.request({ body }, (answer) => {
        if (bodyOverStatus && (isAnswer(answer.json) || (!single && Array.isArray(answer.json)))) return { ok: true };
        return readJson(undefined, { transientStatus: transient })(answer);
      });
    } catch (e) {
      const status = isHttpJsonError(e) ? e.responseStatus : null;
      if (!single && this.options.batchFallback === true && isHttpJsonError(e) && e.failure === 'REFUSED' && status !== 401 && status !== 403) throw new BatchRefused();
      throw this.transportError(e, what, method);
    }
    if (!single && this.options.batchFallback === true && !Array.isArray(json)) throw new BatchRefused();
    return this.match<T>(json, ids, calls, what);
  }

  /** The answers matched to the requests by id. */
  private match<T>(json: unknown, ids: readonly number[], calls: readonly JsonRpcCall[], what: string): Array<JsonRpcOutcome<T>> {
    const method = calls[0]!.method;
    const bad = (why: string) => new ChainRpcError('RPC_BAD_RESPONSE', `${this.endpointName}: ${what}: ${why}`, { method });
    if (ids.length > 1 && !Array.isArray(json)) {
      // A single error object for a batch: the node (or a proxy) refuses batches altogether.
      const e = isAnswer(json) ? json.error : undefined;
      if (e) {
        const rpcCode = typeof e.code === 'number' ? e.code : null;
        throw new ChainRpcError('RPC_ERROR', `${this.endpointName}: ${what} refused: ${this.redact(String(e.message))} (JSON-RPC error ${String(e.code)}; does the endpoint accept JSON-RPC batches?)`, { method, rpcCode });
      }
      throw bad('a batch was answered with a single object');
    }
    const items = Array.isArray(json) ? json : [json];
    const byId = new Map<unknown, Answer>();
    for (const item of items) if (item && typeof item === 'object' && !Array.isArray(item)) byId.set((item as Answer).id, item as Answer);
    // A lone request answered with an id-less error (e.g. a parse error reported with id null).
    if (ids.length === 1 && !byId.has(ids[0]) && byId.size === 1 && byId.has(null)) byId.set(ids[0], byId.get(null)!);
    return ids.map((id, k) => {
      const item = byId.get(id);
      if (!item) throw bad(`no answer for request ${id}`);
      if (item.error !== undefined && item.error !== null) {
        const rpc: JsonRpcItemError = {
          code: typeof item.error.code === 'number' ? item.error.code : 0,
          message: this.http.scrub(String(item.error.message ?? 'unknown error')),
          ...(item.error.data === undefined ? {} : { data: item.error.data }),
        };
        const m = calls[k]!.method;
        const text = this.redact(rpc.message);
        const error = new ChainRpcError('RPC_ERROR', `${this.endpointName}: ${m} failed: ${text} (JSON-RPC error ${rpc.code})`, { method: m, rpcCode: rpc.code, nodeMessage: text });
        return { ok: false as const, error, rpc };
      }
      if (!('result' in item)) throw bad(`answer ${id} has neither result nor error`);
      return { ok: true as const, result: item.result as T };
    });
  }
}
