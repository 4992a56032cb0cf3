import { InvalidArgumentError, type Command } from 'commander';
import { formatLocalDateTime } from '@wcs/core';
import { TOKENS } from '../container';
import type { SecretBox } from '../crypto/secret-box';
import { cliActor } from '../operators/audit';
import { MasterKeyRotation, type MasterKeyStatus } from '../secrets/master-key-rotation';
import { jsonOpt, type CliContext } from './context';

function intOption(min: number, max: number) {
  return (v: string): number => {
    if (!/^\d{1,7}$/.test(v) || Number(v) < min || Number(v) > max) throw new InvalidArgumentError(`Must be an integer from ${min} to ${max}.`);
    return Number(v);
  };
}

const statusJson = (s: MasterKeyStatus) => ({
  sealingKeyId: s.sealingKeyId,
  rotationStartedTime: s.rotationStartedAt ? formatLocalDateTime(s.rotationStartedAt) : null,
  rotationFinishedTime: s.rotationFinishedAt ? formatLocalDateTime(s.rotationFinishedAt) : null,
  keys: s.keys,
  sealed: s.sealed,
});

function statusText(s: MasterKeyStatus): string {
  const lines = [
    `this process: WCS_MASTER_KEY ${s.keys.current}${s.keys.next ? `, WCS_MASTER_KEY_NEXT ${s.keys.next}` : ''}`,
    `new secrets are sealed with: ${s.sealingKeyId ?? `each process's WCS_MASTER_KEY (no rotation has run)`}`,
  ];
  if (s.rotationStartedAt) {
    lines.push(`last rotation: started ${formatLocalDateTime(s.rotationStartedAt)} UTC, ${s.rotationFinishedAt ? `finished ${formatLocalDateTime(s.rotationFinishedAt)} UTC` : 'NOT FINISHED (run wcs secrets rotate-master-key again)'}`);
  }
  lines.push('sealed values:');
  if (s.sealed.length === 0) lines.push('  (none)');
  for (const c of s.sealed) lines.push(`  ${c.kind.padEnd(20)} ${c.keyId}  ${String(c.rows).padStart(8)}${c.held ? '' : '  (this process does not hold this key)'}`);
  return lines.join('\n');
}

/** wcs secrets status|rotate-master-key (docs/deployment.md, "Rotating the master key"). */
export function registerSecretsCommands(program: Command, ctx: CliContext): void {
  const secrets = program.command('secrets').description('secrets sealed under the master key: status and rotation');

  secrets
    .command('status')
    .description('the sealing key, the last rotation, and how many values each master key seals')
    .addOption(jsonOpt())
    .action(async (o) => {
      ctx.setJson(o);
      const s = await ctx.withStorage((st) => new MasterKeyRotation(st.database.sequelize, st.container.resolve<SecretBox>(TOKENS.SecretBox)).status());
      ctx.emit(statusJson(s), () => statusText(s));
    });

  secrets
    .command('rotate-master-key')
    .description('re-seal every secret under WCS_MASTER_KEY_NEXT while the service runs (resumable; audited)')
    .option('--batch <n>', 'rows re-sealed per transaction (1-1000)', intOption(1, 1000), 100)
    .option('--pause-ms <ms>', 'pause after each transaction, to spread the load (0-60000)', intOption(0, 60000), 0)
    .addOption(jsonOpt())
    .action(async (o: { batch: number; pauseMs: number; json?: boolean }) => {
      ctx.setJson(o);
      const r = await ctx.withStorage(async (st) => {
        const rotation = new MasterKeyRotation(st.database.sequelize, st.container.resolve<SecretBox>(TOKENS.SecretBox));
        let last = 0;
        return rotation.rotate(cliActor(), {
          batch: o.batch,
          pauseMs: o.pauseMs,
          onProgress: (p) => {
            if (ctx.json || p.resealed - last < 1000) return;
            last = p.resealed;
            ctx.io.err(`  ${p.kind}: ${p.resealed} re-sealed`);
          },
        });
      });
      ctx.emit(r, () => [
        `${r.resumed ? 'resumed and finished' : 'finished'}: every secret is sealed under master key ${r.targetKeyId}`,
        ...Object.keys(r.verified).map((k) => `  ${k.padEnd(20)} ${String(r.resealed[k as keyof typeof r.resealed]).padStart(8)} re-sealed now, ${r.verified[k as keyof typeof r.verified]} checked under the new key`),
        'Next: make the new key WCS_MASTER_KEY and remove WCS_MASTER_KEY_NEXT in every process (docs/deployment.md).',
      ].join('\n'));
    });
}
