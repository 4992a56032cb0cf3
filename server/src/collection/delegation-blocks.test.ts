import { expect } from 'chai';
import { Client } from 'pg';
import { openStorage, type StorageHandle } from '../service';
import { TEST_ACTOR, createTestDatabase, testConfig, testLogger, type TestDatabase } from '../testing';
import type { AuditActor } from '../operators/audit';
import { CollectCommandError } from './operator';
import { listDelegationBlocks, releaseDelegationBlock } from './delegation-blocks';

const ETH_CHAIN = 102;

describe('delegation blocks: listed, released once, audited in the release\'s transaction (real Postgres)', () => {
  let db: TestDatabase;
  let storage: StorageHandle;
  let pg: Client;
  let appId: number;
  const olga: AuditActor = { name: 'olga', role: 'operator', channel: 'console', source: '10.0.0.7' };

  before(async () => {
    db = await createTestDatabase();
    storage = await openStorage(testConfig(db.url), testLogger());
    pg = new Client({ connectionString: db.url });
    await pg.connect();
    appId = (await storage.applications.create(TEST_ACTOR, { name: 'blocks', environment: 'test', chains: ['ETH'] })).id;
  });
  after(async () => {
    await pg?.end();
    await storage?.close();
    await db?.drop();
  });

  it('an open block is listed; released, it leaves the open list, with one audit entry; a second release and an unknown id are refused, writing nothing', async () => {
    const sequelize = storage.database.sequelize;
    const { rows: [b] } = await pg.query(
      `INSERT INTO delegation_blocks (application_id, chain_id, address, found, delegate) VALUES ($1, $2, '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', 'DELEGATED', '0x63c0c19a282a1B52b07dD5a65b58948A07DAE32B') RETURNING id::int AS id`,
      [appId, ETH_CHAIN]);
    // one open block per address: a second is refused by the index
    let dup: unknown = null;
    await pg.query(`INSERT INTO delegation_blocks (application_id, chain_id, address, found) VALUES ($1, $2, '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', 'CONTRACT')`, [appId, ETH_CHAIN]).catch((e: unknown) => { dup = e; });
    expect(String(dup)).to.match(/delegation_blocks_open/);
    const open = await listDelegationBlocks(sequelize, appId, false);
    expect(open.map((x) => [x.id, x.found, x.releasedTime])).to.deep.equal([[b.id, 'DELEGATED', null]]);
    const before = (await pg.query('SELECT count(*)::int AS n FROM audit_log')).rows[0].n as number;
    const released = await releaseDelegationBlock(sequelize, olga, b.id, 'funds moved to cold, user given a new address');
    expect(released).to.include({ id: b.id, releasedBy: 'olga' });
    expect(await listDelegationBlocks(sequelize, appId, false)).to.deep.equal([]);
    expect((await listDelegationBlocks(sequelize, appId, true)).map((x) => x.id)).to.deep.equal([b.id]);
    const entries = (await pg.query('SELECT actor, action, target, after FROM audit_log ORDER BY id')).rows.slice(before);
    expect(entries).to.have.length(1);
    expect(entries[0]).to.deep.include({ actor: 'olga', action: 'collect.delegation.release', target: `delegation-block:${b.id}` });
    expect(entries[0].after).to.deep.include({ released: true, note: 'funds moved to cold, user given a new address' });
    for (const [id, name] of [[b.id, 'DELEGATION_BLOCK_RELEASED'], [999_999, 'DELEGATION_BLOCK_NOT_FOUND']] as const) {
      const err = await releaseDelegationBlock(sequelize, olga, id, 'again').then(() => null, (e: unknown) => e);
      expect(err).to.be.instanceOf(CollectCommandError);
      expect((err as Error).name).to.equal(name);
    }
    expect((await pg.query('SELECT count(*)::int AS n FROM audit_log')).rows[0].n).to.equal(before + 1);
  });
});
