/**
 * What the express middleware and the fetch handler share: verify a callback, de-duplicate it,
 * run the merchant's handler, and say what to answer.
 *
 * The ACK rule (spec "ACK rule", docs/callbacks.md): only HTTP 200 with a body holding
 * {"code":0} (or the word success / ok) is a success; anything else makes the service retry
 * (60 s × 2^n, 10 retries). So:
 *
 *   verified, handled (or already seen)   200 {"code":0}
 *   verification failed                   401 {"code":1,"msg":"<reason>"}   (400 for a bad body)
 *   the handler threw                     500 {"code":1,"msg":"handler failed"} — retried later
 */
import type { WebhookEvent } from '../api.js';
import { dedupeKey } from '../dedupe.js';
import type { SeenStore, ReplayStore } from './stores.js';
import { WebhookVerifier, type VerificationFailure, type WebhookRequest, type WebhookVerifierOptions } from './verifier.js';
import type { CryptoPreference } from '../crypto.js';

/** The body that acknowledges a callback. */
export const ACK_BODY = '{"code":0}';

export interface WebhookContext<R = unknown> {
  /** The framework's request object (express Request, fetch Request). */
  request: R;
  nonce: string;
  /** X-Timestamp, epoch ms. */
  timestamp: number;
  apiKey: string;
  /** dedupeKey(event): null for test events. */
  dedupeKey: string | null;
  /** The raw body bytes that were verified. */
  rawBody: Uint8Array | string;
}

export interface WebhookHandlerOptions<R = unknown> {
  /** The application's API secret (or several during a rotation). Or give `verifier`. */
  apiSecret?: string | readonly string[];
  /** A verifier made beforehand (its options win over apiSecret, apiKey, toleranceMs, replayStore, crypto). */
  verifier?: WebhookVerifier;
  apiKey?: string;
  toleranceMs?: number;
  replayStore?: ReplayStore;
  crypto?: CryptoPreference;
  /** Handles one verified event. The ACK is sent once it resolves; if it throws, the callback is refused (500) and the service retries it. */
  onEvent: (event: WebhookEvent, context: WebhookContext<R>) => unknown;
  /**
   * Events whose dedupeKey this store has seen are acknowledged without calling onEvent; a key
   * is added once onEvent has succeeded. E.g. new InMemorySeenSet().
   */
  seen?: SeenStore;
  /** Told of every refused callback (e.g. to log it). */
  onVerificationFailure?: (failure: VerificationFailure, request: R) => void;
  /** Told when onEvent throws (default: console.error). */
  onError?: (error: unknown, event: WebhookEvent, request: R) => void;
}

export interface WebhookOutcome {
  status: number;
  body: string;
  /** What happened: handled, duplicate (seen before, ACKed), refused, failed (the handler threw). */
  result: 'handled' | 'duplicate' | 'refused' | 'failed';
  event?: WebhookEvent;
  failure?: VerificationFailure;
  error?: unknown;
}

export function verifierFrom(o: Pick<WebhookHandlerOptions, 'apiSecret' | 'verifier' | 'apiKey' | 'toleranceMs' | 'replayStore' | 'crypto'>): WebhookVerifier {
  if (o.verifier) return o.verifier;
  if (o.apiSecret === undefined) throw new TypeError('@wcs/sdk: give apiSecret (or a verifier)');
  const vo: WebhookVerifierOptions = { apiSecret: o.apiSecret };
  if (o.apiKey !== undefined) vo.apiKey = o.apiKey;
  if (o.toleranceMs !== undefined) vo.toleranceMs = o.toleranceMs;
  if (o.replayStore !== undefined) vo.replayStore = o.replayStore;
  if (o.crypto !== undefined) vo.crypto = o.crypto;
  return new WebhookVerifier(vo);
}

const refusal = (f: VerificationFailure): WebhookOutcome => ({
  status: f.reason === 'MALFORMED_BODY' || f.reason === 'UNKNOWN_EVENT' ? 400 : 401,
  body: JSON.stringify({ code: 1, msg: f.reason }),
  result: 'refused',
  failure: f,
});

/** Verifies, de-duplicates and handles one callback; never throws for a bad callback or a failing handler. */
export async function processWebhook<R>(verifier: WebhookVerifier, req: WebhookRequest, request: R, o: WebhookHandlerOptions<R>): Promise<WebhookOutcome> {
  const v = await verifier.verify(req);
  if (!v.ok) {
    o.onVerificationFailure?.(v, request);
    return refusal(v);
  }
  const key = dedupeKey(v.event);
  if (key !== null && o.seen && (await o.seen.has(key))) return { status: 200, body: ACK_BODY, result: 'duplicate', event: v.event };
  try {
    await o.onEvent(v.event, { request, nonce: v.nonce, timestamp: v.timestamp, apiKey: v.apiKey, dedupeKey: key, rawBody: req.body });
  } catch (error) {
    if (o.onError) o.onError(error, v.event, request);
    else console.error(`@wcs/sdk: the webhook handler failed for ${key ?? v.event.event} (the callback is refused and will be retried):`, error);
    return { status: 500, body: JSON.stringify({ code: 1, msg: 'handler failed' }), result: 'failed', event: v.event, error };
  }
  if (key !== null && o.seen) await o.seen.add(key);
  return { status: 200, body: ACK_BODY, result: 'handled', event: v.event };
}
