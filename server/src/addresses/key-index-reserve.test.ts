import { expect } from 'chai';
import { Client } from 'pg';
import { Database } from '../db/database';
import { migrate } from '../db/migrations';
import { createTestDatabase, testConfig, testLogger, type TestDatabase } from '../testing';
import { KeyIndexReserve, MAX_SPARE_INDICES } from './key-index-reserve';

describe('key index reserve: HD indices from the key_counters row (real Postgres)', () => {
  let db: TestDatabase;
  let a: Database;
  let b: Database;
  let pg: Client;
  let appId: number;

  const counter = async (ns: string): Promise<number> =>
    Number((await pg.query(`SELECT next_index FROM key_counters WHERE application_id = $1 AND namespace = $2`, [appId, ns])).rows[0]?.next_index ?? 0);

  before(async () => {
    db = await createTestDatabase();
    a = new Database(testConfig(db.url), testLogger());
    b = new Database(testConfig(db.url), testLogger());
    await a.open();
    await b.open();
    await migrate(a.sequelize);
    pg = new Client({ connectionString: db.url });
    await pg.connect();
    appId = (await pg.query(`INSERT INTO applications (name, environment, api_key) VALUES ('r', 'test', 'pk_test_reserve') RETURNING id`)).rows[0].id;
  });
  after(async () => {
    await pg?.end();
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  it('the first create takes exactly one index; sequential creates get 0, 1, 2, ... with little reserved', async () => {
    const r = new KeyIndexReserve(a);
    expect(await r.next(appId, 'idle')).to.equal(0);
    expect(await counter('idle')).to.equal(1);
    for (let i = 1; i < 20; i++) {
      expect(await r.next(appId, 'idle')).to.equal(i);
      expect((await counter('idle')) - (i + 1)).to.be.within(0, 2);
    }
  });

  it('two processes at once: 400 indices, none handed out twice, and few reserved beyond use', async () => {
    const ra = new KeyIndexReserve(a);
    const rb = new KeyIndexReserve(b);
    const got: number[] = [];
    // waves of concurrent requests, as under load
    for (let wave = 0; wave < 8; wave++) {
      got.push(...(await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? ra : rb).next(appId, 'race')))));
    }
    expect(new Set(got).size).to.equal(400);
    const end = await counter('race');
    expect(Math.min(...got)).to.equal(0);
    // each process holds at most MAX_SPARE_INDICES it has not handed out (plus none it lost)
    expect(end - 400).to.be.at.most(2 * MAX_SPARE_INDICES);
    expect(Math.max(...got)).to.be.below(end);
  });

  it('namespaces and applications count separately', async () => {
    const r = new KeyIndexReserve(a);
    expect(await r.next(appId, 'ns-x')).to.equal(0);
    expect(await r.next(appId, 'ns-y')).to.equal(0);
  });

  it('a failed refill rejects the waiting creates, and the next one works again', async () => {
    const r = new KeyIndexReserve(a);
    await pg.query(`ALTER TABLE key_counters ADD CONSTRAINT no_fail_ns CHECK (namespace <> 'fail')`);
    try {
      const res = await Promise.allSettled([r.next(appId, 'fail'), r.next(appId, 'fail')]);
      expect(res.map((x) => x.status)).to.deep.equal(['rejected', 'rejected']);
    } finally {
      await pg.query(`ALTER TABLE key_counters DROP CONSTRAINT no_fail_ns`);
    }
    expect(await r.next(appId, 'fail')).to.equal(0);
  });
});
