/**
 * Stable error catalogue. Codes follow the spec's scheme (1007004002 = hot wallet
 * balance too low): 1 + module (3 digits) + group (3 digits) + sequence (3 digits).
 * The table in docs/errors.md is generated from the same data; a test keeps them equal.
 */
export type ErrorClass = 'REQUEST' | 'ROUTING' | 'AUTH' | 'BUSINESS' | 'INTERNAL';

export interface ErrorSpec {
  readonly code: number;
  readonly name: string;
  readonly httpStatus: number;
  readonly errorClass: ErrorClass;
  readonly message: string;
}

function spec(code: number, name: string, errorClass: ErrorClass, httpStatus: number, message: string): ErrorSpec {
  return Object.freeze({ code, name, errorClass, httpStatus, message });
}

export const ErrorCodes = Object.freeze({
  // 1000 001 xxx: request format
  INVALID_JSON: spec(1000001001, 'INVALID_JSON', 'REQUEST', 400, 'Request body is not valid JSON'),
  BODY_TOO_LARGE: spec(1000001002, 'BODY_TOO_LARGE', 'REQUEST', 413, 'Request body exceeds the size limit'),
  INVALID_PARAMETER: spec(1000001003, 'INVALID_PARAMETER', 'REQUEST', 400, 'A request parameter is missing or invalid'),
  UNSUPPORTED_MEDIA_TYPE: spec(1000001004, 'UNSUPPORTED_MEDIA_TYPE', 'REQUEST', 415, 'Request bodies must be application/json'),
  BODY_NOT_ALLOWED: spec(1000001005, 'BODY_NOT_ALLOWED', 'REQUEST', 400, 'This operation takes no request body'),
  // 1000 002 xxx: routing
  NOT_FOUND: spec(1000002001, 'NOT_FOUND', 'ROUTING', 404, 'No such endpoint'),
  METHOD_NOT_ALLOWED: spec(1000002002, 'METHOD_NOT_ALLOWED', 'ROUTING', 405, 'Method not allowed on this endpoint'),
  // 1000 003 xxx: rate limits (docs/api.md "Rate limits")
  RATE_LIMITED: spec(1000003001, 'RATE_LIMITED', 'REQUEST', 429, 'Too many requests for this API key; retry after the Retry-After seconds'),
  AUTH_RATE_LIMITED: spec(1000003002, 'AUTH_RATE_LIMITED', 'REQUEST', 429, 'Too many failed authentications from this address; retry after the Retry-After seconds'),
  // 1000 009 xxx: internal
  INTERNAL_ERROR: spec(1000009001, 'INTERNAL_ERROR', 'INTERNAL', 500, 'Internal error'),
  SERVICE_UNAVAILABLE: spec(1000009002, 'SERVICE_UNAVAILABLE', 'INTERNAL', 503, 'Service temporarily unavailable'),
  KEYSTORE_UNAVAILABLE: spec(1000009003, 'KEYSTORE_UNAVAILABLE', 'INTERNAL', 503, 'The key store is unavailable; retry later'),
  // 1001 001 xxx: authentication
  AUTH_HEADER_MISSING: spec(1001001001, 'AUTH_HEADER_MISSING', 'AUTH', 401, 'A required authentication header is missing'),
  AUTH_TIMESTAMP_INVALID: spec(1001001002, 'AUTH_TIMESTAMP_INVALID', 'AUTH', 401, 'X-Timestamp must be 13-digit UNIX milliseconds'),
  AUTH_TIMESTAMP_EXPIRED: spec(1001001003, 'AUTH_TIMESTAMP_EXPIRED', 'AUTH', 401, 'X-Timestamp differs from server time by more than 300000 ms'),
  AUTH_NONCE_INVALID: spec(1001001004, 'AUTH_NONCE_INVALID', 'AUTH', 401, 'X-Nonce must be 8 to 128 characters of [A-Za-z0-9._~+/=-]'),
  AUTH_NONCE_REPLAYED: spec(1001001005, 'AUTH_NONCE_REPLAYED', 'AUTH', 401, 'X-Nonce was already used with this API key within 10 minutes'),
  AUTH_API_KEY_UNKNOWN: spec(1001001006, 'AUTH_API_KEY_UNKNOWN', 'AUTH', 401, 'Unknown API key'),
  AUTH_SIGNATURE_INVALID: spec(1001001007, 'AUTH_SIGNATURE_INVALID', 'AUTH', 401, 'Signature does not match'),
  AUTH_SIGNATURE_MALFORMED: spec(1001001008, 'AUTH_SIGNATURE_MALFORMED', 'AUTH', 401, 'X-Signature must be 64 lowercase hex characters'),
  AUTH_APPLICATION_DISABLED: spec(1001001009, 'AUTH_APPLICATION_DISABLED', 'AUTH', 403, 'The application is disabled'),
  // 1002 001 xxx: applications (operator-side validation, also used by the CLI)
  APPLICATION_NOT_FOUND: spec(1002001001, 'APPLICATION_NOT_FOUND', 'BUSINESS', 200, 'Application not found'),
  APPLICATION_INVALID: spec(1002001002, 'APPLICATION_INVALID', 'BUSINESS', 200, 'Application settings are invalid'),
  CALLBACK_URL_INVALID: spec(1002001003, 'CALLBACK_URL_INVALID', 'BUSINESS', 200, 'Callback URL is invalid'),
  CALLBACK_URL_FORBIDDEN: spec(1002001004, 'CALLBACK_URL_FORBIDDEN', 'BUSINESS', 200, 'Callback URL resolves to a loopback, private, link-local or metadata address'),
  // 1003 001 xxx: chains and tokens
  CHAIN_UNKNOWN: spec(1003001001, 'CHAIN_UNKNOWN', 'BUSINESS', 200, 'Unknown chain code'),
  CHAIN_NOT_ENABLED: spec(1003001002, 'CHAIN_NOT_ENABLED', 'BUSINESS', 200, 'Chain is not enabled for this application'),
  TOKEN_UNKNOWN: spec(1003001003, 'TOKEN_UNKNOWN', 'BUSINESS', 200, 'Unknown chainTokenId'),
  CHAIN_NOT_CONFIGURED: spec(1003001004, 'CHAIN_NOT_CONFIGURED', 'BUSINESS', 200, 'Chain is not fully configured on this service'),
  // 1004 001 xxx: addresses
  ADDRESS_MEMO_EXHAUSTED: spec(1004001001, 'ADDRESS_MEMO_EXHAUSTED', 'BUSINESS', 200, 'No memo is left for the shared deposit address'),
  ADDRESS_INDEX_EXHAUSTED: spec(1004001002, 'ADDRESS_INDEX_EXHAUSTED', 'BUSINESS', 200, 'No derivation index is left for this application'),
  // 1005 001 xxx: callbacks
  CALLBACK_TASK_NOT_FOUND: spec(1005001001, 'CALLBACK_TASK_NOT_FOUND', 'BUSINESS', 200, 'Callback task not found'),
  CALLBACK_TASK_BUSY: spec(1005001002, 'CALLBACK_TASK_BUSY', 'BUSINESS', 200, 'Callback task is queued or being delivered; it cannot be resent now'),
  // 1005 002 xxx: the events feed (docs/events-feed.md)
  EVENT_CURSOR_INVALID: spec(1005002001, 'EVENT_CURSOR_INVALID', 'BUSINESS', 200, 'after is not an events feed cursor issued by this service'),
  EVENT_CURSOR_FOREIGN: spec(1005002002, 'EVENT_CURSOR_FOREIGN', 'BUSINESS', 200, 'The cursor was issued to another application'),
  EVENT_CURSOR_EXPIRED: spec(1005002003, 'EVENT_CURSOR_EXPIRED', 'BUSINESS', 200, 'The cursor points before the retention window; events after it were pruned. Restart from the oldest retained event and reconcile'),
  // 1006 001 xxx: deposits
  RECHARGE_NOT_FOUND: spec(1006001001, 'RECHARGE_NOT_FOUND', 'BUSINESS', 200, 'Recharge record not found'),
  // 1007 001 xxx: withdrawal orders
  WITHDRAW_ORDER_DUPLICATE: spec(1007001001, 'WITHDRAW_ORDER_DUPLICATE', 'BUSINESS', 200, 'appOrderNo was already used by this application; the existing order is unchanged'),
  WITHDRAW_NOT_FOUND: spec(1007001002, 'WITHDRAW_NOT_FOUND', 'BUSINESS', 200, 'Withdrawal order not found'),
  // 1007 002 xxx: withdrawal item checks
  WITHDRAW_ADDRESS_INVALID: spec(1007002001, 'WITHDRAW_ADDRESS_INVALID', 'BUSINESS', 200, 'toAddress is not a valid address for this chain and network'),
  WITHDRAW_MEMO_INVALID: spec(1007002002, 'WITHDRAW_MEMO_INVALID', 'BUSINESS', 200, 'toMemo is not allowed, missing or malformed for this chain'),
  WITHDRAW_AMOUNT_INVALID: spec(1007002003, 'WITHDRAW_AMOUNT_INVALID', 'BUSINESS', 200, 'amount must be a decimal string greater than 0 with no more places than the token has'),
  WITHDRAW_TOKEN_MISMATCH: spec(1007002004, 'WITHDRAW_TOKEN_MISMATCH', 'BUSINESS', 200, 'chainTokenId does not belong to chainCode'),
  // 1007 004 xxx: withdrawal funding (1007004002 given by the spec)
  WITHDRAW_CHAIN_UNAVAILABLE: spec(1007004001, 'WITHDRAW_CHAIN_UNAVAILABLE', 'BUSINESS', 200, 'Withdrawals on this chain are not available on this service now (no node, or no fee quote yet)'),
  HOT_WALLET_BALANCE_TOO_LOW: spec(1007004002, 'HOT_WALLET_BALANCE_TOO_LOW', 'BUSINESS', 200, 'Hot wallet balance is insufficient for this withdrawal'),
  // 1008 001 xxx: chain event subscriptions (docs/chain-events.md)
  CHAIN_SUBSCRIPTION_NOT_FOUND: spec(1008001001, 'CHAIN_SUBSCRIPTION_NOT_FOUND', 'BUSINESS', 200, 'Chain event subscription not found'),
  CHAIN_SUBSCRIPTION_CONFLICT: spec(1008001002, 'CHAIN_SUBSCRIPTION_CONFLICT', 'BUSINESS', 200, 'appSubscriptionNo was already used by this application with other settings; the existing subscription is unchanged'),
  CHAIN_SUBSCRIPTION_LIMIT: spec(1008001003, 'CHAIN_SUBSCRIPTION_LIMIT', 'BUSINESS', 200, 'A limit on subscriptions or monitored addresses would be exceeded'),
  SUBSCRIPTION_ADDRESS_INVALID: spec(1008001004, 'SUBSCRIPTION_ADDRESS_INVALID', 'BUSINESS', 200, 'A monitored address is not a valid address for this chain and network'),
  CHAIN_EVENTS_UNSUPPORTED: spec(1008001005, 'CHAIN_EVENTS_UNSUPPORTED', 'BUSINESS', 200, 'Chain events are not available for this chain on this service'),
  // 1008 002 xxx: chain events and custody outflows
  CHAIN_EVENT_NOT_FOUND: spec(1008002001, 'CHAIN_EVENT_NOT_FOUND', 'BUSINESS', 200, 'Chain event not found'),
  OUTFLOW_NOT_FOUND: spec(1008002002, 'OUTFLOW_NOT_FOUND', 'BUSINESS', 200, 'Custody outflow record not found'),
} as const);

export type ErrorName = keyof typeof ErrorCodes;

export function allErrorSpecs(): ErrorSpec[] {
  return Object.values(ErrorCodes).slice().sort((a, b) => a.code - b.code);
}

export interface WcsErrorOptions {
  /** Overrides the catalogue message with a more precise one (never secret material). */
  message?: string;
  /** Machine-readable details safe to show a client (e.g. the offending field name). */
  details?: Record<string, unknown>;
  cause?: unknown;
  /** HTTP headers to add to the response (e.g. Allow on 405). */
  headers?: Record<string, string>;
}

/** An error with a stable code and a cause chain (after viem's BaseError). */
export class WcsError extends Error {
  readonly code: number;
  readonly errorName: string;
  readonly httpStatus: number;
  readonly errorClass: ErrorClass;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(specOrName: ErrorSpec | ErrorName, options: WcsErrorOptions = {}) {
    const s = typeof specOrName === 'string' ? ErrorCodes[specOrName] : specOrName;
    super(options.message ?? s.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WcsError';
    this.code = s.code;
    this.errorName = s.name;
    this.httpStatus = s.httpStatus;
    this.errorClass = s.errorClass;
    this.details = options.details;
    this.headers = options.headers;
  }

  /** Walks the cause chain and returns the first cause matching the predicate. */
  walk(predicate: (e: unknown) => boolean): unknown {
    let cur: unknown = this;
    const seen = new Set<unknown>();
    while (cur && !seen.has(cur)) {
      if (predicate(cur)) return cur;
      seen.add(cur);
      cur = (cur as { cause?: unknown }).cause;
    }
    return undefined;
  }
}

export function isWcsError(e: unknown): e is WcsError {
  return e instanceof WcsError;
}

/** Shorthand for a parameter validation error naming the field. */
export function invalidParameter(field: string, problem: string): WcsError {
  return new WcsError('INVALID_PARAMETER', { message: `${field}: ${problem}`, details: { field } });
}
