import { Pool } from 'pg';
import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '../config/logger';
import { METRIC_PREFIX } from './registry';

/** One statement on the metrics connection pool; rows as pg returns them. */
export type MetricsQuery = <R extends object>(text: string, values?: unknown[]) => Promise<R[]>;

/** Reads an area's state at scrape time and sets its gauges. */
export interface Collector {
  /** Label value of wcs_metrics_collector_up. */
  readonly name: string;
  /** Reads; resolves with what sets the gauges, applied only when the read finished in time. */
  collect(): Promise<() => void>;
  /** Drops the area's series (after a failed read: no stale values are exported as current). */
  clear(): void;
}

export interface ScrapeLimits {
  /** Longest a scrape waits for all collectors; a collector not done by then is reported down. */
  readonly deadlineMs: number;
  /** Server-side limit of one statement (Postgres statement_timeout). */
  readonly statementTimeoutMs: number;
}

export const DEFAULT_SCRAPE_LIMITS: ScrapeLimits = { deadlineMs: 5000, statementTimeoutMs: 2000 };

/**
 * A small pool of its own (2 connections) for scrape-time reads: a scrape never takes a
 * connection the API or the workers need, and every statement is bounded by statement_timeout
 * on the server and by a client-side query timeout.
 */
export function metricsPool(url: string, limits: ScrapeLimits, logger: Logger): { query: MetricsQuery; end(): Promise<void> } {
  const pool = new Pool({
    connectionString: url,
    max: 2,
    idleTimeoutMillis: 60_000,
    connectionTimeoutMillis: limits.deadlineMs,
    statement_timeout: limits.statementTimeoutMs,
    query_timeout: limits.statementTimeoutMs + 1000,
    application_name: 'wcs-metrics',
  });
  pool.on('error', (e: Error) => logger.warn('metrics database connection lost', { reason: e.message }));
  return {
    query: async <R extends object>(text: string, values: unknown[] = []) => (await pool.query<R>(text, values)).rows,
    end: () => pool.end(),
  };
}

class DeadlineExceeded extends Error {}

/**
 * Runs the collectors of a scrape together under one deadline. A collector that fails or runs out
 * of time has its series dropped and wcs_metrics_collector_up{collector} = 0 (logged once per
 * distinct reason, without a stack: a slow or unreachable database is an expected condition);
 * the scrape itself always answers. Concurrent scrapes share one run.
 */
export class ScrapeCollectors {
  private readonly collectors: Collector[] = [];
  private readonly up: Gauge<'collector'>;
  private readonly seconds: Gauge<'collector'>;
  private running: Promise<void> | null = null;
  private readonly lastFailure = new Map<string, string>();

  constructor(registry: Registry, private readonly limits: ScrapeLimits, private readonly logger: Logger) {
    this.up = new Gauge({
      name: `${METRIC_PREFIX}metrics_collector_up`,
      help: 'Whether a scrape-time collector read its state in the last scrape (1) or failed or timed out (0; its series are left out)',
      labelNames: ['collector'],
      registers: [registry],
    });
    this.seconds = new Gauge({
      name: `${METRIC_PREFIX}metrics_collector_duration_seconds`,
      help: 'How long a scrape-time collector took in the last scrape',
      labelNames: ['collector'],
      registers: [registry],
    });
  }

  add(c: Collector): void {
    if (!this.collectors.some((x) => x.name === c.name)) this.collectors.push(c);
  }

  refresh(): Promise<void> {
    if (!this.running) this.running = this.runAll().finally(() => (this.running = null));
    return this.running;
  }

  private async runAll(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DeadlineExceeded(`no answer within ${this.limits.deadlineMs} ms`)), this.limits.deadlineMs);
    });
    deadline.catch(() => undefined);
    try {
      await Promise.all(this.collectors.map((c) => this.runOne(c, deadline)));
    } finally {
      clearTimeout(timer);
    }
  }

  private async runOne(c: Collector, deadline: Promise<never>): Promise<void> {
    const started = process.hrtime.bigint();
    const work = c.collect();
    work.catch(() => undefined); // still settles after the deadline: nothing unhandled
    try {
      const apply = await Promise.race([work, deadline]);
      apply();
      this.up.set({ collector: c.name }, 1);
      if (this.lastFailure.delete(c.name)) this.logger.info('metrics collector recovered', { collector: c.name });
    } catch (e) {
      c.clear();
      this.up.set({ collector: c.name }, 0);
      const reason = e instanceof Error ? e.message : String(e);
      if (this.lastFailure.get(c.name) !== reason) {
        this.lastFailure.set(c.name, reason);
        this.logger.warn('metrics collector failed; its series are left out of the scrape', { collector: c.name, reason });
      }
    } finally {
      this.seconds.set({ collector: c.name }, Number(process.hrtime.bigint() - started) / 1e9);
    }
  }
}
