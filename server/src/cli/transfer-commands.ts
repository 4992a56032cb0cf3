import type { Command } from 'commander';
import { formatLocalDateTime } from '@wcs/core';
import type { SenderHold } from '../transfers/sender-holds';
import { UsageError, jsonOpt, type CliContext } from './context';

const holdJson = (h: SenderHold) => ({
  id: h.id, chainCode: h.chainCode, environment: h.environment, address: h.address, summary: h.summary, evidence: h.evidence, alertId: h.alertId,
  heldTime: formatLocalDateTime(h.heldAt), releasedTime: h.releasedAt === null ? null : formatLocalDateTime(h.releasedAt), releasedBy: h.releasedBy, releaseNote: h.releaseNote,
});

/** wcs transfers holds: the senders the chain check before signing holds (docs/transfers.md); read-only. */
export function registerTransferCommands(program: Command, ctx: CliContext): void {
  const transfers = program.command('transfers').description('the transfer pipeline: senders held by the chain check before signing (docs/transfers.md)');
  transfers.command('holds')
    .description('senders nothing is signed for because the chain holds transactions from them that the database does not know (newest first; --all: released ones too)')
    .option('--all', 'released holds too')
    .option('--chain <code>', 'only this chain code (either environment)')
    .addOption(jsonOpt())
    .action(async (o: { all?: boolean; chain?: string; json?: boolean }) => {
      ctx.setJson(o);
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { listHolds } = require('../transfers/sender-holds') as typeof import('../transfers/sender-holds');
      const list = await ctx.withStorage(async (s) => {
        const holds = await listHolds(s.database.sequelize, { open: o.all !== true });
        if (o.chain === undefined) return holds;
        const known = new Set((['test', 'live'] as const).flatMap((env) => s.catalogue.chains(env)).map((c) => c.code));
        if (!known.has(o.chain)) throw new UsageError(`--chain: unknown chain code "${o.chain}" (chains: ${[...known].join(', ')})`);
        return holds.filter((h) => h.chainCode === o.chain);
      });
      ctx.emit({ holds: list.map(holdJson) }, () => (list.length === 0 ? `no ${o.all ? '' : 'held '}senders`
        : list.map((h) => `${h.id} ${formatLocalDateTime(h.heldAt)} ${h.chainCode} (${h.environment}) ${h.address}: ${h.summary}${h.alertId ? ` [alert ${h.alertId}]` : ''}`
          + (h.releasedAt ? ` (released ${formatLocalDateTime(h.releasedAt)} by ${h.releasedBy}: ${h.releaseNote})` : ' HELD')).join('\n')));
    });
}
