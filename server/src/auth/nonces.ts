import type { Sequelize } from 'sequelize';
import { Batcher } from '../db/batcher';

/** How long a used nonce is remembered, from the later of its timestamp and now. */
export const NONCE_WINDOW_MS = 10 * 60 * 1000;

interface Claim {
  apiKey: string;
  nonce: string;
  expiresAt: Date;
}

/**
 * Durable replay protection: (apiKey, nonce) is a primary key in Postgres, so it holds
 * across restarts and across processes. Claims arriving in the same tick are written in
 * one multi-row INSERT (group commit); an expired row may be claimed again.
 */
export class NonceStore {
  private readonly batcher = new Batcher<Claim, boolean>((claims) => this.write(claims), { maxBatch: 1000, maxInFlight: Infinity });

  constructor(private readonly sequelize: Sequelize) {}

  /** Resolves true when the pair is fresh (now recorded), false when it was already used. */
  claim(apiKey: string, nonce: string, timestampMs: number): Promise<boolean> {
    const expiresAt = new Date(Math.max(Date.now(), timestampMs) + NONCE_WINDOW_MS);
    return this.batcher.submit({ apiKey, nonce, expiresAt });
  }

  private async write(claims: Claim[]): Promise<boolean[]> {
    // a pair twice in one batch: the first claim may win, the second has lost already
    const first = new Set<string>();
    const unique: Claim[] = [];
    const isFirst = claims.map((c) => {
      const k = c.apiKey + '\n' + c.nonce;
      if (first.has(k)) return false;
      first.add(k);
      unique.push(c);
      return true;
    });
    const [rows] = await this.sequelize.query(
      `INSERT INTO api_nonces (api_key, nonce, expires_at)
       SELECT * FROM unnest($1::varchar[], $2::varchar[], $3::timestamptz[])
       ON CONFLICT (api_key, nonce) DO UPDATE SET expires_at = EXCLUDED.expires_at
         WHERE api_nonces.expires_at < now()
       RETURNING api_key, nonce`,
      { bind: [unique.map((p) => p.apiKey), unique.map((p) => p.nonce), unique.map((p) => p.expiresAt.toISOString())] },
    );
    const fresh = new Set((rows as Array<{ api_key: string; nonce: string }>).map((r) => r.api_key + '\n' + r.nonce));
    return claims.map((c, i) => isFirst[i]! && fresh.has(c.apiKey + '\n' + c.nonce));
  }

  /** Deletes expired rows in bounded chunks; returns how many were removed. */
  async sweep(chunk = 10000): Promise<number> {
    let total = 0;
    for (;;) {
      const [, meta] = await this.sequelize.query(
        `DELETE FROM api_nonces WHERE ctid IN (SELECT ctid FROM api_nonces WHERE expires_at < now() LIMIT :chunk)`,
        { replacements: { chunk } },
      );
      const n = (meta as { rowCount?: number }).rowCount ?? 0;
      total += n;
      if (n < chunk) return total;
    }
  }
}
