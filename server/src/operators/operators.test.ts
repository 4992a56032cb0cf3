import { expect } from 'chai';
import { Client } from 'pg';
import { Sequelize } from 'sequelize';
import { migrate } from '../db/migrations';
import { SecretBox } from '../crypto/secret-box';
import { createTestDatabase, type TestDatabase } from '../testing';
import { AuditLog, type AuditActor } from './audit';
import { OperatorError, Operators } from './operators';
import { verifyPassword } from './password';
import { base32Decode, totpCode, verifyTotp } from './totp';

const ADMIN: AuditActor = { name: 'cli:tester', role: 'shell', channel: 'cli', source: 'test-host' };

describe('operators and the audit log (real Postgres)', () => {
  let db: TestDatabase;
  let sequelize: Sequelize;
  let pg: Client;
  let ops: Operators;
  const box = new SecretBox(Buffer.alloc(32, 7));

  before(async () => {
    db = await createTestDatabase();
    sequelize = new Sequelize(db.url, { dialect: 'postgres', logging: false });
    await migrate(sequelize);
    pg = new Client({ connectionString: db.url });
    await pg.connect();
    ops = new Operators(sequelize, box);
  });
  after(async () => {
    await pg?.end();
    await sequelize?.close();
    await db?.drop();
  });

  const secretFromUri = (uri: string) => base32Decode(new URL(uri).searchParams.get('secret')!);

  it('an approver gets a password and a TOTP secret, shown once; stored only as a scrypt hash and a sealed secret', async () => {
    const c = await ops.create(ADMIN, { username: 'alice', role: 'approver' });
    expect(c.operator).to.include({ username: 'alice', role: 'approver', status: 'ACTIVE', totp: true, mustChangePassword: true });
    expect(c.totpUri).to.match(/^otpauth:\/\/totp\/Wallet%20Custody%20Service:alice\?secret=[A-Z2-7]{32}&/);
    const row = (await pg.query('SELECT * FROM operators WHERE username = $1', ['alice'])).rows[0];
    expect(row.password_hash).to.match(/^scrypt\$/);
    expect(await verifyPassword(c.password, row.password_hash)).to.equal(true);
    const secret = secretFromUri(c.totpUri!);
    expect(Buffer.from(row.totp_ciphertext).includes(Buffer.from(secret)), 'the secret is not stored in the clear').to.equal(false);
    const opened = await ops.totpSecret(row.id);
    expect(Buffer.from(opened!)).to.deep.equal(Buffer.from(secret));
    const now = Date.now();
    expect(verifyTotp(opened!, totpCode(secret, now), now, null)).to.not.equal(null);
    // the sealed secret is bound to its operator: moved to another row it does not open
    const viewer = await ops.create(ADMIN, { username: 'victor', role: 'viewer' });
    expect(viewer.totpUri).to.equal(null);
    await pg.query('UPDATE operators SET totp_ciphertext = $1, totp_iv = $2, totp_auth_tag = $3, totp_key_id = $4 WHERE username = $5', [row.totp_ciphertext, row.totp_iv, row.totp_auth_tag, row.totp_key_id, 'victor']);
    await ops.totpSecret(viewer.operator.id).then(() => expect.fail('opened under another id'), (e: Error) => expect(e.message).to.match(/authenticate|auth/i));
  });

  it('refuses a bad username or role and a duplicate, writing nothing', async () => {
    const before = (await pg.query('SELECT count(*)::int AS n FROM operators')).rows[0].n;
    const audits = (await pg.query('SELECT count(*)::int AS n FROM audit_log')).rows[0].n;
    for (const input of [{ username: 'Al', role: 'viewer' }, { username: 'bob', role: 'root' }, { username: 'x'.repeat(65), role: 'viewer' }]) {
      await ops.create(ADMIN, input).then(() => expect.fail(`created ${JSON.stringify(input)}`), (e: OperatorError) => expect(e.code).to.equal('OPERATOR_INVALID'));
    }
    await ops.create(ADMIN, { username: 'alice', role: 'viewer' }).then(() => expect.fail('duplicate'), (e: OperatorError) => expect(e.code).to.equal('OPERATOR_EXISTS'));
    await ops.disable(ADMIN, { username: 'nobody' }).then(() => expect.fail('disabled nobody'), (e: OperatorError) => expect(e.code).to.equal('OPERATOR_NOT_FOUND'));
    expect((await pg.query('SELECT count(*)::int AS n FROM operators')).rows[0].n).to.equal(before);
    expect((await pg.query('SELECT count(*)::int AS n FROM audit_log')).rows[0].n).to.equal(audits);
  });

  it('the database refuses an approver or admin without a second factor', async () => {
    await pg.query(`INSERT INTO operators (username, role, password_hash) VALUES ('eve', 'admin', 'x')`).then(() => expect.fail('inserted'), (e: Error) => expect(e.message).to.match(/check constraint/));
  });

  it('reset gives a new password and unlocks; --totp a new secret; disable ends logins; each change audited with before and after, never a secret', async () => {
    await pg.query(`UPDATE operators SET failed_logins = 5, locked_until = now() + interval '1 hour', must_change_password = false WHERE username = 'victor'`);
    const r = await ops.resetPassword(ADMIN, { username: 'victor', totp: true });
    const row = (await pg.query('SELECT * FROM operators WHERE username = $1', ['victor'])).rows[0];
    expect(row.failed_logins).to.equal(0);
    expect(row.locked_until).to.equal(null);
    expect(row.must_change_password).to.equal(true);
    expect(await verifyPassword(r.password, row.password_hash)).to.equal(true);
    expect(r.totpUri).to.be.a('string');
    expect(Buffer.from((await ops.totpSecret(row.id))!)).to.deep.equal(Buffer.from(secretFromUri(r.totpUri!)));
    const d = await ops.disable(ADMIN, { username: 'victor' });
    expect(d.status).to.equal('DISABLED');
    const log = await new AuditLog(sequelize).list({ limit: 10 });
    expect(log.map((e) => e.action)).to.deep.equal(['operator.disable', 'operator.reset-password-and-totp', 'operator.create', 'operator.create']);
    expect(log[0]).to.include({ actor: 'cli:tester', actorRole: 'shell', channel: 'cli', source: 'test-host', target: 'operator:victor' });
    expect(log[0]!.before).to.deep.equal({ username: 'victor', role: 'viewer', status: 'ACTIVE', totp: true });
    expect(log[0]!.after).to.deep.equal({ username: 'victor', role: 'viewer', status: 'DISABLED', totp: true });
    const text = JSON.stringify(log);
    expect(text).to.not.include(r.password);
    expect(text).to.not.match(/scrypt\$|otpauth|secret=/);
    // keyset pages
    const page2 = await new AuditLog(sequelize).list({ limit: 2, before: log[1]!.id });
    expect(page2.map((e) => e.id)).to.deep.equal([log[2]!.id, log[3]!.id]);
  });

  it('the audit log is append-only for the service\'s own database role: UPDATE, DELETE and TRUNCATE are refused', async () => {
    const n = (await pg.query('SELECT count(*)::int AS n FROM audit_log')).rows[0].n;
    expect(n).to.be.above(0);
    for (const sql of ["UPDATE audit_log SET actor = 'someone else'", 'DELETE FROM audit_log', 'TRUNCATE audit_log']) {
      await pg.query(sql).then(() => expect.fail(`${sql} went through`), (e: Error) => expect(e.message).to.match(/append-only/));
    }
    expect((await pg.query('SELECT count(*)::int AS n FROM audit_log')).rows[0].n).to.equal(n);
  });
});
