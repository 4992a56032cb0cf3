import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'chai';
import { Client } from 'pg';
import type { KeyStore } from '@wcs/core';
import { SoftwareKeyStore, initializeSoftwareKeystore } from '@wcs/custody-software';
import { Database } from '../db/database';
import { migrate } from '../db/migrations';
import { createTestDatabase, TEST_MNEMONIC, testConfig, testLogger, type TestDatabase } from '../testing';
import { KeyIndexMarkGuard, databaseLineage } from './index-marks';
import { KeyIndexReserve, MAX_SPARE_INDICES, type ReserveMarks } from './key-index-reserve';

const AHEAD = 3;

describe('key-index marks over the deposit allocator (real Postgres, software key store)', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let database: Database;
  let pg: Client;
  let dir: string;
  let store: SoftwareKeyStore;
  let lineage: string;
  let appId: number;

  const counter = async (ns: string, app = appId): Promise<number> =>
    Number((await pg.query(`SELECT next_index FROM key_counters WHERE application_id = $1 AND namespace = $2`, [app, ns])).rows[0]?.next_index ?? 0);
  const markOf = async (ns: string, app = appId): Promise<number> =>
    (await store.indexMarks.read(lineage)).find((m) => m.applicationId === app && m.namespace === ns)?.next ?? 0;
  const guard = (ks: KeyStore = store) => new KeyIndexMarkGuard(database.sequelize, ks, { ahead: AHEAD, logger: testLogger() });
  const alerts = async (kind: string) => (await pg.query(`SELECT details FROM operator_alerts WHERE kind = $1 ORDER BY id`, [kind])).rows.map((r) => r.details as Record<string, unknown>);

  before(async () => {
    db = await createTestDatabase();
    database = new Database(testConfig(db.url), testLogger());
    await database.open();
    await migrate(database.sequelize);
    pg = new Client({ connectionString: db.url });
    await pg.connect();
    appId = (await pg.query(`INSERT INTO applications (name, environment, api_key) VALUES ('m', 'test', 'pk_test_marks') RETURNING id`)).rows[0].id;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-marks-'));
    const opts = { dataDir: dir, env: { WCS_KEYSTORE_PASSPHRASE: 'marks test passphrase' }, devMode: false };
    await initializeSoftwareKeystore(opts, { mnemonic: TEST_MNEMONIC }, { insecureTestScryptN: 1024 });
    store = new SoftwareKeyStore(opts, { insecureTestScryptN: 1024 });
    await store.init();
    lineage = await databaseLineage(database.sequelize);
  });
  after(async () => {
    await store?.destroy();
    await pg?.end();
    await database?.close();
    await db?.drop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the database has a lineage of its own; a fresh database and key store: no gaps', async () => {
    expect(lineage).to.match(/^[0-9a-f]{32}$/);
    const other = await createTestDatabase();
    try {
      const o = new Database(testConfig(other.url), testLogger());
      await o.open();
      await migrate(o.sequelize);
      expect(await databaseLineage(o.sequelize)).to.not.equal(lineage);
      await o.close();
    } finally {
      await other.drop();
    }
    const report = await guard().check();
    expect(report).to.deep.include({ lineage, protected: true, marks: 0, gaps: [], raised: [] });
  });

  it('no index is handed out before the key store\'s mark covers it; marks move in blocks, far fewer writes than indices', async () => {
    const g = guard();
    const reserve = new KeyIndexReserve(database, g);
    const writes = store.indexMarks.writes;
    const got: number[] = [];
    for (let wave = 0; wave < 10; wave++) {
      const batch = await Promise.all(Array.from({ length: 40 }, () => reserve.next(appId, 'evm')));
      got.push(...batch);
      // every index handed out so far is below the mark in the key-store file
      expect(await markOf('evm'), `wave ${wave}`).to.be.above(Math.max(...got));
    }
    expect(new Set(got).size).to.equal(400);
    const end = await counter('evm');
    // the mark is the counter at the last raise plus `ahead`: never far above what was reserved
    expect(await markOf('evm')).to.be.within(Math.max(...got) + 1, end + AHEAD);
    expect(store.indexMarks.writes - writes, 'durable writes for 400 indices').to.be.below(60);
    // idle, one create at a time: each takes one index and (with ahead 3) one write every few creates
    const w0 = store.indexMarks.writes;
    for (let i = 0; i < 8; i++) await reserve.next(appId, 'idle');
    expect(store.indexMarks.writes - w0).to.be.within(1, 8);
    expect(await markOf('idle')).to.be.within(8, 8 + AHEAD + MAX_SPARE_INDICES);
  });

  it('a restart without a restore: no window, no alert; the counter continues at the mark (at most `ahead` above the stopped process\'s counter)', async () => {
    const reserve = new KeyIndexReserve(database, guard());
    for (let i = 0; i < 5; i++) await reserve.next(appId, 'restart');
    const mark = await markOf('restart');
    const before = (await alerts('KEY_INDEX_ROLLBACK')).length;
    const g = guard();
    const report = await g.check();
    expect(report.gaps).to.deep.equal([]);
    expect((await alerts('KEY_INDEX_ROLLBACK')).length).to.equal(before);
    const counted = await counter('restart');
    expect(await new KeyIndexReserve(database, g).next(appId, 'restart')).to.equal(mark);
    // skipped: what the stopped process held (its spare indices) and `ahead` above it
    expect(mark - counted).to.be.at.most(AHEAD);
    expect(mark - 5).to.be.at.most(AHEAD + MAX_SPARE_INDICES);
  });

  it('a restored database (counter, mark it knew and user keys rolled back): the start check moves the counter above the mark, records the window, alerts; no index is handed out again', async () => {
    const reserve = new KeyIndexReserve(database, guard());
    const issued: number[] = [];
    const take = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const index = await reserve.next(appId, 'sol');
        issued.push(index);
        await pg.query(`INSERT INTO user_keys (application_id, namespace, external_user_id, key_index, public_key) VALUES ($1, 'sol', $2, $3, '\\x00')`, [appId, `u${index}`, index]);
      }
    };
    await take(10);
    // the backup
    const backup = (await pg.query(`SELECT next_index, marked FROM key_counters WHERE application_id = $1 AND namespace = 'sol'`, [appId])).rows[0];
    await take(15);
    const mark = await markOf('sol');
    expect(mark).to.be.above(24);
    // the restore: the database as it was at the backup
    await pg.query(`UPDATE key_counters SET next_index = $2, marked = $3 WHERE application_id = $1 AND namespace = 'sol'`, [appId, backup.next_index, backup.marked]);
    await pg.query(`DELETE FROM user_keys WHERE application_id = $1 AND namespace = 'sol' AND key_index >= 10`, [appId]);

    // a new process: its check finds the window [10, mark)
    const g = guard();
    const report = await g.check();
    expect(report.gaps).to.deep.equal([{ applicationId: appId, namespace: 'sol', fromIndex: 10, toIndex: mark, applicationKnown: true }]);
    expect(await counter('sol')).to.equal(mark);
    const rows = (await pg.query(`SELECT application_id, namespace, from_index::int AS f, to_index::int AS t, application_known, checked_at FROM key_index_gaps WHERE namespace = 'sol'`)).rows;
    expect(rows).to.deep.equal([{ application_id: appId, namespace: 'sol', f: 10, t: mark, application_known: true, checked_at: null }]);
    expect((await alerts('KEY_INDEX_ROLLBACK')).map((d) => d.gaps)).to.deep.include([{ applicationId: appId, namespace: 'sol', fromIndex: 10, toIndex: mark, applicationKnown: true }]);
    const next = await new KeyIndexReserve(database, g).next(appId, 'sol');
    expect(next).to.equal(mark);
    expect(issued).to.not.include(next);
    // a second process starting later finds the counter and mark moved: no second window, no second alert
    const before = (await alerts('KEY_INDEX_ROLLBACK')).length;
    expect((await guard().check()).gaps).to.deep.equal([]);
    expect((await alerts('KEY_INDEX_ROLLBACK')).length).to.equal(before);
  });

  it('a restore to a point after the last raise: nothing to alert, but the indices handed out after it are skipped (never handed out again)', async () => {
    const reserve = new KeyIndexReserve(database, guard());
    await reserve.next(appId, 'late');
    const backup = (await pg.query(`SELECT next_index, marked FROM key_counters WHERE application_id = $1 AND namespace = 'late'`, [appId])).rows[0];
    const mark = await markOf('late');
    // handed out after the backup, within the mark the backup already knew
    const after = await reserve.next(appId, 'late');
    expect(after).to.be.below(mark);
    expect(await markOf('late')).to.equal(mark);
    await pg.query(`UPDATE key_counters SET next_index = $2, marked = $3 WHERE application_id = $1 AND namespace = 'late'`, [appId, backup.next_index, backup.marked]);
    const g = guard();
    expect((await g.check()).gaps).to.deep.equal([]);
    expect(await new KeyIndexReserve(database, g).next(appId, 'late')).to.equal(mark);
  });

  it('an application missing from the restored copy: its id handed out again starts above the old one\'s mark', async () => {
    const ghost = appId + 1000;
    await store.indexMarks.raise(lineage, [{ applicationId: ghost, namespace: 'evm', next: 42 }]);
    const g = guard();
    const report = await g.check();
    expect(report.gaps).to.deep.include({ applicationId: ghost, namespace: 'evm', fromIndex: 0, toIndex: 42, applicationKnown: false });
    // the next start knows that window: not recorded or alerted again
    const alerted = (await alerts('KEY_INDEX_ROLLBACK')).length;
    expect((await guard().check()).gaps).to.deep.equal([]);
    expect((await alerts('KEY_INDEX_ROLLBACK')).length).to.equal(alerted);
    // the id is handed out again (the applications sequence was rolled back too)
    await pg.query(`INSERT INTO applications (id, name, environment, api_key) VALUES ($1, 'again', 'test', 'pk_test_again')`, [ghost]);
    expect(await new KeyIndexReserve(database, g).next(ghost, 'evm')).to.equal(42);
  });

  it('the key store behind the database (a restored key-store file, marks new to it): the check raises the marks to the counters', async () => {
    await pg.query(`INSERT INTO key_counters (application_id, namespace, purpose, next_index) VALUES ($1, 'behind', 'deposit', 77)`, [appId]);
    const report = await guard().check();
    expect(report.raised).to.deep.include({ applicationId: appId, namespace: 'behind', next: 77 + AHEAD });
    expect(await markOf('behind')).to.equal(77 + AHEAD);
    expect(report.gaps.filter((x) => x.namespace === 'behind')).to.deep.equal([]);
  });

  it('a mark that cannot be raised fails the create, and the block is kept: the next create uses it (an outage does not use up indices)', async () => {
    const g = guard();
    let fail = true;
    const flaky: ReserveMarks = {
      floor: (a, n) => g.floor(a, n),
      cover: async (a, n, end) => {
        if (fail) throw new Error('key store away');
        return g.cover(a, n, end);
      },
    };
    const reserve = new KeyIndexReserve(database, flaky);
    const start = await counter('flaky');
    const failed = await Promise.allSettled([reserve.next(appId, 'flaky'), reserve.next(appId, 'flaky')]);
    expect(failed.map((f) => f.status)).to.deep.equal(['rejected', 'rejected']);
    const taken = await counter('flaky');
    fail = false;
    expect(await reserve.next(appId, 'flaky')).to.equal(start);
    expect(await counter('flaky'), 'no new block was taken').to.equal(taken);
    expect(await markOf('flaky')).to.be.above(start);
  });

  it('without the capability the guard warns and does not stand in the way', async () => {
    const bare: KeyStore = { name: 'bare', pluginApiVersion: 1, init: async () => undefined, destroy: async () => undefined, getPublicKey: () => Promise.reject(new Error('no')), sign: () => Promise.reject(new Error('no')), status: async () => ({}) };
    const g = guard(bare);
    expect(await g.check()).to.deep.include({ protected: false, gaps: [] });
    const before = await counter('bare');
    expect(await new KeyIndexReserve(database, g).next(appId, 'bare')).to.equal(before);
  });
});
