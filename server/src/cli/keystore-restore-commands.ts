import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command, Option } from 'commander';
import { KeyStoreError, indexMarkKey, type AdapterRegistry, type KeyStore } from '@wcs/core';
import { loadConfig, type ServiceConfig } from '../config/config';
import { TOKENS } from '../container';
import type { StorageHandle } from '../service';
import { keyStoreOptions, loadKeyStorePlugin } from '../plugins/loader';
import { AuditLog, cliActor } from '../operators/audit';
import { verifyBackup, type BackupReport } from '../custody/verify-backup';
import { KeyIndexMarkGuard, databaseCounters, databaseLineage, type MarksCheckReport } from '../addresses/index-marks';
import { LostWindowChecker, type GapCheck } from '../addresses/lost-window';
import { jsonOpt, UsageError, type CliContext } from './context';
import { factLines } from './output';

type MarkState = 'OK' | 'DATABASE_BEHIND' | 'KEY_STORE_BEHIND';

interface MarkRow {
  applicationId: number;
  namespace: string;
  /** The database's next index. */
  database: number;
  /** The key store's mark as the database last knew it. */
  databaseKnows: number;
  keyStore: number;
  state: MarkState;
}

async function markRows(st: StorageHandle, store: KeyStore, lineage: string): Promise<MarkRow[]> {
  const stored = await store.indexMarks!.read(lineage);
  const db = await databaseCounters(st.database.sequelize);
  const keys = new Set([...db.keys(), ...stored.map((m) => indexMarkKey(m.applicationId, m.namespace))]);
  const byKey = new Map(stored.map((m) => [indexMarkKey(m.applicationId, m.namespace), m.next]));
  return [...keys].map((k) => {
    const d = db.get(k);
    const [app, ns] = [Number(k.slice(0, k.indexOf('\n'))), k.slice(k.indexOf('\n') + 1)];
    const keyStore = byKey.get(k) ?? 0;
    const database = d?.next ?? 0;
    const databaseKnows = d?.marked ?? 0;
    const state: MarkState = keyStore > databaseKnows ? 'DATABASE_BEHIND' : keyStore < Math.max(database, databaseKnows) ? 'KEY_STORE_BEHIND' : 'OK';
    return { applicationId: app, namespace: ns, database, databaseKnows, keyStore, state };
  }).sort((a, b) => a.applicationId - b.applicationId || (a.namespace < b.namespace ? -1 : 1));
}

function reportText(r: { backend: string; file?: string; fingerprint?: unknown } & BackupReport): string {
  const lines = [
    `${r.ok ? 'OK' : 'MISMATCH'}: ${r.matched} of ${r.addresses} addresses derived from the backup${r.file ? ` ${r.file}` : ''} (${r.backend}${r.fingerprint ? `, fingerprint ${String(r.fingerprint)}` : ''})`,
    `  ${r.mismatched} mismatched, ${r.skipped} skipped (chain not in the catalogue), ${r.derivations} keys derived`,
  ];
  for (const [chain, c] of Object.entries(r.byChain)) lines.push(`  ${chain.padEnd(14)} ${String(c.matched).padStart(8)} / ${String(c.addresses).padStart(8)}${c.mismatched ? `  ${c.mismatched} mismatched` : ''}`);
  for (const m of r.mismatches) {
    lines.push(`  address ${m.addressId} (application ${m.applicationId}, ${m.chainCode}, ${m.namespace ?? 'memo account'} index ${m.keyIndex}): ${m.problem}: ${m.address}${m.derived ? ` derives ${m.derived}` : ''}`);
  }
  if (r.mismatched > r.mismatches.length) lines.push(`  ... ${r.mismatched - r.mismatches.length} more`);
  return lines.join('\n');
}

/** wcs keystore change-passphrase | verify-backup | marks (docs/deployment.md, "Restoring from backups"). */
export function registerKeystoreRestoreCommands(
  keystore: Command,
  ctx: CliContext,
  keystoreConfig: (o: { backend?: string }) => ServiceConfig,
  backendOpt: () => Option,
): void {
  keystore
    .command('change-passphrase')
    .description('software key store: re-encrypt the key-store file under WCS_KEYSTORE_NEW_PASSPHRASE(_FILE), atomically (old or new file, never a broken one); audited')
    .addOption(jsonOpt())
    .action(async (o: { json?: boolean }) => {
      ctx.setJson(o);
      const cfg = ctx.config();
      const plugin = loadKeyStorePlugin(cfg);
      const change = plugin.changePassphrase;
      if (!change) {
        throw new KeyStoreError('KEYSTORE_CONFIG', `the ${plugin.backend} key store has no passphrase of its own: change the user PIN on the token, then in WCS_PKCS11_PIN_FILE (docs/deployment.md, "Changing the HSM user PIN")`);
      }
      // the database first (the audit log): nothing is changed when it cannot be reached
      const facts = await ctx.withStorage(async (st) => {
        const sequelize = st.database.sequelize;
        return sequelize.transaction(async (t) => {
          const done = await change(keyStoreOptions(cfg));
          try {
            await new AuditLog(sequelize).record(t, cliActor(), {
              action: 'keystore.change-passphrase',
              target: `keystore:${plugin.backend}`,
              before: null,
              after: { file: done.file, fingerprint: done.fingerprint, kdf: done.kdf, newPassphraseSource: done.newPassphraseSource },
            });
          } catch (e) {
            throw new Error(`the passphrase WAS changed, but its audit entry could not be written: ${(e as Error).message}`, { cause: e });
          }
          return done;
        });
      }, cfg);
      ctx.emit(facts, () => `${factLines(facts)}\nThe key-store file now opens with the new passphrase only: set it for every process before its next start.`);
    });

  keystore
    .command('verify-backup [file]')
    .description('check that a key-store backup derives every address the database has handed out (software: FILE, a copy of the key-store file; pkcs11: the configured token, restored from the HSM backup); exit code 1 on any mismatch; prints no key material')
    .addOption(backendOpt())
    .option('--passphrase-file <file>', "software: a file holding the backup's passphrase (default: the configured one)")
    .addOption(jsonOpt())
    .action(async (file: string | undefined, o: { backend?: string; passphraseFile?: string; json?: boolean }) => {
      ctx.setJson(o);
      const base = keystoreConfig(o);
      const env: NodeJS.ProcessEnv = { ...base.env };
      if (base.keystoreBackend === 'software') {
        if (!file) throw new UsageError('verify-backup: the software key store needs the backup FILE (a copy of the key-store file)');
        if (!fs.existsSync(file)) throw new UsageError(`verify-backup: ${file} does not exist`);
        env.WCS_KEYSTORE_FILE = path.resolve(file);
        if (o.passphraseFile) {
          delete env.WCS_KEYSTORE_PASSPHRASE;
          env.WCS_KEYSTORE_PASSPHRASE_FILE = path.resolve(o.passphraseFile);
        }
      } else if (file || o.passphraseFile) {
        throw new UsageError(`verify-backup: the ${base.keystoreBackend} key store takes no FILE: point its settings at the token restored from the HSM backup`);
      }
      const cfg = loadConfig(env);
      // never creates key material: no dev-mode key store, no directory (the device alone answers)
      const store = loadKeyStorePlugin(cfg).create({ ...keyStoreOptions(cfg), devMode: false });
      await store.init();
      try {
        const report = await ctx.withStorage((st) => verifyBackup(st.database.sequelize, st.catalogue, st.container.resolve<AdapterRegistry>(TOKENS.AdapterRegistry), store), cfg);
        const status = await store.status();
        const out = {
          backend: cfg.keystoreBackend,
          ...(file ? { file: path.resolve(file) } : { token: status.token }),
          ...(status.fingerprint ? { fingerprint: status.fingerprint } : {}),
          ...report,
        };
        ctx.emit(out, () => reportText(out));
        if (!report.ok) ctx.exitCode = 1;
      } finally {
        await store.destroy();
      }
    });

  keystore
    .command('marks')
    .description("the key store's key-index marks against the database's deposit counters; --apply runs the start check now (after a restore: counters moved above the marks, windows recorded and alerted, their addresses looked up on chain); exit code 1 while the database is behind; audited")
    .option('--apply', 'apply what a service start would (and look up the lost windows on chain)')
    .addOption(jsonOpt())
    .action(async (o: { apply?: boolean; json?: boolean }) => {
      ctx.setJson(o);
      const cfg = ctx.config();
      const result = await ctx.withStorage(async (st) => {
        const store = st.container.resolve<KeyStore>(TOKENS.KeyStore);
        if (!store.indexMarks) throw new KeyStoreError('KEYSTORE_CONFIG', `the ${cfg.keystoreBackend} key store keeps no key-index marks`);
        await store.init();
        try {
          const sequelize = st.database.sequelize;
          const lineage = await databaseLineage(sequelize);
          let applied: MarksCheckReport | null = null;
          let lookedUp: GapCheck[] | null = null;
          let pending = 0;
          if (o.apply) {
            const logger = ctx.logger(cfg);
            applied = await new KeyIndexMarkGuard(sequelize, store, { ahead: cfg.keyIndexMarkAhead, logger }).check();
            if (applied.gaps.length > 0 || applied.raised.length > 0) {
              await sequelize.transaction((t) => new AuditLog(sequelize).record(t, cliActor(), {
                action: 'keystore.marks-apply', target: `lineage:${lineage}`, before: null,
                after: { gaps: applied!.gaps, raised: applied!.raised.length },
              }));
            }
            const checker = new LostWindowChecker(sequelize, st.catalogue, st.container.resolve<AdapterRegistry>(TOKENS.AdapterRegistry), cfg.deposits.endpoints, store, logger);
            const pass = await checker.checkPending();
            lookedUp = pass.checked;
            pending = pass.pending;
          }
          const marks = await markRows(st, store, lineage);
          const [gaps] = await sequelize.query(
            `SELECT id::text AS id, application_id AS "applicationId", namespace, from_index::int AS "fromIndex", to_index::int AS "toIndex",
                    application_known AS "applicationKnown", detected_at AS "detectedAt", checked_at AS "checkedAt", with_history AS "withHistory",
                    unchecked_chains AS "uncheckedChains", last_error AS "lastError"
               FROM key_index_gaps ORDER BY id`,
          );
          return { lineage, backend: cfg.keystoreBackend, applied, lookedUp, pendingWindows: pending, marks, gaps: gaps as Array<Record<string, unknown>> };
        } finally {
          await store.destroy();
        }
      }, cfg);
      if (result.marks.some((m) => m.state === 'DATABASE_BEHIND')) ctx.exitCode = 1;
      ctx.emit(result, () => {
        const lines = [`lineage ${result.lineage} (${result.backend} key store)`];
        if (result.applied) {
          lines.push(`applied: ${result.applied.gaps.length} window(s) found, ${result.applied.raised.length} mark(s) raised to the database's counters`);
          for (const g of result.lookedUp ?? []) lines.push(`  window ${g.gapId}: ${g.used.length} address(es) with on-chain history${g.unchecked.length ? `; not asked: ${g.unchecked.join('; ')}` : ''}`);
          if (result.pendingWindows) lines.push(`  ${result.pendingWindows} window(s) not looked up yet (a node failed): run again`);
        }
        lines.push('APP  NAMESPACE         DATABASE   KNOWS-MARK  KEY-STORE  STATE');
        for (const m of result.marks) lines.push(`${String(m.applicationId).padEnd(4)} ${m.namespace.padEnd(16)} ${String(m.database).padStart(9)}  ${String(m.databaseKnows).padStart(10)}  ${String(m.keyStore).padStart(9)}  ${m.state}`);
        if (result.marks.length === 0) lines.push('(no deposit counters and no marks)');
        for (const g of result.gaps) {
          lines.push(`window ${String(g.id)}: application ${String(g.applicationId)}${g.applicationKnown ? '' : ' (not in the database)'} ${String(g.namespace)} [${String(g.fromIndex)}, ${String(g.toIndex)}): `
            + (g.checkedAt ? `looked up, ${String(g.withHistory)} with history${g.uncheckedChains ? `; not asked: ${String(g.uncheckedChains)}` : ''}` : `not looked up yet${g.lastError ? ` (${String(g.lastError)})` : ''}`));
        }
        return lines.join('\n');
      });
    });
}
