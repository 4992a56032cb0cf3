/**
 * Why a custody balance differs from the ledger (docs/reconciliation.md, "Explanations"): pure
 * decisions, no I/O. The difference is always on_chain - ledger (positive: the chain holds more).
 */

/** The kinds of explanation a comparison records (reconcile_balances.explanations[].kind). */
export type ExplanationKind =
  /** A deposit the scan saw and did not credit (below the token's minimum): always on chain. */
  | 'DEPOSIT_IGNORED'
  /** A transfer the service signed that the pipeline has not seen mined yet (SIGNED, BROADCASTED), which the chain may already hold. */
  | 'TRANSFER_IN_FLIGHT'
  /** A deposit whose block left the chain, not yet mined again or failed (PENDING, no block): the chain may hold it. */
  | 'DEPOSIT_PENDING'
  /** Node answers above the read point (head-only readers): a deposit mined after it. */
  | 'DEPOSIT_AFTER_READ'
  /** Node answers above the read point: a transfer of the service mined after it. */
  | 'TRANSFER_AFTER_READ'
  /** Node answers above the read point: a custody outflow (TRANSFER) mined after it. */
  | 'OUTFLOW_AFTER_READ';

/** An explanation as stored: its amount is its part of the difference (signed, base units, decimal string). */
export interface Explanation {
  readonly kind: ExplanationKind;
  readonly amount: string;
  /** What it is: `transfer:<id>`, `recharge:<id>`, `outflow:<id>`, `tx:<hash>#<position>`. */
  readonly ref: string;
}

/**
 * Something that is part of the difference for certain (mandatory) or may be (optional). An
 * optional candidate's effect is a range: exact for a token's movement, [-(sent + maxFee), -sent]
 * in the native coin for a transfer whose fee is known only as its ceiling until it is mined.
 */
export interface Candidate {
  readonly kind: ExplanationKind;
  readonly ref: string;
  readonly min: bigint;
  readonly max: bigint;
}

export interface Explained {
  readonly explained: bigint;
  readonly unexplained: bigint;
  readonly explanations: readonly Explanation[];
}

/** At most this many optional candidates are tried per (address, token); the largest in size first. */
export const MAX_CANDIDATES = 12;
/** Subsets of at most this many optional candidates are tried (2^12 subsets is the bound anyway). */
export const MAX_SUBSET = 6;

/**
 * Splits a difference into its explained and unexplained parts. Mandatory candidates (deposits
 * the scan ignored) are always part of it. Then the smallest subset of optional candidates whose
 * combined effect range holds the rest explains it entirely; when no subset does, none is used
 * (a partial match would hide a real difference behind a coincidence) and the rest is unexplained.
 * Ties between subsets of one size: the first in candidate order (deterministic).
 */
export function explainDifference(difference: bigint, mandatory: readonly { readonly kind: ExplanationKind; readonly ref: string; readonly amount: bigint }[], optional: readonly Candidate[]): Explained {
  const explanations: Explanation[] = mandatory.filter((m) => m.amount !== 0n).map((m) => ({ kind: m.kind, amount: m.amount.toString(), ref: m.ref }));
  let rest = difference - mandatory.reduce((s, m) => s + m.amount, 0n);
  if (rest === 0n) return { explained: difference, unexplained: 0n, explanations };
  const pool = [...optional]
    .filter((c) => c.min <= c.max && !(c.min === 0n && c.max === 0n))
    .sort((a, b) => (abs(b.min) + abs(b.max) > abs(a.min) + abs(a.max) ? 1 : abs(b.min) + abs(b.max) < abs(a.min) + abs(a.max) ? -1 : 0))
    .slice(0, MAX_CANDIDATES);
  const subset = smallestSubset(rest, pool);
  if (subset !== null) {
    explanations.push(...split(rest, subset));
    rest = 0n;
  }
  return { explained: difference - rest, unexplained: rest, explanations };
}

/** The smallest subset (by size, then candidate order) whose [Σmin, Σmax] holds target; null when none. */
export function smallestSubset(target: bigint, pool: readonly Candidate[]): Candidate[] | null {
  const n = pool.length;
  for (let size = 1; size <= Math.min(n, MAX_SUBSET); size++) {
    const found = combination(pool, size, target);
    if (found) return found;
  }
  return null;
}

function combination(pool: readonly Candidate[], size: number, target: bigint): Candidate[] | null {
  const idx = Array.from({ length: size }, (_, i) => i);
  const n = pool.length;
  for (;;) {
    let lo = 0n;
    let hi = 0n;
    for (const i of idx) {
      lo += pool[i]!.min;
      hi += pool[i]!.max;
    }
    if (lo <= target && target <= hi) return idx.map((i) => pool[i]!);
    // next combination in lexicographic order
    let k = size - 1;
    while (k >= 0 && idx[k] === n - size + k) k--;
    if (k < 0) return null;
    idx[k]!++;
    for (let j = k + 1; j < size; j++) idx[j] = idx[j - 1]! + 1;
  }
}

/**
 * Each chosen candidate's part of target: its minimum, and the slack (target - Σmin) given out
 * in order up to each one's maximum. The parts sum to target exactly.
 */
function split(target: bigint, chosen: readonly Candidate[]): Explanation[] {
  let slack = target - chosen.reduce((s, c) => s + c.min, 0n);
  return chosen.map((c) => {
    const room = c.max - c.min;
    const take = slack < room ? slack : room;
    slack -= take;
    return { kind: c.kind, amount: (c.min + take).toString(), ref: c.ref };
  });
}

function abs(x: bigint): bigint {
  return x < 0n ? -x : x;
}
