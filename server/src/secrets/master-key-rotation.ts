import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { ConfigError } from '../config/config';
import type { SecretBox } from '../crypto/secret-box';
import { APP_CHANGED_CHANNEL } from '../apps/applications';
import { AuditLog, type AuditActor } from '../operators/audit';
import { SEALED_COLUMNS, type SealedColumns } from './sealed-columns';

type Kind = SealedColumns['kind'];

/** How many values of a kind are sealed under one key, and whether this process holds that key. */
export interface SealedCount {
  readonly kind: Kind;
  readonly keyId: string;
  readonly rows: number;
  readonly held: boolean;
}

export interface MasterKeyStatus {
  /** The key new secrets are sealed with (null: each process's WCS_MASTER_KEY; no rotation has run). */
  readonly sealingKeyId: string | null;
  readonly rotationStartedAt: Date | null;
  readonly rotationFinishedAt: Date | null;
  /** The keys of this process: WCS_MASTER_KEY and WCS_MASTER_KEY_NEXT. */
  readonly keys: { readonly current: string; readonly next: string | null };
  readonly sealed: readonly SealedCount[];
}

export interface RotateOptions {
  /** Rows re-sealed per transaction (1-1000). */
  readonly batch: number;
  /** Pause after each transaction, to spread the load (ms). */
  readonly pauseMs: number;
  /** Called after each committed transaction. */
  readonly onProgress?: (p: { kind: Kind; resealed: number }) => void;
}

export interface RotateResult {
  readonly targetKeyId: string;
  /** True when an earlier run to the same key had not finished (killed, failed). */
  readonly resumed: boolean;
  /** Values re-sealed by this run, per kind. */
  readonly resealed: Readonly<Record<Kind, number>>;
  /** Values now sealed under the target key, each opened under it to check, per kind. */
  readonly verified: Readonly<Record<Kind, number>>;
}

/** A rotation that cannot run, or cannot finish (the message says which and why; nothing secret). */
export class MasterKeyRotationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MasterKeyRotationError';
  }
}

const zeroes = (): Record<Kind, number> => Object.fromEntries(SEALED_COLUMNS.map((c) => [c.kind, 0])) as Record<Kind, number>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface SealedRow {
  id: number;
  bind: number;
  ct: Buffer;
  iv: Buffer;
  tag: Buffer;
  key_id: string;
}

/**
 * `wcs secrets rotate-master-key` and `wcs secrets status` (docs/deployment.md, "Rotating the
 * master key"). The rotation moves every sealed value (sealed-columns.ts) to WCS_MASTER_KEY_NEXT:
 *
 * 1. the sealing key in the database (migration 22) becomes the next key, audited
 *    `secrets.master-key.rotate-start`: from that commit on, processes seal new values with it;
 * 2. the values under any other key are re-sealed in key order, `batch` rows per transaction,
 *    each row locked, opened with the key that sealed it and sealed under the next key; a kill at
 *    any point leaves every row under one key or the other, both of which every process holds;
 * 3. every value is opened under the next key alone, then the rotation is marked finished,
 *    audited `secrets.master-key.rotate`.
 *
 * Running it again after a kill resumes: the rows still under the old key are the work left.
 */
export class MasterKeyRotation {
  private readonly audit: AuditLog;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly box: SecretBox,
  ) {
    this.audit = new AuditLog(sequelize);
  }

  async counts(t?: Transaction): Promise<SealedCount[]> {
    const out: SealedCount[] = [];
    for (const c of SEALED_COLUMNS) {
      const rows = await this.sequelize.query<{ key_id: string; rows: number }>(
        `SELECT ${c.keyId} AS key_id, count(*)::int AS rows FROM ${c.table} WHERE ${c.keyId} IS NOT NULL GROUP BY 1 ORDER BY 1`,
        { type: QueryTypes.SELECT, ...(t ? { transaction: t } : {}) },
      );
      for (const r of rows) out.push({ kind: c.kind, keyId: r.key_id, rows: r.rows, held: this.box.holds(r.key_id) });
    }
    return out;
  }

  async status(): Promise<MasterKeyStatus> {
    const [state] = await this.sequelize.query<{ sealing_key_id: string | null; rotation_started_at: Date | null; rotation_finished_at: Date | null }>(
      'SELECT sealing_key_id, rotation_started_at, rotation_finished_at FROM master_key_state WHERE id = 1',
      { type: QueryTypes.SELECT },
    );
    return {
      sealingKeyId: state?.sealing_key_id ?? null,
      rotationStartedAt: state?.rotation_started_at ?? null,
      rotationFinishedAt: state?.rotation_finished_at ?? null,
      keys: { current: this.box.keyId, next: this.box.nextKeyId },
      sealed: await this.counts(),
    };
  }

  async rotate(actor: AuditActor, options: RotateOptions): Promise<RotateResult> {
    const target = this.box.nextKeyId;
    if (target === null) throw new ConfigError('WCS_MASTER_KEY_NEXT: required by the rotation: set it (or WCS_MASTER_KEY_NEXT_FILE) to the new key, in every process first (docs/deployment.md, "Rotating the master key")');
    if (target === this.box.keyId) throw new ConfigError('WCS_MASTER_KEY_NEXT: is the same key as WCS_MASTER_KEY');
    const foreign = (await this.counts()).filter((c) => !c.held);
    if (foreign.length > 0) {
      throw new MasterKeyRotationError(
        `cannot rotate: ${describe(foreign)} sealed under a master key this process does not hold (neither WCS_MASTER_KEY ${this.box.keyId} nor WCS_MASTER_KEY_NEXT ${target}); nothing was changed`,
      );
    }
    const resumed = await this.switchSealingKey(actor, target);
    const resealed = zeroes();
    // a row sealed under the old key by a transaction that was open at the switch has committed
    // since (the switch waited for it): a second pass finds any such row the first one passed
    for (let pass = 0; pass < 3; pass++) {
      let found = 0;
      for (const c of SEALED_COLUMNS) {
        const n = await this.resealKind(c, target, options);
        resealed[c.kind] += n;
        found += n;
      }
      if (found === 0) break;
    }
    const left = (await this.counts()).filter((c) => c.keyId !== target);
    if (left.length > 0) throw new MasterKeyRotationError(`not finished: ${describe(left)} still sealed under another key; run the command again`);
    const verified = await this.verifyAll(target);
    await this.sequelize.transaction(async (t) => {
      await this.sequelize.query(
        'UPDATE master_key_state SET rotation_finished_at = now(), updated_at = now() WHERE id = 1 AND sealing_key_id = $1',
        { bind: [target], transaction: t },
      );
      await this.audit.record(t, actor, {
        action: 'secrets.master-key.rotate', target: `master-key:${target}`,
        before: null, after: { sealingKeyId: target, resumed, resealed, sealed: verified },
      });
    });
    return { targetKeyId: target, resumed, resealed, verified };
  }

  /** Makes `target` the sealing key (waiting for sealing transactions in flight); true when an unfinished run to it is resumed. */
  private async switchSealingKey(actor: AuditActor, target: string): Promise<boolean> {
    return this.sequelize.transaction(async (t) => {
      const [state] = await this.sequelize.query<{ sealing_key_id: string | null; rotation_finished_at: Date | null }>(
        'SELECT sealing_key_id, rotation_finished_at FROM master_key_state WHERE id = 1 FOR UPDATE',
        { type: QueryTypes.SELECT, transaction: t },
      );
      if (!state) throw new MasterKeyRotationError('master_key_state has no row: the database is not migrated');
      const resumed = state.sealing_key_id === target && state.rotation_finished_at === null;
      const again = state.sealing_key_id === target;
      await this.sequelize.query(
        `UPDATE master_key_state SET sealing_key_id = $1, rotation_finished_at = NULL, updated_at = now(),
                rotation_started_at = CASE WHEN $2 THEN rotation_started_at ELSE now() END WHERE id = 1`,
        { bind: [target, again], transaction: t },
      );
      const sealed = Object.fromEntries((await this.counts(t)).map((c) => [`${c.kind}:${c.keyId}`, c.rows]));
      await this.audit.record(t, actor, {
        action: 'secrets.master-key.rotate-start', target: `master-key:${target}`,
        before: { sealingKeyId: state.sealing_key_id ?? this.box.keyId, sealed }, after: { sealingKeyId: target, resumed },
      });
      return resumed;
    });
  }

  /** Re-seals every row of one kind not under `target`, `batch` rows per transaction, in id order. */
  private async resealKind(c: SealedColumns, target: string, options: RotateOptions): Promise<number> {
    let cursor = 0;
    let total = 0;
    for (;;) {
      const n = await this.sequelize.transaction(async (t) => {
        const rows = await this.sequelize.query<SealedRow>(
          `SELECT ${c.id} AS id, ${c.bindingColumn} AS bind, ${c.ciphertext} AS ct, ${c.iv} AS iv, ${c.authTag} AS tag, ${c.keyId} AS key_id
             FROM ${c.table} WHERE ${c.keyId} IS NOT NULL AND ${c.keyId} <> $1 AND ${c.id} > $2 ORDER BY ${c.id} LIMIT $3 FOR UPDATE`,
          { bind: [target, cursor, options.batch], type: QueryTypes.SELECT, transaction: t },
        );
        for (const r of rows) {
          const plain = this.box.openBound({ ciphertext: r.ct, iv: r.iv, authTag: r.tag, keyId: r.key_id }, c.binding(r.bind));
          try {
            const s = this.box.sealBound(plain, c.binding(r.bind), target);
            await this.sequelize.query(
              `UPDATE ${c.table} SET ${c.ciphertext} = $2, ${c.iv} = $3, ${c.authTag} = $4, ${c.keyId} = $5 WHERE ${c.id} = $1`,
              { bind: [r.id, s.ciphertext, s.iv, s.authTag, s.keyId], transaction: t },
            );
          } finally {
            plain.fill(0);
          }
        }
        if (c.notifiesApplication && rows.length > 0) {
          await this.sequelize.query('SELECT pg_notify($1, api_key) FROM applications WHERE id = ANY($2::int[])', {
            bind: [APP_CHANGED_CHANNEL, [...new Set(rows.map((r) => r.bind))]], transaction: t,
          });
        }
        if (rows.length > 0) cursor = rows[rows.length - 1]!.id;
        return rows.length;
      });
      if (n === 0) return total;
      total += n;
      options.onProgress?.({ kind: c.kind, resealed: total });
      if (options.pauseMs > 0) await sleep(options.pauseMs);
    }
  }

  /** Opens every sealed value with the target key alone; a value that does not open stops the rotation unfinished. */
  private async verifyAll(target: string): Promise<Record<Kind, number>> {
    const verified = zeroes();
    for (const c of SEALED_COLUMNS) {
      let cursor = 0;
      for (;;) {
        const rows = await this.sequelize.query<SealedRow>(
          `SELECT ${c.id} AS id, ${c.bindingColumn} AS bind, ${c.ciphertext} AS ct, ${c.iv} AS iv, ${c.authTag} AS tag, ${c.keyId} AS key_id
             FROM ${c.table} WHERE ${c.keyId} IS NOT NULL AND ${c.id} > $1 ORDER BY ${c.id} LIMIT 1000`,
          { bind: [cursor], type: QueryTypes.SELECT },
        );
        if (rows.length === 0) break;
        for (const r of rows) {
          if (r.key_id !== target) throw new MasterKeyRotationError(`not finished: ${c.table} row ${r.id} is sealed under ${r.key_id}; run the command again`);
          try {
            this.box.openBound({ ciphertext: r.ct, iv: r.iv, authTag: r.tag, keyId: r.key_id }, c.binding(r.bind)).fill(0);
          } catch (e) {
            throw new MasterKeyRotationError(`${c.table} row ${r.id} does not open under master key ${target}: ${(e as Error).message}`);
          }
          verified[c.kind]++;
        }
        cursor = rows[rows.length - 1]!.id;
      }
    }
    return verified;
  }
}

function describe(counts: readonly SealedCount[]): string {
  return counts.map((c) => `${c.rows} ${c.kind} under ${c.keyId}`).join(', ');
}

/** The sealed values this process cannot open (keys it does not hold), for the warning at start. */
export async function unopenableSecrets(sequelize: Sequelize, box: SecretBox): Promise<SealedCount[]> {
  return (await new MasterKeyRotation(sequelize, box).counts()).filter((c) => !c.held);
}
