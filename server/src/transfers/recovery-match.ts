import type { ObservedTransfer } from '@wcs/core';

// ---------------------------------------------------------------------------------------------
// The recovery's match (docs/transfers.md, "Recovery"): the chain's transactions from a held
// sender that the restored database does not know, against the restored database's transfers
// from that sender that are not on chain yet. Pure: no database, no node.

/** One payment of a transaction on chain (a transfer out of the sender, change excluded). */
export interface ChainPayment {
  /** Canonical form. */
  readonly to: string;
  /** Token contract / mint / issuer; null for the native coin. */
  readonly contract: string | null;
  readonly amount: bigint;
  readonly memo: string | null;
  /** Its position in the transaction (output index, log index, operation index). */
  readonly position: number;
}

/** A transaction from the sender on chain, its payments grouped. */
export interface ChainTransaction {
  readonly txHash: string;
  readonly blockHeight: bigint;
  /** The sender's sequence (EVM nonce, XRP/XLM sequence) when the caller read it; null elsewhere. */
  readonly sequence: bigint | null;
  readonly succeeded: boolean;
  readonly payments: readonly ChainPayment[];
}

/** A transfer of the restored database not on chain yet (READY or SIGNED). */
export interface Intent {
  readonly transferId: string;
  readonly to: string;
  readonly contract: string | null;
  readonly amount: bigint;
  readonly memo: string | null;
  /** The fee comes out of the amount (feeFromAmount, subtractFee): the chain moves at most `amount`. */
  readonly feeFromAmount: boolean;
}

export interface Matched<I extends Intent = Intent> {
  readonly intent: I;
  readonly tx: ChainTransaction;
  /** What the chain's transaction moves (sent_amount). */
  readonly sentAmount: bigint;
}

/**
 * The plan's three outcomes: MATCHED (the intent gets the chain's transaction), UNMATCHED_ON_CHAIN
 * (a transaction the restored database has no intent for), UNMATCHED_IN_DATABASE (an intent with
 * no transaction on chain: signed normally once the sender is released).
 */
export interface RecoveryMatch<I extends Intent = Intent> {
  readonly matched: ReadonlyArray<Matched<I>>;
  readonly unmatchedOnChain: readonly ChainTransaction[];
  readonly unmatchedInDatabase: readonly I[];
}

/**
 * The sender's transfers grouped by transaction (a Bitcoin transaction may pay several outputs; an
 * EVM token transfer is one log), in chain order; transfers from other senders are left out.
 * `sequences` gives a transaction's sequence where the caller read it.
 */
export function groupTransactions(observed: readonly ObservedTransfer[], sender: string, sequences: ReadonlyMap<string, bigint> = new Map()): ChainTransaction[] {
  const byHash = new Map<string, { tx: Omit<ChainTransaction, 'payments'>; payments: ChainPayment[]; seen: Set<number> }>();
  for (const o of observed) {
    if (o.fromAddress !== sender) continue;
    let g = byHash.get(o.txHash);
    if (!g) {
      g = { tx: { txHash: o.txHash, blockHeight: o.blockHeight, sequence: sequences.get(o.txHash) ?? null, succeeded: o.succeeded }, payments: [], seen: new Set() };
      byHash.set(o.txHash, g);
    }
    if (g.seen.has(o.position)) continue; // a re-read page repeats a transfer
    g.seen.add(o.position);
    g.payments.push({ to: o.toAddress, contract: o.contract, amount: o.amount, memo: o.memo, position: o.position });
  }
  return order([...byHash.values()].map((g) => ({ ...g.tx, payments: g.payments.sort((a, b) => a.position - b.position) })));
}

/** Chain order: by sequence where both have one, else by block, then hash (stable). */
function order(txs: ChainTransaction[]): ChainTransaction[] {
  return txs.sort((a, b) => {
    if (a.sequence !== null && b.sequence !== null && a.sequence !== b.sequence) return a.sequence < b.sequence ? -1 : 1;
    if (a.blockHeight !== b.blockHeight) return a.blockHeight < b.blockHeight ? -1 : 1;
    return a.txHash < b.txHash ? -1 : a.txHash > b.txHash ? 1 : 0;
  });
}

const memoOf = (m: string | null) => (m === null || m === '' ? null : m);

/** What the chain's payment moves for this intent, or null when it is not the intent's. */
function fits(intent: Intent, p: ChainPayment, canon: (address: string) => string): bigint | null {
  if (canon(intent.to) !== canon(p.to)) return null;
  if ((intent.contract ?? null) !== (p.contract ?? null)) return null;
  if (memoOf(intent.memo) !== memoOf(p.memo)) return null;
  if (p.amount === intent.amount) return p.amount;
  if (intent.feeFromAmount && p.amount > 0n && p.amount < intent.amount) return p.amount;
  return null;
}

/**
 * Matches one to one: the chain's transactions in chain order (lowest sequence, else earliest
 * block, first), each to the oldest intent (lowest transfer id) it fits: same recipient (canonical
 * form), token, memo and amount (at most the amount when the fee comes out of it). A transaction
 * the pipeline made pays one recipient: one with several payments is never matched (each is listed
 * for the operator).
 */
export function matchRecovery<I extends Intent>(txs: readonly ChainTransaction[], intents: readonly I[], canon: (address: string) => string = (a) => a): RecoveryMatch<I> {
  const open = [...intents].sort((a, b) => {
    const x = BigInt(a.transferId);
    const y = BigInt(b.transferId);
    return x < y ? -1 : x > y ? 1 : 0;
  });
  const taken = new Set<string>();
  const matched: Array<Matched<I>> = [];
  const unmatchedOnChain: ChainTransaction[] = [];
  for (const tx of order([...txs])) {
    const only = tx.payments.length === 1 ? tx.payments[0]! : null;
    let found: Matched<I> | null = null;
    if (only) {
      for (const intent of open) {
        if (taken.has(intent.transferId)) continue;
        const sent = fits(intent, only, canon);
        if (sent === null) continue;
        found = { intent, tx, sentAmount: sent };
        break;
      }
    }
    if (found) {
      taken.add(found.intent.transferId);
      matched.push(found);
    } else {
      unmatchedOnChain.push(tx);
    }
  }
  return { matched, unmatchedOnChain, unmatchedInDatabase: open.filter((i) => !taken.has(i.transferId)) };
}

/**
 * The lowest height in [low, high] whose sequence (the sender's next sequence after that block)
 * is above `known` (the next sequence the restored database knows): the block of the first
 * transaction the database lost. Binary search, about log2(high − low) reads, since a sender's
 * sequence never falls as blocks go by. Null when even `high` is not above it (nothing lost in
 * the range).
 */
export async function firstHeightAbove(sequenceAt: (height: bigint) => Promise<bigint>, known: bigint, low: bigint, high: bigint): Promise<bigint | null> {
  if (low > high || (await sequenceAt(high)) <= known) return null;
  let lo = low;
  let hi = high; // sequenceAt(hi) > known
  while (lo < hi) {
    const mid = lo + (hi - lo) / 2n;
    if ((await sequenceAt(mid)) > known) hi = mid;
    else lo = mid + 1n;
  }
  return lo;
}

/**
 * Utxo chains: where a held sender's lost window starts when the hold's evidence is outputs the
 * database believed unspent (SPENT_OUTPUTS). A transaction spends an output only in or after the
 * block that made it, and the database knew those outputs when the backup was taken, before any
 * transaction it lost: the lowest of their blocks, less `margin` (an output it knew still
 * unconfirmed, mined after a lost transaction), is a floor for all of them, wherever the scan
 * cursor has moved since. Null (the default start instead) when there is no output, or when one
 * output's block is not known (the floor would be a guess).
 */
export function outputsStart(heights: ReadonlyArray<bigint | null>, margin: bigint): bigint | null {
  if (heights.length === 0 || heights.some((h) => h === null)) return null;
  const low = (heights as readonly bigint[]).reduce((a, b) => (b < a ? b : a)) - margin;
  return low < 0n ? 0n : low;
}
