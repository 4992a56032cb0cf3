import { expect } from 'chai';
import { Client } from 'pg';
import { Sequelize } from 'sequelize';
import { migrate } from '../db/migrations';
import { SecretBox } from '../crypto/secret-box';
import { createTestDatabase, type TestDatabase } from '../testing';
import type { AuditActor } from './audit';
import { LOCKOUT, SESSION } from './login-rules';
import { OperatorAuth, type LoginResult } from './operator-auth';
import { Operators } from './operators';
import { base32Decode, totpCode } from './totp';

const SHELL: AuditActor = { name: 'cli:tester', role: 'shell', channel: 'cli', source: 'test-host' };

describe('console logins and sessions (real Postgres)', () => {
  let db: TestDatabase;
  let sequelize: Sequelize;
  let pg: Client;
  let ops: Operators;
  let clock: number;
  let auth: OperatorAuth;
  let admin: { password: string; secret: Uint8Array };
  let viewer: { password: string };

  before(async () => {
    db = await createTestDatabase();
    sequelize = new Sequelize(db.url, { dialect: 'postgres', logging: false });
    await migrate(sequelize);
    pg = new Client({ connectionString: db.url });
    await pg.connect();
    ops = new Operators(sequelize, new SecretBox(Buffer.alloc(32, 9)));
    const a = await ops.create(SHELL, { username: 'ada', role: 'admin' });
    admin = { password: a.password, secret: base32Decode(new URL(a.totpUri!).searchParams.get('secret')!) };
    viewer = { password: (await ops.create(SHELL, { username: 'val', role: 'viewer' })).password };
  });
  beforeEach(() => {
    clock = Date.now();
    auth = new OperatorAuth(sequelize, ops, () => clock);
  });
  after(async () => {
    await pg?.end();
    await sequelize?.close();
    await db?.drop();
  });

  const ok = (r: LoginResult) => {
    if (!r.ok) expect.fail(`login refused: ${r.reason}`);
    return r;
  };

  it('an admin logs in with password and TOTP; the code is then spent; only hashes of the tokens are stored', async () => {
    expect(await auth.login({ username: 'ada', password: admin.password, totp: null, source: '10.0.0.1' })).to.deep.equal({ ok: false, reason: 'TOTP_INVALID' });
    const code = totpCode(admin.secret, clock);
    const r = ok(await auth.login({ username: 'ada', password: admin.password, totp: code, source: '10.0.0.1' }));
    expect(r.operator).to.deep.include({ username: 'ada', role: 'admin' });
    expect(r.mustChangePassword).to.equal(true);
    expect(await auth.login({ username: 'ada', password: admin.password, totp: code, source: '10.0.0.1' }), 'the same code twice').to.deep.equal({ ok: false, reason: 'TOTP_INVALID' });
    const rows = (await pg.query('SELECT encode(token_hash, \'hex\') AS t, encode(csrf_hash, \'hex\') AS c FROM operator_sessions')).rows;
    expect(JSON.stringify(rows)).to.not.include(Buffer.from(r.token).toString('hex'));
    const s = await auth.authenticate(r.token);
    expect(s?.operator.username).to.equal('ada');
    expect(auth.checkCsrf(s!, r.csrf)).to.equal(true);
    expect(auth.checkCsrf(s!, r.token)).to.equal(false);
    expect(auth.checkCsrf(s!, undefined)).to.equal(false);
  });

  it('an unknown user and a wrong password look the same; the fifth failure locks the account, even for the right password', async () => {
    // failures below spent the admin's failure count only on 'val'
    expect(await auth.login({ username: 'nobody', password: 'whatever-password', source: '10.0.0.2' })).to.deep.equal({ ok: false, reason: 'INVALID_CREDENTIALS' });
    for (let i = 0; i < LOCKOUT.failures; i++) {
      expect(await auth.login({ username: 'val', password: 'wrong-password-123', source: `10.0.1.${i}` })).to.deep.equal({ ok: false, reason: 'INVALID_CREDENTIALS' });
    }
    const locked = await auth.login({ username: 'val', password: viewer.password, source: '10.0.2.1' });
    expect(locked.ok === false && locked.reason).to.equal('LOCKED');
    const until = (await pg.query(`SELECT extract(epoch FROM locked_until - now())::float AS s FROM operators WHERE username = 'val'`)).rows[0].s;
    expect(until).to.be.within(LOCKOUT.lockMs / 1000 - 10, LOCKOUT.lockMs / 1000);
    // 15 minutes later (on the database's clock, which judges it)
    await pg.query(`UPDATE operators SET locked_until = locked_until - make_interval(secs => $1) WHERE username = 'val'`, [LOCKOUT.lockMs / 1000 + 1]);
    ok(await auth.login({ username: 'val', password: viewer.password, source: '10.0.2.1' }));
  });

  it('one source address is rate limited before any database work', async () => {
    let last: LoginResult | null = null;
    for (let i = 0; i < 12; i++) last = await auth.login({ username: 'nobody', password: 'whatever-password', source: '192.0.2.7' });
    expect(last!.ok === false && last!.reason).to.equal('RATE_LIMITED');
    ok(await auth.login({ username: 'val', password: viewer.password, source: '192.0.2.8' }));
  });

  it('sessions end when idle, at the absolute timeout, at logout, and when the operator is reset or disabled', async () => {
    const login = async () => ok(await auth.login({ username: 'val', password: viewer.password, source: '10.9.0.1' }));
    // time passes on the database's clock, which sets and judges the timeouts: every session's times move back by ms
    const elapse = (ms: number) => pg.query(
      'UPDATE operator_sessions SET created_at = created_at - make_interval(secs => $1), last_seen_at = last_seen_at - make_interval(secs => $1), expires_at = expires_at - make_interval(secs => $1)',
      [ms / 1000],
    );
    const a = await login();
    await elapse(SESSION.idleMs - 5000);
    expect(await auth.authenticate(a.token), 'just before the idle timeout').to.not.equal(null);
    await elapse(SESSION.idleMs - 5000);
    expect(await auth.authenticate(a.token), 'kept alive by use').to.not.equal(null);
    await elapse(SESSION.idleMs);
    expect(await auth.authenticate(a.token), 'idle').to.equal(null);
    const b = await login();
    for (let used = SESSION.idleMs / 2; used < SESSION.absoluteMs; used += SESSION.idleMs / 2) {
      await elapse(SESSION.idleMs / 2);
      expect(await auth.authenticate(b.token), `in use, ${used / 60_000} min after login`).to.not.equal(null);
    }
    await elapse(SESSION.idleMs / 2);
    expect(await auth.authenticate(b.token), 'absolute timeout, however busy').to.equal(null);
    const c = await login();
    await auth.logout((await auth.authenticate(c.token))!);
    expect(await auth.authenticate(c.token), 'logged out').to.equal(null);
    const d = await login();
    const reset = await ops.resetPassword(SHELL, { username: 'val' });
    expect(await auth.authenticate(d.token), 'reset ends sessions').to.equal(null);
    viewer.password = reset.password;
    const e = await login();
    await ops.disable(SHELL, { username: 'val' });
    expect(await auth.authenticate(e.token), 'disabled').to.equal(null);
    expect(await auth.login({ username: 'val', password: viewer.password, source: '10.9.0.1' })).to.deep.equal({ ok: false, reason: 'DISABLED' });
  });

  it('changing one\'s password needs the current one and a strong new one; other sessions end; the change is audited', async () => {
    const code = totpCode(admin.secret, clock + 30_000);
    const one = ok(await auth.login({ username: 'ada', password: admin.password, totp: code, source: '10.0.0.1' }));
    clock += 30_000;
    const two = ok(await auth.login({ username: 'ada', password: admin.password, totp: totpCode(admin.secret, clock + 30_000), source: '10.0.0.3' }));
    const s = (await auth.authenticate(two.token))!;
    expect(await auth.changePassword(s, 'not it at all', 'a brand new passphrase', '10.0.0.3')).to.equal('WRONG_PASSWORD');
    expect(await auth.changePassword(s, admin.password, 'short', '10.0.0.3')).to.equal('WEAK_PASSWORD');
    expect(await auth.changePassword(s, admin.password, admin.password, '10.0.0.3')).to.equal('SAME_PASSWORD');
    expect(await auth.changePassword(s, admin.password, 'a brand new passphrase', '10.0.0.3')).to.equal('OK');
    expect(await auth.authenticate(one.token), 'the other session ended').to.equal(null);
    expect((await auth.authenticate(two.token))?.mustChangePassword).to.equal(false);
    const [entry] = (await pg.query(`SELECT actor, actor_role, channel, source, action FROM audit_log ORDER BY id DESC LIMIT 1`)).rows;
    expect(entry).to.deep.equal({ actor: 'ada', actor_role: 'admin', channel: 'console', source: '10.0.0.3', action: 'operator.change-password' });
  });
});
