import { QueryTypes, type Sequelize } from 'sequelize';
import { AuditLog, type AuditActor } from './audit';

export interface AlertView {
  readonly id: string;
  readonly chainCode: string | null;
  readonly kind: string;
  readonly message: string;
  readonly details: Record<string, unknown>;
  readonly createdAt: Date;
  readonly acknowledgedAt: Date | null;
  /** Who acknowledged it (from the audit log), when acknowledged. */
  readonly acknowledgedBy: string | null;
}

/** A refused acknowledgement, for the CLI's error (name = the stable code). */
export class AlertError extends Error {
  constructor(readonly code: 'ALERT_NOT_FOUND' | 'ALERT_ALREADY_ACKNOWLEDGED', message: string) {
    super(message);
    this.name = code;
  }
}

export type AcknowledgeResult = { readonly ok: true; readonly alert: AlertView } | { readonly ok: false; readonly reason: 'NOT_FOUND' | 'ALREADY_ACKNOWLEDGED' };

interface AlertRow {
  id: string;
  code: string | null;
  kind: string;
  message: string;
  details: Record<string, unknown>;
  created_at: Date;
  acknowledged_at: Date | null;
  acknowledged_by: string | null;
}

const SELECT = `SELECT a.id::text AS id, c.code, a.kind, a.message, a.details, a.created_at, a.acknowledged_at,
       (SELECT l.actor FROM audit_log l WHERE l.action = 'alert.acknowledge' AND l.target = 'alert:' || a.id ORDER BY l.id DESC LIMIT 1) AS acknowledged_by
  FROM operator_alerts a LEFT JOIN chains c ON c.id = a.chain_id`;

const view = (r: AlertRow): AlertView => ({
  id: r.id, chainCode: r.code, kind: r.kind, message: r.message, details: r.details, createdAt: r.created_at, acknowledgedAt: r.acknowledged_at, acknowledgedBy: r.acknowledged_by,
});

/**
 * Operator alerts (raised by the workers: deep reorgs, stuck transfers, collection failures, a
 * poor fee wallet, ...): listed newest first, open ones or all, and acknowledged by an operator,
 * the acknowledgement audited in its transaction. The CLI (`wcs alerts`) and the console share it.
 */
export class Alerts {
  constructor(private readonly sequelize: Sequelize) {}

  async list(options: { open: boolean; limit: number; before?: string | null }): Promise<AlertView[]> {
    const rows = await this.sequelize.query<AlertRow>(
      `${SELECT} WHERE ($1::boolean IS FALSE OR a.acknowledged_at IS NULL) AND ($2::bigint IS NULL OR a.id < $2::bigint) ORDER BY a.id DESC LIMIT $3`,
      { bind: [options.open, options.before ?? null, options.limit], type: QueryTypes.SELECT },
    );
    return rows.map(view);
  }

  async acknowledge(actor: AuditActor, id: string): Promise<AcknowledgeResult> {
    if (!/^\d{1,19}$/.test(id)) return { ok: false, reason: 'NOT_FOUND' };
    return this.sequelize.transaction(async (t) => {
      const [row] = await this.sequelize.query<{ acknowledged_at: Date | null; kind: string }>('SELECT acknowledged_at, kind FROM operator_alerts WHERE id = $1 FOR UPDATE', {
        bind: [id], type: QueryTypes.SELECT, transaction: t,
      });
      if (!row) return { ok: false as const, reason: 'NOT_FOUND' as const };
      if (row.acknowledged_at !== null) return { ok: false as const, reason: 'ALREADY_ACKNOWLEDGED' as const };
      await this.sequelize.query('UPDATE operator_alerts SET acknowledged_at = now() WHERE id = $1', { bind: [id], transaction: t });
      await new AuditLog(this.sequelize).record(t, actor, { action: 'alert.acknowledge', target: `alert:${id}`, before: { kind: row.kind, acknowledged: false }, after: { kind: row.kind, acknowledged: true } });
      const [after] = await this.sequelize.query<AlertRow>(`${SELECT} WHERE a.id = $1`, { bind: [id], type: QueryTypes.SELECT, transaction: t });
      return { ok: true as const, alert: view(after!) };
    });
  }
}
