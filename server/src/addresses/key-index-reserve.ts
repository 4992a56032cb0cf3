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
  /** A block taken from the counter whose key-store mark could not be raised: covered and used by the next refill. */
  uncovered: [number, number] | null;
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
 * The key store's side of the allocation (KeyIndexMarkGuard): a floor the counter is moved to
 * first, and a durable mark over a block before any of its indices is handed out.
 */
export interface ReserveMarks {
  /** The least index the counter may stand at (the key store's mark as read at start). */
  floor(applicationId: number, namespace: string): Promise<number>;
  /** Resolves once the key store's mark covers every index below `end`. */
  cover(applicationId: number, namespace: string, end: number, transaction?: import('sequelize').Transaction): Promise<void>;
}

/**
 * Hands out HD derivation indices per (application, key namespace) from the key_counters
 * row, never twice, across processes too: each refill is one short autocommit UPDATE that
 * moves the counter by the block it takes (no lock is held beyond that statement). Under
 * load the next block is fetched before the current one runs out, so a create rarely waits
 * for the counter; idle, a block is exactly the indices asked for. An index whose create
 * later fails, or that loses a cross-process race for the same user, is not reused either.
 * With `marks`, the counter never stands below the key store's mark as read at start, and a
 * block's indices are handed out only once the key store's mark covers them (durably), so a
 * database restore cannot hand them out again.
 */
export class KeyIndexReserve {
  private readonly pools = new Map<string, Pool>();

  constructor(
    private readonly database: Database,
    private readonly marks: ReserveMarks | null = null,
  ) {}

  next(applicationId: number, namespace: string): Promise<number> {
    const key = `${applicationId}\n${namespace}`;
    let p = this.pools.get(key);
    if (!p) {
      p = { ranges: [], available: 0, waiters: [], refilling: false, demand: 0, uncovered: null };
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
    const marks = this.marks;
    (async (): Promise<[number, number]> => {
      let block = pool.uncovered;
      if (!block) {
        const count = pool.waiters.length + Math.min(pool.demand, MAX_SPARE_INDICES);
        pool.demand = 0;
        const floor = marks ? await marks.floor(applicationId, namespace) : 0;
        const [row] = await this.database.raw<{ next_index: string }>(
          `INSERT INTO key_counters (application_id, namespace, purpose, next_index) VALUES ($1, $2, 'deposit', $4::bigint + $3)
           ON CONFLICT (application_id, namespace, purpose) DO UPDATE SET next_index = GREATEST(key_counters.next_index, $4::bigint) + $3
           RETURNING next_index`,
          [applicationId, namespace, count, floor],
          'wcs_key_counter_take',
        );
        const end = Number(row!.next_index);
        block = [end - count, end];
      }
      // the key store's mark first: no index of the block is handed out before it is covered; a
      // block whose mark could not be raised (key store failing) is kept for the next refill, so
      // an outage does not use up indices
      pool.uncovered = block;
      if (marks) await marks.cover(applicationId, namespace, block[1]);
      pool.uncovered = null;
      return block;
    })()
      .then(
        ([start, end]) => {
          pool.ranges.push([start, end]);
          pool.available += end - start;
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
