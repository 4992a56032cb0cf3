import type { Role } from './operators';

/**
 * What each role may do (docs/console.md, "Roles"): least privilege, every role reads, and each
 * change belongs to exactly one role. The console will check `may()` on the server for every
 * request; the pages only hide what the server would refuse.
 */
export const ACTIONS = {
  read: ['viewer', 'operator', 'approver', 'admin'],
  'applications.write': ['operator'],
  'callbacks.write': ['operator'],
  'callbacks.resend': ['operator'],
  'collection.policies.write': ['operator'],
  'withdrawals.rules.write': ['operator'],
  'deposits.assign': ['operator'],
  'alerts.acknowledge': ['operator', 'approver'],
  'withdrawals.decide': ['approver'],
  'collection.decide': ['approver'],
  'operators.write': ['admin'],
} as const satisfies Record<string, readonly Role[]>;

export type Action = keyof typeof ACTIONS;

export function may(role: Role, action: Action): boolean {
  return (ACTIONS[action] as readonly Role[]).includes(role);
}

/** Who last changed the risk rule that held a withdrawal (from the audit log), and who would decide it. */
export interface FourEyesCase {
  /** The approver deciding (an operator's username). */
  readonly decider: string;
  /** The actor of the last change to the rule that held the order (an operator's username, or `cli:<user>`); null: never changed by anyone on record. */
  readonly ruleChangedBy: string | null;
}

/**
 * Four eyes: a held withdrawal is decided by an approver other than whoever last changed the
 * rule that held it, so no one can both set a rule and let an order through it. Null: allowed;
 * else why not.
 */
export function fourEyes(c: FourEyesCase): string | null {
  if (c.ruleChangedBy !== null && c.ruleChangedBy === c.decider) {
    return `${c.decider} last changed the rule that held this withdrawal: another approver must decide it`;
  }
  return null;
}
