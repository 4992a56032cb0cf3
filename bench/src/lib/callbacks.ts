/**
 * What the callback-delivery scenario's three processes share: the event body (the same
 * template for the dispatcher's tasks and the bare POST loop), the receiver's ACK, its
 * control paths and what it reports.
 */

/** The receiver's callback path (the application's RECHARGE callback URL points here). */
export const CALLBACK_PATH = '/cb';
/** The receiver's ACK: HTTP 200 with a code 0 JSON object (docs/callbacks.md, ACK rule). */
export const ACK_BODY = '{"code":0}';
/** Control requests to the receiver (never counted as deliveries). */
export const CONTROL = { count: '/_bench/count', take: '/_bench/take' } as const;

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');

/**
 * A deposit event of realistic size (about 430 bytes), deterministic in `id`, so the
 * receiver can check every body it got byte for byte. `id` comes first: the receiver reads
 * it with {@link bodyId}.
 */
export function callbackPayload(id: number): Record<string, unknown> {
  return {
    id,
    event: 'recharge',
    bizType: 'RECHARGE',
    chainCode: 'ETH',
    tokenSymbol: 'USDT',
    contractAddress: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
    address: `0x${hex(id, 40)}`,
    externalUserId: `user-${id}`,
    txHash: `0x${hex(id, 64)}`,
    logIndex: 0,
    amount: '125.500000',
    confirmations: 12,
    txStatus: 'SUCCESS',
    createTime: '2026-01-01T00:00:00',
  };
}

/** The exact body bytes (as text) of event `id`: JSON.stringify of the payload, as the outbox stores it. */
export const callbackBody = (id: number): string => JSON.stringify(callbackPayload(id));

const ID_RE = /^\{"id":(\d+),/;

/** The event id at the start of a body, or null. */
export function bodyId(body: string): number | null {
  const m = ID_RE.exec(body);
  return m ? Number(m[1]) : null;
}

/** GET CONTROL.count */
export interface ReceiverCount {
  count: number;
  /** Wall-clock ms (Date.now() in the receiver) of the first and last request since the last take. */
  first: number | null;
  last: number | null;
}

/** What the receiver checked, after the fact, over the requests of one take. */
export interface ReceiverChecks {
  /** Requests that were not POST CALLBACK_PATH with Content-Type application/json. */
  wrongRequest: number;
  /** Bodies that do not start with an event id, or are not exactly callbackBody(id). */
  badBody: number;
  /** Requests whose X-Api-Key is not the application's. */
  wrongApiKey: number;
  /** verify=1 only: X-Signature checked against the application's secret (spec signature over the raw body). */
  signatureOk: number;
  signatureBad: number;
  /** verify=1 only: X-Nonce seen twice within the take. */
  duplicateNonces: number;
  /** verify=1 only: largest arrival - X-Timestamp (ms): from signing to the receiver. */
  maxSignToArrivalMs: number | null;
  /** A few examples of what was wrong. */
  samples: string[];
}

/** POST CONTROL.take: everything since the last take (which it clears). Arrays are parallel. */
export interface ReceiverTake {
  count: number;
  /** Arrival times: Date.now() in the receiver when the request's headers were parsed. */
  at: number[];
  /** Event id from the body (-1 when unreadable). */
  id: number[];
  /** X-Nonce per request (verify=1 only, else empty). */
  nonce: string[];
  checks: ReceiverChecks;
}
