import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { WcsError, invalidParameter, type Environment } from '@wcs/core';
import { AuditLog, type AuditActor } from '../operators/audit';
import { appTarget } from './applications';

/** How an application's deposits reach SETTLED (docs/collection.md, "Settlement"). */
export const SETTLEMENT_MODES = ['ON_CONFIRM', 'PASS_THROUGH'] as const;
export type SettlementMode = (typeof SETTLEMENT_MODES)[number];

/** What `wcs collect settlement` prints (--json) and the console's application page shows. */
export interface SettlementResult {
  readonly applicationId: number;
  readonly settlementMode: SettlementMode;
  readonly previousSettlementMode: SettlementMode;
  /** What the operator should know about the change (deposits that settle now, sweeps that wait). */
  readonly notes: string[];
}

interface AppRow {
  id: number;
  environment: Environment;
  enabled_chains: string[];
  settlement_mode: SettlementMode;
}

/** The application (locked when in a transaction), or APPLICATION_NOT_FOUND naming the ones there are. */
async function appOf(sequelize: Sequelize, id: number, t?: Transaction): Promise<AppRow> {
  if (!Number.isSafeInteger(id) || id <= 0) throw invalidParameter('app', 'must be a positive integer application id');
  const [a] = await sequelize.query<AppRow>(
    `SELECT id, environment, enabled_chains, settlement_mode FROM applications WHERE id = $1${t ? ' FOR UPDATE' : ''}`,
    { bind: [id], type: QueryTypes.SELECT, ...(t ? { transaction: t } : {}) },
  );
  if (a) return a;
  const ids = await sequelize.query<{ id: number }>('SELECT id FROM applications ORDER BY id LIMIT 21', { type: QueryTypes.SELECT });
  const list = ids.length === 0 ? 'there are none yet (wcs app create)' : `applications: ${ids.slice(0, 20).map((r) => r.id).join(', ')}${ids.length > 20 ? ', …' : ''}`;
  throw new WcsError('APPLICATION_NOT_FOUND', { message: `No application ${id}; ${list}` });
}

/** The settlement mode of every application (the console's application list). */
export async function settlementModes(sequelize: Sequelize): Promise<Map<number, SettlementMode>> {
  const rows = await sequelize.query<{ id: number; settlement_mode: SettlementMode }>('SELECT id, settlement_mode FROM applications', { type: QueryTypes.SELECT });
  return new Map(rows.map((r) => [r.id, r.settlement_mode]));
}

/** One application's settlement mode (APPLICATION_NOT_FOUND). */
export async function settlementMode(sequelize: Sequelize, applicationId: number): Promise<SettlementMode> {
  return (await appOf(sequelize, applicationId)).settlement_mode;
}

/**
 * Sets how an application's deposits reach SETTLED: ON_CONFIRM (at confirmation) or
 * PASS_THROUGH (once collected to its MERCHANT address). The one copy of the rule behind
 * `wcs collect settlement` and the console's application page. Audited `app.settlement.set`
 * (target `app:<id>`) in the change's transaction; setting the mode it already has changes
 * nothing and writes no entry. The notes say what follows from the change: CONFIRMED deposits
 * that settle at the next scan step (back to ON_CONFIRM), enabled chains without a MERCHANT
 * address and the enabled collection policies (PASS_THROUGH).
 */
export async function setSettlementMode(sequelize: Sequelize, actor: AuditActor, applicationId: number, mode: string): Promise<SettlementResult> {
  if (!(SETTLEMENT_MODES as readonly string[]).includes(mode)) throw invalidParameter('mode', `must be one of ${SETTLEMENT_MODES.join(', ')}`);
  const to = mode as SettlementMode;
  const before = await sequelize.transaction(async (t) => {
    const app = await appOf(sequelize, applicationId, t);
    if (app.settlement_mode !== to) {
      await sequelize.query('UPDATE applications SET settlement_mode = $2, updated_at = now() WHERE id = $1', { bind: [app.id, to], transaction: t });
      await new AuditLog(sequelize).record(t, actor, {
        action: 'app.settlement.set', target: appTarget(app.id), before: { settlementMode: app.settlement_mode }, after: { settlementMode: to },
      });
    }
    return app;
  });
  const notes: string[] = [];
  if (to === 'ON_CONFIRM' && before.settlement_mode === 'PASS_THROUGH') {
    const [c] = await sequelize.query<{ n: number }>(`SELECT count(*)::int AS n FROM recharges WHERE application_id = $1 AND tx_status = 'CONFIRMED'`, { bind: [applicationId], type: QueryTypes.SELECT });
    if (c!.n > 0) notes.push(`${c!.n} CONFIRMED deposits become SETTLED at their chain's next scan step (whether or not they are collected yet)`);
  }
  if (to === 'PASS_THROUGH') {
    // the enabled chains still in the active catalogue (what Catalogue.has() answers)
    const active = await sequelize.query<{ code: string }>('SELECT code FROM chains WHERE environment = $1 AND active AND code = ANY($2::text[])', {
      bind: [before.environment, before.enabled_chains], type: QueryTypes.SELECT,
    });
    const chains = before.enabled_chains.filter((code) => active.some((r) => r.code === code));
    const set = await sequelize.query<{ code: string }>(
      `SELECT c.code FROM collection_addresses a JOIN chains c ON c.id = a.chain_id WHERE a.application_id = $1 AND a.kind = 'MERCHANT'`,
      { bind: [applicationId], type: QueryTypes.SELECT },
    );
    const missing = chains.filter((code) => !set.some((r) => r.code === code));
    if (missing.length > 0) notes.push(`no MERCHANT address on ${missing.join(', ')}: sweeps there wait (wcs collect address set --kind MERCHANT)`);
    const policies = await sequelize.query<{ code: string; symbol: string }>(
      `SELECT c.code, t.symbol FROM collection_policies p JOIN chain_tokens t ON t.id = p.chain_token_id JOIN chains c ON c.id = t.chain_id WHERE p.application_id = $1 AND p.enabled`,
      { bind: [applicationId], type: QueryTypes.SELECT },
    );
    notes.push(`deposits settle only once collected: tokens without an enabled policy stay CONFIRMED (enabled policies: ${policies.map((p) => `${p.code} ${p.symbol}`).join(', ') || 'none'})`);
  }
  return { applicationId, settlementMode: to, previousSettlementMode: before.settlement_mode, notes };
}
