import { expect } from 'chai';
import * as sinon from 'sinon';
import { openStorage, type StorageHandle } from '../service';
import { createTestDatabase, testConfig, testLogger, TEST_MASTER_KEY, type TestDatabase } from '../testing';
import { CredentialStore } from '../auth/credentials';
import { SecretBox } from '../crypto/secret-box';
import { TOKENS } from '../container';
import { isWcsError } from '@wcs/core';

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
    const t = await storage.applications.create({ name: ' Game ', environment: 'test', chains: ['eth', 'BTC', 'ETH'] });
    expect(t.apiKey).to.match(/^pk_test_[0-9a-f]{32}$/);
    expect(t.apiSecret).to.match(/^[0-9a-f]{64}$/);
    expect(t).to.include({ name: 'Game', environment: 'test', status: 'ACTIVE' });
    expect(t.chains).to.deep.equal(['ETH', 'BTC']);
    const l = await storage.applications.create({ name: 'Exchange', environment: 'live', chains: [] });
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
    await rejects(storage.applications.create({ name: 'x', environment: 'test', chains: ['NOPE'] }), 1003001001);
    await rejects(storage.applications.create({ name: '', environment: 'test', chains: [] }), 1000001003);
    await rejects(storage.applications.create({ name: 'x', environment: 'prod', chains: [] }), 1000001003);
    await rejects(storage.applications.create({ name: 'x'.repeat(101), environment: 'test', chains: [] }), 1000001003);
    expect((await storage.applications.list()).length).to.equal(before);
    await rejects(storage.applications.get(99999), 1002001001);
  });

  it('validates callback URLs per environment and biz type', async () => {
    const live = await storage.applications.create({ name: 'L', environment: 'live', chains: ['ETH'] });
    const test = await storage.applications.create({ name: 'T', environment: 'test', chains: ['ETH'] });
    await rejects(storage.applications.setCallback(live.id, 'RECHARGE', 'http://merchant.example/cb'), 1002001003);
    await rejects(storage.applications.setCallback(live.id, 'RECHARGE', 'https://user:pw@merchant.example/cb'), 1002001003);
    await rejects(storage.applications.setCallback(live.id, 'RECHARGE', 'not a url'), 1002001003);
    await rejects(storage.applications.setCallback(live.id, 'DEPOSIT', 'https://merchant.example/cb'), 1000001003);
    const v = await storage.applications.setCallback(live.id, 'WITHDRAW', 'https://merchant.example/cb/withdraw');
    expect(v.callbacks).to.deep.equal({ WITHDRAW: 'https://merchant.example/cb/withdraw' });
    const t = await storage.applications.setCallback(test.id, 'RECHARGE', 'http://localhost:9999/cb');
    expect(t.callbacks.RECHARGE).to.equal('http://localhost:9999/cb');
  });

  it('rotation keeps the old secret for the grace period; disable takes effect at once (LISTEN/NOTIFY)', async () => {
    const app = await storage.applications.create({ name: 'R', environment: 'test', chains: ['ETH'] });
    const keys = async () => ((await creds.get(app.apiKey))!.secrets.map((s) => s.key.toString()));
    expect(await keys()).to.deep.equal([app.apiSecret]);
    expect(creds.cacheActive).to.equal(true);

    const r1 = await storage.applications.rotateSecret(app.id, 3600);
    await new Promise((r) => setTimeout(r, 200)); // let the NOTIFY arrive
    expect(await keys()).to.deep.equal([r1.apiSecret, app.apiSecret]);

    const r2 = await storage.applications.rotateSecret(app.id, 0);
    await new Promise((r) => setTimeout(r, 200));
    expect(await keys()).to.deep.equal([r2.apiSecret]);

    await storage.applications.setStatus(app.id, 'DISABLED');
    await new Promise((r) => setTimeout(r, 200));
    expect((await creds.get(app.apiKey))!.status).to.equal('DISABLED');
    expect(await creds.get('pk_test_unknown0000')).to.equal(null);
  });

  it('does not cache a credential read that a change notification overtook', async () => {
    const app = await storage.applications.create({ name: 'Race', environment: 'test', chains: ['ETH'] });
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
      await storage.applications.setStatus(app.id, 'DISABLED');
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
