/**
 * Prometheus metrics end to end: the real service (API and workers) with WCS_METRICS_PORT=0 and a
 * token, deposits scanned on a real EVM node (anvil) and RECHARGE callbacks delivered to a local
 * receiver; every scrape is read with a strict text-format reader (support/prometheus-text.ts).
 * The values must move with the work: signed and forged requests, a delivered callback (and the
 * backlog back to 0), scanned blocks. An API-only and a workers-only instance each export the
 * metrics of the role they run.
 */
import { expect } from 'chai';
import * as crypto from 'node:crypto';
import { Pool } from 'pg';
import { anvilRpc, mine, sendNative, startAnvil, type AnvilDevnet } from '@wcs/adapter-evm/devnet';
import type { CreatedApplication } from '@wcs/server';
import { WcsService } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver } from './support/callback-receiver';
import { Codes, expectError, expectOk, pollUntil } from './support/expect';
import { Scrape } from './support/prometheus-text';
import { ADDRESS_CREATE, type RechargeEvent } from './support/recharge-types';

const CHAINS = '/api/v1/wallet/support/chains';
/** Every family the service exports in a process running both roles (docs/operations.md), with its type. */
const FAMILIES: Record<string, string> = {
  wcs_http_requests_total: 'counter',
  wcs_http_request_duration_seconds: 'histogram',
  wcs_auth_failures_total: 'counter',
  wcs_callback_attempts_total: 'counter',
  wcs_callback_delivery_latency_seconds: 'histogram',
  wcs_callback_backlog_tasks: 'gauge',
  wcs_callback_oldest_due_seconds: 'gauge',
  wcs_scan_height: 'gauge',
  wcs_scan_tip_height: 'gauge',
  wcs_scan_lag_blocks: 'gauge',
  wcs_scan_failing: 'gauge',
  wcs_hot_wallet_balance_base_units: 'gauge',
  wcs_hot_wallet_reserved_base_units: 'gauge',
  wcs_withdrawals_open: 'gauge',
  wcs_withdrawals_oldest_open_seconds: 'gauge',
  wcs_reconcile_unexplained_addresses: 'gauge',
  wcs_reconcile_unexplained_abs_base_units: 'gauge',
  wcs_reconcile_open_discrepancies: 'gauge',
  wcs_reconcile_oldest_unreconciled_seconds: 'gauge',
  wcs_reconcile_last_pass_age_seconds: 'gauge',
  wcs_keystore_ready: 'gauge',
  wcs_metrics_collector_up: 'gauge',
  wcs_metrics_collector_duration_seconds: 'gauge',
  wcs_process_cpu_user_seconds_total: 'counter',
  wcs_process_resident_memory_bytes: 'gauge',
  wcs_nodejs_eventloop_lag_seconds: 'gauge',
  wcs_nodejs_heap_size_used_bytes: 'gauge',
};
const API_FAMILIES = ['wcs_http_requests_total', 'wcs_http_request_duration_seconds', 'wcs_auth_failures_total'];
const WORKER_FAMILIES = ['wcs_callback_attempts_total', 'wcs_callback_delivery_latency_seconds', 'wcs_callback_backlog_tasks', 'wcs_scan_height', 'wcs_hot_wallet_balance_base_units', 'wcs_withdrawals_open'];
const ETH_TEST = { chain: 'ETH', environment: 'test' };

describe('Prometheus metrics: own port, token, every family, values that move with the work (anvil, real Postgres)', function () {
  this.timeout(180_000);
  const token = crypto.randomBytes(24).toString('base64url');
  const receiver = new CallbackReceiver();
  let anvil: AnvilDevnet;
  let db: TestDatabase;
  let pool: Pool;
  let svc: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  const others: WcsService[] = [];

  const env = () => ({
    WCS_RPC_TEST_ETH: anvil.url,
    WCS_SCAN_POLL_MS: '50',
    WCS_CALLBACK_POLL_MS: '50',
    WCS_CALLBACK_ALLOW_PRIVATE: '1',
    WCS_HOT_WALLET_REFRESH_MS: '200',
    WCS_METRICS_PORT: '0',
    WCS_METRICS_TOKEN: token,
  });
  const scrape = async (url = svc.metricsUrl): Promise<Scrape> => {
    const r = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-type')).to.equal('text/plain; version=0.0.4; charset=utf-8');
    return Scrape.parse(await r.text());
  };
  const cursor = async () => BigInt((await pool.query(`SELECT height::text AS h FROM scan_cursors s JOIN chains c ON c.id = s.chain_id WHERE c.code = 'ETH' AND c.environment = 'test'`)).rows[0]?.h ?? -1);
  const tip = async () => BigInt(await anvilRpc<string>(anvil.url, 'eth_blockNumber'));

  before(async () => {
    anvil = await startAnvil({ chainId: 11155111 }); // the catalogue's test ETH (Sepolia) id
    await prepareTestKeystore();
    await receiver.start();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 2 });
    svc = await WcsService.start(testConfig(db.url, env()), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'metrics', environment: 'test', chains: ['ETH'] });
    await svc.storage.applications.setCallback(TEST_ACTOR, app.id, 'RECHARGE', receiver.url('/merchant/recharge'));
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    const t = await tip();
    const r = await pollUntil(cursor, (h) => h >= t, 30_000);
    expect(r.ok, `scanner at ${r.result}, tip ${t}`).to.equal(true);
  });

  after(async () => {
    for (const o of others) await o.stop();
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await receiver.stop();
    await anvil?.stop();
  });

  it('is served on its own loopback port, not the API\'s, and only with the bearer token', async () => {
    const m = new URL(svc.metricsUrl);
    const a = new URL(svc.url);
    expect(m.hostname).to.equal('127.0.0.1');
    expect(m.port).not.to.equal(a.port);
    expect(m.pathname).to.equal('/metrics');
    const tries: Array<Record<string, string>> = [{}, { authorization: `Bearer ${token.slice(1)}` }, { authorization: `Bearer ${app.apiSecret}` }, { authorization: `Basic ${token}` }];
    for (const headers of tries) {
      const r = await fetch(svc.metricsUrl, { headers });
      expect(r.status, JSON.stringify(headers)).to.equal(401);
      expect(await r.text()).not.to.include('wcs_');
    }
    expect((await fetch(`${svc.url}/metrics`)).status).to.equal(404); // not on the API port
    await scrape();
  });

  it('exports every family with its type; collectors up; the key store ready; no secret, key or address in it', async () => {
    await expectOk(await client.get(CHAINS));
    const deposit = (expectOk(await client.post(ADDRESS_CREATE, { chainCode: 'ETH', externalUserId: 'families' })) as { address: string }).address;
    // the ledger reads the application's hot wallet on ETH within a refresh or two
    const r = await pollUntil(scrape, (s) => s.family('wcs_hot_wallet_balance_base_units').samples.length > 0, 30_000, 200);
    expect(r.ok, 'a hot wallet balance series').to.equal(true);
    const s = r.result;
    for (const [name, type] of Object.entries(FAMILIES)) expect(s.family(name).type, name).to.equal(type);
    for (const f of s.families.values()) expect(f.name.startsWith('wcs_'), f.name).to.equal(true);
    expect(s.value('wcs_keystore_ready', { backend: 'software' })).to.equal(1);
    for (const c of ['callback_backlog', 'scan', 'hot_wallets', 'withdrawals', 'keystore']) expect(s.value('wcs_metrics_collector_up', { collector: c }), c).to.equal(1);
    expect(s.family('wcs_withdrawals_open').samples.map((x) => x.labels.status).sort()).to.deep.equal(['BROADCASTED', 'CONFIRMING', 'PROCESSING']);
    const hw = s.family('wcs_hot_wallet_balance_base_units').samples;
    expect(hw.map((x) => [x.labels.chain, x.labels.environment, x.labels.token])).to.deep.equal([['ETH', 'test', 'ETH']]);
    expect(hw[0]!.value).to.be.at.least(0);
    expect(s.value('wcs_auth_failures_total', { reason: 'AUTH_SIGNATURE_INVALID' })).to.be.a('number');
    for (const secret of [token, app.apiKey, app.apiSecret, deposit, deposit.toLowerCase(), db.url]) expect(s.text).not.to.include(secret);
    for (const f of s.families.values()) for (const x of f.samples) for (const v of Object.values(x.labels)) expect(v, `${x.name} label`).not.to.match(/^0x[0-9a-fA-F]{40}$|^pk_/);
  });

  it('a signed request raises its route\'s counter and latency count; a forged one raises the authentication failures by reason', async () => {
    const ok = { route: CHAINS, method: 'GET', status: '200', code: '0' };
    const forgedLabels = { route: CHAINS, method: 'GET', status: '401', code: String(Codes.AUTH_SIGNATURE_INVALID) };
    const s0 = await scrape();
    const before = { ok: s0.value('wcs_http_requests_total', ok) ?? 0, hist: s0.histogram('wcs_http_request_duration_seconds', { route: CHAINS, method: 'GET' }), auth: s0.value('wcs_auth_failures_total', { reason: 'AUTH_SIGNATURE_INVALID' })!, forged: s0.value('wcs_http_requests_total', forgedLabels) ?? 0 };
    expectOk(await client.get(CHAINS));
    const s1 = await scrape();
    expect(s1.value('wcs_http_requests_total', ok)).to.equal(before.ok + 1);
    const hist = s1.histogram('wcs_http_request_duration_seconds', { route: CHAINS, method: 'GET' });
    expect(hist.count).to.equal(before.hist.count + 1);
    expect(hist.sum).to.be.greaterThan(before.hist.sum);
    expect(s1.value('wcs_auth_failures_total', { reason: 'AUTH_SIGNATURE_INVALID' })).to.equal(before.auth);

    const forger = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: crypto.randomBytes(32).toString('hex') });
    expectError(await forger.get(CHAINS), 401, Codes.AUTH_SIGNATURE_INVALID);
    const s2 = await scrape();
    expect(s2.value('wcs_auth_failures_total', { reason: 'AUTH_SIGNATURE_INVALID' })).to.equal(before.auth + 1);
    expect(s2.value('wcs_http_requests_total', forgedLabels)).to.equal(before.forged + 1);
    expect(s2.value('wcs_http_requests_total', ok)).to.equal(before.ok + 1);
    // an unknown path is `other`, never the raw path
    await fetch(`${svc.url}/api/v1/wallet/${app.apiKey}`);
    const s3 = await scrape();
    expect(s3.value('wcs_http_requests_total', { route: 'other', method: 'GET', status: '404', code: String(Codes.NOT_FOUND) })).to.be.at.least(1);
    expect(s3.text).not.to.include(app.apiKey);
  });

  it('a deposit on anvil: the scan height follows the node, the RECHARGE callback is delivered and counted with its latency, the backlog returns to 0', async () => {
    const s0 = await scrape();
    const h0 = s0.value('wcs_scan_height', ETH_TEST)!;
    expect(h0).to.equal(Number(await cursor()));
    expect(s0.value('wcs_scan_lag_blocks', ETH_TEST)).to.be.at.least(0);
    expect(s0.value('wcs_scan_failing', ETH_TEST)).to.equal(0);
    const delivered0 = s0.value('wcs_callback_attempts_total', { biz_type: 'RECHARGE', outcome: 'delivered' }) ?? 0;
    const latency0 = s0.histogram('wcs_callback_delivery_latency_seconds', { biz_type: 'RECHARGE' });

    const to = (expectOk(await client.post(ADDRESS_CREATE, { chainCode: 'ETH', externalUserId: 'alice' })) as { address: string }).address;
    const txHash = await sendNative(anvil.url, to, 10n ** 17n);
    await mine(anvil.url, 3);
    const t = Number(await tip());
    const got = await pollUntil(async () => receiver.received.map((x) => JSON.parse(x.body.toString('utf8')) as RechargeEvent).filter((e) => e.txHash === txHash), (e) => e.length >= 1, 30_000, 50);
    expect(got.ok, 'a RECHARGE callback at the receiver').to.equal(true);

    // one process dispatches here, so its count of deliveries is exactly what the receiver got, once recorded
    const recharges = () => receiver.received.filter((x) => (JSON.parse(x.body.toString('utf8')) as RechargeEvent).event === 'recharge').length;
    const settled = await pollUntil(async () => ({ s: await scrape(), received: recharges() }), ({ s, received }) =>
      s.value('wcs_scan_height', ETH_TEST)! >= t
      && s.value('wcs_callback_attempts_total', { biz_type: 'RECHARGE', outcome: 'delivered' }) === received
      && received >= got.result.length
      && s.total('wcs_callback_backlog_tasks') === 0, 30_000, 100);
    const s1 = settled.result.s;
    expect(settled.ok, `after the deposit: height ${s1.value('wcs_scan_height', ETH_TEST)} of ${t}, delivered ${s1.value('wcs_callback_attempts_total', { biz_type: 'RECHARGE', outcome: 'delivered' })} of ${settled.result.received} received, backlog ${s1.total('wcs_callback_backlog_tasks')}`).to.equal(true);
    expect(s1.value('wcs_scan_height', ETH_TEST)).to.be.greaterThan(h0);
    expect(s1.value('wcs_scan_tip_height', ETH_TEST)).to.be.at.least(s1.value('wcs_scan_height', ETH_TEST)!);
    expect(s1.value('wcs_scan_lag_blocks', ETH_TEST)).to.equal(s1.value('wcs_scan_tip_height', ETH_TEST)! - s1.value('wcs_scan_height', ETH_TEST)!);
    const deliveredNow = s1.value('wcs_callback_attempts_total', { biz_type: 'RECHARGE', outcome: 'delivered' })!;
    expect(deliveredNow).to.be.greaterThan(delivered0);
    const latency = s1.histogram('wcs_callback_delivery_latency_seconds', { biz_type: 'RECHARGE' });
    expect(latency.count - latency0.count).to.equal(deliveredNow - delivered0);
    expect(latency.sum).to.be.greaterThan(latency0.sum);
    expect((latency.sum - latency0.sum) / (latency.count - latency0.count)).to.be.lessThan(30); // due to delivered, not since the epoch
    for (const st of s1.family('wcs_callback_backlog_tasks').samples) expect(st.value, JSON.stringify(st.labels)).to.equal(0);
    expect(s1.value('wcs_callback_oldest_due_seconds')).to.equal(0);
    expect(s1.value('wcs_callback_attempts_total', { biz_type: 'RECHARGE', outcome: 'retry' }) ?? 0).to.equal(0);

    // a block mined (nothing in it for us) still moves the scan height
    await mine(anvil.url, 2);
    const t2 = Number(await tip());
    const moved = await pollUntil(scrape, (s) => s.value('wcs_scan_height', ETH_TEST)! >= t2, 30_000, 100);
    expect(moved.ok, `scan height ${moved.result.value('wcs_scan_height', ETH_TEST)} of ${t2}`).to.equal(true);
  });

  it('an API-only and a workers-only instance each export the metrics of the role they run, on ports of their own', async () => {
    const apiOnly = await WcsService.start(testConfig(db.url, env()), testLogger(), { api: true, workers: false });
    others.push(apiOnly);
    const workersOnly = await WcsService.start(testConfig(db.url, env()), testLogger(), { api: false, workers: true });
    others.push(workersOnly);
    expect(new Set([svc.metricsUrl, apiOnly.metricsUrl, workersOnly.metricsUrl]).size).to.equal(3);

    expectOk(await new SigningClient(apiOnly.url, { apiKey: app.apiKey, apiSecret: app.apiSecret }).get(CHAINS));
    const a = await scrape(apiOnly.metricsUrl);
    for (const f of API_FAMILIES) expect(a.families.has(f), f).to.equal(true);
    for (const f of WORKER_FAMILIES) expect(a.families.has(f), f).to.equal(false);
    expect(a.value('wcs_http_requests_total', { route: CHAINS, method: 'GET', status: '200', code: '0' })).to.equal(1);
    expect(a.value('wcs_keystore_ready', { backend: 'software' })).to.equal(1);
    expect(a.family('wcs_process_cpu_user_seconds_total').samples.length).to.equal(1);

    const h0 = Number(await cursor());
    const w = (await pollUntil(() => scrape(workersOnly.metricsUrl), (s) => s.families.has('wcs_scan_height') && s.value('wcs_scan_height', ETH_TEST) !== undefined, 15_000, 100)).result;
    for (const f of WORKER_FAMILIES) expect(w.families.has(f), f).to.equal(true);
    for (const f of API_FAMILIES) expect(w.families.has(f), f).to.equal(false);
    expect(w.value('wcs_scan_height', ETH_TEST)).to.be.within(h0, Number(await cursor())); // the shared cursor, whichever process holds the lease
    expect(w.value('wcs_keystore_ready', { backend: 'software' })).to.equal(1); // it pays out on ETH: it has a key store
    expect(w.total('wcs_callback_backlog_tasks')).to.equal(0);
  });
});
