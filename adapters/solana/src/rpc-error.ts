import { isHttpJsonError, scannerErrorCode } from '@wcs/core';

/**
 * Stable codes of scanner errors. RPC_UNAVAILABLE: the node could not be reached or did not answer
 * usefully (network error, timeout, HTTP 408/429/5xx, a transient node error) after the bounded
 * retries; the engine retries the step later. RPC_ERROR: the node answered with an error or with
 * something the scanner cannot read; retrying the same request will not help without a change.
 * RPC_TRY_LATER (transfer node only): the node refused a transaction for now, not for good (node
 * behind, rate limited, blockhash not yet known, account in use); send the same bytes again later.
 */
export type SolanaRpcErrorCode = 'RPC_UNAVAILABLE' | 'RPC_ERROR' | 'RPC_TRY_LATER';

/**
 * An error of the Solana deposit scanner or transfer node. The message names the RPC method and
 * what went wrong, never the endpoint URL, its query string, user info or request headers (API
 * keys live there); the transfer node's messages name the endpoint by host[:port] only.
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

  constructor(code: SolanaRpcErrorCode, method: string, message: string, details: { httpStatus?: number; rpcCode?: number; attempts?: number; cause?: unknown } = {}) {
    super(`Solana RPC ${method}: ${message}`, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'SolanaRpcError';
    this.code = code;
    this.method = method;
    this.httpStatus = details.httpStatus;
    this.rpcCode = details.rpcCode;
    this.attempts = details.attempts ?? 1;
  }
}

/** A failure of the HTTP client as the scanner reports it (other errors pass through). */
export function solanaRpcError(method: string, e: unknown): unknown {
  if (!isHttpJsonError(e)) return e;
  return new SolanaRpcError(scannerErrorCode(e), method, e.message, { httpStatus: e.responseStatus ?? undefined, rpcCode: e.rpcCode ?? undefined, attempts: e.attempts, cause: e });
}
