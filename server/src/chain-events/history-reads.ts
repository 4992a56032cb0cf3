/**
 * Which addresses an account-history chain's scan reads, and how (docs/chain-events.md,
 * "Account-history chains"). Pure: the scan hands in what it watches.
 */

import type { MatchSources } from './matching';

/** One address's read in a history scan step. */
export interface HistoryRead {
  readonly address: string;
  /** Transfers out of the address too (monitored for OUT, or a custody address). */
  readonly outgoing: boolean;
  /**
   * Where a first read starts: false from the address's first transaction (a deposit address,
   * new with the service), true from the chain's head at the step that first sees it (an address
   * of someone else, or a wallet: never its whole history).
   */
  readonly fromHead: boolean;
}

/** What the scan watches on one chain. */
export interface WatchedAddresses {
  /** Deposit addresses (HD) or shared deposit accounts (memo chains). */
  readonly deposits: Iterable<string>;
  /** Addresses monitored for IN by a live subscription. */
  readonly inbound: Iterable<string>;
  /** Addresses monitored for OUT by a live subscription. */
  readonly outbound: Iterable<string>;
  /** Hot and fee wallets, shared deposit accounts: custody addresses read for their outflows. */
  readonly wallets: Iterable<string>;
}

/**
 * The reads of one step, deposit addresses first. A scanner that cannot read outgoing transfers
 * or start at the head (`servesEvents` false) reads the deposit addresses for deposits only, as
 * before chain events existed on these chains.
 */
export function historyReads(w: WatchedAddresses, servesEvents: boolean): HistoryRead[] {
  const reads = new Map<string, { outgoing: boolean; fromHead: boolean }>();
  for (const a of w.deposits) reads.set(a, { outgoing: servesEvents, fromHead: false });
  if (!servesEvents) return [...reads].map(([address, r]) => ({ address, ...r }));
  const add = (address: string, outgoing: boolean) => {
    const r = reads.get(address);
    if (r) r.outgoing ||= outgoing;
    else reads.set(address, { outgoing, fromHead: true });
  };
  for (const a of w.inbound) add(a, false);
  for (const a of w.outbound) add(a, true);
  for (const a of w.wallets) add(a, true);
  return [...reads].map(([address, r]) => ({ address, ...r }));
}

/**
 * The match sources of one address's read: events and outflows of that address only. A transfer
 * between two read addresses comes back from both reads; each read matches its own side (IN for
 * the receiver's read, OUT and the outflow for the sender's), so nothing is matched twice.
 */
export function sourcesOfRead(address: string, sources: MatchSources): MatchSources {
  return {
    inbound: (a) => (a === address ? sources.inbound(a) : undefined),
    outbound: (a) => (a === address ? sources.outbound(a) : undefined),
    custody: (a) => (a === address ? sources.custody(a) : null),
    token: (c) => sources.token(c),
  };
}
