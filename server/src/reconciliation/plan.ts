import type { BalanceHistory, BalancePoint } from '@wcs/core';

/**
 * The decisions of a reconciliation pass (docs/reconciliation.md): where it reads, which
 * addresses it compares, what a comparison's outcome does to the records, and the binary search
 * that locates a change. Pure functions, no I/O.
 */

export type AddressKind = 'DEPOSIT' | 'SHARED' | 'HOT' | 'FEE';

/**
 * The point a pass reads at. Block chains whose deposit scan keeps a height cursor: the lower of
 * the node's head and the cursor, so every deposit up to it is in the ledger. A node that answers
 * only at its head, or a chain without a height cursor (history scans): the head, and a difference
 * there is only a suspicion until a later pass confirms it (confirmSuspect).
 */
export function readPoint(head: BalancePoint, cursor: { readonly height: bigint | null; readonly hash: string | null }, history: BalanceHistory): { readonly point: BalancePoint; readonly exact: boolean } {
  if (history.kind === 'head' || cursor.height === null || cursor.height < 0n) return { point: head, exact: false };
  if (cursor.height >= head.height) return { point: head, exact: true };
  if (history.kind === 'recent' && head.height - cursor.height > history.depth) {
    // the scan is further behind than the node's history reaches: read at the head, confirm later
    return { point: head, exact: false };
  }
  return { point: { height: cursor.height, blockHash: cursor.hash && cursor.hash !== '' ? cursor.hash : null }, exact: true };
}

/** Addresses an incremental pass takes from the cycle besides the touched ones: ceil(total x interval / cycle), at least 1. */
export function sliceSize(total: number, intervalSeconds: number, cycleSeconds: number): number {
  if (total === 0) return 0;
  if (intervalSeconds <= 0 || cycleSeconds <= 0) return total;
  return Math.min(total, Math.max(1, Math.ceil((total * intervalSeconds) / cycleSeconds)));
}

export interface AddressAge {
  readonly address: string;
  /** The oldest comparison among its tokens (null: never compared, or a token never compared). */
  readonly reconciledAt: Date | null;
}

/**
 * A pass's addresses. FULL: all. INCREMENTAL: the touched ones, then the least recently compared
 * (never compared first) up to `slice` more, so every address is compared at least once per cycle.
 * Order: as given for FULL; touched first, then oldest first.
 */
export function selectAddresses(all: readonly AddressAge[], touched: ReadonlySet<string>, scope: 'FULL' | 'INCREMENTAL', slice: number): string[] {
  if (scope === 'FULL') return all.map((a) => a.address);
  const picked = all.filter((a) => touched.has(a.address)).map((a) => a.address);
  const rest = all
    .filter((a) => !touched.has(a.address))
    .sort((a, b) => (a.reconciledAt?.getTime() ?? -Infinity) - (b.reconciledAt?.getTime() ?? -Infinity) || (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  return [...picked, ...rest.slice(0, slice).map((a) => a.address)];
}

/** What the records say about an (address, token) before this comparison. */
export interface PriorState {
  /** It was compared before (a reconcile_balances row exists). */
  readonly compared: boolean;
  readonly agreedHeight: bigint | null;
  readonly suspectHeight: bigint | null;
  /** Its OPEN discrepancy, if any. */
  readonly open: { readonly id: string; readonly amount: bigint } | null;
}

/**
 * What a comparison with an unexplained rest does:
 * - AGREE: nothing unexplained; an OPEN discrepancy that is gone is closed (EXPLAINED).
 * - OPENING: the first comparison of a HOT, FEE or SHARED address books a surplus as its opening
 *   balance (operators fund those from outside the service; audited as an adjustment, not alerted).
 *   A shortfall is never an opening: what the chain holds is the operator's funding plus every
 *   recorded movement, so less than the ledger is money gone without a record (a discrepancy).
 * - SUSPECT: a head-only read; the rest is remembered (suspect_height) until a later pass confirms it.
 * - OPEN: a new discrepancy (located, alerted).
 * - UPDATE: the OPEN discrepancy's amount changed: updated (and alerted again).
 * - KEEP: the OPEN discrepancy still stands as it was: nothing is written but the comparison.
 */
export type Outcome =
  | { readonly kind: 'AGREE'; readonly close: string | null }
  | { readonly kind: 'OPENING' }
  | { readonly kind: 'SUSPECT'; readonly since: bigint }
  | { readonly kind: 'OPEN' }
  | { readonly kind: 'UPDATE'; readonly id: string }
  | { readonly kind: 'KEEP'; readonly id: string };

/**
 * The outcome of one comparison. `exact`: read at the point the ledger is complete to. A head-only
 * read's rest is confirmed when an earlier pass saw a rest (suspect_height) and the deposit scan
 * has since passed that earlier point (`scanHeight`; null: a chain without a height cursor, where
 * a second pass seeing it suffices).
 */
export function outcomeOf(kind: AddressKind, unexplained: bigint, prior: PriorState, read: { readonly height: bigint; readonly exact: boolean; readonly scanHeight: bigint | null }): Outcome {
  if (unexplained === 0n) return { kind: 'AGREE', close: prior.open?.id ?? null };
  if (!prior.compared && kind !== 'DEPOSIT' && unexplained > 0n) return { kind: 'OPENING' };
  if (prior.open) return prior.open.amount === unexplained ? { kind: 'KEEP', id: prior.open.id } : { kind: 'UPDATE', id: prior.open.id };
  if (!read.exact) {
    const confirmed = prior.suspectHeight !== null && (read.scanHeight === null || read.scanHeight >= prior.suspectHeight);
    if (!confirmed) return { kind: 'SUSPECT', since: prior.suspectHeight ?? read.height };
  }
  return { kind: 'OPEN' };
}

/** What a comparison records (reconcile_balances) once its outcome is known. */
export interface RecordedComparison {
  readonly ledger: bigint;
  readonly explained: bigint;
  readonly unexplained: bigint;
  readonly agreedHeight: bigint | null;
  readonly suspectHeight: bigint | null;
}

/**
 * The comparison's record at the pass's read height: agreeing moves agreed_height there; an
 * opening balance joins the ledger (nothing unexplained left); a suspicion keeps the height it was
 * first seen at; a discrepancy (OPEN, UPDATE, KEEP) leaves the last agreed height as it was.
 */
export function recordedComparison(outcome: Outcome, c: { readonly onChain: bigint; readonly ledger: bigint; readonly unexplained: bigint; readonly prior: PriorState }, readHeight: bigint): RecordedComparison {
  let { ledger, unexplained } = c;
  let agreedHeight = c.prior.agreedHeight;
  let suspectHeight: bigint | null = null;
  if (outcome.kind === 'AGREE') agreedHeight = readHeight;
  else if (outcome.kind === 'OPENING') {
    ledger += unexplained;
    unexplained = 0n;
    agreedHeight = readHeight;
  } else if (outcome.kind === 'SUSPECT') suspectHeight = outcome.since;
  return { ledger, explained: c.onChain - ledger - unexplained, unexplained, agreedHeight, suspectHeight };
}

/**
 * The binary search that locates a change (the first height at which the address's difference
 * left the value it had at `low`), assuming it did not come back in between. State: the highest
 * height known to hold the old difference (low) and the lowest known to hold another (high).
 */
export interface Bisection {
  readonly low: bigint;
  readonly high: bigint;
  /** The difference at low (chain - ledger there). */
  readonly baseline: bigint;
}

/** The next height to read, or null when located (high is the block). */
export function nextProbe(b: Bisection): bigint | null {
  if (b.high - b.low <= 1n) return null;
  return b.low + (b.high - b.low) / 2n;
}

/** The search after reading the difference at `probe`. */
export function narrow(b: Bisection, probe: bigint, differenceAtProbe: bigint): Bisection {
  return differenceAtProbe === b.baseline ? { ...b, low: probe } : { ...b, high: probe };
}

/**
 * Where a search starts: from the last height the address agreed at, else as far back as the node
 * answers (archive: genesis; recent: head - depth). Null: the node answers at its head only.
 */
export function searchFloor(history: BalanceHistory, agreedHeight: bigint | null, head: bigint, at: bigint): bigint | null {
  if (history.kind === 'head') return null;
  const oldest = history.kind === 'archive' ? 0n : head - history.depth > 0n ? head - history.depth : 0n;
  const from = agreedHeight !== null && agreedHeight > oldest ? agreedHeight : oldest;
  return from < at ? from : null;
}
