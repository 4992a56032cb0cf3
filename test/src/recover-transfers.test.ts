/**
 * `wcs recover transfers` (docs/deployment.md, "Transfers after a restore"), end to end on anvil
 * with pg_dump / pg_restore: a dump taken after order A was paid, with order B accepted and
 * unsigned and order D accepted and waiting for approval; then B is paid, and C is created and
 * paid (not in the dump). The restored database holds the hot wallet. The dry run shows B MATCHED
 * to its transaction on chain, C's transaction UNMATCHED_ON_CHAIN and D UNMATCHED_IN_DATABASE; a
 * release is refused while C is unmatched, then accepted with --accept-unmatched: B ends SUCCESS
 * with the chain's transaction and its callbacks, D is paid once, each order one transaction.
 */
import { expect } from 'chai';
import { Pool } from 'pg';
import { anvilRpc, sendNative, startAnvil, startBlockClock, type AnvilDevnet, type BlockClock } from '@wcs/adapter-evm/devnet';
import { WcsService, SENDER_CHAIN_AHEAD, type CreatedApplication } from '@wcs/server';
import { prepareTestKeystore, testConfig, testEnv, testLogger, TEST_ACTOR } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver, verifyCallback } from './support/callback-receiver';
import { freshEvmAddress, waitForFunded, waitForHotWallet, type Withdraw, type WithdrawEvent } from './support/payouts';
import { expectOk, pollUntil } from './support/expect';
import { dumpHost, type DumpableDatabase, type DumpHost } from './support/pg-dump';
import { pastFirstLogin } from './support/first-login';
import { cliJson, describeCli, runCli } from './support/processes';

const ETH_TEST_CHAIN_ID = 102;
const ETH_TOKEN_ID = 10200;
const ETHER = 10n ** 18n;

interface PlanJson {
  chainCode: string; sender: string;
  matched: Array<{ transferId: string; withdrawalId: string | null; appOrderNo: string | null; txHash: string; sequence: string | null; amount: string }>;
  unmatchedOnChain: Array<{ txHash: string; blockHeight: string; payments: Array<{ toAddress: string; amount: string; token: string }>; resubmit: string }>;
  unmatchedInDatabase: Array<{ transferId: string; withdrawalId: string | null; appOrderNo: string | null }>;
}

describe('wcs recover transfers: a restored database\'s held hot wallet recovered, nothing paid twice (anvil, pg_dump / pg_restore)', function () {
  this.timeout(300_000);
  let anvil: AnvilDevnet;
  let clock: BlockClock;
  let host: DumpHost;
  let db: DumpableDatabase;
  let svc: WcsService | null = null;
  let pool: Pool | null = null;
  let app: CreatedApplication;
  let hot: string;
  let dump: string;
  const receiver = new CallbackReceiver();
  const orders: Record<'a' | 'b' | 'c' | 'd', Withdraw> = {} as Record<'a' | 'b' | 'c' | 'd', Withdraw>;
  let paidB: Withdraw;
  let paidC: Withdraw;
  const env = () => ({
    WCS_RPC_TEST_ETH: anvil.url, WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '200', WCS_CALLBACK_POLL_MS: '50', WCS_CALLBACK_ALLOW_PRIVATE: '1',
  });
  const cliEnv = () => ({ ...process.env, ...testEnv(db.url, env()) });
  const cli = (args: string[]) => runCli(args, cliEnv(), 120_000);
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => {
    pool ??= new Pool({ connectionString: db.url, max: 2 });
    return (await pool.query(text, params)).rows as T[];
  };
  const closePool = async () => {
    await pool?.end();
    pool = null;
  };
  const start = async (workers = true, console = false) => {
    svc = await WcsService.start(testConfig(db.url, { ...env(), ...(console ? { WCS_CONSOLE_PORT: '0' } : {}) }), testLogger(), { api: true, workers, console });
    return new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
  };
  const stop = async () => {
    await svc?.stop();
    svc = null;
  };
  const nonce = async () => Number(BigInt(await anvilRpc<string>(anvil.url, 'eth_getTransactionCount', [hot, 'pending'])));
  const order = async (client: SigningClient, appOrderNo: string, amount: string): Promise<Withdraw> =>
    expectOk(await client.post('/api/v1/wallet/withdraw/create', { appOrderNo, chainCode: 'ETH', chainTokenId: ETH_TOKEN_ID, toAddress: freshEvmAddress(), amount })) as Withdraw;
  const get = async (client: SigningClient, id: number) => expectOk(await client.get(`/api/v1/wallet/withdraw/get?id=${id}`)) as Withdraw & { riskLevel: string | null };
  const until = async (client: SigningClient, id: number, status: string) => {
    const r = await pollUntil(() => get(client, id), (w) => w.status === status || w.status === 'FAILED', 60_000, 100);
    expect(r.result.status, JSON.stringify(r.result)).to.equal(status);
    return r.result;
  };
  const recoverJson = async (extra: string[] = []) => {
    const args = ['recover', 'transfers', '--json', ...extra];
    const r = await cli(args);
    return { r, body: cliJson(args, r) as { dryRun: boolean; plans: PlanJson[]; applied: Array<{ recorded: Array<{ transferId: string; txHash: string }>; released: boolean; note: string | null }>; error?: { name: string; msg: string } }, args };
  };
  /** Every transaction from the hot wallet on chain: its recipient. */
  const sentTo = async (): Promise<string[]> => {
    const tip = Number(BigInt(await anvilRpc<string>(anvil.url, 'eth_blockNumber', [])));
    const out: string[] = [];
    for (let h = 0; h <= tip; h++) {
      const b = await anvilRpc<{ transactions: Array<{ from: string; to: string }> }>(anvil.url, 'eth_getBlockByNumber', [`0x${h.toString(16)}`, true]);
      for (const t of b.transactions) if (t.from.toLowerCase() === hot.toLowerCase()) out.push(t.to.toLowerCase());
    }
    return out;
  };

  before(async () => {
    anvil = await startAnvil({ chainId: 11155111 });
    clock = await startBlockClock(anvil.url, 100);
    await prepareTestKeystore();
    await receiver.start();
    host = await dumpHost();
    db = await host.createDatabase();
  });
  after(async () => {
    await stop();
    await closePool();
    await host?.stop();
    await receiver.stop();
    await clock?.stop();
    await anvil?.stop();
  });

  it('A paid; the dump holds B unsigned and D waiting for approval; then B paid, C created and paid (not in the dump)', async () => {
    svc = await WcsService.start(testConfig(db.url, env()), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'recover', environment: 'test', chains: ['ETH'] });
    await svc.storage.applications.setCallback(TEST_ACTOR, app.id, 'WITHDRAW', receiver.url('/merchant/withdraw'));
    let client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    hot = await waitForHotWallet(q, app.id, ETH_TEST_CHAIN_ID, 30_000);
    await sendNative(anvil.url, hot, 10n * ETHER, { wait: true });
    await waitForFunded(q, app.id, [ETH_TOKEN_ID]);
    orders.a = await order(client, 'a-1', '0.01');
    await until(client, orders.a.id, 'SUCCESS');
    await stop();
    const limits = await cli(['withdraw', 'limits', '--app', String(app.id), '--token', String(ETH_TOKEN_ID), '--approval-over', '0.05']);
    expect(limits.code, describeCli(['withdraw', 'limits'], limits)).to.equal(0);

    client = await start(false); // no worker: B and D wait unsigned
    orders.b = await order(client, 'b-1', '0.01');
    orders.d = await order(client, 'd-1', '0.1');
    await stop();
    await closePool();
    dump = await host.dump(db); // the backup

    client = await start();
    paidB = await until(client, orders.b.id, 'SUCCESS');
    const held = await pollUntil(() => get(client, orders.d.id), (w) => w.riskLevel === 'HIGH', 30_000, 100);
    expect(held.result.status, 'D waits for approval').to.equal('PROCESSING');
    orders.c = await order(client, 'c-1', '0.02');
    paidC = await until(client, orders.c.id, 'SUCCESS');
    expect(await nonce()).to.equal(3);
    await stop();
    await closePool();
  });

  it('after pg_restore the hot wallet is held; D approved waits; the dry run shows B MATCHED, C UNMATCHED_ON_CHAIN, D UNMATCHED_IN_DATABASE and changes nothing', async () => {
    const original = db;
    db = await host.restore(dump);
    await original.drop();
    const client = await start(true, true);
    const raised = await pollUntil(() => q('SELECT 1 FROM operator_alerts WHERE kind = $1', [SENDER_CHAIN_AHEAD]), (rows) => rows.length > 0, 30_000, 100);
    expect(raised.ok, 'a SENDER_CHAIN_AHEAD alert').to.equal(true);
    // D is approved by another operator than the one who set the threshold (four eyes): it becomes a transfer, held too
    await pollUntil(() => get(client, orders.d.id), (w) => w.riskLevel === 'HIGH', 30_000, 100);
    await q(`INSERT INTO audit_log (actor, actor_role, channel, source, action, target) VALUES ('olga', 'operator', 'console', 'test', 'withdraw.limits.set', $1)`, [`app:${app.id}/token:${ETH_TOKEN_ID}`]);
    const approve = await cli(['withdraw', 'approve', String(orders.d.id), '--json']);
    expect(approve.code, describeCli(['withdraw', 'approve'], approve)).to.equal(0);
    const made = await pollUntil(() => q<{ n: number }>(`SELECT count(*)::int AS n FROM withdrawals WHERE id = ANY($1::bigint[]) AND transfer_id IS NOT NULL`, [[orders.b.id, orders.d.id]]), (r) => r[0]!.n === 2, 30_000, 100);
    expect(made.ok, 'B and D are READY transfers').to.equal(true);
    expect(await nonce()).to.equal(3);

    const { r, body, args } = await recoverJson();
    expect(r.code, describeCli(args, r)).to.equal(0);
    expect(body.dryRun).to.equal(true);
    expect(body.plans).to.have.length(1);
    const p = body.plans[0]!;
    expect([p.chainCode, p.sender]).to.deep.equal(['ETH', hot]);
    expect(p.matched.map((m) => [m.withdrawalId, m.appOrderNo, m.txHash, m.sequence, m.amount])).to.deep.equal([[String(orders.b.id), 'b-1', paidB.txHash, '1', '0.01']]);
    expect(p.unmatchedOnChain.map((t) => [t.txHash, t.payments.map((x) => [x.toAddress.toLowerCase(), x.amount, x.token])])).to.deep.equal([[paidC.txHash, [[orders.c.toAddress.toLowerCase(), '0.02', 'ETH']]]]);
    expect(p.unmatchedOnChain[0]!.resubmit).to.match(/paid a second time/);
    expect(p.unmatchedInDatabase.map((i) => [i.withdrawalId, i.appOrderNo])).to.deep.equal([[String(orders.d.id), 'd-1']]);
    // the text form says the same
    const text = await cli(['recover', 'transfers']);
    expect(text.code).to.equal(0);
    expect(text.stdout).to.include('dry run').and.include('MATCHED (1)').and.include('UNMATCHED_ON_CHAIN (1)').and.include('UNMATCHED_IN_DATABASE (1)');

    // the console's page: the held sender, its evidence and the same plan, read-only; a generated password is changed first
    const viewer = cliJson(['operator', 'create'], await cli(['operator', 'create', '--username', 'vic', '--role', 'viewer', '--json'])) as { password: string };
    const cookies = new Map<string, string>();
    const request = async (method: 'GET' | 'POST', path: string, form?: Record<string, string>) => {
      const res = await fetch(svc!.consoleUrl + path, {
        method, redirect: 'manual',
        headers: { cookie: [...cookies].map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('; '), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
        ...(form ? { body: new URLSearchParams(form).toString() } : {}),
      });
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        const i = pair!.indexOf('=');
        cookies.set(pair!.slice(0, i), decodeURIComponent(pair!.slice(i + 1)));
      }
      return { status: res.status, text: await res.text() };
    };
    expect((await request('POST', '/login', { username: 'vic', password: viewer.password, totp: '' })).status).to.equal(303);
    expect((await request('GET', '/recovery')).status, 'refused until the password is changed').to.equal(403);
    await pastFirstLogin(db.url, ['vic']);
    const page = await request('GET', '/recovery');
    expect(page.status, page.text).to.equal(200);
    for (const part of [hot, 'SEQUENCE'.toLowerCase(), paidB.txHash!, paidC.txHash!, 'Matched (1)', 'Unmatched on chain (1)', 'Unmatched in the database (1)', 'wcs recover transfers --apply --release']) {
      expect(page.text, part).to.include(part);
    }
    expect(page.text).to.not.include('<form method="post" action="/recovery');

    expect((await get(client, orders.b.id)).status).to.equal('PROCESSING');
    expect(await q(`SELECT 1 FROM audit_log WHERE action = 'transfers.recover'`)).to.deep.equal([]);
    expect((await q<{ status: string }>(`SELECT x.status FROM transfers x JOIN withdrawals w ON w.transfer_id = x.id WHERE w.id = ANY($1::bigint[])`, [[orders.b.id, orders.d.id]])).map((x) => x.status)).to.deep.equal(['READY', 'READY']);
  });

  it('bad input and a release with C unmatched are refused: a usage error (2) or a named refusal (1), nothing changed', async () => {
    const cases: Array<[string[], number, string]> = [
      [['--chain', 'NOPE'], 2, 'UsageError'],
      [['--sender', 'not-an-address'], 2, 'UsageError'],
      [['--from-height', 'ten'], 2, 'UsageError'],
      [['--release'], 2, 'UsageError'],
      [['--sender', freshEvmAddress()], 1, 'RECOVER_SENDER_NOT_HELD'],
      [['--apply', '--release'], 1, 'RECOVER_UNMATCHED_ON_CHAIN'],
    ];
    for (const [extra, code, name] of cases) {
      const { r, body, args } = await recoverJson(extra);
      expect(r.code, describeCli(args, r)).to.equal(code);
      expect(body.error!.name, describeCli(args, r)).to.equal(name);
    }
    expect(await q(`SELECT 1 FROM audit_log WHERE action IN ('transfers.recover', 'transfers.release-sender')`)).to.deep.equal([]);
    expect((await q<{ status: string }>(`SELECT x.status FROM transfers x JOIN withdrawals w ON w.transfer_id = x.id WHERE w.id = $1`, [orders.b.id]))[0]!.status).to.equal('READY');
    expect(await q('SELECT 1 FROM sender_holds WHERE released_at IS NULL')).to.have.length(1);
  });

  it('--apply --release --accept-unmatched: B takes its transaction on chain (BROADCASTED, CONFIRMING, SUCCESS callbacks), the sender is released, D is paid once; each order one transaction; audited', async () => {
    const client = new SigningClient(svc!.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    const mark = receiver.received.length;
    const { r, body, args } = await recoverJson(['--apply', '--release', '--accept-unmatched']);
    expect(r.code, describeCli(args, r)).to.equal(0);
    expect(body.dryRun).to.equal(false);
    expect(body.applied).to.have.length(1);
    expect(body.applied[0]!.recorded.map((x) => x.txHash)).to.deep.equal([paidB.txHash]);
    expect(body.applied[0]!.released).to.equal(true);
    expect(body.applied[0]!.note).to.include(paidC.txHash!);

    const b = await until(client, orders.b.id, 'SUCCESS');
    expect(b.txHash, 'B keeps the one transaction the chain has').to.equal(paidB.txHash);
    const events = () => receiver.received.slice(mark).map((x) => ({ req: x, e: JSON.parse(x.body.toString('utf8')) as WithdrawEvent })).filter((x) => x.e.id === orders.b.id);
    const got = await pollUntil(async () => events().map((x) => x.e.status), (s) => s.includes('SUCCESS'), 30_000, 100);
    expect(got.result).to.deep.equal(['BROADCASTED', 'CONFIRMING', 'SUCCESS']);
    for (const { req, e } of events()) {
      expect(verifyCallback(req, app.apiKey, app.apiSecret)).to.equal(null);
      expect(e.txHash).to.equal(paidB.txHash);
    }

    const d = await until(client, orders.d.id, 'SUCCESS');
    const dTx = await anvilRpc<{ nonce: string }>(anvil.url, 'eth_getTransactionByHash', [d.txHash]);
    expect(Number(BigInt(dTx.nonce)), 'D signed at the next nonce after C').to.equal(3);
    expect(await nonce()).to.equal(4);
    const to = await sentTo();
    for (const o of [orders.a, orders.b, orders.c, orders.d]) expect(to.filter((x) => x === o.toAddress.toLowerCase()), o.appOrderNo).to.have.length(1);
    expect(to).to.have.length(4);

    const audit = await q<{ action: string; after: Record<string, unknown> }>(`SELECT action, after FROM audit_log WHERE target = $1 ORDER BY id`, [`sender:ETH:${hot}`]);
    expect(audit.map((a) => a.action)).to.deep.equal(['transfers.release-sender', 'transfers.recover']);
    expect(audit[1]!.after).to.deep.include({
      counts: { matched: 1, recorded: 1, unmatchedOnChain: 1, unmatchedInDatabase: 1 }, unmatchedOnChain: [paidC.txHash], released: true, acceptedUnmatched: true,
    });
    expect(await q('SELECT 1 FROM sender_holds WHERE released_at IS NULL')).to.deep.equal([]);
    // nothing left to recover
    const again = await recoverJson();
    expect(again.body.plans).to.deep.equal([]);
  });
});
