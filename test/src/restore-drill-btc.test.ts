/**
 * The restore drill of docs/deployment.md on bcoin regtest, with pg_dump / pg_restore and the
 * service's workers (the anvil drill is restore-drill.test.ts): before the backup the hot wallet
 * is funded, a deposit is consolidated into it and order w1 paid, and order w2 accepted unsigned;
 * after it (the window the restore loses) w2 is paid, w3 created and paid, and two new deposits
 * consolidated. The backup is restored into a new database and the service restarted on it.
 * Then, counted on the chain itself: no order paid twice, no deposit output consolidated twice,
 * nothing signed that the chain refused; the senders held (SENDER_CHAIN_AHEAD); `wcs recover
 * transfers` matches w2 (with its verified callbacks) and the lost consolidation, lists w3 as
 * paid with no order, and releases; signing resumes: w4 is paid once from outputs really unspent,
 * and a new deposit is consolidated once.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect } from 'chai';
import { Pool } from 'pg';
import { Block, Transaction } from 'bitcoinjs-lib';
import { outputAddress, type BitcoinNetwork } from '@wcs/adapter-bitcoin';
import { startRegtest, type RegtestNode } from '@wcs/adapter-bitcoin/regtest';
import { WcsService, SENDER_CHAIN_AHEAD, type CreatedApplication } from '@wcs/server';
import { prepareTestKeystore, testConfig, testEnv, testLogger, TEST_ACTOR } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver, verifyCallback } from './support/callback-receiver';
import { waitForFunded, waitForHotWallet, type Withdraw } from './support/payouts';
import { expectOk, pollUntil, sleep } from './support/expect';
import { dumpHost, type DumpableDatabase, type DumpHost } from './support/pg-dump';
import { cliJson, describeCli, runCli } from './support/processes';
import { ADDRESS_CREATE } from './support/recharge-types';
import { sendOutputs } from './support/regtest-wallet';
import { tempDir } from './support/temp';

const CHAIN_ID = 150;
const CODE = 'BTCREG';
const TOKEN_ID = CHAIN_ID * 100;
const CHAIN = { id: CHAIN_ID, code: CODE, name: 'Bitcoin regtest (bcoin)', family: 'bitcoin', environment: 'test', network: 'regtest', nativeSymbol: 'BTC', decimals: 8, confirmations: 2, options: { bech32Hrp: 'rb' } } as const;
const NETWORK: BitcoinNetwork = { name: 'regtest', hrp: 'rb', coinType: 1, p2pkhVersion: 0x6f, p2shVersion: 0xc4, keyNamespace: 'btc:regtest:rb' };

interface PlanJson {
  sender: string;
  matched: Array<{ transferId: string; kind: string; appOrderNo: string | null; txHash: string }>;
  unmatchedOnChain: Array<{ txHash: string; payments: Array<{ toAddress: string; amount: string }> }>;
  unmatchedInDatabase: Array<{ transferId: string; kind: string }>;
}
/** A transaction on chain: what it spends (txid:vout) and the addresses it pays. */
interface ChainTx { txid: string; height: number; inputs: string[]; outputs: Array<{ address: string | null }> }

describe('restore drill on bcoin regtest: payouts and consolidations on both sides of one backup; nothing paid or consolidated twice', function () {
  this.timeout(300_000);
  let node: RegtestNode;
  let configFile: string;
  let host: DumpHost;
  let db: DumpableDatabase;
  let svc: WcsService | null = null;
  let pool: Pool | null = null;
  let app: CreatedApplication;
  let hot: string;
  let dump: string;
  let startHeight = 0;
  let lostWindow: ChainTx[] = [];
  /** The deposit address the lost consolidation is planned from again after the restore. */
  let sweepFrom = '';
  const receiver = new CallbackReceiver();
  const users = new Map<string, string>();
  const orders = new Map<string, Withdraw>();
  /** The deposit outputs (txid:vout), per user. */
  const deposits = new Map<string, string>();

  const env = () => ({
    [`WCS_RPC_TEST_${CODE}`]: node.url, [`WCS_SCAN_START_TEST_${CODE}`]: String(startHeight), WCS_CONFIG: configFile, WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100',
    WCS_SCAN_POLL_MS: '200', WCS_CALLBACK_POLL_MS: '50', WCS_CALLBACK_ALLOW_PRIVATE: '1', WCS_COLLECT_PLAN_MS: '200',
  });
  const cli = (args: string[]) => runCli(args, { ...process.env, ...testEnv(db.url, env()) }, 120_000);
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => {
    pool ??= new Pool({ connectionString: db.url, max: 2 });
    return (await pool.query(text, params)).rows as T[];
  };
  const start = async (workers = true) => {
    svc = await WcsService.start(testConfig(db.url, env()), testLogger(), { api: true, workers });
    return new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
  };
  const stop = async () => {
    await svc?.stop();
    svc = null;
    await pool?.end();
    pool = null;
  };
  /** Mines a block per poll until `done` holds. */
  const mineUntil = async <T>(what: string, read: () => Promise<T>, done: (v: T) => boolean): Promise<T> => {
    const r = await pollUntil(async () => {
      const v = await read();
      if (!done(v)) await node.mine(1);
      return v;
    }, done, 90_000, 250);
    expect(r.ok, `${what}: ${JSON.stringify(r.result)}`).to.equal(true);
    return r.result;
  };
  const order = async (client: SigningClient, appOrderNo: string): Promise<Withdraw> => {
    const w = expectOk(await client.post('/api/v1/wallet/withdraw/create', { appOrderNo, chainCode: CODE, chainTokenId: TOKEN_ID, toAddress: await node.newAddress(), amount: '0.01' })) as Withdraw;
    orders.set(appOrderNo, w);
    return w;
  };
  const paid = async (client: SigningClient, appOrderNo: string): Promise<Withdraw> => {
    const get = async () => expectOk(await client.get(`/api/v1/wallet/withdraw/get?id=${orders.get(appOrderNo)!.id}`)) as Withdraw;
    const w = await mineUntil(appOrderNo, get, (x) => x.status === 'SUCCESS' || x.status === 'FAILED');
    expect(w.status, JSON.stringify(w)).to.equal('SUCCESS');
    return w;
  };
  const issue = async (client: SigningClient, user: string) => {
    const { address } = expectOk(await client.post(ADDRESS_CREATE, { chainCode: CODE, externalUserId: user })) as { address: string };
    users.set(user, address);
  };
  /** Pays each user's address one output in one transaction; remembers the outputs. */
  const deposit = async (list: Array<[string, bigint]>) => {
    const txid = await sendOutputs(node, list.map(([u, sats]) => ({ address: users.get(u)!, sats })));
    const paysTo = Transaction.fromHex(await node.rpc<string>('getrawtransaction', [txid, false])).outs.map((o) => outputAddress(o.script, NETWORK));
    for (const [u] of list) deposits.set(u, `${txid}:${paysTo.indexOf(users.get(u)!)}`);
  };
  /** Waits until every collection item from these users' addresses has ended SUCCESS. */
  const consolidated = async (list: string[]) => {
    const addresses = list.map((u) => users.get(u)!);
    const items = await mineUntil(`consolidation of ${list.join(', ')}`, () => q<{ status: string }>(
      'SELECT status FROM collection_items WHERE application_id = $1 AND from_address = ANY($2::text[])', [app.id, addresses]),
    (rows) => rows.length === list.length && rows.every((r) => ['SUCCESS', 'FAILED'].includes(r.status)));
    expect(items.map((i) => i.status)).to.deep.equal(list.map(() => 'SUCCESS'));
  };
  /** Every transaction mined since the drill began (coinbases left out). */
  const chainTxs = async (): Promise<ChainTx[]> => {
    const tip = await node.rpc<number>('getblockcount');
    const out: ChainTx[] = [];
    for (let h = startHeight; h <= tip; h++) {
      const block = Block.fromHex(await node.rpc<string>('getblock', [await node.rpc<string>('getblockhash', [h]), 0]));
      for (const t of (block.transactions ?? []).slice(1)) {
        out.push({
          txid: t.getId(), height: h, inputs: t.ins.map((i) => `${Buffer.from(i.hash).reverse().toString('hex')}:${i.index}`),
          outputs: t.outs.map((o) => ({ address: outputAddress(o.script, NETWORK) })),
        });
      }
    }
    return out;
  };
  /** A consolidation: every input a deposit output, paying the hot wallet. */
  const isConsolidation = (t: ChainTx) => t.inputs.every((i) => [...deposits.values()].includes(i)) && t.outputs.some((o) => o.address === hot);
  /** The lost window's transaction paying an order. */
  const payment = (no: string) => lostWindow.find((t) => t.outputs.some((o) => o.address === orders.get(no)!.toAddress));
  const key = (o: { txHash?: string; tx_hash?: string; vout: number }) => `${o.txHash ?? o.tx_hash}:${o.vout}`;
  const recoverJson = async (extra: string[] = []) => {
    const args = ['recover', 'transfers', '--json', ...extra];
    const r = await cli(args);
    expect(r.code, describeCli(args, r)).to.equal(0);
    return cliJson(args, r) as { dryRun: boolean; plans: PlanJson[]; applied: Array<{ recorded: Array<{ txHash: string }>; released: boolean }> };
  };

  before(async () => {
    node = await startRegtest();
    startHeight = (await node.rpc<number>('getblockcount')) + 1;
    configFile = path.join(tempDir('wcs-drill-btc-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({
      chains: [CHAIN], tokens: [{ id: TOKEN_ID, chainCode: CODE, environment: 'test', symbol: 'BTC', name: 'Bitcoin regtest native coin', contract: null, decimals: 8 }],
    }));
    await prepareTestKeystore();
    await receiver.start();
    host = await dumpHost();
    db = await host.createDatabase();
  });
  after(async () => {
    await stop();
    await host?.stop();
    await receiver.stop();
    await node?.stop();
  });

  it('before the backup: a deposit consolidated, w1 paid, w2 accepted unsigned; pg_dump', async () => {
    svc = await WcsService.start(testConfig(db.url, env()), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'drill-btc', environment: 'test', chains: [CODE] });
    for (const kind of ['WITHDRAW', 'COLLECT'] as const) await svc.storage.applications.setCallback(TEST_ACTOR, app.id, kind, receiver.url(`/${kind.toLowerCase()}`));
    let client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    hot = await waitForHotWallet(q, app.id, CHAIN_ID, 30_000);
    await sendOutputs(node, [{ address: hot, sats: 3_000_000n }, { address: hot, sats: 3_100_000n }, { address: hot, sats: 3_200_000n }]);
    await node.mine(1);
    await waitForFunded(q, app.id, [TOKEN_ID]);
    await q(`INSERT INTO collection_policies (application_id, chain_token_id, threshold, max_fee_bps, native_value, on_confirmed, schedule_seconds)
             VALUES ($1, $2, 100000, 5000, NULL, true, NULL)`, [app.id, TOKEN_ID]);
    for (const u of ['u1', 'u2', 'u3', 'u4']) await issue(client, u);
    await deposit([['u1', 2_000_000n]]);
    await consolidated(['u1']);
    await order(client, 'w1');
    await paid(client, 'w1');
    await stop();

    client = await start(false); // no worker: w2 waits unsigned in the backup
    await order(client, 'w2');
    await stop();
    dump = await host.dump(db);
  });

  it('the lost window: w2 paid, w3 created and paid, two new deposits consolidated', async () => {
    const client = await start();
    await paid(client, 'w2');
    await order(client, 'w3');
    await paid(client, 'w3');
    await deposit([['u2', 1_500_000n], ['u3', 1_600_000n]]);
    await consolidated(['u2', 'u3']);
    await stop();
    lostWindow = await chainTxs();
    expect(lostWindow.filter(isConsolidation).map((t) => t.inputs.sort()), 'two consolidations').to.deep.equal([[deposits.get('u1')!], [deposits.get('u2')!, deposits.get('u3')!].sort()]);
  });

  it('pg_restore and a restart: the hot wallet and the deposit address of the lost consolidation held (SENDER_CHAIN_AHEAD), the lost deposits credited again, nothing signed', async () => {
    const original = db;
    db = await host.restore(dump);
    await original.drop();
    await start();
    // the hot wallet at start (w2's and w3's inputs spent); the deposit address once the lost deposits, credited again, are planned into a consolidation
    const holds = await mineUntil('two holds', () => q<{ address: string; evidence: { kind: string; outputs: Array<{ txHash: string; vout: number }> } }>(
      'SELECT address, evidence FROM sender_holds WHERE released_at IS NULL ORDER BY id'), (rows) => rows.length === 2);
    const sweep = await q<{ from_address: string }>(`SELECT from_address FROM transfers WHERE kind = 'SWEEP' AND status <> 'SUCCESS'`);
    const credited = await q<{ k: string }>(`SELECT tx_hash || ':' || position AS k FROM recharges`);
    expect(credited.map((r) => r.k), 'the lost deposits credited again').to.include.members([deposits.get('u2')!, deposits.get('u3')!]);
    expect(sweep, 'the lost consolidation planned again').to.have.length(1);
    sweepFrom = sweep[0]!.from_address;
    expect(holds.map((h) => h.address)).to.deep.equal([hot, sweepFrom]);
    const spentIn = (txids: string[]) => lostWindow.filter((t) => txids.includes(t.txid)).flatMap((t) => t.inputs).sort();
    const hotEvidence = holds[0]!.evidence.outputs.map(key);
    expect(hotEvidence, 'the hot wallet: w2\'s inputs (all known to the backup) spent').to.include.members(spentIn([payment('w2')!.txid]));
    expect(spentIn([payment('w2')!.txid, payment('w3')!.txid]), 'no output but w2\'s and w3\'s').to.include.members(hotEvidence);
    expect(holds[1]!.evidence.outputs.map(key).sort(), 'the deposit address: the lost consolidation\'s inputs').to.deep.equal(spentIn([lostWindow.filter(isConsolidation)[1]!.txid]));
    expect((await q('SELECT 1 FROM operator_alerts WHERE kind = $1', [SENDER_CHAIN_AHEAD])).length, 'one alert per hold').to.equal(2);
    // a day goes by: the scanner reads on far past the lost window (a recovery cannot start from its cursor)
    await node.mine(30);
    const tip = await node.rpc<number>('getblockcount');
    const cursor = await pollUntil(() => q<{ height: string }>('SELECT height::text AS height FROM scan_cursors WHERE chain_id = $1', [CHAIN_ID]), (r) => Number(r[0]?.height) >= tip - 2, 30_000, 100);
    expect(cursor.ok, 'the scanner at the tip').to.equal(true);
    await sleep(1000);
    const now = await chainTxs();
    expect(now.map((t) => t.txid), 'nothing sent since the restore').to.deep.equal(lostWindow.map((t) => t.txid));
    expect(await q(`SELECT id FROM transfers WHERE status NOT IN ('READY', 'SUCCESS')`), 'nothing signed, nothing failed').to.deep.equal([]);
  });

  it('wcs recover transfers: w2 and the consolidation MATCHED, w3 UNMATCHED_ON_CHAIN; --apply --release --accept-unmatched records them with their callbacks and marks the outputs spent', async () => {
    const dry = await recoverJson();
    expect(dry.dryRun).to.equal(true);
    const c2 = lostWindow.filter(isConsolidation)[1]!.txid;
    expect(dry.plans.map((p) => [p.sender, p.matched.map((m) => [m.kind, m.appOrderNo, m.txHash]), p.unmatchedOnChain.map((t) => [t.txHash, t.payments.map((x) => x.toAddress)]), p.unmatchedInDatabase]), JSON.stringify(dry.plans)).to.deep.equal([
      [hot, [['PAYOUT', 'w2', payment('w2')!.txid]], [[payment('w3')!.txid, [orders.get('w3')!.toAddress]]], []],
      [sweepFrom, [['SWEEP', null, c2]], [], []],
    ]);
    const mark = receiver.received.length;
    const applied = await recoverJson(['--apply', '--release', '--accept-unmatched']);
    expect(applied.applied.map((a) => [a.recorded.map((r) => r.txHash), a.released])).to.deep.equal([[[payment('w2')!.txid], true], [[c2], true]]);
    // each recorded attempt holds the chain's own bytes: a re-send after a reorg sends the transaction the chain has, never empty bytes
    const attempts = await q<{ tx_hash: string; raw: string }>(`SELECT tx_hash, encode(raw_tx, 'hex') AS raw FROM transfer_attempts WHERE transfer_input @> '{"recovered": true}' ORDER BY transfer_id`);
    expect(attempts.map((a) => a.tx_hash)).to.deep.equal([payment('w2')!.txid, c2]);
    for (const a of attempts) expect(a.raw, a.tx_hash).to.equal(await node.rpc<string>('getrawtransaction', [a.tx_hash, false]));
    const client = new SigningClient(svc!.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    const w2 = await paid(client, 'w2');
    expect(w2.txHash, 'w2 keeps the transaction the chain has').to.equal(payment('w2')!.txid);
    await consolidated(['u2', 'u3']);
    const events = (target: string, keep: (e: { id: number; status: string; txHash: string | null }) => boolean) => receiver.received.slice(mark).filter((x) => x.target === target)
      .map((x) => ({ req: x, e: JSON.parse(x.body.toString('utf8')) as { id: number; status: string; txHash: string | null } })).filter((x) => keep(x.e));
    const w2events = await pollUntil(async () => events('/withdraw', (e) => e.id === w2.id), (s) => s.some((x) => x.e.status === 'SUCCESS'), 30_000, 100);
    expect(w2events.result.map((x) => x.e.status)).to.deep.equal(['BROADCASTED', 'CONFIRMING', 'SUCCESS']);
    const collect = await pollUntil(async () => events('/collect', (e) => e.txHash === c2), (s) => s.length === 2, 30_000, 100);
    expect(collect.result.map((x) => x.e.status), 'each lost item\'s collect callback, with the chain\'s hash').to.deep.equal(['SUCCESS', 'SUCCESS']);
    for (const { req } of [...w2events.result, ...collect.result]) expect(verifyCallback(req, app.apiKey, app.apiSecret)).to.equal(null);
    expect(await q('SELECT 1 FROM sender_holds WHERE released_at IS NULL')).to.deep.equal([]);
    // the hot wallet's ledger holds no output the chain has spent
    const ledger = await q<{ tx_hash: string; vout: number }>('SELECT tx_hash, vout FROM hot_wallet_utxos WHERE spent_by IS NULL');
    const spent = new Set((await chainTxs()).flatMap((t) => t.inputs));
    expect(ledger.map(key).filter((o) => spent.has(o)), 'outputs the ledger believes unspent that the chain spent').to.deep.equal([]);
  });

  it('signing resumes: w4 paid once from outputs really unspent, a new deposit consolidated once; counted on chain, nothing paid or consolidated twice', async () => {
    const client = new SigningClient(svc!.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    await order(client, 'w4');
    await paid(client, 'w4');
    await deposit([['u4', 1_200_000n]]);
    await consolidated(['u4']);
    const txs = await chainTxs();
    for (const [no, w] of orders) expect(txs.filter((t) => t.outputs.some((o) => o.address === w.toAddress)).length, `order ${no} paid once`).to.equal(1);
    const inputs = txs.flatMap((t) => t.inputs);
    for (const [u, o] of deposits) expect(inputs.filter((i) => i === o), `${u}'s deposit consolidated once`).to.have.length(1);
    expect(txs.filter(isConsolidation).map((t) => t.inputs.length), 'three consolidations').to.deep.equal([1, 2, 1]);
    expect(new Set(inputs).size, 'no output spent twice').to.equal(inputs.length);
    expect(await q(`SELECT id, kind, status FROM transfers WHERE status <> 'SUCCESS'`), 'every transfer on chain, none failed').to.deep.equal([]);
    expect((await recoverJson()).plans).to.deep.equal([]);
  });
});
