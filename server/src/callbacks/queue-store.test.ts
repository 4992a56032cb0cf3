import { expect } from 'chai';
import { Client } from 'pg';
import { Database } from '../db/database';
import { migrate } from '../db/migrations';
import { createTestDatabase, testConfig, testLogger, type TestDatabase } from '../testing';
import { enqueueCallbacks } from './outbox';
import { claimDue, type ClaimRequest } from './queue-store';

/**
 * The claim (callback_claim, migration 15) on real Postgres: due order, each endpoint's room,
 * the limit, leases, and rows another process holds passed over rather than ending the claim.
 */
describe('callbacks: claimDue on real Postgres', function () {
  this.timeout(60_000);
  let tdb: TestDatabase;
  let database: Database;
  let pg: Client;
  let appId: number;
  const A = 'http://a.example:8080';
  const B = 'http://b.example:8080';

  before(async () => {
    tdb = await createTestDatabase();
    database = new Database(testConfig(tdb.url), testLogger());
    await database.open();
    await migrate(database.sequelize);
    pg = new Client({ connectionString: tdb.url });
    await pg.connect();
    appId = (await pg.query(`INSERT INTO applications (name, environment, api_key) VALUES ('q', 'test', 'pk_test_claim') RETURNING id`)).rows[0].id;
  });
  after(async () => {
    await pg?.end();
    await database?.close();
    await tdb?.drop();
  });

  /** Queues tasks to the given endpoints in this order (ascending ids, one due time each, a millisecond apart). */
  async function queue(endpoints: string[]): Promise<string[]> {
    await pg.query('DELETE FROM callback_queue');
    const ids: string[] = [];
    const t0 = Date.now() - 60_000;
    for (const [i, ep] of endpoints.entries()) {
      const tasks = await database.sequelize.transaction((t) =>
        enqueueCallbacks(database.sequelize, t, [{ applicationId: appId, bizType: 'RECHARGE', bizId: i + 1, payload: { n: i }, callbackUrl: `${ep}/cb` }], new Date(t0 + i)),
      );
      ids.push(String(tasks[0]!.id));
    }
    return ids;
  }
  const request = (over: Partial<ClaimRequest> = {}): ClaimRequest => ({ owner: 'p1', now: new Date(), leaseMs: 60_000, limit: 100, full: [], room: [], defaultRoom: 100, ...over });

  it('takes due tasks in due order, at most each endpoint\'s room and the limit, and leases exactly those', async () => {
    const ids = await queue([A, A, B, A, B, A, B]);
    const got = await claimDue(database, request({ room: [[A, 2]], defaultRoom: 2, limit: 100 }));
    expect(got.map((t) => t.id)).to.deep.equal([ids[0], ids[1], ids[2], ids[4]]);
    expect(got.map((t) => t.endpoint)).to.deep.equal([A, A, B, B]);
    const leased = (await pg.query(`SELECT task_id::text AS id FROM callback_queue WHERE lease_owner = 'p1' ORDER BY task_id`)).rows.map((r) => r.id);
    expect(leased).to.deep.equal([ids[0], ids[1], ids[2], ids[4]]);
    // leased rows are not taken again; a full endpoint is left out
    const next = await claimDue(database, request({ owner: 'p2', full: [A], limit: 100 }));
    expect(next.map((t) => t.id)).to.deep.equal([ids[6]]);
    const limited = await claimDue(database, request({ owner: 'p3', limit: 1 }));
    expect(limited.map((t) => t.id)).to.deep.equal([ids[3]]);
  });

  it('rows another process holds locked are passed over: the claim takes the next ones instead of ending short', async () => {
    const ids = await queue([A, A, A, A, A, A, A, A]);
    const other = new Client({ connectionString: tdb.url });
    await other.connect();
    try {
      // another dispatcher mid-claim: the first three rows locked, its lease not yet committed
      await other.query('BEGIN');
      await other.query(`SELECT task_id FROM callback_queue WHERE task_id = ANY($1::bigint[]) FOR UPDATE`, [[ids[0], ids[1], ids[2]]]);
      const got = await claimDue(database, request({ room: [[A, 4]], limit: 100 }));
      expect(got.map((t) => t.id)).to.deep.equal([ids[3], ids[4], ids[5], ids[6]]);
      await other.query('ROLLBACK');
      // released: the three come due to the next claim
      const rest = await claimDue(database, request({ owner: 'p2', limit: 100 }));
      expect(rest.map((t) => t.id)).to.deep.equal([ids[0], ids[1], ids[2], ids[7]]);
    } finally {
      await other.end();
    }
  });

  it('a lease that ran out is taken over, and reported as due since its retry time or creation', async () => {
    const ids = await queue([A, B]);
    await claimDue(database, request({ owner: 'dead', leaseMs: 1 }));
    await new Promise((r) => setTimeout(r, 20));
    const got = await claimDue(database, request({ owner: 'p2' }));
    expect(got.map((t) => t.id)).to.deep.equal(ids);
    const owners = (await pg.query(`SELECT DISTINCT lease_owner FROM callback_queue`)).rows.map((r) => r.lease_owner);
    expect(owners).to.deep.equal(['p2']);
    const created = (await pg.query(`SELECT created_at FROM callback_tasks WHERE id = $1`, [ids[0]])).rows[0].created_at as Date;
    expect(got[0]!.due_time?.getTime()).to.equal(created.getTime());
  });
});
