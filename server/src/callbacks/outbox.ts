import type { Sequelize, Transaction } from 'sequelize';
import { preparedInTransaction } from '../db/prepared';
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
  return (await enqueueCallbacks(sequelize, transaction, [event], now))[0]!;
}

/**
 * enqueueCallback for many events in one statement (a scanner's range of deposits): the tasks
 * get ascending ids in the order given, so a record's callbacks keep their order; the result is
 * in the order given. Wakes the dispatchers once, at commit, when any task is due.
 */
export async function enqueueCallbacks(_sequelize: Sequelize, transaction: Transaction, events: readonly CallbackEvent[], now = new Date()): Promise<EnqueuedTask[]> {
  if (events.length === 0) return [];
  const orderUrl = (e: CallbackEvent) => (e.callbackUrl !== undefined && e.callbackUrl !== null && e.callbackUrl !== '' ? e.callbackUrl : null);
  const rows = await preparedInTransaction<{ id: string; url: string; status: 'WAITING' | 'FAILED' }>(transaction, 'wcs_callback_enqueue', ENQUEUE_SQL, [
    MAX_RETRY_TIMES, now.toISOString(),
    events.map((e) => e.applicationId), events.map((e) => e.bizType), events.map((e) => String(e.bizId)), events.map(orderUrl), events.map((e) => JSON.stringify(e.payload)),
  ]);
  return tasksInOrder(rows, events.length);
}

/**
 * A new task id per row, drawn in the order of the rows: volatile functions run after ORDER BY,
 * and one session's nextval values only ascend, so sorting the new ids restores the input order.
 * The BIGSERIAL's sequence by name (a constant regclass), not pg_get_serial_sequence, which reads
 * the catalogue's dependencies for every row.
 */
export const NEXT_TASK_ID = "nextval('callback_tasks_id_seq'::regclass)";

/**
 * The rest of a WITH statement that writes callback tasks from a preceding CTE `src` (id,
 * application_id, biz_type, biz_id, order_url text or NULL, body text: the JSON), resolving each
 * task's URL (the order's, else the application's for the bizType, else none: FAILED at once),
 * queueing each task that has a URL (callback_queue) and waking the dispatchers at commit when
 * any task is due. Parameters: $1 max retries, $2 now.
 * Returns (id, url, status) of each task written.
 */
export const CALLBACK_TASKS_FROM_SRC = `target AS (
       SELECT src.*, CASE WHEN src.order_url IS NOT NULL THEN src.order_url
                          ELSE coalesce((SELECT c.url FROM application_callbacks c WHERE c.application_id = src.application_id AND c.biz_type = src.biz_type), '') END AS url
         FROM src
     ), tasks AS (
       INSERT INTO callback_tasks (id, application_id, biz_type, biz_id, url, url_source, body, status, max_retry_times, last_error, created_at, updated_at)
       SELECT id, application_id, biz_type, biz_id, url, CASE WHEN order_url IS NOT NULL THEN 'ORDER' ELSE 'APPLICATION' END,
              convert_to(body, 'UTF8'), CASE WHEN url = '' THEN 'FAILED' ELSE 'WAITING' END, $1,
              CASE WHEN url = '' THEN '${noUrlError("' || biz_type || '")}' END,
              $2, $2
         FROM target
       RETURNING id, application_id, url, status
     ), queued AS (
       INSERT INTO callback_queue (task_id, application_id, endpoint, due_at)
       SELECT id, application_id, ${endpointSql('url')}, $2::timestamptz FROM tasks WHERE status = 'WAITING'
       RETURNING 1
     ), woke AS (
       SELECT pg_notify('${CALLBACK_DUE_CHANNEL}', '') FROM (SELECT 1 FROM queued LIMIT 1) w
     )
     SELECT id::text AS id, url, status, (SELECT count(*) FROM woke) AS woke FROM tasks`;

/** enqueueCallbacks' statement (prepared once per connection). */
const ENQUEUE_SQL = `WITH src AS MATERIALIZED (
       SELECT ${NEXT_TASK_ID} AS id, e.application_id, e.biz_type, e.biz_id, e.order_url, e.body
         FROM unnest($3::int[], $4::text[], $5::bigint[], $6::text[], $7::text[]) WITH ORDINALITY AS e(application_id, biz_type, biz_id, order_url, body, ord)
        ORDER BY e.ord
     ), ${CALLBACK_TASKS_FROM_SRC}`;

/** The tasks written by CALLBACK_TASKS_FROM_SRC, in input order; checks that each event got one. */
export function tasksInOrder(rows: ReadonlyArray<{ id: string; url: string; status: 'WAITING' | 'FAILED' }>, expected: number): EnqueuedTask[] {
  if (rows.length !== expected) throw new Error(`callback outbox: ${rows.length} tasks written for ${expected} events`);
  return rows.map((r) => ({ id: Number(r.id), url: r.url, status: r.status })).sort((a, b) => a.id - b.id);
}

/** A table that records which (record, state) pairs already have their callback task. */
export interface NoticeTable {
  /** e.g. recharge_notices (record column, state column, task_id; primary key (record, state)). */
  readonly table: 'recharge_notices' | 'withdraw_notices' | 'collect_notices';
  readonly recordColumn: 'recharge_id' | 'withdrawal_id' | 'item_id';
  readonly stateColumn: 'tx_status' | 'status';
  readonly bizType: BizType;
}

/**
 * The callbacks of the state changes made in one transaction, written together by flush():
 * exactly one task per (record, state), the merchant's de-duplication key; a pair that already
 * has its task is skipped. The event is taken when the change is added, so later changes to the
 * row do not alter it; tasks are created in the order added.
 */
export class OutboxNotices {
  private readonly items: Array<{ readonly id: string; readonly state: string; readonly applicationId: number; readonly orderUrl: string | null; readonly payload: Record<string, unknown> }> = [];

  constructor(private readonly kind: NoticeTable) {}

  /** `orderUrl`: the record's own callback URL (a withdrawal's callbackUrl), else null for the application's. */
  addEvent(id: string, state: string, applicationId: number, payload: Record<string, unknown>, orderUrl: string | null = null): void {
    this.items.push({ id, state, applicationId, orderUrl: orderUrl === '' ? null : orderUrl, payload });
  }

  /**
   * One statement: draws a task id per callback (in the order added), claims each (record,
   * state) pair with its task id, and writes the tasks of the pairs claimed. Returns the number
   * of tasks written.
   */
  async flush(_sequelize: Sequelize, t: Transaction): Promise<number> {
    const items = this.items.splice(0);
    if (items.length === 0) return 0;
    const { table, bizType } = this.kind;
    const rows = await preparedInTransaction<{ id: string }>(t, `wcs_callback_notices_${table}`, noticesSql(this.kind), [
      MAX_RETRY_TIMES, new Date().toISOString(), bizType, items.map((i) => i.id), items.map((i) => i.state), items.map((i) => i.applicationId),
      items.map((i) => i.orderUrl), items.map((i) => JSON.stringify(i.payload)),
    ]);
    return rows.length;
  }
}

/** OutboxNotices.flush's statement for one notice table (a fixed text per table: one prepared statement each). */
function noticesSql({ table, recordColumn, stateColumn }: NoticeTable): string {
  return `WITH ev AS MATERIALIZED (
         SELECT ${NEXT_TASK_ID} AS id, e.application_id, $3::text AS biz_type, e.record_id AS biz_id, e.order_url, e.body, e.state
           FROM unnest($4::bigint[], $5::text[], $6::int[], $7::text[], $8::text[]) WITH ORDINALITY AS e(record_id, state, application_id, order_url, body, ord)
          ORDER BY e.ord
       ), claimed AS (
         INSERT INTO ${table} (${recordColumn}, ${stateColumn}, task_id) SELECT biz_id, state, id FROM ev
         ON CONFLICT DO NOTHING RETURNING task_id
       ), src AS (
         SELECT ev.* FROM ev JOIN claimed ON claimed.task_id = ev.id
       ), ${CALLBACK_TASKS_FROM_SRC}`;
}
