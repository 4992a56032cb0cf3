import type { Database } from '../db/database';

/**
 * Most indices a process holds in reserve per (application, namespace) beyond those already
 * asked for. Indices reserved but unused when the process stops are never handed out: a gap.
 * Kept below BIP-44's account gap limit of 20, so a wallet recovering the keys from the seed
 * alone by gap-limit scanning still finds every used key.
 */
export const MAX_SPARE_INDICES = 16;

interface Pool {
  /** Reserved, not yet handed out: [start, end) blocks in counter order. */
  ranges: Array<[number, number]>;
  available: number;
  waiters: Array<{ resolve: (index: number) => void; reject: (e: unknown) => void }>;
  refilling: boolean;
  /** Indices handed out since the last refill began: the size of the next prefetch. */
  demand: number;
}

function take(p: Pool): number | null {
  while (p.ranges.length > 0) {
    const r = p.ranges[0]!;
    if (r[0] < r[1]) {
      p.available--;
      return r[0]++;
    }
    p.ranges.shift();
  }
  return null;
}

/**
 * Hands out HD derivation indices per (application, key namespace) from the key_counters
 * row, never twice, across processes too: each refill is one short autocommit UPDATE that
 * moves the counter by the block it takes (no lock is held beyond that statement). Under
 * load the next block is fetched before the current one runs out, so a create rarely waits
 * for the counter; idle, a block is exactly the indices asked for. An index whose create
 * later fails, or that loses a cross-process race for the same user, is not reused either.
 */
export class KeyIndexReserve {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly database: Database) {}

  next(applicationId: number, namespace: string): Promise<number> {
    const key = `${applicationId}\n${namespace}`;
    let p = this.pools.get(key);
    if (!p) {
      p = { ranges: [], available: 0, waiters: [], refilling: false, demand: 0 };
      this.pools.set(key, p);
    }
    const pool = p;
    if (pool.waiters.length === 0) {
      const index = take(pool);
      if (index !== null) {
        pool.demand++;
        if (!pool.refilling && pool.available <= pool.demand / 2) this.refill(applicationId, namespace, pool);
        return Promise.resolve(index);
      }
    }
    return new Promise<number>((resolve, reject) => {
      pool.waiters.push({ resolve, reject });
      if (!pool.refilling) this.refill(applicationId, namespace, pool);
    });
  }

  private refill(applicationId: number, namespace: string, pool: Pool): void {
    pool.refilling = true;
    const count = pool.waiters.length + Math.min(pool.demand, MAX_SPARE_INDICES);
    pool.demand = 0;
    this.database
      .raw<{ next_index: string }>(
        `INSERT INTO key_counters (application_id, namespace, purpose, next_index) VALUES ($1, $2, 'deposit', $3)
         ON CONFLICT (application_id, namespace, purpose) DO UPDATE SET next_index = key_counters.next_index + EXCLUDED.next_index
         RETURNING next_index`,
        [applicationId, namespace, count],
        'wcs_key_counter_take',
      )
      .then(
        ([row]) => {
          const end = Number(row!.next_index);
          pool.ranges.push([end - count, end]);
          pool.available += count;
          while (pool.waiters.length > 0) {
            const index = take(pool);
            if (index === null) break;
            pool.demand++;
            pool.waiters.shift()!.resolve(index);
          }
        },
        (e: unknown) => {
          for (const w of pool.waiters.splice(0)) w.reject(e);
        },
      )
      .finally(() => {
        pool.refilling = false;
        if (pool.waiters.length > 0) this.refill(applicationId, namespace, pool);
      });
  }
}
