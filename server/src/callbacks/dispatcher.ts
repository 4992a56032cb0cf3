import * as crypto from 'node:crypto';
import * as os from 'node:os';
import { Client } from 'pg';
import PQueue from 'p-queue';
import { QueryTypes } from 'sequelize';
import type { CallbackConfig } from '../config/config';
import type { Logger } from '../config/logger';
import type { CredentialStore } from '../auth/credentials';
import type { Database } from '../db/database';
import type { Worker } from '../workers/worker';
import { deliver, DeliveryAgents, sha256Hex, summarize, type DeliveryResult } from './delivery';
import { CALLBACK_DUE_CHANNEL } from './outbox';

/** scheme://host:port as written in the URL, lower-cased: the unit of the per-endpoint cap. */
export function endpointOf(url: string): string {
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]+/i.exec(url);
  return (m ? m[0] : url).toLowerCase();
}

/** The same, in SQL, over the URL a task is delivered to now. */
const ENDPOINT_SQL = `lower(substring(x.url from '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]+'))`;

/** Due: queued and due, or claimed by a process whose lease ran out (it died or stalled). */
const dueSql = (t: string) => `((${t}status IN ('WAITING','FAILED') AND ${t}due_at <= $1) OR (${t}status = 'PROCESSING' AND ${t}lease_until < $1))`;

interface Candidate {
  id: string;
  url: string;
  api_key: string;
  environment: 'test' | 'live';
}

interface Claimed {
  id: string;
  application_id: number;
  biz_type: string;
  body: Buffer;
  retry_times: number;
  max_retry_times: number;
  attempts: number;
  is_retry: boolean;
}

/**
 * Delivers callback tasks (a worker: `wcs start`, `wcs start --workers-only`). Claims due
 * tasks with FOR UPDATE SKIP LOCKED under a lease, so several processes never send the same
 * attempt and a task held by a process that died is delivered once its lease expires.
 * Deliveries run concurrently through p-queue (WCS_CALLBACK_CONCURRENCY) with a queue per
 * endpoint capped at WCS_CALLBACK_PER_ENDPOINT, so one slow merchant cannot take every slot;
 * tasks of a full endpoint are not even claimed (their leases would run while they wait). New tasks wake it at once (NOTIFY); retries come due on a poll.
 */
export class CallbackDispatcher implements Worker {
  readonly name = 'callback-dispatcher';
  readonly owner = `${os.hostname().slice(0, 32)}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
  private running = false;
  /** Every delivery runs through this queue (WCS_CALLBACK_CONCURRENCY) and its endpoint's (WCS_CALLBACK_PER_ENDPOINT). */
  private readonly queue: PQueue;
  private readonly endpointQueues = new Map<string, PQueue>();
  private readonly deliveries = new Set<Promise<void>>();
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
  ) {
    this.agents = new DeliveryAgents(config.perEndpoint);
    this.queue = new PQueue({ concurrency: config.concurrency });
  }

  /** Deliveries claimed and not finished (queued or running). */
  private get inFlight(): number {
    return this.queue.size + this.queue.pending;
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
    const n = await this.claimAndStart();
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
    while (this.running) {
      this.pendingWake = false;
      let claimed = 0;
      try {
        claimed = await this.claimAndStart();
      } catch (e) {
        this.logger.error('claiming callback tasks failed', { error: e });
      }
      if (!this.running) break;
      if (claimed > 0 && this.inFlight < this.config.concurrency) continue; // there may be more due
      if (this.pendingWake && this.inFlight < this.config.concurrency) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.wakeUp = null;
          resolve();
        }, this.config.pollMs);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  private async claimAndStart(): Promise<number> {
    const free = this.config.concurrency - this.inFlight;
    if (free <= 0) return 0;
    const now = new Date();
    const full = [...this.endpointQueues.keys()].filter((e) => this.endpointLoad(e) >= this.config.perEndpoint);
    const candidates = await this.database.sequelize.query<Candidate>(
      `SELECT x.id, x.url, a.api_key, a.environment FROM (
         SELECT t.id, t.application_id, coalesce(t.due_at, t.lease_until) AS due,
                CASE WHEN t.url_source = 'APPLICATION' THEN coalesce(c.url, '') ELSE t.url END AS url
           FROM callback_tasks t
           LEFT JOIN application_callbacks c ON c.application_id = t.application_id AND c.biz_type = t.biz_type
          WHERE ${dueSql('t.')}
       ) x JOIN applications a ON a.id = x.application_id
       WHERE x.url <> '' AND ${ENDPOINT_SQL} <> ALL($2::text[])
       ORDER BY x.due, x.id
       LIMIT $3`,
      { bind: [now.toISOString(), full, free * 2], type: QueryTypes.SELECT },
    );
    if (candidates.length === 0) return 0;
    // respect the per-endpoint cap within this pass too
    const room = new Map<string, number>();
    const picked: Candidate[] = [];
    for (const c of candidates) {
      if (picked.length >= free) break;
      const e = endpointOf(c.url);
      const left = room.get(e) ?? this.config.perEndpoint - this.endpointLoad(e);
      if (left <= 0) continue;
      room.set(e, left - 1);
      picked.push(c);
    }
    const byId = new Map(picked.map((c) => [c.id, c]));
    const claimed = await this.database.sequelize.query<Claimed>(
      `UPDATE callback_tasks t SET status = 'PROCESSING', lease_owner = $2, lease_until = $3, updated_at = $1
        WHERE t.id IN (SELECT id FROM callback_tasks WHERE id = ANY($4::bigint[]) AND ${dueSql('')} FOR UPDATE SKIP LOCKED)
        RETURNING t.id, t.application_id, t.biz_type, t.body, t.retry_times, t.max_retry_times, t.attempts, (t.next_retry_time IS NOT NULL) AS is_retry`,
      { bind: [now.toISOString(), this.owner, new Date(now.getTime() + this.leaseMs).toISOString(), [...byId.keys()]], type: QueryTypes.SELECT },
    );
    for (const task of claimed) this.startDelivery(task, byId.get(String(task.id))!);
    return claimed.length;
  }

  private startDelivery(task: Claimed, target: Candidate): void {
    const endpoint = endpointOf(target.url);
    let eq = this.endpointQueues.get(endpoint);
    if (!eq) {
      eq = new PQueue({ concurrency: this.config.perEndpoint });
      this.endpointQueues.set(endpoint, eq);
    }
    const endpointQueue = eq;
    const p: Promise<void> = this.queue
      .add(() => endpointQueue.add(() => this.deliverOne(task, target)))
      .catch((e: unknown) => {
        this.logger.error('callback delivery could not be recorded', { taskId: task.id, error: e });
      })
      .finally(() => {
        if (endpointQueue.size + endpointQueue.pending === 0) this.endpointQueues.delete(endpoint);
        this.deliveries.delete(p);
        this.wake();
      });
    this.deliveries.add(p);
  }

  private async deliverOne(task: Claimed, target: Candidate): Promise<void> {
    const startedAt = new Date();
    const creds = await this.credentials.get(target.api_key);
    const secret = creds?.secrets[0]?.key;
    let result: DeliveryResult;
    if (!secret) {
      result = { requestHeadersSummary: { ':method': 'POST', ':url': target.url }, responseStatus: null, responseContentType: null, responseBody: null, accepted: false, latencyMs: 0, errorReason: 'the application has no current API secret to sign with' };
    } else {
      result = await deliver(
        {
          url: target.url,
          apiKey: target.api_key,
          secret,
          body: task.body,
          timeoutMs: this.config.timeoutMs,
          maxResponseBytes: this.config.maxResponseBytes,
          guardTargets: target.environment === 'live' && !this.config.allowPrivateTargets,
        },
        this.agents,
      );
    }
    await this.record(task, target.url, result, startedAt);
  }

  /** The attempt and the task's new state, in one transaction, only while this process holds the lease. */
  private async record(task: Claimed, url: string, r: DeliveryResult, startedAt: Date): Promise<void> {
    const now = new Date();
    const attemptNo = task.attempts + 1;
    const retryTimes = task.is_retry ? task.retry_times + 1 : task.retry_times;
    const exhausted = !r.accepted && retryTimes >= task.max_retry_times;
    const next = r.accepted || exhausted ? null : new Date(now.getTime() + this.config.retryBaseSeconds * 1000 * 2 ** retryTimes);
    const responseSummary = r.responseBody === null ? null : summarize(r.responseBody.toString('utf8'));
    const sequelize = this.database.sequelize;
    await sequelize.transaction(async (transaction) => {
      const [, meta] = await sequelize.query(
        `UPDATE callback_tasks SET status = $3, retry_times = $4, attempts = $5, next_retry_time = $6, due_at = $6,
                last_response_summary = $7, last_error = $8, url = $9, lease_owner = NULL, lease_until = NULL, updated_at = $10
          WHERE id = $1 AND lease_owner = $2 AND status = 'PROCESSING'`,
        {
          bind: [task.id, this.owner, r.accepted ? 'SUCCESS' : 'FAILED', retryTimes, attemptNo, next ? next.toISOString() : null, responseSummary, r.errorReason, url, now.toISOString()],
          transaction,
        },
      );
      if (((meta as { rowCount?: number }).rowCount ?? 0) !== 1) {
        throw new Error(`lease on callback task ${task.id} was lost before its attempt ${attemptNo} was recorded`);
      }
      await sequelize.query(
        `INSERT INTO callback_attempts (callback_task_id, application_id, attempt_no, url, request_headers_summary, request_body_summary,
                request_body_length, request_body_sha256, response_status, response_content_type, response_body_summary,
                response_body_length, response_body_sha256, accepted, latency_ms, error_reason, next_retry_time, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
        {
          bind: [
            task.id, task.application_id, attemptNo, url, JSON.stringify(r.requestHeadersSummary), summarize(task.body.toString('utf8')),
            task.body.length, sha256Hex(task.body), r.responseStatus, r.responseContentType, responseSummary,
            r.responseBody === null ? null : r.responseBody.length, r.responseBody === null ? null : sha256Hex(r.responseBody),
            r.accepted, r.latencyMs, r.errorReason, next ? next.toISOString() : null, startedAt.toISOString(),
          ],
          transaction,
        },
      );
    });
    this.logger.debug('callback attempt', { taskId: task.id, attemptNo, accepted: r.accepted, status: r.responseStatus, error: r.errorReason, latencyMs: r.latencyMs });
  }
}
