/**
 * `wcs keystore verify-backup` and `wcs keystore change-passphrase` against a running service's
 * database (docs/deployment.md, "Restoring from backups", "Changing the key-store passphrase"):
 * a backup that derives every issued address passes (exit 0), one of another seed fails (exit 1)
 * listing the mismatches; the passphrase change re-encrypts the file the running service keeps
 * raising its marks in, is audited, and a restart needs the new passphrase.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect } from 'chai';
import { Client } from 'pg';
import { WcsService, type CreatedApplication } from '@wcs/server';
import { createTestDatabase, TEST_ACTOR, TEST_MNEMONIC, testConfig, testEnv, testLogger, type TestDatabase } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { expectOk } from './support/expect';
import { cliJson, describeCli, runCli } from './support/processes';
import { tempDir } from './support/temp';

const CREATE = '/api/v1/wallet/address/create';
/** trezor/python-mnemonic vectors.json, 24 words: another seed than the service's. */
const HAMSTER =
  'hamster diagram private dutch cause delay private meat slide toddler razor book happy fancy gospel tennis maple dilemma loan word shrug inflict delay length';
const PASS = 'backup cli test passphrase';
const NEW_PASS = 'the new passphrase of the key store';

describe('wcs keystore verify-backup / change-passphrase (software key store, a running service\'s database)', function () {
  this.timeout(180_000);
  let dir: string;
  let db: TestDatabase;
  let svc: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  let ks: Record<string, string>;
  const q = async <R>(sql: string, bind: unknown[] = []): Promise<R[]> => {
    const c = new Client({ connectionString: db.url });
    await c.connect();
    try {
      return (await c.query(sql, bind)).rows as R[];
    } finally {
      await c.end();
    }
  };
  const env = (extra: Record<string, string> = {}) => {
    const e: Record<string, string | undefined> = { ...process.env, ...testEnv(db.url, ks), ...extra };
    if (extra.WCS_KEYSTORE_PASSPHRASE === '') delete e.WCS_KEYSTORE_PASSPHRASE;
    return e;
  };
  const init = async (file: string, mnemonic: string, passphrase: string) => {
    const m = path.join(dir, `m-${path.basename(file)}.txt`);
    fs.writeFileSync(m, `${mnemonic}\n`, { mode: 0o600 });
    const args = ['keystore', 'init', '--mnemonic-file', m, '--json'];
    const r = await runCli(args, { ...process.env, DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused', WCS_MASTER_KEY: testEnv('x').WCS_MASTER_KEY, WCS_KEYSTORE_BACKEND: 'software', WCS_KEYSTORE_FILE: file, WCS_KEYSTORE_PASSPHRASE: passphrase });
    expect(r.code, describeCli(args, r)).to.equal(0);
    fs.rmSync(m);
  };

  before(async () => {
    dir = tempDir('wcs-ks-backup-cli-');
    ks = { WCS_KEYSTORE_BACKEND: 'software', WCS_KEYSTORE_FILE: path.join(dir, 'keystore.json'), WCS_KEYSTORE_PASSPHRASE: PASS };
    await init(ks.WCS_KEYSTORE_FILE!, TEST_MNEMONIC, PASS);
    db = await createTestDatabase();
    svc = await WcsService.start(testConfig(db.url, ks), testLogger(), { api: true, workers: false });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'backup', environment: 'test', chains: ['ETH', 'BSC', 'SOL', 'XRP'] });
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    for (let i = 0; i < 6; i++) for (const chain of ['ETH', 'SOL', 'XRP']) expectOk(await client.post(CREATE, { chainCode: chain, externalUserId: `user-${i}` }));
  });
  after(async () => {
    await svc?.stop();
    await db?.drop();
  });

  it('a copy of the key-store file derives every issued address: exit 0, counts per chain, no key material', async () => {
    const copy = path.join(dir, 'backup.json');
    fs.copyFileSync(ks.WCS_KEYSTORE_FILE!, copy);
    const args = ['keystore', 'verify-backup', copy, '--json'];
    const r = await runCli(args, env());
    expect(r.code, describeCli(args, r)).to.equal(0);
    const out = cliJson(args, r);
    const [{ n }] = await q<{ n: number }>('SELECT count(*)::int AS n FROM addresses');
    // ETH + BSC share the evm key: 6 users x (ETH, BSC, SOL, XRP) rows
    expect(n).to.equal(24);
    expect(out).to.include({ backend: 'software', file: copy, fingerprint: '73c5da0a', ok: true, addresses: 24, matched: 24, mismatched: 0, skipped: 0 });
    expect(Object.keys(out.byChain).sort()).to.deep.equal(['test:BSC', 'test:ETH', 'test:SOL', 'test:XRP']);
    expect(out.derivations).to.equal(6 * 2 + 1); // 6 evm keys, 6 sol keys, one XRP deposit account
    const human = await runCli(['keystore', 'verify-backup', copy], env());
    expect(human.code, describeCli(['keystore', 'verify-backup', copy], human)).to.equal(0);
    expect(human.stdout).to.match(/^OK: 24 of 24 addresses derived from the backup/);
    expect(r.stdout + human.stdout + r.stderr).to.not.match(/abandon|xprv|tprv|backup cli test passphrase/);
  });

  it('a backup of another seed: exit 1, every address mismatched and listed (problem, index), nothing secret printed', async () => {
    const other = path.join(dir, 'other.json');
    await init(other, HAMSTER, PASS);
    const args = ['keystore', 'verify-backup', other, '--json'];
    const r = await runCli(args, env());
    expect(r.code, describeCli(args, r)).to.equal(1);
    const out = cliJson(args, r);
    expect(out).to.include({ ok: false, addresses: 24, matched: 0, mismatched: 24 });
    expect(out.mismatches).to.have.length(24);
    expect(new Set(out.mismatches.map((m: { problem: string }) => m.problem))).to.deep.equal(new Set(['PUBLIC_KEY_DIFFERS']));
    expect(out.mismatches[0]).to.include.keys('addressId', 'applicationId', 'chainCode', 'namespace', 'keyIndex', 'address', 'derived');
    expect(r.stdout + r.stderr).to.not.match(/hamster|xprv|tprv/);
    const human = await runCli(['keystore', 'verify-backup', other], env());
    expect(human.code).to.equal(1);
    expect(human.stdout).to.match(/^MISMATCH: 0 of 24 addresses/);
  });

  it('a wrong passphrase for the backup (--passphrase-file) is a clear KEYSTORE_DECRYPT, exit 1; a missing FILE is a usage error', async () => {
    const copy = path.join(dir, 'backup.json');
    const wrong = path.join(dir, 'wrong.pass');
    fs.writeFileSync(wrong, 'not the passphrase\n', { mode: 0o600 });
    const args = ['keystore', 'verify-backup', copy, '--passphrase-file', wrong, '--json'];
    const r = await runCli(args, env());
    expect(r.code, describeCli(args, r)).to.equal(1);
    expect(cliJson(args, r).error).to.include({ code: 'KEYSTORE_DECRYPT' });
    const none = await runCli(['keystore', 'verify-backup', '--json'], env());
    expect(none.code).to.equal(2);
  });

  it('change-passphrase: re-encrypts the file (audited); the running service keeps creating addresses into it; a restart needs the new passphrase', async () => {
    const pf = path.join(dir, 'new.pass');
    fs.writeFileSync(pf, `${NEW_PASS}\n`, { mode: 0o600 });
    const args = ['keystore', 'change-passphrase', '--json'];
    const r = await runCli(args, env({ WCS_KEYSTORE_NEW_PASSPHRASE_FILE: pf }));
    expect(r.code, describeCli(args, r)).to.equal(0);
    const facts = cliJson(args, r);
    expect(facts).to.include({ backend: 'software', file: ks.WCS_KEYSTORE_FILE, fingerprint: '73c5da0a' });
    expect(r.stdout + r.stderr).to.not.contain(NEW_PASS).and.not.contain(PASS);
    const audit = await q<{ actor: string; action: string; target: string; after: Record<string, unknown> }>(`SELECT actor, action, target, after FROM audit_log WHERE action = 'keystore.change-passphrase'`);
    expect(audit).to.have.length(1);
    expect(audit[0]!.actor).to.match(/^cli:/);
    expect(audit[0]!.after).to.include({ fingerprint: '73c5da0a', file: ks.WCS_KEYSTORE_FILE });
    expect(JSON.stringify(audit)).to.not.contain(NEW_PASS);

    // the running service holds the seed: new users still get addresses, their marks go into the re-encrypted file
    for (let i = 0; i < 30; i++) expectOk(await client.post(CREATE, { chainCode: 'ETH', externalUserId: `later-${i}` }));
    const file = JSON.parse(fs.readFileSync(ks.WCS_KEYSTORE_FILE!, 'utf8')) as { indexMarks: Array<[string, number, string, number]> };
    const [{ next_index }] = await q<{ next_index: string }>(`SELECT next_index::text FROM key_counters WHERE application_id = $1 AND namespace = 'evm'`, [app.id]);
    expect(file.indexMarks.find((e) => e[1] === app.id && e[2] === 'evm')![3]).to.be.at.least(Number(next_index));

    // the old passphrase no longer opens it; the new one does
    const old = await runCli(['keystore', 'status', '--json'], env());
    expect(old.code).to.equal(1);
    expect(cliJson(['keystore', 'status'], old).error).to.include({ code: 'KEYSTORE_DECRYPT' });
    const renewed = await runCli(['keystore', 'status', '--json'], env({ WCS_KEYSTORE_PASSPHRASE: '', WCS_KEYSTORE_PASSPHRASE_FILE: pf }));
    expect(renewed.code, describeCli(['keystore', 'status'], renewed)).to.equal(0);
    expect(cliJson(['keystore', 'status'], renewed)).to.include({ fingerprint: '73c5da0a', unlocked: true });

    // a restart with the new passphrase: the same addresses
    const before = expectOk(await client.post(CREATE, { chainCode: 'ETH', externalUserId: 'user-0' }));
    await svc.stop();
    svc = await WcsService.start(testConfig(db.url, { ...ks, WCS_KEYSTORE_PASSPHRASE: NEW_PASS }), testLogger(), { api: true, workers: false });
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    expect(expectOk(await client.post(CREATE, { chainCode: 'ETH', externalUserId: 'user-0' }))).to.deep.equal(before);
    expectOk(await client.post(CREATE, { chainCode: 'ETH', externalUserId: 'after-restart' }));
  });

  it('change-passphrase refuses the pkcs11 backend (no passphrase of its own: the HSM PIN), and verify-backup takes no FILE there', async () => {
    const args = ['keystore', 'change-passphrase', '--json'];
    const r = await runCli(args, env({ WCS_KEYSTORE_BACKEND: 'pkcs11', WCS_PKCS11_LIBRARY: '/usr/lib/softhsm/libsofthsm2.so', WCS_PKCS11_TOKEN_LABEL: 'x', WCS_PKCS11_PIN: '1234' }));
    expect(r.code, describeCli(args, r)).to.equal(1);
    expect(cliJson(args, r).error.msg).to.match(/user PIN/);
    const v = ['keystore', 'verify-backup', path.join(dir, 'backup.json'), '--backend', 'pkcs11', '--json'];
    const u = await runCli(v, env({ WCS_PKCS11_LIBRARY: '/usr/lib/softhsm/libsofthsm2.so', WCS_PKCS11_TOKEN_LABEL: 'x', WCS_PKCS11_PIN: '1234' }));
    expect(u.code, describeCli(v, u)).to.equal(2);
  });
});
