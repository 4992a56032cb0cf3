/**
 * Errors the client throws, and the service's error codes (docs/errors.md).
 *
 *   WcsApiError      the service answered with its envelope {code, data, msg} and a non-zero code
 *                    (a business refusal on HTTP 200, or a request/auth/routing/internal error);
 *   WcsHttpError     an answer that is not the service's envelope (a proxy's 502 page, ...);
 *   WcsTimeoutError  no complete answer within the attempt's timeout;
 *   WcsNetworkError  the request failed below HTTP (connection refused, reset, DNS, TLS, ...).
 *
 * All extend WcsError. `attempts` says how many attempts were made (retries included).
 */

/** The service's error codes (docs/errors.md), by name. Match on `code`, never on the message. */
export const ErrorCode = {
  INVALID_JSON: 1000001001,
  BODY_TOO_LARGE: 1000001002,
  INVALID_PARAMETER: 1000001003,
  UNSUPPORTED_MEDIA_TYPE: 1000001004,
  BODY_NOT_ALLOWED: 1000001005,
  NOT_FOUND: 1000002001,
  METHOD_NOT_ALLOWED: 1000002002,
  RATE_LIMITED: 1000003001,
  AUTH_RATE_LIMITED: 1000003002,
  INTERNAL_ERROR: 1000009001,
  SERVICE_UNAVAILABLE: 1000009002,
  KEYSTORE_UNAVAILABLE: 1000009003,
  AUTH_HEADER_MISSING: 1001001001,
  AUTH_TIMESTAMP_INVALID: 1001001002,
  AUTH_TIMESTAMP_EXPIRED: 1001001003,
  AUTH_NONCE_INVALID: 1001001004,
  AUTH_NONCE_REPLAYED: 1001001005,
  AUTH_API_KEY_UNKNOWN: 1001001006,
  AUTH_SIGNATURE_INVALID: 1001001007,
  AUTH_SIGNATURE_MALFORMED: 1001001008,
  AUTH_APPLICATION_DISABLED: 1001001009,
  APPLICATION_NOT_FOUND: 1002001001,
  APPLICATION_INVALID: 1002001002,
  CALLBACK_URL_INVALID: 1002001003,
  CALLBACK_URL_FORBIDDEN: 1002001004,
  CHAIN_UNKNOWN: 1003001001,
  CHAIN_NOT_ENABLED: 1003001002,
  TOKEN_UNKNOWN: 1003001003,
  CHAIN_NOT_CONFIGURED: 1003001004,
  ADDRESS_MEMO_EXHAUSTED: 1004001001,
  ADDRESS_INDEX_EXHAUSTED: 1004001002,
  CALLBACK_TASK_NOT_FOUND: 1005001001,
  CALLBACK_TASK_BUSY: 1005001002,
  EVENT_CURSOR_INVALID: 1005002001,
  EVENT_CURSOR_FOREIGN: 1005002002,
  EVENT_CURSOR_EXPIRED: 1005002003,
  RECHARGE_NOT_FOUND: 1006001001,
  WITHDRAW_ORDER_DUPLICATE: 1007001001,
  WITHDRAW_NOT_FOUND: 1007001002,
  WITHDRAW_ADDRESS_INVALID: 1007002001,
  WITHDRAW_MEMO_INVALID: 1007002002,
  WITHDRAW_AMOUNT_INVALID: 1007002003,
  WITHDRAW_TOKEN_MISMATCH: 1007002004,
  WITHDRAW_CHAIN_UNAVAILABLE: 1007004001,
  HOT_WALLET_BALANCE_TOO_LOW: 1007004002,
  CHAIN_SUBSCRIPTION_NOT_FOUND: 1008001001,
  CHAIN_SUBSCRIPTION_CONFLICT: 1008001002,
  CHAIN_SUBSCRIPTION_LIMIT: 1008001003,
  SUBSCRIPTION_ADDRESS_INVALID: 1008001004,
  CHAIN_EVENTS_UNSUPPORTED: 1008001005,
  CHAIN_EVENT_NOT_FOUND: 1008002001,
  OUTFLOW_NOT_FOUND: 1008002002,
} as const;

export type ErrorCodeName = keyof typeof ErrorCode;

const NAMES = new Map<number, ErrorCodeName>(Object.entries(ErrorCode).map(([k, v]) => [v, k as ErrorCodeName]));

/** The name of a code (e.g. 1007001001 → WITHDRAW_ORDER_DUPLICATE), or undefined for a code this SDK version does not know. */
export function errorCodeName(code: number): ErrorCodeName | undefined {
  return NAMES.get(code);
}

/** The class of a code from its digits (docs/errors.md: 1 + module + group + sequence). */
export function errorClassOf(code: number): 'REQUEST' | 'ROUTING' | 'AUTH' | 'BUSINESS' | 'INTERNAL' | 'UNKNOWN' {
  if (code >= 1002000000 && code < 2000000000) return 'BUSINESS';
  if (code >= 1001000000 && code < 1002000000) return 'AUTH';
  if (code >= 1000009000 && code < 1000010000) return 'INTERNAL';
  if (code >= 1000002000 && code < 1000003000) return 'ROUTING';
  if (code >= 1000000000 && code < 1001000000) return 'REQUEST';
  return 'UNKNOWN';
}

/** The service's response envelope. */
export interface Envelope<T = unknown> {
  code: number;
  data: T;
  msg: string;
}

export interface RequestInfo {
  /** e.g. createAddress. */
  operation: string;
  method: string;
  path: string;
}

export class WcsError extends Error {
  override name = 'WcsError';
  /** The operation, method and path of the request. */
  readonly request: RequestInfo;
  /** Attempts made, retries included. */
  readonly attempts: number;

  constructor(message: string, request: RequestInfo, attempts: number, options?: { cause?: unknown }) {
    super(message, options);
    this.request = request;
    this.attempts = attempts;
  }
}

/** The service refused the request: its envelope's code, msg and data, with the HTTP status. */
export class WcsApiError extends WcsError {
  override name = 'WcsApiError';
  /** The envelope's code (ErrorCode). */
  readonly code: number;
  /** The envelope's msg (also the Error's message, prefixed with the code). */
  readonly msg: string;
  /** The envelope's data: null, except e.g. /readyz's checks. */
  readonly data: unknown;
  readonly httpStatus: number;
  /** The whole envelope as received. */
  readonly envelope: Envelope;
  /** The X-Request-Id header of the answer: quote it when reporting a problem. */
  readonly requestId: string | null;
  /** Retry-After in seconds, when the answer had one (429; a 503 of an operation retried on it). */
  readonly retryAfterSeconds: number | null;

  constructor(envelope: Envelope, httpStatus: number, request: RequestInfo, attempts: number, requestId: string | null, retryAfterSeconds: number | null = null) {
    const name = errorCodeName(envelope.code);
    super(`${envelope.code}${name ? ` ${name}` : ''}: ${envelope.msg} (HTTP ${httpStatus}, ${request.method} ${request.path})`, request, attempts);
    this.code = envelope.code;
    this.msg = envelope.msg;
    this.data = envelope.data;
    this.httpStatus = httpStatus;
    this.envelope = envelope;
    this.requestId = requestId;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  /** The code's name in ErrorCode, if this SDK version knows it. */
  get codeName(): ErrorCodeName | undefined {
    return errorCodeName(this.code);
  }

  /** A business refusal (HTTP 200, BUSINESS class): the request was read and judged; retrying it unchanged gives the same answer. */
  get isBusinessError(): boolean {
    return errorClassOf(this.code) === 'BUSINESS';
  }
}

/** An HTTP answer that is not the service's envelope (e.g. a reverse proxy's error page). */
export class WcsHttpError extends WcsError {
  override name = 'WcsHttpError';
  readonly httpStatus: number;
  /** The first 1000 characters of the answer. */
  readonly bodyText: string;
  readonly requestId: string | null;

  constructor(httpStatus: number, bodyText: string, request: RequestInfo, attempts: number, requestId: string | null) {
    super(`HTTP ${httpStatus} without the service's envelope (${request.method} ${request.path}): ${bodyText.slice(0, 200)}`, request, attempts);
    this.httpStatus = httpStatus;
    this.bodyText = bodyText.slice(0, 1000);
    this.requestId = requestId;
  }
}

/** The request failed below HTTP: connection refused or reset, DNS, TLS, an aborted request. */
export class WcsNetworkError extends WcsError {
  override name = 'WcsNetworkError';
}

/** No complete answer within the attempt's timeout (timeoutMs). */
export class WcsTimeoutError extends WcsNetworkError {
  override name = 'WcsTimeoutError';
  readonly timeoutMs: number;

  constructor(timeoutMs: number, request: RequestInfo, attempts: number) {
    super(`no answer within ${timeoutMs} ms (${request.method} ${request.path})`, request, attempts);
    this.timeoutMs = timeoutMs;
  }
}
