/**
 * De-duplication keys of the events (docs/callbacks.md, "Events and bizTypes"; the spec for
 * recharge and withdraw). Delivery is at least once: an attempt whose ACK was lost is sent
 * again, a resend delivers the same event again, and the events feed carries the same events.
 * Handle an event only if its key is new, and record the key in the same transaction as what
 * the event causes (a credit, an order update).
 *
 * | event               | key fields (exactly as documented) |
 * |---------------------|------------------------------------|
 * | `recharge`          | (event, id, txStatus)              |
 * | `recharge_credited` | (event, id)                        |
 * | `withdraw`          | (appOrderNo, status)               |
 * | `collect`           | (itemId, status)                   |
 * | `chain_event`       | (event, id)                        |
 * | `transfer`          | (event, id)                        |
 * | `delegation`        | (event, id)                        |
 * | `test`              | none: nothing to de-duplicate      |
 *
 * dedupeKey() joins the fields with ':' behind the event name, so that one table can hold the
 * keys of every event type without collisions (`withdraw:ord-1:SUCCESS`, `recharge:7:SETTLED`).
 * The values cannot be confused: every field but appOrderNo is an integer or a fixed word, and
 * appOrderNo comes second to last, before a status that holds no ':'.
 */
import type { WebhookEvent, WebhookEventName } from './api.js';
import type { SeenStore } from './webhooks/stores.js';

/** The documented key fields of each event, in order. */
export const DEDUPE_FIELDS = {
  recharge: ['event', 'id', 'txStatus'],
  recharge_credited: ['event', 'id'],
  withdraw: ['appOrderNo', 'status'],
  collect: ['itemId', 'status'],
  chain_event: ['event', 'id'],
  transfer: ['event', 'id'],
  delegation: ['event', 'id'],
  test: [],
} as const satisfies Record<WebhookEventName, readonly string[]>;

/** The documented key of an event as a tuple of its field values, or null for `test` events (and unknown events). */
export function dedupeTuple(event: WebhookEvent): Array<string | number> | null {
  const fields = (DEDUPE_FIELDS as Record<string, readonly string[]>)[event.event];
  if (!fields || fields.length === 0) return null;
  return fields.map((f) => {
    const v = (event as unknown as Record<string, unknown>)[f];
    if (typeof v !== 'string' && typeof v !== 'number') throw new TypeError(`dedupeTuple: ${event.event} event without its ${f}`);
    return v;
  });
}

/**
 * The event's de-duplication key as one string: the event name, then the documented key
 * fields (the event name once, also where it is one of them), joined with ':'.
 * null for `test` events, which have nothing to de-duplicate.
 */
export function dedupeKey(event: WebhookEvent): string | null {
  const t = dedupeTuple(event);
  if (t === null) return null;
  const fields = (DEDUPE_FIELDS as Record<string, readonly string[]>)[event.event]!;
  return [event.event, ...t.filter((_, i) => fields[i] !== 'event')].join(':');
}

/**
 * Runs `handle` only for an event whose key the store has not seen, and records the key once
 * `handle` has succeeded (a failed handling is retried by the next delivery). Returns whether
 * it ran. Test events (no key) always run.
 *
 * Two deliveries of one event that arrive at the same moment can both run: the store is
 * checked before and written after. Where that matters, make the handler itself idempotent on
 * dedupeKey (a unique index).
 */
export async function handleOnce(store: SeenStore, event: WebhookEvent, handle: (event: WebhookEvent) => unknown): Promise<boolean> {
  const key = dedupeKey(event);
  if (key !== null && (await store.has(key))) return false;
  await handle(event);
  if (key !== null) await store.add(key);
  return true;
}
