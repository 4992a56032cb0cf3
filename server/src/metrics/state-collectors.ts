import { Gauge, type Registry } from 'prom-client';
import type { KeyStoreSupervisor } from '../custody/keystore-supervisor';
import type { Collector, MetricsQuery } from './collector';
import { METRIC_PREFIX } from './registry';

/**
 * Deposit scanning per chain, from the scan cursors (one row per scanned chain): the height
 * scanned up to, the chain tip the scanner last saw, the lag between them in blocks, and whether
 * the last step failed or scanning is halted. The same for every worker process: the cursor is
 * shared, whichever process holds the chain's lease.
 */
export class ScanCollector implements Collector {
  readonly name = 'scan';
  private readonly height: Gauge<'chain' | 'environment'>;
  private readonly tip: Gauge<'chain' | 'environment'>;
  private readonly lag: Gauge<'chain' | 'environment'>;
  private readonly failing: Gauge<'chain' | 'environment'>;

  constructor(registry: Registry, private readonly query: MetricsQuery) {
    const gauge = (name: string, help: string) => new Gauge({ name: `${METRIC_PREFIX}${name}`, help, labelNames: ['chain', 'environment'] as const, registers: [registry] });
    this.height = gauge('scan_height', 'Height the deposit scanner has scanned up to, by chain code and environment');
    this.tip = gauge('scan_tip_height', 'Chain tip height the deposit scanner saw at its last step that moved the cursor');
    this.lag = gauge('scan_lag_blocks', 'Blocks between the seen tip and the scanned height (0: caught up)');
    this.failing = gauge('scan_failing', 'Whether the last scan step of the chain failed or its scanning is halted (1) or not (0)');
  }

  async collect(): Promise<() => void> {
    const rows = await this.query<{ code: string; environment: string; height: string | null; tip: string | null; failing: boolean }>(
      `SELECT c.code, c.environment, s.height::text AS height, s.tip_height::text AS tip, (s.last_error IS NOT NULL OR s.halted IS NOT NULL) AS failing
         FROM scan_cursors s JOIN chains c ON c.id = s.chain_id ORDER BY c.environment, c.code`,
    );
    return () => {
      this.clear();
      for (const r of rows) {
        const labels = { chain: r.code, environment: r.environment };
        this.failing.set(labels, r.failing ? 1 : 0);
        if (r.height === null) continue; // not started yet
        const height = BigInt(r.height);
        this.height.set(labels, Number(height));
        if (r.tip === null) continue;
        const tip = BigInt(r.tip);
        this.tip.set(labels, Number(tip));
        this.lag.set(labels, Number(tip > height ? tip - height : 0n));
      }
    };
  }

  clear(): void {
    for (const g of [this.height, this.tip, this.lag, this.failing]) g.reset();
  }
}

/** A NUMERIC base-unit amount as a float: for display only (the ledger is exact, a float is not). */
export function approxBaseUnits(text: string | null): number {
  return text === null ? 0 : Number(BigInt(text));
}

/**
 * The hot wallet balance ledger per chain and token, summed over the applications' hot
 * wallets: what the nodes last said the wallets hold and what accepted withdrawals hold back,
 * in base units (wei, satoshi...) as floats: approximate, for dashboards and alerts.
 */
export class HotWalletCollector implements Collector {
  readonly name = 'hot_wallets';
  private readonly balance: Gauge<'chain' | 'environment' | 'token' | 'token_id'>;
  private readonly reserved: Gauge<'chain' | 'environment' | 'token' | 'token_id'>;

  constructor(registry: Registry, private readonly query: MetricsQuery) {
    const labelNames = ['chain', 'environment', 'token', 'token_id'] as const;
    this.balance = new Gauge({
      name: `${METRIC_PREFIX}hot_wallet_balance_base_units`,
      help: 'Hot wallet balance last read from the node, summed over applications, in the token\'s base units (approximate: a float)',
      labelNames, registers: [registry],
    });
    this.reserved = new Gauge({
      name: `${METRIC_PREFIX}hot_wallet_reserved_base_units`,
      help: 'Amount reserved by accepted withdrawals not yet reflected in a balance reading, in base units (approximate: a float)',
      labelNames, registers: [registry],
    });
  }

  async collect(): Promise<() => void> {
    const rows = await this.query<{ code: string; environment: string; token_id: number; symbol: string; on_chain: string | null; reserved: string | null }>(
      `SELECT c.code, c.environment, t.id AS token_id, t.symbol, sum(b.on_chain)::text AS on_chain, sum(b.reserved)::text AS reserved
         FROM hot_wallet_balances b JOIN hot_wallets h ON h.id = b.hot_wallet_id JOIN chains c ON c.id = h.chain_id JOIN chain_tokens t ON t.id = b.chain_token_id
        GROUP BY c.code, c.environment, t.id, t.symbol ORDER BY c.environment, c.code, t.id`,
    );
    return () => {
      this.clear();
      for (const r of rows) {
        const labels = { chain: r.code, environment: r.environment, token: r.symbol, token_id: String(r.token_id) };
        this.balance.set(labels, approxBaseUnits(r.on_chain));
        this.reserved.set(labels, approxBaseUnits(r.reserved));
      }
    };
  }

  clear(): void {
    this.balance.reset();
    this.reserved.reset();
  }
}

/** The unfinished withdrawal statuses (docs/withdrawals.md), always exported. */
export const OPEN_WITHDRAWAL_STATUSES = ['PROCESSING', 'BROADCASTED', 'CONFIRMING'] as const;
/** The same statuses as SQL literals: the planner matches them to the partial index of open orders (a bound array would not). */
const OPEN_IN_LIST = OPEN_WITHDRAWAL_STATUSES.map((s) => `'${s}'`).join(',');

/**
 * The withdrawal queue: unfinished orders per status in one GROUP BY over the partial index of
 * open orders (finished orders, SUCCESS and FAILED, grow without bound and are not queue), and
 * the age of the oldest unfinished order.
 */
export class WithdrawalQueueCollector implements Collector {
  readonly name = 'withdrawals';
  private readonly orders: Gauge<'status'>;
  private readonly oldest: Gauge;

  constructor(registry: Registry, private readonly query: MetricsQuery) {
    this.orders = new Gauge({
      name: `${METRIC_PREFIX}withdrawals_open`,
      help: 'Unfinished withdrawal orders by status (PROCESSING, BROADCASTED, CONFIRMING)',
      labelNames: ['status'],
      registers: [registry],
    });
    this.oldest = new Gauge({
      name: `${METRIC_PREFIX}withdrawals_oldest_open_seconds`,
      help: 'Age in seconds of the oldest unfinished withdrawal order (0 when none)',
      registers: [registry],
    });
  }

  async collect(): Promise<() => void> {
    const rows = await this.query<{ status: string; n: number; oldest: number | null }>(
      `SELECT status, count(*)::int AS n, extract(epoch FROM now() - min(created_at))::float8 AS oldest
         FROM withdrawals WHERE status IN (${OPEN_IN_LIST}) GROUP BY status`,
    );
    return () => {
      const counts = new Map(rows.map((r) => [r.status, r.n]));
      for (const status of OPEN_WITHDRAWAL_STATUSES) this.orders.set({ status }, counts.get(status) ?? 0);
      this.oldest.set(Math.max(0, ...rows.map((r) => r.oldest ?? 0)));
    };
  }

  clear(): void {
    this.orders.reset();
    this.oldest.reset();
  }
}

/**
 * Whether this process's key store can serve (1) or not (0), with its backend: the check
 * /readyz makes (init succeeded and the store is not locked). Nothing is exported by a process
 * that has no key store (a workers-only process with no payout chain).
 */
export class KeyStoreCollector implements Collector {
  readonly name = 'keystore';
  private readonly ready: Gauge<'backend'>;

  constructor(registry: Registry, private readonly backend: string, private readonly supervisor: () => KeyStoreSupervisor | null) {
    this.ready = new Gauge({
      name: `${METRIC_PREFIX}keystore_ready`,
      help: 'Whether the key store of this process is open and unlocked (1) or unavailable (0), by backend',
      labelNames: ['backend'],
      registers: [registry],
    });
  }

  async collect(): Promise<() => void> {
    const s = this.supervisor();
    const check = s ? await s.check() : null;
    return () => {
      this.clear();
      if (check) this.ready.set({ backend: this.backend }, check.ready ? 1 : 0);
    };
  }

  clear(): void {
    this.ready.reset();
  }
}
