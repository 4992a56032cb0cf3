import { expect } from 'chai';
import { Sequelize } from 'sequelize';
import { createTestDatabase, type TestDatabase } from '../testing';
import { migrate } from '../db/migrations';
import { PgBucketStore } from './bucket-store';
import { ApiKeyLimiter, LEASE_TTL_MS } from './api-key-limiter';
import { AuthFailureLimiter } from './auth-failure-limiter';
import Redis from 'ioredis';
import { RedisBucketStore } from './redis-bucket-store';

/** The Redis of this machine and CI (the test fails loudly when it is not there); WCS_TEST_REDIS_URL overrides. */
const REDIS_URL = process.env.WCS_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15';

describe('rate limiters', () => {
  describe('PgBucketStore and ApiKeyLimiter on real Postgres', () => {
    let db: TestDatabase;
    let sequelize: Sequelize;

    before(async () => {
      db = await createTestDatabase();
      sequelize = new Sequelize(db.url, { logging: false, pool: { max: 8 } });
      await migrate(sequelize);
    });
    after(async () => {
      await sequelize.close();
      await db.drop();
    });

    it('a new bucket starts full; takes never exceed what it holds, whatever the concurrency', async () => {
      const store = new PgBucketStore(sequelize);
      const policy = { ratePerSecond: 0.001, burst: 50 }; // no refill to speak of within the test
      const grants = await Promise.all(Array.from({ length: 40 }, () => store.take('t1', 3, policy)));
      const total = grants.reduce((a, g) => a + g.granted, 0);
      expect(total).to.equal(50);
      expect(grants.filter((g) => g.granted === 3)).to.have.length(16);
      expect(Math.min(...grants.map((g) => g.left))).to.be.at.least(0).and.below(1);
    });

    it('refills at the rate, capped at the burst', async () => {
      const store = new PgBucketStore(sequelize);
      const policy = { ratePerSecond: 100, burst: 10 };
      expect((await store.take('t2', 10, policy)).granted).to.equal(10);
      expect((await store.take('t2', 10, policy)).granted).to.be.below(3);
      await new Promise((r) => setTimeout(r, 300)); // 30 tokens' worth, capped at 10
      const g = await store.take('t2', 100, policy);
      expect(g.granted).to.equal(10);
    });

    it('two limiters (two processes) on one bucket accept no more than it gives, and refuse with the wait for the next token', async () => {
      const policy = { ratePerSecond: 2, burst: 30 };
      const a = new ApiKeyLimiter(new PgBucketStore(sequelize));
      const b = new ApiKeyLimiter(new PgBucketStore(sequelize));
      const started = Date.now();
      const decisions = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).take('t3', policy)));
      const elapsed = (Date.now() - started) / 1000;
      const accepted = decisions.filter((d) => d.allowed).length;
      expect(accepted).to.be.at.least(30 - 2 * 3); // at most one unused lease of 3 per limiter is lost
      expect(accepted).to.be.at.most(Math.floor(30 + policy.ratePerSecond * (elapsed + LEASE_TTL_MS / 1000)));
      const refused = decisions.find((d) => !d.allowed);
      expect(refused && !refused.allowed && refused.waitMs).to.be.within(1, 500);
    });

    it('a refused key is not asked of the database again until its next token is due', async () => {
      let calls = 0;
      const real = new PgBucketStore(sequelize);
      const counting = { take: (k: string, w: number, p: { ratePerSecond: number; burst: number }) => (calls++, real.take(k, w, p)) };
      const limiter = new ApiKeyLimiter(counting);
      const policy = { ratePerSecond: 0.01, burst: 1 };
      expect((await limiter.take('t4', policy)).allowed).to.equal(true);
      const before = calls;
      for (let i = 0; i < 100; i++) expect((await limiter.take('t4', policy)).allowed).to.equal(false);
      expect(calls - before).to.equal(1);
    });

    it('a leased token older than the lease lifetime is dropped, not carried into a later burst', async () => {
      let now = 1_000_000;
      const limiter = new ApiKeyLimiter(new PgBucketStore(sequelize), () => now);
      const policy = { ratePerSecond: 100, burst: 100 }; // lease of 5
      expect((await limiter.take('t5', policy)).allowed).to.equal(true);
      const remainingBefore = await limiter.take('t5', policy);
      expect(remainingBefore.allowed).to.equal(true);
      now += LEASE_TTL_MS + 1;
      // the 3 tokens still in hand are gone; the next take leases again (the database's clock decides the refill)
      const d = await limiter.take('t5', policy);
      expect(d.allowed).to.equal(true);
      const [rows] = await sequelize.query(`SELECT last_grant FROM api_rate_buckets WHERE bucket = 't5'`);
      expect(rows).to.deep.equal([{ last_grant: 5 }]);
    });
  });

  describe('RedisBucketStore on a real Redis (WCS_RATE_LIMIT_REDIS_URL)', () => {
    let store: RedisBucketStore;
    const prefix = `wcs:test:${process.pid}:${Date.now()}:`;

    before(async () => {
      store = new RedisBucketStore(REDIS_URL, prefix);
      await store.init();
    });
    after(async () => {
      await store.destroy();
      const r = new Redis(REDIS_URL);
      const keys = await r.keys(`${prefix}*`);
      if (keys.length) await r.del(...keys);
      await r.quit();
    });

    it('a new bucket starts full; takes never exceed what it holds, whatever the concurrency', async () => {
      const policy = { ratePerSecond: 0.001, burst: 50 };
      const grants = await Promise.all(Array.from({ length: 40 }, () => store.take('r1', 3, policy)));
      expect(grants.reduce((a, g) => a + g.granted, 0)).to.equal(50);
      expect(grants.filter((g) => g.granted === 3)).to.have.length(16);
    });

    it('refills at the rate, capped at the burst', async () => {
      const policy = { ratePerSecond: 100, burst: 10 };
      // what comes back between the two takes: one token per 10 ms (more on a loaded machine)
      const t0 = performance.now();
      expect((await store.take('r2', 10, policy)).granted).to.equal(10);
      const second = (await store.take('r2', 10, policy)).granted;
      expect(second).to.be.at.most(Math.min(10, Math.ceil(((performance.now() - t0) + 20) / 10)));
      expect(second).to.be.below(10);
      await new Promise((r) => setTimeout(r, 300));
      expect((await store.take('r2', 100, policy)).granted).to.equal(10);
    });

    it('two limiters (two processes) on one Redis bucket accept no more than it gives', async () => {
      const other = new RedisBucketStore(REDIS_URL, prefix);
      await other.init();
      try {
        const policy = { ratePerSecond: 2, burst: 30 };
        const a = new ApiKeyLimiter(store);
        const b = new ApiKeyLimiter(other);
        const started = Date.now();
        const decisions = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).take('r3', policy)));
        const elapsed = (Date.now() - started) / 1000;
        const accepted = decisions.filter((d) => d.allowed).length;
        expect(accepted).to.be.at.least(30 - 2 * 3);
        expect(accepted).to.be.at.most(Math.floor(30 + policy.ratePerSecond * (elapsed + LEASE_TTL_MS / 1000)));
      } finally {
        await other.destroy();
      }
    });

    it('an unreachable Redis fails init at once (the service then refuses to start, naming WCS_RATE_LIMIT_REDIS_URL)', async () => {
      const dead = new RedisBucketStore('redis://127.0.0.1:1/0', prefix);
      let failed: unknown = null;
      await dead.init().catch((e: unknown) => (failed = e));
      expect(failed, 'init').to.be.instanceOf(Error);
      await dead.destroy();
    });
  });

  describe('AuthFailureLimiter', () => {
    it('lets an address fail burst times, then refuses it until a token is back; other addresses are untouched', () => {
      let now = 0;
      const l = new AuthFailureLimiter({ ratePerSecond: 1, burst: 3 }, 100, () => now);
      for (let i = 0; i < 3; i++) {
        expect(l.waitMs('10.0.0.1')).to.equal(0);
        l.recordFailure('10.0.0.1');
      }
      expect(l.waitMs('10.0.0.1')).to.equal(1000);
      expect(l.waitMs('10.0.0.2')).to.equal(0);
      now += 400;
      expect(l.waitMs('10.0.0.1')).to.equal(600);
      now += 600;
      expect(l.waitMs('10.0.0.1')).to.equal(0);
    });

    it('forgets the least recently seen address beyond its bound (a forgotten address starts full)', () => {
      const l = new AuthFailureLimiter({ ratePerSecond: 0.001, burst: 1 }, 2, () => 0);
      l.recordFailure('a');
      l.recordFailure('b');
      expect(l.waitMs('a')).to.be.above(0);
      l.recordFailure('c'); // evicts b (a was just read)
      expect(l.waitMs('b')).to.equal(0);
      expect(l.waitMs('a')).to.be.above(0);
    });
  });
});
