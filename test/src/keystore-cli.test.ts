import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'chai';
import { TEST_MNEMONIC, TEST_MASTER_KEY } from '@wcs/server/testing';
import { cleanEnv, cliJson, describeCli, runCli } from './support/processes';
import { createTestToken, type TestToken } from './support/softhsm';

// BIP-32 master fingerprint of the "abandon ... about" mnemonic (empty BIP-39 passphrase),
// as wallets show it (e.g. the BIP-84 test vectors' "[73c5da0a/84'/0'/0']" key origin).
const ABANDON_FINGERPRINT = '73c5da0a';

describe('wcs keystore init / status (software backend, production-style configuration)', function () {
  let dir: string;
  let env: Record<string, string | undefined>;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-ks-cli-'));
    fs.writeFileSync(path.join(dir, 'mnemonic.txt'), TEST_MNEMONIC + '\n', { mode: 0o600 });
    env = cleanEnv({
      DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused', // keystore commands never touch the database
      WCS_MASTER_KEY: TEST_MASTER_KEY,
      WCS_KEYSTORE_FILE: path.join(dir, 'keystore.json'),
      WCS_KEYSTORE_PASSPHRASE: 'correct horse battery staple',
    });
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('refuses to start without an initialised key store and says how to make one', async function () {
    const args = ['keystore', 'status', '--json'];
    const r = await runCli(args, env);
    const out = JSON.stringify(cliJson(args, r));
    expect(r.code === 0 ? out : `${out}${r.stderr}`, describeCli(args, r)).to.match(/keystore init|not initiali[sz]ed|initialized": false/);
  });

  it('imports a mnemonic, prints the fingerprint and never the words; a second init is refused', async function () {
    const args = ['keystore', 'init', '--mnemonic-file', path.join(dir, 'mnemonic.txt'), '--json'];
    const r = await runCli(args, env);
    expect(r.code, describeCli(args, r)).to.equal(0);
    const facts = cliJson(args, r);
    expect(facts.fingerprint).to.equal(ABANDON_FINGERPRINT);
    const all = r.stdout + r.stderr + fs.readFileSync(path.join(dir, 'keystore.json'), 'utf8');
    expect(all).not.to.contain('abandon');
    expect(all).not.to.contain('correct horse');
    expect(fs.statSync(path.join(dir, 'keystore.json')).mode & 0o777).to.equal(0o600);
    const again = await runCli(args, env);
    expect(again.code, describeCli(args, again)).to.equal(1);
    expect(JSON.stringify(cliJson(args, again))).to.match(/exist/i);
  });

  it('status unlocks with the passphrase and shows the fingerprint only', async function () {
    const args = ['keystore', 'status', '--json'];
    const r = await runCli(args, env);
    expect(r.code, describeCli(args, r)).to.equal(0);
    const st = cliJson(args, r);
    expect(st).to.include({ backend: 'software', fingerprint: ABANDON_FINGERPRINT, unlocked: true });
    expect(r.stdout + r.stderr).not.to.contain('abandon');
  });

  it('a wrong passphrase is a clear error, not a crash', async function () {
    const args = ['keystore', 'status', '--json'];
    const r = await runCli(args, { ...env, WCS_KEYSTORE_PASSPHRASE: 'wrong' });
    expect(r.code, describeCli(args, r)).to.equal(1);
    expect(cliJson(args, r).error).to.include({ code: 'KEYSTORE_DECRYPT', name: 'KeyStoreError' });
    expect(cliJson(args, r).error.msg).to.match(/passphrase/i);
    expect(r.stderr).not.to.match(/\n\s+at /); // no stack trace
    const human = await runCli(['keystore', 'status'], { ...env, WCS_KEYSTORE_PASSPHRASE: 'wrong' });
    expect(human.code, describeCli(['keystore', 'status'], human)).to.equal(1);
    expect(human.stderr).to.match(/^wcs: KEYSTORE_DECRYPT: keystore passphrase is wrong/);
    expect(human.stderr).not.to.match(/\n\s+at /);
  });

  it('--backend overrides WCS_KEYSTORE_BACKEND for the command; an unknown one is a usage error naming the known backends', async function () {
    const args = ['keystore', 'status', '--backend', 'software', '--json'];
    const r = await runCli(args, { ...env, WCS_KEYSTORE_BACKEND: 'pkcs11' });
    expect(r.code, describeCli(args, r)).to.equal(0);
    expect(cliJson(args, r)).to.include({ backend: 'software', fingerprint: ABANDON_FINGERPRINT, unlocked: true });
    for (const cmd of ['init', 'status']) {
      const bad = ['keystore', cmd, '--backend', 'hsm', '--json'];
      const u = await runCli(bad, env);
      expect(u.code, describeCli(bad, u)).to.equal(2);
      // with --json the usage error is JSON on stdout too
      const err = cliJson(bad, u).error;
      expect(err, describeCli(bad, u)).to.include({ code: 'commander.invalidArgument', name: 'UsageError' });
      expect(err.msg).to.match(/hsm/).and.to.match(/software/).and.to.match(/pkcs11/);
    }
  });
});

describe('wcs keystore init / status --backend pkcs11 (SoftHSM2 token)', function () {
  let token: TestToken;
  let env: Record<string, string | undefined>;
  before(() => {
    token = createTestToken();
    env = cleanEnv({
      DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused',
      WCS_MASTER_KEY: TEST_MASTER_KEY,
      WCS_KEYSTORE_BACKEND: 'software', // --backend overrides it
      ...token.env,
    });
  });

  it('init with nothing configured: KEYSTORE_CONFIG naming the missing variable, exit 1, no stack', async function () {
    const bare = cleanEnv({ DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused', WCS_MASTER_KEY: TEST_MASTER_KEY });
    const args = ['keystore', 'init', '--backend', 'pkcs11', '--json'];
    const r = await runCli(args, bare);
    expect(r.code, describeCli(args, r)).to.equal(1);
    const { error } = cliJson(args, r);
    expect(error).to.include({ code: 'KEYSTORE_CONFIG', name: 'KeyStoreError' });
    expect(error.msg).to.match(/WCS_PKCS11_LIBRARY/);
    const human = await runCli(['keystore', 'init', '--backend', 'pkcs11'], bare);
    expect(human.code).to.equal(1);
    expect(human.stderr).to.match(/^wcs: KEYSTORE_CONFIG: .*WCS_PKCS11_LIBRARY/);
    expect(human.stdout + human.stderr).not.to.match(/\n\s+at /);
  });

  it('init checks the token, the login and the mechanisms, and prints the facts, never the PIN', async function () {
    const args = ['keystore', 'init', '--backend', 'pkcs11', '--json'];
    const r = await runCli(args, env);
    expect(r.code, describeCli(args, r)).to.equal(0);
    const facts = cliJson(args, r);
    expect(facts).to.include({ backend: 'pkcs11', ready: true });
    expect(facts.token.label).to.equal(token.label);
    expect(r.stdout + r.stderr).not.to.contain(token.pin);
  });

  it('status opens the token and reports it unlocked, never the PIN', async function () {
    const args = ['keystore', 'status', '--backend', 'pkcs11', '--json'];
    const r = await runCli(args, env);
    expect(r.code, describeCli(args, r)).to.equal(0);
    expect(cliJson(args, r)).to.include({ backend: 'pkcs11', unlocked: true });
    expect(r.stdout + r.stderr).not.to.contain(token.pin);
  });

  it('a wrong PIN: KEYSTORE_LOGIN, exit 1, and the wrong PIN is not printed', async function () {
    const args = ['keystore', 'init', '--backend', 'pkcs11', '--json'];
    const r = await runCli(args, { ...env, WCS_PKCS11_PIN: '999999' });
    expect(r.code, describeCli(args, r)).to.equal(1);
    expect(cliJson(args, r).error).to.include({ code: 'KEYSTORE_LOGIN', name: 'KeyStoreError' });
    expect(r.stdout + r.stderr).not.to.contain('999999');
  });
});
