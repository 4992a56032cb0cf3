import { expect } from 'chai';
import { Client } from 'pg';
import type { Sequelize } from 'sequelize';
import { scanTestDb, type ScanTestDb } from './scan-test-db';
import { WatchList } from './watch-list';

/**
 * The scanner's address set under concurrent address creation (real Postgres): ids are handed
 * out at insert and rows commit in any order, so a row with a lower id can become visible after
 * one with a higher id was read. Found by the collection benchmark: 3 of 1,000 addresses created
 * at once through the API were never watched, and their deposits never credited.
 */
describe('watch list: addresses committed out of id order are still loaded (real Postgres)', () => {
  let t: ScanTestDb;
  let sequelize: Sequelize;
  let pg: Client;
  let appId: number;
  const CHAIN = 9001;
  let n = 0;

  before(async () => {
    t = await scanTestDb({ id: CHAIN, code: 'WTST', family: 'evm', curve: 'secp256k1', addressing: 'hd', nativeSymbol: 'ETH', decimals: 18 });
    ({ sequelize, pg, appId } = t);
  });
  after(async () => {
    await t?.close();
  });

  /** Inserts one address row through `client` (inside whatever transaction it has open); its address. */
  async function insertAddress(client: Client): Promise<{ id: number; address: string }> {
    const k = ++n;
    const address = `0x${k.toString(16).padStart(40, '0')}`;
    const key = await client.query(`INSERT INTO user_keys (application_id, namespace, external_user_id, key_index, public_key) VALUES ($1, 'evm', $2, $3, '\\x00') RETURNING id`, [appId, `u-${k}`, k]);
    const row = await client.query(
      `INSERT INTO addresses (application_id, chain_id, chain_code, external_user_id, address, user_key_id) VALUES ($1, $2, 'WTST', $3, $4, $5) RETURNING id`,
      [appId, CHAIN, `u-${k}`, address, key.rows[0].id],
    );
    return { id: row.rows[0].id, address };
  }

  it('an address whose lower id commits after a higher one was read is watched once it commits', async () => {
    const watch = new WatchList(sequelize, CHAIN, false);
    const first = await insertAddress(pg);
    await watch.refresh();
    expect(watch.ownerOf(first.address)?.addressId).to.equal(first.id);

    // a slow request takes its id, then a fast one takes the next and commits first
    const slow = new Client({ connectionString: t.db.url });
    await slow.connect();
    try {
      await slow.query('BEGIN');
      const late = await insertAddress(slow);
      const early = await insertAddress(pg);
      expect(early.id).to.be.above(late.id);
      await watch.refresh();
      expect(watch.ownerOf(early.address)?.addressId, 'the committed row').to.equal(early.id);
      expect(watch.ownerOf(late.address), 'not committed yet').to.equal(null);
      // more readings while the slow transaction is open never give up on its row
      for (let i = 0; i < 3; i++) await watch.refresh();
      await slow.query('COMMIT');
      await watch.refresh();
      expect(watch.ownerOf(late.address)?.addressId, 'the lower id, committed later').to.equal(late.id);
      expect(watch.addresses().has(late.address)).to.equal(true);
    } finally {
      await slow.end();
    }
  });

  it('an aborted insert leaves no hole: later rows load, and the rows read again above the floor are not counted twice', async () => {
    const watch = new WatchList(sequelize, CHAIN, false);
    await watch.refresh();
    const before = watch.size;
    const slow = new Client({ connectionString: t.db.url });
    await slow.connect();
    try {
      await slow.query('BEGIN');
      const lost = await insertAddress(slow);
      const kept = await insertAddress(pg);
      await watch.refresh();
      await slow.query('ROLLBACK');
      const after = await insertAddress(pg);
      await watch.refresh();
      await watch.refresh();
      expect(watch.ownerOf(lost.address)).to.equal(null);
      expect(watch.ownerOf(kept.address)?.addressId).to.equal(kept.id);
      expect(watch.ownerOf(after.address)?.addressId).to.equal(after.id);
      expect(watch.size).to.equal(before + 2);
    } finally {
      await slow.end();
    }
  });

  it('100 addresses created by 10 concurrent connections, readings taken all along: every one is watched', async () => {
    const watch = new WatchList(sequelize, CHAIN, false);
    const clients = await Promise.all(Array.from({ length: 10 }, async () => {
      const c = new Client({ connectionString: t.db.url });
      await c.connect();
      return c;
    }));
    try {
      const made: Array<{ id: number; address: string }> = [];
      let done = false;
      const reader = (async () => {
        while (!done) await watch.refresh();
      })();
      await Promise.all(clients.map(async (c, k) => {
        for (let i = 0; i < 10; i++) {
          await c.query('BEGIN');
          const a = await insertAddress(c);
          // commit after a random pause, so commits overtake each other's ids
          await new Promise((r) => setTimeout(r, (k * 7 + i * 13) % 20));
          await c.query('COMMIT');
          made.push(a);
        }
      }));
      done = true;
      await reader;
      await watch.refresh();
      const missing = made.filter((a) => watch.ownerOf(a.address)?.addressId !== a.id);
      expect(missing, 'addresses not watched').to.deep.equal([]);
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
  });
});
