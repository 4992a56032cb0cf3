import type { Command } from 'commander';
import type { AdapterRegistry } from '@wcs/core';
import type { StorageHandle } from '../service';
import { decideApproval } from '../withdrawals/payout-intake';
import { RiskRules } from '../withdrawals/risk-rules';
import { TOKENS } from '../container';
import { cliActor } from '../operators/audit';
import { UsageError, jsonOpt, parseId, type CliContext } from './context';
import { describeRules } from './output';

/** wcs withdraw limits|block|unblock|allow|disallow|allowlist-only|rules|approve|reject; every change audited (docs/console.md). */
export function registerWithdrawCommands(program: Command, ctx: CliContext): void {
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
      ctx.setJson(o);
      const view = await ctx.withStorage(async (s) => {
        await rules(s).setLimits(cliActor(), o.app, o.token, { perOrderMax: o.perOrder ?? null, dailyMax: o.daily ?? null, approvalThreshold: o.approvalOver ?? null });
        return rules(s).show(o.app);
      });
      ctx.emit(view, () => describeRules(view));
    });
  for (const [verb, kind, remove] of [['block', 'BLOCK', false], ['unblock', 'BLOCK', true], ['allow', 'ALLOW', false], ['disallow', 'ALLOW', true]] as const) {
    withdraw
      .command(`${verb} <chainCode> <address>`)
      .description(`${remove ? 'take a destination off' : 'put a destination on'} the application's ${kind === 'BLOCK' ? 'blocklist' : 'allowlist'} for withdrawals`)
      .requiredOption('--app <id>', 'application id', parseId)
      .addOption(jsonOpt())
      .action(async (chainCode: string, address: string, o: { app: number; json?: boolean }) => {
        ctx.setJson(o);
        const view = await ctx.withStorage(async (s) => {
          await rules(s).setAddress(cliActor(), o.app, chainCode, address, kind, remove);
          return rules(s).show(o.app);
        });
        ctx.emit(view, () => describeRules(view));
      });
  }
  withdraw
    .command('allowlist-only <onOrOff>')
    .description('on: the application pays out only to allowlisted destinations (others end FAILED, DESTINATION_NOT_ALLOWED)')
    .requiredOption('--app <id>', 'application id', parseId)
    .addOption(jsonOpt())
    .action(async (onOrOff: string, o: { app: number; json?: boolean }) => {
      ctx.setJson(o);
      if (onOrOff !== 'on' && onOrOff !== 'off') throw new UsageError(`allowlist-only: say on or off, got "${onOrOff}"`);
      const view = await ctx.withStorage(async (s) => {
        await rules(s).setAllowlistOnly(cliActor(), o.app, onOrOff === 'on');
        return rules(s).show(o.app);
      });
      ctx.emit(view, () => describeRules(view));
    });
  withdraw
    .command('rules')
    .description('show an application\'s withdrawal risk rules')
    .requiredOption('--app <id>', 'application id', parseId)
    .addOption(jsonOpt())
    .action(async (o: { app: number; json?: boolean }) => {
      ctx.setJson(o);
      const view = await ctx.withStorage((s) => rules(s).show(o.app));
      ctx.emit(view, () => describeRules(view));
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
        ctx.setJson(o);
        if (!/^\d{1,15}$/.test(id)) throw new UsageError(`id: must be a withdrawal record id, got "${id}"`);
        const r = await ctx.withStorage((s) => decideApproval(s.database.sequelize, cliActor(), Number(id), approve, o.note ?? null));
        // refused (nothing changed): exit 1, the stable code as the error's name (`wcs: CODE: message`; with --json {code: null, name: CODE, msg})
        if (!r.ok) throw Object.assign(new Error(`${r.code}: ${r.message}`), { name: r.code });
        ctx.emit({ id: Number(id), approval: r.approval }, () => `withdrawal ${id}: ${r.approval}`);
      });
  }
}
