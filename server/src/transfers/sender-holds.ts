import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { evidenceJson, type SenderCheck } from '@wcs/core';
import { AuditLog, type AuditActor } from '../operators/audit';

/** The operator alert raised once when a sender is held (docs/transfers.md). */
export const SENDER_CHAIN_AHEAD = 'SENDER_CHAIN_AHEAD';

/** A sender the chain check found the chain ahead of (migration 25, `sender_holds`). */
export interface SenderHold {
  readonly id: string;
  readonly chainId: number;
  readonly chainCode: string;
  readonly environment: string;
  readonly address: string;
  /** The adapter's sentence: what the chain shows that the database does not know. */
  readonly summary: string;
  /** The typed evidence as JSON (sender-check.ts: evidenceJson). */
  readonly evidence: Record<string, unknown>;
  readonly alertId: string | null;
  readonly heldAt: Date;
  readonly releasedAt: Date | null;
  readonly releasedBy: string | null;
  readonly releaseNote: string | null;
}

interface HoldRow {
  id: string;
  chain_id: number;
  code: string;
  environment: string;
  address: string;
  summary: string;
  evidence: Record<string, unknown>;
  alert_id: string | null;
  held_at: Date;
  released_at: Date | null;
  released_by: string | null;
  release_note: string | null;
}

const SELECT = `SELECT h.id::text AS id, h.chain_id, c.code, c.environment, h.address, h.summary, h.evidence, h.alert_id::text AS alert_id,
       h.held_at, h.released_at, h.released_by, h.release_note
  FROM sender_holds h JOIN chains c ON c.id = h.chain_id`;

const view = (r: HoldRow): SenderHold => ({
  id: r.id, chainId: r.chain_id, chainCode: r.code, environment: r.environment, address: r.address, summary: r.summary, evidence: r.evidence,
  alertId: r.alert_id, heldAt: r.held_at, releasedAt: r.released_at, releasedBy: r.released_by, releaseNote: r.release_note,
});

/**
 * Holds `address` on the chain: nothing new is signed for it until it is released. One open hold
 * per sender (the partial unique index): the first process to hold it raises the one
 * SENDER_CHAIN_AHEAD alert, in the same transaction; a sender already held is left as it is.
 * True when this call held it.
 */
export async function holdSender(
  sequelize: Sequelize, chain: { readonly id: number; readonly code: string }, address: string, found: Extract<SenderCheck, { kind: 'AHEAD' }>,
): Promise<boolean> {
  const evidence = evidenceJson(found.evidence);
  return sequelize.transaction(async (t) => {
    const [held] = await sequelize.query<{ id: string }>(
      `INSERT INTO sender_holds (chain_id, address, summary, evidence) VALUES ($1, $2, $3, $4::jsonb)
       ON CONFLICT (chain_id, address) WHERE released_at IS NULL DO NOTHING RETURNING id::text AS id`,
      { bind: [chain.id, address, found.summary, JSON.stringify(evidence)], type: QueryTypes.SELECT, transaction: t },
    );
    if (!held) return false;
    const [alert] = await sequelize.query<{ id: string }>(
      'INSERT INTO operator_alerts (chain_id, kind, message, details) VALUES ($1, $2, $3, $4::jsonb) RETURNING id::text AS id',
      {
        bind: [chain.id, SENDER_CHAIN_AHEAD,
          `${chain.code}: the chain holds transactions from ${address} that the database does not know (${found.summary}); nothing more is signed for this sender until a recovery releases it (wcs transfers holds)`,
          JSON.stringify({ address, hold: held.id, summary: found.summary, evidence })],
        type: QueryTypes.SELECT,
        transaction: t,
      },
    );
    await sequelize.query('UPDATE sender_holds SET alert_id = $2 WHERE id = $1', { bind: [held.id, alert!.id], transaction: t });
    return true;
  });
}

/** Which of `addresses` are held on the chain now (an open hold). */
export async function heldAmong(sequelize: Sequelize, chainId: number, addresses: readonly string[], t?: Transaction): Promise<Set<string>> {
  if (addresses.length === 0) return new Set();
  const rows = await sequelize.query<{ address: string }>(
    'SELECT address FROM sender_holds WHERE chain_id = $1 AND address = ANY($2::text[]) AND released_at IS NULL',
    { bind: [chainId, [...addresses]], type: QueryTypes.SELECT, ...(t ? { transaction: t } : {}) },
  );
  return new Set(rows.map((r) => r.address));
}

/** Holds, newest first: the open ones (default) or all, of one chain or every chain. */
export async function listHolds(sequelize: Sequelize, options: { readonly open?: boolean; readonly chainId?: number | null; readonly limit?: number } = {}): Promise<SenderHold[]> {
  const rows = await sequelize.query<HoldRow>(
    `${SELECT} WHERE ($1::boolean IS FALSE OR h.released_at IS NULL) AND ($2::int IS NULL OR h.chain_id = $2) ORDER BY h.id DESC LIMIT $3`,
    { bind: [options.open ?? true, options.chainId ?? null, options.limit ?? 1000], type: QueryTypes.SELECT },
  );
  return rows.map(view);
}

export type ReleaseResult = { readonly ok: true; readonly hold: SenderHold } | { readonly ok: false; readonly reason: 'NOT_HELD' };

/**
 * Releases a held sender: signing for it resumes at the pipeline's next round. For the recovery
 * that matched the chain's transactions to the restored orders (`wcs recover transfers`), or an
 * operator who checked them. What the hold's evidence showed is accepted as known from then on:
 * a sequence chain's allocator is raised to the chain's next sequence it recorded, and its
 * transactions and spent outputs count as the service's in later checks (a check finding more
 * than that holds the sender again). Audited (`transfers.release-sender`) in the transaction of
 * the release; pass `t` to release inside the caller's own transaction.
 */
export async function releaseSender(
  sequelize: Sequelize, sender: { readonly chainId: number; readonly address: string }, actor: AuditActor, note: string, t?: Transaction,
): Promise<ReleaseResult> {
  if (typeof note !== 'string' || note.trim() === '') throw new TypeError('releaseSender: a note saying why is required');
  const run = async (tx: Transaction): Promise<ReleaseResult> => {
    const [row] = await sequelize.query<HoldRow>(`${SELECT} WHERE h.chain_id = $1 AND h.address = $2 AND h.released_at IS NULL FOR UPDATE OF h`, {
      bind: [sender.chainId, sender.address], type: QueryTypes.SELECT, transaction: tx,
    });
    if (!row) return { ok: false, reason: 'NOT_HELD' };
    const [released] = await sequelize.query<HoldRow>(
      `UPDATE sender_holds SET released_at = now(), released_by = $2, release_note = $3 WHERE id = $1
       RETURNING id::text AS id, chain_id, $4::text AS code, $5::text AS environment, address, summary, evidence, alert_id::text AS alert_id, held_at, released_at, released_by, release_note`,
      { bind: [row.id, actor.name.slice(0, 128), note.slice(0, 2000), row.code, row.environment], type: QueryTypes.SELECT, transaction: tx },
    );
    const seen = sequenceSeen(row.evidence);
    if (seen !== null) {
      await sequelize.query(
        `INSERT INTO sequence_allocators (chain_id, address, next_sequence) VALUES ($1, $2, $3::numeric)
         ON CONFLICT (chain_id, address) DO UPDATE SET next_sequence = GREATEST(sequence_allocators.next_sequence, EXCLUDED.next_sequence), updated_at = now()`,
        { bind: [sender.chainId, sender.address, seen.toString()], transaction: tx },
      );
    }
    await new AuditLog(sequelize).record(tx, actor, {
      action: 'transfers.release-sender',
      target: `sender:${row.code}:${row.address}`,
      before: { hold: row.id, heldAt: row.held_at.toISOString(), summary: row.summary, evidence: row.evidence },
      after: { releasedAt: released!.released_at!.toISOString(), note, ...(seen !== null ? { allocatorAtLeast: seen.toString() } : {}) },
    });
    return { ok: true, hold: view(released!) };
  };
  return t ? run(t) : sequelize.transaction(run);
}

/** A SEQUENCE evidence's highest next sequence (chain or pool); null for other evidence. */
function sequenceSeen(evidence: Record<string, unknown>): bigint | null {
  if (evidence.kind !== 'SEQUENCE') return null;
  const values = [evidence.chainNext, evidence.pendingNext].filter((v): v is string => typeof v === 'string' && /^\d+$/.test(v)).map((v) => BigInt(v));
  return values.length === 0 ? null : values.reduce((a, b) => (b > a ? b : a));
}
