import type { RequestHandler } from 'express';
import type { Registry } from 'prom-client';
import type { MetricsConfig } from '../config/config';
import type { Logger } from '../config/logger';
import type { KeyStoreSupervisor } from '../custody/keystore-supervisor';
import type { ApiRoute } from '../http/routes';
import { CallbackBacklogCollector, CallbackMetrics } from './callback-metrics';
import { DEFAULT_SCRAPE_LIMITS, metricsPool, ScrapeCollectors, type ScrapeLimits } from './collector';
import { HttpMetrics } from './http-metrics';
import { createRegistry } from './registry';
import { MetricsServer, type Exposition } from './server';
import { ReconcileCollector } from './reconcile-collector';
import { MetricsTokens } from './tokens';
import { HotWalletCollector, KeyStoreCollector, ScanCollector, WithdrawalQueueCollector } from './state-collectors';

/**
 * The metrics of one service process (docs/operations.md): its registry, the parts of the roles
 * it runs (API: HTTP and authentication; workers: callbacks, scanning, hot wallets, withdrawals;
 * both: the key store when the process has one) and the /metrics server on its own port.
 */
export class ServiceMetrics {
  readonly registry: Registry = createRegistry();
  private readonly collectors: ScrapeCollectors;
  private httpMetrics: HttpMetrics | null = null;
  private callbackMetrics: CallbackMetrics | null = null;
  private pool: { end(): Promise<void> } | null = null;
  private server: MetricsServer | null = null;

  constructor(
    private readonly config: MetricsConfig,
    private readonly logger: Logger,
    private readonly limits: ScrapeLimits = DEFAULT_SCRAPE_LIMITS,
  ) {
    this.collectors = new ScrapeCollectors(this.registry, limits, logger);
  }

  /** The API role: the request middleware for createHttpApp (route templates from the app's routes). */
  http(routes: readonly ApiRoute[]): { readonly middleware: RequestHandler } {
    if (!this.httpMetrics) this.httpMetrics = new HttpMetrics(this.registry, routes);
    return this.httpMetrics;
  }

  /** The callback dispatcher's observer (created with the workers). */
  callbacks(): CallbackMetrics {
    if (!this.callbackMetrics) this.callbackMetrics = new CallbackMetrics(this.registry);
    return this.callbackMetrics;
  }

  /** The workers role: the state read from Postgres at scrape time, over a small pool of its own. */
  enableWorkers(databaseUrl: string): void {
    if (this.pool) return;
    const pool = metricsPool(databaseUrl, this.limits, this.logger);
    this.pool = pool;
    this.callbacks();
    this.collectors.add(new CallbackBacklogCollector(this.registry, pool.query));
    this.collectors.add(new ScanCollector(this.registry, pool.query));
    this.collectors.add(new HotWalletCollector(this.registry, pool.query));
    this.collectors.add(new WithdrawalQueueCollector(this.registry, pool.query));
    this.collectors.add(new ReconcileCollector(this.registry, pool.query));
  }

  /** The key store of this process, whichever role opened it (read at scrape time: null exports nothing). */
  watchKeyStore(backend: string, supervisor: () => KeyStoreSupervisor | null): void {
    this.collectors.add(new KeyStoreCollector(this.registry, backend, supervisor));
  }

  /** One scrape: the scrape-time collectors (bounded by the deadline), then the exposition text. */
  async render(): Promise<Exposition> {
    await this.collectors.refresh();
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  get url(): string {
    if (!this.server) throw new Error('metrics not started');
    return this.server.url;
  }

  async start(): Promise<void> {
    const tokens = this.config.token !== null ? new MetricsTokens(this.config, this.logger) : null;
    const server = new MetricsServer({ host: this.config.host, port: this.config.port, token: this.config.token, tokens, render: () => this.render(), logger: this.logger });
    try {
      await server.start();
    } catch (e) {
      // e.g. EADDRINUSE: name the settings, as a bad value would
      throw new Error(`WCS_METRICS_PORT / WCS_METRICS_HOST: cannot serve metrics on ${this.config.host}:${this.config.port}: ${(e as Error).message}`, { cause: e });
    }
    this.server = server;
    this.logger.info(`metrics listening on ${server.url}`, { url: server.url, auth: this.config.token === null ? 'none' : this.config.previousToken ? 'bearer token (current or previous)' : 'bearer token' });
    if (this.config.token === null && !isLoopback(this.config.host)) {
      this.logger.warn('metrics are served on a non-loopback address without WCS_METRICS_TOKEN', { host: this.config.host });
    }
  }

  async stop(): Promise<void> {
    await this.server?.stop();
    this.server = null;
    const pool = this.pool;
    this.pool = null;
    await pool?.end().catch(() => undefined);
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}
