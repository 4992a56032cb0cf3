import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { bounded, METRIC_PREFIX } from './registry';
import type { Collector, MetricsQuery } from './collector';

/** What the callback dispatcher reports of each attempt it recorded (server/src/callbacks/dispatcher.ts). */
export interface CallbackObserver {
  attemptRecorded(attempt: {
    readonly bizType: string;
    readonly accepted: boolean;
    /** A failure with no retry left: the task stays FAILED until resent. */
    readonly exhausted: boolean;
    /** When the task came due for this attempt (created, retry time, resend), if known. */
    readonly dueAt: Date | null;
    readonly finishedAt: Date;
  }): void;
}

const BIZ_TYPES = new Set(['RECHARGE', 'WITHDRAW', 'COLLECT', 'TRANSFER', 'CHAIN_EVENT']);
/** Seconds from due to delivered: from a prompt delivery (tens of ms) to hours of retries. */
export const DELIVERY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14400, 86400];

/** Delivery outcomes and due-to-delivered latency, counted by the dispatcher of this process. */
export class CallbackMetrics implements CallbackObserver {
  private readonly attempts: Counter<'biz_type' | 'outcome'>;
  private readonly latency: Histogram<'biz_type'>;

  constructor(registry: Registry) {
    this.attempts = new Counter({
      name: `${METRIC_PREFIX}callback_attempts_total`,
      help: 'Callback delivery attempts recorded by this process, by bizType and outcome (delivered: acknowledged; retry: failed, a retry is planned; gave_up: failed, no retry left)',
      labelNames: ['biz_type', 'outcome'],
      registers: [registry],
    });
    this.latency = new Histogram({
      name: `${METRIC_PREFIX}callback_delivery_latency_seconds`,
      help: 'Seconds from when a callback task came due (created, retry time or resend) to its acknowledged delivery, by bizType',
      labelNames: ['biz_type'],
      buckets: DELIVERY_BUCKETS,
      registers: [registry],
    });
    this.attempts.inc({ biz_type: 'RECHARGE', outcome: 'delivered' }, 0);
    this.latency.zero({ biz_type: 'RECHARGE' });
  }

  attemptRecorded(a: Parameters<CallbackObserver['attemptRecorded']>[0]): void {
    const bizType = bounded(a.bizType, BIZ_TYPES);
    const outcome = a.accepted ? 'delivered' : a.exhausted ? 'gave_up' : 'retry';
    this.attempts.labels(bizType, outcome).inc();
    if (a.accepted && a.dueAt) this.latency.labels(bizType).observe(Math.max(0, (a.finishedAt.getTime() - a.dueAt.getTime()) / 1000));
  }
}

/** The (status, state) pairs of the backlog, always exported (0 when empty). */
const BACKLOG_SERIES: ReadonlyArray<readonly [string, string]> = [
  ['WAITING', 'due'], ['WAITING', 'scheduled'], ['FAILED', 'due'], ['FAILED', 'scheduled'], ['PROCESSING', 'in_flight'],
];

/**
 * The callback outbox backlog, read at scrape time with one statement over the dispatcher's own
 * partial indexes (due tasks, leased tasks), so its cost follows the backlog, not the table:
 * tasks waiting for a first attempt or a retry (due now or scheduled later), tasks being
 * delivered, and the age of the oldest due task. Tasks that gave up (FAILED, no retry) are not
 * backlog: they wait for a resend.
 */
export class CallbackBacklogCollector implements Collector {
  readonly name = 'callback_backlog';
  private readonly tasks: Gauge<'status' | 'state'>;
  private readonly oldest: Gauge;

  constructor(registry: Registry, private readonly query: MetricsQuery) {
    this.tasks = new Gauge({
      name: `${METRIC_PREFIX}callback_backlog_tasks`,
      help: 'Callback tasks not yet delivered, by status and state (due: waiting for a dispatcher; scheduled: retry later; in_flight: claimed by a dispatcher)',
      labelNames: ['status', 'state'],
      registers: [registry],
    });
    this.oldest = new Gauge({
      name: `${METRIC_PREFIX}callback_oldest_due_seconds`,
      help: 'Seconds since the oldest due, undelivered callback task came due (0 when none is due)',
      registers: [registry],
    });
  }

  async collect(): Promise<() => void> {
    const rows = await this.query<{ status: string; state: string; n: number; oldest: number | null }>(
      `SELECT t.status, CASE WHEN q.due_at <= now() THEN 'due' ELSE 'scheduled' END AS state, count(*)::int AS n,
              extract(epoch FROM now() - min(q.due_at) FILTER (WHERE q.due_at <= now()))::float8 AS oldest
         FROM callback_queue q JOIN callback_tasks t ON t.id = q.task_id WHERE q.lease_owner IS NULL GROUP BY 1, 2
       UNION ALL
       SELECT 'PROCESSING', 'in_flight', count(*)::int, NULL FROM callback_queue WHERE lease_owner IS NOT NULL`,
    );
    return () => {
      const counts = new Map(rows.map((r) => [`${r.status}/${r.state}`, r.n]));
      for (const [status, state] of BACKLOG_SERIES) this.tasks.set({ status, state }, counts.get(`${status}/${state}`) ?? 0);
      this.oldest.set(Math.max(0, ...rows.map((r) => r.oldest ?? 0)));
    };
  }

  clear(): void {
    this.tasks.reset();
    this.oldest.reset();
  }
}
