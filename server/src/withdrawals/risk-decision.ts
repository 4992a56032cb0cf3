import { formatUnits } from '@wcs/core';

/** riskLevel values (docs/withdrawals.md). */
export type RiskLevel = 'LOW' | 'HIGH' | 'BLOCKED';

/** Why an order is refused for good (riskLevel BLOCKED). */
export type BlockReason = 'DESTINATION_BLOCKED' | 'DESTINATION_NOT_ALLOWED' | 'PER_ORDER_LIMIT_EXCEEDED' | 'DAILY_LIMIT_EXCEEDED';
/** riskReason values (docs/withdrawals.md); null with LOW. */
export type RiskReason = BlockReason | 'AMOUNT_OVER_APPROVAL_THRESHOLD';

/** The outcome of the risk rules for one order: paid at once, held for an operator, or failed with a message. */
export type RiskVerdict =
  | { readonly level: 'LOW'; readonly reason: null }
  | { readonly level: 'HIGH'; readonly reason: 'AMOUNT_OVER_APPROVAL_THRESHOLD' }
  | { readonly level: 'BLOCKED'; readonly reason: BlockReason; /** The order's failure reason (fail_reason). */ readonly message: string };

/** Everything the rules look at, in base units of the order's token. */
export interface RiskInput {
  readonly amount: bigint;
  /** The token's decimals, for the messages. */
  readonly decimals: number;
  /** What this application already committed today (UTC) in this token, orders of this run before this one included. */
  readonly usedToday: bigint;
  readonly perOrderMax: bigint | null;
  readonly dailyMax: bigint | null;
  readonly approvalThreshold: bigint | null;
  /** The destination is on the application's blocklist for the chain. */
  readonly destinationBlocked: boolean;
  /** The destination is on the application's allowlist for the chain. */
  readonly destinationAllowed: boolean;
  /** The application pays out only to allowlisted destinations. */
  readonly allowlistOnly: boolean;
}

/**
 * The withdrawal risk rules, in order: the blocklist, the allowlist-only switch, the per-order
 * limit, the daily limit (amount + what is already committed today), then the approval threshold.
 * The first rule that applies decides. Pure: the worker reads the inputs and writes the verdicts.
 */
export function decideRisk(i: RiskInput): RiskVerdict {
  const fmt = (v: bigint) => formatUnits(v, i.decimals);
  if (i.destinationBlocked) return { level: 'BLOCKED', reason: 'DESTINATION_BLOCKED', message: "risk: the destination is on the application's blocklist" };
  if (i.allowlistOnly && !i.destinationAllowed) {
    return { level: 'BLOCKED', reason: 'DESTINATION_NOT_ALLOWED', message: 'risk: the application only pays out to allowlisted destinations and this one is not on it' };
  }
  if (i.perOrderMax !== null && i.amount > i.perOrderMax) {
    return { level: 'BLOCKED', reason: 'PER_ORDER_LIMIT_EXCEEDED', message: `risk: the amount is above the per-order limit of ${fmt(i.perOrderMax)}` };
  }
  if (i.dailyMax !== null && i.usedToday + i.amount > i.dailyMax) {
    return { level: 'BLOCKED', reason: 'DAILY_LIMIT_EXCEEDED', message: `risk: ${fmt(i.usedToday + i.amount)} today would exceed the daily limit of ${fmt(i.dailyMax)}` };
  }
  if (i.approvalThreshold !== null && i.amount > i.approvalThreshold) return { level: 'HIGH', reason: 'AMOUNT_OVER_APPROVAL_THRESHOLD' };
  return { level: 'LOW', reason: null };
}
