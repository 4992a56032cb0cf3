import type { Sequelize } from 'sequelize';
import type { AdapterRegistry, BalanceReader, ChainAdapter, ChainDefinition, ChainEndpoint } from '@wcs/core';
import type { Logger } from '../config/logger';
import type { Catalogue, ChainView } from '../catalogue/catalogue';
import { leaseOwnerName } from '../deposits/scan-worker';
import { IntervalWorker, type Worker } from '../workers/worker';
import { ReconcileLease } from './lease';
import { ReconcilePass, type PassSummary, type ReconcileSettings } from './pass';
import { ThreadedBalanceReader } from './reader-thread';

/** Whether this process can load a package by name (a worker thread resolves it the same way). */
function resolvable(pkg: string): boolean {
  try {
    require.resolve(pkg);
    return true;
  } catch {
    return false;
  }
}

/** The chain's definition as plain data (it crosses to the reader's thread). */
function definitionOf(c: ChainDefinition): ChainDefinition {
  return {
    id: c.id, code: c.code, name: c.name, family: c.family, environment: c.environment, network: c.network, curve: c.curve, addressing: c.addressing,
    nativeSymbol: c.nativeSymbol, decimals: c.decimals, confirmations: c.confirmations, evmChainId: c.evmChainId, options: { ...c.options },
  };
}

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
    const reader = await this.readerOf(chain, adapter, endpoint);
    const lease = new ReconcileLease(this.sequelize, chain.id, this.owner, LEASE_MS);
    if (!(await lease.acquire())) return { busy: true, chainCode: chain.code };
    try {
      return await new ReconcilePass(this.sequelize, chain, adapter, endpoint, reader, lease, this.settings, this.logger).run(trigger, scope);
    } finally {
      await lease.release().catch(() => undefined);
    }
  }

  /**
   * The chain's reader, kept between passes: in a worker thread of its own when the setting says so
   * and the adapter's package can be loaded there by name, else in this thread. A thread that
   * failed (it could not load the adapter, it died) is replaced at the next pass.
   */
  private async readerOf(chain: ChainView, adapter: ChainAdapter, endpoint: ChainEndpoint): Promise<BalanceReader> {
    const known = this.readers.get(chain.id);
    if (known && !(known instanceof ThreadedBalanceReader && known.broken)) return known;
    const inline = adapter.createBalanceReader!(endpoint);
    const pkg = this.settings.reader === 'thread' ? this.registry.pluginPackage(chain) : null;
    const reader = pkg !== null && resolvable(pkg) ? new ThreadedBalanceReader({ pluginPackage: pkg, chain: definitionOf(chain), endpoint }, inline) : inline;
    // a new reader starts once per process, before its first pass: the thread loads the adapter,
    // the reader checks the node's chain and learns how far back it answers (its first head());
    // a reader that cannot start is not kept
    try {
      if (reader instanceof ThreadedBalanceReader) await reader.ready();
      await reader.head();
    } catch (e) {
      if (reader instanceof ThreadedBalanceReader) await reader.close().catch(() => undefined);
      throw e;
    }
    this.readers.set(chain.id, reader);
    return reader;
  }

  /** Ends the readers' threads (a process's shutdown). */
  async close(): Promise<void> {
    const readers = [...this.readers.values()];
    this.readers.clear();
    await Promise.all(readers.map((r) => (r instanceof ThreadedBalanceReader ? r.close() : undefined)));
  }

  /** The scheduled passes (INCREMENTAL) of every chain, every intervalSeconds; none when it is 0. */
  workers(): Worker[] {
    if (this.settings.intervalSeconds === 0) return [];
    const schedule = new IntervalWorker('reconciliation', this.settings.intervalSeconds * 1000, async () => {
      for (const chain of this.chains()) {
        try {
          const r = await this.run(chain, 'SCHEDULE', 'INCREMENTAL');
          if ('busy' in r) this.logger.debug('reconciliation pass skipped: another process runs one', { chain: chain.code });
        } catch (e) {
          this.logger.error('reconciliation pass failed', { chain: chain.code, error: e });
        }
      }
    }, this.logger);
    // stopping the schedule ends the readers' threads too
    return [{ name: schedule.name, start: () => schedule.start(), stop: async () => { await schedule.stop(); await this.close(); } }];
  }
}
