import { Option, type Command } from 'commander';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createLogger } from '../config/logger';
import { WcsService } from '../service';
import { generateMasterKeyText } from '../crypto/secret-box';
import { resolveCatalogue } from '../catalogue/catalogue';
import { startDevnets, wantsDevnets } from '../deposits/devnets';
import { loadAdapters, loadKeyStorePlugin } from '../plugins/loader';
import { jsonOpt, type CliContext } from './context';

/** wcs start, migrate, keygen, config-check. */
export function registerServiceCommands(program: Command, ctx: CliContext): void {
  program
    .command('start')
    .description('run the API and the background workers (PORT, default 8080)')
    .addOption(new Option('--api-only', 'run only the HTTP API').conflicts('workersOnly'))
    .addOption(new Option('--workers-only', 'run only the background workers'))
    .addOption(jsonOpt().default(false, 'errors as JSON'))
    .action(async (o: { apiOnly?: boolean; workersOnly?: boolean }) => {
      let cfg = ctx.config();
      const logger = createLogger({ level: cfg.logLevel, format: cfg.logFormat });
      // dev mode (no DATABASE_URL, no WCS_RPC_*): local anvil devnets for the test EVM chains
      const devnets = !o.apiOnly && wantsDevnets(cfg) ? await startDevnets(cfg, logger) : null;
      if (devnets) {
        cfg = devnets.config;
        fs.mkdirSync(cfg.dataDir, { recursive: true });
        fs.writeFileSync(path.join(cfg.dataDir, 'devnets.json'), JSON.stringify(devnets.info, null, 2) + '\n');
        logger.info('dev mode: deposits on local devnets', { devnets: path.join(cfg.dataDir, 'devnets.json'), chains: Object.keys(devnets.info.chains) });
      }
      let svc: WcsService;
      try {
        svc = await WcsService.start(cfg, logger, { api: !o.workersOnly, workers: !o.apiOnly });
      } catch (e) {
        await devnets?.stop();
        throw e;
      }
      await new Promise<void>((resolve) => {
        const stop = (sig: string) => {
          logger.info('shutting down', { signal: sig });
          void svc.stop().then(() => devnets?.stop()).then(resolve, resolve);
        };
        process.once('SIGINT', () => stop('SIGINT'));
        process.once('SIGTERM', () => stop('SIGTERM'));
      });
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
      const cat = resolveCatalogue(cfg.file);
      // every chain needs an adapter, and the key-store backend must load
      const registry = loadAdapters(cfg);
      for (const chain of cat.chains) registry.forChain(chain);
      loadKeyStorePlugin(cfg);
      ctx.emit(
        { ok: true, chains: cat.chains.length, tokens: cat.tokens.length, database: cfg.databaseUrl ? 'url' : 'embedded', dataDir: cfg.dataDir },
        () => `configuration OK: ${cat.chains.length} chains, ${cat.tokens.length} tokens, database ${cfg.databaseUrl ? 'DATABASE_URL' : 'embedded under ' + cfg.dataDir}`,
      );
    });
}
