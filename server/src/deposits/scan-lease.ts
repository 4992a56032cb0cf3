import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

export interface CursorRow {
  height: string | null;
  hash: string | null;
  lease_owner: string | null;
  halted: string | null;
}

/** The tables that hold a per-chain lease (an owner and an expiry per chain row). */
export type LeaseTable = 'scan_cursors' | 'reconcile_chains';

/**
 * A lease that lets one process at a time work on a chain: a row per chain in `table` with an
 * owner and an expiry, taken when free or expired, renewed while working, given up at the end.
 */
export class ChainLease {
  constructor(
    protected readonly sequelize: Sequelize,
    private readonly table: LeaseTable,
    readonly chainId: number,
    readonly owner: string,
    private readonly ttlMs: number,
  ) {}

  /** Takes or renews the lease; false when another live process holds it. */
  async acquire(): Promise<boolean> {
    await this.sequelize.query(`INSERT INTO ${this.table} (chain_id) VALUES ($1) ON CONFLICT DO NOTHING`, { bind: [this.chainId] });
    const rows = await this.sequelize.query<{ chain_id: number }>(
      `UPDATE ${this.table} SET lease_owner = $2, lease_until = now() + ($3 || ' milliseconds')::interval
        WHERE chain_id = $1 AND (lease_owner IS NULL OR lease_owner = $2 OR lease_until < now())
        RETURNING chain_id`,
      { bind: [this.chainId, this.owner, String(this.ttlMs)], type: QueryTypes.SELECT },
    );
    return rows.length === 1;
  }

  /** Whether this process still holds it. */
  async held(): Promise<boolean> {
    const rows = await this.sequelize.query<{ ok: boolean }>(
      `SELECT (lease_owner = $2 AND lease_until > now()) AS ok FROM ${this.table} WHERE chain_id = $1`,
      { bind: [this.chainId, this.owner], type: QueryTypes.SELECT },
    );
    return rows[0]?.ok === true;
  }

  /** Gives the lease up (shutdown, end of a pass): another process may take over at once. */
  async release(): Promise<void> {
    await this.sequelize.query(`UPDATE ${this.table} SET lease_owner = NULL, lease_until = NULL WHERE chain_id = $1 AND lease_owner = $2`, {
      bind: [this.chainId, this.owner],
    });
  }
}

/**
 * The lease that lets exactly one worker process scan a chain (scan_cursors). Every write of a
 * step re-checks it under the row lock (fencing), so a process that lost its lease (paused past
 * the expiry) cannot write over the new owner's work.
 */
export class ScanLease extends ChainLease {
  constructor(sequelize: Sequelize, chainId: number, owner: string, ttlMs: number) {
    super(sequelize, 'scan_cursors', chainId, owner, ttlMs);
  }

  /** Locks the cursor row in t and returns it; throws LeaseLost when this process no longer holds the lease. */
  async lock(t: Transaction): Promise<CursorRow> {
    const rows = await this.sequelize.query<CursorRow & { live: boolean }>(
      `SELECT height::text AS height, hash, lease_owner, halted, (lease_until > now()) AS live
         FROM scan_cursors WHERE chain_id = $1 FOR UPDATE`,
      { bind: [this.chainId], type: QueryTypes.SELECT, transaction: t },
    );
    const row = rows[0];
    if (!row || row.lease_owner !== this.owner || !row.live) throw new LeaseLost(this.chainId);
    return row;
  }

  async read(): Promise<CursorRow> {
    const rows = await this.sequelize.query<CursorRow>('SELECT height::text AS height, hash, lease_owner, halted FROM scan_cursors WHERE chain_id = $1', {
      bind: [this.chainId], type: QueryTypes.SELECT,
    });
    return rows[0] ?? { height: null, hash: null, lease_owner: null, halted: null };
  }
}

export class LeaseLost extends Error {
  constructor(chainId: number) {
    super(`the scan lease of chain ${chainId} was lost (another worker holds it now)`);
    this.name = 'LeaseLost';
  }
}

/** Records an operator alert (and the caller logs it): never a silent change. */
export async function raiseAlert(sequelize: Sequelize, t: Transaction | null, chainId: number | null, kind: string, message: string, details: Record<string, unknown>): Promise<void> {
  await sequelize.query('INSERT INTO operator_alerts (chain_id, kind, message, details) VALUES ($1, $2, $3, $4::jsonb)', {
    bind: [chainId, kind, message, JSON.stringify(details)],
    ...(t ? { transaction: t } : {}),
  });
}
