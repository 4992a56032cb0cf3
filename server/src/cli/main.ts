import { Command, CommanderError, Option } from 'commander';
import { QueryTypes } from 'sequelize';
import { isKeyStoreError, isWcsError, ENVIRONMENTS, formatLocalDateTime, type AdapterRegistry } from '@wcs/core';
import { loadConfig, ConfigError, type ServiceConfig } from '../config/config';
import { createLogger, type Logger } from '../config/logger';
import { openStorage, WcsService, type StorageHandle } from '../service';
import { BIZ_TYPES, type ApplicationView, type BizType } from '../apps/applications';
import type { CallbackService } from '../callbacks/callback-service';
import type { RechargeService } from '../deposits/recharge-service';
import { WithdrawWorker } from '../withdrawals/withdraw-worker';
import { hotWalletReport, registerHotAccount } from '../withdrawals/hot-wallets';
import { RiskRules, type RiskRulesView } from '../withdrawals/risk-rules';
import { TOKENS } from '../container';
import { generateMasterKeyText } from '../crypto/secret-box';
import { resolveCatalogue } from '../catalogue/catalogue';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startDevnets, wantsDevnets } from '../deposits/devnets';
import { KEYSTORE_PACKAGES, keyStoreOptions, loadAdapters, loadKeyStorePlugin } from '../plugins/loader';

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

function parseId(v: string): number {
  if (!/^\d{1,10}$/.test(v)) throw new ConfigError(`--app: must be a positive integer application id, got "${v}"`);
  return Number(v);
}

function parseChains(v: string): string[] {
  return v.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

function appTable(apps: ApplicationView[]): string {
  if (apps.length === 0) return 'no applications';
  const rows = apps.map((a) => [String(a.id), a.name, a.environment, a.status, a.apiKey, a.chains.join(',') || '-']);
  const head = ['ID', 'NAME', 'ENV', 'STATUS', 'API KEY', 'CHAINS'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(head), ...rows.map(line)].join('\n');
}

function describeApp(a: ApplicationView): string {
  const cbs = Object.entries(a.callbacks).map(([k, v]) => `  ${k}: ${v}`);
  return [
    `id:          ${a.id}`,
    `name:        ${a.name}`,
    `environment: ${a.environment}`,
    `status:      ${a.status}`,
    `apiKey:      ${a.apiKey}`,
    `chains:      ${a.chains.join(', ') || '(none)'}`,
    `callbacks:${cbs.length ? '\n' + cbs.join('\n') : ' (none)'}`,
  ].join('\n');
}

/** The `wcs` operator CLI. Returns the process exit code. */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env, io: Io = {
  out: (s) => process.stdout.write(s + '\n'),
  err: (s) => process.stderr.write(s + '\n'),
}): Promise<number> {
  let json = false;
  const program = new Command('wcs')
    .description('Wallet custody service: API server, workers and operator commands')
    .exitOverride()
    // options after a subcommand are the subcommand's (`hotwallets --app` lists, `hotwallets register --app` registers)
    .enablePositionalOptions()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .showHelpAfterError();

  const config = (): ServiceConfig => loadConfig(env);
  const cliLogger = (cfg: ServiceConfig): Logger =>
    createLogger({ level: env.WCS_LOG_LEVEL ? cfg.logLevel : 'warn', format: env.WCS_LOG_FORMAT ? cfg.logFormat : 'pretty' });

  /** Runs fn with storage open (migrations applied, catalogue seeded), then closes it. */
  const withStorage = async <T>(fn: (s: StorageHandle) => Promise<T>): Promise<T> => {
    const cfg = config();
    const storage = await openStorage(cfg, cliLogger(cfg));
    try {
      return await fn(storage);
    } finally {
      await storage.close();
    }
  };

  const emit = (data: unknown, human: () => string) => io.out(json ? JSON.stringify(data, null, 2) : human());
  const jsonOpt = () => new Option('--json', 'print machine-readable JSON');
  const setJson = (o: { json?: boolean }) => {
    json = Boolean(o.json);
  };

  program
    .command('start')
    .description('run the API and the background workers (PORT, default 8080)')
    .option('--api-only', 'run only the HTTP API')
    .option('--workers-only', 'run only the background workers')
    .action(async (o: { apiOnly?: boolean; workersOnly?: boolean }) => {
      if (o.apiOnly && o.workersOnly) throw new ConfigError('--api-only and --workers-only exclude each other');
      let cfg = config();
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
      setJson(o);
      const applied = await withStorage(async (s) => [...s.appliedMigrations]);
      emit({ applied, status: 'up-to-date' }, () => (applied.length ? `applied ${applied.join(', ')}` : 'database is up to date'));
    });

  program
    .command('keygen')
    .description('print a new random master key for WCS_MASTER_KEY (stores nothing)')
    .addOption(jsonOpt())
    .action((o) => {
      setJson(o);
      const key = generateMasterKeyText();
      emit({ masterKey: key }, () => key);
    });

  program
    .command('config-check')
    .description('validate the environment and the config file without touching the database')
    .addOption(jsonOpt())
    .action((o) => {
      setJson(o);
      const cfg = config();
      const cat = resolveCatalogue(cfg.file);
      // every chain needs an adapter, and the key-store backend must load
      const registry = loadAdapters(cfg);
      for (const chain of cat.chains) registry.forChain(chain);
      loadKeyStorePlugin(cfg);
      emit(
        { ok: true, chains: cat.chains.length, tokens: cat.tokens.length, database: cfg.databaseUrl ? 'url' : 'embedded', dataDir: cfg.dataDir },
        () => `configuration OK: ${cat.chains.length} chains, ${cat.tokens.length} tokens, database ${cfg.databaseUrl ? 'DATABASE_URL' : 'embedded under ' + cfg.dataDir}`,
      );
    });

  const keystore = program.command('keystore').description('the key store holding every private key');
  const backendOpt = () =>
    new Option('--backend <name>', 'key-store backend for this command (overrides WCS_KEYSTORE_BACKEND)').choices(Object.keys(KEYSTORE_PACKAGES));
  /** The configuration with the command's --backend, when given, in place of WCS_KEYSTORE_BACKEND. */
  const keystoreConfig = (o: { backend?: string }): ServiceConfig => (o.backend ? loadConfig({ ...env, WCS_KEYSTORE_BACKEND: o.backend }) : config());
  const factLines = (facts: Record<string, unknown>) =>
    Object.entries(facts).map(([k, v]) => `${k}: ${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`).join('\n');
  keystore
    .command('init')
    .description('create the key material (software: a new encrypted BIP-39 seed) or check the HSM (pkcs11: token, login, mechanisms)')
    .addOption(backendOpt())
    .option('--mnemonic-file <file>', 'software backend: import this BIP-39 mnemonic instead of generating one')
    .addOption(jsonOpt())
    .action(async (o: { backend?: string; mnemonicFile?: string; json?: boolean }) => {
      setJson(o);
      const cfg = keystoreConfig(o);
      const plugin = loadKeyStorePlugin(cfg);
      const mnemonic = o.mnemonicFile ? fs.readFileSync(o.mnemonicFile, 'utf8').trim() : undefined;
      const facts = await plugin.initialize(keyStoreOptions(cfg), mnemonic ? { mnemonic } : {});
      emit(facts, () => factLines(facts));
    });
  keystore
    .command('status')
    .description('open the key store and show what it reports: backend, fingerprints or token, whether it unlocks (never secrets)')
    .addOption(backendOpt())
    .addOption(jsonOpt())
    .action(async (o: { backend?: string; json?: boolean }) => {
      setJson(o);
      const cfg = keystoreConfig(o);
      const store = loadKeyStorePlugin(cfg).create(keyStoreOptions(cfg));
      try {
        await store.init();
        const st = await store.status();
        emit(st, () => factLines(st));
      } finally {
        await store.destroy();
      }
    });

  const app = program.command('app').description('manage merchant applications');
  app
    .command('create')
    .description('create an application; prints its API secret once')
    .requiredOption('--name <name>', 'display name')
    .addOption(new Option('--env <env>', 'environment').choices([...ENVIRONMENTS]).makeOptionMandatory())
    .option('--chains <codes>', 'comma-separated chain codes, e.g. ETH,BTC', '')
    .addOption(jsonOpt())
    .action(async (o: { name: string; env: string; chains: string; json?: boolean }) => {
      setJson(o);
      const created = await withStorage((s) => s.applications.create({ name: o.name, environment: o.env, chains: parseChains(o.chains) }));
      emit(created, () => `${describeApp(created)}\napiSecret:   ${created.apiSecret}\n\nStore the API secret now: it is not shown again.`);
    });
  app
    .command('list')
    .description('list applications')
    .addOption(jsonOpt())
    .action(async (o) => {
      setJson(o);
      const apps = await withStorage((s) => s.applications.list());
      emit(apps, () => appTable(apps));
    });
  app
    .command('show')
    .description('show one application')
    .requiredOption('--app <id>', 'application id', parseId)
    .addOption(jsonOpt())
    .action(async (o: { app: number; json?: boolean }) => {
      setJson(o);
      const a = await withStorage((s) => s.applications.get(o.app));
      emit(a, () => describeApp(a));
    });
  app
    .command('set-callback')
    .description('set the callback URL for one business type')
    .requiredOption('--app <id>', 'application id', parseId)
    .addOption(new Option('--biz-type <type>', 'business type').choices([...BIZ_TYPES]).makeOptionMandatory())
    .requiredOption('--url <url>', 'https URL (http allowed for test applications)')
    .addOption(jsonOpt())
    .action(async (o: { app: number; bizType: string; url: string; json?: boolean }) => {
      setJson(o);
      const a = await withStorage((s) => s.applications.setCallback(o.app, o.bizType, o.url));
      emit(a, () => describeApp(a));
    });
  app
    .command('set-chains')
    .description('replace the enabled chains')
    .requiredOption('--app <id>', 'application id', parseId)
    .requiredOption('--chains <codes>', 'comma-separated chain codes')
    .addOption(jsonOpt())
    .action(async (o: { app: number; chains: string; json?: boolean }) => {
      setJson(o);
      const a = await withStorage((s) => s.applications.setChains(o.app, parseChains(o.chains)));
      emit(a, () => describeApp(a));
    });
  app
    .command('rotate-secret')
    .description('issue a new API secret; earlier secrets stay valid for the grace period')
    .requiredOption('--app <id>', 'application id', parseId)
    .option('--grace <seconds>', 'grace period for the old secret (default WCS_SECRET_GRACE_SECONDS)')
    .addOption(jsonOpt())
    .action(async (o: { app: number; grace?: string; json?: boolean }) => {
      setJson(o);
      const cfg = config();
      let grace = cfg.secretGraceSeconds;
      if (o.grace !== undefined) {
        if (!/^\d{1,8}$/.test(o.grace)) throw new ConfigError(`--grace: must be a whole number of seconds, got "${o.grace}"`);
        grace = Number(o.grace);
      }
      const r = await withStorage((s) => s.applications.rotateSecret(o.app, grace));
      emit(
        { ...r.application, apiSecret: r.apiSecret, previousSecretsValidUntil: r.previousSecretsValidUntil },
        () => `${describeApp(r.application)}\napiSecret:   ${r.apiSecret}\nprevious secrets valid until ${r.previousSecretsValidUntil} (UTC)\n\nStore the API secret now: it is not shown again.`,
      );
    });
  for (const [cmd, status, text] of [['disable', 'DISABLED', 'disable an application (its requests are refused)'], ['enable', 'ACTIVE', 're-enable an application']] as const) {
    app
      .command(cmd)
      .description(text)
      .requiredOption('--app <id>', 'application id', parseId)
      .addOption(jsonOpt())
      .action(async (o: { app: number; json?: boolean }) => {
        setJson(o);
        const a = await withStorage((s) => s.applications.setStatus(o.app, status));
        emit(a, () => describeApp(a));
      });
  }

  const callback = program.command('callback').description('merchant callbacks (webhooks)');
  callback
    .command('test')
    .description('queue a signed test event to the application\'s callback URL for a business type, through the real delivery pipeline')
    .requiredOption('--app <id>', 'application id', parseId)
    .addOption(new Option('--biz-type <type>', 'business type').choices([...BIZ_TYPES]).makeOptionMandatory())
    .addOption(jsonOpt())
    .action(async (o: { app: number; bizType: BizType; json?: boolean }) => {
      setJson(o);
      const task = await withStorage(async (s) => {
        await s.applications.get(o.app); // APPLICATION_NOT_FOUND before anything is written
        return s.container.resolve<CallbackService>(TOKENS.CallbackService).sendTest(o.app, o.bizType);
      });
      const out = { callbackTaskId: task.id, status: task.status, url: task.url };
      emit(out, () =>
        task.status === 'WAITING'
          ? `queued test callback task ${task.id} to ${task.url}; a running worker (wcs start) delivers it; attempts: GET /api/v1/wallet/callback/attempts?callbackTaskId=${task.id}`
          : `recorded test callback task ${task.id} as FAILED: no callback URL is configured for ${o.bizType} (wcs app set-callback), then resend it`,
      );
    });

  const deposits = program.command('deposits').description('deposits (recharges): the operator\'s side');
  deposits
    .command('unattributed')
    .description('list deposits to shared memo-chain addresses whose memo is missing or names no user (credited to nobody)')
    .option('--all', 'include the ones already assigned')
    .addOption(jsonOpt())
    .action(async (o: { all?: boolean; json?: boolean }) => {
      setJson(o);
      const rows = await withStorage((s) => s.container.resolve<RechargeService>(TOKENS.RechargeService).unattributed(Boolean(o.all)));
      emit(rows, () =>
        rows.length === 0
          ? 'no unattributed deposits'
          : rows.map((r) => `${String(r.id).padEnd(6)} ${r.environment}:${r.chainCode} ${r.amount} ${r.tokenSymbol} to ${r.address} memo ${r.memo ?? '(none)'} ${r.reason} tx ${r.txHash}#${r.position}${r.rechargeId ? ` -> recharge ${r.rechargeId}` : ''}`).join('\n'),
      );
    });
  deposits
    .command('assign <id>')
    .description('credit an unattributed deposit to a user who has an address on that shared address (creates the recharge record and its callbacks)')
    .requiredOption('--app <id>', 'application id', parseId)
    .requiredOption('--user <externalUserId>', 'the user to credit')
    .addOption(jsonOpt())
    .action(async (id: string, o: { app: number; user: string; json?: boolean }) => {
      setJson(o);
      if (!/^\d{1,15}$/.test(id)) throw new ConfigError(`id: must be the numeric id shown by wcs deposits unattributed, got "${id}"`);
      const r = await withStorage(async (s) => {
        await s.applications.get(o.app);
        return s.container.resolve<RechargeService>(TOKENS.RechargeService).assign(Number(id), o.app, o.user);
      });
      emit(r, () => `assigned to ${o.user}: recharge ${r.id}, ${r.amount} ${r.tokenSymbol}, ${r.txStatus}`);
    });

  const hotwallets = program.command('hotwallets').enablePositionalOptions();
  hotwallets
    .command('register')
    .description('record an on-chain account as an application\'s hot wallet on a chain with named accounts (EOS): create the account first and give its active permission the hot key this prints; running workers must be restarted after a change')
    .requiredOption('--app <id>', 'application id', parseId)
    .requiredOption('--chain <code>', 'chain code, e.g. EOS')
    .requiredOption('--account <name>', 'the account name')
    .addOption(jsonOpt())
    .action(async (o: { app: number; chain: string; account: string; json?: boolean }) => {
      setJson(o);
      const cfg = config();
      const store = loadKeyStorePlugin(cfg).create(keyStoreOptions(cfg));
      await store.init();
      try {
        const done = await withStorage(async (s) => {
          const [row] = await s.database.sequelize.query<{ environment: 'test' | 'live' }>('SELECT environment FROM applications WHERE id = $1', { bind: [o.app], type: QueryTypes.SELECT });
          if (!row) throw new Error(`application ${o.app} not found`);
          const chain = s.catalogue.chain(row.environment, o.chain.toUpperCase());
          return registerHotAccount(s.database.sequelize, s.container.resolve<AdapterRegistry>(TOKENS.AdapterRegistry), store, o.app, chain, o.account);
        });
        emit(done, () => `app ${done.applicationId} ${done.environment}:${done.chainCode} hot account ${done.address}${done.replaced ? ` (was ${done.replaced}; restart running workers)` : ''}\n`
          + `its active permission must hold the hot key ${done.publicKey} (secp256k1, compressed) with the threshold's weight; withdrawals open once a worker has checked it and read the balance`);
      } finally {
        await store.destroy();
      }
    });
  hotwallets
    .description('list the hot wallets (fund these addresses), their balances as last read from the nodes and what accepted withdrawals reserve; `register` records an EOS hot account')
    .option('--app <id>', 'only this application', parseId)
    .addOption(jsonOpt())
    .action(async (o: { app?: number; json?: boolean }) => {
      setJson(o);
      const rows = await withStorage((s) => hotWalletReport(s.database.sequelize, o.app ?? null));
      emit(rows, () =>
        rows.length === 0
          ? 'no hot wallets yet (they are made by a running worker, wcs start, for chains with an RPC endpoint)'
          : rows.map((r) => `app ${r.applicationId} ${r.environment}:${r.chainCode} ${r.address} ${r.token}: on chain ${r.onChain ?? '(not read)'}, reserved ${r.reserved}${r.observedTime ? ` (read ${r.observedTime})` : ''}`).join('\n'),
      );
    });

  const withdraw = program.command('withdraw').description('withdrawals: the operator\'s side');
  const rules = (s: StorageHandle) => new RiskRules(s.database.sequelize, s.catalogue, s.container.resolve<AdapterRegistry>(TOKENS.AdapterRegistry));
  withdraw
    .command('limits')
    .description('set one token\'s withdrawal limits for an application (decimal amounts of the token; leave all out to remove them)')
    .requiredOption('--app <id>', 'application id', parseId)
    .requiredOption('--token <chainTokenId>', 'the token (wcs chains lists ids)', parseId)
    .option('--per-order <amount>', 'largest single order; above it the order ends FAILED (PER_ORDER_LIMIT_EXCEEDED)')
    .option('--daily <amount>', 'most per UTC day over the application\'s orders of the token (DAILY_LIMIT_EXCEEDED)')
    .option('--approval-over <amount>', 'orders above it wait for wcs withdraw approve|reject (riskLevel HIGH)')
    .addOption(jsonOpt())
    .action(async (o: { app: number; token: number; perOrder?: string; daily?: string; approvalOver?: string; json?: boolean }) => {
      setJson(o);
      const view = await withStorage(async (s) => {
        await rules(s).setLimits(o.app, o.token, { perOrderMax: o.perOrder ?? null, dailyMax: o.daily ?? null, approvalThreshold: o.approvalOver ?? null });
        return rules(s).show(o.app);
      });
      emit(view, () => describeRules(view));
    });
  for (const [verb, kind, remove] of [['block', 'BLOCK', false], ['unblock', 'BLOCK', true], ['allow', 'ALLOW', false], ['disallow', 'ALLOW', true]] as const) {
    withdraw
      .command(`${verb} <chainCode> <address>`)
      .description(`${remove ? 'take a destination off' : 'put a destination on'} the application's ${kind === 'BLOCK' ? 'blocklist' : 'allowlist'} for withdrawals`)
      .requiredOption('--app <id>', 'application id', parseId)
      .addOption(jsonOpt())
      .action(async (chainCode: string, address: string, o: { app: number; json?: boolean }) => {
        setJson(o);
        const view = await withStorage(async (s) => {
          await rules(s).setAddress(o.app, chainCode, address, kind, remove);
          return rules(s).show(o.app);
        });
        emit(view, () => describeRules(view));
      });
  }
  withdraw
    .command('allowlist-only <onOrOff>')
    .description('on: the application pays out only to allowlisted destinations (others end FAILED, DESTINATION_NOT_ALLOWED)')
    .requiredOption('--app <id>', 'application id', parseId)
    .addOption(jsonOpt())
    .action(async (onOrOff: string, o: { app: number; json?: boolean }) => {
      setJson(o);
      if (onOrOff !== 'on' && onOrOff !== 'off') throw new ConfigError(`allowlist-only: say on or off, got "${onOrOff}"`);
      const view = await withStorage(async (s) => {
        await rules(s).setAllowlistOnly(o.app, onOrOff === 'on');
        return rules(s).show(o.app);
      });
      emit(view, () => describeRules(view));
    });
  withdraw
    .command('rules')
    .description('show an application\'s withdrawal risk rules')
    .requiredOption('--app <id>', 'application id', parseId)
    .addOption(jsonOpt())
    .action(async (o: { app: number; json?: boolean }) => {
      setJson(o);
      const view = await withStorage((s) => rules(s).show(o.app));
      emit(view, () => describeRules(view));
    });
  for (const [verb, approve] of [['approve', true], ['reject', false]] as const) {
    withdraw
      .command(`${verb} <id>`)
      .description(approve
        ? 'approve a withdrawal waiting for approval (riskLevel HIGH): the worker signs and sends it'
        : 'reject a withdrawal waiting for approval: it ends FAILED with failReason and a withdraw callback')
      .option('--note <text>', 'why (kept in failReason on reject)')
      .addOption(jsonOpt())
      .action(async (id: string, o: { note?: string; json?: boolean }) => {
        setJson(o);
        if (!/^\d{1,15}$/.test(id)) throw new ConfigError(`id: must be a withdrawal record id, got "${id}"`);
        const decision = await withStorage((s) => WithdrawWorker.decide(s.database.sequelize, Number(id), approve, o.note ?? null));
        emit({ id: Number(id), approval: decision }, () => `withdrawal ${id}: ${decision}`);
      });
  }

  program
    .command('chains')
    .description('list the chain catalogue')
    .addOption(new Option('--env <env>', 'environment').choices([...ENVIRONMENTS]))
    .addOption(jsonOpt())
    .action(async (o: { env?: 'test' | 'live'; json?: boolean }) => {
      setJson(o);
      const chains = await withStorage(async (s) => (o.env ? s.catalogue.chains(o.env) : [...s.catalogue.chains('live'), ...s.catalogue.chains('test')]));
      emit(chains, () =>
        chains.map((c) => `${String(c.id).padEnd(4)} ${c.environment.padEnd(4)} ${c.code.padEnd(8)} ${c.network.padEnd(12)} ${c.tokens.map((t) => `${t.symbol}#${t.id}`).join(' ')}`).join('\n'),
      );
    });

  try {
    await program.parseAsync(argv);
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    const known = e instanceof ConfigError || isWcsError(e) || isKeyStoreError(e);
    const msg = e instanceof Error ? e.message : String(e);
    // WcsError: the catalogue's number and name; KeyStoreError: its code (e.g. "KEYSTORE_DECRYPT") and "KeyStoreError"
    const code = isWcsError(e) || isKeyStoreError(e) ? e.code : null;
    const name = isWcsError(e) ? e.errorName : (e as Error)?.name ?? 'Error';
    if (json) {
      io.out(JSON.stringify({ error: { code, name, msg }, time: formatLocalDateTime(new Date()) }, null, 2));
    } else {
      io.err(isKeyStoreError(e) ? `wcs: ${e.code}: ${msg}` : `wcs: ${msg}`);
    }
    if (!known && env.WCS_DEBUG) io.err(String((e as Error)?.stack ?? e));
    return 1;
  }
}

function describeRules(v: RiskRulesView): string {
  const lines = [`application ${v.applicationId}: allowlist-only ${v.allowlistOnly ? 'on' : 'off'}`];
  for (const l of v.limits) lines.push(`  ${l.chainCode} ${l.token}#${l.chainTokenId}: per order ${l.perOrderMax ?? '-'}, daily ${l.dailyMax ?? '-'}, approval over ${l.approvalThreshold ?? '-'}`);
  for (const a of v.addresses) lines.push(`  ${a.kind === 'BLOCK' ? 'blocked' : 'allowed'} on ${a.chainCode}: ${a.address}`);
  return lines.join('\n');
}
