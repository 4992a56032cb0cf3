import { QueryTypes, type Sequelize } from 'sequelize';

/**
 * The lease that lets one process at a time run a chain's reconciliation passes (a worker's
 * schedule or `wcs reconcile run`): a row per chain in reconcile_chains with an owner and an
 * expiry, taken when free or expired, renewed while a pass runs, given up at its end.
 */
export class ReconcileLease {
  constructor(
    private readonly sequelize: Sequelize,
    readonly chainId: number,
    readonly owner: string,
    private readonly ttlMs: number,
  ) {}

  /** Takes or renews the lease; false when another live process holds it. */
  async acquire(): Promise<boolean> {
    await this.sequelize.query('INSERT INTO reconcile_chains (chain_id) VALUES ($1) ON CONFLICT DO NOTHING', { bind: [this.chainId] });
    const rows = await this.sequelize.query<{ chain_id: number }>(
      `UPDATE reconcile_chains SET lease_owner = $2, lease_until = now() + ($3 || ' milliseconds')::interval
        WHERE chain_id = $1 AND (lease_owner IS NULL OR lease_owner = $2 OR lease_until < now())
        RETURNING chain_id`,
      { bind: [this.chainId, this.owner, String(this.ttlMs)], type: QueryTypes.SELECT },
    );
    return rows.length === 1;
  }

  /** Whether this process still holds it (checked before a pass writes its results). */
  async held(): Promise<boolean> {
    const rows = await this.sequelize.query<{ ok: boolean }>(
      'SELECT (lease_owner = $2 AND lease_until > now()) AS ok FROM reconcile_chains WHERE chain_id = $1',
      { bind: [this.chainId, this.owner], type: QueryTypes.SELECT },
    );
    return rows[0]?.ok === true;
  }

  async release(): Promise<void> {
    await this.sequelize.query('UPDATE reconcile_chains SET lease_owner = NULL, lease_until = NULL WHERE chain_id = $1 AND lease_owner = $2', {
      bind: [this.chainId, this.owner],
    });
  }
}
