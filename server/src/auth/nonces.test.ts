import { expect } from 'chai';
import { Sequelize } from 'sequelize';
import { NonceStore } from './nonces';
import { createTestDatabase, type TestDatabase } from '../testing';
import { migrate } from '../db/migrations';

describe('nonce store: durable replay protection in Postgres', () => {
  let db: TestDatabase;
  let a: Sequelize;
  let b: Sequelize;
  before(async () => {
    db = await createTestDatabase();
    a = new Sequelize(db.url, { dialect: 'postgres', logging: false });
    b = new Sequelize(db.url, { dialect: 'postgres', logging: false });
    await migrate(a);
  });
  after(async () => {
    await a.close();
    await b.close();
    await db.drop();
  });

  it('accepts a pair once, per key', async () => {
    const s = new NonceStore(a);
    const now = Date.now();
    expect(await s.claim('pk_test_k1', 'n-00000001', now)).to.equal(true);
    expect(await s.claim('pk_test_k1', 'n-00000001', now)).to.equal(false);
    expect(await s.claim('pk_test_k2', 'n-00000001', now)).to.equal(true);
  });

  it('lets exactly one of many concurrent claims win, across two stores (two processes)', async () => {
    const s1 = new NonceStore(a);
    const s2 = new NonceStore(b);
    const now = Date.now();
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? s1 : s2).claim('pk_test_k3', 'race-nonce', now)));
    expect(results.filter(Boolean)).to.have.length(1);
    // a batch mixing fresh and used pairs resolves each one right
    const mixed = await Promise.all([s1.claim('pk_test_k3', 'race-nonce', now), s1.claim('pk_test_k3', 'fresh-1111', now), s1.claim('pk_test_k3', 'fresh-2222', now)]);
    expect(mixed).to.deep.equal([false, true, true]);
  });

  it('remembers a nonce from the later of its timestamp and now, and sweeps expired rows', async () => {
    const s = new NonceStore(a);
    const ahead = Date.now() + 5 * 60 * 1000;
    await s.claim('pk_test_k4', 'ahead-nonce', ahead);
    const [rows] = await a.query(`SELECT expires_at FROM api_nonces WHERE nonce = 'ahead-nonce'`);
    const exp = new Date((rows as Array<{ expires_at: string }>)[0]!.expires_at).getTime();
    expect(exp).to.be.closeTo(ahead + 10 * 60 * 1000, 2000);

    await a.query(`INSERT INTO api_nonces VALUES ('pk_test_k4', 'old-nonce1', now() - interval '1 second')`);
    // an expired pair may be used again (the 10-minute window has passed)
    expect(await s.claim('pk_test_k4', 'old-nonce1', Date.now())).to.equal(true);
    await a.query(`INSERT INTO api_nonces VALUES ('pk_test_k4', 'old-nonce2', now() - interval '1 second'), ('pk_test_k4', 'old-nonce3', now() - interval '1 hour')`);
    expect(await s.sweep(1)).to.equal(2);
    const [left] = await a.query(`SELECT nonce FROM api_nonces WHERE api_key = 'pk_test_k4' ORDER BY nonce`);
    expect((left as Array<{ nonce: string }>).map((r) => r.nonce)).to.deep.equal(['ahead-nonce', 'old-nonce1']);
  });
});
