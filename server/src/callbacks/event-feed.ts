import { QueryTypes, type Sequelize } from 'sequelize';
import { formatLocalDateTime, WcsError } from '@wcs/core';
import type { BizType } from '../apps/applications';
import { before, decodeFeedCursor, encodeFeedCursor, FEED_START, type FeedPosition } from './feed-cursor';
import type { FeedEvent, FeedPage } from '../contract/events';

export const FEED_LIMIT_DEFAULT = 100;
export const FEED_LIMIT_MAX = 500;

/** One event of the feed and a page of them: the contract's types (the callback task's event, exactly as its webhook carries it). */
export type { FeedEvent, FeedPage };

interface FeedRow {
  id: string;
  tx_id: string;
  biz_type: BizType;
  biz_id: string;
  body: Buffer;
  created_at: Date;
}

/**
 * The events feed (GET /api/v1/wallet/events, docs/events-feed.md): every callback event of an
 * application in the order of the transactions that wrote them, read from the event store the
 * dispatcher delivers from (callback_tasks).
 *
 * Gap-free under concurrent commits: an event is listed only once every transaction that began
 * before its own has ended (its tx_id is below the reading snapshot's xmin). An event whose
 * transaction is still open, or any transaction older than it, waits; so an event can never
 * commit behind a position a reader has already passed, and a rolled-back one never appears.
 */
export class EventFeed {
  constructor(private readonly sequelize: Sequelize) {}

  async page(applicationId: number, after: string | undefined, limit: number): Promise<FeedPage> {
    const from = after === undefined ? FEED_START : this.position(applicationId, after);
    if (after !== undefined) await this.checkRetained(applicationId, from);
    const rows = await this.sequelize.query<FeedRow>(
      // ORDER BY the table's columns (t.), not the text aliases of the select list
      `SELECT t.id::text AS id, t.tx_id::text AS tx_id, t.biz_type, t.biz_id::text AS biz_id, t.body, t.created_at
         FROM callback_tasks t
        WHERE t.application_id = $1 AND (t.tx_id, t.id) > ($2::text::xid8, $3::bigint)
          AND t.tx_id < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY t.tx_id, t.id
        LIMIT $4`,
      { bind: [applicationId, from.txId.toString(), from.taskId.toString(), limit + 1], type: QueryTypes.SELECT },
    );
    const page = rows.slice(0, limit);
    const list = page.map((r): FeedEvent => ({
      id: Number(r.id),
      cursor: encodeFeedCursor({ applicationId, txId: BigInt(r.tx_id), taskId: BigInt(r.id) }),
      bizType: r.biz_type,
      bizId: Number(r.biz_id),
      createTime: formatLocalDateTime(r.created_at)!,
      // the body one of the event builders wrote (each returns its event type)
      payload: JSON.parse(r.body.toString('utf8')) as FeedEvent['payload'],
    }));
    const last = list[list.length - 1];
    return { list, nextCursor: last ? last.cursor : encodeFeedCursor({ applicationId, ...from }), hasMore: rows.length > limit };
  }

  private position(applicationId: number, after: string): FeedPosition {
    const c = decodeFeedCursor(after);
    if (c === null) throw new WcsError('EVENT_CURSOR_INVALID', { details: { parameter: 'after' } });
    if (c.applicationId !== applicationId) throw new WcsError('EVENT_CURSOR_FOREIGN', { details: { parameter: 'after' } });
    return c;
  }

  /** A cursor below what retention pruned may have missed events: refused, never silently skipped. */
  private async checkRetained(applicationId: number, from: FeedPosition): Promise<void> {
    const [h] = await this.sequelize.query<{ tx_id: string; task_id: string; pruned_at: Date }>(
      'SELECT tx_id::text AS tx_id, task_id::text AS task_id, pruned_at FROM callback_feed_horizons WHERE application_id = $1',
      { bind: [applicationId], type: QueryTypes.SELECT },
    );
    if (h && before(from, { txId: BigInt(h.tx_id), taskId: BigInt(h.task_id) })) {
      throw new WcsError('EVENT_CURSOR_EXPIRED', {
        details: { parameter: 'after', retainedAfter: encodeFeedCursor({ applicationId, txId: BigInt(h.tx_id), taskId: BigInt(h.task_id) }) },
      });
    }
  }

  /**
   * Retention: removes settled events (nothing queued) created before `olderThan`, with their
   * attempts, up to `batch` of them, and moves each application's horizon past the last one
   * removed. Returns how many were removed; the caller repeats while it is `batch`.
   */
  async prune(olderThan: Date, batch = 1000): Promise<number> {
    const [row] = await this.sequelize.query<{ n: number }>(
      `WITH doomed AS (
         SELECT t.id, t.application_id, t.tx_id FROM callback_tasks t
          WHERE t.created_at < $1 AND NOT EXISTS (SELECT 1 FROM callback_queue q WHERE q.task_id = t.id)
          ORDER BY t.created_at LIMIT $2 FOR UPDATE SKIP LOCKED
       ), a AS (
         DELETE FROM callback_attempts WHERE callback_task_id IN (SELECT id FROM doomed)
       ), d AS (
         DELETE FROM callback_tasks WHERE id IN (SELECT id FROM doomed) RETURNING id, application_id, tx_id
       ), last AS (
         SELECT DISTINCT ON (application_id) application_id, tx_id, id FROM d ORDER BY application_id, tx_id DESC, id DESC
       ), h AS (
         INSERT INTO callback_feed_horizons AS h (application_id, tx_id, task_id, pruned_at)
         SELECT application_id, tx_id, id, now() FROM last
         ON CONFLICT (application_id) DO UPDATE SET tx_id = excluded.tx_id, task_id = excluded.task_id, pruned_at = excluded.pruned_at
          WHERE (excluded.tx_id, excluded.task_id) > (h.tx_id, h.task_id)
       )
       SELECT count(*)::int AS n FROM d`,
      { bind: [olderThan.toISOString(), batch], type: QueryTypes.SELECT },
    );
    return row?.n ?? 0;
  }
}
