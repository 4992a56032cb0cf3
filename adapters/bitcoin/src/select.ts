/** The plan of a spend (fee and change) and the service's input selection. */
import type { SpendableOutput } from '@wcs/core';
import {
  checkAmount, checkOutputs, dustThreshold, feeForVsize, invalid, p2wpkhScript, p2wpkhSpendVsize, parseFeeRate, sum, P2WPKH_INPUT_VBYTES,
} from './spend';

// ---- The plan of a spend: fee and change -------------------------------------------------------

/** What a set of inputs pays: the fee and the change (null when there is none). */
export interface SpendPlan {
  readonly fee: bigint;
  readonly change: bigint | null;
  /** Virtual size the fee was computed for (worst-case signatures). */
  readonly vsize: number;
}

type PlanResult = { readonly ok: true; readonly plan: SpendPlan } | { readonly ok: false; readonly shortfall: bigint };

interface Shape {
  readonly paymentScriptLength: number;
  readonly changeScriptLength: number;
  readonly changeDust: bigint;
}

/**
 * The one rule craft() and selectInputs() share. Without change the fee is feeRate × vsize; if
 * the inputs fall short of amount + that fee, the shortfall is the difference (craft() returns it
 * as its CraftResult, selectInputs() as its InputSelection). With a change
 * output the fee is that of the larger transaction, and the change what is left; a change below
 * the change script's dust threshold is not made and goes to the fee instead.
 */
export function planSpend(total: bigint, inputCount: number, amount: bigint, satPerKvB: bigint, shape: Shape): PlanResult {
  const vsizeNoChange = p2wpkhSpendVsize(inputCount, [shape.paymentScriptLength]);
  const feeNoChange = feeForVsize(vsizeNoChange, satPerKvB);
  if (total < amount + feeNoChange) return { ok: false, shortfall: amount + feeNoChange - total };
  const vsizeChange = p2wpkhSpendVsize(inputCount, [shape.paymentScriptLength, shape.changeScriptLength]);
  const feeChange = feeForVsize(vsizeChange, satPerKvB);
  const change = total - amount - feeChange;
  if (change >= shape.changeDust) return { ok: true, plan: { fee: feeChange, change, vsize: vsizeChange } };
  return { ok: true, plan: { fee: total - amount, change: null, vsize: vsizeNoChange } };
}

// ---- Input selection --------------------------------------------------------------------------

/** Deterministic order: amount descending, then txid and vout ascending. */
function byValue(a: SpendableOutput, b: SpendableOutput): number {
  if (a.amount !== b.amount) return a.amount > b.amount ? -1 : 1;
  if (a.txHash !== b.txHash) return a.txHash < b.txHash ? -1 : 1;
  return a.vout - b.vout;
}

export interface SelectionOptions {
  /** The payment's output script (its size counts in the fee); default a P2WPKH script. */
  readonly paymentScript?: Uint8Array;
  /** The change's output script (its size and dust threshold); default a P2WPKH script. */
  readonly changeScript?: Uint8Array;
  /**
   * Most inputs in one transaction (default 1000: about 68 000 vB, below the 100 000 vB standard
   * limit). The shortfall is then what the `maxInputs` largest worthwhile outputs lack.
   */
  readonly maxInputs?: number;
  /** Search steps of branch-and-bound before largest-first is used (default 100 000). */
  readonly maxTries?: number;
}

/** The outcome of selectInputs: core's InputSelectionResult, with the fee, change and method of a selection. */
export type InputSelection =
  | {
    readonly ok: true;
    /** The outputs to spend, each once, in the order craft() should get them. */
    readonly inputs: readonly SpendableOutput[];
    /** The fee and change craft() computes for them (same rule). */
    readonly fee: bigint;
    readonly change: bigint | null;
    readonly method: 'branch-and-bound' | 'largest-first';
  }
  | {
    readonly ok: false;
    /**
     * Satoshis missing: amount + fee of a transaction spending every worthwhile output (at most
     * maxInputs, largest first) without change, minus their sum. With no worthwhile output at all,
     * amount + the fee of a one-input transaction. One more output covers the withdrawal when it is
     * worth at least shortfall + its own input's fee (68 vB × fee rate).
     */
    readonly shortfall: bigint;
  };

const P2WPKH_PLACEHOLDER = p2wpkhScript(new Uint8Array(20));

/**
 * The service's UTXO selection for a withdrawal of `amount` at `feeRate` (sat/vB text, as in the
 * transfer input): pure and deterministic for the same arguments (outputs ordered by amount
 * descending, then txid and vout, whatever the order of `available`). An output is never chosen
 * twice (a duplicate in `available` is refused), and outputs worth no more than the fee of
 * spending them (68 vB × fee rate) are never chosen.
 *
 * Method, after Bitcoin Core's: two candidates, the cheaper one wins.
 * - branch-and-bound (Erhardt 2016): a changeless set, one whose excess over amount + fee is too
 *   small for a change output (craft() gives it to the fee), with the lowest cost (everything
 *   above `amount` goes to the fee: cost = total − amount), then the fewest inputs; depth-first
 *   over the ordered outputs, at most `maxTries` steps.
 * - largest-first: the largest outputs until amount + fee is covered (the fewest inputs
 *   possible), usually with change; its cost is the fee plus, when it makes change, the fee of
 *   spending that change later (68 vB at the same rate).
 * The changeless set is used when it costs no more than largest-first.
 */
export function selectInputs(available: readonly SpendableOutput[], amount: bigint, feeRate: string, options: SelectionOptions = {}): InputSelection {
  checkAmount(amount);
  if (!Array.isArray(available)) throw invalid('available must be an array of outputs');
  checkOutputs(available, 'available');
  const satPerKvB = parseFeeRate(feeRate);
  const changeScript = options.changeScript ?? P2WPKH_PLACEHOLDER;
  const shape: Shape = {
    paymentScriptLength: (options.paymentScript ?? P2WPKH_PLACEHOLDER).length,
    changeScriptLength: changeScript.length,
    changeDust: dustThreshold(changeScript),
  };
  const maxInputs = options.maxInputs ?? 1000;
  const maxTries = options.maxTries ?? 100_000;
  if (!Number.isInteger(maxInputs) || maxInputs < 1) throw new RangeError('maxInputs must be a positive integer');
  if (!Number.isInteger(maxTries) || maxTries < 0) throw new RangeError('maxTries must be a non-negative integer');

  const inputFee = feeForVsize(P2WPKH_INPUT_VBYTES, satPerKvB);
  const pool = available.filter((o) => o.amount > inputFee).sort(byValue);
  const limit = Math.min(pool.length, maxInputs);
  // Fees without / with change for 0..limit+1 inputs (the same sizes planSpend computes).
  const fees = Array.from({ length: limit + 2 }, (_, n) => ({
    none: feeForVsize(p2wpkhSpendVsize(n, [shape.paymentScriptLength]), satPerKvB),
    change: feeForVsize(p2wpkhSpendVsize(n, [shape.paymentScriptLength, shape.changeScriptLength]), satPerKvB),
  }));

  let total = 0n;
  let largest: InputSelection | null = null;
  for (let n = 1; n <= limit; n++) {
    total += pool[n - 1]!.amount;
    const planned = planSpend(total, n, amount, satPerKvB, shape);
    if (planned.ok) {
      largest = { ok: true, inputs: pool.slice(0, n), fee: planned.plan.fee, change: planned.plan.change, method: 'largest-first' };
      break;
    }
  }
  if (largest === null || !largest.ok) {
    // The largest `limit` outputs do not cover: no set of at most maxInputs outputs does.
    return limit === 0 ? { ok: false, shortfall: amount + fees[1]!.none } : { ok: false, shortfall: amount + fees[limit]!.none - total };
  }
  const largestCost = largest.fee + (largest.change === null ? 0n : inputFee);
  const changeless = branchAndBound(pool, amount, fees, shape.changeDust, limit, maxTries);
  if (changeless && sum(changeless) - amount <= largestCost) {
    const planned = planSpend(sum(changeless), changeless.length, amount, satPerKvB, shape);
    if (planned.ok && planned.plan.change === null) return { ok: true, inputs: changeless, fee: planned.plan.fee, change: null, method: 'branch-and-bound' };
  }
  return largest;
}


/**
 * Depth-first search over `pool` (ordered, every output worth more than its input fee, so adding
 * one always raises the excess) for a changeless set of at most `limit` outputs: excess =
 * total − amount − fee(no change) ≥ 0 and total − amount − fee(with change) below the change's
 * dust threshold. Keeps the set of the lowest cost (total − amount: the fee it pays), then the
 * fewest inputs, then the first found. Null when none is found within maxTries steps.
 */
function branchAndBound(
  pool: readonly SpendableOutput[], amount: bigint, fees: ReadonlyArray<{ none: bigint; change: bigint }>, changeDust: bigint, limit: number, maxTries: number,
): SpendableOutput[] | null {
  // after[i]: the sum of pool[i..].
  const after: bigint[] = new Array<bigint>(pool.length + 1).fill(0n);
  for (let i = pool.length - 1; i >= 0; i--) after[i] = after[i + 1]! + pool[i]!.amount;

  let tries = 0;
  let best: { picks: number[]; cost: bigint } | null = null;
  const picks: number[] = [];

  const visit = (i: number, total: bigint): void => {
    if (++tries > maxTries) return;
    const n = picks.length;
    if (n > 0 && total - amount - fees[n]!.none >= 0n) {
      // Covered. Adding more only raises the excess: this branch ends here, a solution or an overshoot.
      const cost = total - amount;
      if (total - amount - fees[n]!.change < changeDust && (best === null || cost < best.cost || (cost === best.cost && n < best.picks.length))) {
        best = { picks: picks.slice(), cost };
      }
      return;
    }
    if (i >= pool.length || n >= limit) return;
    // Any covering set below this node has more inputs and pays at least their fee.
    if (best !== null && fees[n + 1]!.none > (best as { cost: bigint }).cost) return;
    // Even every remaining output (up to the limit) cannot cover: nothing below this node can.
    const room = Math.min(pool.length - i, limit - n);
    if (total + after[i]! - after[i + room]! - amount - fees[n + room]!.none < 0n) return;
    picks.push(i);
    visit(i + 1, total + pool[i]!.amount);
    picks.pop();
    // Leaving pool[i] out: leaving out the equal outputs after it too, since a set that takes one
    // of them in its place is one the branch above already saw.
    let j = i + 1;
    while (j < pool.length && pool[j]!.amount === pool[i]!.amount) j++;
    visit(j, total);
  };
  visit(0, 0n);
  const found = best as { picks: number[]; cost: bigint } | null;
  return found ? found.picks.map((k) => pool[k]!) : null;
}
