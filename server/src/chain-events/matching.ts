import type { ObservedTransfer } from '@wcs/core';
import type { ChainTokenView } from '../deposits/tokens';

export const SUBSCRIPTION_DIRECTIONS = ['IN', 'OUT', 'BOTH'] as const;
export type SubscriptionDirection = (typeof SUBSCRIPTION_DIRECTIONS)[number];
export type EventDirection = 'IN' | 'OUT';

/** A live subscription as the scanner matches against it. */
export interface MonitoredSubscription {
  readonly id: number;
  readonly applicationId: number;
  readonly direction: SubscriptionDirection;
  /** null: every token of the chain's catalogue. */
  readonly tokenIds: ReadonlySet<number> | null;
  /** The least amount reported, token units as a decimal string; null: any amount above zero. */
  readonly minAmount: string | null;
}

/** A custody address of the service: a user's deposit address, or an application's hot or fee wallet. */
export interface CustodyAddress {
  readonly applicationId: number;
  readonly kind: 'DEPOSIT' | 'HOT' | 'FEE';
  readonly externalUserId: string | null;
}

/** A chain event to record: one per (subscription, transfer, direction, monitored address). */
export interface EventCandidate {
  readonly subscription: MonitoredSubscription;
  readonly direction: EventDirection;
  readonly monitoredAddress: string;
  /** The other side of the transfer: whose addressNature the event reports ('' when the chain does not tell it). */
  readonly counterparty: string;
  readonly token: ChainTokenView;
  readonly transfer: ObservedTransfer;
}

/** A transfer out of a custody address, to be checked against the service's own transactions. */
export interface OutflowCandidate {
  readonly custody: CustodyAddress;
  readonly token: ChainTokenView;
  readonly transfer: ObservedTransfer;
}

/** What the matcher reads: the monitored addresses per direction, custody addresses and tokens. */
export interface MatchSources {
  inbound(address: string): readonly MonitoredSubscription[] | undefined;
  outbound(address: string): readonly MonitoredSubscription[] | undefined;
  custody(address: string): CustodyAddress | null;
  token(contract: string | null): ChainTokenView | null;
}

/**
 * The least amount in base units a subscription reports for a token: its decimal minimum at the
 * token's decimals, rounded up (a minimum finer than the token's unit still excludes the amounts
 * below it).
 */
export function minBaseUnits(minAmount: string, decimals: number): bigint {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(minAmount);
  if (!m) throw new RangeError(`minAmount "${minAmount}" is not a decimal`);
  const whole = m[1]!;
  const frac = m[2] ?? '';
  const kept = frac.slice(0, decimals).padEnd(decimals, '0');
  let units = BigInt(whole + kept);
  if (/[1-9]/.test(frac.slice(decimals))) units += 1n;
  return units;
}

/** Whether a subscription takes a transfer of this token and amount. */
export function subscriptionTakes(s: MonitoredSubscription, token: ChainTokenView, amount: bigint, minCache?: Map<string, bigint>): boolean {
  if (amount <= 0n) return false;
  if (s.tokenIds !== null && !s.tokenIds.has(token.id)) return false;
  if (s.minAmount === null) return true;
  const key = `${s.id}/${token.id}`;
  let min = minCache?.get(key);
  if (min === undefined) {
    min = minBaseUnits(s.minAmount, token.decimals);
    minCache?.set(key, min);
  }
  return amount >= min;
}

/**
 * The chain events and custody outflows in a scanned range's transfers (pure). Rules
 * (docs/chain-events.md):
 * - only transfers that succeeded on chain, of tokens in the chain's catalogue, above zero;
 * - IN for each subscription monitoring the destination (direction IN or BOTH), OUT for each
 *   monitoring the source (OUT or BOTH), each passing the subscription's token filter and
 *   minimum;
 * - UTXO chains: an output paying its own sender (change) is no event at all;
 * - an outflow for every transfer whose source is a custody address (the caller then drops the
 *   service's own transactions).
 */
export function matchTransfers(
  transfers: readonly ObservedTransfer[],
  sources: MatchSources,
  options: { readonly utxo: boolean },
  minCache = new Map<string, bigint>(),
): { events: EventCandidate[]; outflows: OutflowCandidate[] } {
  const events: EventCandidate[] = [];
  const outflows: OutflowCandidate[] = [];
  for (const x of transfers) {
    if (!x.succeeded || x.amount <= 0n) continue;
    const token = sources.token(x.contract);
    if (!token) continue;
    const from = x.fromAddress;
    const change = options.utxo && from !== null && from === x.toAddress;
    if (!change) {
      for (const s of sources.inbound(x.toAddress) ?? []) {
        if (s.direction === 'OUT' || !subscriptionTakes(s, token, x.amount, minCache)) continue;
        events.push({ subscription: s, direction: 'IN', monitoredAddress: x.toAddress, counterparty: from ?? '', token, transfer: x });
      }
    }
    // UTXO change goes back to its sender: it is neither an IN nor an OUT event (the scanner
    // reports it only when the sender is also a watched receiver)
    if (from === null || change) continue;
    for (const s of sources.outbound(from) ?? []) {
      if (s.direction === 'IN' || !subscriptionTakes(s, token, x.amount, minCache)) continue;
      events.push({ subscription: s, direction: 'OUT', monitoredAddress: from, counterparty: x.toAddress, token, transfer: x });
    }
    const custody = sources.custody(from);
    if (custody) outflows.push({ custody, token, transfer: x });
  }
  return { events, outflows };
}
