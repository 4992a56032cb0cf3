import { expect } from 'chai';
import * as crypto from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import { ConfigError } from '../config/config';
import { TOKENS } from '../container';
import { SecretBox, appSecretBinding, masterKeyId, operatorTotpBinding } from '../crypto/secret-box';
import { SealingKeyMissingError, sealingKeyId } from '../crypto/sealing-key';
import { AuditLog } from '../operators/audit';
import { Operators } from '../operators/operators';
import { base32Decode } from '../operators/totp';
import { openStorage, type StorageHandle } from '../service';
import { createTestDatabase, testConfig, testLogger, TEST_ACTOR, TEST_MASTER_KEY, type TestDatabase } from '../testing';
import { MasterKeyRotation, MasterKeyRotationError, unopenableSecrets } from './master-key-rotation';
import { SEALED_COLUMNS } from './sealed-columns';

interface Row { id: number; bind: number; ct: Buffer; iv: Buffer; tag: Buffer; key_id: string }

describe('master key rotation: re-sealing every secret, resumable, while others seal (real Postgres)', function () {
  this.timeout(60_000);
  const oldKey = Buffer.from(TEST_MASTER_KEY, 'hex');
  const newKey = crypto.randomBytes(32);
  const OLD = masterKeyId(oldKey);
  const NEW = masterKeyId(newKey);
  let db: TestDatabase;
  /** A process with WCS_MASTER_KEY only (not yet given the next key). */
  let oldOnly: StorageHandle;
  /** A process with WCS_MASTER_KEY and WCS_MASTER_KEY_NEXT. */
  let both: StorageHandle;
  let sequelize: Sequelize;
  /** Every API secret issued, by application id (the grace-period ones too). */
  const issued = new Map<number, string[]>();
  const totps = new Map<number, Buffer>();
  const box = (s: StorageHandle) => s.container.resolve<SecretBox>(TOKENS.SecretBox);

  async function rows(table: 'application_secrets' | 'operators'): Promise<Row[]> {
    const c = SEALED_COLUMNS.find((x) => x.table === table)!;
    return sequelize.query<Row>(
      `SELECT ${c.id} AS id, ${c.bindingColumn} AS bind, ${c.ciphertext} AS ct, ${c.iv} AS iv, ${c.authTag} AS tag, ${c.keyId} AS key_id FROM ${table} WHERE ${c.keyId} IS NOT NULL ORDER BY id`,
      { type: QueryTypes.SELECT },
    );
  }

  /** Every API secret and TOTP secret opens with `b`, to exactly what was issued. */
  async function everySecretOpens(b: SecretBox): Promise<void> {
    const opened = new Map<number, string[]>();
    for (const r of await rows('application_secrets')) {
      const s = b.openBound({ ciphertext: r.ct, iv: r.iv, authTag: r.tag, keyId: r.key_id }, appSecretBinding(r.bind)).toString();
      opened.set(r.bind, [...(opened.get(r.bind) ?? []), s]);
    }
    expect(opened).to.deep.equal(issued);
    for (const r of await rows('operators')) {
      expect(b.openBound({ ciphertext: r.ct, iv: r.iv, authTag: r.tag, keyId: r.key_id }, operatorTotpBinding(r.id)).equals(totps.get(r.id)!)).to.equal(true);
    }
  }

  async function state(): Promise<{ sealing_key_id: string | null; rotation_finished_at: Date | null }> {
    const [s] = await sequelize.query<{ sealing_key_id: string | null; rotation_finished_at: Date | null }>('SELECT sealing_key_id, rotation_finished_at FROM master_key_state', { type: QueryTypes.SELECT });
    return s!;
  }

  async function createApp(s: StorageHandle, name: string): Promise<number> {
    const a = await s.applications.create(TEST_ACTOR, { name, environment: 'test', chains: [] });
    issued.set(a.id, [a.apiSecret]);
    return a.id;
  }

  before(async () => {
    db = await createTestDatabase();
    oldOnly = await openStorage(testConfig(db.url), testLogger());
    both = await openStorage(testConfig(db.url, { WCS_MASTER_KEY_NEXT: newKey.toString('hex') }), testLogger());
    sequelize = both.database.sequelize;
    for (let i = 0; i < 6; i++) await createApp(oldOnly, `app-${i}`);
    // two applications in an API-secret rotation's grace period: two valid secrets each
    for (const id of [...issued.keys()].slice(0, 2)) {
      const r = await oldOnly.applications.rotateSecret(TEST_ACTOR, id, 3600);
      issued.set(id, [...issued.get(id)!, r.apiSecret]);
    }
    const ops = new Operators(oldOnly.database.sequelize, box(oldOnly));
    for (const [username, role] of [['ada', 'admin'], ['vic', 'viewer'], ['apo', 'approver']] as const) {
      const c = await ops.create(TEST_ACTOR, { username, role });
      if (c.totpUri) totps.set(c.operator.id, Buffer.from(base32Decode(new URL(c.totpUri).searchParams.get('secret')!)));
    }
  });
  after(async () => {
    await oldOnly?.close();
    await both?.close();
    await db?.drop();
  });

  it('every column the schema seals is known to the rotation', async () => {
    const cols = await sequelize.query<{ table_name: string; column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND (column_name LIKE '%auth_tag%' OR column_name LIKE '%ciphertext%') ORDER BY 1, 2`,
      { type: QueryTypes.SELECT },
    );
    const known = SEALED_COLUMNS.flatMap((c) => [{ table_name: c.table, column_name: c.authTag }, { table_name: c.table, column_name: c.ciphertext }]);
    expect(cols).to.have.deep.members(known);
    expect(cols).to.have.length(known.length);
  });

  it('refuses to start without WCS_MASTER_KEY_NEXT, with the same key twice, or with secrets under a key it does not hold; nothing changes', async () => {
    let e: unknown = await new MasterKeyRotation(sequelize, box(oldOnly)).rotate(TEST_ACTOR, { batch: 10, pauseMs: 0 }).catch((x: unknown) => x);
    expect(e).to.be.instanceOf(ConfigError);
    expect((e as Error).message).to.match(/^WCS_MASTER_KEY_NEXT: required by the rotation/);
    e = await new MasterKeyRotation(sequelize, new SecretBox(oldKey, oldKey)).rotate(TEST_ACTOR, { batch: 10, pauseMs: 0 }).catch((x: unknown) => x);
    expect((e as Error).message).to.equal('WCS_MASTER_KEY_NEXT: is the same key as WCS_MASTER_KEY');

    const stray = new SecretBox(crypto.randomBytes(32));
    const appId = [...issued.keys()][5]!;
    const s = stray.seal('stray', appId);
    await sequelize.query('INSERT INTO application_secrets (application_id, ciphertext, iv, auth_tag, key_id, expires_at) VALUES ($1, $2, $3, $4, $5, now() - interval \'1 day\')',
      { bind: [appId, s.ciphertext, s.iv, s.authTag, s.keyId] });
    try {
      expect((await unopenableSecrets(sequelize, box(both))).map((c) => [c.kind, c.keyId, c.rows])).to.deep.equal([['applicationSecrets', stray.keyId, 1]]);
      e = await new MasterKeyRotation(sequelize, box(both)).rotate(TEST_ACTOR, { batch: 10, pauseMs: 0 }).catch((x: unknown) => x);
      expect(e).to.be.instanceOf(MasterKeyRotationError);
      expect((e as Error).message).to.equal(`cannot rotate: 1 applicationSecrets under ${stray.keyId} sealed under a master key this process does not hold (neither WCS_MASTER_KEY ${OLD} nor WCS_MASTER_KEY_NEXT ${NEW}); nothing was changed`);
    } finally {
      await sequelize.query('DELETE FROM application_secrets WHERE key_id = $1', { bind: [stray.keyId] });
    }
    expect(await state()).to.deep.equal({ sealing_key_id: null, rotation_finished_at: null });
    expect((await rows('application_secrets')).every((r) => r.key_id === OLD)).to.equal(true);
    expect(await unopenableSecrets(sequelize, box(both))).to.deep.equal([]);
  });

  it('before a rotation, a process with both keys still seals with WCS_MASTER_KEY (one with the old key only can open it)', async () => {
    const id = await createApp(both, 'made-with-both-keys');
    const [r] = (await rows('application_secrets')).filter((x) => x.bind === id);
    expect(r!.key_id).to.equal(OLD);
    await sequelize.transaction(async (t) => expect(await sealingKeyId(sequelize, t, box(both))).to.equal(OLD));
  });

  it('the switch waits for a sealing transaction in flight; a run killed after its first row leaves every secret under one key or the other; then only key holders seal', async () => {
    const appId = [...issued.keys()][3]!;
    const rotation = new MasterKeyRotation(sequelize, box(both));
    let killed = 0;
    let run: Promise<unknown> = Promise.resolve(null);
    // a process with the old key only seals a secret; its transaction is open when the rotation starts
    await oldOnly.database.sequelize.transaction(async (t) => {
      const keyId = await sealingKeyId(oldOnly.database.sequelize, t, box(oldOnly));
      expect(keyId).to.equal(OLD);
      run = rotation.rotate(TEST_ACTOR, { batch: 1, pauseMs: 0, onProgress: () => {
        killed++;
        throw new Error('killed');
      } }).catch((e: unknown) => e);
      await new Promise((r) => setTimeout(r, 300));
      expect((await state()).sealing_key_id, 'the switch waits').to.equal(null);
      const s = box(oldOnly).seal('sealed-during-the-switch', appId, keyId);
      await oldOnly.database.sequelize.query('INSERT INTO application_secrets (application_id, ciphertext, iv, auth_tag, key_id) VALUES ($1, $2, $3, $4, $5)',
        { bind: [appId, s.ciphertext, s.iv, s.authTag, s.keyId], transaction: t });
    });
    issued.set(appId, [...issued.get(appId)!, 'sealed-during-the-switch']);
    expect(((await run) as Error).message).to.equal('killed');
    expect(killed).to.equal(1);

    expect(await state()).to.deep.equal({ sealing_key_id: NEW, rotation_finished_at: null });
    const keys = (await rows('application_secrets')).map((r) => r.key_id);
    expect(keys.filter((k) => k === NEW)).to.have.length(1);
    expect(keys.filter((k) => k === OLD)).to.have.length(keys.length - 1);
    await everySecretOpens(box(both));

    // a process holding the next key now seals with it; one without it refuses, and writes nothing
    const made = await createApp(both, 'made-after-the-switch');
    expect((await rows('application_secrets')).find((r) => r.bind === made)!.key_id).to.equal(NEW);
    const before = (await rows('application_secrets')).length;
    const e = await oldOnly.applications.create(TEST_ACTOR, { name: 'refused', environment: 'test', chains: [] }).catch((x: unknown) => x);
    expect(e).to.be.instanceOf(SealingKeyMissingError);
    expect((e as Error).message).to.match(new RegExp(`^new secrets are sealed with master key ${NEW} since a master key rotation began, and this process holds only ${OLD}`));
    expect((await rows('application_secrets')).length).to.equal(before);
    const ops = new Operators(oldOnly.database.sequelize, box(oldOnly));
    expect(await ops.resetPassword(TEST_ACTOR, { username: 'ada', totp: true }).catch((x: unknown) => x)).to.be.instanceOf(SealingKeyMissingError);
    await everySecretOpens(box(both));
  });

  it('running it again resumes and finishes: every secret, grace-period ones and TOTP secrets included, opens under the new key alone; audited', async () => {
    const r = await new MasterKeyRotation(sequelize, box(both)).rotate(TEST_ACTOR, { batch: 2, pauseMs: 0 });
    const secretRows = (await rows('application_secrets')).length;
    expect(r.targetKeyId).to.equal(NEW);
    expect(r.resumed).to.equal(true);
    expect(r.resealed).to.deep.equal({ applicationSecrets: secretRows - 2, operatorTotp: 2 }); // one re-sealed before the kill, one sealed new
    expect(r.verified).to.deep.equal({ applicationSecrets: secretRows, operatorTotp: 2 });
    expect(await state()).to.include({ sealing_key_id: NEW });
    expect((await state()).rotation_finished_at).to.be.instanceOf(Date);
    await everySecretOpens(new SecretBox(newKey));
    expect((await unopenableSecrets(sequelize, new SecretBox(newKey)))).to.deep.equal([]);
    expect((await unopenableSecrets(sequelize, box(oldOnly))).map((c) => [c.kind, c.rows])).to.deep.equal([['applicationSecrets', secretRows], ['operatorTotp', 2]]);

    const audit = await new AuditLog(sequelize).list({ limit: 10, action: null });
    const mine = audit.filter((a) => a.action.startsWith('secrets.'));
    expect(mine.map((a) => [a.action, a.target, a.after?.resumed])).to.deep.equal([
      ['secrets.master-key.rotate', `master-key:${NEW}`, true],
      ['secrets.master-key.rotate-start', `master-key:${NEW}`, true],
      ['secrets.master-key.rotate-start', `master-key:${NEW}`, false],
    ]);
    expect(mine[2]!.before, 'counted after the switch waited for the sealing transaction').to.deep.equal({ sealingKeyId: OLD, sealed: { [`applicationSecrets:${OLD}`]: secretRows - 1, [`operatorTotp:${OLD}`]: 2 } });
    expect(JSON.stringify(mine)).not.to.include(issued.values().next().value![0]);

    // the new key alone now: it seals and opens, and a further run has nothing to do
    const newOnly = await openStorage(testConfig(db.url, { WCS_MASTER_KEY: newKey.toString('hex') }), testLogger());
    try {
      const id = await createApp(newOnly, 'made-with-the-new-key-only');
      expect((await rows('application_secrets')).find((x) => x.bind === id)!.key_id).to.equal(NEW);
      const s = await new MasterKeyRotation(newOnly.database.sequelize, box(newOnly)).status();
      expect(s.sealingKeyId).to.equal(NEW);
      expect(s.keys).to.deep.equal({ current: NEW, next: null });
      expect(s.sealed.map((c) => [c.kind, c.keyId, c.held])).to.deep.equal([['applicationSecrets', NEW, true], ['operatorTotp', NEW, true]]);
    } finally {
      await newOnly.close();
    }
    const again = await new MasterKeyRotation(sequelize, box(both)).rotate(TEST_ACTOR, { batch: 100, pauseMs: 0 });
    expect(again.resealed).to.deep.equal({ applicationSecrets: 0, operatorTotp: 0 });
    expect(again.resumed).to.equal(false);
    await everySecretOpens(new SecretBox(newKey));
  });
});
