import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'chai';
import { Client } from 'pg';
import { SoftwareKeyStore, initializeSoftwareKeystore } from '@wcs/custody-software';
import { Database } from '../db/database';
import { migrate } from '../db/migrations';
import { createTestDatabase, TEST_MNEMONIC, testConfig, testLogger, type TestDatabase } from '../testing';
import { KeyIndexMarkGuard, databaseCounters, databaseLineage, isMemoMarkNamespace, memoMarkNamespace } from './index-marks';

const AHEAD = 3;
const CHAIN = 9101;
const ACCOUNT = 'rMemoMarksTestAccount';
const NS = memoMarkNamespace('MTST');

/**
 * The memo side of the key-store marks: the guard's database side reads memo_counters (through the
 * shared deposit account) and the mark it knows (key_counters, purpose 'memo'); a restored
 * memo_counters row behind the key store's mark is moved above it, the window recorded and
 * MEMO_ROLLBACK raised once. The allocation itself (AddressService.createMemo) is exercised end to
 * end in test/src/restore-memos.test.ts.
 */
describe('memo marks (real Postgres, software key store)', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let database: Database;
  let pg: Client;
  let dir: string;
  let store: SoftwareKeyStore;
  let lineage: string;
  let appId: number;

  const guard = () => new KeyIndexMarkGuard(database.sequelize, store, { ahead: AHEAD, logger: testLogger() });
  const markOf = async (): Promise<number> => (await store.indexMarks.read(lineage)).find((m) => m.applicationId === appId && m.namespace === NS)?.next ?? 0;
  const memoCounter = async (): Promise<number> => Number((await pg.query('SELECT next_index FROM memo_counters WHERE chain_id = $1', [CHAIN])).rows[0]?.next_index ?? 0);
  const knownMark = async (): Promise<number> =>
    Number((await pg.query(`SELECT marked FROM key_counters WHERE application_id = $1 AND namespace = $2 AND purpose = 'memo'`, [appId, NS])).rows[0]?.marked ?? 0);
  const alerts = async (kind: string) => (await pg.query('SELECT details FROM operator_alerts WHERE kind = $1 ORDER BY id', [kind])).rows.map((r) => r.details as Record<string, unknown>);

  /** What AddressService.createMemo does per memo: the counter moves (at least to the floor), then the mark covers the memo. */
  async function issue(g: KeyIndexMarkGuard, n: number): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const floor = await g.floor(appId, NS);
      const { rows } = await pg.query(
        `INSERT INTO memo_counters (chain_id, address, next_index) VALUES ($1, $2, GREATEST($3::numeric, 1) + 1)
         ON CONFLICT (chain_id, address) DO UPDATE SET next_index = GREATEST(memo_counters.next_index, $3::numeric) + 1 RETURNING (next_index - 1)::int AS memo`,
        [CHAIN, ACCOUNT, floor],
      );
      await g.cover(appId, NS, rows[0].memo + 1);
      out.push(rows[0].memo);
    }
    return out;
  }

  before(async () => {
    db = await createTestDatabase();
    database = new Database(testConfig(db.url), testLogger());
    await database.open();
    await migrate(database.sequelize);
    pg = new Client({ connectionString: db.url });
    await pg.connect();
    appId = (await pg.query(`INSERT INTO applications (name, environment, api_key) VALUES ('memo', 'test', 'pk_test_memo_marks') RETURNING id`)).rows[0].id;
    await pg.query(
      `INSERT INTO chains (id, code, name, family, environment, network, curve, addressing, native_symbol, decimals, confirmations)
       VALUES ($1, 'MTST', 'memo marks test', 'xrp', 'test', 'local', 'secp256k1', 'memo', 'XRP', 6, 1)`,
      [CHAIN],
    );
    await pg.query(`INSERT INTO deposit_accounts (application_id, chain_id, address, key_index, public_key) VALUES ($1, $2, $3, 0, '\\x00')`, [appId, CHAIN, ACCOUNT]);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-memo-marks-'));
    const opts = { dataDir: dir, env: { WCS_KEYSTORE_PASSPHRASE: 'memo marks test passphrase' }, devMode: false };
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

  it('memo mark namespaces: memo:<CHAIN_CODE>, told apart from key namespaces', () => {
    expect(NS).to.equal('memo:MTST');
    expect(isMemoMarkNamespace(NS)).to.equal(true);
    expect(isMemoMarkNamespace('evm')).to.equal(false);
  });

  it('every memo handed out is below the key store\'s mark; one write serves `ahead` memos; the database knows the mark (key_counters, purpose memo)', async () => {
    const g = guard();
    const w0 = store.indexMarks.writes;
    const memos = await issue(g, 12);
    expect(memos).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(await markOf()).to.be.above(12).and.at.most(12 + 1 + AHEAD);
    expect(store.indexMarks.writes - w0, 'durable writes for 12 memos').to.be.within(2, 6);
    expect(await knownMark()).to.equal(await markOf());
    const d = (await databaseCounters(database.sequelize)).get(`${appId}\n${NS}`);
    expect(d).to.deep.equal({ applicationId: appId, namespace: NS, next: 13, issued: 13, marked: await markOf() });
    // a restart without a restore: no window, no alert
    expect((await guard().check()).gaps).to.deep.equal([]);
    expect(await alerts('MEMO_ROLLBACK')).to.deep.equal([]);
  });

  it('a restored database (memo counter and the mark it knew rolled back): the check moves the counter above the mark, records the window, one MEMO_ROLLBACK; no memo handed out again', async () => {
    const g0 = guard();
    const before = await issue(g0, 2);
    // the backup
    const backup = { counter: await memoCounter(), marked: await knownMark() };
    const lost = await issue(g0, 9);
    const mark = await markOf();
    expect(mark).to.be.above(Math.max(...lost));
    // the restore
    await pg.query('UPDATE memo_counters SET next_index = $2 WHERE chain_id = $1', [CHAIN, backup.counter]);
    await pg.query(`UPDATE key_counters SET next_index = $3, marked = $3 WHERE application_id = $1 AND namespace = $2 AND purpose = 'memo'`, [appId, NS, backup.marked]);

    const g = guard();
    const report = await g.check();
    expect(report.gaps).to.deep.equal([{ applicationId: appId, namespace: NS, fromIndex: backup.counter, toIndex: mark, applicationKnown: true }]);
    expect(await memoCounter()).to.equal(mark);
    expect(await knownMark()).to.equal(mark);
    const rows = (await pg.query(`SELECT from_index::int AS f, to_index::int AS t, checked_at IS NOT NULL AS checked, unchecked_chains FROM key_index_gaps WHERE namespace = $1`, [NS])).rows;
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({ f: backup.counter, t: mark, checked: true });
    expect(rows[0].unchecked_chains).to.match(/unattributed/);
    const alerted = await alerts('MEMO_ROLLBACK');
    expect(alerted.map((d) => d.gaps)).to.deep.equal([[{ applicationId: appId, namespace: NS, fromIndex: backup.counter, toIndex: mark, applicationKnown: true }]]);
    expect(await alerts('KEY_INDEX_ROLLBACK'), 'a memo window is not a key-index window').to.deep.equal([]);

    const after = await issue(g, 3);
    expect(after[0]).to.equal(mark);
    const earlier = new Set([...before, ...lost]);
    expect(after.filter((m) => earlier.has(m)), 'memos handed out twice').to.deep.equal([]);
    // a second start: nothing new
    expect((await guard().check()).gaps).to.deep.equal([]);
    expect(await alerts('MEMO_ROLLBACK')).to.have.length(1);
  });

  it('a restored copy without the memo counter (no memo had been given yet): the next memo starts at the mark', async () => {
    const mark = await markOf();
    await pg.query('DELETE FROM memo_counters WHERE chain_id = $1', [CHAIN]);
    await pg.query(`DELETE FROM key_counters WHERE application_id = $1 AND namespace = $2`, [appId, NS]);
    const g = guard();
    const report = await g.check();
    expect(report.gaps).to.deep.include({ applicationId: appId, namespace: NS, fromIndex: 0, toIndex: mark, applicationKnown: true });
    expect(await issue(g, 1)).to.deep.equal([mark]);
    expect(await alerts('MEMO_ROLLBACK')).to.have.length(2);
  });
});
