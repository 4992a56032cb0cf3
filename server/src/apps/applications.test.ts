import { expect } from 'chai';
import * as sinon from 'sinon';
import { openStorage, type StorageHandle } from '../service';
import { createTestDatabase, testConfig, testLogger, TEST_MASTER_KEY, type TestDatabase, TEST_ACTOR } from '../testing';
import { CredentialStore } from '../auth/credentials';
import { SecretBox } from '../crypto/secret-box';
import { TOKENS } from '../container';
import { ErrorCodes, isWcsError } from '@wcs/core';
import { AuditLog, type AuditActor, type AuditEntry } from '../operators/audit';
import type { CallbackService } from '../callbacks/callback-service';

async function rejects(p: Promise<unknown>, code: number): Promise<void> {
  try {
    await p;
  } catch (e) {
    expect(isWcsError(e), String(e)).to.equal(true);
    expect((e as { code: number }).code).to.equal(code);
    return;
  }
  expect.fail('expected a rejection');
}

describe('applications: create, secrets at rest, rotation, callbacks', () => {
  let db: TestDatabase;
  let storage: StorageHandle;
  let creds: CredentialStore;
  before(async () => {
    db = await createTestDatabase();
    storage = await openStorage(testConfig(db.url), testLogger());
    creds = storage.container.resolve<CredentialStore>(TOKENS.CredentialStore);
    await creds.start();
  });
  after(async () => {
    await creds.stop();
    await storage.close();
    await db.drop();
  });

  it('creates test and live applications with prefixed keys; the secret is stored sealed only', async () => {
    const t = await storage.applications.create(TEST_ACTOR, { name: ' Game ', environment: 'test', chains: ['eth', 'BTC', 'ETH'] });
    expect(t.apiKey).to.match(/^pk_test_[0-9a-f]{32}$/);
    expect(t.apiSecret).to.match(/^[0-9a-f]{64}$/);
    expect(t).to.include({ name: 'Game', environment: 'test', status: 'ACTIVE' });
    expect(t.chains).to.deep.equal(['ETH', 'BTC']);
    const l = await storage.applications.create(TEST_ACTOR, { name: 'Exchange', environment: 'live', chains: [] });
    expect(l.apiKey).to.match(/^pk_live_/);
    const [rows] = await storage.database.sequelize.query(`SELECT encode(ciphertext, 'hex') AS c, key_id FROM application_secrets WHERE application_id = :id`, { replacements: { id: t.id } });
    const row = (rows as Array<{ c: string; key_id: string }>)[0]!;
    expect(row.c).not.to.contain(Buffer.from(t.apiSecret).toString('hex'));
    const [dump] = await storage.database.sequelize.query(`SELECT row_to_json(a)::text AS j FROM applications a`);
    expect(JSON.stringify(dump)).not.to.contain(t.apiSecret);
    expect(row.key_id).to.equal(new SecretBox(Buffer.from(TEST_MASTER_KEY, 'hex')).keyId);
    expect(JSON.stringify(await storage.applications.list())).not.to.contain(t.apiSecret);
  });

  it('refuses bad input and persists nothing', async () => {
    const before = (await storage.applications.list()).length;
    await rejects(storage.applications.create(TEST_ACTOR, { name: 'x', environment: 'test', chains: ['NOPE'] }), 1003001001);
    await rejects(storage.applications.create(TEST_ACTOR, { name: '', environment: 'test', chains: [] }), 1000001003);
    await rejects(storage.applications.create(TEST_ACTOR, { name: 'x', environment: 'prod', chains: [] }), 1000001003);
    await rejects(storage.applications.create(TEST_ACTOR, { name: 'x'.repeat(101), environment: 'test', chains: [] }), 1000001003);
    expect((await storage.applications.list()).length).to.equal(before);
    await rejects(storage.applications.get(99999), 1002001001);
  });

  it('validates callback URLs per environment and biz type', async () => {
    const live = await storage.applications.create(TEST_ACTOR, { name: 'L', environment: 'live', chains: ['ETH'] });
    const test = await storage.applications.create(TEST_ACTOR, { name: 'T', environment: 'test', chains: ['ETH'] });
    await rejects(storage.applications.setCallback(TEST_ACTOR, live.id, 'RECHARGE', 'http://merchant.example/cb'), 1002001003);
    await rejects(storage.applications.setCallback(TEST_ACTOR, live.id, 'RECHARGE', 'https://user:pw@merchant.example/cb'), 1002001003);
    await rejects(storage.applications.setCallback(TEST_ACTOR, live.id, 'RECHARGE', 'not a url'), 1002001003);
    await rejects(storage.applications.setCallback(TEST_ACTOR, live.id, 'DEPOSIT', 'https://merchant.example/cb'), 1000001003);
    const v = await storage.applications.setCallback(TEST_ACTOR, live.id, 'WITHDRAW', 'https://merchant.example/cb/withdraw');
    expect(v.callbacks).to.deep.equal({ WITHDRAW: 'https://merchant.example/cb/withdraw' });
    const t = await storage.applications.setCallback(TEST_ACTOR, test.id, 'RECHARGE', 'http://localhost:9999/cb');
    expect(t.callbacks.RECHARGE).to.equal('http://localhost:9999/cb');
  });

  it('rotation keeps the old secret for the grace period; disable takes effect at once (LISTEN/NOTIFY)', async () => {
    const app = await storage.applications.create(TEST_ACTOR, { name: 'R', environment: 'test', chains: ['ETH'] });
    const keys = async () => ((await creds.get(app.apiKey))!.secrets.map((s) => s.key.toString()));
    expect(await keys()).to.deep.equal([app.apiSecret]);
    expect(creds.cacheActive).to.equal(true);

    const r1 = await storage.applications.rotateSecret(TEST_ACTOR, app.id, 3600);
    await new Promise((r) => setTimeout(r, 200)); // let the NOTIFY arrive
    expect(await keys()).to.deep.equal([r1.apiSecret, app.apiSecret]);

    const r2 = await storage.applications.rotateSecret(TEST_ACTOR, app.id, 0);
    await new Promise((r) => setTimeout(r, 200));
    expect(await keys()).to.deep.equal([r2.apiSecret]);

    await storage.applications.setStatus(TEST_ACTOR, app.id, 'DISABLED');
    await new Promise((r) => setTimeout(r, 200));
    expect((await creds.get(app.apiKey))!.status).to.equal('DISABLED');
    expect(await creds.get('pk_test_unknown0000')).to.equal(null);
  });

  it('does not cache a credential read that a change notification overtook', async () => {
    const app = await storage.applications.create(TEST_ACTOR, { name: 'Race', environment: 'test', chains: ['ETH'] });
    await new Promise((r) => setTimeout(r, 200));
    const sequelize = storage.database.sequelize;
    const realQuery = sequelize.query.bind(sequelize);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let held = false;
    const stub = sinon.stub(sequelize, 'query').callsFake((async (...args: Parameters<typeof realQuery>) => {
      const result = await realQuery(...args);
      if (!held && String(args[0]).includes('FROM applications a')) {
        held = true; // the read is done (ACTIVE); hold it until the disable has been notified
        await gate;
      }
      return result;
    }) as unknown as typeof sequelize.query);
    try {
      const pending = creds.get(app.apiKey);
      while (!held) await new Promise((r) => setTimeout(r, 5));
      stub.restore();
      await storage.applications.setStatus(TEST_ACTOR, app.id, 'DISABLED');
      await new Promise((r) => setTimeout(r, 200)); // notification delivered during the load
      release();
      expect((await pending)!.status).to.equal('ACTIVE'); // what was read
      expect((await creds.get(app.apiKey))!.status).to.equal('DISABLED'); // not cached: re-read
    } finally {
      stub.restore();
      release();
    }
  });
});

describe('applications and callbacks: every change audited, in its transaction, never a secret', () => {
  let db: TestDatabase;
  let storage: StorageHandle;
  let callbacks: CallbackService;
  const alice: AuditActor = { name: 'alice', role: 'operator', channel: 'console', source: '10.0.0.7' };
  before(async () => {
    db = await createTestDatabase();
    storage = await openStorage(testConfig(db.url), testLogger());
    callbacks = storage.container.resolve<CallbackService>(TOKENS.CallbackService);
  });
  after(async () => {
    await storage.close();
    await db.drop();
  });

  const entries = async (action?: string): Promise<AuditEntry[]> => new AuditLog(storage.database.sequelize).list({ limit: 500, action: action ?? null });
  const count = async () => (await entries()).length;
  const dump = async () => {
    const [rows] = await storage.database.sequelize.query('SELECT row_to_json(a)::text AS j FROM audit_log a');
    return JSON.stringify(rows);
  };

  it('create: app.create with the application, the actor and no secret; bad input writes nothing', async () => {
    const n = await count();
    await rejects(storage.applications.create(alice, { name: 'x', environment: 'test', chains: ['NOPE'] }), 1003001001);
    await rejects(storage.applications.create(alice, { name: '', environment: 'test', chains: [] }), 1000001003);
    expect(await count()).to.equal(n);
    const a = await storage.applications.create(alice, { name: 'Audited', environment: 'test', chains: ['eth'] });
    const [e] = await entries('app.create');
    expect(e).to.include({ actor: 'alice', actorRole: 'operator', channel: 'console', source: '10.0.0.7', target: `app:${a.id}` });
    expect(e!.before).to.equal(null);
    expect(e!.after).to.deep.include({ name: 'Audited', environment: 'test', apiKey: a.apiKey, status: 'ACTIVE', chains: ['ETH'] });
    expect(await dump()).not.to.contain(a.apiSecret);
  });

  it('callback URL, chains, status, rate limit: before and after; the same value again writes nothing; refused input writes nothing', async () => {
    const a = await storage.applications.create(alice, { name: 'Changes', environment: 'live', chains: ['ETH'] });
    const n0 = await count();
    await rejects(storage.applications.setCallback(alice, a.id, 'RECHARGE', 'http://merchant.example/cb'), 1002001003);
    await rejects(storage.applications.setChains(alice, a.id, ['NOPE']), 1003001001);
    await rejects(storage.applications.setRateLimit(alice, a.id, { ratePerSecond: 0, burst: 1 }), 1000001003);
    await rejects(storage.applications.setStatus(alice, 99999, 'DISABLED'), 1002001001);
    expect(await count()).to.equal(n0);

    await storage.applications.setCallback(alice, a.id, 'RECHARGE', 'https://merchant.example/cb');
    await storage.applications.setCallback(alice, a.id, 'RECHARGE', 'https://merchant.example/cb');
    await storage.applications.setCallback(alice, a.id, 'RECHARGE', 'https://merchant.example/cb2');
    const cb = (await entries('app.callback.set')).filter((e) => e.target === `app:${a.id}`);
    expect(cb.map((e) => [e.before, e.after])).to.deep.equal([
      [{ bizType: 'RECHARGE', url: 'https://merchant.example/cb' }, { bizType: 'RECHARGE', url: 'https://merchant.example/cb2' }],
      [{ bizType: 'RECHARGE', url: null }, { bizType: 'RECHARGE', url: 'https://merchant.example/cb' }],
    ]);

    await storage.applications.setChains(alice, a.id, ['eth', 'btc']);
    await storage.applications.setChains(alice, a.id, ['ETH', 'BTC']);
    const ch = await entries('app.chains.set');
    expect(ch.length).to.equal(1);
    expect(ch[0]).to.deep.include({ target: `app:${a.id}`, before: { chains: ['ETH'] }, after: { chains: ['ETH', 'BTC'] } });

    await storage.applications.setStatus(alice, a.id, 'ACTIVE');
    expect(await entries('app.status.set')).to.deep.equal([]);
    await storage.applications.setStatus(alice, a.id, 'DISABLED');
    expect((await entries('app.status.set'))[0]).to.deep.include({ before: { status: 'ACTIVE' }, after: { status: 'DISABLED' } });
    expect((await storage.applications.get(a.id)).status).to.equal('DISABLED');

    await storage.applications.setRateLimit(alice, a.id, null);
    expect(await entries('app.rate-limit.set')).to.deep.equal([]);
    await storage.applications.setRateLimit(alice, a.id, { ratePerSecond: 5, burst: 10 });
    await storage.applications.setRateLimit(alice, a.id, { ratePerSecond: 5, burst: 10 });
    const rl = await entries('app.rate-limit.set');
    expect(rl.length).to.equal(1);
    expect(rl[0]).to.deep.include({ before: { rateLimit: 'service default' }, after: { rateLimit: { ratePerSecond: 5, burst: 10 } } });
  });

  it('rotate: app.secret.rotate with the grace and the old secrets\' end, and neither secret anywhere in the log', async () => {
    const a = await storage.applications.create(alice, { name: 'Rotate', environment: 'test', chains: [] });
    const n = await count();
    await rejects(storage.applications.rotateSecret(alice, a.id, -1), 1000001003);
    expect(await count()).to.equal(n);
    const r = await storage.applications.rotateSecret(alice, a.id, 600);
    const [e] = await entries('app.secret.rotate');
    expect(e).to.deep.include({ target: `app:${a.id}`, before: { validSecrets: 1 } });
    expect(e!.after).to.deep.include({ graceSeconds: 600, previousSecretsValidUntil: r.previousSecretsValidUntil });
    const log = await dump();
    expect(log).not.to.contain(a.apiSecret);
    expect(log).not.to.contain(r.apiSecret);
  });

  it('callbacks: a test event and an operator\'s resend are audited; the merchant\'s own resend (actor null) is not; a busy task writes nothing', async () => {
    const a = await storage.applications.create(alice, { name: 'Callbacks', environment: 'test', chains: [] });
    const t = await callbacks.sendTest(alice, a.id, 'WITHDRAW'); // no URL: FAILED at once
    expect(t.status).to.equal('FAILED');
    const [test] = await entries('callback.test');
    expect(test).to.deep.include({ target: `app:${a.id}/bizType:WITHDRAW`, before: null, after: { callbackTaskId: t.id, status: 'FAILED', url: '' } });
    await rejects(callbacks.sendTest(alice, 99999, 'WITHDRAW'), 1002001001);
    expect((await entries('callback.test')).length).to.equal(1);

    const n = await count();
    await rejects(callbacks.resend(alice, a.id, t.id), ErrorCodes.CALLBACK_URL_INVALID.code);
    expect(await count()).to.equal(n);
    await storage.applications.setCallback(alice, a.id, 'WITHDRAW', 'http://127.0.0.1:9/cb');
    const resent = await callbacks.resend(alice, a.id, t.id);
    expect(resent.status).to.equal('WAITING');
    const [r] = await entries('callback.resend');
    expect(r).to.deep.include({ actor: 'alice', target: `callback-task:${t.id}` });
    expect(r!.before).to.deep.include({ status: 'FAILED', url: '' });
    expect(r!.after).to.deep.equal({ status: 'WAITING', retryTimes: 0, url: 'http://127.0.0.1:9/cb' });
    const n2 = await count();
    await rejects(callbacks.resend(alice, a.id, t.id), ErrorCodes.CALLBACK_TASK_BUSY.code);
    expect(await count()).to.equal(n2);

    // the merchant's resend through the signed API: same change, no operator entry
    await storage.database.sequelize.query(`UPDATE callback_tasks SET status = 'FAILED' WHERE id = $1`, { bind: [t.id] });
    await callbacks.resend(null, a.id, t.id);
    expect(await count()).to.equal(n2);

    // resendFailed: one entry per task queued again
    const more = [await callbacks.sendTest(alice, a.id, 'COLLECT'), await callbacks.sendTest(alice, a.id, 'COLLECT')];
    await storage.applications.setCallback(alice, a.id, 'COLLECT', 'http://127.0.0.1:9/collect');
    const n3 = await count();
    const bulk = await callbacks.resendFailed(alice, a.id, 'COLLECT');
    expect(bulk.resent.map((x) => x.id)).to.deep.equal(more.map((x) => x.id));
    const after = await entries('callback.resend');
    expect(await count()).to.equal(n3 + 2);
    expect(after.slice(0, 2).map((e) => e.target).sort()).to.deep.equal(more.map((x) => `callback-task:${x.id}`).sort());
  });

  it('lists every application by id, or one keyset page after an id (the console\'s list)', async () => {
    for (let i = 0; i < 3; i++) await storage.applications.create(TEST_ACTOR, { name: `paged ${i}`, environment: 'test', chains: [] });
    const all = (await storage.applications.list()).map((a) => a.id);
    expect(all.length).to.be.at.least(3);
    expect(all).to.deep.equal([...all].sort((a, b) => a - b));
    const first = (await storage.applications.list({ limit: 2 })).map((a) => a.id);
    expect(first).to.deep.equal(all.slice(0, 2));
    const next = (await storage.applications.list({ after: first[1]!, limit: 2 })).map((a) => a.id);
    expect(next).to.deep.equal(all.slice(2, 4));
    expect(await storage.applications.list({ after: all[all.length - 1]!, limit: 2 })).to.deep.equal([]);
  });
});
