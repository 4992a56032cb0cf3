import { WcsError, type ErrorClass, type ErrorSpec } from './errors';

/**
 * The adapters' errors, as coded WcsErrors: `code` follows the catalogue's scheme in module 1009
 * (chain adapters), `errorName` is the stable name adapters always used ('RPC_UNAVAILABLE',
 * 'AMOUNT_BELOW_DUST', ...), `cause` the failure underneath. Messages never carry an
 * endpoint's credentials, path, query or headers.
 *
 * These are faults inside the service, never an API answer of their own (the API answers
 * INTERNAL_ERROR for them), so they are not in the API's ErrorCodes / docs/errors.md; their codes
 * are distinct from it (a test keeps them so).
 */

const spec = (code: number, name: string, errorClass: ErrorClass, httpStatus: number, message: string): ErrorSpec =>
  Object.freeze({ code, name, errorClass, httpStatus, message });

export const ChainErrorCodes = Object.freeze({
  // 1009 001 xxx: chain nodes (ChainRpcError)
  RPC_CONFIG: spec(1009001001, 'RPC_CONFIG', 'INTERNAL', 500, 'The chain node endpoint is unusable (not an http(s) URL, bad options)'),
  RPC_UNAVAILABLE: spec(1009001002, 'RPC_UNAVAILABLE', 'INTERNAL', 503, 'The chain node could not be reached or kept failing (network error, timeout, HTTP 429 / 5xx) after the bounded retries'),
  RPC_ERROR: spec(1009001003, 'RPC_ERROR', 'INTERNAL', 500, 'The chain node answered with an error, or refused the request'),
  RPC_BAD_RESPONSE: spec(1009001004, 'RPC_BAD_RESPONSE', 'INTERNAL', 500, 'The chain node answered something that is not the response expected (bad JSON, missing fields, wrong ids)'),
  RPC_INCONSISTENT: spec(1009001005, 'RPC_INCONSISTENT', 'INTERNAL', 503, "The chain node's answers contradict each other (the chain changed during the read, or a lagging backend)"),
  RPC_WRONG_CHAIN: spec(1009001006, 'RPC_WRONG_CHAIN', 'INTERNAL', 500, 'The chain node serves another chain than the one configured'),
  RPC_TRY_LATER: spec(1009001007, 'RPC_TRY_LATER', 'INTERNAL', 503, 'The chain node refused a transaction for now, not for good; broadcast it again later'),
  // 1009 002 xxx: transfer crafting (ChainTransferError)
  INVALID_REQUEST: spec(1009002001, 'INVALID_REQUEST', 'INTERNAL', 500, 'The transfer request cannot be crafted (malformed, or not for this chain)'),
  AMOUNT_BELOW_DUST: spec(1009002002, 'AMOUNT_BELOW_DUST', 'INTERNAL', 500, "The amount is below the destination's dust threshold"),
  DUST_AFTER_FEE: spec(1009002003, 'DUST_AFTER_FEE', 'INTERNAL', 500, 'What is left after the fee is dust: uneconomic to spend now'),
  // 1009002004 was INSUFFICIENT_INPUTS, now the typed CraftResult of a utxo crafter: never reused
  INVALID_SIGNATURE: spec(1009002005, 'INVALID_SIGNATURE', 'INTERNAL', 500, "A signature is missing, malformed, or not the key's signature of its payload"),
  INVALID_STATE: spec(1009002006, 'INVALID_STATE', 'INTERNAL', 500, 'The unsigned transfer is not one the crafter made (state or payloads altered)'),
  WRONG_SIGNER: spec(1009002007, 'WRONG_SIGNER', 'INTERNAL', 500, "The signature does not recover the request's sender: the key store signed with another key"),
} as const);

/**
 * Why a chain node exchange failed.
 * - RPC_CONFIG: the endpoint is unusable (not http(s), malformed, bad options).
 * - RPC_UNAVAILABLE: no usable answer after the bounded retries (network error, timeout, HTTP 429 / 5xx); retry later.
 * - RPC_ERROR: the node answered with an error, or refused the request (HTTP 401, 403, 404, ...).
 * - RPC_BAD_RESPONSE: the answer is not the response expected (bad JSON, missing fields, wrong ids).
 * - RPC_INCONSISTENT: the node's answers contradict each other (the chain changed during the read); ask again.
 * - RPC_WRONG_CHAIN: the node serves another chain than the one configured.
 * - RPC_TRY_LATER: the node refused a transaction for now, not for good; broadcast it again later.
 */
export type ChainRpcErrorName =
  | 'RPC_CONFIG' | 'RPC_UNAVAILABLE' | 'RPC_ERROR' | 'RPC_BAD_RESPONSE' | 'RPC_INCONSISTENT' | 'RPC_WRONG_CHAIN' | 'RPC_TRY_LATER';

export interface ChainRpcErrorInfo {
  /** The RPC method or API call (first one of a batch). */
  readonly method?: string | null;
  /** The node's numeric error code (JSON-RPC error.code), when it answered with one. */
  readonly rpcCode?: number | null;
  /** The node's textual result code (rippled's engine result, Horizon's tx_bad_seq, ...), when it gave one. */
  readonly nodeCode?: string | null;
  /** The node's own error text, scrubbed of endpoint secrets, when it sent one. */
  readonly nodeMessage?: string | null;
  /** HTTP status of the (last) answer, when one arrived. */
  readonly responseStatus?: number | null;
  /** Requests made before giving up. */
  readonly attempts?: number;
  readonly cause?: unknown;
}

/** A failed exchange with a chain's node (every adapter's scanner and transfer node). */
export class ChainRpcError extends WcsError {
  declare readonly errorName: ChainRpcErrorName;
  readonly method: string | null;
  readonly rpcCode: number | null;
  readonly nodeCode: string | null;
  readonly nodeMessage: string | null;
  readonly responseStatus: number | null;
  readonly attempts: number;

  constructor(name: ChainRpcErrorName, message: string, info: ChainRpcErrorInfo = {}) {
    super(ChainErrorCodes[name], { message, cause: info.cause });
    this.name = 'ChainRpcError';
    this.method = info.method ?? null;
    this.rpcCode = info.rpcCode ?? null;
    this.nodeCode = info.nodeCode ?? null;
    this.nodeMessage = info.nodeMessage ?? null;
    this.responseStatus = info.responseStatus ?? null;
    this.attempts = info.attempts ?? 1;
  }
}

export function isChainRpcError(e: unknown): e is ChainRpcError {
  return e instanceof ChainRpcError;
}

/**
 * Why a transfer must not be crafted or go out.
 * - INVALID_REQUEST: the request is malformed or not for this chain.
 * - AMOUNT_BELOW_DUST / DUST_AFTER_FEE: uneconomic amounts (`fee` says the fee of the latter).
 * Inputs that do not cover amount + fee are not an error: a utxo crafter returns them as its
 * typed CraftResult (`ok: false`, `shortfall`).
 * - INVALID_SIGNATURE / INVALID_STATE: combine() got a bad signature or an altered unsigned transfer (`inputIndex`).
 * - WRONG_SIGNER: the signature does not recover the request's sender.
 */
export type ChainTransferErrorName =
  | 'INVALID_REQUEST' | 'AMOUNT_BELOW_DUST' | 'DUST_AFTER_FEE' | 'INVALID_SIGNATURE' | 'INVALID_STATE' | 'WRONG_SIGNER';

/** A transfer an adapter's crafter refused. Amounts are bigint (base units). */
export class ChainTransferError extends WcsError {
  declare readonly errorName: ChainTransferErrorName;
  /** INVALID_SIGNATURE / INVALID_STATE: the input concerned, when one is. */
  readonly inputIndex: number | null;
  /** DUST_AFTER_FEE: the fee the transfer would pay, base units; null otherwise. */
  readonly fee: bigint | null;

  constructor(name: ChainTransferErrorName, message: string, extra: { inputIndex?: number; fee?: bigint; cause?: unknown } = {}) {
    super(ChainErrorCodes[name], { message, cause: extra.cause });
    this.name = 'ChainTransferError';
    this.inputIndex = extra.inputIndex ?? null;
    this.fee = extra.fee ?? null;
  }
}

export function isChainTransferError(e: unknown): e is ChainTransferError {
  return e instanceof ChainTransferError;
}

/** A chain adapter's error (ChainRpcError or ChainTransferError). */
export function isChainError(e: unknown): e is ChainRpcError | ChainTransferError {
  return e instanceof ChainRpcError || e instanceof ChainTransferError;
}

/**
 * The stable name of an adapter error: a chain error's errorName, or the string `code` of an
 * error from an adapter outside this repository (a string `code`).
 */
export function chainErrorName(e: unknown): string | undefined {
  if (isChainError(e)) return e.errorName;
  const code = (e as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}
