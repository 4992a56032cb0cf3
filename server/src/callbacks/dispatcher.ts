import * as crypto from 'node:crypto';
import * as os from 'node:os';
import { Client } from 'pg';
import PQueue from 'p-queue';
import type { CallbackConfig } from '../config/config';
import type { Logger } from '../config/logger';
import type { CredentialStore } from '../auth/credentials';
import type { Database } from '../db/database';
import type { Worker } from '../workers/worker';
import { deliver, DeliveryAgents, sha256Hex, summarize, type DeliveryResult } from './delivery';
import { Batcher } from '../db/batcher';
import { CALLBACK_DUE_CHANNEL, endpointOf, endpointSql } from './outbox';
import type { CallbackObserver } from '../metrics/callback-metrics';

/**
 * Claimed tasks a process holds (queued in p-queue or running), per endpoint and in all, as a
 * multiple of the delivery caps: enough queued behind the running ones that a slot never waits
 * for a claim round trip, few enough that a queued task's lease (timeout + 60 s) cannot run out
 * (at most PREFETCH - 1 timeouts of waiting before its own attempt).
 */
export const PREFETCH = 4;
/** Most tasks one claim statement takes. */
const CLAIM_MAX = 500;

/** What a claim returns for each task: the task, where it goes now and who signs it. */
const CLAIM_RETURNING = `RETURNING t.id, t.application_id, t.biz_type, t.body, t.retry_times, t.max_retry_times, t.attempts,
  (t.next_retry_time IS NOT NULL) AS is_retry,
  CASE WHEN t.url_source = 'APPLICATION'
       THEN coalesce((SELECT c.url FROM application_callbacks c WHERE c.application_id = t.application_id AND c.biz_type = t.biz_type), '')
       ELSE t.url END AS url,
  (SELECT a.api_key FROM applications a WHERE a.id = t.application_id) AS api_key,
  (SELECT a.environment FROM applications a WHERE a.id = t.application_id) AS environment`;

interface Claimed {
  id: string;
  application_id: number;
  biz_type: string;
  body: Buffer;
  retry_times: number;
  max_retry_times: number;
  attempts: number;
  is_retry: boolean;
  /** When the task came due for this attempt (metrics); for a reclaimed task, its retry time or creation. */
  due_time: Date | null;
  url: string;
  api_key: string;
  environment: 'test' | 'live';
}

/** One finished attempt, waiting to be written with others in one statement. */
interface Finished {
  readonly task: Claimed;
  readonly url: string;
  readonly result: DeliveryResult;
  readonly startedAt: Date;
}

/**
 * Delivers callback tasks (a worker: `wcs start`, `wcs start --workers-only`). Claims due
 * tasks with FOR UPDATE SKIP LOCKED under a lease, so several processes never send the same
 * attempt and a task held by a process that died is delivered once its lease expires.
 * Deliveries run concurrently through p-queue (WCS_CALLBACK_CONCURRENCY) with a queue per
 * endpoint capped at WCS_CALLBACK_PER_ENDPOINT, so one slow merchant cannot take every slot;
 * a process holds at most PREFETCH times the caps (claimed, queued or running), so tasks of a
 * full endpoint are not claimed and a queued task's lease cannot run out while it waits.
 * Claims and attempt records go to Postgres in batches. New tasks wake it at once (NOTIFY);
 * retries come due on a poll (WCS_CALLBACK_POLL_MS), when expired leases are reclaimed too.
 */
export class CallbackDispatcher implements Worker {
  readonly name = 'callback-dispatcher';
  readonly owner = `${os.hostname().slice(0, 32)}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
  private running = false;
  /** Every delivery runs through this queue (WCS_CALLBACK_CONCURRENCY) and its endpoint's (WCS_CALLBACK_PER_ENDPOINT). */
  private readonly queue: PQueue;
  private readonly endpointQueues = new Map<string, PQueue>();
  private readonly deliveries = new Set<Promise<void>>();
  /** Finished attempts are written together (group commit). */
  private readonly recorder = new Batcher<Finished, boolean>((items) => this.record(items), { maxBatch: 500, maxInFlight: 2 });
  private readonly agents: DeliveryAgents;
  private wakeUp: (() => void) | null = null;
  private pendingWake = false;
  private loopDone: Promise<void> | null = null;
  private listener: Client | null = null;
  private reconnect: NodeJS.Timeout | null = null;

  constructor(
    private readonly database: Database,
    private readonly credentials: CredentialStore,
    private readonly config: CallbackConfig,
    private readonly logger: Logger,
    /** Metrics of recorded attempts (server/src/metrics), when metrics are on. */
    private readonly observer?: CallbackObserver,
  ) {
    this.agents = new DeliveryAgents(config.perEndpoint);
    this.queue = new PQueue({ concurrency: config.concurrency });
  }

  private endpointLoad(endpoint: string): number {
    const q = this.endpointQueues.get(endpoint);
    return q ? q.size + q.pending : 0;
  }

  /** How long a claim lasts: one attempt's deadline plus a margin for recording it. */
  get leaseMs(): number {
    return this.config.timeoutMs + 60_000;
  }

  async start(): Promise<void> {
    this.running = true;
    await this.listen();
    this.loopDone = this.loop();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loopDone;
    await Promise.allSettled([...this.deliveries]);
    if (this.reconnect) clearTimeout(this.reconnect);
    const l = this.listener;
    this.listener = null;
    if (l) await l.end().catch(() => undefined);
    this.agents.destroy();
  }

  /**
   * One pass without the loop (tests, tools): claims what is due now, as far as capacity
   * allows, and waits for those deliveries. Returns how many were delivered.
   */
  async runOnce(): Promise<number> {
    const n = (await this.reclaimExpired()) + (await this.claimAndStart());
    await Promise.allSettled([...this.deliveries]);
    return n;
  }

  private wake(): void {
    this.pendingWake = true;
    const w = this.wakeUp;
    this.wakeUp = null;
    w?.();
  }

  private async listen(): Promise<void> {
    const client = new Client({ connectionString: this.database.url });
    const down = (why: unknown) => {
      if (this.listener !== client) return;
      this.listener = null;
      client.end().catch(() => undefined);
      if (this.running) {
        this.logger.warn('callback wake-up listener lost; polling until it reconnects', { error: why });
        this.reconnect = setTimeout(() => void this.listen().catch(() => undefined), 1000);
        this.reconnect.unref();
      }
    };
    client.on('error', down);
    client.on('end', () => down('connection ended'));
    client.on('notification', () => this.wake());
    this.listener = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${CALLBACK_DUE_CHANNEL}`);
    } catch (e) {
      down(e);
    }
  }

  private async loop(): Promise<void> {
    let lastReclaim = 0;
    while (this.running) {
      this.pendingWake = false;
      let claimed = 0;
      try {
        if (Date.now() - lastReclaim >= this.config.pollMs) {
          lastReclaim = Date.now();
          await this.reclaimExpired();
        }
        claimed = await this.claimAndStart();
      } catch (e) {
        this.logger.error('claiming callback tasks failed', { error: e });
      }
      if (!this.running) break;
      if (claimed > 0 && this.held < this.maxHeld) continue; // there may be more due
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.wakeUp = null;
          resolve();
        }, this.config.pollMs);
        if (this.pendingWake) {
          clearTimeout(timer);
          resolve();
          return;
        }
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** Tasks held by this process: queued behind the running deliveries or running. */
  private get held(): number {
    return this.deliveries.size;
  }

  private get maxHeld(): number {
    return this.config.concurrency * PREFETCH;
  }

  /**
   * Claims due tasks in due order, in one statement: endpoints holding their share are left
   * out, each other endpoint gets at most its remaining room, and rows locked by another
   * process are skipped (FOR UPDATE SKIP LOCKED).
   */
  private async claimAndStart(): Promise<number> {
    const limit = Math.min(this.maxHeld - this.held, CLAIM_MAX);
    if (limit <= 0) return 0;
    const now = new Date();
    const perEndpointMax = this.config.perEndpoint * PREFETCH;
    const loads = [...this.endpointQueues.keys()].map((e) => [e, this.endpointLoad(e)] as const);
    const full = loads.filter(([, n]) => n >= perEndpointMax).map(([e]) => e);
    const partial = loads.filter(([, n]) => n < perEndpointMax);
    // ordered index scan + LIMIT, and primary-key lookups for the update, whatever the statistics say
    const claimed = await this.database.rawWithPlannerSettings<Claimed>(
      { enable_bitmapscan: 'off', enable_seqscan: 'off' },
      `WITH c AS (
         SELECT id, endpoint, due_at FROM callback_tasks
          WHERE status IN ('WAITING','FAILED') AND due_at <= $1 AND endpoint <> ALL($4::text[])
          ORDER BY due_at LIMIT $5
          FOR UPDATE SKIP LOCKED
       ), r AS (
         SELECT c.id, c.due_at FROM (SELECT c.*, row_number() OVER (PARTITION BY c.endpoint ORDER BY c.due_at, c.id) AS rn FROM c) c
           LEFT JOIN unnest($6::text[], $7::int[]) AS room(endpoint, n) ON room.endpoint = c.endpoint
          WHERE c.rn <= coalesce(room.n, $8)
       )
       UPDATE callback_tasks t SET status = 'PROCESSING', lease_owner = $2, lease_until = now() + $3::int * interval '1 millisecond', due_at = NULL, updated_at = $1
         FROM r WHERE t.id = r.id
        ${CLAIM_RETURNING}, r.due_at AS due_time`,
      [
        now.toISOString(), this.owner, this.leaseMs, full, limit,
        partial.map(([e]) => e), partial.map(([, n]) => perEndpointMax - n), perEndpointMax,
      ],
    );
    for (const task of claimed) this.startDelivery(task);
    return claimed.length;
  }

  /**
   * Tasks whose lease ran out (their process died or stalled): claimed again, oldest first. Leases
   * are set and judged on the database's clock, so worker hosts whose clocks differ never take a
   * task another still holds.
   */
  private async reclaimExpired(): Promise<number> {
    const limit = Math.min(this.maxHeld - this.held, CLAIM_MAX);
    if (limit <= 0) return 0;
    const now = new Date();
    const claimed = await this.database.raw<Claimed>(
      `UPDATE callback_tasks t SET lease_owner = $2, lease_until = now() + $3::int * interval '1 millisecond', updated_at = $1
        WHERE t.id IN (SELECT id FROM callback_tasks WHERE status = 'PROCESSING' AND lease_until < now() ORDER BY lease_until LIMIT $4 FOR UPDATE SKIP LOCKED)
        ${CLAIM_RETURNING}, coalesce(t.next_retry_time, t.created_at) AS due_time`,
      [now.toISOString(), this.owner, this.leaseMs, limit],
    );
    for (const task of claimed) this.startDelivery(task);
    return claimed.length;
  }

  private startDelivery(task: Claimed): void {
    const endpoint = endpointOf(task.url);
    let eq = this.endpointQueues.get(endpoint);
    if (!eq) {
      eq = new PQueue({ concurrency: this.config.perEndpoint });
      this.endpointQueues.set(endpoint, eq);
    }
    const endpointQueue = eq;
    // the endpoint's slot first, then a global one: a task waiting for its endpoint holds no global slot
    const p: Promise<void> = endpointQueue
      .add(() => this.queue.add(() => this.deliverOne(task)))
      .catch((e: unknown) => {
        this.logger.error('callback delivery could not be recorded', { taskId: task.id, error: e });
      })
      .finally(() => {
        if (endpointQueue.size + endpointQueue.pending === 0) this.endpointQueues.delete(endpoint);
        this.deliveries.delete(p);
        // room again: claim more once this endpoint's runway or the whole hold is down to half,
        // so claims come in batches, not one statement per finished delivery
        if (endpointQueue.size + endpointQueue.pending <= (this.config.perEndpoint * PREFETCH) / 2 || this.held <= this.maxHeld / 2) this.wake();
      });
    this.deliveries.add(p);
  }

  private async deliverOne(task: Claimed): Promise<void> {
    const startedAt = new Date();
    const notSent = (errorReason: string): DeliveryResult => ({
      requestHeadersSummary: { ':method': 'POST', ':url': task.url },
      responseStatus: null, responseContentType: null, responseBody: null, accepted: false, latencyMs: 0, errorReason,
    });
    let result: DeliveryResult;
    if (task.url === '') {
      result = notSent(`no callback URL is configured for bizType ${task.biz_type}`);
    } else {
      const secret = (await this.credentials.get(task.api_key))?.secrets[0]?.key;
      result = secret
        ? await deliver(
            {
              url: task.url,
              apiKey: task.api_key,
              secret,
              body: task.body,
              timeoutMs: this.config.timeoutMs,
              maxResponseBytes: this.config.maxResponseBytes,
              guardTargets: task.environment === 'live' && !this.config.allowPrivateTargets,
            },
            this.agents,
          )
        : notSent('the application has no current API secret to sign with');
    }
    const written = await this.recorder.submit({ task, url: task.url, result, startedAt });
    if (written && this.observer) {
      this.observer.attemptRecorded({ bizType: task.biz_type, accepted: result.accepted, exhausted: this.exhausted(task, result.accepted), dueAt: task.due_time, finishedAt: new Date() });
    }
    if (!written) this.logger.warn('callback attempt not recorded: the lease was lost (another worker took the task over)', { taskId: task.id });
  }

  /** The task's retry count once this attempt is recorded. */
  private retryTimes(task: Claimed): number {
    return task.is_retry ? task.retry_times + 1 : task.retry_times;
  }

  /** A failed attempt with no retry left. */
  private exhausted(task: Claimed, accepted: boolean): boolean {
    return !accepted && this.retryTimes(task) >= task.max_retry_times;
  }

  /**
   * Finished attempts, many per statement: each task's new state, and its attempt only where
   * this process still held the lease, in one statement (one transaction). Resolves per
   * attempt whether it was written.
   */
  private async record(items: Finished[]): Promise<boolean[]> {
    const now = new Date();
    const rows = items.map(({ task, url, result: r, startedAt }) => {
      const retryTimes = this.retryTimes(task);
      const exhausted = this.exhausted(task, r.accepted);
      const next = r.accepted || exhausted ? null : new Date(now.getTime() + this.config.retryBaseSeconds * 1000 * 2 ** retryTimes);
      const responseSummary = r.responseBody === null ? null : summarize(r.responseBody.toString('utf8'));
      return { task, url, r, startedAt, retryTimes, next, responseSummary };
    });
    const col = <T>(f: (x: (typeof rows)[number]) => T): T[] => rows.map(f);
    const written = await this.database.raw<{ callback_task_id: string }>(
      `WITH x AS (
         SELECT * FROM unnest($2::bigint[], $3::text[], $4::int[], $5::int[], $6::timestamptz[], $7::text[], $8::text[], $9::text[])
           AS x(id, status, retry_times, attempt_no, next_retry_time, response_summary, error, url)
       ), u AS (
         UPDATE callback_tasks t SET status = x.status, retry_times = x.retry_times, attempts = x.attempt_no,
                next_retry_time = x.next_retry_time, due_at = x.next_retry_time, last_response_summary = x.response_summary,
                last_error = x.error, url = x.url, endpoint = ${endpointSql('x.url')},
                lease_owner = NULL, lease_until = NULL, updated_at = $10
           FROM x WHERE t.id = x.id AND t.lease_owner = $1 AND t.status = 'PROCESSING'
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
       RETURNING callback_task_id`,
      [
        this.owner,
        col((x) => x.task.id),
        col((x) => (x.r.accepted ? 'SUCCESS' : 'FAILED')),
        col((x) => x.retryTimes),
        col((x) => x.task.attempts + 1),
        col((x) => (x.next ? x.next.toISOString() : null)),
        col((x) => x.responseSummary),
        col((x) => x.r.errorReason),
        col((x) => x.url),
        now.toISOString(),
        col((x) => x.task.application_id),
        col((x) => JSON.stringify(x.r.requestHeadersSummary)),
        col((x) => summarize(x.task.body.toString('utf8'))),
        col((x) => x.task.body.length),
        col((x) => sha256Hex(x.task.body)),
        col((x) => x.r.responseStatus),
        col((x) => x.r.responseContentType),
        col((x) => (x.r.responseBody === null ? null : x.r.responseBody.length)),
        col((x) => (x.r.responseBody === null ? null : sha256Hex(x.r.responseBody))),
        col((x) => x.r.accepted),
        col((x) => x.r.latencyMs),
        col((x) => x.startedAt.toISOString()),
      ],
    );
    const ok = new Set(written.map((w) => String(w.callback_task_id)));
    for (const x of rows) {
      this.logger.debug('callback attempt', { taskId: x.task.id, attemptNo: x.task.attempts + 1, accepted: x.r.accepted, status: x.r.responseStatus, error: x.r.errorReason, latencyMs: x.r.latencyMs });
    }
    return rows.map((x) => ok.has(String(x.task.id)));
  }
}
