import type { Database } from '../db/database';
import { endpointSql } from './outbox';
import { summarize, sha256Hex, type DeliveryResult } from './delivery';
import type { AttemptOutcome } from './retry-schedule';

/**
 * The dispatcher's statements over the event store (docs/callbacks.md, "Storage"): claim due
 * queue rows under a lease, take send slots of paced endpoints, and record finished attempts.
 * Per delivery Postgres writes: the queue row's claim (a HOT update of a narrow row), then in one
 * statement per batch the queue row's removal (or its retry time), the task's new state (a HOT
 * update: no index covers a column it changes) and the attempt row.
 */

/** A claimed task: the event, where it goes now, who signs it. */
export interface ClaimedTask {
  id: string;
  application_id: number;
  biz_type: string;
  body: Buffer;
  retry_times: number;
  max_retry_times: number;
  attempts: number;
  is_retry: boolean;
  /** When the task came due for this attempt (metrics); for a task whose lease ran out, its retry time or creation. */
  due_time: Date | null;
  url: string;
  endpoint: string;
  api_key: string;
  environment: 'test' | 'live';
  /** The application's delivery rate limit per endpoint (deliveries/s), or null. */
  rate: number | null;
  /** sha256hex(body), once computed (not read from the database). */
  body_sha256?: string;
}

export interface ClaimRequest {
  readonly owner: string;
  /** The application's clock: what is due (tests move it with a fake Date). */
  readonly now: Date;
  readonly leaseMs: number;
  readonly limit: number;
  /** Endpoints with no room in this process: not claimed. */
  readonly full: readonly string[];
  /** Endpoints with some room: at most that many each. */
  readonly room: ReadonlyArray<readonly [string, number]>;
  /** Room of any other endpoint. */
  readonly defaultRoom: number;
}

/**
 * Claims due tasks in due order in one statement: queue rows due on the application's clock, or
 * whose lease ran out on the database's clock (so hosts whose clocks differ never take a task
 * another still holds); endpoints without room are left out, each other endpoint gets at most its
 * room; rows locked by another process are skipped (FOR UPDATE SKIP LOCKED). The lease (owner,
 * until = now + lease on the database's clock) is in columns no index covers: a HOT update.
 */
export async function claimDue(db: Database, r: ClaimRequest): Promise<ClaimedTask[]> {
  // the statement is the function callback_claim (migration 15, callbacks/schema.ts): one round
  // trip, a plan cached per connection, planned with bitmap and sequential scans off
  return db.raw<ClaimedTask>(
    'SELECT * FROM callback_claim($1, $2, $3, $4, $5, $6, $7, $8)',
    [r.owner, r.now.toISOString(), r.leaseMs, r.full, r.limit, r.room.map(([e]) => e), r.room.map(([, n]) => n), r.defaultRoom],
    'wcs_callback_claim',
  );
}

/**
 * Takes n consecutive send slots of an (application, endpoint) with a rate limit, shared by every
 * process: returns the delay in ms from now of the first (0 when it is free now); the others
 * follow 1/rate seconds apart.
 */
export async function takeSlots(db: Database, applicationId: number, endpoint: string, n: number, ratePerSecond: number): Promise<number> {
  const [row] = await db.raw<{ first_ms: number }>(
    `INSERT INTO callback_pacing AS p (application_id, endpoint, next_at) VALUES ($1, $2, now() + $3::int * (interval '1 second' / $4::int))
     ON CONFLICT (application_id, endpoint) DO UPDATE SET next_at = greatest(p.next_at, now()) + $3::int * (interval '1 second' / $4::int)
     RETURNING (extract(epoch FROM p.next_at - now()) * 1000 - $3::int * 1000.0 / $4::int)::float8 AS first_ms`,
    [applicationId, endpoint, n, ratePerSecond],
  );
  return Math.max(0, row?.first_ms ?? 0);
}

/** One finished attempt and what it does to its task. */
export interface FinishedAttempt {
  readonly task: ClaimedTask;
  readonly result: DeliveryResult;
  readonly startedAt: Date;
  readonly outcome: AttemptOutcome;
}

/** The statement of recordAttempts (prepared per connection: parsed once). */
const RECORD_ATTEMPTS = `WITH x AS (
       SELECT * FROM unnest($2::bigint[], $3::text[], $4::int[], $5::int[], $6::timestamptz[], $7::text[], $8::text[], $9::text[])
         AS x(id, status, retry_times, attempt_no, next_retry_time, response_summary, error, url)
     ), settled AS (
       DELETE FROM callback_queue q USING x WHERE q.task_id = x.id AND q.lease_owner = $1 AND x.next_retry_time IS NULL
       RETURNING q.task_id
     ), retried AS (
       UPDATE callback_queue q SET due_at = x.next_retry_time, lease_owner = NULL, lease_until = NULL, endpoint = ${endpointSql('x.url')}
         FROM x WHERE q.task_id = x.id AND q.lease_owner = $1 AND x.next_retry_time IS NOT NULL
       RETURNING q.task_id
     ), mine AS (
       SELECT task_id FROM settled UNION ALL SELECT task_id FROM retried
     ), u AS (
       UPDATE callback_tasks t SET status = x.status, retry_times = x.retry_times, attempts = x.attempt_no,
              next_retry_time = x.next_retry_time, last_response_summary = x.response_summary,
              last_error = x.error, url = x.url, updated_at = $10
         FROM x JOIN mine ON mine.task_id = x.id WHERE t.id = x.id
       RETURNING t.id
     )
     INSERT INTO callback_attempts (callback_task_id, application_id, attempt_no, url, request_headers_summary, request_body_summary,
            request_body_length, request_body_sha256, response_status, response_content_type, response_body_summary,
            response_body_length, response_body_sha256, accepted, latency_ms, error_reason, next_retry_time, created_at)
     SELECT a.task_id, a.application_id, a.attempt_no, a.url, a.headers::jsonb, a.request_summary, a.request_length, a.request_sha256,
            a.response_status, a.response_content_type, a.response_summary, a.response_length, a.response_sha256, a.accepted,
            a.latency_ms, a.error, a.next_retry_time, a.created_at
       FROM unnest($2::bigint[], $11::int[], $5::int[], $9::text[], $12::text[], $13::text[], $14::int[], $15::text[], $16::int[],
                   $17::text[], $7::text[], $18::int[], $19::text[], $20::boolean[], $21::int[], $8::text[], $6::timestamptz[], $22::timestamptz[])
         AS a(task_id, application_id, attempt_no, url, headers, request_summary, request_length, request_sha256, response_status,
              response_content_type, response_summary, response_length, response_sha256, accepted, latency_ms, error, next_retry_time, created_at)
      WHERE a.task_id IN (SELECT id FROM u)
     RETURNING callback_task_id::text AS callback_task_id`;

/**
 * Records finished attempts, many per statement (one transaction): for each task this process
 * still holds, the queue row is removed (settled: delivered, or no retry left) or moved to its
 * retry time and released; the task gets its new state; the attempt row is written. A task whose
 * lease another process took over is left alone and its attempt not written. Returns the ids of
 * the tasks recorded.
 */
export async function recordAttempts(db: Database, owner: string, items: readonly FinishedAttempt[], now: Date): Promise<Set<string>> {
  const col = <T>(f: (x: FinishedAttempt) => T): T[] => items.map(f);
  const written = await db.raw<{ callback_task_id: string }>(
    RECORD_ATTEMPTS,
    [
      owner,
      col((x) => x.task.id),
      col((x) => x.outcome.status),
      col((x) => x.outcome.retryTimes),
      col((x) => x.task.attempts + 1),
      col((x) => (x.outcome.nextRetryTime ? x.outcome.nextRetryTime.toISOString() : null)),
      col((x) => (x.result.responseBody === null ? null : summarize(x.result.responseBody.toString('utf8')))),
      col((x) => x.result.errorReason),
      col((x) => x.task.url),
      now.toISOString(),
      col((x) => x.task.application_id),
      col((x) => JSON.stringify(x.result.requestHeadersSummary)),
      col((x) => summarize(x.task.body.toString('utf8'))),
      col((x) => x.task.body.length),
      col((x) => (x.task.body_sha256 ??= sha256Hex(x.task.body))),
      col((x) => x.result.responseStatus),
      col((x) => x.result.responseContentType),
      col((x) => (x.result.responseBody === null ? null : x.result.responseBody.length)),
      col((x) => (x.result.responseBody === null ? null : sha256Hex(x.result.responseBody))),
      col((x) => x.result.accepted),
      col((x) => x.result.latencyMs),
      col((x) => x.startedAt.toISOString()),
    ],
    'wcs_callback_record',
  );
  return new Set(written.map((w) => w.callback_task_id));
}
