import { expect } from 'chai';
import { Sequelize } from 'sequelize';
import { migrate, pendingMigrations, MIGRATIONS } from './migrations';
import { createTestDatabase, type TestDatabase } from '../testing';

describe('migrations: versioned, applied once, safe under concurrency', () => {
  let db: TestDatabase;
  const conns: Sequelize[] = [];
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => {
    for (const c of conns) await c.close();
    await db.drop();
  });

  it('two processes migrating at once apply each version exactly once', async () => {
    const a = new Sequelize(db.url, { dialect: 'postgres', logging: false });
    const b = new Sequelize(db.url, { dialect: 'postgres', logging: false });
    conns.push(a, b);
    expect(await pendingMigrations(a)).to.deep.equal(MIGRATIONS.map((m) => m.version));
    const [ra, rb] = await Promise.all([migrate(a), migrate(b)]);
    expect([...ra, ...rb].sort((x, y) => x - y)).to.deep.equal(MIGRATIONS.map((m) => m.version));
    expect(await migrate(a)).to.deep.equal([]);
    expect(await pendingMigrations(b)).to.deep.equal([]);
    const [cols] = await a.query(`SELECT data_type FROM information_schema.columns WHERE table_name = 'applications' AND column_name = 'id'`);
    expect(cols).to.deep.equal([{ data_type: 'integer' }]);
  });
});
