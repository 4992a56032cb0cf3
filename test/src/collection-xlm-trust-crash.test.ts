/**
 * The hot wallet's trustline exactly once across a crash (Stellar, recorded Horizon answers: what
 * support/horizon-trust-node.ts serves and what it changed is said there). The service's workers
 * run in a child process (`wcs start --workers-only`), killed with SIGKILL while the hot wallet's
 * changeTrust is signed and posted but not applied (Horizon answers every post of it with its
 * recorded 504 timeout while `holdTrust` is set), and started again:
 * - before the restart: one TRUSTLINE transfer, its signed bytes stored, the item PLANNED and
 *   waiting with that transfer named, no sweep sent;
 * - after the restart: the stored changeTrust is posted again, the same bytes (one hash, one
 *   attempt), never a second TRUSTLINE transfer nor one signed anew; once Horizon applies it, the
 *   sweep of every unit goes and the item ends SUCCESS.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { Keypair, Networks } from '@stellar/stellar-sdk';
import type { CreatedApplication } from '@wcs/server';
import { WcsService } from '@wcs/server';
import { createTestDatabase, freePort, prepareTestKeystore, testConfig, testEnv, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { expectOk, pollUntil, sleep } from './support/expect';
import { horizonTrustNode, RECORDED_USD, type HorizonTrustNode } from './support/horizon-trust-node';
import { waitForHotWallet } from './support/payouts';
import { WcsProcess } from './support/processes';
import { XLM_DEPOSIT_TX } from './support/recorded-nodes';
import { ADDRESS_CREATE } from './support/recharge-types';
import { tempDir } from './support/temp';

const XLM_CHAIN = 107;
const USD_TOKEN = 10798;

interface TrustRow { id: string; status: string; tx_hash: string | null; attempts: number }

describe('Stellar: kill -9 of the workers while the hot wallet\'s changeTrust is signed and sent but not applied: the same transaction after the restart, never a second (recorded Horizon answers)', function () {
  this.timeout(120_000);
  let node: HorizonTrustNode;
  let db: TestDatabase;
  let api: WcsService;
  let pool: Pool;
  let app: CreatedApplication;
  let configFile: string;
  let workers: WcsProcess | null = null;
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const trustlines = () => q<TrustRow>(
    `SELECT x.id::text AS id, x.status, x.tx_hash, (SELECT count(*)::int FROM transfer_attempts a WHERE a.transfer_id = x.id) AS attempts
       FROM transfers x WHERE x.application_id = $1 AND x.kind = 'TRUSTLINE' ORDER BY x.id`, [app.id]);
  const items = () => q<{ status: string; waiting_reason: string | null; amount: string; tx_hash: string | null }>(
    'SELECT status, waiting_reason, amount::text AS amount, tx_hash FROM collection_items WHERE application_id = $1 ORDER BY id', [app.id]);
  const workersLog = () => (workers as WcsProcess | null)?.describe() ?? '';
  const startWorkers = async () => {
    const env = {
      ...process.env,
      ...testEnv(db.url, {
        WCS_RPC_TEST_XLM: node.url, WCS_CONFIG: configFile, WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '200',
        WCS_COLLECT_PLAN_MS: '200',
        // the killed process's deposit scan lease lapses this soon (default 30 s)
        WCS_SCAN_LEASE_MS: '3000',
      }),
    };
    workers = WcsProcess.spawn(['start', '--workers-only'], env, await freePort());
  };

  before(async () => {
    node = await horizonTrustNode(Networks.TESTNET, { without: Keypair.random().publicKey(), with: Keypair.random().publicKey() });
    configFile = path.join(tempDir('wcs-xlm-trust-crash-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({ tokens: [{ id: USD_TOKEN, chainCode: 'XLM', environment: 'test', symbol: 'USD', name: 'USD (recorded issuer GDUKMG…)', contract: RECORDED_USD, decimals: 7 }] }));
    await prepareTestKeystore();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 3 });
    api = await WcsService.start(testConfig(db.url, { WCS_CONFIG: configFile }), testLogger(), { api: true, workers: false });
    app = await api.storage.applications.create(TEST_ACTOR, { name: 'xlm-trust-crash', environment: 'test', chains: ['XLM'] });
    const client = new SigningClient(api.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    node.deposit = expectOk(await client.post(ADDRESS_CREATE, { chainCode: 'XLM', externalUserId: 'user-usd' })) as { address: string; memo: string };
    // Horizon times out on every post of a changeTrust until released
    node.holdTrust = true;
    await startWorkers();
    node.hot = await waitForHotWallet(q, app.id, XLM_CHAIN, 30_000);
  });

  after(async () => {
    await workers?.stop('SIGKILL');
    await api?.stop();
    await pool?.end();
    await db?.drop();
    await node?.close();
  });

  it('one TRUSTLINE transfer, its stored bytes re-sent after the restart (one hash, one attempt); the sweep after it is applied; SUCCESS', async () => {
    const credited = await pollUntil(() => q<{ tx_status: string; amount: string }>('SELECT tx_status, amount::text AS amount FROM recharges WHERE tx_hash = $1', [XLM_DEPOSIT_TX]),
      (r) => r[0]?.tx_status === 'SETTLED', 60_000, 100);
    expect(credited.result, 'the USD deposit').to.deep.equal([{ tx_status: 'SETTLED', amount: '40000000' }]);
    // the operator's policy (native value 0.1 USD per XLM, in USD base units: the 199-stroop fee is far below 10 % of 4 USD)
    await q(`INSERT INTO collection_policies (application_id, chain_token_id, threshold, max_fee_bps, native_value, on_confirmed, schedule_seconds)
             VALUES ($1, $2, 1, 1000, 1000000, true, NULL)`, [app.id, USD_TOKEN]);

    // the changeTrust is signed and posted (Horizon: 504, not applied): the workers are killed there
    const sent = await pollUntil(async () => ({ rows: await trustlines(), held: [...node.held] }),
      (r) => r.rows.length > 0 && r.rows[0]!.tx_hash !== null && r.held.length >= 1, 30_000, 20);
    expect(sent.ok, `a changeTrust posted: ${JSON.stringify(sent.result)}\n${workersLog()}`).to.equal(true);
    const r = await workers!.stop('SIGKILL');
    expect(r.signal).to.equal('SIGKILL');
    workers = null;

    const before = await trustlines();
    expect(before, 'one TRUSTLINE transfer').to.have.length(1);
    const [trust] = before as [TrustRow];
    expect(['SIGNED', 'BROADCASTED'], `killed while it is in flight: ${trust.status}`).to.include(trust.status);
    expect(trust.attempts, 'its signed bytes are stored: one attempt').to.equal(1);
    expect(new Set(node.held), 'only the stored transaction was posted').to.deep.equal(new Set([trust.tx_hash]));
    expect(node.submitted, 'no sweep while the hot wallet has no trustline').to.deep.equal([]);
    const waiting = await items();
    expect(waiting, 'one item').to.have.length(1);
    expect(waiting[0]).to.include({ status: 'PLANNED', tx_hash: null });
    // written in the transaction that recorded the TRUSTLINE transfer, naming it
    expect(waiting[0]!.waiting_reason).to.equal(`opening the hot wallet's trustline to ${RECORDED_USD} (transfer ${trust.id}) before the first sweep`);

    // restarted: the same stored changeTrust is posted again, never a new one
    const postsBefore = node.held.length;
    await startWorkers();
    const again = await pollUntil(async () => node.held.length, (n) => n >= postsBefore + 2, 30_000, 50);
    expect(again.ok, `posted again after the restart\n${workersLog()}`).to.equal(true);
    expect(new Set(node.held), 'the same transaction each time').to.deep.equal(new Set([trust.tx_hash]));
    await sleep(300);
    const during = await trustlines();
    expect(during.map((x) => [x.id, x.tx_hash, x.attempts]), 'no second TRUSTLINE transfer, not signed anew').to.deep.equal([[trust.id, trust.tx_hash, 1]]);
    expect(node.submitted, 'still no sweep').to.deep.equal([]);
    const held = await items();
    expect(held[0], 'the item waits, the transfer named').to.deep.include({ status: 'PLANNED', waiting_reason: `opening the hot wallet's trustline to ${RECORDED_USD} (transfer ${trust.id}) before the first sweep` });

    // Horizon applies it: the account shows the trustline, the sweep goes
    node.holdTrust = false;
    const done = await pollUntil(items, (rows) => rows[0]?.status === 'SUCCESS' || rows[0]?.status === 'FAILED', 60_000, 100);
    expect(done.result[0], `${JSON.stringify(done.result)}\n${workersLog()}`).to.include({ status: 'SUCCESS', amount: '40000000' });
    const after = await trustlines();
    expect(after.map((x) => [x.id, x.status, x.tx_hash, x.attempts])).to.deep.equal([[trust.id, 'SUCCESS', trust.tx_hash, 1]]);
    expect(node.submitted.map((t) => t.operations[0]!.type), 'what Horizon applied: the changeTrust, then the sweep').to.deep.equal(['changeTrust', 'payment']);
    const [changeTrust, sweep] = node.submitted as [(typeof node.submitted)[number], (typeof node.submitted)[number]];
    expect(changeTrust.hash().toString('hex')).to.equal(trust.tx_hash);
    expect(changeTrust.source).to.equal(node.hot);
    expect(Keypair.fromPublicKey(node.hot!).verify(changeTrust.hash(), changeTrust.signatures[0]!.signature()), 'signed by the hot key').to.equal(true);
    expect(sweep.operations[0]).to.deep.include({ type: 'payment', destination: node.hot, amount: '4.0000000' });
    expect(sweep.hash().toString('hex')).to.equal(done.result[0]!.tx_hash);
  });
});
