import type { Command } from 'commander';
import type { RechargeService } from '../deposits/recharge-service';
import { TOKENS } from '../container';
import { cliActor } from '../operators/audit';
import { UsageError, jsonOpt, parseId, type CliContext } from './context';

/** wcs deposits unattributed|assign; an assignment is audited (deposit.assign, docs/console.md). */
export function registerDepositCommands(program: Command, ctx: CliContext): void {
  const deposits = program.command('deposits').description('deposits (recharges): the operator\'s side');
  deposits
    .command('unattributed')
    .description('list deposits to shared memo-chain addresses whose memo is missing or names no user (credited to nobody)')
    .option('--all', 'include the ones already assigned')
    .addOption(jsonOpt())
    .action(async (o: { all?: boolean; json?: boolean }) => {
      ctx.setJson(o);
      const rows = await ctx.withStorage((s) => s.container.resolve<RechargeService>(TOKENS.RechargeService).unattributed(Boolean(o.all)));
      ctx.emit(rows, () =>
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
      ctx.setJson(o);
      if (!/^\d{1,15}$/.test(id)) throw new UsageError(`id: must be the numeric id shown by wcs deposits unattributed, got "${id}"`);
      const r = await ctx.withStorage(async (s) => {
        await s.applications.get(o.app);
        return s.container.resolve<RechargeService>(TOKENS.RechargeService).assign(cliActor(), Number(id), o.app, o.user);
      });
      ctx.emit(r, () => `assigned to ${o.user}: recharge ${r.id}, ${r.amount} ${r.tokenSymbol}, ${r.txStatus}`);
    });
}
