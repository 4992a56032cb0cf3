import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DependencyContainer } from 'tsyringe';
import type { ServiceConfig } from './config/config';
import type { Logger } from './config/logger';
import { Database } from './db/database';
import { migrate, pendingMigrations } from './db/migrations';
import { defineModels, type Models } from './db/models';
import { Catalogue, seedCatalogue } from './catalogue/catalogue';
import { familyTraitsLookup } from './plugins/loader';
import { createContainer, registerStorageDependents, TOKENS } from './container';
import { createHttpApp, type HttpRateLimits, type ReadyReport } from './http/app';
import type { ApiRoute } from './http/routes';
import type { CredentialStore } from './auth/credentials';
import type { Worker } from './workers/worker';
import type { ApplicationService } from './apps/applications';
import type { SecretBox } from './crypto/secret-box';
import type { AdapterRegistry, KeyStore } from '@wcs/core';
import type { KeyStoreSupervisor } from './custody/keystore-supervisor';
import type { KeyIndexMarkGuard } from './addresses/index-marks';
import type { LostWindowChecker } from './addresses/lost-window';
import { payoutChains } from './withdrawals/hot-wallets';
import { ApiKeyLimiter } from './ratelimit/api-key-limiter';
import { AuthFailureLimiter } from './ratelimit/auth-failure-limiter';
import { PgBucketStore, type SharedBucketStore } from './ratelimit/bucket-store';
import { RedisBucketStore } from './ratelimit/redis-bucket-store';
import type { ServiceMetrics } from './metrics/service-metrics';
import { createConsoleApp } from './console/app';
import { OperatorAuth } from './operators/operator-auth';
import { Operators } from './operators/operators';
import { unopenableSecrets } from './secrets/master-key-rotation';

export interface StorageHandle {
  readonly container: DependencyContainer;
  readonly database: Database;
  readonly catalogue: Catalogue;
  readonly applications: ApplicationService;
  /** Migration versions this open applied (empty when the schema was current). */
  readonly appliedMigrations: readonly number[];
  close(): Promise<void>;
}

/** Opens the database (URL or embedded), applies migrations, seeds the catalogue. Used by `wcs start` and every CLI command. */
export async function openStorage(config: ServiceConfig, logger: Logger, extraRoutes: readonly ApiRoute[] = []): Promise<StorageHandle> {
  const container = createContainer(config, logger);
  container.resolve<SecretBox>(TOKENS.SecretBox); // fail fast on a bad master key
  const database = container.resolve<Database>(TOKENS.Database);
  await database.open();
  try {
    const models: Models = defineModels(database.sequelize);
    const applied = await migrate(database.sequelize);
    if (applied.length) logger.info('migrations applied', { versions: applied });
    const traitsOf = familyTraitsLookup(config, () => container.resolve<AdapterRegistry>(TOKENS.AdapterRegistry));
    await seedCatalogue(database.sequelize, models, config.file, traitsOf);
    const catalogue = await Catalogue.load(models, traitsOf);
    registerStorageDependents(container, models, catalogue, extraRoutes);
    return {
      container,
      database,
      catalogue,
      applications: container.resolve<ApplicationService>(TOKENS.ApplicationService),
      appliedMigrations: applied,
      close: () => database.close(),
    };
  } catch (e) {
    await database.close();
    throw e;
  }
}

export interface ServiceOptions {
  api: boolean;
  workers: boolean;
  /** The operator console on its own port (WCS_CONSOLE_PORT, docs/console.md). */
  console?: boolean;
  /** Extra signed routes (tests mount a POST echo route here). */
  extraRoutes?: readonly ApiRoute[];
}

/** The running service: API and/or workers over one storage handle. */
export class WcsService {
  private server: Server | null = null;
  private consoleServer: Server | null = null;
  private workers: Worker[] = [];
  private credentials: CredentialStore | null = null;
  private keystore: KeyStore | null = null;
  private keystoreSupervisor: KeyStoreSupervisor | null = null;
  private stopping: Promise<void> | null = null;
  private redisBuckets: RedisBucketStore | null = null;
  private metrics: ServiceMetrics | null = null;
  private lostWindow: LostWindowChecker | null = null;
  /** Requests whose handlers have not finished; shutdown waits for them before closing the key store and pool. */
  private readonly inFlight = { count: 0 };

  private constructor(
    readonly config: ServiceConfig,
    readonly logger: Logger,
    readonly storage: StorageHandle,
  ) {}

  static async start(config: ServiceConfig, logger: Logger, options: ServiceOptions): Promise<WcsService> {
    const storage = await openStorage(config, logger, options.extraRoutes);
    const svc = new WcsService(config, logger, storage);
    try {
      // a process without the key some secrets are sealed under fails those applications' requests (docs/deployment.md, "Rotating the master key")
      const foreign = await unopenableSecrets(storage.database.sequelize, storage.container.resolve<SecretBox>(TOKENS.SecretBox));
      if (foreign.length > 0) {
        logger.error('secrets are sealed under a master key this process does not hold: their applications and operators fail here until it gets that key',
          { sealed: foreign.map((c) => ({ kind: c.kind, keyId: c.keyId, rows: c.rows })) });
      }
      svc.metrics = storage.container.resolve<ServiceMetrics | null>(TOKENS.Metrics);
      if (options.api) await svc.startApi();
      if (options.workers) await svc.startWorkers();
      if (options.console) await svc.startConsole();
      if (svc.metrics) {
        svc.metrics.watchKeyStore(config.keystoreBackend, () => svc.keystoreSupervisor);
        await svc.metrics.start();
      }
    } catch (e) {
      await svc.stop();
      throw e;
    }
    return svc;
  }

  get url(): string {
    const a = this.server?.address() as AddressInfo | null;
    if (!a) throw new Error('API not started');
    const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
    return `http://${host}:${a.port}`;
  }

  /** The console's address (http://host:port) when it runs. */
  get consoleUrl(): string {
    const a = this.consoleServer?.address() as AddressInfo | null;
    if (!a) throw new Error('console not started');
    const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
    return `http://${host}:${a.port}`;
  }

  /** The Prometheus endpoint (http://host:port/metrics) when WCS_METRICS_PORT is set. */
  get metricsUrl(): string {
    if (!this.metrics) throw new Error('metrics are off (WCS_METRICS_PORT is unset)');
    return this.metrics.url;
  }

  async readiness(): Promise<ReadyReport> {
    const checks: Record<string, string> = {};
    let ready = true;
    try {
      await this.storage.database.ping();
      const pending = await pendingMigrations(this.storage.database.sequelize);
      checks.database = pending.length ? `pending migrations ${pending.join(',')}` : 'ok';
      if (pending.length) ready = false;
    } catch (e) {
      checks.database = `unreachable: ${(e as Error).message}`;
      ready = false;
    }
    checks.credentialCache = this.credentials?.cacheActive ? 'listening' : 'bypassed';
    if (this.keystoreSupervisor) {
      const ks = await this.keystoreSupervisor.check();
      checks.keystore = ks.detail;
      if (!ks.ready) ready = false;
    }
    return { ready, checks };
  }

  private async startApi(): Promise<void> {
    const c = this.storage.container;
    // Every chain of the catalogue must have an adapter: fail at start, not on a merchant's request.
    const registry = c.resolve<AdapterRegistry>(TOKENS.AdapterRegistry);
    for (const env of ['test', 'live'] as const) for (const chain of this.storage.catalogue.chains(env)) registry.forChain(chain);
    // Static misconfiguration (KEYSTORE_CONFIG) fails the start; a key store that cannot open
    // now (HSM away, wrong passphrase) does not: the API answers 503 for key operations and
    // /readyz says why until a background retry succeeds.
    this.keystoreSupervisor = c.resolve<KeyStoreSupervisor>(TOKENS.KeyStoreSupervisor);
    this.keystore = this.keystoreSupervisor.store;
    await this.keystoreSupervisor.start();
    await this.checkIndexMarks();
    this.credentials = c.resolve<CredentialStore>(TOKENS.CredentialStore);
    await this.credentials.start();
    const routes = c.resolve<ApiRoute[]>(TOKENS.ApiRoutes);
    const app = createHttpApp({
      authenticator: c.resolve(TOKENS.Authenticator),
      logger: this.logger,
      bodyLimitBytes: this.config.bodyLimitBytes,
      routes,
      readiness: () => this.readiness(),
      inFlight: this.inFlight,
      rateLimits: await this.httpRateLimits(),
      ...(this.metrics ? { metrics: this.metrics.http(routes) } : {}),
    });
    await new Promise<void>((resolve, reject) => {
      const server = app.listen(this.config.port, this.config.host);
      server.once('listening', () => resolve());
      server.once('error', reject);
      server.keepAliveTimeout = 65_000;
      server.headersTimeout = 66_000;
      server.requestTimeout = 30_000;
      this.server = server;
    });
    this.logger.info(`API listening on ${this.url}`, { url: this.url, database: this.storage.database.mode });
  }

  /**
   * The key store's key-index marks against the database (docs/deployment.md, "Key-index marks"):
   * after a restore the allocator continues above the marks and the lost window's addresses are
   * looked up on chain. A key store that is not open yet is checked before the first reservation.
   */
  private async checkIndexMarks(): Promise<void> {
    const c = this.storage.container;
    this.lostWindow = c.resolve<LostWindowChecker>(TOKENS.LostWindowChecker);
    if (this.keystoreSupervisor?.ready) {
      await c.resolve<KeyIndexMarkGuard>(TOKENS.KeyIndexMarkGuard).check()
        .catch((e: unknown) => this.logger.error('key-index marks check failed; it runs again before the first address is created', { error: (e as Error).message }));
    }
    this.lostWindow.kick();
  }

  private async startConsole(): Promise<void> {
    const sequelize = this.storage.database.sequelize;
    const operators = new Operators(sequelize, this.storage.container.resolve<SecretBox>(TOKENS.SecretBox));
    const app = createConsoleApp({
      storage: this.storage, config: this.config, operators, auth: new OperatorAuth(sequelize, operators), logger: this.logger,
      readiness: () => this.readiness(), keystoreSupervisor: () => this.keystoreSupervisor,
    });
    await new Promise<void>((resolve, reject) => {
      const server = app.listen(this.config.console.port, this.config.console.host);
      server.once('listening', () => resolve());
      server.once('error', reject);
      server.requestTimeout = 30_000;
      this.consoleServer = server;
    });
    this.logger.info(`console listening on ${this.consoleUrl}`, { url: this.consoleUrl });
  }

  private async httpRateLimits(): Promise<HttpRateLimits> {
    const rl = this.config.rateLimits;
    return {
      trustProxy: rl.trustProxy,
      authFailures: rl.authFailures ? new AuthFailureLimiter(rl.authFailures) : null,
      // always present: an application's own limit applies even when the default is off
      apiKey: { limiter: new ApiKeyLimiter(await this.bucketStore()), defaultPolicy: rl.apiKey },
    };
  }

  /** Where the per-key rate buckets live: Redis when WCS_RATE_LIMIT_REDIS_URL is set, else the service's Postgres. */
  private async bucketStore(): Promise<SharedBucketStore> {
    const url = this.config.rateLimits.redisUrl;
    if (!url) return new PgBucketStore(this.storage.database.sequelize);
    const redis = new RedisBucketStore(url);
    this.redisBuckets = redis;
    try {
      await redis.init();
    } catch (e) {
      throw new Error(`WCS_RATE_LIMIT_REDIS_URL: cannot reach Redis: ${(e as Error).message}`);
    }
    return redis;
  }

  private async startWorkers(): Promise<void> {
    if (!this.credentials) {
      // the callback dispatcher signs with the applications' secrets (cached while LISTEN is up)
      this.credentials = this.storage.container.resolve<CredentialStore>(TOKENS.CredentialStore);
      await this.credentials.start();
    }
    if (!this.keystoreSupervisor && this.paysOut()) {
      // the payout worker signs (and the ledger derives hot addresses) through the key store
      this.keystoreSupervisor = this.storage.container.resolve<KeyStoreSupervisor>(TOKENS.KeyStoreSupervisor);
      this.keystore = this.keystoreSupervisor.store;
      await this.keystoreSupervisor.start();
    }
    this.metrics?.enableWorkers(this.storage.database.url);
    this.workers = this.storage.container.resolve<Worker[]>(TOKENS.Workers);
    for (const w of this.workers) await w.start();
    this.logger.info('workers started', { workers: this.workers.map((w) => w.name) });
  }

  /** Whether any chain has an RPC endpoint and an adapter that can pay out (then workers need the key store). */
  private paysOut(): boolean {
    return payoutChains(this.storage.catalogue, this.storage.container.resolve<AdapterRegistry>(TOKENS.AdapterRegistry), this.config.deposits.endpoints).length > 0;
  }

  stop(): Promise<void> {
    if (!this.stopping) this.stopping = this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    this.keystoreSupervisor?.stop(); // no new key-store attempts once shutdown has begun
    if (this.consoleServer) {
      const c = this.consoleServer;
      this.consoleServer = null;
      await new Promise<void>((resolve) => {
        c.close(() => resolve());
        c.closeAllConnections();
      });
    }
    if (this.server) {
      const s = this.server;
      await new Promise<void>((resolve) => {
        s.close(() => resolve());
        s.closeIdleConnections();
        setTimeout(() => {
          s.closeAllConnections();
          resolve();
        }, 10_000).unref();
      });
      this.server = null;
      // Handlers may outlive their sockets (closed after the drain timeout): let them finish, bounded.
      const deadline = Date.now() + 5_000;
      while (this.inFlight.count > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    }
    if (this.redisBuckets) await this.redisBuckets.destroy();
    for (const w of this.workers) await w.stop();
    await this.metrics?.stop();
    if (this.credentials) await this.credentials.stop();
    await this.lostWindow?.stop();
    if (this.keystore) await this.keystore.destroy().catch((e: unknown) => this.logger.error('keystore destroy failed', { error: e }));
    await this.storage.close();
    this.logger.info('stopped');
  }
}
