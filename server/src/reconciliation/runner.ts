import type { Sequelize } from 'sequelize';
import type { AdapterRegistry, BalanceReader, ChainEndpoint } from '@wcs/core';
import type { Logger } from '../config/logger';
import type { Catalogue, ChainView } from '../catalogue/catalogue';
import { leaseOwnerName } from '../deposits/scan-worker';
import { IntervalWorker, type Worker } from '../workers/worker';
import { ReconcileLease } from './lease';
import { ReconcilePass, type PassSummary, type ReconcileSettings } from './pass';

/** A pass could not start: another process holds the chain's lease. */
export interface PassBusy {
  readonly busy: true;
  readonly chainCode: string;
}

/** How long a pass may hold a chain's lease before another process may take it over. */
const LEASE_MS = 15 * 60_000;

/**
 * Runs reconciliation passes (the worker's schedule, `wcs reconcile run`): one reader per chain,
 * one pass per chain at a time across processes (ReconcileLease).
 */
export class Reconciler {
  private readonly readers = new Map<number, BalanceReader>();
  private readonly owner = leaseOwnerName();

  constructor(
    private readonly sequelize: Sequelize,
    private readonly catalogue: Catalogue,
    private readonly registry: AdapterRegistry,
    private readonly endpoints: ReadonlyMap<string, ChainEndpoint>,
    private readonly settings: ReconcileSettings,
    private readonly logger: Logger,
  ) {}

  /** Chains that can be reconciled here: an RPC endpoint and an adapter with a balance reader. */
  chains(): ChainView[] {
    return (['test', 'live'] as const).flatMap((env) => this.catalogue.chains(env)).filter((c) => this.endpointOf(c) !== undefined && this.registry.forChain(c).createBalanceReader !== undefined);
  }

  /** Chains of the catalogue that cannot be reconciled here, and why (wcs reconcile status). */
  unavailable(): Array<{ chain: ChainView; reason: 'NO_RPC' | 'NO_BALANCE_READER' }> {
    return (['test', 'live'] as const).flatMap((env) => this.catalogue.chains(env)).flatMap((c): Array<{ chain: ChainView; reason: 'NO_RPC' | 'NO_BALANCE_READER' }> => {
      if (this.endpointOf(c) === undefined) return [{ chain: c, reason: 'NO_RPC' as const }];
      if (this.registry.forChain(c).createBalanceReader === undefined) return [{ chain: c, reason: 'NO_BALANCE_READER' as const }];
      return [];
    });
  }

  private endpointOf(c: ChainView): ChainEndpoint | undefined {
    return this.endpoints.get(`${c.environment}:${c.code}`);
  }

  /** One pass of a chain now, or PassBusy when another process is running one. */
  async run(chain: ChainView, trigger: 'SCHEDULE' | 'MANUAL', scope: 'FULL' | 'INCREMENTAL'): Promise<PassSummary | PassBusy> {
    const endpoint = this.endpointOf(chain);
    const adapter = this.registry.forChain(chain);
    if (!endpoint || !adapter.createBalanceReader) throw new Error(`${chain.code}: no RPC endpoint or no balance reader: it cannot be reconciled here`);
    let reader = this.readers.get(chain.id);
    if (!reader) this.readers.set(chain.id, (reader = adapter.createBalanceReader(endpoint)));
    const lease = new ReconcileLease(this.sequelize, chain.id, this.owner, LEASE_MS);
    if (!(await lease.acquire())) return { busy: true, chainCode: chain.code };
    try {
      return await new ReconcilePass(this.sequelize, chain, adapter, endpoint, reader, lease, this.settings, this.logger).run(trigger, scope);
    } finally {
      await lease.release().catch(() => undefined);
    }
  }

  /** The scheduled passes (INCREMENTAL) of every chain, every intervalSeconds; none when it is 0. */
  workers(): Worker[] {
    if (this.settings.intervalSeconds === 0) return [];
    return [new IntervalWorker('reconciliation', this.settings.intervalSeconds * 1000, async () => {
      for (const chain of this.chains()) {
        try {
          const r = await this.run(chain, 'SCHEDULE', 'INCREMENTAL');
          if ('busy' in r) this.logger.debug('reconciliation pass skipped: another process runs one', { chain: chain.code });
        } catch (e) {
          this.logger.error('reconciliation pass failed', { chain: chain.code, error: e });
        }
      }
    }, this.logger)];
  }
}
