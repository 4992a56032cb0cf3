import { Option, type Command } from 'commander';
import { ENVIRONMENTS } from '@wcs/core';
import { BIZ_TYPES } from '../apps/applications';
import { cliActor } from '../operators/audit';
import { UsageError, jsonOpt, parseChains, parseId, type CliContext } from './context';
import { appTable, describeApp } from './output';

/** wcs app create|list|show|set-callback|set-chains|set-rate-limit|set-recharge-credited|rotate-secret|disable|enable. */
export function registerAppCommands(program: Command, ctx: CliContext): void {
  const app = program.command('app').description('manage merchant applications');
  app
    .command('create')
    .description('create an application; prints its API secret once')
    .requiredOption('--name <name>', 'display name')
    .addOption(new Option('--env <env>', 'environment').choices([...ENVIRONMENTS]).makeOptionMandatory())
    .option('--chains <codes>', 'comma-separated chain codes, e.g. ETH,BTC', '')
    .addOption(jsonOpt())
    .action(async (o: { name: string; env: string; chains: string; json?: boolean }) => {
      ctx.setJson(o);
      const created = await ctx.withStorage((s) => s.applications.create(cliActor(), { name: o.name, environment: o.env, chains: parseChains(o.chains) }));
      ctx.emit(created, () => `${describeApp(created)}\napiSecret:   ${created.apiSecret}\n\nStore the API secret now: it is not shown again.`);
    });
  app
    .command('list')
    .description('list applications')
    .addOption(jsonOpt())
    .action(async (o) => {
      ctx.setJson(o);
      const apps = await ctx.withStorage((s) => s.applications.list());
      ctx.emit(apps, () => appTable(apps));
    });
  app
    .command('show')
    .description('show one application')
    .requiredOption('--app <id>', 'application id', parseId)
    .addOption(jsonOpt())
    .action(async (o: { app: number; json?: boolean }) => {
      ctx.setJson(o);
      const a = await ctx.withStorage((s) => s.applications.get(o.app));
      ctx.emit(a, () => describeApp(a));
    });
  app
    .command('set-callback')
    .description('set the callback URL for one business type')
    .requiredOption('--app <id>', 'application id', parseId)
    .addOption(new Option('--biz-type <type>', 'business type').choices([...BIZ_TYPES]).makeOptionMandatory())
    .requiredOption('--url <url>', 'https URL (http allowed for test applications)')
    .addOption(jsonOpt())
    .action(async (o: { app: number; bizType: string; url: string; json?: boolean }) => {
      ctx.setJson(o);
      const a = await ctx.withStorage((s) => s.applications.setCallback(cliActor(), o.app, o.bizType, o.url));
      ctx.emit(a, () => describeApp(a));
    });
  app
    .command('set-chains')
    .description('replace the enabled chains')
    .requiredOption('--app <id>', 'application id', parseId)
    .requiredOption('--chains <codes>', 'comma-separated chain codes')
    .addOption(jsonOpt())
    .action(async (o: { app: number; chains: string; json?: boolean }) => {
      ctx.setJson(o);
      const a = await ctx.withStorage((s) => s.applications.setChains(cliActor(), o.app, parseChains(o.chains)));
      ctx.emit(a, () => describeApp(a));
    });
  app
    .command('set-rate-limit')
    .description("the application's own API rate limit (a token bucket per API key), or --default for the service's (WCS_RATE_LIMIT_RPS / _BURST)")
    .requiredOption('--app <id>', 'application id', parseId)
    .option('--rps <n>', 'requests per second sustained (1-1000000)')
    .option('--burst <n>', 'bucket size: requests accepted at once after a quiet period (1-10000000)')
    .option('--default', 'go back to the service default')
    .addOption(jsonOpt())
    .action(async (o: { app: number; rps?: string; burst?: string; default?: boolean; json?: boolean }) => {
      ctx.setJson(o);
      let limit: { ratePerSecond: number; burst: number } | null = null;
      if (o.default) {
        if (o.rps !== undefined || o.burst !== undefined) throw new UsageError('--default excludes --rps and --burst');
      } else {
        if (o.rps === undefined || o.burst === undefined) throw new UsageError('give both --rps and --burst, or --default');
        const whole = (name: string, v: string) => {
          if (!/^\d{1,8}$/.test(v)) throw new UsageError(`${name}: must be a whole number, got "${v}"`);
          return Number(v);
        };
        limit = { ratePerSecond: whole('--rps', o.rps), burst: whole('--burst', o.burst) };
      }
      const a = await ctx.withStorage((s) => s.applications.setRateLimit(cliActor(), o.app, limit));
      ctx.emit(a, () => describeApp(a));
    });
  app
    .command('set-callback-rate')
    .description('callback delivery rate limit: at most N deliveries per second to each endpoint of the application, across every worker (docs/callbacks.md)')
    .requiredOption('--app <id>', 'application id', parseId)
    .option('--per-second <n>', 'deliveries per second per endpoint, 1 to 10000')
    .option('--off', 'lift the limit')
    .addOption(jsonOpt())
    .action(async (o: { app: number; perSecond?: string; off?: boolean; json?: boolean }) => {
      ctx.setJson(o);
      if ((o.perSecond === undefined) === !o.off) throw new UsageError('give exactly one of --per-second N and --off');
      let perSecond: number | null = null;
      if (o.perSecond !== undefined) {
        if (!/^\d{1,5}$/.test(o.perSecond) || Number(o.perSecond) < 1 || Number(o.perSecond) > 10_000) throw new UsageError(`--per-second: must be a whole number from 1 to 10000, got "${o.perSecond}"`);
        perSecond = Number(o.perSecond);
      }
      const a = await ctx.withStorage((s) => s.applications.setCallbackRateLimit(cliActor(), o.app, perSecond));
      ctx.emit(a, () => `${describeApp(a)}\ncallbackRateLimit: ${a.callbackRateLimit === null ? 'none' : `${a.callbackRateLimit}/s per endpoint`}`);
    });
  app
    .command('set-recharge-credited')
    .description('RECHARGE_CREDITED: with --on, each deposit that reaches SETTLED from now on gets one recharge_credited callback (docs/chain-events.md)')
    .requiredOption('--app <id>', 'application id', parseId)
    .option('--on', 'send recharge_credited callbacks')
    .option('--off', 'stop sending them')
    .addOption(jsonOpt())
    .action(async (o: { app: number; on?: boolean; off?: boolean; json?: boolean }) => {
      ctx.setJson(o);
      if (Boolean(o.on) === Boolean(o.off)) throw new UsageError('give exactly one of --on and --off');
      const a = await ctx.withStorage((s) => s.applications.setRechargeCredited(cliActor(), o.app, Boolean(o.on)));
      ctx.emit(a, () => `${describeApp(a)}\nrechargeCredited: ${a.rechargeCredited ? 'on' : 'off'}`);
    });
  app
    .command('rotate-secret')
    .description('issue a new API secret; earlier secrets stay valid for the grace period')
    .requiredOption('--app <id>', 'application id', parseId)
    .option('--grace <seconds>', 'grace period for the old secret (default WCS_SECRET_GRACE_SECONDS)')
    .addOption(jsonOpt())
    .action(async (o: { app: number; grace?: string; json?: boolean }) => {
      ctx.setJson(o);
      const cfg = ctx.config();
      let grace = cfg.secretGraceSeconds;
      if (o.grace !== undefined) {
        if (!/^\d{1,8}$/.test(o.grace)) throw new UsageError(`--grace: must be a whole number of seconds, got "${o.grace}"`);
        grace = Number(o.grace);
      }
      const r = await ctx.withStorage((s) => s.applications.rotateSecret(cliActor(), o.app, grace), cfg);
      ctx.emit(
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
        ctx.setJson(o);
        const a = await ctx.withStorage((s) => s.applications.setStatus(cliActor(), o.app, status));
        ctx.emit(a, () => describeApp(a));
      });
  }
}
