import { isHttpJsonError, scannerErrorCode } from '@wcs/core';

/**
 * Stable codes of scanner errors. RPC_UNAVAILABLE: the node could not be reached or did not answer
 * usefully (network error, timeout, HTTP 408/429/5xx, a transient node error) after the bounded
 * retries; the engine retries the step later. RPC_ERROR: the node answered with an error or with
 * something the scanner cannot read; retrying the same request will not help without a change.
 * RPC_TRY_LATER (the transfer node's broadcast only): the node refused the transaction for now,
 * not for good (CPU / NET / RAM exhausted, deadline exceeded, node busy): send the same
 * transaction again later; its expiration bounds how long that can go on.
 */
export type EosRpcErrorCode = 'RPC_UNAVAILABLE' | 'RPC_ERROR' | 'RPC_TRY_LATER';

/**
 * An error of the EOS deposit scanner. The message names the API call and what went wrong, never
 * the endpoint URL, its query string, user info or request headers (API keys live there).
 */
export class EosRpcError extends Error {
  readonly code: EosRpcErrorCode;
  /** The API call (get_info, get_actions). */
  readonly method: string;
  readonly httpStatus: number | undefined;
  /** The node's own error code, when it answered with one. */
  readonly rpcCode: number | undefined;
  /** Requests made before giving up. */
  readonly attempts: number;

  constructor(code: EosRpcErrorCode, method: string, message: string, details: { httpStatus?: number; rpcCode?: number; attempts?: number; cause?: unknown } = {}) {
    super(`EOS API ${method}: ${message}`, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'EosRpcError';
    this.code = code;
    this.method = method;
    this.httpStatus = details.httpStatus;
    this.rpcCode = details.rpcCode;
    this.attempts = details.attempts ?? 1;
  }
}

/** A failure of the HTTP client as the scanner reports it (other errors pass through). */
export function eosRpcError(method: string, e: unknown): unknown {
  if (!isHttpJsonError(e)) return e;
  return new EosRpcError(scannerErrorCode(e), method, e.message, { httpStatus: e.responseStatus ?? undefined, rpcCode: e.rpcCode ?? undefined, attempts: e.attempts, cause: e });
}
