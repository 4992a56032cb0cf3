/**
 * `wcs callback resend` (one task, or every FAILED task of an application and bizType) and
 * `wcs callback list`, against a real database; the resend rules are the API's (docs/callbacks.md).
 */
import { expect } from 'chai';
import * as pg from 'pg';
import { createTestDatabase, testEnv, type TestDatabase } from '@wcs/server/testing';
import { Codes } from './support/expect';
import { cliJson, describeCli, runCli } from './support/processes';

const CALLBACK_TASK_NOT_FOUND = 1005001001;
const CALLBACK_TASK_BUSY = 1005001002;

describe('wcs callback resend / list', function () {
  let db: TestDatabase;
  let env: Record<string, string | undefined>;
  let appId: number;

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function wcs(args: string[], exit: number): Promise<any> {
    const r = await runCli([...args, '--json'], env);
    expect(r.code, describeCli(args, r)).to.equal(exit);
    return cliJson(args, r);
  }
  async function statuses(): Promise<Record<number, string>> {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const { rows } = await c.query('SELECT id::int AS id, status FROM callback_tasks ORDER BY id');
      return Object.fromEntries(rows.map((r: { id: number; status: string }) => [r.id, r.status]));
    } finally {
      await c.end();
    }
  }
  /** A FAILED task: a test event for a bizType with no callback URL is recorded FAILED. */
  async function failedTask(bizType: string): Promise<number> {
    const t = await wcs(['callback', 'test', '--app', String(appId), '--biz-type', bizType], 0);
    expect(t.status).to.equal('FAILED');
    return t.callbackTaskId;
  }

  before(async function () {
    db = await createTestDatabase();
    env = { ...process.env, ...testEnv(db.url) };
    appId = (await wcs(['app', 'create', '--name', 'cb', '--env', 'test', '--chains', 'ETH'], 0)).id;
  });
  after(async function () {
    if (db) await db.drop();
  });

  it('--task: refused while no URL is configured (nothing changes), queued once it is, refused again while queued', async function () {
    const id = await failedTask('RECHARGE');
    expect((await wcs(['callback', 'resend', '--task', String(id)], 1)).error).to.include({ code: Codes.CALLBACK_URL_INVALID });
    expect((await statuses())[id]).to.equal('FAILED');
    await wcs(['app', 'set-callback', '--app', String(appId), '--biz-type', 'RECHARGE', '--url', 'http://127.0.0.1:9/cb'], 0);
    const out = await wcs(['callback', 'resend', '--task', String(id)], 0);
    expect(out.skipped).to.deep.equal([]);
    expect(out.resent.map((t: { id: number; status: string; retryTimes: number; url: string }) => [t.id, t.status, t.retryTimes, t.url])).to.deep.equal([[id, 'WAITING', 0, 'http://127.0.0.1:9/cb']]);
    expect((await statuses())[id]).to.equal('WAITING');
    expect((await wcs(['callback', 'resend', '--task', String(id)], 1)).error).to.include({ code: CALLBACK_TASK_BUSY });
    expect((await wcs(['callback', 'resend', '--task', '99999'], 1)).error).to.include({ code: CALLBACK_TASK_NOT_FOUND });
  });

  it('--app --biz-type: every FAILED task of that bizType is queued, other bizTypes untouched; list shows what is left', async function () {
    const w1 = await failedTask('WITHDRAW');
    const w2 = await failedTask('WITHDRAW');
    const other = await failedTask('COLLECT');
    await wcs(['app', 'set-callback', '--app', String(appId), '--biz-type', 'WITHDRAW', '--url', 'http://127.0.0.1:9/w'], 0);
    const out = await wcs(['callback', 'resend', '--app', String(appId), '--biz-type', 'WITHDRAW'], 0);
    expect(out.resent.map((t: { id: number; status: string }) => [t.id, t.status])).to.deep.equal([[w1, 'WAITING'], [w2, 'WAITING']]);
    const after = await statuses();
    expect([after[w1], after[w2], after[other]]).to.deep.equal(['WAITING', 'WAITING', 'FAILED']);
    // nothing FAILED left for WITHDRAW: nothing to do
    expect((await wcs(['callback', 'resend', '--app', String(appId), '--biz-type', 'WITHDRAW'], 0)).resent).to.deep.equal([]);

    const failed = await wcs(['callback', 'list', '--app', String(appId), '--status', 'FAILED'], 0);
    expect(failed.list.map((t: { id: number; bizType: string }) => [t.id, t.bizType])).to.deep.equal([[other, 'COLLECT']]);
    expect(failed.total).to.equal(1);
    const all = await wcs(['callback', 'list', '--app', String(appId), '--limit', '2'], 0);
    expect(all.list).to.have.length(2);
    expect(all.total).to.equal(4);
    const human = await runCli(['callback', 'list', '--app', String(appId), '--status', 'FAILED'], env);
    expect(human.stdout).to.match(new RegExp(`^task ${other} COLLECT bizId 0 FAILED`));
  });

  it('bad combinations are usage errors (exit 2) and change nothing; an unknown application is APPLICATION_NOT_FOUND', async function () {
    const before = await statuses();
    for (const args of [['callback', 'resend'], ['callback', 'resend', '--task', '1', '--app', '1'], ['callback', 'resend', '--app', String(appId)], ['callback', 'resend', '--app', String(appId), '--biz-type', 'NOPE']]) {
      expect((await wcs(args, 2)).error, args.join(' ')).to.include({ name: 'UsageError' });
    }
    expect((await wcs(['callback', 'resend', '--app', '999', '--biz-type', 'RECHARGE'], 1)).error).to.include({ code: Codes.APPLICATION_NOT_FOUND });
    expect(await statuses()).to.deep.equal(before);
  });
});
