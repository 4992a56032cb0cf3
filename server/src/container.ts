import 'reflect-metadata';
import { container as rootContainer, type DependencyContainer, instanceCachingFactory } from 'tsyringe';
import type { ServiceConfig } from './config/config';
import type { Logger } from './config/logger';
import { Database } from './db/database';
import type { Models } from './db/models';
import { SecretBox } from './crypto/secret-box';
import { Catalogue } from './catalogue/catalogue';
import { CredentialStore } from './auth/credentials';
import { NonceStore } from './auth/nonces';
import { Authenticator } from './auth/authenticate';
import { ApplicationService } from './apps/applications';
import { supportRoutes } from './http/support-routes';
import type { ApiRoute } from './http/routes';
import { IntervalWorker, type Worker } from './workers/worker';
import { addressRoutes } from './http/address-routes';
import { AddressService } from './addresses/address-service';
import { KeyIndexMarkGuard } from './addresses/index-marks';
import { LostWindowChecker } from './addresses/lost-window';
import { keyStoreOptions, loadAdapters, loadKeyStorePlugin } from './plugins/loader';
import { CallbackService } from './callbacks/callback-service';
import { CallbackDispatcher } from './callbacks/dispatcher';
import { callbackRoutes } from './http/callback-routes';
import { PgKeyDirectory } from './custody/key-directory';
import { KeyStoreSupervisor } from './custody/keystore-supervisor';
import { RechargeService } from './deposits/recharge-service';
import { rechargeRoutes } from './http/recharge-routes';
import { withdrawRoutes } from './http/withdraw-routes';
import { WithdrawService } from './withdrawals/withdraw-service';
import { HotWalletLedger, HotWallets } from './withdrawals/hot-wallets';
import { TransferPipeline } from './transfers/pipeline';
import type { ChainView } from './catalogue/catalogue';
import { PayoutIntake } from './withdrawals/payout-intake';
import { PayoutOwner } from './withdrawals/payout-owner';
import { CollectionOwner } from './collection/item-owner';
import { DelegatedSweepOwner } from './collection/delegated-owner';
import { DelegatedSweeper } from './collection/delegated';
import { CollectionIntake } from './collection/collector';
import { SweepPricer } from './collection/sweep-quote';
import { TrustlineOwner } from './collection/trustlines';
import { CollectionPlanner } from './collection/planner';
import { CollectionProcessor } from './collection/processor';
import { FeeWallets } from './collection/fee-wallets';
import { ScanWorker, scanStatus } from './deposits/scan-worker';
import { Reconciler } from './reconciliation/runner';
import type { AdapterRegistry } from '@wcs/core';
import { ServiceMetrics } from './metrics/service-metrics';
import { SubscriptionService } from './chain-events/subscription-service';
import { ChainEventService } from './chain-events/event-service';
import { EventFeed } from './callbacks/event-feed';
import { chainEventRoutes } from './http/chain-event-routes';
import { reconciliationRoutes } from './http/reconciliation-routes';

/** Injection tokens. The composition root below is the only place that wires them. */
export const TOKENS = {
  Config: Symbol('Config'),
  Logger: Symbol('Logger'),
  Database: Symbol('Database'),
  SecretBox: Symbol('SecretBox'),
  Catalogue: Symbol('Catalogue'),
  CredentialStore: Symbol('CredentialStore'),
  NonceStore: Symbol('NonceStore'),
  Authenticator: Symbol('Authenticator'),
  ApplicationService: Symbol('ApplicationService'),
  ApiRoutes: Symbol('ApiRoutes'),
  AdapterRegistry: Symbol('AdapterRegistry'),
  KeyDirectory: Symbol('KeyDirectory'),
  KeyStore: Symbol('KeyStore'),
  KeyStoreSupervisor: Symbol('KeyStoreSupervisor'),
  AddressService: Symbol('AddressService'),
  /** The key store's key-index marks over the deposit allocator (docs/deployment.md, "Key-index marks"). */
  KeyIndexMarkGuard: Symbol('KeyIndexMarkGuard'),
  /** Looks up on chain the addresses of windows a restore lost. */
  LostWindowChecker: Symbol('LostWindowChecker'),
  Workers: Symbol('Workers'),
  CallbackService: Symbol('CallbackService'),
  RechargeService: Symbol('RechargeService'),
  WithdrawService: Symbol('WithdrawService'),
  SubscriptionService: Symbol('SubscriptionService'),
  ChainEventService: Symbol('ChainEventService'),
  EventFeed: Symbol('EventFeed'),
  /** ServiceMetrics, or null when WCS_METRICS_PORT is unset. */
  Metrics: Symbol('Metrics'),
} as const;

/**
 * Stage 1: what exists before storage is open. Stage 2 (registerStorageDependents)
 * adds what needs an open database and the loaded catalogue.
 */
export function createContainer(config: ServiceConfig, logger: Logger): DependencyContainer {
  const c = rootContainer.createChildContainer();
  c.register(TOKENS.Config, { useValue: config });
  c.register(TOKENS.Logger, { useValue: logger });
  c.register(TOKENS.Database, { useFactory: instanceCachingFactory(() => new Database(config, logger)) });
  // Adapters load on first use (the API, the workers; the catalogue only for a family core does not know), not by every CLI command.
  c.register(TOKENS.AdapterRegistry, { useFactory: instanceCachingFactory(() => loadAdapters(config)) });
  c.register(TOKENS.SecretBox, { useFactory: instanceCachingFactory(() => SecretBox.fromConfig(config)) });
  c.register(TOKENS.Metrics, { useFactory: instanceCachingFactory(() => (config.metrics ? new ServiceMetrics(config.metrics, logger) : null)) });
  return c;
}

export function registerStorageDependents(c: DependencyContainer, models: Models, catalogue: Catalogue, extraRoutes: readonly ApiRoute[] = []): void {
  const config = c.resolve<ServiceConfig>(TOKENS.Config);
  const logger = c.resolve<Logger>(TOKENS.Logger);
  const db = c.resolve<Database>(TOKENS.Database);
  c.register(TOKENS.Catalogue, { useValue: catalogue });
  c.register(TOKENS.NonceStore, { useFactory: instanceCachingFactory(() => new NonceStore(db.sequelize)) });
  c.register(TOKENS.CredentialStore, {
    useFactory: instanceCachingFactory((x) => new CredentialStore(db.sequelize, x.resolve(TOKENS.SecretBox), db.url, logger)),
  });
  c.register(TOKENS.Authenticator, {
    useFactory: instanceCachingFactory((x) => new Authenticator(x.resolve(TOKENS.CredentialStore), x.resolve(TOKENS.NonceStore))),
  });
  c.register(TOKENS.ApplicationService, {
    // the adapters load on first use: CLI commands that never check a chain's adapter start without them
    useFactory: instanceCachingFactory((x) => new ApplicationService(db.sequelize, models, x.resolve(TOKENS.SecretBox), catalogue, config.callbacks.allowPrivateTargets,
      { forChain: (chain) => x.resolve<AdapterRegistry>(TOKENS.AdapterRegistry).forChain(chain) })),
  });
  // The key store is loaded on first use (the API), not by every CLI command.
  // Key-per-ref backends (PKCS#11) record which device key serves which ref in Postgres.
  c.register(TOKENS.KeyDirectory, { useFactory: instanceCachingFactory(() => new PgKeyDirectory(db)) });
  c.register(TOKENS.KeyStore, {
    useFactory: instanceCachingFactory((x) => loadKeyStorePlugin(config).create(keyStoreOptions(config, x.resolve(TOKENS.KeyDirectory)))),
  });
  // Opens the key store at start and again in the background while it cannot open (the API runs meanwhile).
  c.register(TOKENS.KeyStoreSupervisor, { useFactory: instanceCachingFactory((x) => new KeyStoreSupervisor(x.resolve(TOKENS.KeyStore), logger)) });
  c.register(TOKENS.AddressService, {
    useFactory: instanceCachingFactory((x) => {
      const supervisor = x.resolve<KeyStoreSupervisor>(TOKENS.KeyStoreSupervisor);
      return new AddressService(db, catalogue, x.resolve(TOKENS.AdapterRegistry), supervisor.store,
        { keyStoreReady: () => supervisor.assertReady(), marks: x.resolve<KeyIndexMarkGuard>(TOKENS.KeyIndexMarkGuard) });
    }),
  });
  c.register(TOKENS.LostWindowChecker, {
    useFactory: instanceCachingFactory((x) => {
      const supervisor = x.resolve<KeyStoreSupervisor>(TOKENS.KeyStoreSupervisor);
      return new LostWindowChecker(db.sequelize, catalogue, x.resolve(TOKENS.AdapterRegistry), config.deposits.endpoints, supervisor.store, logger,
        { keyStoreReady: () => supervisor.assertReady() });
    }),
  });
  c.register(TOKENS.KeyIndexMarkGuard, {
    useFactory: instanceCachingFactory((x) => {
      const supervisor = x.resolve<KeyStoreSupervisor>(TOKENS.KeyStoreSupervisor);
      return new KeyIndexMarkGuard(db.sequelize, supervisor.store, {
        ahead: config.keyIndexMarkAhead, logger, keyStoreReady: () => supervisor.assertReady(),
        onGaps: () => x.resolve<LostWindowChecker>(TOKENS.LostWindowChecker).kick(),
      });
    }),
  });
  c.register(TOKENS.CallbackService, { useFactory: instanceCachingFactory(() => new CallbackService(db.sequelize)) });
  c.register(TOKENS.RechargeService, { useFactory: instanceCachingFactory(() => new RechargeService(db.sequelize)) });
  c.register(TOKENS.WithdrawService, { useFactory: instanceCachingFactory((x) => new WithdrawService(db.sequelize, catalogue, x.resolve(TOKENS.AdapterRegistry), config.callbacks.allowPrivateTargets)) });
  c.register(TOKENS.SubscriptionService, {
    useFactory: instanceCachingFactory((x) => new SubscriptionService(db.sequelize, catalogue, x.resolve(TOKENS.AdapterRegistry),
      (chain) => scanStatus(config.deposits, x.resolve<AdapterRegistry>(TOKENS.AdapterRegistry), chain))),
  });
  c.register(TOKENS.EventFeed, { useFactory: instanceCachingFactory(() => new EventFeed(db.sequelize)) });
  c.register(TOKENS.ChainEventService, { useFactory: instanceCachingFactory(() => new ChainEventService(db.sequelize)) });
  c.register(TOKENS.ApiRoutes, {
    useFactory: instanceCachingFactory((x): ApiRoute[] => [
      ...supportRoutes(catalogue, (chain) => scanStatus(config.deposits, x.resolve<AdapterRegistry>(TOKENS.AdapterRegistry), chain)),
      ...rechargeRoutes(x.resolve(TOKENS.RechargeService)),
      ...withdrawRoutes(x.resolve(TOKENS.WithdrawService)),
      ...addressRoutes(x.resolve(TOKENS.AddressService)),
      ...callbackRoutes(x.resolve(TOKENS.CallbackService), x.resolve(TOKENS.EventFeed)),
      ...chainEventRoutes(x.resolve(TOKENS.SubscriptionService), x.resolve(TOKENS.ChainEventService)),
      ...reconciliationRoutes(db.sequelize),
      ...extraRoutes,
    ]),
  });
  c.register(TOKENS.Workers, {
    useFactory: instanceCachingFactory((x): Worker[] => {
      const nonces = x.resolve<NonceStore>(TOKENS.NonceStore);
      return [
        new IntervalWorker('nonce-sweeper', config.nonceSweepSeconds * 1000, async () => {
          const n = await nonces.sweep();
          if (n > 0) logger.debug('expired nonces removed', { count: n });
        }, logger),
        new CallbackDispatcher(db, x.resolve(TOKENS.CredentialStore), config.callbacks, logger, x.resolve<ServiceMetrics | null>(TOKENS.Metrics)?.callbacks()),
        new IntervalWorker('events-retention', config.callbacks.pruneIntervalMs, async () => {
          const feed = x.resolve<EventFeed>(TOKENS.EventFeed);
          const olderThan = new Date(Date.now() - config.callbacks.retentionDays * 86_400_000);
          let total = 0;
          for (let n = -1; n !== 0; total += n) n = await feed.prune(olderThan);
          if (total > 0) logger.info('events past retention removed', { count: total, retentionDays: config.callbacks.retentionDays });
        }, logger),
        new ScanWorker(db, catalogue, x.resolve(TOKENS.AdapterRegistry), config.deposits, logger),
        ...new Reconciler(db.sequelize, catalogue, x.resolve(TOKENS.AdapterRegistry), config.deposits.endpoints, config.reconcile, logger).workers(),
        ...withdrawalWorkers(x, db, catalogue, config, logger),
      ];
    }),
  });
}

/** The hot wallet ledger (balances, fee quotes) and the payout loop; both need the key store. */
function withdrawalWorkers(x: DependencyContainer, db: Database, catalogue: Catalogue, config: ServiceConfig, logger: Logger): Worker[] {
  const registry = x.resolve<AdapterRegistry>(TOKENS.AdapterRegistry);
  const supervisor = x.resolve<KeyStoreSupervisor>(TOKENS.KeyStoreSupervisor);
  const wallets = new HotWallets(db.sequelize, registry, supervisor.store);
  const ledger = new HotWalletLedger(db.sequelize, catalogue, registry, config.deposits.endpoints, wallets, supervisor.store, logger);
  const nodeOf = (chain: ChainView) => ledger.node(chain);
  const keyStore = () => {
    supervisor.assertReady();
    return supervisor.store;
  };
  const collectionOwner = new CollectionOwner(db.sequelize);
  // a batch sweep's chain parts, to read its entries' outcomes from its receipt
  const sweepsOf = (chainId: number) => {
    const chain = ledger.payoutChains().find((c) => c.id === chainId);
    const adapter = chain ? registry.forChain(chain) : null;
    return adapter && adapter.spendModel === 'sequence' ? adapter.delegatedSweeps ?? null : null;
  };
  const feeWallets = new FeeWallets(db.sequelize, registry, keyStore, nodeOf);
  const batchLimits = { maxEntries: config.withdrawals.collectBatchMaxEntries, maxGas: BigInt(config.withdrawals.collectBatchMaxGas) };
  const collection = new CollectionIntake(db.sequelize, registry, wallets, new CollectionPlanner(db.sequelize, registry, nodeOf, wallets, new SweepPricer(nodeOf, wallets, keyStore, batchLimits.maxEntries), logger, config.withdrawals.collectWaitAlertSeconds),
    new CollectionProcessor(db.sequelize, registry, nodeOf, wallets, feeWallets, keyStore, logger,
      { maxInputs: config.withdrawals.collectMaxInputs, maxFeeRates: config.withdrawals.collectMaxFeeRates },
      new DelegatedSweeper(db.sequelize, feeWallets, keyStore, logger, batchLimits)), config.withdrawals.collectPlanMs, logger);
  return [
    // the pipeline first: its chain check at start reads the hot wallets' outputs before the ledger's first sync drops those the node no longer lists
    new TransferPipeline(db.sequelize, registry, () => ledger.payoutChains(), nodeOf, keyStore, config.withdrawals, logger,
      [new PayoutOwner(db.sequelize), collectionOwner, new TrustlineOwner(db.sequelize), new DelegatedSweepOwner(db.sequelize, collectionOwner, sweepsOf)],
      [new PayoutIntake(db.sequelize, logger), collection]),
    new IntervalWorker('hot-wallet-ledger', config.withdrawals.ledgerRefreshMs, async () => {
      if (ledger.payoutChains().length === 0) return;
      supervisor.assertReady();
      await ledger.refreshAll();
    }, logger),
  ];
}
