/**
 * A database restore never hands out a memo twice (docs/deployment.md, "Key-index marks", memos):
 * the service gives XRP memos (one shared deposit account per application and chain), the
 * database is dumped with pg_dump, more memos are given (the lost window), the dump is restored
 * with pg_restore into a new database and the service restarted on it. The next memos are above
 * every memo given before, no memo belongs to two users, and one MEMO_ROLLBACK names the window.
 * Software key store (marks in the key-store file); no XRP node is needed to give memos.
 */
import { expect } from 'chai';
import { Client } from 'pg';
import { WcsService, type CreatedApplication } from '@wcs/server';
import { prepareTestKeystore, TEST_ACTOR, testConfig, testEnv, testLogger } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { expectOk } from './support/expect';
import { dumpHost, type DumpableDatabase, type DumpHost } from './support/pg-dump';
import { cliJson, describeCli, runCli } from './support/processes';

const CREATE = '/api/v1/wallet/address/create';

interface Given {
  readonly user: string;
  readonly address: string;
  readonly memo: number;
}

async function query<R>(url: string, sql: string, bind: unknown[] = []): Promise<R[]> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql, bind)).rows as R[];
  } finally {
    await c.end();
  }
}

describe('a database restore never hands out a memo twice (XRP, software key store)', function () {
  this.timeout(300_000);
  let host: DumpHost;
  let svc: WcsService | null = null;
  let original: DumpableDatabase;
  let restored: DumpableDatabase;
  let dump: string;
  let app: CreatedApplication;
  const earlier: Given[] = [];
  const lost: Given[] = [];

  const start = (url: string) => WcsService.start(testConfig(url), testLogger(), { api: true, workers: false });
  const give = async (users: string[]): Promise<Given[]> => {
    const client = new SigningClient(svc!.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    const out: Given[] = [];
    for (const user of users) {
      const rec = expectOk(await client.post(CREATE, { chainCode: 'XRP', externalUserId: user })) as { address: string; memo: string };
      out.push({ user, address: rec.address, memo: Number(rec.memo) });
    }
    return out;
  };
  const alerts = (url: string, kind: string) =>
    query<{ details: Record<string, unknown> }>(url, 'SELECT details FROM operator_alerts WHERE kind = $1 ORDER BY id', [kind]);

  before(async () => {
    await prepareTestKeystore();
    host = await dumpHost();
    original = await host.createDatabase();
    svc = await start(original.url);
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'restore-memos', environment: 'test', chains: ['XRP'] });
  });
  after(async () => {
    await svc?.stop();
    await host?.stop();
  });

  it('before the backup: memos 1 to 4 on the shared account; the database knows the key store\'s mark above them', async () => {
    earlier.push(...(await give(['m1', 'm2', 'm3', 'm4'])));
    expect(earlier.map((g) => g.memo)).to.deep.equal([1, 2, 3, 4]);
    expect(new Set(earlier.map((g) => g.address)).size).to.equal(1);
    const [row] = await query<{ marked: string }>(original.url, `SELECT marked::text FROM key_counters WHERE application_id = $1 AND namespace = 'memo:XRP' AND purpose = 'memo'`, [app.id]);
    expect(Number(row!.marked)).to.be.above(4);
  });

  it('pg_dump; then the lost window: 6 more memos; the service stops', async () => {
    dump = await host.dump(original);
    lost.push(...(await give(['m5', 'm6', 'm7', 'm8', 'm9', 'm10'])));
    expect(lost.map((g) => g.memo)).to.deep.equal([5, 6, 7, 8, 9, 10]);
    await svc!.stop();
    svc = null;
  });

  it('pg_restore and a restart: memo_counters continue above the key store\'s mark; the window recorded; one MEMO_ROLLBACK', async () => {
    restored = await host.restore(dump);
    const [c] = await query<{ next_index: string }>(restored.url, 'SELECT next_index::text FROM memo_counters');
    expect(Number(c!.next_index), 'the restored counter is the backup\'s').to.equal(5);
    // wcs keystore marks sees the database behind for memo:XRP
    const look = ['keystore', 'marks', '--json'];
    const r = await runCli(look, { ...process.env, ...testEnv(restored.url) });
    expect(r.code, describeCli(look, r)).to.equal(1);
    expect(cliJson(look, r).marks.map((m: { namespace: string; state: string }) => [m.namespace, m.state])).to.deep.include(['memo:XRP', 'DATABASE_BEHIND']);

    svc = await start(restored.url);
    const highest = Math.max(...lost.map((g) => g.memo));
    const [after] = await query<{ next_index: string }>(restored.url, 'SELECT next_index::text FROM memo_counters');
    expect(Number(after!.next_index)).to.be.above(highest);
    const gaps = await query<{ namespace: string; from_index: number; to_index: number; checked: boolean }>(restored.url,
      'SELECT namespace, from_index::int AS from_index, to_index::int AS to_index, checked_at IS NOT NULL AS checked FROM key_index_gaps');
    expect(gaps.map((g) => [g.namespace, g.from_index, g.checked])).to.deep.equal([['memo:XRP', 5, true]]);
    expect(gaps[0]!.to_index).to.be.above(highest);
    const rollback = await alerts(restored.url, 'MEMO_ROLLBACK');
    expect(rollback).to.have.length(1);
    expect(rollback[0]!.details.gaps).to.deep.equal([{ applicationId: app.id, namespace: 'memo:XRP', fromIndex: 5, toIndex: gaps[0]!.to_index, applicationKnown: true }]);
    expect(await alerts(restored.url, 'KEY_INDEX_ROLLBACK')).to.deep.equal([]);
  });

  it('new users and the lost users asked for again get memos above every memo given before: no memo belongs to two users', async () => {
    const after = await give(['n1', 'n2', 'n3', 'm5', 'm9']);
    const before = Math.max(...[...earlier, ...lost].map((g) => g.memo));
    for (const g of after) expect(g.memo, g.user).to.be.above(before);
    const owners = new Map<string, Set<string>>();
    for (const g of [...earlier, ...lost, ...after]) {
      const k = `${g.address}:${g.memo}`;
      owners.set(k, (owners.get(k) ?? new Set()).add(g.user));
    }
    const shared = [...owners.entries()].filter(([, users]) => users.size > 1).map(([k, users]) => `${k}: ${[...users].join(', ')}`);
    expect(shared, 'memos given to two users').to.deep.equal([]);
  });

  it('a second restart finds nothing new; wcs keystore marks shows memo:XRP OK (exit 0)', async () => {
    await svc!.stop();
    svc = await start(restored.url);
    expect(await alerts(restored.url, 'MEMO_ROLLBACK')).to.have.length(1);
    const args = ['keystore', 'marks', '--json'];
    const r = await runCli(args, { ...process.env, ...testEnv(restored.url) });
    expect(r.code, describeCli(args, r)).to.equal(0);
    expect(cliJson(args, r).marks.map((m: { namespace: string; state: string }) => [m.namespace, m.state])).to.deep.equal([['memo:XRP', 'OK']]);
  });
});
