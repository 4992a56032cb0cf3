import type { Sequelize, Transaction } from 'sequelize';
import { QueryTypes } from 'sequelize';
import type { BizType } from '../apps/applications';

/** NOTIFYed (at commit) by every new or re-queued task: wakes the dispatchers at once. */
export const CALLBACK_DUE_CHANNEL = 'wcs_callback_due';
export const MAX_RETRY_TIMES = 10;

/** scheme://host:port as written in the URL, lower-cased: the unit of the per-endpoint cap. */
export function endpointOf(url: string): string {
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]+/i.exec(url);
  return (m ? m[0] : url).toLowerCase();
}

/** endpointOf in SQL, over a URL expression. */
export function endpointSql(urlExpr: string): string {
  return `coalesce(lower(substring(${urlExpr} from '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]+')), '')`;
}

export interface CallbackEvent {
  readonly applicationId: number;
  readonly bizType: BizType;
  readonly bizId: number;
  /** The event object; serialised once, and these exact bytes go out on every attempt. */
  readonly payload: Record<string, unknown>;
  /** An order's own callbackUrl (already validated), else the application's URL for the bizType. */
  readonly callbackUrl?: string | null;
}

export interface EnqueuedTask {
  readonly id: number;
  /** '' when no URL is configured: the task is then FAILED at once, for a resend later. */
  readonly url: string;
  readonly status: 'WAITING' | 'FAILED';
}

/** Wakes every dispatcher when the transaction commits (nothing if it rolls back). */
export async function notifyDue(sequelize: Sequelize, transaction: Transaction): Promise<void> {
  await sequelize.query(`SELECT pg_notify('${CALLBACK_DUE_CHANNEL}', '')`, { transaction });
}

export function noUrlError(bizType: string): string {
  return `no callback URL is configured for bizType ${bizType}: set one (wcs app set-callback), then resend the task`;
}

/**
 * The outbox: writes the callback task in the caller's transaction, the one that makes the
 * business change, so a committed change always has its callback and a rolled-back one never
 * does. With no URL (no order URL, none configured for the bizType) the task is recorded as
 * FAILED with no retry planned; resending it after a URL is configured delivers it.
 */
export async function enqueueCallback(sequelize: Sequelize, transaction: Transaction, event: CallbackEvent, now = new Date()): Promise<EnqueuedTask> {
  const body = Buffer.from(JSON.stringify(event.payload), 'utf8');
  const fromOrder = event.callbackUrl !== undefined && event.callbackUrl !== null && event.callbackUrl !== '';
  const rows = await sequelize.query<{ id: string; url: string; status: 'WAITING' | 'FAILED' }>(
    `WITH target AS (
       SELECT CASE WHEN $4::text IS NOT NULL THEN $4::text
                   ELSE coalesce((SELECT url FROM application_callbacks WHERE application_id = $1 AND biz_type = $2), '') END AS url
     )
     INSERT INTO callback_tasks (application_id, biz_type, biz_id, url, endpoint, url_source, body, status, max_retry_times, due_at, last_error, created_at, updated_at)
     SELECT $1, $2, $3, target.url, ${endpointSql('target.url')}, $5, $6,
            CASE WHEN target.url = '' THEN 'FAILED' ELSE 'WAITING' END, $7,
            CASE WHEN target.url = '' THEN NULL ELSE $8::timestamptz END,
            CASE WHEN target.url = '' THEN $9 ELSE NULL END, $8, $8
       FROM target
     RETURNING id, url, status`,
    {
      bind: [
        event.applicationId, event.bizType, event.bizId, fromOrder ? event.callbackUrl : null, fromOrder ? 'ORDER' : 'APPLICATION',
        body, MAX_RETRY_TIMES, now.toISOString(), noUrlError(event.bizType),
      ],
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  const row = rows[0]!;
  if (row.status === 'WAITING') await notifyDue(sequelize, transaction);
  return { id: Number(row.id), url: row.url, status: row.status };
}
