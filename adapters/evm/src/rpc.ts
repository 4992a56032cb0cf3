import { HttpJsonClient, isHttpJsonError, readJson, type ChainEndpoint } from '@wcs/core';

/** Why a JSON-RPC exchange with the chain's node failed. Messages never carry URL credentials, paths or headers. */
export type EvmRpcErrorCode =
  /** The endpoint URL is unusable (not http(s), malformed). */
  | 'RPC_CONFIG'
  /** The node could not be reached or kept failing: network error, timeout, HTTP 429 / 5xx (after the retries). Retry later. */
  | 'RPC_UNAVAILABLE'
  /** The node answered with a JSON-RPC error, or refused the request at the HTTP level (401, 403, 404, ...). */
  | 'RPC_ERROR'
  /** The node answered something that is not the JSON-RPC response expected (bad JSON, missing fields, wrong ids). */
  | 'RPC_BAD_RESPONSE'
  /** The node's answers contradict each other (the chain changed during the read, or a lagging backend): ask again. */
  | 'RPC_INCONSISTENT'
  /** The node serves another chain than the one configured (eth_chainId differs from the chain's evmChainId). */
  | 'RPC_WRONG_CHAIN'
  /** The node refused a transaction for now, not for good (its pool is full, a nonce gap before it, its own internal error): broadcast it again later. */
  | 'RPC_TRY_LATER';

/** The error every EVM RPC read throws, with a stable code. */
export class EvmRpcError extends Error {
  readonly code: EvmRpcErrorCode;
  /** The JSON-RPC error code, when the node answered with one. */
  readonly rpcCode: number | null;
  /** The HTTP status, when the failure was an HTTP status. */
  readonly httpStatus: number | null;

  constructor(code: EvmRpcErrorCode, message: string, details?: { rpcCode?: number | null; httpStatus?: number | null; cause?: unknown }) {
    super(message, details?.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'EvmRpcError';
    this.code = code;
    this.rpcCode = details?.rpcCode ?? null;
    this.httpStatus = details?.httpStatus ?? null;
  }
}

export function isEvmRpcError(e: unknown): e is EvmRpcError {
  return e instanceof EvmRpcError;
}

export interface RpcCall {
  readonly method: string;
  readonly params: readonly unknown[];
}

/** One answer of a batch: a result, or the node's JSON-RPC error for that request. */
export type RpcOutcome =
  | { readonly ok: true; readonly result: unknown }
  | { readonly ok: false; readonly code: number; readonly message: string };

export interface JsonRpcOptions {
  /** Extra attempts after a network error, timeout, HTTP 429/5xx or a rate-limited batch item (default 2, at most 9). */
  readonly retries?: number;
  /** First backoff, ms, doubled per attempt (default 150). HTTP Retry-After is honoured up to 5 s. */
  readonly backoffMs?: number;
  /** Largest JSON-RPC batch sent in one HTTP request (default 50); bigger batches are split into even chunks. */
  readonly maxBatch?: number;
  /** HTTP requests in flight at once for a split batch (default 4). */
  readonly concurrency?: number;
  /** Names the endpoint in messages (e.g. the chain code). */
  readonly label?: string;
}

const MAX_QUOTED = 300;
/** Below this, a batch is not worth spreading over parallel requests. */
const MIN_SHARED_CHUNK = 10;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A JSON-RPC error that means "slow down" rather than "no". */
function isRateLimited(code: number, message: string): boolean {
  return code === 429 || /rate.?limit|too many requests|throttl/i.test(message);
}

/** HTTP 429 and 5xx: asked again (other statuses are refused at once). */
const transientStatus = (status: number): boolean => status === 429 || status >= 500;

/**
 * Minimal JSON-RPC 2.0 over core's HttpJsonClient: batches (split above maxBatch), per-request
 * timeout, bounded retries on transient failures (HTTP Retry-After honoured up to 5 s). URL
 * userinfo is sent as HTTP Basic authentication and never appears in messages; messages name the
 * endpoint by scheme and host only (paths often hold API keys).
 */
export class JsonRpcHttp {
  /** "<label> RPC scheme://host[:port]" of the endpoint: what messages show. */
  readonly endpointName: string;
  private readonly http: HttpJsonClient;
  private readonly retries: number;
  private readonly backoffMs: number;
  private readonly maxBatch: number;
  private readonly concurrency: number;
  private nextId = 1;

  constructor(endpoint: ChainEndpoint, options: JsonRpcOptions = {}) {
    const prefix = options.label ? `${options.label} RPC` : 'RPC';
    this.retries = Math.min(9, Math.max(0, options.retries ?? 2));
    this.backoffMs = Math.max(0, options.backoffMs ?? 150);
    try {
      this.http = new HttpJsonClient(endpoint, {
        attempts: this.retries + 1, retryDelayMs: this.backoffMs, honourRetryAfter: true, defaultTimeoutMs: 30_000,
        describeNetworkError: (e) => this.redact(describeFetchError(e)),
      });
    } catch (e) {
      throw e instanceof TypeError ? new EvmRpcError('RPC_CONFIG', `${prefix}: ${e.message}`) : e;
    }
    this.endpointName = `${prefix} ${this.http.origin}`;
    this.maxBatch = Math.max(1, options.maxBatch ?? 50);
    this.concurrency = Math.max(1, options.concurrency ?? 4);
  }

  /** Text from outside (error messages) with every secret of the endpoint blanked, and bounded. */
  redact(text: string): string {
    const out = this.http.scrub(text);
    return out.length > MAX_QUOTED ? `${out.slice(0, MAX_QUOTED)}…` : out;
  }

  /** One call; a JSON-RPC error answer throws RPC_ERROR. */
  async call<T = unknown>(method: string, params: readonly unknown[] = []): Promise<T> {
    const [outcome] = await this.batch([{ method, params }]);
    return this.unwrap(outcome!, method) as T;
  }

  /** Results of a batch in request order; any JSON-RPC error answer throws RPC_ERROR. */
  async batchResults(calls: readonly RpcCall[]): Promise<unknown[]> {
    const outcomes = await this.batch(calls);
    return outcomes.map((o, i) => this.unwrap(o, calls[i]!.method));
  }

  unwrap(outcome: RpcOutcome, method: string): unknown {
    if (outcome.ok) return outcome.result;
    throw new EvmRpcError('RPC_ERROR', `${this.endpointName}: ${method} failed: ${this.redact(outcome.message)} (JSON-RPC error ${outcome.code})`, { rpcCode: outcome.code });
  }

  /**
   * Every call's outcome, in request order. Split into HTTP requests of at most maxBatch calls
   * (a few in flight at once); rate-limited items are asked again within the retry budget.
   */
  async batch(calls: readonly RpcCall[]): Promise<RpcOutcome[]> {
    const out: RpcOutcome[] = new Array(calls.length);
    // Even chunks of at most maxBatch, at least `concurrency` of them when there is enough to
    // share: nodes answer parallel HTTP requests in parallel, the items of one batch mostly in turn.
    const wanted = Math.min(this.maxBatch, Math.max(MIN_SHARED_CHUNK, Math.ceil(calls.length / this.concurrency)));
    const size = Math.ceil(calls.length / Math.ceil(calls.length / wanted));
    const chunks: number[][] = [];
    for (let i = 0; i < calls.length; i += size) {
      chunks.push(Array.from({ length: Math.min(size, calls.length - i) }, (_, k) => i + k));
    }
    let next = 0;
    const worker = async () => {
      while (next < chunks.length) {
        const chunk = chunks[next++]!;
        const outcomes = await this.sendChunk(chunk.map((i) => calls[i]!));
        chunk.forEach((i, k) => { out[i] = outcomes[k]!; });
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, chunks.length) }, worker));
    return out;
  }

  /** One chunk, asking again for items the node rate-limited. */
  private async sendChunk(calls: readonly RpcCall[]): Promise<RpcOutcome[]> {
    const out: RpcOutcome[] = new Array(calls.length);
    let pending = calls.map((_, i) => i);
    for (let attempt = 0; ; attempt++) {
      const outcomes = await this.post(pending.map((i) => calls[i]!));
      const again: number[] = [];
      pending.forEach((i, k) => {
        const o = outcomes[k]!;
        out[i] = o;
        if (!o.ok && isRateLimited(o.code, o.message)) again.push(i);
      });
      if (again.length === 0 || attempt >= this.retries) return out;
      pending = again;
      await sleep(this.backoffMs * 2 ** attempt);
    }
  }

  /** One HTTP request carrying the calls (a JSON-RPC batch when more than one), retried on transient failures. */
  private async post(calls: readonly RpcCall[]): Promise<RpcOutcome[]> {
    const single = calls.length === 1;
    const ids = calls.map(() => this.nextId++);
    const requests = calls.map((c, k) => ({ jsonrpc: '2.0', id: ids[k], method: c.method, params: c.params }));
    const body = JSON.stringify(single ? requests[0] : requests);
    const what = single ? calls[0]!.method : `batch of ${calls.length} (${[...new Set(calls.map((c) => c.method))].join(', ')})`;
    let json: unknown;
    try {
      json = await this.http.request({ body }, readJson(undefined, { transientStatus }));
    } catch (e) {
      if (!isHttpJsonError(e)) throw e;
      const status = e.responseStatus;
      if (e.failure === 'UNAVAILABLE') {
        throw new EvmRpcError('RPC_UNAVAILABLE', `${this.endpointName} unavailable: ${what}: ${e.reason} (${e.attempts} attempts)`, { httpStatus: status, cause: e });
      }
      if (e.failure === 'REFUSED') {
        const hint = status === 401 || status === 403 ? ': check the endpoint credentials / API key' : '';
        throw new EvmRpcError('RPC_ERROR', `${this.endpointName}: ${what} refused with HTTP ${status}${hint}`, { httpStatus: status, cause: e });
      }
      throw new EvmRpcError('RPC_BAD_RESPONSE', `${this.endpointName}: ${what}: ${e.reason}`, { cause: e });
    }
    return this.parse(json, ids, what);
  }

  private parse(json: unknown, ids: readonly number[], what: string): RpcOutcome[] {
    const bad = (why: string) => new EvmRpcError('RPC_BAD_RESPONSE', `${this.endpointName}: ${what}: ${why}`);
    const items = Array.isArray(json) ? json : [json];
    if (ids.length > 1 && !Array.isArray(json)) {
      // A single error object for a batch: the node (or a proxy) refuses batches altogether.
      const e = (json as { error?: { code?: number; message?: string } })?.error;
      if (e) throw new EvmRpcError('RPC_ERROR', `${this.endpointName}: ${what} refused: ${this.redact(String(e.message))} (JSON-RPC error ${e.code}; does the endpoint accept JSON-RPC batches?)`, { rpcCode: typeof e.code === 'number' ? e.code : null });
      throw bad('a batch was answered with a single object');
    }
    const byId = new Map<unknown, { result?: unknown; error?: { code?: unknown; message?: unknown } }>();
    for (const item of items) if (item && typeof item === 'object') byId.set((item as { id?: unknown }).id, item as never);
    // A lone request answered with an id-less error (e.g. a parse error reported with id null).
    if (ids.length === 1 && !byId.has(ids[0]) && byId.size === 1 && byId.has(null)) byId.set(ids[0], byId.get(null)!);
    return ids.map((id) => {
      const item = byId.get(id);
      if (!item) throw bad(`no answer for request ${id}`);
      if (item.error !== undefined && item.error !== null) {
        const code = typeof item.error.code === 'number' ? item.error.code : 0;
        return { ok: false as const, code, message: String(item.error.message ?? 'unknown error') };
      }
      if (!('result' in item)) throw bad(`answer ${id} has neither result nor error`);
      return { ok: true as const, result: item.result };
    });
  }
}

/** A network failure as messages show it: the error code and its message ("ECONNREFUSED (connect ECONNREFUSED …)"). */
function describeFetchError(e: unknown): string {
  const err = e as { message?: string; cause?: { code?: string; message?: string } };
  const cause = err?.cause;
  return cause?.code ? `${cause.code}${cause.message ? ` (${cause.message})` : ''}` : (cause?.message ?? err?.message ?? String(e));
}
