import type { Sequelize } from 'sequelize';
import type { BucketPolicy } from './token-bucket';

/** What the shared bucket gave: `granted` whole tokens (0 when it held less than one), and the level it was left at. */
export interface Grant {
  readonly granted: number;
  readonly left: number;
}

/** The bucket every API process takes from (one row per bucket). */
export interface SharedBucketStore {
  /** Refills the bucket to now, then takes up to `want` whole tokens from it, atomically. */
  take(bucket: string, want: number, policy: BucketPolicy): Promise<Grant>;
}

/**
 * Buckets in Postgres (`api_rate_buckets`): one upsert per lease, atomic under the row lock, so
 * processes on one database never take more than the bucket holds. The refill clock only moves
 * forward (GREATEST), so a statement that waited for the lock never counts time twice.
 */
export class PgBucketStore implements SharedBucketStore {
  constructor(private readonly sequelize: Sequelize) {}

  async take(bucket: string, want: number, policy: BucketPolicy): Promise<Grant> {
    const [rows] = await this.sequelize.query(
      `WITH p AS (SELECT :want::float8 AS want, :rps::float8 AS rps, :burst::float8 AS burst)
       INSERT INTO api_rate_buckets AS b (bucket, tokens, refilled_at, last_grant)
       SELECT :bucket, p.burst - LEAST(p.want, floor(p.burst)), now(), LEAST(p.want, floor(p.burst)) FROM p
       ON CONFLICT (bucket) DO UPDATE SET
         last_grant = LEAST((SELECT want FROM p), floor(LEAST((SELECT burst FROM p),
           b.tokens + GREATEST(0, EXTRACT(EPOCH FROM now() - b.refilled_at)) * (SELECT rps FROM p)))),
         tokens = LEAST((SELECT burst FROM p), b.tokens + GREATEST(0, EXTRACT(EPOCH FROM now() - b.refilled_at)) * (SELECT rps FROM p))
           - LEAST((SELECT want FROM p), floor(LEAST((SELECT burst FROM p),
               b.tokens + GREATEST(0, EXTRACT(EPOCH FROM now() - b.refilled_at)) * (SELECT rps FROM p)))),
         refilled_at = GREATEST(b.refilled_at, now())
       RETURNING last_grant, tokens`,
      { replacements: { bucket, want, rps: policy.ratePerSecond, burst: policy.burst } },
    );
    const row = (rows as Array<{ last_grant: number | string; tokens: number | string }>)[0]!;
    return { granted: Number(row.last_grant), left: Number(row.tokens) };
  }
}
