/**
 * RECHARGE_CREDITED and the operator's chain event commands, on anvil through the service's real
 * scanner: an application that turns RECHARGE_CREDITED on (wcs app set-recharge-credited, audited)
 * gets exactly one `recharge_credited` callback per deposit, right after its SETTLED `recharge`
 * callback, with the recharge's fields and the user it credits; one that does not gets none.
 * `wcs subscriptions` and `wcs outflows` work through the same service as the API, audited, and
 * refuse bad input.
 */
import { expect } from 'chai';
import * as os from 'node:os';
import { Pool } from 'pg';
import { anvilRpc, mine, sendNative, startAnvil, type AnvilDevnet } from '@wcs/adapter-evm/devnet';
import type { CreatedApplication } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testEnv, testLogger, TEST_ACTOR, type TestDatabase } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver, verifyCallback } from './support/callback-receiver';
import { expectOk, pollUntil, sleep } from './support/expect';
import { cliJson, describeCli, runCli } from './support/processes';
import { randomAddress as fresh } from './support/evm-address';

const ETH_TEST_CHAIN_ID = 102;
const MIN_CONF = 3;
const ETHER = 10n ** 18n;

describe('RECHARGE_CREDITED, wcs subscriptions and wcs outflows (anvil)', function () {
  this.timeout(240_000);
  let anvil: AnvilDevnet;
  let db: TestDatabase;
  let pool: Pool;
  let svc: WcsService;
  let env: Record<string, string | undefined>;
  const receiver = new CallbackReceiver();
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function wcs(args: string[], exit: number): Promise<any> {
    const r = await runCli([...args, '--json'], env);
    expect(r.code, describeCli(args, r)).to.equal(exit);
    return cliJson(args, r);
  }

  const bodies = (a: CreatedApplication) =>
    receiver.received.filter((r) => r.target === `/merchant/${a.id}/recharge`).map((r) => {
      expect(verifyCallback(r, a.apiKey, a.apiSecret)).to.equal(null);
      return JSON.parse(r.body.toString('utf8')) as Record<string, unknown>;
    });

  async function deposit(a: CreatedApplication, user: string): Promise<{ address: string; txHash: string }> {
    const c = new SigningClient(svc.url, { apiKey: a.apiKey, apiSecret: a.apiSecret });
    const address = (expectOk(await c.post('/api/v1/wallet/address/create', { chainCode: 'ETH', externalUserId: user })) as { address: string }).address;
    await sleep(200); // the scanner's watch list takes the new address at its next step
    const txHash = await sendNative(anvil.url, address, ETHER / 4n);
    await mine(anvil.url, MIN_CONF);
    return { address, txHash };
  }

  before(async () => {
    anvil = await startAnvil({ chainId: 11155111 });
    await prepareTestKeystore();
    await receiver.start();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 2 });
    // WCS_CALLBACK_PER_ENDPOINT=1: deliveries to the one receiver are sequential, so that their arrival order (asserted
    // below) is the outbox order however busy the machine (here a deposit's PENDING, CONFIRMED and SETTLED fall due almost together)
    const extra = { WCS_RPC_TEST_ETH: anvil.url, WCS_SCAN_POLL_MS: '50', WCS_CALLBACK_POLL_MS: '50', WCS_CALLBACK_ALLOW_PRIVATE: '1', WCS_CALLBACK_PER_ENDPOINT: '1' };
    env = { ...process.env, ...testEnv(db.url, extra) };
    svc = await WcsService.start(testConfig(db.url, extra), testLogger(), { api: true, workers: true });
  });

  after(async () => {
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await receiver.stop();
    await anvil?.stop();
  });

  it('off (the default): a deposit gets its recharge callbacks and no recharge_credited', async () => {
    const a = await svc.storage.applications.create(TEST_ACTOR, { name: 'plain', environment: 'test', chains: ['ETH'] });
    expect(a.rechargeCredited).to.equal(false);
    await svc.storage.applications.setCallback(TEST_ACTOR, a.id, 'RECHARGE', receiver.url(`/merchant/${a.id}/recharge`));
    const { txHash } = await deposit(a, 'u1');
    const r = await pollUntil(async () => bodies(a), (l) => l.some((e) => e.txStatus === 'SETTLED'), 30_000, 100);
    expect(r.ok).to.equal(true);
    await mine(anvil.url, 1);
    await sleep(500);
    expect(bodies(a).map((e) => [e.event, e.txStatus, e.txHash])).to.deep.equal([['recharge', 'PENDING', txHash], ['recharge', 'CONFIRMED', txHash], ['recharge', 'SETTLED', txHash]]);
  });

  it('on (wcs app set-recharge-credited, audited): one recharge_credited per deposit right after SETTLED, with the recharge\'s fields and the user', async () => {
    const a = await svc.storage.applications.create(TEST_ACTOR, { name: 'credited', environment: 'test', chains: ['ETH'] });
    await svc.storage.applications.setCallback(TEST_ACTOR, a.id, 'RECHARGE', receiver.url(`/merchant/${a.id}/recharge`));
    const bad = await runCli(['app', 'set-recharge-credited', '--app', String(a.id), '--json'], env);
    expect(bad.code, describeCli([], bad)).to.equal(2);
    const both = await runCli(['app', 'set-recharge-credited', '--app', String(a.id), '--on', '--off', '--json'], env);
    expect(both.code).to.equal(2);
    expect(await wcs(['app', 'set-recharge-credited', '--app', String(a.id), '--on'], 0)).to.include({ id: a.id, rechargeCredited: true });
    expect(await wcs(['app', 'set-recharge-credited', '--app', String(a.id), '--on'], 0)).to.include({ rechargeCredited: true });
    const audit = await q<{ actor: string; before: unknown; after: unknown }>(`SELECT actor, before, after FROM audit_log WHERE action = 'app.recharge-credited.set' AND target = $1`, [`app:${a.id}`]);
    expect(audit, 'the second call changed nothing and wrote nothing').to.deep.equal([{ actor: `cli:${os.userInfo().username}`, before: { rechargeCredited: false }, after: { rechargeCredited: true } }]);
    const { address, txHash } = await deposit(a, 'carol');
    const r = await pollUntil(async () => bodies(a), (l) => l.some((e) => e.event === 'recharge_credited'), 30_000, 100);
    expect(r.ok, JSON.stringify(r.result)).to.equal(true);
    await mine(anvil.url, 2);
    await sleep(500);
    const got = bodies(a);
    expect(got.map((e) => [e.event, e.txStatus])).to.deep.equal([['recharge', 'PENDING'], ['recharge', 'CONFIRMED'], ['recharge', 'SETTLED'], ['recharge_credited', 'SETTLED']]);
    const settled = got[2]!;
    expect(got[3]).to.deep.equal({ ...settled, event: 'recharge_credited', externalUserId: 'carol', memo: null });
    expect(settled).to.include({ address, txHash, amount: '0.25', confirmations: -1, minConfirmations: -1, chainId: ETH_TEST_CHAIN_ID });
    const tasks = await q<{ biz_type: string; biz_id: string; id: string }>(`SELECT biz_type, biz_id::text AS biz_id, id::text AS id FROM callback_tasks WHERE application_id = $1 ORDER BY id`, [a.id]);
    expect(tasks.map((t) => t.biz_type)).to.deep.equal(['RECHARGE', 'RECHARGE', 'RECHARGE', 'RECHARGE']);
    expect(new Set(tasks.map((t) => t.biz_id)).size).to.equal(1);
    const notices = await q<{ tx_status: string }>('SELECT tx_status FROM recharge_notices WHERE recharge_id = $1 ORDER BY task_id', [settled.id]);
    expect(notices.map((n) => n.tx_status)).to.deep.equal(['PENDING', 'CONFIRMED', 'SETTLED', 'CREDITED']);
    expect(await wcs(['app', 'set-recharge-credited', '--app', String(a.id), '--off'], 0)).to.include({ rechargeCredited: false });
  });

  it('wcs subscriptions create|list|show|events|delete and wcs outflows: the API\'s rules, audited, bad input refused with nothing written', async () => {
    const a = await svc.storage.applications.create(TEST_ACTOR, { name: 'ops', environment: 'test', chains: ['ETH'] });
    await svc.storage.applications.setCallback(TEST_ACTOR, a.id, 'CHAIN_EVENT', receiver.url(`/merchant/${a.id}/chain-event`));
    const m = fresh();
    const before = (await q<{ n: number }>('SELECT count(*)::int AS n FROM chain_subscriptions'))[0]!.n;
    // bad input: usage errors (exit 2) and refusals (exit 1), nothing written
    expect((await runCli(['subscriptions', 'create', '--app', String(a.id), '--ref', 'r1', '--chain', 'ETH', '--json'], env)).code).to.equal(2);
    expect((await runCli(['subscriptions', 'create', '--app', String(a.id), '--ref', 'r1', '--chain', 'ETH', '--address', m, '--direction', 'UP', '--json'], env)).code).to.equal(2);
    expect((await runCli(['subscriptions', 'create', '--app', String(a.id), '--ref', 'r1', '--chain', 'ETH', '--address', m, '--min', '0', '--json'], env)).code).to.equal(2);
    const invalid = await runCli(['subscriptions', 'create', '--app', String(a.id), '--ref', 'r1', '--chain', 'ETH', '--address', '0xnope', '--json'], env);
    expect(invalid.code).to.equal(1);
    expect(cliJson([], invalid).error).to.include({ code: 1008001004 });
    expect((await runCli(['subscriptions', 'show', 'abc', '--app', String(a.id), '--json'], env)).code).to.equal(2);
    expect((await q<{ n: number }>('SELECT count(*)::int AS n FROM chain_subscriptions'))[0]!.n).to.equal(before);
    // create, idempotent on --ref, audited once
    const made = await wcs(['subscriptions', 'create', '--app', String(a.id), '--ref', 'r1', '--chain', 'ETH', '--address', m, '--direction', 'IN'], 0);
    expect(made).to.include({ created: true, appSubscriptionNo: 'r1', direction: 'IN', addressCount: 1, applicationId: a.id });
    expect((await wcs(['subscriptions', 'create', '--app', String(a.id), '--ref', 'r1', '--chain', 'ETH', '--address', m, '--direction', 'IN'], 0)).created).to.equal(false);
    expect((await wcs(['subscriptions', 'list', '--app', String(a.id)], 0)).map((s: { id: number }) => s.id)).to.deep.equal([made.id]);
    expect((await wcs(['subscriptions', 'show', String(made.id), '--app', String(a.id)], 0)).addresses).to.deep.equal([m]);
    const otherApp = await svc.storage.applications.create(TEST_ACTOR, { name: 'ops2', environment: 'test', chains: ['ETH'] });
    const hidden = await runCli(['subscriptions', 'show', String(made.id), '--app', String(otherApp.id), '--json'], env);
    expect(hidden.code).to.equal(1);
    expect(cliJson([], hidden).error).to.include({ code: 1008001001 });
    // the scanner picks it up: an event is listed by wcs subscriptions events
    await sleep(300);
    const tx = await sendNative(anvil.url, m, ETHER / 10n);
    await mine(anvil.url, MIN_CONF);
    const listed = await pollUntil(() => wcs(['subscriptions', 'events', '--app', String(a.id)], 0), (l: Array<{ txHash: string; status: string }>) => l.some((e) => e.txHash === tx && e.status === 'CONFIRMED'), 30_000, 200);
    expect(listed.ok, JSON.stringify(listed.result)).to.equal(true);
    expect(await wcs(['subscriptions', 'delete', String(made.id), '--app', String(a.id)], 0)).to.deep.equal({ id: made.id, status: 'DELETED' });
    const audit = await q<{ action: string; target: string }>(`SELECT action, target FROM audit_log WHERE target = $1 ORDER BY id`, [`subscription:${made.id}`]);
    expect(audit.map((x) => x.action)).to.deep.equal(['subscription.create', 'subscription.delete']);
    expect(await wcs(['outflows', '--app', String(a.id)], 0)).to.deep.equal([]);
    expect((await runCli(['outflows', '--kind', 'COLD', '--json'], env)).code).to.equal(2);
    expect(await anvilRpc<string>(anvil.url, 'eth_chainId')).to.equal('0xaa36a7');
  });
});
