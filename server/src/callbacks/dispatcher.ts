import * as crypto from 'node:crypto';
import * as os from 'node:os';
import { Client } from 'pg';
import PQueue from 'p-queue';
import type { CallbackConfig } from '../config/config';
import type { Logger } from '../config/logger';
import type { CredentialStore } from '../auth/credentials';
import type { Database } from '../db/database';
import type { Worker } from '../workers/worker';
import { deliver, DeliveryAgents, sha256Hex, type DeliveryResult } from './delivery';
import { Batcher } from '../db/batcher';
import { CALLBACK_DUE_CHANNEL } from './outbox';
import { claimDue, recordAttempts, takeSlots, type ClaimedTask, type FinishedAttempt } from './queue-store';
import { pacedRoom, slotDelays } from './pacing';
import { planAfterAttempt } from './retry-schedule';
import type { CallbackObserver } from '../metrics/callback-metrics';

/**
 * Claimed tasks a process holds (queued in p-queue or running), per endpoint and in all, as a
 * multiple of the delivery caps: enough queued behind the running ones that a slot never waits
 * for a claim round trip, few enough that a queued task's lease (timeout + 60 s) cannot run out
 * (at most PREFETCH - 1 timeouts of waiting before its own attempt).
 */
export const PREFETCH = 4;
/** Least time between two claims of one process (ms). */
export const CLAIM_GAP_MS = 4;
/** Most tasks one claim statement takes. */
const CLAIM_MAX = 500;

/** One finished attempt, waiting to be written with others in one statement. */
type Finished = FinishedAttempt;

/**
 * Delivers callback tasks (a worker: `wcs start`, `wcs start --workers-only`). Claims due rows of
 * the queue table (callback_queue) with FOR UPDATE SKIP LOCKED under a lease, so several
 * processes never send the same attempt, and a task held by a process that died comes due again
 * once its lease runs out (the lease is the row's due time). Deliveries run concurrently through
 * p-queue (WCS_CALLBACK_CONCURRENCY) with a queue per endpoint capped at
 * WCS_CALLBACK_PER_ENDPOINT, so one slow merchant cannot take every slot; a process holds at
 * most PREFETCH times the caps (claimed, queued or running), so tasks of a full endpoint are not
 * claimed and a queued task's lease cannot run out while it waits. An application with a
 * delivery rate limit gets send slots 1/rate apart per endpoint, shared by every process
 * (pacing.ts). Claims and attempt records go to Postgres in batches (queue-store.ts). New tasks
 * wake it at once (NOTIFY); retries and expired leases come due on a poll (WCS_CALLBACK_POLL_MS).
 */
export class CallbackDispatcher implements Worker {
  readonly name = 'callback-dispatcher';
  readonly owner = `${os.hostname().slice(0, 32)}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
  private running = false;
  /** Every delivery runs through this queue (WCS_CALLBACK_CONCURRENCY) and its endpoint's (WCS_CALLBACK_PER_ENDPOINT). */
  private readonly queue: PQueue;
  private readonly endpointQueues = new Map<string, PQueue>();
  private readonly deliveries = new Set<Promise<void>>();
  /** Endpoints of applications with a delivery rate limit, seen in claims: endpoint -> deliveries/s. */
  private readonly paced = new Map<string, number>();
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
    let lastClaim = 0;
    while (this.running) {
      // claims at most every CLAIM_GAP_MS: under a stream of commits (one NOTIFY each) a claim takes
      // what several brought, instead of one statement per commit; an idle dispatcher claims at once
      const gap = lastClaim + CLAIM_GAP_MS - Date.now();
      if (gap > 0) await sleep(gap);
      lastClaim = Date.now();
      this.pendingWake = false;
      let claimed = 0;
      try {
        // due tasks, and tasks whose lease ran out (their process died or stalled): one statement
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
        }, this.pollDelay());
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

  /** The poll interval, or sooner while a paced endpoint's next horizon of slots opens. */
  private pollDelay(): number {
    return this.paced.size > 0 ? Math.min(this.config.pollMs, 250) : this.config.pollMs;
  }

  /** Tasks held by this process: queued behind the running deliveries or running. */
  private get held(): number {
    return this.deliveries.size;
  }

  private get maxHeld(): number {
    return this.config.concurrency * PREFETCH;
  }

  /**
   * Claims due tasks (queue-store.ts claimDue): endpoints holding their share are left out, each
   * other endpoint gets at most its remaining room; a paced endpoint (its application has a
   * delivery rate limit) at most a horizon of send slots. Paced tasks then take their slots.
   */
  private async claimAndStart(): Promise<number> {
    const limit = Math.min(this.maxHeld - this.held, CLAIM_MAX);
    if (limit <= 0) return 0;
    const perEndpointMax = this.config.perEndpoint * PREFETCH;
    const endpoints = new Set([...this.endpointQueues.keys(), ...this.paced.keys()]);
    const rooms = [...endpoints].map((e) => {
      const held = this.endpointLoad(e);
      const rate = this.paced.get(e);
      return [e, rate === undefined ? Math.max(0, perEndpointMax - held) : pacedRoom(rate, held, perEndpointMax)] as const;
    });
    const claimed = await claimDue(this.database, {
      owner: this.owner, now: new Date(), leaseMs: this.leaseMs, limit,
      full: rooms.filter(([, n]) => n <= 0).map(([e]) => e),
      room: rooms.filter(([, n]) => n > 0),
      defaultRoom: perEndpointMax,
    });
    const paced = new Map<string, ClaimedTask[]>();
    for (const task of claimed) {
      if (task.rate === null) {
        this.paced.delete(task.endpoint); // the limit was lifted
        this.startDelivery(task, 0);
        continue;
      }
      this.paced.set(task.endpoint, task.rate);
      const key = `${task.application_id} ${task.endpoint}`;
      const group = paced.get(key) ?? [];
      group.push(task);
      paced.set(key, group);
    }
    for (const group of paced.values()) {
      const first = group[0]!;
      const rate = first.rate ?? 1;
      const delays = slotDelays(await takeSlots(this.database, first.application_id, first.endpoint, group.length, rate), group.length, rate);
      group.forEach((task, i) => this.startDelivery(task, delays[i] ?? 0));
    }
    return claimed.length;
  }

  private startDelivery(task: ClaimedTask, delayMs: number): void {
    const endpoint = task.endpoint;
    let eq = this.endpointQueues.get(endpoint);
    if (!eq) {
      eq = new PQueue({ concurrency: this.config.perEndpoint });
      this.endpointQueues.set(endpoint, eq);
    }
    const endpointQueue = eq;
    const sendAt = Date.now() + delayMs;
    // the endpoint's slot first (a paced task waits there for its send slot), then a global one:
    // a task waiting for its endpoint holds no global slot. The slots are held for the HTTP
    // exchange only; the attempt is recorded after they are released (in a batch with others),
    // while the task still counts as held.
    const half = Math.floor((this.config.perEndpoint * PREFETCH) / 2);
    const p: Promise<void> = endpointQueue
      .add(async () => {
        const wait = sendAt - Date.now();
        if (wait > 0) await sleep(wait);
        const sent = await this.queue.add(() => this.send(task));
        // this endpoint's runway just fell to half its share: claim a batch for it
        if (endpointQueue.size + endpointQueue.pending - 1 === half) this.wake();
        return sent;
      })
      .then((sent) => this.recordSent(task, sent))
      .catch((e: unknown) => {
        this.logger.error('callback delivery could not be recorded', { taskId: task.id, error: e });
      })
      .finally(() => {
        this.deliveries.delete(p);
        if (endpointQueue.size + endpointQueue.pending === 0) this.endpointQueues.delete(endpoint);
        // the whole hold just fell to half: claim a batch
        if (this.held === Math.floor(this.maxHeld / 2)) this.wake();
      });
    this.deliveries.add(p);
  }

  /** The HTTP exchange of one attempt (held in the endpoint's and the global slot). */
  private async send(task: ClaimedTask): Promise<{ result: DeliveryResult; startedAt: Date }> {
    const startedAt = new Date();
    const notSent = (errorReason: string): DeliveryResult => ({
      requestHeadersSummary: { ':method': 'POST', ':url': task.url },
      responseStatus: null, responseContentType: null, responseBody: null, accepted: false, latencyMs: 0, errorReason,
    });
    if (task.url === '') return { result: notSent(`no callback URL is configured for bizType ${task.biz_type}`), startedAt };
    const secret = (await this.credentials.get(task.api_key))?.secrets[0]?.key;
    const result = secret
      ? await deliver(
          {
            url: task.url,
            apiKey: task.api_key,
            secret,
            body: task.body,
            bodySha256: bodySha256(task),
            timeoutMs: this.config.timeoutMs,
            maxResponseBytes: this.config.maxResponseBytes,
            guardTargets: task.environment === 'live' && !this.config.allowPrivateTargets,
          },
          this.agents,
        )
      : notSent('the application has no current API secret to sign with');
    return { result, startedAt };
  }

  /** Records a finished attempt (batched with others) and reports it to the metrics. */
  private async recordSent(task: ClaimedTask, { result, startedAt }: { result: DeliveryResult; startedAt: Date }): Promise<void> {
    const outcome = planAfterAttempt({ retryTimes: task.retry_times, maxRetryTimes: task.max_retry_times, isRetry: task.is_retry }, result.accepted, new Date(), this.config.retryBaseSeconds);
    const written = await this.recorder.submit({ task, result, startedAt, outcome });
    if (written && this.observer) {
      this.observer.attemptRecorded({ bizType: task.biz_type, accepted: result.accepted, exhausted: 'exhausted' in outcome, dueAt: task.due_time, finishedAt: new Date() });
    }
    if (!written) this.logger.warn('callback attempt not recorded: the lease was lost (another worker took the task over)', { taskId: task.id });
  }

  /** Finished attempts, many per statement (queue-store.ts recordAttempts). Resolves per attempt whether it was written. */
  private async record(items: Finished[]): Promise<boolean[]> {
    const ok = await recordAttempts(this.database, this.owner, items, new Date());
    for (const x of items) {
      this.logger.debug('callback attempt', { taskId: x.task.id, attemptNo: x.task.attempts + 1, accepted: x.result.accepted, status: x.result.responseStatus, error: x.result.errorReason, latencyMs: x.result.latencyMs });
    }
    return items.map((x) => ok.has(String(x.task.id)));
  }
}

/** sha256hex of the task's body, computed once per claimed task (signed, then logged on the attempt). */
function bodySha256(task: ClaimedTask): string {
  return (task.body_sha256 ??= sha256Hex(task.body));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
