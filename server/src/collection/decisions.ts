/**
 * Collection's decisions as pure functions (docs/collection.md), tested beside this file; the
 * planner and the item processor are thin orchestration around them.
 */

export type GuardVerdict = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/**
 * The cost guard: a sweep goes only when its fee is at most `maxFeeBps` basis points of what it
 * moves. Both sides in the token's base units: a native fee is converted with `nativeValue` (what
 * one whole native coin is worth in the token's base units; null: the token is the native coin),
 * rounded up so the guard never understates the cost.
 */
export function costGuard(p: { amount: bigint; fee: bigint; maxFeeBps: number; nativeValue: bigint | null; nativeDecimals: number }): GuardVerdict {
  if (p.amount <= 0n) return { ok: false, reason: 'nothing to collect' };
  const scale = 10n ** BigInt(p.nativeDecimals);
  const feeInToken = p.nativeValue === null ? p.fee : (p.fee * p.nativeValue + scale - 1n) / scale;
  if (feeInToken * 10_000n <= p.amount * BigInt(p.maxFeeBps)) return { ok: true };
  return { ok: false, reason: `the fee (${feeInToken} in token units) would exceed ${p.maxFeeBps / 100} % of the ${p.amount} to collect` };
}

/** What may be swept from an address: its balance less what unconfirmed deposits brought (never swept before they confirm). */
export function sweepable(balance: bigint, pendingDeposits: bigint): bigint {
  return balance > pendingDeposits ? balance - pendingDeposits : 0n;
}

/**
 * A sweep that empties and closes the account (Solana, the hot wallet paying the fee: a native
 * deposit account ends at 0 lamports and is removed; an SPL token account is closed) must move
 * the whole balance: while a deposit at the address is still unconfirmed, balance less it is not
 * that (SPL: the crafter refuses, CRAFT_REFUSED; native: the runtime refuses to leave the account
 * between 0 and its rent-exempt minimum). Such an address waits until no deposit of the token
 * there is PENDING; then what it sweeps is its whole balance.
 */
export function closingSweepWaits(closesAccount: boolean, pendingDeposits: bigint): boolean {
  return closesAccount && pendingDeposits > 0n;
}

/** A gas top-up: only what the sweep needs beyond the gas already at the address (0: none). */
export function topUpAmount(need: bigint, present: bigint): bigint {
  return need > present ? need - present : 0n;
}

/**
 * Whether an address is worth planning now: at least the threshold; or, for a pass-through
 * deposit that has waited `maxWaitSeconds` (when set), any amount.
 */
export function worthCollecting(p: { amount: bigint; threshold: bigint; oldestWaitSeconds: number | null; maxWaitSeconds: number | null }): 'THRESHOLD' | 'MAX_WAIT' | null {
  if (p.amount <= 0n) return null;
  if (p.amount >= p.threshold) return 'THRESHOLD';
  if (p.maxWaitSeconds !== null && p.oldestWaitSeconds !== null && p.oldestWaitSeconds >= p.maxWaitSeconds) return 'MAX_WAIT';
  return null;
}

/**
 * What the planner does with one address (docs/collection.md, "Why an address is not planned"):
 * - PLAN: an item now;
 * - SKIP: the cost guard's or the threshold's verdict, recorded with its reason; it holds the
 *   address back until a new deposit arrives there, the schedule comes round or its max wait passes;
 * - WAIT: recorded with its reason too, but looked at again on every pass (nothing about the
 *   address has to change): a deposit still pending where the sweep closes the account, a balance
 *   the node did not give, a sweep that cannot be priced yet. A wait that lasts is alerted.
 */
export type PlanVerdict =
  | { readonly kind: 'PLAN'; readonly trigger: 'THRESHOLD' | 'MAX_WAIT' }
  | { readonly kind: 'SKIP'; readonly reason: string }
  | { readonly kind: 'WAIT'; readonly reason: string };

/** A sweep's price as the planner got it: the fee in native base units, or why there is none. */
export type SweepPrice = { readonly ok: true; readonly fee: bigint } | { readonly ok: false; readonly reason: string };

/**
 * The planner's decision for one address, in order: a closing sweep with a deposit pending waits;
 * an unread balance waits; below the threshold (and not past its max wait) is skipped; an
 * unpriced sweep waits; a token policy without a native value cannot be guarded (skipped); the
 * cost guard. The price is asked for only when the address is worth collecting: with `price`
 * null, such an address answers PRICE (price it, then decide again).
 */
export function planVerdict(p: {
  readonly closesAccount: boolean;
  readonly pending: bigint;
  readonly amount: bigint | Error;
  readonly threshold: bigint;
  readonly oldestWaitSeconds: number | null;
  readonly maxWaitSeconds: number | null;
  readonly price: SweepPrice | null;
  readonly token: boolean;
  readonly maxFeeBps: number;
  readonly nativeValue: bigint | null;
  readonly nativeDecimals: number;
}): PlanVerdict | { readonly kind: 'PRICE' } {
  if (closingSweepWaits(p.closesAccount, p.pending)) {
    return { kind: 'WAIT', reason: 'a deposit at this address is still pending: the sweep moves the whole balance at the address (Solana: and closes the account), so it waits for that deposit to confirm' };
  }
  if (p.amount instanceof Error) return { kind: 'WAIT', reason: `the balance could not be read from the node: ${p.amount.message}` };
  const worth = worthCollecting({ amount: p.amount, threshold: p.threshold, oldestWaitSeconds: p.oldestWaitSeconds, maxWaitSeconds: p.maxWaitSeconds });
  if (worth === null) return { kind: 'SKIP', reason: p.amount === 0n ? 'nothing confirmed to collect' : `below the threshold of ${p.threshold}` };
  if (p.price === null) return { kind: 'PRICE' };
  if (!p.price.ok) return { kind: 'WAIT', reason: `the sweep cannot be priced: ${p.price.reason}` };
  if (p.token && p.nativeValue === null && p.price.fee > 0n) {
    return { kind: 'SKIP', reason: 'the policy has no native value for this token: the cost guard cannot compare its fee' };
  }
  const guard = costGuard({ amount: p.amount, fee: p.price.fee, maxFeeBps: p.maxFeeBps, nativeValue: p.token ? p.nativeValue : null, nativeDecimals: p.nativeDecimals });
  if (!guard.ok) return { kind: 'SKIP', reason: `uneconomic: ${guard.reason}` };
  return { kind: 'PLAN', trigger: worth };
}

export type WatermarkAction =
  | { readonly action: 'NONE' }
  /** Above the high watermark: move the surplus to cold, down to the target. */
  | { readonly action: 'COLD_TRANSFER'; readonly amount: bigint }
  /** Below the low watermark: an operator alert with the shortfall to the target. */
  | { readonly action: 'LOW'; readonly shortfall: bigint };

/**
 * Hot wallet watermarks on what is available (on chain less what withdrawals reserved and what
 * is not final yet): above `high` the surplus down to `target` (high when no target) goes cold;
 * below `low` an alert. Nothing when a bound is unset.
 */
export function watermark(p: { available: bigint; low: bigint | null; target: bigint | null; high: bigint | null }): WatermarkAction {
  if (p.high !== null && p.available > p.high) {
    const keep = p.target ?? p.high;
    return { action: 'COLD_TRANSFER', amount: p.available - keep };
  }
  if (p.low !== null && p.available < p.low) return { action: 'LOW', shortfall: (p.target ?? p.low) - p.available };
  return { action: 'NONE' };
}
