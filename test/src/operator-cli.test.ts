/**
 * `wcs operator …` and `wcs audit` (docs/console.md) against a real database: accounts made,
 * reset and disabled from the shell with their secrets shown once, bad input refused with nothing
 * written, and every change in the append-only audit log with the shell's actor.
 */
import { expect } from 'chai';
import * as os from 'node:os';
import * as pg from 'pg';
import { createTestDatabase, testEnv, type TestDatabase } from '@wcs/server/testing';
import { cliJson, describeCli, runCli } from './support/processes';

describe('wcs operator and wcs audit (operator accounts and the audit log from the shell)', function () {
  let db: TestDatabase;
  let env: Record<string, string | undefined>;

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function wcs(args: string[], exit: number): Promise<any> {
    const r = await runCli([...args, '--json'], env);
    expect(r.code, describeCli(args, r)).to.equal(exit);
    expect(r.stderr, `nothing on stderr with --json: ${describeCli(args, r)}`).to.equal('');
    return cliJson(args, r);
  }
  async function count(table: string): Promise<number> {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      return (await c.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n;
    } finally {
      await c.end();
    }
  }

  before(async function () {
    db = await createTestDatabase();
    env = { ...process.env, ...testEnv(db.url) };
  });
  after(async function () {
    if (db) await db.drop();
  });

  it('create: an admin gets a password and a TOTP URI once; list shows no secret; the audit log has the change with the shell\'s actor', async () => {
    const made = await wcs(['operator', 'create', '--username', 'root.admin', '--role', 'admin'], 0);
    expect(made.operator).to.include({ username: 'root.admin', role: 'admin', status: 'ACTIVE', totp: true, mustChangePassword: true });
    expect(made.password).to.match(/^[A-HJ-NP-Za-km-z2-9]{24}$/);
    expect(made.totpUri).to.match(/^otpauth:\/\/totp\/.+:root\.admin\?secret=[A-Z2-7]+&/);
    const viewer = await wcs(['operator', 'create', '--username', 'vera', '--role', 'viewer'], 0);
    expect(viewer.totpUri).to.equal(null);
    const list = await wcs(['operator', 'list'], 0);
    expect(list.operators.map((o: { username: string }) => o.username)).to.deep.equal(['root.admin', 'vera']);
    expect(JSON.stringify(list)).to.not.include(made.password);
    expect(JSON.stringify(list)).to.not.match(/otpauth|scrypt/);
    const audit = await wcs(['audit'], 0);
    expect(audit.entries).to.have.length(2);
    expect(audit.entries[0]).to.include({ actor: `cli:${os.userInfo().username}`, role: 'shell', channel: 'cli', source: os.hostname(), action: 'operator.create', target: 'operator:vera' });
    expect(audit.entries[0].before).to.equal(null);
    expect(audit.entries[0].after).to.deep.equal({ username: 'vera', role: 'viewer', status: 'ACTIVE', totp: false });
    expect(JSON.stringify(audit)).to.not.include(made.password);
  });

  it('bad input exits 2 (a bad role, a bad username) or 1 (a duplicate, an unknown operator) and writes nothing', async () => {
    const [ops, audits] = [await count('operators'), await count('audit_log')];
    const badRole = await wcs(['operator', 'create', '--username', 'bob', '--role', 'root'], 2);
    expect(badRole.error.msg).to.match(/--role/);
    const badName = await wcs(['operator', 'create', '--username', 'Bob!', '--role', 'viewer'], 2);
    expect(badName.error.msg).to.match(/username must be/);
    const dup = await wcs(['operator', 'create', '--username', 'vera', '--role', 'viewer'], 1);
    expect(dup.error).to.include({ name: 'OPERATOR_EXISTS' });
    const unknown = await wcs(['operator', 'disable', '--username', 'nobody'], 1);
    expect(unknown.error).to.include({ name: 'OPERATOR_NOT_FOUND' });
    expect(await wcs(['audit', '--limit', '0'], 2)).to.have.property('error');
    expect([await count('operators'), await count('audit_log')]).to.deep.equal([ops, audits]);
  });

  it('reset-password (with --totp) and disable: new secrets shown once, before and after in the log, keyset pages', async () => {
    const reset = await wcs(['operator', 'reset-password', '--username', 'vera', '--totp'], 0);
    expect(reset.password).to.match(/^[A-HJ-NP-Za-km-z2-9]{24}$/);
    expect(reset.totpUri).to.match(/secret=/);
    expect(reset.operator).to.include({ totp: true, mustChangePassword: true });
    const disabled = await wcs(['operator', 'disable', '--username', 'vera'], 0);
    expect(disabled.operator.status).to.equal('DISABLED');
    const page1 = await wcs(['audit', '--limit', '2'], 0);
    expect(page1.entries.map((e: { action: string }) => e.action)).to.deep.equal(['operator.disable', 'operator.reset-password-and-totp']);
    expect(page1.entries[0].before).to.include({ status: 'ACTIVE' });
    expect(page1.entries[0].after).to.include({ status: 'DISABLED' });
    const page2 = await wcs(['audit', '--limit', '2', '--before', page1.next], 0);
    expect(page2.entries.map((e: { action: string; target: string }) => `${e.action} ${e.target}`)).to.deep.equal(['operator.create operator:vera', 'operator.create operator:root.admin']);
    const only = await wcs(['audit', '--action', 'operator.disable'], 0);
    expect(only.entries).to.have.length(1);
    expect(JSON.stringify([page1, page2])).to.not.include(reset.password);
  });

  it('alerts: open ones listed newest first; ack is audited once; a second ack and an unknown or malformed id are refused', async () => {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    await c.query(`INSERT INTO operator_alerts (kind, message) VALUES ('DEEP_REORG', 'a reorg of 9 blocks'), ('FEE_WALLET_LOW', 'the fee wallet is low')`);
    await c.end();
    const open = await wcs(['alerts'], 0);
    expect(open.alerts.map((a: { kind: string }) => a.kind)).to.deep.equal(['FEE_WALLET_LOW', 'DEEP_REORG']);
    const id = open.alerts[1].id;
    const acked = await wcs(['alerts', 'ack', id], 0);
    expect(acked.alert).to.include({ id, kind: 'DEEP_REORG', acknowledgedBy: `cli:${os.userInfo().username}` });
    expect((await wcs(['alerts', 'ack', id], 1)).error).to.include({ name: 'ALERT_ALREADY_ACKNOWLEDGED' });
    expect((await wcs(['alerts', 'ack', '99999'], 1)).error).to.include({ name: 'ALERT_NOT_FOUND' });
    expect(await wcs(['alerts', 'ack', 'abc'], 2)).to.have.property('error');
    expect((await wcs(['alerts'], 0)).alerts.map((a: { kind: string }) => a.kind)).to.deep.equal(['FEE_WALLET_LOW']);
    expect((await wcs(['alerts', '--all'], 0)).alerts).to.have.length(2);
    const log = await wcs(['audit', '--action', 'alert.acknowledge'], 0);
    expect(log.entries).to.have.length(1);
    expect(log.entries[0].target).to.equal(`alert:${id}`);
  });

  it('withdrawal risk rules changed from the shell are audited once per real change, before and after', async () => {
    const app = await wcs(['app', 'create', '--name', 'rules', '--env', 'test', '--chains', 'ETH'], 0);
    await wcs(['withdraw', 'limits', '--app', String(app.id), '--token', '10200', '--approval-over', '1.5'], 0);
    await wcs(['withdraw', 'limits', '--app', String(app.id), '--token', '10200', '--approval-over', '2'], 0);
    const dest = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
    await wcs(['withdraw', 'block', 'ETH', dest, '--app', String(app.id)], 0);
    await wcs(['withdraw', 'block', 'ETH', dest, '--app', String(app.id)], 0);
    await wcs(['withdraw', 'allowlist-only', 'on', '--app', String(app.id)], 0);
    await wcs(['withdraw', 'allowlist-only', 'on', '--app', String(app.id)], 0);
    const log = await wcs(['audit', '--limit', '10'], 0);
    const all = log.entries.filter((e: { target: string }) => e.target.startsWith(`app:${app.id}`));
    expect(all[all.length - 1]).to.include({ action: 'app.create', target: `app:${app.id}` });
    const mine = all.filter((e: { action: string }) => e.action.startsWith('withdraw.'));
    expect(mine.map((e: { action: string }) => e.action)).to.deep.equal(['withdraw.allowlist-only.set', 'withdraw.blocklist.add', 'withdraw.limits.set', 'withdraw.limits.set']);
    expect(mine[3].before).to.equal(null);
    expect(mine[2].before).to.include({ approvalThreshold: '1500000000000000000' });
    expect(mine[2].after).to.include({ approvalThreshold: '2000000000000000000', perOrderMax: null });
    expect(mine[1].target).to.equal(`app:${app.id}/ETH:${dest}`);
    expect(mine[0].after).to.deep.equal({ allowlistOnly: true });
  });
});
