import { ChainRpcError, isHttpJsonError, scannerErrorCode, type ChainRpcErrorInfo, type ChainRpcErrorName } from '@wcs/core';

/**
 * The EOS scanner's and transfer node's errors are core's ChainRpcError, worded
 * "EOS API <call>: <what went wrong>" (never the endpoint URL, its query string, user info or
 * request headers: API keys live there), with `method` the API call (get_info, get_actions, …),
 * `rpcCode` nodeos's own error code and `responseStatus` the HTTP status when there were.
 * RPC_UNAVAILABLE: the node could not be reached or did not answer usefully (network error,
 * timeout, HTTP 408/429/5xx, a transient node error) after the bounded retries. RPC_ERROR: the
 * node answered with an error or with something unreadable. RPC_TRY_LATER (broadcast only): the
 * node refused the transaction for now, not for good (CPU / NET / RAM exhausted, deadline
 * exceeded, node busy): send the same transaction again later.
 */
export function eosError(name: ChainRpcErrorName, method: string, message: string, info: Omit<ChainRpcErrorInfo, 'method'> = {}): ChainRpcError {
  return new ChainRpcError(name, `EOS API ${method}: ${message}`, { ...info, method });
}

/** A failure of the HTTP client as a ChainRpcError (other errors pass through); `prefix` starts the message. */
export function eosHttpError(method: string, e: unknown, prefix = ''): unknown {
  if (!isHttpJsonError(e)) return e;
  return eosError(scannerErrorCode(e), method, `${prefix}${e.message}`, { responseStatus: e.responseStatus, rpcCode: e.rpcCode, attempts: e.attempts, cause: e });
}
