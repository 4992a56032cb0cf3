import type { Command } from 'commander';
import { formatLocalDateTime, type AdapterRegistry } from '@wcs/core';
import { TOKENS } from '../container';
import { cliActor } from '../operators/audit';
import type { StorageHandle } from '../service';
import { UsageError, jsonOpt, type CliContext } from './context';

/* eslint-disable @typescript-eslint/no-require-imports */
const load = () => ({
  recovery: require('../transfers/recovery') as typeof import('../transfers/recovery'),
  apply: require('../transfers/recovery-apply') as typeof import('../transfers/recovery-apply'),
  view: require('../transfers/recovery-view') as typeof import('../transfers/recovery-view'),
});
/* eslint-enable @typescript-eslint/no-require-imports */

interface RecoverOptions { chain?: string; sender?: string; fromHeight?: string; apply?: boolean; release?: boolean; acceptUnmatched?: boolean; json?: boolean }

/** The chains named (a catalogue code, either environment) and the sender in its canonical form; bad input is a usage error. */
function selection(s: StorageHandle, registry: AdapterRegistry, o: RecoverOptions) {
  const all = (['test', 'live'] as const).flatMap((env) => s.catalogue.chains(env));
  const chains = o.chain === undefined ? all : all.filter((c) => c.code === o.chain);
  if (chains.length === 0) throw new UsageError(`--chain: unknown chain code "${o.chain}" (chains: ${[...new Set(all.map((c) => c.code))].join(', ')})`);
  let sender: string | undefined;
  if (o.sender !== undefined) {
    for (const c of chains) {
      const v = registry.forChain(c).address.validate(o.sender);
      if (v.valid) {
        sender = v.normalized;
        break;
      }
    }
    if (sender === undefined) throw new UsageError(`--sender: "${o.sender}" is not an address of ${o.chain ?? 'any configured chain'}`);
  }
  return { chains, sender };
}

/**
 * wcs recover transfers (docs/deployment.md, "Transfers after a restore"): the held senders'
 * transactions on chain that the restored database does not know, matched to its transfers not on
 * chain yet; a dry run unless --apply; --release lets signing resume. Audited (transfers.recover,
 * transfers.release-sender).
 */
export function registerRecoverCommands(program: Command, ctx: CliContext): void {
  const recover = program.command('recover').description('recovery after a database restore (docs/deployment.md)');
  recover
    .command('transfers')
    .description('match each held sender\'s transactions on chain that the restored database does not know to its unsigned transfers; a dry run unless --apply')
    .option('--chain <code>', 'only this chain code (either environment)')
    .option('--sender <address>', 'only this held sender')
    .option('--from-height <height>', 'block chains: read from this block (default: EVM, the block of the first transaction past the database\'s nonce; Bitcoin, the lowest block of the outputs found spent, less a margin; else the lower of the scan cursor and the sender\'s newest known transaction, less a margin)')
    .option('--apply', 'record each MATCHED transfer with the chain\'s transaction (BROADCASTED, callbacks); audited')
    .option('--release', 'with --apply: release each sender afterwards (refused while a transaction is UNMATCHED_ON_CHAIN)')
    .option('--accept-unmatched', 'with --release: release even with UNMATCHED_ON_CHAIN transactions (the release note lists them)')
    .addOption(jsonOpt())
    .action(async (o: RecoverOptions) => {
      ctx.setJson(o);
      if (o.fromHeight !== undefined && !/^\d{1,18}$/.test(o.fromHeight)) throw new UsageError(`--from-height: must be a block height (a non-negative integer), got "${o.fromHeight}"`);
      if (o.release && !o.apply) throw new UsageError('--release: only with --apply (a dry run changes nothing)');
      if (o.acceptUnmatched && !o.release) throw new UsageError('--accept-unmatched: only with --apply --release');
      const cfg = ctx.config();
      const { recovery, apply, view } = load();
      const result = await ctx.withStorage(async (s) => {
        const registry = s.container.resolve<AdapterRegistry>(TOKENS.AdapterRegistry);
        const { chains, sender } = selection(s, registry, o);
        const reader = new recovery.TransferRecovery(s.database.sequelize, registry, cfg.deposits.endpoints);
        const plans = await reader.plan({ chains, ...(sender !== undefined ? { sender } : {}), ...(o.fromHeight !== undefined ? { fromHeight: BigInt(o.fromHeight) } : {}) });
        if (!o.apply) return { dryRun: true, plans: plans.map(view.planJson), applied: [] };
        const options = { release: Boolean(o.release), acceptUnmatched: Boolean(o.acceptUnmatched) };
        apply.RecoveryApplier.refusals(plans, options);
        const applier = new apply.RecoveryApplier(s.database.sequelize, cfg.deposits.endpoints);
        const applied = [];
        for (const p of plans) {
          const a = await applier.apply(p, cliActor(), options);
          applied.push({ chainCode: a.chainCode, sender: a.sender, recorded: a.recorded, released: a.released !== null, releasedTime: a.released?.releasedAt ? formatLocalDateTime(a.released.releasedAt) : null, note: a.note });
        }
        return { dryRun: false, plans: plans.map(view.planJson), applied };
      });
      ctx.emit(result, () => [
        result.plans.length === 0 ? 'no held senders' : (result.dryRun ? 'dry run (nothing changed; --apply records the MATCHED ones):' : 'applied:'),
        ...result.plans.map(view.planText),
        ...result.applied.map((a) => `${a.chainCode} ${a.sender}: ${a.recorded.length} recorded (${a.recorded.map((r) => `transfer ${r.transferId} <- ${r.txHash}`).join(', ') || 'none'}); ${a.released ? `released ${a.releasedTime}: ${a.note}` : 'still held (--release lets signing resume)'}`),
      ].join('\n'));
    });
}
