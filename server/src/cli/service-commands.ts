import { Option, type Command } from 'commander';
import { createLogger } from '../config/logger';
import type { WcsService } from '../service';
import { generateMasterKeyText } from '../crypto/secret-box';
import { resolveCatalogue } from '../catalogue/catalogue';
import { devnetsFile, startDevnets, wantsDevnets, writeDevnetsInfo, type Devnets } from '../deposits/devnets';
import { DataDirLock } from './data-dir-lock';
import { familyTraitsLookup, loadAdapters, loadKeyStorePlugin } from '../plugins/loader';
import { jsonOpt, type CliContext } from './context';

/** wcs start, migrate, keygen, config-check. */
export function registerServiceCommands(program: Command, ctx: CliContext): void {
  program
    .command('start')
    .description('run the API and the background workers (PORT, default 8080)')
    .addOption(new Option('--api-only', 'run only the HTTP API').conflicts('workersOnly'))
    .addOption(new Option('--workers-only', 'run only the background workers'))
    .addOption(new Option('--console', 'also serve the operator console (WCS_CONSOLE_PORT, default 8090, on WCS_CONSOLE_HOST, default 127.0.0.1)'))
    .addOption(jsonOpt().default(false, 'errors as JSON'))
    .action(async (o: { apiOnly?: boolean; workersOnly?: boolean; console?: boolean }) => {
      // Signals are taken from the first moment: the API can answer /healthz before start() has
      // returned (workers still starting), and a SIGTERM then must still mean an orderly stop,
      // never the default kill that leaves the lock, the devnets and the cluster behind.
      const stopRequested = new Promise<string>((resolve) => {
        process.once('SIGINT', () => resolve('SIGINT'));
        process.once('SIGTERM', () => resolve('SIGTERM'));
      });
      let cfg = ctx.config();
      // Before anything else: what the data directory owns (the embedded cluster, the devnets and
      // devnets.json) belongs to one `wcs start` at a time. With DATABASE_URL the directory owns
      // nothing a start uses, and any number of processes may share the database.
      const lock = cfg.databaseUrl === null ? DataDirLock.acquire(cfg.dataDir) : null;
      let devnets: Devnets | null = null;
      let svc: WcsService;
      const logger = createLogger({ level: cfg.logLevel, format: cfg.logFormat });
      // the service (HTTP, workers, storage) loads with this command only, not with every `wcs` command
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { WcsService } = require('../service') as typeof import('../service');
      try {
        // dev mode (no DATABASE_URL, no WCS_RPC_*): local anvil devnets for the test EVM chains
        devnets = !o.apiOnly && wantsDevnets(cfg) ? await startDevnets(cfg, logger) : null;
        if (devnets) {
          cfg = devnets.config;
          writeDevnetsInfo(cfg.dataDir, devnets.info);
          logger.info('dev mode: deposits on local devnets', { devnets: devnetsFile(cfg.dataDir), chains: Object.keys(devnets.info.chains) });
        }
        svc = await WcsService.start(cfg, logger, { api: !o.workersOnly, workers: !o.apiOnly, console: o.console === true });
      } catch (e) {
        await devnets?.stop();
        lock?.release();
        throw e;
      }
      const sig = await stopRequested;
      logger.info('shutting down', { signal: sig });
      await svc.stop().then(() => devnets?.stop()).catch((e: unknown) => logger.error('shutdown failed', { error: String(e) }));
      lock?.release();
    });

  program
    .command('migrate')
    .description('apply pending database migrations and seed the catalogue')
    .addOption(jsonOpt())
    .action(async (o) => {
      ctx.setJson(o);
      const applied = await ctx.withStorage(async (s) => [...s.appliedMigrations]);
      ctx.emit({ applied, status: 'up-to-date' }, () => (applied.length ? `applied ${applied.join(', ')}` : 'database is up to date'));
    });

  program
    .command('keygen')
    .description('print a new random master key for WCS_MASTER_KEY (stores nothing)')
    .addOption(jsonOpt())
    .action((o) => {
      ctx.setJson(o);
      const key = generateMasterKeyText();
      ctx.emit({ masterKey: key }, () => key);
    });

  program
    .command('config-check')
    .description('validate the environment and the config file without touching the database')
    .addOption(jsonOpt())
    .action((o) => {
      ctx.setJson(o);
      const cfg = ctx.config();
      // every chain needs an adapter (its family's traits come from it), and the key-store backend must load
      const registry = loadAdapters(cfg);
      const cat = resolveCatalogue(cfg.file, familyTraitsLookup(cfg, () => registry));
      for (const chain of cat.chains) registry.forChain(chain);
      loadKeyStorePlugin(cfg);
      ctx.emit(
        { ok: true, chains: cat.chains.length, tokens: cat.tokens.length, database: cfg.databaseUrl ? 'url' : 'embedded', dataDir: cfg.dataDir },
        () => `configuration OK: ${cat.chains.length} chains, ${cat.tokens.length} tokens, database ${cfg.databaseUrl ? 'DATABASE_URL' : 'embedded under ' + cfg.dataDir}`,
      );
    });
}
