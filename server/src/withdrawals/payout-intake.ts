import { QueryTypes, type Sequelize } from 'sequelize';
import { AuditLog, type AuditActor } from '../operators/audit';
import type { ChainView } from '../catalogue/catalogue';
import type { Logger } from '../config/logger';
import { createTransfers, type NewTransfer } from '../transfers/model';
import type { TransferIntake } from '../transfers/pipeline';
import { fourEyesFor, lastHoldingRuleChange, lockHoldingRule } from './four-eyes';
import { decideRisk } from './risk-decision';
import { ORDER_COLUMNS, ORDER_FROM, WithdrawNotices, type OrderRow } from './withdraw-events';

/** Orders risk-checked per step; orders released to the transfer pipeline per step. */
const RISK_CHUNK = 200;
const RELEASE_CHUNK = 200;

/**
 * Payouts' intake to the transfer pipeline (docs/withdrawals.md): evaluates new orders against the
 * risk rules (decideRisk, a pure function), then releases each order that passed them (and any
 * approval) as a PAYOUT transfer from its hot wallet's key, in the transaction that records it.
 */
export class PayoutIntake implements TransferIntake {
  readonly name = 'withdrawal intake';

  constructor(
    private readonly sequelize: Sequelize,
    private readonly logger: Logger,
  ) {}

  async step(chain: ChainView): Promise<boolean> {
    const assessed = await this.assessRisk(chain);
    const released = await this.release(chain);
    return assessed > 0 || released > 0;
  }

  /** Evaluates new orders in id order: limits, destination lists, approval threshold; one UPDATE for all. */
  async assessRisk(chain: ChainView): Promise<number> {
    return this.sequelize.transaction(async (t) => {
      const rows = await this.sequelize.query<OrderRow & {
        per_order_max: string | null; daily_max: string | null; approval_threshold: string | null; allowlist_only: boolean; blocked: boolean; allowed: boolean; used_today: string;
      }>(
        `SELECT ${ORDER_COLUMNS}, x.* FROM ${ORDER_FROM}
           JOIN applications a ON a.id = w.application_id
           LEFT JOIN withdraw_limits l ON l.application_id = w.application_id AND l.chain_token_id = w.chain_token_id
           CROSS JOIN LATERAL (SELECT l.per_order_max::text AS per_order_max, l.daily_max::text AS daily_max, l.approval_threshold::text AS approval_threshold,
                                      a.withdraw_allowlist_only AS allowlist_only,
                                      EXISTS (SELECT 1 FROM withdraw_address_rules r WHERE r.application_id = w.application_id AND r.chain_id = w.chain_id AND r.kind = 'BLOCK' AND r.address = w.to_address) AS blocked,
                                      EXISTS (SELECT 1 FROM withdraw_address_rules r WHERE r.application_id = w.application_id AND r.chain_id = w.chain_id AND r.kind = 'ALLOW' AND r.address = w.to_address) AS allowed,
                                      (SELECT coalesce(sum(d.amount), 0)::text FROM withdrawals d
                                        WHERE d.application_id = w.application_id AND d.chain_token_id = w.chain_token_id AND d.risk_level IS NOT NULL
                                          AND d.status <> 'FAILED' AND d.created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC') AS used_today) x
          WHERE w.chain_id = $1 AND w.status = 'PROCESSING' AND w.risk_level IS NULL
          ORDER BY w.id LIMIT ${RISK_CHUNK} FOR UPDATE OF w SKIP LOCKED`,
        { bind: [chain.id], type: QueryTypes.SELECT, transaction: t },
      );
      if (rows.length === 0) return 0;
      const notices = new WithdrawNotices();
      const usedToday = new Map<string, bigint>();
      const verdicts: Array<{ id: string; level: string; reason: string | null; fail: string | null }> = [];
      for (const o of rows) {
        const key = `${o.application_id}/${o.chain_token_id}`;
        const used = usedToday.get(key) ?? BigInt(o.used_today);
        const amount = BigInt(o.amount);
        const big = (v: string | null) => (v === null ? null : BigInt(v));
        const v = decideRisk({
          amount, decimals: o.decimals, usedToday: used,
          perOrderMax: big(o.per_order_max), dailyMax: big(o.daily_max), approvalThreshold: big(o.approval_threshold),
          destinationBlocked: o.blocked, destinationAllowed: o.allowed, allowlistOnly: o.allowlist_only,
        });
        const fail = v.level === 'BLOCKED' ? v.message : null;
        if (fail === null) usedToday.set(key, used + amount);
        verdicts.push({ id: o.id, level: v.level, reason: v.reason, fail });
        if (fail !== null) notices.add(o, 'FAILED', null);
        if (v.level !== 'LOW') this.logger.info('withdrawal risk', { id: o.id, chain: chain.code, riskLevel: v.level, riskReason: v.reason });
      }
      await this.sequelize.query(
        `UPDATE withdrawals w SET risk_level = v.level, risk_reason = v.reason, approval = CASE WHEN v.level = 'HIGH' THEN 'PENDING' ELSE w.approval END,
                status = CASE WHEN v.fail IS NULL THEN w.status ELSE 'FAILED' END, fail_reason = v.fail, finished_at = CASE WHEN v.fail IS NULL THEN NULL ELSE now() END,
                updated_at = now()
           FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) AS v(id, level, reason, fail)
          WHERE w.id = v.id`,
        { bind: [verdicts.map((v) => v.id), verdicts.map((v) => v.level), verdicts.map((v) => v.reason), verdicts.map((v) => v.fail)], transaction: t },
      );
      await notices.flush(this.sequelize, t);
      return rows.length;
    });
  }

  /** Orders that passed risk (and approval) become PAYOUT transfers from the hot key, oldest first. */
  async release(chain: ChainView): Promise<number> {
    return this.sequelize.transaction(async (t) => {
      const rows = await this.sequelize.query<{ id: string; application_id: number; chain_token_id: number; key_namespace: string; key_index: number; from_address: string; to_address: string; memo: string | null; amount: string }>(
        `SELECT w.id::text AS id, w.application_id, w.chain_token_id, h.key_namespace, h.key_index, w.from_address, w.to_address, w.memo, w.amount::text AS amount
           FROM withdrawals w JOIN hot_wallets h ON h.id = w.hot_wallet_id
          WHERE w.chain_id = $1 AND w.status = 'PROCESSING' AND w.risk_level IS NOT NULL AND w.approval IN ('NONE','APPROVED') AND w.transfer_id IS NULL
          ORDER BY w.id LIMIT ${RELEASE_CHUNK} FOR UPDATE OF w SKIP LOCKED`,
        { bind: [chain.id], type: QueryTypes.SELECT, transaction: t },
      );
      if (rows.length === 0) return 0;
      const list: NewTransfer[] = rows.map((o) => ({
        applicationId: o.application_id, chainId: chain.id, chainTokenId: o.chain_token_id, kind: 'PAYOUT',
        key: { purpose: 'hot', namespace: o.key_namespace, index: o.key_index, address: o.from_address },
        to: o.to_address, memo: o.memo, amount: BigInt(o.amount),
      }));
      const ids = await createTransfers(this.sequelize, t, list);
      await this.sequelize.query(
        'UPDATE withdrawals w SET transfer_id = u.transfer, updated_at = now() FROM unnest($1::bigint[], $2::bigint[]) AS u(id, transfer) WHERE w.id = u.id',
        { bind: [rows.map((o) => o.id), ids], transaction: t },
      );
      return rows.length;
    });
  }
}

/** Why a decision on a withdrawal was refused (stable codes: the console and `wcs withdraw approve|reject` show them). */
export type DecisionRefusal = 'WITHDRAWAL_NOT_FOUND' | 'WITHDRAWAL_NOT_PENDING' | 'FOUR_EYES_REQUIRED';

/** What a decision did: the order's new approval, or why nothing was changed (and nothing audited). */
export type DecisionOutcome =
  | { readonly ok: true; readonly approval: 'APPROVED' | 'REJECTED' }
  | { readonly ok: false; readonly code: DecisionRefusal; readonly message: string };

/**
 * An operator's decision on an order waiting for approval (wcs withdraw approve|reject, the
 * console's withdrawal page). In one transaction: the order is locked, it must be held (approval
 * PENDING, status PROCESSING), and an approval is refused when the decider last changed the rule
 * that held it (four eyes, four-eyes.ts); then the change and its audit entry. A refusal changes
 * nothing and writes no entry.
 */
export async function decideApproval(sequelize: Sequelize, actor: AuditActor, id: number, approve: boolean, note: string | null): Promise<DecisionOutcome> {
  return sequelize.transaction(async (t): Promise<DecisionOutcome> => {
    const [o] = await sequelize.query<OrderRow & { approval: string }>(`SELECT ${ORDER_COLUMNS}, w.approval FROM ${ORDER_FROM} WHERE w.id = $1 FOR UPDATE OF w`, {
      bind: [String(id)], type: QueryTypes.SELECT, transaction: t,
    });
    if (!o) return { ok: false, code: 'WITHDRAWAL_NOT_FOUND', message: `withdrawal ${id} not found` };
    if (o.approval !== 'PENDING' || o.status !== 'PROCESSING') {
      return { ok: false, code: 'WITHDRAWAL_NOT_PENDING', message: `withdrawal ${id} is not waiting for approval (approval ${o.approval}, status ${o.status})` };
    }
    await lockHoldingRule(sequelize, t, o.application_id, o.chain_token_id);
    const changed = await lastHoldingRuleChange(sequelize, o.application_id, o.chain_token_id, t);
    const refused = fourEyesFor(approve ? 'APPROVE' : 'REJECT', actor.name, changed?.actor ?? null);
    if (refused !== null) return { ok: false, code: 'FOUR_EYES_REQUIRED', message: `withdrawal ${id}: ${refused}` };
    const audit = (after: Record<string, unknown>) => new AuditLog(sequelize).record(t, actor, {
      action: approve ? 'withdraw.approve' : 'withdraw.reject', target: `withdrawal:${id}`,
      before: { approval: 'PENDING', status: o.status }, after: { ...after, ...(note ? { note } : {}) },
    });
    if (approve) {
      await sequelize.query(`UPDATE withdrawals SET approval = 'APPROVED', updated_at = now() WHERE id = $1`, { bind: [String(id)], transaction: t });
      await audit({ approval: 'APPROVED', status: o.status });
      return { ok: true, approval: 'APPROVED' };
    }
    const reason = `rejected by the operator${note ? `: ${note}` : ''}`.slice(0, 256);
    await sequelize.query(`UPDATE withdrawals SET approval = 'REJECTED', status = 'FAILED', fail_reason = $2, finished_at = now(), updated_at = now() WHERE id = $1`, {
      bind: [String(id), reason], transaction: t,
    });
    await audit({ approval: 'REJECTED', status: 'FAILED' });
    const notices = new WithdrawNotices();
    notices.add(o, 'FAILED', null);
    await notices.flush(sequelize, t);
    return { ok: true, approval: 'REJECTED' };
  });
}
