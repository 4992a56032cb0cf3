import type { Command } from 'commander';
import type { AdapterRegistry } from '@wcs/core';
import { TOKENS } from '../container';
import { cliActor } from '../operators/audit';
import { appOf } from '../collection/operator';
import type { StorageHandle } from '../service';
import { UsageError, jsonOpt, parseId, type CliContext } from './context';

/** A discrepancy id as `wcs reconcile report` shows it. */
function discrepancyId(v: string): number {
  if (!/^\d{1,15}$/.test(v) || Number(v) === 0) throw new UsageError(`discrepancyId: must be the numeric id shown by wcs reconcile report, got "${v}"`);
  return Number(v);
}

/** A chain code of the catalogue (either environment), checked before anything runs. */
function chainsNamed(s: StorageHandle, code: string | undefined) {
  const all = (['test', 'live'] as const).flatMap((env) => s.catalogue.chains(env));
  if (code === undefined) return all;
  const named = all.filter((c) => c.code === code);
  if (named.length === 0) throw new UsageError(`--chain: unknown chain code "${code}" (chains: ${[...new Set(all.map((c) => c.code))].join(', ')})`);
  return named;
}

/* eslint-disable @typescript-eslint/no-require-imports */
const load = () => ({
  runner: require('../reconciliation/runner') as typeof import('../reconciliation/runner'),
  operator: require('../reconciliation/operator') as typeof import('../reconciliation/operator'),
  report: require('../reconciliation/report') as typeof import('../reconciliation/report'),
});
/* eslint-enable @typescript-eslint/no-require-imports */

/** wcs reconcile run|status|report|assign|book (docs/reconciliation.md); assign and book are audited. */
export function registerReconcileCommands(program: Command, ctx: CliContext): void {
  const reconcile = program.command('reconcile').description('reconciliation: every custody balance against the ledger (docs/reconciliation.md)');
  const reconcilerOf = (s: StorageHandle) => {
    const cfg = ctx.config();
    const { runner } = load();
    return new runner.Reconciler(s.database.sequelize, s.catalogue, s.container.resolve<AdapterRegistry>(TOKENS.AdapterRegistry), cfg.deposits.endpoints, cfg.reconcile, ctx.logger(cfg));
  };

  reconcile
    .command('run')
    .description('run a pass now on every chain that can be reconciled here (or one), and print it')
    .option('--chain <code>', 'only this chain')
    .option('--full', 'compare every custody address (default: the touched ones and the next slice of the cycle)')
    .addOption(jsonOpt())
    .action(async (o: { chain?: string; full?: boolean; json?: boolean }) => {
      ctx.setJson(o);
      const passes = await ctx.withStorage(async (s) => {
        const named = chainsNamed(s, o.chain);
        const r = reconcilerOf(s);
        const able = new Set(r.chains().map((c) => c.id));
        const chains = named.filter((c) => able.has(c.id));
        const { operator } = load();
        if (chains.length === 0) {
          throw new operator.ReconcileCommandError('RECONCILE_CHAIN_UNAVAILABLE', o.chain
            ? `${o.chain} cannot be reconciled here: it needs an RPC endpoint (WCS_RPC_<ENV>_${o.chain}) and an adapter with a balance reader`
            : 'no chain can be reconciled here: none has an RPC endpoint and an adapter with a balance reader');
        }
        const out = [];
        try {
          for (const c of chains) {
            const p = await r.run(c, 'MANUAL', o.full ? 'FULL' : 'INCREMENTAL');
            if ('busy' in p) throw new operator.ReconcileCommandError('RECONCILE_BUSY', `${c.code}: another process is running a reconciliation pass now; try again when it ends`);
            out.push(p);
          }
        } finally {
          await r.close();
        }
        return out;
      });
      ctx.emit(passes, () => passes.map((p) =>
        `pass ${p.id} ${p.chainCode} ${p.scope} at ${p.height}${p.exact ? '' : ' (head)'}: ${p.addresses} addresses, ${p.compared} compared, ${p.unexplained} unexplained, ${p.opened} new discrepancies, ${p.openings} openings, ${p.outflowsRecorded} outflows recorded (${p.durationMs} ms)`).join('\n'));
    });

  reconcile
    .command('status')
    .description('per chain: the last pass, its height, compared, unexplained, the oldest comparison\'s age, the cycle')
    .addOption(jsonOpt())
    .action(async (o: { json?: boolean }) => {
      ctx.setJson(o);
      const cfg = ctx.config();
      const result = await ctx.withStorage(async (s) => {
        const r = reconcilerOf(s);
        const { report } = load();
        const chains = await report.chainStatus(s.database.sequelize, r.chains().map((c) => c.id));
        return {
          intervalSeconds: cfg.reconcile.intervalSeconds, cycleSeconds: cfg.reconcile.cycleSeconds, chains,
          unavailable: r.unavailable().map((u) => ({ chainCode: u.chain.code, environment: u.chain.environment, reason: u.reason })),
        };
      });
      ctx.emit(result, () => [
        `interval ${result.intervalSeconds === 0 ? 'off (no scheduled passes)' : `${result.intervalSeconds} s`}, cycle ${result.cycleSeconds} s`,
        ...result.chains.map((c) => `${c.environment}:${c.chainCode} ${c.lastPass ? `pass ${c.lastPass.id} ${c.lastPass.scope} at ${c.lastPass.height ?? '-'} ${c.lastPass.finishTime ?? 'running'}${c.lastPass.error ? ` FAILED: ${c.lastPass.error}` : ''}, compared ${c.lastPass.compared}, unexplained ${c.lastPass.unexplained}` : 'no pass yet'}; ${c.custodyAddresses} custody addresses (${c.neverCompared} never compared), oldest comparison ${c.oldestComparisonAgeSeconds ?? '-'} s ago, ${c.openDiscrepancies} open discrepancies`),
        ...(result.unavailable.length ? [`not reconciled here: ${result.unavailable.map((u) => `${u.environment}:${u.chainCode} (${u.reason})`).join(', ')}`] : []),
      ].join('\n'));
    });

  reconcile
    .command('report')
    .description('per application, chain and token: ledger, chain, difference, explained, unexplained and why; then the open discrepancies')
    .option('--chain <code>', 'only this chain')
    .option('--app <id>', 'only this application', parseId)
    .option('--all', 'list settled discrepancies too')
    .addOption(jsonOpt())
    .action(async (o: { chain?: string; app?: number; all?: boolean; json?: boolean }) => {
      ctx.setJson(o);
      const result = await ctx.withStorage(async (s) => {
        if (o.chain !== undefined) chainsNamed(s, o.chain);
        if (o.app !== undefined) await appOf(s.database.sequelize, o.app);
        const { report, operator } = load();
        const f = { ...(o.chain ? { chainCode: o.chain } : {}), ...(o.app ? { applicationId: o.app } : {}) };
        return { balances: await report.reportLines(s.database.sequelize, f), discrepancies: await operator.listDiscrepancies(s.database.sequelize, { ...f, all: Boolean(o.all) }) };
      });
      ctx.emit(result, () => [
        result.balances.length === 0 ? 'no comparisons yet (wcs reconcile run)' : 'APP  CHAIN  TOKEN  ADDRESSES  LEDGER  CHAIN  DIFFERENCE  EXPLAINED  UNEXPLAINED  HEIGHT',
        ...result.balances.map((b) => `${b.applicationId}  ${b.chainCode}  ${b.token}  ${b.addresses}  ${b.ledger}  ${b.onChain}  ${b.difference}  ${b.explained}  ${b.unexplained}  ${b.height}${b.explanations.length ? `\n    explained by: ${b.explanations.map((e) => `${e.kind} ${e.amount} (${e.count})`).join(', ')}` : ''}`),
        result.discrepancies.length === 0 ? 'no open discrepancies' : `${o.all ? 'discrepancies' : 'open discrepancies'}:`,
        ...result.discrepancies.map((d) => `  ${d.id} ${d.status} app ${d.applicationId} ${d.chainCode} ${d.addressKind} ${d.address}${d.externalUserId ? ` (${d.externalUserId})` : ''} ${d.amount} ${d.token} at ${d.height}${d.locatedHeight !== null ? `, changed at block ${d.locatedHeight}` : ''}${d.alertId ? `, alert ${d.alertId}` : ''}`),
      ].join('\n'));
    });

  reconcile
    .command('assign <discrepancyId>')
    .description('credit a deposit address\'s unexplained surplus to its user as a deposit (recharge, callbacks); audited')
    .addOption(jsonOpt())
    .action(async (id: string, o: { json?: boolean }) => {
      ctx.setJson(o);
      const n = discrepancyId(id);
      const r = await ctx.withStorage((s) => load().operator.assignDiscrepancy(s.database.sequelize, cliActor(), n));
      ctx.emit(r, () => `discrepancy ${r.discrepancyId} credited to ${r.externalUserId}: recharge ${r.rechargeId}, ${r.amount} ${r.token} at block ${r.blockHeight}, ${r.txStatus}`);
    });

  reconcile
    .command('book <discrepancyId>')
    .description('book a discrepancy into the ledger (FUNDING for a hot or fee wallet surplus, else BOOKED); audited')
    .requiredOption('--note <text>', 'why (kept with the adjustment and in the audit log)')
    .addOption(jsonOpt())
    .action(async (id: string, o: { note: string; json?: boolean }) => {
      ctx.setJson(o);
      const n = discrepancyId(id);
      const note = o.note.trim();
      if (note.length === 0 || note.length > 500) throw new UsageError('--note: say why in 1 to 500 characters');
      const r = await ctx.withStorage((s) => load().operator.bookDiscrepancy(s.database.sequelize, cliActor(), n, note));
      ctx.emit(r, () => `discrepancy ${r.discrepancyId} booked as ${r.adjustment}: ${r.amount} ${r.token} (${r.note})`);
    });
}
