import type { AccountCode } from '@wcs/core';

/**
 * Delegated sweeps' decisions as pure functions (docs/collection.md, "Delegated sweeps"), tested
 * beside this file; collection/delegated.ts is thin orchestration around them.
 */

/** What bounds a batch (docs/collection.md, "Delegated sweeps"): WCS_COLLECT_BATCH_MAX_ENTRIES and WCS_COLLECT_BATCH_MAX_GAS. */
export interface BatchLimits {
  readonly maxEntries: number;
  readonly maxGas: bigint;
}

/** 100 entries (peers' batch forwarders flush 50–200) and 8 M gas, well inside a 30 M block. */
export const DEFAULT_BATCH_LIMITS: BatchLimits = Object.freeze({ maxEntries: 100, maxGas: 8_000_000n });

/**
 * What a deposit address's code says about its next delegated sweep:
 * - READY: delegated to the forwarder of its current collector: swept without an authorization;
 * - AUTHORIZE: no code, or delegated to another of the service's forwarders (its collector
 *   changed): the sweep carries a new authorization to the current forwarder;
 * - FOREIGN: delegated to code that is not the service's, or holding contract code: its sweeps stop.
 */
export type DelegationVerdict =
  | { readonly kind: 'READY' }
  | { readonly kind: 'AUTHORIZE' }
  | { readonly kind: 'FOREIGN'; readonly found: 'DELEGATED' | 'CONTRACT'; readonly delegate: string | null };

export function delegationVerdict(code: AccountCode, forwarder: string, ourForwarders: ReadonlySet<string>): DelegationVerdict {
  switch (code.kind) {
    case 'EMPTY':
      return { kind: 'AUTHORIZE' };
    case 'CONTRACT':
      return { kind: 'FOREIGN', found: 'CONTRACT', delegate: null };
    case 'DELEGATED': {
      const d = code.delegate.toLowerCase();
      if (d === forwarder.toLowerCase()) return { kind: 'READY' };
      if (ourForwarders.has(d)) return { kind: 'AUTHORIZE' };
      return { kind: 'FOREIGN', found: 'DELEGATED', delegate: code.delegate };
    }
  }
}

/** One entry to sweep: an item (address, token), whether its address needs an authorization, and the most gas it may use. */
export interface BatchEntry<T> {
  readonly item: T;
  readonly address: string;
  readonly authorize: boolean;
  readonly gas: bigint;
}

/**
 * Batches of at most `maxEntries` entries and `maxGas` gas (the batch's base gas included); an
 * address's entries stay in one batch, so its authorization is carried once, in the batch that
 * sweeps it, before any call to it. Addresses in the order first seen; an address whose entries
 * alone exceed a bound goes alone in its own batch (a bound never leaves an address unswept).
 */
export function packBatches<T>(entries: ReadonlyArray<BatchEntry<T>>, bounds: { readonly maxEntries: number; readonly maxGas: bigint; readonly baseGas: bigint }): Array<Array<BatchEntry<T>>> {
  const byAddress = new Map<string, Array<BatchEntry<T>>>();
  for (const e of entries) {
    const k = e.address.toLowerCase();
    const list = byAddress.get(k);
    if (list) list.push(e);
    else byAddress.set(k, [e]);
  }
  const batches: Array<Array<BatchEntry<T>>> = [];
  let current: Array<BatchEntry<T>> = [];
  let gas = bounds.baseGas;
  for (const group of byAddress.values()) {
    const groupGas = group.reduce((s, e) => s + e.gas, 0n);
    if (current.length > 0 && (current.length + group.length > bounds.maxEntries || gas + groupGas > bounds.maxGas)) {
      batches.push(current);
      current = [];
      gas = bounds.baseGas;
    }
    current.push(...group);
    gas += groupGas;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/** A batch's fee shared by its n items: equal parts, the remainder (less than n) to the last. */
export function feeShares(fee: bigint, n: number): bigint[] {
  if (n <= 0) return [];
  const part = fee / BigInt(n);
  const shares = new Array<bigint>(n).fill(part);
  shares[n - 1] = fee - part * BigInt(n - 1);
  return shares;
}

/**
 * The price of one delegated sweep for the cost guard: its entry's gas (with the authorization:
 * the planner does not read code, so it prices the first sweep of an address, the dearer one)
 * plus its part of the batch's base gas when batches are full, at the current fee per gas.
 */
export function delegatedSweepFee(p: { readonly entryGas: bigint; readonly baseGas: bigint; readonly maxEntries: number; readonly pricePerGas: bigint }): bigint {
  const base = (p.baseGas + BigInt(p.maxEntries) - 1n) / BigInt(p.maxEntries);
  return (p.entryGas + base) * p.pricePerGas;
}
