/**
 * The events feed: GET /api/v1/wallet/events?after=<cursor>&limit=<n> (signed like every request).
 *
 * Every event the service sends as a callback is also readable, in order, from the feed: a
 * merchant that was down, lost callbacks, or wants to reconcile, reads from the cursor it saved
 * last and sees the same event objects (`payload`) the webhooks carry, with the same
 * de-duplication keys (dedupeKey), so feed and webhooks can feed one idempotent handler.
 *
 *   after   optional opaque cursor; omitted: from the oldest retained event
 *   limit   optional 1..500, default 100
 *   data    { list: [{ id, cursor, bizType, bizId, createTime, payload }], nextCursor, hasMore }
 *
 * Pass nextCursor as `after` next time (it is never null). Errors: 1005002001 EVENT_CURSOR_INVALID,
 * 1005002002 EVENT_CURSOR_FOREIGN (another application's cursor), 1005002003 EVENT_CURSOR_EXPIRED
 * (the cursor points before the retention window: restart without `after` and reconcile),
 * 1000001003 INVALID_PARAMETER (a bad limit).
 */
import type { WebhookEvent } from './api.js';
import type { CallOptions } from './http.js';

export type BizType = 'RECHARGE' | 'WITHDRAW' | 'COLLECT' | 'TRANSFER' | 'CHAIN_EVENT';

/** One event of the feed. */
export interface EventFeedItem<E = WebhookEvent> {
  /** The callback task's id (as in callback/tasks). */
  id: number;
  /** The position just after this event: save it, and pass it as `after` to resume after it. */
  cursor: string;
  bizType: BizType;
  /** The id of the record the event reports (recharge, withdrawal, collection item, chain event, outflow); 0 for test events. */
  bizId: number;
  /** When the event was written: YYYY-MM-DDThh:mm:ss, UTC. */
  createTime: string;
  /** The exact event object the webhook carries ({event: 'recharge', ...}). */
  payload: E;
}

export interface EventFeedQuery {
  /** Resume after this cursor (a nextCursor or an item's cursor); omitted: from the oldest retained event. */
  after?: string;
  /** Events per page, 1 to 500 (default 100). */
  limit?: number;
}

export interface EventFeedPage<E = WebhookEvent> {
  list: Array<EventFeedItem<E>>;
  /** Pass as `after` next time; never null (the same cursor again when nothing new came). */
  nextCursor: string;
  /** More events are waiting after nextCursor. */
  hasMore: boolean;
}

export type FetchFeedPage = (query: EventFeedQuery, options?: CallOptions) => Promise<EventFeedPage>;

/**
 * Iterates the feed from a cursor until it is caught up (hasMore false), one event at a time,
 * following nextCursor. `cursor` is always the position after the last event handed out (or
 * after the last page read): persist it once an event is handled, and resume from it later.
 *
 *   const it = client.events.iterate({ after: saved });
 *   for await (const ev of it) { await handle(ev.payload); await save(it.cursor); }
 *   await save(it.cursor); // the end position, also when no event came
 */
export class EventFeedIterator implements AsyncIterableIterator<EventFeedItem> {
  private buffer: EventFeedItem[] = [];
  private done = false;
  private pageCursor: string | undefined;
  private _cursor: string | undefined;
  /** Pages read so far. */
  pagesRead = 0;

  constructor(
    private readonly fetchPage: FetchFeedPage,
    private readonly query: EventFeedQuery = {},
    private readonly options?: CallOptions,
  ) {
    this._cursor = query.after;
    this.pageCursor = query.after;
  }

  /** The position after the last event handed out (undefined until something was read when started without `after`). */
  get cursor(): string | undefined {
    return this._cursor;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<EventFeedItem, undefined>> {
    while (this.buffer.length === 0) {
      if (this.done) return { done: true, value: undefined };
      const q: EventFeedQuery = { ...this.query };
      if (this.pageCursor === undefined) delete q.after;
      else q.after = this.pageCursor;
      const page = await this.fetchPage(q, this.options);
      this.pagesRead++;
      const moved = page.nextCursor !== this.pageCursor;
      this.buffer = page.list.slice();
      this.pageCursor = page.nextCursor;
      // an empty page that did not move the cursor cannot lead anywhere: stop rather than spin
      if (!page.hasMore || (page.list.length === 0 && !moved)) this.done = true;
      if (this.buffer.length === 0) this._cursor = page.nextCursor;
    }
    const item = this.buffer.shift()!;
    // after the page's last event, the page's nextCursor (the same position, or later)
    this._cursor = this.buffer.length === 0 ? this.pageCursor : item.cursor;
    return { done: false, value: item };
  }

  async return(): Promise<IteratorResult<EventFeedItem, undefined>> {
    this.done = true;
    this.buffer = [];
    return { done: true, value: undefined };
  }
}

/** The feed page by page (each page as the service answered it), until hasMore is false. */
export async function* feedPages(fetchPage: FetchFeedPage, query: EventFeedQuery = {}, options?: CallOptions): AsyncGenerator<EventFeedPage, void, undefined> {
  let after = query.after;
  for (;;) {
    const q: EventFeedQuery = { ...query };
    if (after === undefined) delete q.after;
    else q.after = after;
    const page = await fetchPage(q, options);
    yield page;
    const moved = page.nextCursor !== after;
    after = page.nextCursor;
    if (!page.hasMore || (page.list.length === 0 && !moved)) return;
  }
}
