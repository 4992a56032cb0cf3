/**
 * The chain check before signing (docs/transfers.md), end to end on anvil: the database is
 * restored to a copy taken before a payout was signed, while the chain keeps that payout. The
 * restored order must not be paid a second time: the service finds the hot wallet's nonce on chain
 * past its own, holds the sender (one SENDER_CHAIN_AHEAD alert, `wcs transfers holds` lists it,
 * across restarts), signs nothing more for it; once a recovery has matched the chain's transaction
 * to the order and released the sender (releaseSender), signing resumes.
 *
 * The copy is a whole database (CREATE DATABASE … TEMPLATE, with no connection open), as a
 * restore from a backup leaves it: pg_dump 15 on this machine cannot dump the embedded cluster
 * (Postgres 18), and a template copy is the same restore without a file in between.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client, Pool } from 'pg';
import { startRegtest, type RegtestNode } from '@wcs/adapter-bitcoin/regtest';
import { anvilRpc, sendNative, startAnvil, startBlockClock, type AnvilDevnet, type BlockClock } from '@wcs/adapter-evm/devnet';
import { WcsService, releaseSender, SENDER_CHAIN_AHEAD, type CreatedApplication } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testEnv, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { freshEvmAddress, waitForFunded, waitForHotWallet, type Withdraw } from './support/payouts';
import { expectOk, pollUntil, sleep } from './support/expect';
import { cliJson, runCli } from './support/processes';
import { sendOutputs } from './support/regtest-wallet';
import { tempDir } from './support/temp';

/** Runs SQL on the cluster's maintenance database of `db` (database copies need no connection open to the database copied). */
async function admin(db: TestDatabase, sql: string): Promise<void> {
  const u = new URL(db.url);
  u.pathname = '/postgres';
  const c = new Client({ connectionString: u.toString() });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}
/** `wcs transfers holds --json` of the database. */
async function cliHolds(db: TestDatabase, extra: Record<string, string> = {}) {
  const args = ['transfers', 'holds', '--json'];
  return (cliJson(args, await runCli(args, { ...process.env, ...testEnv(db.url, extra) })) as { holds: Array<{ chainCode: string; address: string; summary: string; evidence: Record<string, unknown>; releasedTime: string | null }> }).holds;
}

const ETH_TEST_CHAIN_ID = 102;
const ETH_TOKEN_ID = 10200;
const ETHER = 10n ** 18n;

describe('the chain ahead of a restored database: the sender is held, nothing is paid twice (anvil)', function () {
  this.timeout(300_000);
  let anvil: AnvilDevnet;
  let clock: BlockClock;
  let db: TestDatabase;
  let svc: WcsService | null = null;
  let pool: Pool | null = null;
  let app: CreatedApplication;
  let hot: string;
  /** The second order as paid before the restore, and the order accepted after it. */
  let paidB: Withdraw;
  let cOrder: number;
  const copy = `${'wcs_copy_'}${Math.random().toString(16).slice(2, 10)}`;
  const env = () => ({
    WCS_RPC_TEST_ETH: anvil.url, WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '200',
  });
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => {
    pool ??= new Pool({ connectionString: db.url, max: 2 });
    return (await pool.query(text, params)).rows as T[];
  };
  const closePool = async () => {
    await pool?.end();
    pool = null;
  };
  const start = async (workers = true) => {
    svc = await WcsService.start(testConfig(db.url, env()), testLogger(), { api: true, workers });
    return new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
  };
  const stop = async () => {
    await svc?.stop();
    svc = null;
  };
  const sql = (text: string) => admin(db, text);
  const nonce = async () => Number(BigInt(await anvilRpc<string>(anvil.url, 'eth_getTransactionCount', [hot, 'pending'])));
  const order = async (client: SigningClient, appOrderNo: string): Promise<Withdraw> =>
    expectOk(await client.post('/api/v1/wallet/withdraw/create', { appOrderNo, chainCode: 'ETH', chainTokenId: ETH_TOKEN_ID, toAddress: freshEvmAddress(), amount: '0.01' })) as Withdraw;
  const get = async (client: SigningClient, id: number) => expectOk(await client.get(`/api/v1/wallet/withdraw/get?id=${id}`)) as Withdraw;
  const until = async (client: SigningClient, id: number, status: string) => {
    const r = await pollUntil(() => get(client, id), (w) => w.status === status || w.status === 'FAILED', 60_000, 100);
    expect(r.result.status, JSON.stringify(r.result)).to.equal(status);
    return r.result;
  };
  const aheadAlerts = () => q<{ id: string; message: string; details: { address: string; evidence: Record<string, string> } }>(
    'SELECT id::text AS id, message, details FROM operator_alerts WHERE kind = $1 ORDER BY id', [SENDER_CHAIN_AHEAD]);
  before(async () => {
    anvil = await startAnvil({ chainId: 11155111 });
    clock = await startBlockClock(anvil.url, 100);
    await prepareTestKeystore();
    db = await createTestDatabase();
  });
  after(async () => {
    await stop();
    await closePool();
    await sql(`DROP DATABASE IF EXISTS ${copy} WITH (FORCE)`).catch(() => undefined);
    await db?.drop();
    await clock?.stop();
    await anvil?.stop();
  });

  it('pays a first withdrawal; a copy of the database is taken with a second one accepted and not yet signed; the second is paid', async () => {
    svc = await WcsService.start(testConfig(db.url, env()), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'restore', environment: 'test', chains: ['ETH'] });
    let client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    hot = await waitForHotWallet(q, app.id, ETH_TEST_CHAIN_ID, 30_000);
    await sendNative(anvil.url, hot, 10n * ETHER, { wait: true });
    await waitForFunded(q, app.id, [ETH_TOKEN_ID]);
    const a = await order(client, 'a-1');
    await until(client, a.id, 'SUCCESS');
    expect(await nonce()).to.equal(1);
    await stop();

    // the merchant's second order is accepted while no worker runs: it waits, unsigned
    client = await start(false);
    const b = await order(client, 'b-1');
    expect(b.status).to.equal('PROCESSING');
    await stop();
    await closePool();
    await sql(`CREATE DATABASE ${copy} TEMPLATE ${db.name}`); // the backup

    client = await start();
    const paid = await until(client, b.id, 'SUCCESS');
    expect(await nonce()).to.equal(2);
    expect((await aheadAlerts())).to.deep.equal([]);
    await stop();
    await closePool();
    paidB = paid;
  });

  it('after the restore, the second order is not signed again: the sender is held, one alert, listed by wcs transfers holds, and stays held across a restart', async () => {
    await sql(`DROP DATABASE ${db.name} WITH (FORCE)`);
    await sql(`CREATE DATABASE ${db.name} TEMPLATE ${copy}`); // the restore
    let client = await start();
    const restored = await get(client, paidB.id);
    expect(restored.status, 'the restored copy knows nothing of the payment').to.equal('PROCESSING');
    expect(restored.txHash).to.equal(null);

    const raised = await pollUntil(aheadAlerts, (rows) => rows.length > 0, 30_000, 100);
    expect(raised.ok, 'a SENDER_CHAIN_AHEAD alert').to.equal(true);
    // a new order for the same hot wallet is accepted and waits too
    const c = await order(client, 'c-1');
    await sleep(3000); // 30 signing rounds at WCS_WITHDRAW_POLL_MS=100

    expect(await nonce(), 'nothing more was sent from the hot wallet').to.equal(2);
    expect((await get(client, paidB.id)).status).to.equal('PROCESSING');
    expect((await get(client, c.id)).status).to.equal('PROCESSING');
    const transfers = await q<{ status: string }>(`SELECT status FROM transfers WHERE from_address = $1 AND status <> 'SUCCESS'`, [hot]);
    expect(transfers.map((x) => x.status).sort(), 'B (restored) and C wait unsigned').to.deep.equal(['READY', 'READY']);
    expect(await q('SELECT 1 FROM transfer_attempts a JOIN withdrawals w ON w.transfer_id = a.transfer_id WHERE w.id = ANY($1::bigint[])', [[paidB.id, c.id]])).to.deep.equal([]);

    const alerts = await aheadAlerts();
    expect(alerts).to.have.length(1);
    expect(alerts[0]!.details.address).to.equal(hot);
    expect(alerts[0]!.details.evidence).to.deep.equal({ kind: 'SEQUENCE', databaseNext: '1', chainNext: '2', pendingNext: '2' });
    expect(alerts[0]!.message).to.contain(hot);

    const holds = await cliHolds(db);
    expect(holds.map((h) => [h.chainCode, h.address, h.releasedTime])).to.deep.equal([['ETH', hot, null]]);
    expect(holds[0]!.summary).to.contain("database's next is 1");

    // a restart: still held (the hold is in the database), still one alert, nothing signed
    await stop();
    client = await start();
    await sleep(2000);
    expect(await nonce()).to.equal(2);
    expect(await aheadAlerts()).to.have.length(1);
    expect((await cliHolds(db)).map((h) => h.address)).to.deep.equal([hot]);
    cOrder = c.id;
  });

  it('a recovery matches the chain\'s transaction to the restored order and releases the sender: signing resumes, each order paid once', async () => {
    const client = new SigningClient(svc!.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    // what `wcs recover transfers` does for this order: the chain's transaction becomes its own
    const [x] = await q<{ id: string; amount: string }>('SELECT x.id::text AS id, x.amount::text AS amount FROM transfers x JOIN withdrawals w ON w.transfer_id = x.id WHERE w.id = $1', [paidB.id]);
    const raw = await anvilRpc<string>(anvil.url, 'eth_getRawTransactionByHash', [paidB.txHash]);
    await q(`UPDATE transfers SET status = 'BROADCASTED', sequence = 1, tx_hash = $2, fee = 0, sent_amount = amount, signed_at = now(), broadcast_at = now() WHERE id = $1 AND status = 'READY'`, [x!.id, paidB.txHash]);
    await q(`INSERT INTO transfer_attempts (transfer_id, attempt, tx_hash, raw_tx, transfer_input, max_fee, sent_at) VALUES ($1, 1, $2, decode($3, 'hex'), '{}', 0, now())`, [x!.id, paidB.txHash, raw.slice(2)]);

    const released = await releaseSender(svc!.storage.database.sequelize, { chainId: ETH_TEST_CHAIN_ID, address: hot }, TEST_ACTOR, 'order b-1 matched to its transaction on chain');
    expect(released.ok).to.equal(true);

    const b = await until(client, paidB.id, 'SUCCESS');
    expect(b.txHash, 'B keeps the one transaction the chain has').to.equal(paidB.txHash);
    const c = await until(client, cOrder, 'SUCCESS');
    expect(c.txHash).to.match(/^0x[0-9a-f]{64}$/);
    expect(await nonce(), 'one more transaction: C\'s').to.equal(3);
    const tx = await anvilRpc<{ nonce: string; from: string }>(anvil.url, 'eth_getTransactionByHash', [c.txHash]);
    expect([Number(BigInt(tx.nonce)), tx.from.toLowerCase()]).to.deep.equal([2, hot.toLowerCase()]);
    expect(await cliHolds(db)).to.deep.equal([]);
    expect(await aheadAlerts()).to.have.length(1);
    const [audit] = await q<{ action: string }>('SELECT action FROM audit_log WHERE target = $1', [`sender:ETH:${hot}`]);
    expect(audit).to.deep.equal({ action: 'transfers.release-sender' });
  });
});

describe('the chain ahead of a restored database on bitcoin: outputs it believes unspent are spent, the hot wallet is held (bcoin regtest)', function () {
  this.timeout(300_000);
  const CHAIN_ID = 150;
  const CODE = 'BTCREG';
  const TOKEN_ID = CHAIN_ID * 100;
  let node: RegtestNode;
  let db: TestDatabase;
  let svc: WcsService | null = null;
  let pool: Pool | null = null;
  let app: CreatedApplication;
  let hot: string;
  let configFile: string;
  const copy = `wcs_copy_${Math.random().toString(16).slice(2, 10)}`;
  const env = () => ({
    [`WCS_RPC_TEST_${CODE}`]: node.url, WCS_CONFIG: configFile, WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '200',
  });
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => {
    pool ??= new Pool({ connectionString: db.url, max: 2 });
    return (await pool.query(text, params)).rows as T[];
  };
  const closePool = async () => {
    await pool?.end();
    pool = null;
  };
  const start = async (workers = true) => {
    svc = await WcsService.start(testConfig(db.url, env()), testLogger(), { api: true, workers });
    return new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
  };
  const stop = async () => {
    await svc?.stop();
    svc = null;
  };
  const order = async (client: SigningClient, appOrderNo: string): Promise<Withdraw> =>
    expectOk(await client.post('/api/v1/wallet/withdraw/create', { appOrderNo, chainCode: CODE, chainTokenId: TOKEN_ID, toAddress: await node.newAddress(), amount: '0.01' })) as Withdraw;
  const get = async (client: SigningClient, id: number) => expectOk(await client.get(`/api/v1/wallet/withdraw/get?id=${id}`)) as Withdraw;
  /** Transactions in the mempool or mined since `height` that spend an output of the hot wallet's funding `txid`. */
  const spendsOf = async (txid: string, height: number): Promise<string[]> => {
    const tip = await node.rpc<number>('getblockcount');
    const found = new Set<string>();
    const look = async (ids: string[]) => {
      for (const id of ids) {
        const t = await node.rpc<{ vin: Array<{ txid?: string }> }>('getrawtransaction', [id, true]);
        if (t.vin.some((i) => i.txid === txid)) found.add(id);
      }
    };
    await look(await node.rpc<string[]>('getrawmempool'));
    for (let h = height; h <= tip; h++) {
      const b = await node.rpc<{ tx: Array<string | { txid: string }> }>('getblock', [await node.rpc<string>('getblockhash', [h]), true, false]);
      await look(b.tx.map((x) => (typeof x === 'string' ? x : x.txid)));
    }
    return [...found];
  };

  before(async function () {
    this.timeout(120_000);
    node = await startRegtest();
    configFile = path.join(tempDir('wcs-ahead-btc-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({
      chains: [{ id: CHAIN_ID, code: CODE, name: 'Bitcoin regtest (bcoin)', family: 'bitcoin', environment: 'test', network: 'regtest', nativeSymbol: 'BTC', decimals: 8, confirmations: 2, options: { bech32Hrp: 'rb' } }],
      tokens: [{ id: TOKEN_ID, chainCode: CODE, environment: 'test', symbol: 'BTC', name: 'Bitcoin regtest native coin', contract: null, decimals: 8 }],
    }));
    await prepareTestKeystore();
    db = await createTestDatabase();
  });
  after(async () => {
    await stop();
    await closePool();
    await admin(db, `DROP DATABASE IF EXISTS ${copy} WITH (FORCE)`).catch(() => undefined);
    await db?.drop();
    await node?.stop();
  });

  it('a payout lost by the restore is not made again: the hot wallet is held with the spent outputs as evidence, one alert, listed', async () => {
    svc = await WcsService.start(testConfig(db.url, env()), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'restore-btc', environment: 'test', chains: [CODE] });
    hot = await waitForHotWallet(q, app.id, CHAIN_ID, 30_000);
    const funding = await sendOutputs(node, [{ address: hot, sats: 3_000_000n }, { address: hot, sats: 2_000_000n }]);
    await node.mine(1);
    const seen = await pollUntil(() => q<{ n: number }>(
      'SELECT count(*)::int AS n FROM hot_wallet_utxos u JOIN hot_wallets h ON h.id = u.hot_wallet_id WHERE h.chain_id = $1 AND u.confirmations >= 1', [CHAIN_ID]), (r) => r[0]!.n === 2, 30_000, 50);
    expect(seen.ok, 'the ledger lists both funding outputs, confirmed').to.equal(true);
    await waitForFunded(q, app.id, [TOKEN_ID]);
    await stop();

    // the order is accepted while no worker runs; the copy holds it unsigned and both outputs unspent
    let client = await start(false);
    const b = await order(client, 'btc-b');
    await stop();
    await closePool();
    await admin(db, `CREATE DATABASE ${copy} TEMPLATE ${db.name}`);
    const height = await node.rpc<number>('getblockcount');

    client = await start();
    const r = await pollUntil(async () => {
      await node.mine(1);
      return get(client, b.id);
    }, (w) => w.status === 'SUCCESS' || w.status === 'FAILED', 90_000, 300);
    expect(r.result.status).to.equal('SUCCESS');
    const paid = r.result.txHash!;
    expect(await spendsOf(funding, height)).to.deep.equal([paid]);
    await stop();
    await closePool();

    await admin(db, `DROP DATABASE ${db.name} WITH (FORCE)`);
    await admin(db, `CREATE DATABASE ${db.name} TEMPLATE ${copy}`);
    client = await start();
    expect((await get(client, b.id)).status, 'the restored copy knows nothing of the payment').to.equal('PROCESSING');
    const raised = await pollUntil(() => q<{ details: { address: string; evidence: { kind: string; outputs: Array<{ txHash: string }> } } }>(
      'SELECT details FROM operator_alerts WHERE kind = $1', [SENDER_CHAIN_AHEAD]), (rows) => rows.length > 0, 30_000, 100);
    expect(raised.ok, 'a SENDER_CHAIN_AHEAD alert').to.equal(true);
    await sleep(3000); // 30 signing rounds, a block each second
    for (let i = 0; i < 3; i++) await node.mine(1);
    await sleep(1000);

    expect((await get(client, b.id)).status).to.equal('PROCESSING');
    expect(await spendsOf(funding, height), 'no second transaction spends the hot wallet\'s outputs').to.deep.equal([paid]);
    expect(await q('SELECT 1 FROM transfer_attempts a JOIN withdrawals w ON w.transfer_id = a.transfer_id WHERE w.id = $1', [b.id])).to.deep.equal([]);
    const alerts = await q<{ details: { address: string; evidence: { kind: string; outputs: Array<{ txHash: string }> } } }>('SELECT details FROM operator_alerts WHERE kind = $1', [SENDER_CHAIN_AHEAD]);
    expect(alerts).to.have.length(1);
    expect(alerts[0]!.details.address).to.equal(hot);
    expect(alerts[0]!.details.evidence.kind).to.equal('SPENT_OUTPUTS');
    expect(alerts[0]!.details.evidence.outputs.map((o) => o.txHash)).to.include(funding);
    const holds = await cliHolds(db, { WCS_CONFIG: configFile });
    expect(holds.map((h) => [h.chainCode, h.address, h.releasedTime])).to.deep.equal([[CODE, hot, null]]);
    await stop();
  });
});
