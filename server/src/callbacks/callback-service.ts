import { QueryTypes, Transaction, type Sequelize } from 'sequelize';
import { formatLocalDateTime, WcsError } from '@wcs/core';
import type { BizType } from '../apps/applications';
import { endpointSql, enqueueCallback, notifyDue, type EnqueuedTask } from './outbox';
import { encodeTaskCursor, pageWindow, type TaskCursor } from './task-cursor';
import { AuditLog, type AuditActor } from '../operators/audit';
import type { CallbackAttempt, CallbackTask } from '../contract/responses/callback';


/** The audit target of a callback task. */
export const taskTarget = (id: number): string => `callback-task:${id}`;

export const TASK_STATUSES = ['WAITING', 'PROCESSING', 'SUCCESS', 'FAILED'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const PAGE_SIZE_DEFAULT = 20;
export const PAGE_SIZE_MAX = 200;

/** The spec's callback task. */
export type CallbackTaskView = CallbackTask;

/** The spec's callback attempt. */
export type CallbackAttemptView = CallbackAttempt;

interface TaskRow {
  id: string;
  biz_type: BizType;
  biz_id: string;
  url: string;
  status: TaskStatus;
  retry_times: number;
  max_retry_times: number;
  next_retry_time: Date | null;
  last_response_summary: string | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
}

const TASK_COLUMNS = `id, biz_type, biz_id, url, status, retry_times, max_retry_times, next_retry_time, last_response_summary, last_error, created_at, updated_at`;

function taskView(r: TaskRow): CallbackTaskView {
  return {
    id: Number(r.id),
    bizType: r.biz_type,
    bizId: Number(r.biz_id),
    url: r.url,
    status: r.status,
    retryTimes: r.retry_times,
    maxRetryTimes: r.max_retry_times,
    // nothing is queued while an attempt runs or after a terminal state
    nextRetryTime: r.status === 'FAILED' ? formatLocalDateTime(r.next_retry_time) : null,
    lastResponseSummary: r.last_response_summary,
    lastError: r.last_error,
    createTime: formatLocalDateTime(r.created_at)!,
    updateTime: formatLocalDateTime(r.updated_at)!,
  };
}

export interface TaskFilter {
  bizType?: BizType;
  bizId?: number;
  status?: TaskStatus;
  createTimeStart?: Date;
  createTimeEnd?: Date;
  pageNo: number;
  pageSize: number;
}

/** The console's filter: the spec's, over one application or (null) every one. */
export interface ConsoleTaskFilter extends Omit<TaskFilter, 'pageNo' | 'pageSize'> {
  applicationId?: number | null;
}

export interface ConsoleTaskPage {
  list: (CallbackTaskView & { applicationId: number })[];
  /** The cursor of the next (older) page, or null at the oldest. */
  older: string | null;
  /** The cursor of the previous (newer) page, or null at the newest. */
  newer: string | null;
}

/**
 * Where a listing reads from: the stored task alone when no status is asked for (its status is
 * then only shown, and the page's rows are read from callback_task_states), else the view that
 * derives PROCESSING from the queue's lease.
 */
function taskSource(f: { status?: TaskStatus }): string {
  return f.status === undefined ? 'callback_tasks' : 'callback_task_states';
}

/** The spec's filters as SQL over $2..$6 (the caller binds $1). */
function taskWhere(f: Omit<TaskFilter, 'pageNo' | 'pageSize'>): { where: string; bind: unknown[] } {
  return {
    where: `($2::text IS NULL OR biz_type = $2) AND ($3::bigint IS NULL OR biz_id = $3)
      AND ($4::text IS NULL OR status = $4) AND ($5::timestamptz IS NULL OR created_at >= $5) AND ($6::timestamptz IS NULL OR created_at < $6::timestamptz + interval '1 second')`,
    bind: [f.bizType ?? null, f.bizId ?? null, f.status ?? null, f.createTimeStart?.toISOString() ?? null, f.createTimeEnd?.toISOString() ?? null],
  };
}

/** The merchant's view of its callbacks: every query is scoped to the calling application. */
export class CallbackService {
  constructor(private readonly sequelize: Sequelize) {}

  /**
   * The spec's listing (pageNo/pageSize, newest first). createTimeEnd is inclusive at the
   * precision shown (whole seconds): a task listed with createTime 10:00:00 (created at
   * 10:00:00.500) is within createTimeEnd=10:00:00.
   *
   * How a deep page is served (docs/callbacks.md, "Listing"): the total and the page are read in
   * one snapshot; the page is read from whichever end of the (application_id, created_at, id)
   * index is nearer to it, so the last page costs what the first does and no page walks more than
   * half the listing. Only the page's rows are read. The console pages by keyset instead (taskPage).
   */
  async listTasks(applicationId: number, f: TaskFilter): Promise<{ list: CallbackTaskView[]; total: number }> {
    const { where, bind } = taskWhere(f);
    const params = [applicationId, ...bind];
    return this.sequelize.transaction({ isolationLevel: Transaction.ISOLATION_LEVELS.REPEATABLE_READ }, async (transaction) => {
      const [count] = await this.sequelize.query<{ n: string }>(`SELECT count(*) AS n FROM ${taskSource(f)} WHERE application_id = $1 AND ${where}`, { bind: params, type: QueryTypes.SELECT, transaction });
      const total = Number(count!.n);
      const { newestFirst, limit, offset } = pageWindow(total, f.pageNo, f.pageSize);
      if (limit === 0) return { list: [], total };
      const order = newestFirst ? 'created_at DESC, id DESC' : 'created_at ASC, id ASC';
      const rows = await this.sequelize.query<TaskRow>(
        `SELECT ${TASK_COLUMNS} FROM callback_task_states
          WHERE id IN (SELECT id FROM ${taskSource(f)} WHERE application_id = $1 AND ${where} ORDER BY ${order} LIMIT $7 OFFSET $8)
          ORDER BY created_at DESC, id DESC`,
        { bind: [...params, limit, offset], type: QueryTypes.SELECT, transaction },
      );
      return { list: rows.map(taskView), total };
    });
  }

  /**
   * The console's listing (docs/console.md, "Listings"): the spec's filters, any or every
   * application, newest first, by keyset. `older` lists the page after a cursor, `newer` the page
   * before one (shown newest first as well); neither: the newest page. Each page costs what the
   * first does, however deep; `older`/`newer` in the result are the cursors for the neighbouring
   * pages (null at either end).
   */
  async taskPage(f: ConsoleTaskFilter, position: { older?: TaskCursor | null; newer?: TaskCursor | null }, limit: number): Promise<ConsoleTaskPage> {
    const { where, bind } = taskWhere(f);
    const params: unknown[] = [f.applicationId ?? null, ...bind];
    const forward = !position.newer;
    const at = position.newer ?? position.older ?? null;
    const keyset = at === null ? '($7::bigint IS NULL AND $8::bigint IS NULL)' : `(created_at, id) ${forward ? '<' : '>'} ('epoch'::timestamptz + $7::bigint * interval '1 microsecond', $8::bigint)`;
    const order = forward ? 'created_at DESC, id DESC' : 'created_at ASC, id ASC';
    const rows = await this.sequelize.query<TaskRow & { application_id: number; created_micros: string }>(
      `SELECT ${TASK_COLUMNS}, application_id, (extract(epoch FROM created_at) * 1000000)::bigint::text AS created_micros
         FROM callback_task_states WHERE ($1::int IS NULL OR application_id = $1) AND ${where} AND ${keyset}
        ORDER BY ${order} LIMIT ${Math.max(1, Math.min(limit, PAGE_SIZE_MAX)) + 1}`,
      { bind: [...params, at?.createdMicros.toString() ?? null, at?.id.toString() ?? null], type: QueryTypes.SELECT },
    );
    const size = Math.max(1, Math.min(limit, PAGE_SIZE_MAX));
    const more = rows.length > size;
    const page = rows.slice(0, size);
    if (!forward) page.reverse();
    const cursor = (r: { created_micros: string; id: string }) => encodeTaskCursor({ createdMicros: BigInt(r.created_micros), id: BigInt(r.id) });
    const first = page[0];
    const last = page[page.length - 1];
    return {
      list: page.map((r) => ({ ...taskView(r), applicationId: r.application_id })),
      // going older: there is an older page when more rows came back; going newer: the page we came from
      older: last === undefined ? null : forward ? (more ? cursor(last) : null) : cursor(last),
      newer: first === undefined ? null : forward ? (at === null ? null : cursor(first)) : (more ? cursor(first) : null),
    };
  }

  async task(applicationId: number, taskId: number): Promise<CallbackTaskView> {
    const [row] = await this.sequelize.query<TaskRow>(`SELECT ${TASK_COLUMNS} FROM callback_task_states WHERE id = $1 AND application_id = $2`, {
      bind: [taskId, applicationId],
      type: QueryTypes.SELECT,
    });
    if (!row) throw new WcsError('CALLBACK_TASK_NOT_FOUND', { details: { callbackTaskId: taskId } });
    return taskView(row);
  }

  async attempts(applicationId: number, taskId: number): Promise<CallbackAttemptView[]> {
    await this.task(applicationId, taskId); // another application's task is "not found"
    const rows = await this.sequelize.query<{
      id: string; callback_task_id: string; attempt_no: number; request_headers_summary: Record<string, string>; request_body_summary: string | null;
      request_body_length: number; request_body_sha256: string; response_status: number | null; response_content_type: string | null;
      response_body_summary: string | null; response_body_length: number | null; response_body_sha256: string | null; accepted: boolean;
      latency_ms: number; error_reason: string | null; next_retry_time: Date | null; created_at: Date;
    }>(`SELECT * FROM callback_attempts WHERE callback_task_id = $1 AND application_id = $2 ORDER BY attempt_no`, {
      bind: [taskId, applicationId],
      type: QueryTypes.SELECT,
    });
    return rows.map((r) => ({
      id: Number(r.id),
      callbackTaskId: Number(r.callback_task_id),
      attemptNo: r.attempt_no,
      requestHeadersSummary: r.request_headers_summary,
      requestBodySummary: r.request_body_summary,
      requestBodyLength: r.request_body_length,
      requestBodySha256: r.request_body_sha256,
      responseStatus: r.response_status,
      responseContentType: r.response_content_type,
      responseBodySummary: r.response_body_summary,
      responseBodyLength: r.response_body_length,
      responseBodySha256: r.response_body_sha256,
      accepted: r.accepted,
      latencyMs: r.latency_ms,
      errorReason: r.error_reason,
      nextRetryTime: formatLocalDateTime(r.next_retry_time),
      createTime: formatLocalDateTime(r.created_at)!,
    }));
  }

  /**
   * Re-queues a FAILED task (retries exhausted or not) or a SUCCESS one (a deliberate second
   * delivery) with a fresh retry budget: WAITING, retryTimes 0, delivered at once with the same
   * body. A WAITING or PROCESSING task is already on its way: CALLBACK_TASK_BUSY. A task whose
   * URL is the application's and none is configured: CALLBACK_URL_INVALID.
   *
   * `actor`: the operator (console or CLI), audited `callback.resend` (target
   * `callback-task:<id>`) in the resend's transaction; null: the merchant itself through the
   * signed API (POST /wallet/callback/resend), which is not an operator's change and is not audited.
   */
  async resend(actor: AuditActor | null, applicationId: number, taskId: number, now = new Date()): Promise<CallbackTaskView> {
    return (await this.resendTask(actor, applicationId, taskId, now, false))!;
  }

  /** resend(); with onlyFailed, a task no longer FAILED is left as it is (null). */
  private async resendTask(actor: AuditActor | null, applicationId: number, taskId: number, now: Date, onlyFailed: boolean): Promise<CallbackTaskView | null> {
    return this.sequelize.transaction(async (transaction) => {
      const [row] = await this.sequelize.query<TaskRow & { url_source: string; configured: string | null; queued: boolean }>(
        `SELECT ${TASK_COLUMNS}, url_source, (due_at IS NOT NULL) AS queued,
                (SELECT url FROM application_callbacks c WHERE c.application_id = s.application_id AND c.biz_type = s.biz_type) AS configured
           FROM callback_task_states s WHERE id = $1 AND application_id = $2`,
        { bind: [taskId, applicationId], type: QueryTypes.SELECT, transaction },
      );
      if (!row) throw new WcsError('CALLBACK_TASK_NOT_FOUND', { details: { callbackTaskId: taskId } });
      // the queue row, then the task row, locked in the dispatcher's order (a claim locks the queue
      // row only; recording an attempt locks the queue row, then the task)
      const [q] = await this.sequelize.query<{ lease_owner: string | null }>('SELECT lease_owner FROM callback_queue WHERE task_id = $1 FOR UPDATE', {
        bind: [taskId], type: QueryTypes.SELECT, transaction,
      });
      await this.sequelize.query('SELECT 1 FROM callback_tasks WHERE id = $1 FOR UPDATE', { bind: [taskId], transaction });
      const [stored] = await this.sequelize.query<{ status: TaskStatus }>('SELECT status FROM callback_tasks WHERE id = $1', { bind: [taskId], type: QueryTypes.SELECT, transaction });
      const status: TaskStatus = q?.lease_owner ? 'PROCESSING' : stored?.status ?? row.status;
      if (onlyFailed && status !== 'FAILED') return null;
      if (status === 'WAITING' || status === 'PROCESSING') {
        throw new WcsError('CALLBACK_TASK_BUSY', { message: `Callback task ${taskId} is ${status}: it is queued or being delivered`, details: { callbackTaskId: taskId, status } });
      }
      const url = row.url_source === 'APPLICATION' ? row.configured ?? '' : row.url;
      if (url === '') {
        throw new WcsError('CALLBACK_URL_INVALID', { message: `No callback URL is configured for bizType ${row.biz_type}: configure one, then resend`, details: { callbackTaskId: taskId } });
      }
      const [updated] = await this.sequelize.query<TaskRow>(
        `WITH t AS (
           UPDATE callback_tasks SET status = 'WAITING', retry_times = 0, next_retry_time = NULL, url = $4::text, updated_at = $3
            WHERE id = $1 AND application_id = $2 RETURNING ${TASK_COLUMNS}
         ), q AS (
           INSERT INTO callback_queue (task_id, application_id, endpoint, due_at) SELECT id, $2, ${endpointSql('$4::text')}, $3 FROM t
           ON CONFLICT (task_id) DO UPDATE SET due_at = excluded.due_at, endpoint = excluded.endpoint, lease_owner = NULL, lease_until = NULL
         )
         SELECT * FROM t`,
        { bind: [taskId, applicationId, now.toISOString(), url], type: QueryTypes.SELECT, transaction },
      );
      await notifyDue(this.sequelize, transaction);
      if (actor !== null) {
        await new AuditLog(this.sequelize).record(transaction, actor, {
          action: 'callback.resend', target: taskTarget(taskId),
          before: { applicationId, bizType: row.biz_type, bizId: Number(row.biz_id), status, retryTimes: row.retry_times, url: row.url },
          after: { status: updated!.status, retryTimes: updated!.retry_times, url: updated!.url },
        });
      }
      return taskView(updated!);
    });
  }

  /** The application a task belongs to (the operator names a task by its id alone: `wcs callback resend --task`). */
  async taskApplication(taskId: number): Promise<number> {
    const [row] = await this.sequelize.query<{ application_id: number }>('SELECT application_id FROM callback_tasks WHERE id = $1', {
      bind: [taskId],
      type: QueryTypes.SELECT,
    });
    if (!row) throw new WcsError('CALLBACK_TASK_NOT_FOUND', { message: `Callback task ${taskId} not found`, details: { callbackTaskId: taskId } });
    return row.application_id;
  }

  /**
   * Resends every FAILED task of an application and bizType (`wcs callback resend --app --biz-type`),
   * each as resend() does, in its own transaction. A task that is no longer FAILED when its turn
   * comes (a worker retried it meanwhile, perhaps delivered it) is skipped, never sent again; a
   * refusal (no callback URL configured) stops before that task, the ones before it queued.
   * Each task resent is audited as resend() audits it (`callback.resend`).
   */
  async resendFailed(actor: AuditActor, applicationId: number, bizType: BizType, now = new Date()): Promise<{ resent: CallbackTaskView[]; skipped: number[] }> {
    const ids = await this.sequelize.query<{ id: string }>(
      `SELECT id FROM callback_task_states WHERE application_id = $1 AND biz_type = $2 AND status = 'FAILED' ORDER BY id`,
      { bind: [applicationId, bizType], type: QueryTypes.SELECT },
    );
    const resent: CallbackTaskView[] = [];
    const skipped: number[] = [];
    for (const { id } of ids) {
      const task = await this.resendTask(actor, applicationId, Number(id), now, true);
      if (task) resent.push(task);
      else skipped.push(Number(id));
    }
    return { resent, skipped };
  }

  /**
   * A test event through the real pipeline (`wcs callback test`, the console's "Send test
   * event"): bizId 0, event "test". Audited `callback.test` (target `app:<id>/bizType:<T>`) with
   * the task it queued, in the same transaction.
   */
  async sendTest(actor: AuditActor, applicationId: number, bizType: BizType): Promise<EnqueuedTask> {
    return this.sequelize.transaction(async (transaction) => {
      const [app] = await this.sequelize.query('SELECT id FROM applications WHERE id = $1', { bind: [applicationId], type: QueryTypes.SELECT, transaction });
      if (!app) throw new WcsError('APPLICATION_NOT_FOUND', { message: `Application ${applicationId} not found` });
      const task = await enqueueCallback(this.sequelize, transaction, {
        applicationId,
        bizType,
        bizId: 0,
        payload: {
          event: 'test',
          applicationId,
          bizType,
          message: 'Test callback from the wallet custody service: verify the signature, then answer HTTP 200 with {"code":0}, "success" or "ok".',
          createTime: formatLocalDateTime(new Date()),
        },
      });
      await new AuditLog(this.sequelize).record(transaction, actor, {
        action: 'callback.test', target: `app:${applicationId}/bizType:${bizType}`,
        before: null, after: { callbackTaskId: task.id, status: task.status, url: task.url },
      });
      return task;
    });
  }
}
