import type { ChainEndpoint } from './scanning';
import { ChainRpcError } from './chain-errors';
import { HttpJsonClient, isHttpJsonError, networkErrorCode, readJson, type HttpJsonAnswer, type HttpJsonError, type HttpJsonRequest, type Verdict } from './http-json';

/**
 * The ChainRpcError names ScannerHttp fails with:
 * - RPC_UNAVAILABLE: the node could not be reached or answered "busy" (network error, timeout,
 *   a transient status or node error) after the bounded retries; retrying later is expected to work.
 * - RPC_ERROR: the node answered, but with an error or a response the scanner cannot read.
 */
export type ScannerErrorCode = 'RPC_UNAVAILABLE' | 'RPC_ERROR';

/** The scanner code of an HTTP client failure: RPC_UNAVAILABLE for UNAVAILABLE, else RPC_ERROR. */
export function scannerErrorCode(e: HttpJsonError): ScannerErrorCode {
  return e.failure === 'UNAVAILABLE' ? 'RPC_UNAVAILABLE' : 'RPC_ERROR';
}

/**
 * An HTTP client failure of a REST call as a ChainRpcError (`method` = what, responseStatus,
 * attempts, the HttpJsonError as cause), worded "<what>: <label> unavailable after N attempt(s):
 * <reason>" (RPC_UNAVAILABLE), "<what>: <label> answered HTTP 400<refusal>" or "<what>: <label>:
 * <reason>" (RPC_ERROR). `label` names the endpoint (endpointLabel: host[:port]).
 */
export function restFailure(e: HttpJsonError, what: string, label: string): ChainRpcError {
  const message = e.failure === 'UNAVAILABLE'
    ? `${what}: ${label} unavailable after ${e.attempts} attempt(s): ${e.reason}`
    : e.failure === 'REFUSED' ? `${what}: ${label} answered ${e.reason}` : `${what}: ${label}: ${e.reason}`;
  return new ChainRpcError(scannerErrorCode(e), message, { method: what, responseStatus: e.responseStatus, attempts: e.attempts, cause: e });
}

/** Bounded retry: `attempts` requests in all (1..10), waiting backoffMs (0..60000), 2x, 4x … between them. */
export interface RetryPolicy {
  readonly attempts: number;
  readonly backoffMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = Object.freeze({ attempts: 3, backoffMs: 250 });

/** The endpoint as it may appear in messages: host[:port] only. */
export function endpointLabel(url: string): string {
  try {
    return new URL(url).host || 'the configured endpoint';
  } catch {
    return 'the configured endpoint';
  }
}

/** Statuses ScannerHttp retries: 429 and 5xx. */
const transientStatus = (status: number): boolean => status === 429 || status >= 500;

function connectionFailed(e: unknown): string {
  const code = networkErrorCode(e);
  return code ? `connection failed (${code})` : 'connection failed';
}

/**
 * HTTP for the REST scanners (XRP, Stellar), failing with ChainRpcErrors: the endpoint's headers and timeout (default 10 s),
 * no redirects, 429 / 5xx and network failures retried by the policy. The client is made on first
 * use, so an unusable endpoint (ChainRpcError RPC_CONFIG) or policy (RangeError) fails the first
 * call rather than the scanner's creation.
 */
export class ScannerHttp {
  /** How messages name the endpoint (see endpointLabel). */
  readonly label: string;
  private client: HttpJsonClient | undefined;

  constructor(private readonly endpoint: ChainEndpoint, private readonly retry: RetryPolicy = DEFAULT_RETRY) {
    this.label = endpointLabel(endpoint.url);
  }

  /**
   * One request whose JSON answer `judge` accepts (default: any). Failures are ChainRpcErrors
   * (`method` = what; responseStatus, attempts, the HttpJsonError as cause) worded "<what>: <label> unavailable after N attempt(s): <reason>" (RPC_UNAVAILABLE),
   * "<what>: <label> answered HTTP 400<refusal>" or "<what>: <label>: <reason>" (RPC_ERROR).
   */
  async request(what: string, req: HttpJsonRequest, judge?: (json: unknown) => Verdict, refusal?: (answer: HttpJsonAnswer) => string): Promise<unknown> {
    const http = this.http();
    try {
      return await http.request(req, readJson(judge, { transientStatus, ...(refusal ? { refusal } : {}) }));
    } catch (e) {
      throw isHttpJsonError(e) ? restFailure(e, what, this.label) : e;
    }
  }

  private http(): HttpJsonClient {
    if (this.client) return this.client;
    const { attempts, backoffMs } = this.retry;
    if (!Number.isInteger(attempts) || attempts < 1 || attempts > 10) throw new RangeError('retry attempts must be 1..10');
    if (!Number.isFinite(backoffMs) || backoffMs < 0 || backoffMs > 60_000) throw new RangeError('retry backoffMs must be 0..60000');
    try {
      this.client = new HttpJsonClient(this.endpoint, {
        attempts, retryDelayMs: backoffMs, maxRetryDelayMs: Infinity, defaultTimeoutMs: 10_000, redirect: 'error', describeNetworkError: connectionFailed,
      });
    } catch (e) {
      throw e instanceof TypeError ? new ChainRpcError('RPC_CONFIG', e.message) : e;
    }
    return this.client;
  }
}
