import type { BalanceQuery, BalanceReader } from '@wcs/core';
import { narrow, nextProbe, type Bisection } from './plan';

/**
 * Locates the block of unexplained changes (docs/reconciliation.md, "Locating"): binary searches
 * on historical balances, all of a pass's searches in lockstep, so each step is one balancesAt per
 * distinct height probed and one ledger query for all of them.
 */

export interface LocateItem {
  readonly key: string;
  readonly query: BalanceQuery;
  readonly tokenId: number;
  /** The lowest height searched (the last agreement, or as far back as the node answers). */
  readonly floor: bigint;
  /** The read point, where the difference is `differenceAtTop`. */
  readonly top: bigint;
  readonly differenceAtTop: bigint;
}

/** The ledger at (address, token, height) for many at once, in order. */
export type LedgerOf = (rows: ReadonlyArray<{ readonly address: string; readonly tokenId: number; readonly height: bigint }>) => Promise<bigint[]>;

/**
 * The located height per item (null: not located: the difference was already there at the floor,
 * or the node could not answer a height searched). Reads: one at the floor, then log2(top - floor).
 */
export async function locateChanges(reader: BalanceReader, ledgerOf: LedgerOf, items: readonly LocateItem[]): Promise<Map<string, bigint | null>> {
  const out = new Map<string, bigint | null>();
  if (items.length === 0) return out;
  const floors = await differencesAt(reader, ledgerOf, items.map((i) => ({ item: i, height: i.floor })));
  const searches = new Map<string, { item: LocateItem; b: Bisection }>();
  for (const i of items) {
    const base = floors.get(i.key);
    if (base === undefined || base === null || base === i.differenceAtTop) out.set(i.key, null);
    else searches.set(i.key, { item: i, b: { low: i.floor, high: i.top, baseline: base } });
  }
  for (;;) {
    const probes = [...searches.values()].flatMap((s) => {
      const p = nextProbe(s.b);
      return p === null ? [] : [{ item: s.item, height: p }];
    });
    if (probes.length === 0) break;
    const diffs = await differencesAt(reader, ledgerOf, probes);
    for (const p of probes) {
      const d = diffs.get(p.item.key);
      const s = searches.get(p.item.key)!;
      if (d === undefined || d === null) {
        searches.delete(p.item.key);
        out.set(p.item.key, null);
      } else s.b = narrow(s.b, p.height, d);
    }
  }
  for (const [k, s] of searches) out.set(k, s.b.high);
  return out;
}

/** chain - ledger of each item at its height; null for the items of a height the node did not answer. */
async function differencesAt(reader: BalanceReader, ledgerOf: LedgerOf, probes: ReadonlyArray<{ item: LocateItem; height: bigint }>): Promise<Map<string, bigint | null>> {
  const byHeight = new Map<bigint, Array<{ item: LocateItem; height: bigint }>>();
  for (const p of probes) {
    const g = byHeight.get(p.height);
    if (g) g.push(p);
    else byHeight.set(p.height, [p]);
  }
  const chain = new Map<string, bigint | null>();
  await Promise.all([...byHeight.entries()].map(async ([height, group]) => {
    try {
      const r = await reader.balancesAt(group.map((p) => p.item.query), { height, blockHash: null });
      group.forEach((p, i) => {
        const a = r.answers[i]!;
        chain.set(p.item.key, a.kind === 'AMOUNT' ? a.amount : 0n);
      });
    } catch {
      for (const p of group) chain.set(p.item.key, null);
    }
  }));
  const ledgers = await ledgerOf(probes.map((p) => ({ address: p.item.query.address, tokenId: p.item.tokenId, height: p.height })));
  const out = new Map<string, bigint | null>();
  probes.forEach((p, i) => {
    const c = chain.get(p.item.key);
    out.set(p.item.key, c === null || c === undefined ? null : c - ledgers[i]!);
  });
  return out;
}
