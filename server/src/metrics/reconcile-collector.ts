import { Gauge, type Registry } from 'prom-client';
import type { Collector, MetricsQuery } from './collector';
import { METRIC_PREFIX } from './registry';
import { approxBaseUnits } from './state-collectors';

/**
 * Reconciliation (docs/reconciliation.md), read at scrape time from the latest comparisons:
 * per chain and token the custody (address, token) pairs whose difference from the ledger is not
 * explained and the size of those differences (absolute, so a surplus and a shortfall never
 * cancel: a float, for alerting); per chain the open discrepancies, the age of the oldest
 * unreconciled custody address (the time since its last comparison, or since it was created if it
 * was never compared) and of the last finished pass. A chain the reconciliation has never passed
 * over exports no series: it is not reconciled at all (`wcs reconcile status` says so).
 */
export class ReconcileCollector implements Collector {
  readonly name = 'reconcile';
  private readonly unexplainedAddresses: Gauge<'chain' | 'environment' | 'token' | 'token_id'>;
  private readonly unexplainedAmount: Gauge<'chain' | 'environment' | 'token' | 'token_id'>;
  private readonly open: Gauge<'chain' | 'environment'>;
  private readonly oldest: Gauge<'chain' | 'environment'>;
  private readonly lastPass: Gauge<'chain' | 'environment'>;

  constructor(registry: Registry, private readonly query: MetricsQuery) {
    const tokenLabels = ['chain', 'environment', 'token', 'token_id'] as const;
    const chainLabels = ['chain', 'environment'] as const;
    this.unexplainedAddresses = new Gauge({
      name: `${METRIC_PREFIX}reconcile_unexplained_addresses`, labelNames: tokenLabels, registers: [registry],
      help: 'Custody addresses whose latest reconciliation of the token left a difference from the ledger unexplained (0: all explained)',
    });
    this.unexplainedAmount = new Gauge({
      name: `${METRIC_PREFIX}reconcile_unexplained_abs_base_units`, labelNames: tokenLabels, registers: [registry],
      help: 'Sum of the absolute unexplained differences of the token over custody addresses, in base units (approximate: a float)',
    });
    this.open = new Gauge({
      name: `${METRIC_PREFIX}reconcile_open_discrepancies`, labelNames: chainLabels, registers: [registry],
      help: 'Discrepancies of the chain still open for an operator (neither credited, booked nor explained)',
    });
    this.oldest = new Gauge({
      name: `${METRIC_PREFIX}reconcile_oldest_unreconciled_seconds`, labelNames: chainLabels, registers: [registry],
      help: 'Age in seconds of the oldest custody address comparison of the chain: since its last reconciliation, or since its creation if never reconciled',
    });
    this.lastPass = new Gauge({
      name: `${METRIC_PREFIX}reconcile_last_pass_age_seconds`, labelNames: chainLabels, registers: [registry],
      help: 'Seconds since the last reconciliation pass of the chain finished',
    });
  }

  async collect(): Promise<() => void> {
    const tokens = await this.query<{ code: string; environment: string; token_id: number; symbol: string; n: number; total: string | null }>(
      `SELECT c.code, c.environment, t.id AS token_id, t.symbol, count(*) FILTER (WHERE b.unexplained <> 0)::int AS n,
              sum(abs(b.unexplained))::text AS total
         FROM reconcile_balances b JOIN chains c ON c.id = b.chain_id JOIN chain_tokens t ON t.id = b.chain_token_id
        GROUP BY c.code, c.environment, t.id, t.symbol ORDER BY c.environment, c.code, t.id`,
    );
    const chains = await this.query<{ code: string; environment: string; open: number; oldest: number | null; last_pass: number | null }>(
      `WITH passed AS (SELECT chain_id, max(finished_at) AS finished FROM reconcile_passes GROUP BY chain_id),
            custody AS (
              SELECT chain_id, address, created_at FROM addresses WHERE memo IS NULL
              UNION ALL SELECT chain_id, address, created_at FROM deposit_accounts
              UNION ALL SELECT chain_id, address, created_at FROM hot_wallets
              UNION ALL SELECT chain_id, address, created_at FROM fee_wallets),
            compared AS (SELECT chain_id, address, min(reconciled_at) AS at FROM reconcile_balances GROUP BY chain_id, address)
       SELECT c.code, c.environment,
              (SELECT count(*) FROM reconcile_discrepancies d WHERE d.chain_id = p.chain_id AND d.status = 'OPEN')::int AS open,
              (SELECT extract(epoch FROM now() - min(coalesce(x.at, u.created_at)))::float8
                 FROM custody u LEFT JOIN compared x ON x.chain_id = u.chain_id AND x.address = u.address WHERE u.chain_id = p.chain_id) AS oldest,
              extract(epoch FROM now() - p.finished)::float8 AS last_pass
         FROM passed p JOIN chains c ON c.id = p.chain_id ORDER BY c.environment, c.code`,
    );
    return () => {
      this.clear();
      for (const r of tokens) {
        const labels = { chain: r.code, environment: r.environment, token: r.symbol, token_id: String(r.token_id) };
        this.unexplainedAddresses.set(labels, r.n);
        this.unexplainedAmount.set(labels, approxBaseUnits(r.total));
      }
      for (const r of chains) {
        const labels = { chain: r.code, environment: r.environment };
        this.open.set(labels, r.open);
        if (r.oldest !== null) this.oldest.set(labels, Math.max(0, r.oldest));
        if (r.last_pass !== null) this.lastPass.set(labels, Math.max(0, r.last_pass));
      }
    };
  }

  clear(): void {
    for (const g of [this.unexplainedAddresses, this.unexplainedAmount, this.open, this.oldest, this.lastPass]) g.reset();
  }
}
