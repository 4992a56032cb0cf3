/**
 * @wcs/sdk — the merchant SDK of the wallet custody service.
 *
 *   client      WcsClient: every API operation, typed from server/openapi.json, signed, with
 *               timeouts and safe retries; the events feed (page, iterate)
 *   webhooks    WebhookVerifier; expressWebhook + captureRawBody (express); fetchWebhookHandler
 *               (fetch / Next.js); replay store
 *   dedupe      dedupeKey per event, as documented; an in-memory seen-set
 *
 * This entry point runs anywhere with fetch and WebCrypto (Node >= 20, browsers, edge runtimes);
 * on Node the package's `node` condition (src/node.ts) uses node:crypto instead, which is faster.
 */
export * from './api.js';
export { WcsClient, ROUTES, EVENTS_FEED_PATH, sameWithdrawOrder, type WcsClientOptions, type Readiness, type RouteName } from './client.js';
export { ErrorCode, errorCodeName, errorClassOf, WcsError, WcsApiError, WcsHttpError, WcsNetworkError, WcsTimeoutError, type ErrorCodeName, type Envelope, type RequestInfo } from './errors.js';
export { DEFAULT_RETRY, DEFAULT_TIMEOUT_MS, buildQuery, type AttemptInfo, type CallOptions, type RetryClass, type RetryOptions, type Route } from './http.js';
export { RequestSigner, signRequest, stringToSign, stripQuery, newNonce, EMPTY_BODY_SHA256, type SignInput, type SignResult, type SignedHeaders } from './signing.js';
export { paginate, type Page, type PagedQuery } from './pagination.js';
export { EventFeedIterator, feedPages, type BizType, type EventFeedItem, type EventFeedPage, type EventFeedQuery } from './feed.js';
export { normalizeDecimal, decimalEquals } from './decimal.js';
export { DEDUPE_FIELDS, dedupeKey, dedupeTuple, handleOnce } from './dedupe.js';
export {
  WebhookVerifier, WebhookVerificationError, parseWebhookEvent, callbackPath, WEBHOOK_FAILURE_REASONS,
  type WebhookVerifierOptions, type WebhookRequest, type WebhookFailureReason, type VerificationFailure, type VerifyResult, type AuthenticateResult, type Authenticated, type Verified, type HeaderBag,
} from './webhooks/verifier.js';
export { InMemoryReplayStore, InMemorySeenSet, TtlSet, type ReplayStore, type SeenStore, type TtlSetOptions, type InMemorySeenSetOptions } from './webhooks/stores.js';
export { ACK_BODY, processWebhook, type WebhookContext, type WebhookHandlerOptions, type WebhookOutcome } from './webhooks/handler.js';
export { expressWebhook, captureRawBody, WebhookConfigurationError, type ExpressWebhookOptions, type ExpressLikeRequest, type ExpressLikeResponse, type NextFunctionLike } from './webhooks/express.js';
export { fetchWebhookHandler, type FetchWebhookOptions } from './webhooks/fetch.js';
export { resolveBackend as cryptoBackend, type CryptoPreference } from './crypto.js';
