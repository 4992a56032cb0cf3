import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { fourEyes } from '../operators/permissions';

/**
 * Four eyes on held withdrawals (docs/console.md, "Four eyes"). A withdrawal is held (approval
 * PENDING, riskLevel HIGH) by one rule only: the approval threshold of its (application, token),
 * set with RiskRules.setLimits (`wcs withdraw limits`, the console's risk rules page), which writes
 * the audit entry `withdraw.limits.set` with the target below. Whoever made the latest such entry
 * may not approve an order that rule holds: another approver must. Rejecting is not restricted:
 * it moves no money (the order ends FAILED and the merchant may place it again), and whoever may
 * change the rule could as well block the destination outright.
 */

/** The audit action of a change to the rule that holds withdrawals. */
export const HOLDING_RULE_ACTION = 'withdraw.limits.set';

/** The audit target of the rule that holds an application's withdrawals of a token. */
export function holdingRuleTarget(applicationId: number, chainTokenId: number): string {
  return `app:${applicationId}/token:${chainTokenId}`;
}

/** A decision on a held withdrawal. */
export type Decision = 'APPROVE' | 'REJECT';

/**
 * Whether `decider` may take `decision` on a withdrawal whose holding rule was last changed by
 * `ruleChangedBy` (null: nobody on record). Null: allowed; else why not. Pure.
 */
export function fourEyesFor(decision: Decision, decider: string, ruleChangedBy: string | null): string | null {
  if (decision === 'REJECT') return null;
  return fourEyes({ decider, ruleChangedBy });
}

/** The latest change on record to the rule holding an application's withdrawals of a token. */
export interface RuleChange {
  readonly auditId: string;
  readonly at: Date;
  readonly actor: string;
  readonly actorRole: string;
  readonly channel: 'console' | 'cli';
}

/** Seed of the advisory-lock hash that orders changes to a holding rule and decisions on what it holds (7420001-7420004 are taken elsewhere). */
export const HOLDING_RULE_LOCK_SEED = 7420011;

/**
 * Takes the transaction-scoped lock of (application, token)'s holding rule: RiskRules.setLimits
 * takes it before changing the rule, decideApproval before reading who last changed it. So a
 * decision sees every rule change that committed before it, and a change made meanwhile waits
 * for the decision (whether or not the rule's row exists yet).
 */
export async function lockHoldingRule(sequelize: Sequelize, t: Transaction, applicationId: number, chainTokenId: number): Promise<void> {
  await sequelize.query('SELECT pg_advisory_xact_lock(hashtextextended($1, $2))', {
    bind: [holdingRuleTarget(applicationId, chainTokenId), HOLDING_RULE_LOCK_SEED], type: QueryTypes.SELECT, transaction: t,
  });
}

/** The latest `withdraw.limits.set` entry for (application, token), or null (in `t` when given). */
export async function lastHoldingRuleChange(sequelize: Sequelize, applicationId: number, chainTokenId: number, t?: Transaction): Promise<RuleChange | null> {
  const [row] = await sequelize.query<{ id: string; at: Date; actor: string; actor_role: string; channel: 'console' | 'cli' }>(
    'SELECT a.id::text AS id, a.at, a.actor, a.actor_role, a.channel FROM audit_log a WHERE a.action = $1 AND a.target = $2 ORDER BY a.id DESC LIMIT 1',
    { bind: [HOLDING_RULE_ACTION, holdingRuleTarget(applicationId, chainTokenId)], type: QueryTypes.SELECT, ...(t ? { transaction: t } : {}) },
  );
  return row ? { auditId: row.id, at: row.at, actor: row.actor, actorRole: row.actor_role, channel: row.channel } : null;
}
