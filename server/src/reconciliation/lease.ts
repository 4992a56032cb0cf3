import type { Sequelize } from 'sequelize';
import { ChainLease } from '../deposits/scan-lease';

/**
 * The lease that lets one process at a time run a chain's reconciliation passes (a worker's
 * schedule or `wcs reconcile run`): the chain lease on reconcile_chains, taken when free or
 * expired, renewed while a pass runs, checked before a pass writes its results, given up at its end.
 */
export class ReconcileLease extends ChainLease {
  constructor(sequelize: Sequelize, chainId: number, owner: string, ttlMs: number) {
    super(sequelize, 'reconcile_chains', chainId, owner, ttlMs);
  }
}
