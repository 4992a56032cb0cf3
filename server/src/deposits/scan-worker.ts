import * as os from 'node:os';
import { randomBytes } from 'node:crypto';
import { scanning } from '@wcs/core';
import type { AdapterRegistry, ChainDefinition, ChainEndpoint } from '@wcs/core';
import type { Database } from '../db/database';
import type { Logger } from '../config/logger';
import type { DepositConfig } from '../config/config';
import type { Catalogue } from '../catalogue/catalogue';
import type { Worker } from '../workers/worker';
import { BlockChainScan, type StepResult } from './block-scan';
import { HistoryChainScan } from './history-scan';
import { LeaseLost, ScanLease } from './scan-lease';
import { ChainTokens } from './tokens';
import { WatchList } from './watch-list';
import { ChainMonitor } from '../chain-events/monitor';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../db/unavailable';

export type ScanStatus = 'ENABLED' | 'NO_RPC' | 'NOT_SUPPORTED';

/** Whether a chain's deposits are detected here: an RPC endpoint is configured and its adapter can scan. */
export function scanStatus(config: DepositConfig, registry: AdapterRegistry, chain: ChainDefinition): ScanStatus {
  if (!config.endpoints.has(`${chain.environment}:${chain.code}`)) return 'NO_RPC';
  return registry.forChain(chain).createScanner ? 'ENABLED' : 'NOT_SUPPORTED';
}

/** A unique name for this process's leases. */
export function leaseOwnerName(): string {
  return `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

interface ChainLoop {
  readonly chain: ChainDefinition;
  readonly lease: ScanLease;
  step(): Promise<StepResult>;
}

/**
 * Runs the deposit scanners of every chain with an RPC endpoint. Each chain is scanned by one
 * worker process at a time (a lease row); the others stand by and take over when the lease
 * expires. A chain steps again at once while it is behind the tip (catch-up), else every pollMs.
 */
export class ScanWorker implements Worker {
  readonly name = 'deposit-scanner';
  private readonly owner = leaseOwnerName();
  private running = false;
  private loops: Array<Promise<void>> = [];
  private wake: Array<() => void> = [];

  constructor(
    private readonly db: Database,
    private readonly catalogue: Catalogue,
    private readonly registry: AdapterRegistry,
    private readonly config: DepositConfig,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    this.running = true;
    const reset = this.config.resetScanState ?? [];
    if (reset.length > 0) {
      // dev mode: these chains are new devnets; what was scanned before belongs to a chain that is gone
      await this.db.sequelize.transaction(async (t) => {
        for (const table of ['scan_blocks', 'scan_history_cursors', 'scan_cursors']) {
          await this.db.sequelize.query(`DELETE FROM ${table} WHERE chain_id = ANY($1::int[])`, { bind: [reset], transaction: t });
        }
      });
    }
    for (const env of ['test', 'live'] as const) {
      for (const chain of this.catalogue.chains(env)) {
        const endpoint = this.config.endpoints.get(`${env}:${chain.code}`);
        if (!endpoint) continue;
        const adapter = this.registry.forChain(chain);
        if (!adapter.createScanner) {
          this.logger.warn('no deposit scanner in this chain adapter', { chain: chain.code, environment: env });
          continue;
        }
        const loop = await this.build(chain, endpoint);
        this.loops.push(this.run(loop));
      }
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    for (const w of this.wake.splice(0)) w();
    await Promise.all(this.loops);
    this.loops = [];
  }

  private async build(chain: ChainDefinition, endpoint: ChainEndpoint): Promise<ChainLoop> {
    const sequelize = this.db.sequelize;
    const scanner = scanning(this.registry.forChain(chain)).createScanner(endpoint);
    const lease = new ScanLease(sequelize, chain.id, this.owner, this.config.leaseMs);
    const watch = new WatchList(sequelize, chain.id, chain.addressing === 'memo');
    const tokens = await ChainTokens.load(sequelize, chain.id, chain.family);
    const key = `${chain.environment}:${chain.code}`;
    if (scanner.kind === 'blocks') {
      // EVM: say once which trace API internal transfers are read from (the scanner keeps what it detected)
      scanner.traceMode?.().then((traces) => this.logger.info('deposit scanner: internal transfers', { chain: key, traces }), () => undefined);
      const scan = new BlockChainScan(sequelize, chain, scanner, lease, watch, tokens, {
        batchBlocks: this.config.batchBlocks,
        concurrency: this.config.concurrency,
        startHeight: this.config.startHeights.get(key) ?? null,
        keepBlocks: Math.max(64, chain.confirmations * 2 + 10),
        dropAfterBlocks: Math.max(2, chain.confirmations),
      }, this.logger, new ChainMonitor(sequelize, chain.id));
      return { chain, lease, step: () => scan.step() };
    }
    const scan = new HistoryChainScan(sequelize, chain, scanner, lease, watch, tokens, {
      pageSize: 100, concurrency: this.config.concurrency, pagesPerStep: 10,
    }, this.logger, new ChainMonitor(sequelize, chain.id));
    return { chain, lease, step: () => scan.step() };
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      const wake = this.wake;
      function done() {
        clearTimeout(timer);
        const i = wake.indexOf(done);
        if (i >= 0) wake.splice(i, 1);
        resolve();
      }
      wake.push(done);
    });
  }

  private async run(loop: ChainLoop): Promise<void> {
    const chain = `${loop.chain.environment}:${loop.chain.code}`;
    let failures = 0;
    let held = false;
    while (this.running) {
      let delay = this.config.pollMs;
      try {
        if (!(await loop.lease.acquire())) {
          if (held) this.logger.warn('scan lease taken over by another worker', { chain });
          held = false;
          await this.sleep(Math.max(this.config.pollMs, Math.floor(this.config.leaseMs / 3)));
          continue;
        }
        if (!held) this.logger.info('scanning deposits', { chain });
        held = true;
        const r = await loop.step();
        failures = 0;
        if (r.behind) delay = 0;
      } catch (e) {
        failures++;
        if (e instanceof LeaseLost) held = false;
        // a node that fails is asked less and less often (up to a minute); a database outage is
        // retried every few seconds, so the scan resumes soon after Postgres is back
        const most = isDatabaseUnavailable(e) ? Math.max(this.config.pollMs, DATABASE_RETRY_AFTER_SECONDS * 1000) : 60_000;
        delay = Math.min(most, this.config.pollMs * 2 ** Math.min(failures, 6));
        this.logger.error('deposit scan step failed', { chain, error: e, retryInMs: delay });
        await this.db.sequelize
          .query('UPDATE scan_cursors SET last_error = $2, updated_at = now() WHERE chain_id = $1 AND lease_owner = $3', {
            bind: [loop.chain.id, String((e as Error)?.message ?? e).slice(0, 1000), this.owner],
          })
          .catch(() => undefined);
      }
      if (delay > 0) await this.sleep(delay);
      else await new Promise((r) => setImmediate(r));
    }
    if (held) await loop.lease.release().catch(() => undefined);
  }
}
