import pLimit from 'p-limit';
import pMap from 'p-map';

/**
 * Bounded concurrency for adapters (p-limit / p-map): never a hand-rolled worker pool.
 */

function checkLimit(limit: number): number {
  const n = Math.floor(limit);
  if (!(n >= 1)) throw new RangeError(`concurrency must be at least 1, not ${String(limit)}`);
  return n;
}

/**
 * fn over items with at most `limit` in flight; results in input order. The first failure
 * rejects and no further item is started (those in flight finish unobserved).
 */
export function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  return pMap(items, fn, { concurrency: checkLimit(limit), stopOnError: true });
}

/**
 * fn over items with at most `limit` in flight; each item's result or its Error, in input order
 * (one item's failure never hides the others': the set-based TransferNode calls' shape).
 */
export function settleLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<Array<R | Error>> {
  return pMap(items, async (item, i) => {
    try {
      return await fn(item, i);
    } catch (e) {
      return e instanceof Error ? e : new Error(String(e));
    }
  }, { concurrency: checkLimit(limit) });
}

/** A gate letting at most `limit` of the functions given to it run at once (p-limit). */
export function concurrencyLimit(limit: number): <R>(fn: () => Promise<R>) => Promise<R> {
  return pLimit(checkLimit(limit));
}

/** items cut into runs of `size`, in order (the last one may be shorter). */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const n = checkLimit(size);
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += n) out.push(items.slice(i, i + n));
  return out;
}
