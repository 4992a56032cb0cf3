import { expect } from 'chai';
import { Client } from 'pg';
import type { Registry } from 'prom-client';
import { Database } from '../db/database';
import { migrate } from '../db/migrations';
import { defineModels } from '../db/models';
import { seedCatalogue } from '../catalogue/catalogue';
import { createTestDatabase, testConfig, testLogger, type TestDatabase } from '../testing';
import { CallbackBacklogCollector, CallbackMetrics } from './callback-metrics';
import { metricsPool, ScrapeCollectors, type Collector, type MetricsQuery } from './collector';
import { createRegistry } from './registry';
import { HotWalletCollector, ScanCollector, WithdrawalQueueCollector } from './state-collectors';
import { ReconcileCollector } from './reconcile-collector';

/** Every sample of a family as `labels => value` (labels in the registry's order, `k=v,...`). */
async function samples(registry: Registry, name: string): Promise<Record<string, number>> {
  const m = registry.getSingleMetric(name);
  if (!m) throw new Error(`no metric ${name}`);
  const out: Record<string, number> = {};
  for (const v of (await m.get()).values as Array<{ metricName?: string; labels: Record<string, string | number>; value: number }>) {
    const labels = Object.entries(v.labels).map(([k, x]) => `${k}=${x}`).join(',');
    out[(v.metricName && v.metricName !== name ? v.metricName.slice(name.length) + ' ' : '') + labels] = v.value;
  }
  return out;
}

describe('metrics: scrape-time collectors on real Postgres (backlog, scanning, hot wallets, withdrawals, deadlines)', function () {
  this.timeout(60_000);
  let tdb: TestDatabase;
  let database: Database;
  let pg: Client;
  let pool: ReturnType<typeof metricsPool>;
  let appId: number;
  const limits = { deadlineMs: 3000, statementTimeoutMs: 2000 };

  before(async () => {
    tdb = await createTestDatabase();
    database = new Database(testConfig(tdb.url), testLogger());
    await database.open();
    await migrate(database.sequelize);
    await seedCatalogue(database.sequelize, defineModels(database.sequelize), {});
    pg = new Client({ connectionString: tdb.url });
    await pg.connect();
    appId = (await pg.query(`INSERT INTO applications (name, environment, api_key) VALUES ('m', 'test', 'pk_test_metrics') RETURNING id`)).rows[0].id;
    pool = metricsPool(tdb.url, limits, testLogger());
  });
  after(async () => {
    await pool?.end();
    await pg?.end();
    await database?.close();
    await tdb?.drop();
  });

  const run = async (make: (r: Registry, q: MetricsQuery) => Collector) => {
    const registry = createRegistry();
    const scrape = new ScrapeCollectors(registry, limits, testLogger());
    scrape.add(make(registry, pool.query));
    await scrape.refresh();
    return { registry, scrape };
  };

  it('callback backlog: due, scheduled and in-flight tasks by status, and the oldest due age; delivered and given-up tasks are not backlog', async () => {
    const empty = await run((r, q) => new CallbackBacklogCollector(r, q));
    expect(await samples(empty.registry, 'wcs_callback_backlog_tasks')).to.deep.equal({
      'status=WAITING,state=due': 0, 'status=WAITING,state=scheduled': 0, 'status=FAILED,state=due': 0, 'status=FAILED,state=scheduled': 0, 'status=PROCESSING,state=in_flight': 0,
    });
    expect(await samples(empty.registry, 'wcs_callback_oldest_due_seconds')).to.deep.equal({ '': 0 });
    // a task, and its queue row while it has a delivery to make (PROCESSING: a leased queue row)
    const insert = (status: string, due: string | null) =>
      pg.query(`WITH t AS (
                  INSERT INTO callback_tasks (application_id, biz_type, biz_id, url, url_source, body, status, created_at, updated_at)
                  VALUES ($1, 'RECHARGE', 1, 'http://127.0.0.1:1/cb', 'APPLICATION', '\\x7b7d', CASE WHEN $2 = 'PROCESSING' THEN 'WAITING' ELSE $2 END, now(), now()) RETURNING id
                )
                INSERT INTO callback_queue (task_id, application_id, endpoint, due_at, lease_owner, lease_until)
                SELECT id, $1, 'http://127.0.0.1:1', ${due === null ? 'now()' : due}, CASE WHEN $2 = 'PROCESSING' THEN 'worker' END, CASE WHEN $2 = 'PROCESSING' THEN now() + interval '1 minute' END
                  FROM t WHERE $2 = 'PROCESSING' OR ${due === null ? 'false' : 'true'}`, [appId, status]);
    await insert('WAITING', "now() - interval '30 seconds'");
    await insert('WAITING', "now() - interval '5 seconds'");
    await insert('FAILED', "now() + interval '1 hour'");
    await insert('FAILED', "now() - interval '1 second'");
    await insert('PROCESSING', null);
    await insert('SUCCESS', null);
    await insert('FAILED', null); // gave up
    const { registry } = await run((r, q) => new CallbackBacklogCollector(r, q));
    expect(await samples(registry, 'wcs_callback_backlog_tasks')).to.deep.equal({
      'status=WAITING,state=due': 2, 'status=WAITING,state=scheduled': 0, 'status=FAILED,state=due': 1, 'status=FAILED,state=scheduled': 1, 'status=PROCESSING,state=in_flight': 1,
    });
    expect((await samples(registry, 'wcs_callback_oldest_due_seconds'))['']).to.be.within(29, 120);
    expect(await samples(registry, 'wcs_metrics_collector_up')).to.deep.equal({ 'collector=callback_backlog': 1 });
    await pg.query('DELETE FROM callback_tasks');
  });

  it('callback attempts: delivered, retry and gave_up by bizType; the due-to-delivered latency of deliveries only', async () => {
    const registry = createRegistry();
    const m = new CallbackMetrics(registry);
    const now = new Date();
    m.attemptRecorded({ bizType: 'RECHARGE', accepted: true, exhausted: false, dueAt: new Date(now.getTime() - 1500), finishedAt: now });
    m.attemptRecorded({ bizType: 'WITHDRAW', accepted: false, exhausted: false, dueAt: now, finishedAt: now });
    m.attemptRecorded({ bizType: 'WITHDRAW', accepted: false, exhausted: true, dueAt: now, finishedAt: now });
    m.attemptRecorded({ bizType: 'SOMETHING_NEW', accepted: true, exhausted: false, dueAt: null, finishedAt: now });
    expect(await samples(registry, 'wcs_callback_attempts_total')).to.deep.equal({
      'biz_type=RECHARGE,outcome=delivered': 1, 'biz_type=WITHDRAW,outcome=retry': 1, 'biz_type=WITHDRAW,outcome=gave_up': 1, 'biz_type=other,outcome=delivered': 1,
    });
    const lat = await samples(registry, 'wcs_callback_delivery_latency_seconds');
    expect(lat['_count biz_type=RECHARGE']).to.equal(1);
    expect(lat['_sum biz_type=RECHARGE']).to.be.closeTo(1.5, 0.001);
    expect(lat['_bucket le=1,biz_type=RECHARGE']).to.equal(0);
    expect(lat['_bucket le=2.5,biz_type=RECHARGE']).to.equal(1);
    expect(lat['_count biz_type=other']).to.equal(undefined); // no due time known: not observed
  });

  it('scanning: height, seen tip, lag and failing per chain code and environment', async () => {
    await pg.query(`INSERT INTO scan_cursors (chain_id, height, hash, tip_height) SELECT id, 100, '0xa', 130 FROM chains WHERE code = 'ETH' AND environment = 'test'`);
    await pg.query(`INSERT INTO scan_cursors (chain_id, height, hash, tip_height, last_error) SELECT id, 5000, 'h', 5000, 'node down' FROM chains WHERE code = 'BTC' AND environment = 'test'`);
    await pg.query(`INSERT INTO scan_cursors (chain_id) SELECT id FROM chains WHERE code = 'ETH' AND environment = 'live'`); // not started
    const { registry } = await run((r, q) => new ScanCollector(r, q));
    expect(await samples(registry, 'wcs_scan_height')).to.deep.equal({ 'chain=BTC,environment=test': 5000, 'chain=ETH,environment=test': 100 });
    expect(await samples(registry, 'wcs_scan_tip_height')).to.deep.equal({ 'chain=BTC,environment=test': 5000, 'chain=ETH,environment=test': 130 });
    expect(await samples(registry, 'wcs_scan_lag_blocks')).to.deep.equal({ 'chain=BTC,environment=test': 0, 'chain=ETH,environment=test': 30 });
    expect(await samples(registry, 'wcs_scan_failing')).to.deep.equal({ 'chain=ETH,environment=live': 0, 'chain=BTC,environment=test': 1, 'chain=ETH,environment=test': 0 });
  });

  it('hot wallets: balance and reserved per chain and token in base units (a float), summed over applications', async () => {
    const app2 = (await pg.query(`INSERT INTO applications (name, environment, api_key) VALUES ('m2', 'test', 'pk_test_metrics2') RETURNING id`)).rows[0].id;
    const eth = (await pg.query(`SELECT id FROM chains WHERE code = 'ETH' AND environment = 'test'`)).rows[0].id as number;
    const native = (await pg.query(`SELECT id, symbol FROM chain_tokens WHERE chain_id = $1 AND contract IS NULL`, [eth])).rows[0] as { id: number; symbol: string };
    for (const [app, i, onChain, reserved] of [[appId, 0, '1500000000000000000', '200000000000000000'], [app2, 1, '123456789012345678901234567', '0']] as const) {
      const hw = (await pg.query(`INSERT INTO hot_wallets (application_id, chain_id, key_namespace, key_index, address) VALUES ($1, $2, 'evm', $3, $4) RETURNING id`, [app, eth, i, `0x${String(i).repeat(40)}`])).rows[0].id;
      await pg.query(`INSERT INTO hot_wallet_balances (hot_wallet_id, chain_token_id, on_chain, reserved, observed_at) VALUES ($1, $2, $3, $4, now())`, [hw, native.id, onChain, reserved]);
    }
    const { registry } = await run((r, q) => new HotWalletCollector(r, q));
    const labels = `chain=ETH,environment=test,token=${native.symbol},token_id=${native.id}`;
    const balance = await samples(registry, 'wcs_hot_wallet_balance_base_units');
    expect(Object.keys(balance)).to.deep.equal([labels]);
    expect(balance[labels]).to.equal(Number(1500000000000000000n + 123456789012345678901234567n));
    expect(await samples(registry, 'wcs_hot_wallet_reserved_base_units')).to.deep.equal({ [labels]: 2e17 });
    expect(await registry.metrics()).not.to.match(/0x0{40}|0x1{40}/); // addresses are never labels
  });

  it('reconciliation: unexplained addresses and amounts per token (absolute: a surplus and a shortfall never cancel), open discrepancies, oldest comparison; no pass, no series', async () => {
    const eth = (await pg.query(`SELECT id FROM chains WHERE code = 'ETH' AND environment = 'test'`)).rows[0].id as number;
    const native = (await pg.query(`SELECT id, symbol FROM chain_tokens WHERE chain_id = $1 AND contract IS NULL`, [eth])).rows[0] as { id: number; symbol: string };
    const put = (address: string, unexplained: string, age: string) => pg.query(
      `INSERT INTO reconcile_balances (chain_id, chain_token_id, address, application_id, address_kind, ledger, on_chain, difference, unexplained, height, reconciled_at)
       VALUES ($1, $2, $3, $4, 'DEPOSIT', 100, 100 + $5::numeric, $5::numeric, $5::numeric, 50, now() - $6::interval)`, [eth, native.id, address, appId, unexplained, age]);
    await put('0xaaaa', '0', '10 seconds');
    await put('0xbbbb', '7', '20 seconds');
    await put('0xcccc', '-5', '3600 seconds');
    // 0xcccc is a custody address (a hot wallet made 3 hours ago, compared an hour ago): the oldest comparison
    const app3 = (await pg.query(`INSERT INTO applications (name, environment, api_key) VALUES ('m3', 'test', 'pk_test_metrics3') RETURNING id`)).rows[0].id;
    await pg.query(`INSERT INTO hot_wallets (application_id, chain_id, key_namespace, key_index, address, created_at) VALUES ($1, $2, 'evm', 7, '0xcccc', now() - interval '3 hours')`, [app3, eth]);
    const before = await run((r, q) => new ReconcileCollector(r, q));
    expect(await samples(before.registry, 'wcs_reconcile_open_discrepancies')).to.deep.equal({}); // no pass yet: the chain is not reconciled
    await pg.query(`INSERT INTO reconcile_passes (chain_id, trigger, scope, height, compared, unexplained, finished_at) VALUES ($1, 'MANUAL', 'FULL', 50, 3, 2, now())`, [eth]);
    await pg.query(`INSERT INTO reconcile_discrepancies (application_id, chain_id, chain_token_id, address, address_kind, amount, height, status) VALUES ($1, $2, $3, '0xbbbb', 'DEPOSIT', 7, 50, 'OPEN'), ($1, $2, $3, '0xcccc', 'DEPOSIT', -5, 50, 'BOOKED')`, [appId, eth, native.id]);
    const { registry } = await run((r, q) => new ReconcileCollector(r, q));
    const labels = `chain=ETH,environment=test,token=${native.symbol},token_id=${native.id}`;
    expect(await samples(registry, 'wcs_reconcile_unexplained_addresses')).to.deep.equal({ [labels]: 2 });
    expect(await samples(registry, 'wcs_reconcile_unexplained_abs_base_units')).to.deep.equal({ [labels]: 12 });
    expect(await samples(registry, 'wcs_reconcile_open_discrepancies')).to.deep.equal({ 'chain=ETH,environment=test': 1 });
    const oldest = (await samples(registry, 'wcs_reconcile_oldest_unreconciled_seconds'))['chain=ETH,environment=test']!;
    expect(oldest).to.be.within(3599, 3700);
    expect((await samples(registry, 'wcs_reconcile_last_pass_age_seconds'))['chain=ETH,environment=test']).to.be.within(0, 60);
    // a custody address never compared counts from its creation
    await pg.query(`INSERT INTO fee_wallets (application_id, chain_id, key_namespace, key_index, address, created_at) VALUES ($1, $2, 'evm', 9, '0xfee0', now() - interval '2 hours')`, [appId, eth]);
    const again = await run((r, q) => new ReconcileCollector(r, q));
    expect((await samples(again.registry, 'wcs_reconcile_oldest_unreconciled_seconds'))['chain=ETH,environment=test']).to.be.within(7199, 7300);
    await pg.query(`DELETE FROM fee_wallets WHERE address = '0xfee0'`);
    await pg.query(`DELETE FROM hot_wallets WHERE address = '0xcccc'`);
  });

  it('withdrawals: open orders per status (always the three), finished ones not counted, the oldest open age', async () => {
    const { registry: before } = await run((r, q) => new WithdrawalQueueCollector(r, q));
    expect(await samples(before, 'wcs_withdrawals_open')).to.deep.equal({ 'status=PROCESSING': 0, 'status=BROADCASTED': 0, 'status=CONFIRMING': 0 });
    const hw = (await pg.query(`SELECT h.id, h.chain_id, t.id AS token FROM hot_wallets h JOIN chain_tokens t ON t.chain_id = h.chain_id AND t.contract IS NULL WHERE h.application_id = $1`, [appId])).rows[0];
    let n = 0;
    for (const [status, age] of [['PROCESSING', 60], ['PROCESSING', 5], ['CONFIRMING', 1], ['SUCCESS', 3600], ['FAILED', 7200]] as const) {
      await pg.query(
        `INSERT INTO withdrawals (application_id, app_order_no, chain_id, chain_token_id, hot_wallet_id, from_address, to_address, amount, fee, reserved_amount, reserved_fee, status, created_at)
         VALUES ($1, $2, $3, $4, $5, '0xfrom', '0xto', 1, 0, 1, 0, $6, now() - make_interval(secs => $7))`,
        [appId, `o${n++}`, hw.chain_id, hw.token, hw.id, status, age]);
    }
    const { registry } = await run((r, q) => new WithdrawalQueueCollector(r, q));
    expect(await samples(registry, 'wcs_withdrawals_open')).to.deep.equal({ 'status=PROCESSING': 2, 'status=BROADCASTED': 0, 'status=CONFIRMING': 1 });
    expect((await samples(registry, 'wcs_withdrawals_oldest_open_seconds'))['']).to.be.within(59, 600);
  });

  it('a slow database cannot hang a scrape: the statement is cancelled, the collector is down and its series dropped, the others answer', async function () {
    const registry = createRegistry();
    const tight = { deadlineMs: 1500, statementTimeoutMs: 300 };
    const slowPool = metricsPool(tdb.url, tight, testLogger());
    try {
      const scrape = new ScrapeCollectors(registry, tight, testLogger());
      let slow = false;
      const slowQuery: MetricsQuery = (text, values) => slowPool.query(slow ? 'SELECT pg_sleep(10)' : text, values);
      scrape.add(new WithdrawalQueueCollector(registry, slowQuery));
      scrape.add(new ScanCollector(registry, slowPool.query));
      await scrape.refresh();
      expect(await samples(registry, 'wcs_metrics_collector_up')).to.deep.equal({ 'collector=withdrawals': 1, 'collector=scan': 1 });
      slow = true;
      const t0 = Date.now();
      await scrape.refresh();
      expect(Date.now() - t0).to.be.lessThan(1400);
      expect(await samples(registry, 'wcs_metrics_collector_up')).to.deep.equal({ 'collector=withdrawals': 0, 'collector=scan': 1 });
      expect(await samples(registry, 'wcs_withdrawals_open')).to.deep.equal({});
      expect(Object.keys(await samples(registry, 'wcs_scan_height')).length).to.be.greaterThan(0);
      slow = false;
      await scrape.refresh();
      expect((await samples(registry, 'wcs_metrics_collector_up'))['collector=withdrawals']).to.equal(1);
    } finally {
      await slowPool.end();
    }
  });

  it('a collector that never answers is cut at the deadline, and a late answer does not write stale series', async () => {
    const registry = createRegistry();
    const scrape = new ScrapeCollectors(registry, { deadlineMs: 200, statementTimeoutMs: 100 }, testLogger());
    let release: (() => void) | undefined;
    let applied = 0;
    scrape.add({
      name: 'stuck',
      collect: () => new Promise<() => void>((resolve) => {
        release = () => resolve(() => applied++);
      }),
      clear: () => undefined,
    });
    const t0 = Date.now();
    await scrape.refresh();
    expect(Date.now() - t0).to.be.within(150, 1000);
    expect(await samples(registry, 'wcs_metrics_collector_up')).to.deep.equal({ 'collector=stuck': 0 });
    release!();
    await new Promise((r) => setTimeout(r, 20));
    expect(applied).to.equal(0);
  });
});
