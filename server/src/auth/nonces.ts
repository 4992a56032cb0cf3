import type { Sequelize } from 'sequelize';

/** How long a used nonce is remembered, from the later of its timestamp and now. */
export const NONCE_WINDOW_MS = 10 * 60 * 1000;

interface Pending {
  apiKey: string;
  nonce: string;
  expiresAt: Date;
  resolve: (fresh: boolean) => void;
  reject: (e: unknown) => void;
}

/**
 * Durable replay protection: (apiKey, nonce) is a primary key in Postgres, so it holds
 * across restarts and across processes. Claims arriving in the same tick are written in
 * one multi-row INSERT (group commit); an expired row may be claimed again.
 */
export class NonceStore {
  private queue: Pending[] = [];
  private scheduled = false;

  constructor(private readonly sequelize: Sequelize) {}

  /** Resolves true when the pair is fresh (now recorded), false when it was already used. */
  claim(apiKey: string, nonce: string, timestampMs: number): Promise<boolean> {
    const expiresAt = new Date(Math.max(Date.now(), timestampMs) + NONCE_WINDOW_MS);
    return new Promise((resolve, reject) => {
      this.queue.push({ apiKey, nonce, expiresAt, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const batch = this.queue.splice(0, 1000);
    if (this.queue.length > 0) {
      this.scheduled = true;
      setImmediate(() => void this.flush());
    }
    const unique: Pending[] = [];
    const seen = new Set<string>();
    for (const p of batch) {
      const k = p.apiKey + '\n' + p.nonce;
      if (seen.has(k)) p.resolve(false);
      else {
        seen.add(k);
        unique.push(p);
      }
    }
    if (unique.length === 0) return;
    try {
      const [rows] = await this.sequelize.query(
        `INSERT INTO api_nonces (api_key, nonce, expires_at)
         SELECT * FROM unnest($1::varchar[], $2::varchar[], $3::timestamptz[])
         ON CONFLICT (api_key, nonce) DO UPDATE SET expires_at = EXCLUDED.expires_at
           WHERE api_nonces.expires_at < now()
         RETURNING api_key, nonce`,
        { bind: [unique.map((p) => p.apiKey), unique.map((p) => p.nonce), unique.map((p) => p.expiresAt.toISOString())] },
      );
      const fresh = new Set((rows as Array<{ api_key: string; nonce: string }>).map((r) => r.api_key + '\n' + r.nonce));
      for (const p of unique) p.resolve(fresh.has(p.apiKey + '\n' + p.nonce));
    } catch (e) {
      for (const p of unique) p.reject(e);
    }
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
