import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { KeySpec } from '@wcs/core';
import { changeSoftwareKeystorePassphrase } from './change-passphrase';
import { KeyStoreError } from './errors';
import { decryptKeystore, readKeystore } from './keystore-file';
import { plugin } from './plugin';
import { initializeSoftwareKeystore, SoftwareKeyStore } from './software-keystore';
import { ABANDON, FAST, options, removeTempDirs, tempDir } from './test-support';

const OLD = 'correct horse battery staple';
const NEW = 'a new passphrase, long enough';
const EVM: KeySpec = { namespace: 'evm', curve: 'secp256k1', pathTemplate: "m/44'/60'/{account}'/0/{index}" };

async function code(what: () => Promise<unknown>): Promise<string> {
  try {
    await what();
  } catch (e) {
    expect(e).to.be.instanceOf(KeyStoreError);
    return (e as KeyStoreError).code;
  }
  return expect.fail('expected a KeyStoreError');
}

/** Which of the passphrases opens the file (the file must parse and open with one of them). */
async function opensWith(file: string, candidates: string[]): Promise<string> {
  const f = await readKeystore(file);
  for (const p of candidates) {
    try {
      (await decryptKeystore(f, Buffer.from(p), { minN: 16 })).fill(0);
      return p;
    } catch (e) {
      if (!(e instanceof KeyStoreError && e.code === 'KEYSTORE_DECRYPT')) throw e;
    }
  }
  return expect.fail(`${file} opens with none of the passphrases`);
}

describe('wcs keystore change-passphrase (software key store)', function () {
  this.timeout(120_000);
  after(removeTempDirs);

  async function setUp(): Promise<{ dir: string; file: string; env: Record<string, string> }> {
    const dir = await tempDir();
    const env = { WCS_KEYSTORE_PASSPHRASE: OLD };
    await initializeSoftwareKeystore(options(dir, env), { mnemonic: ABANDON }, FAST);
    return { dir, file: path.join(dir, 'keystore.json'), env };
  }

  it('re-encrypts under the new passphrase: same seed, fingerprint, creation time and marks; new salt and IV; the old passphrase no longer opens it', async () => {
    const { dir, file, env } = await setUp();
    const store = new SoftwareKeyStore(options(dir, env), FAST);
    await store.init();
    const key = await store.getPublicKey({ applicationId: 1, spec: EVM, purpose: 'deposit', index: 3 });
    await store.indexMarks.raise('lineage-a', [{ applicationId: 1, namespace: 'evm', next: 40 }]);
    const before = await readKeystore(file);

    const facts = await changeSoftwareKeystorePassphrase(options(dir, { ...env, WCS_KEYSTORE_NEW_PASSPHRASE: NEW }), FAST);
    expect(facts).to.include({ backend: 'software', file, fingerprint: before.fingerprint, createdAt: before.createdAt, indexMarks: 1 });
    expect(JSON.stringify(facts)).not.to.contain(NEW).and.not.to.contain(OLD);
    const after = await readKeystore(file);
    expect(after.kdfParams.salt).not.to.equal(before.kdfParams.salt);
    expect(after.iv).not.to.equal(before.iv);
    expect(after.ciphertext).not.to.equal(before.ciphertext);
    expect(after.indexMarks).to.deep.equal(before.indexMarks);
    expect((await fs.stat(file)).mode & 0o777).to.equal(0o600);
    expect(await opensWith(file, [OLD, NEW])).to.equal(NEW);

    // the running store keeps working (it holds the seed) and its marks still go to the file
    expect(await store.indexMarks.raise('lineage-a', [{ applicationId: 1, namespace: 'evm', next: 80 }])).to.deep.equal([{ applicationId: 1, namespace: 'evm', next: 80 }]);
    expect(await opensWith(file, [OLD, NEW])).to.equal(NEW);
    await store.destroy();

    // a restart with the old passphrase fails; with the new one it derives the same keys
    expect(await code(() => new SoftwareKeyStore(options(dir, env), FAST).init())).to.equal('KEYSTORE_DECRYPT');
    const renewed = new SoftwareKeyStore(options(dir, { WCS_KEYSTORE_PASSPHRASE: NEW }), FAST);
    await renewed.init();
    expect(Buffer.from((await renewed.getPublicKey({ applicationId: 1, spec: EVM, purpose: 'deposit', index: 3 })).bytes).toString('hex')).to.equal(Buffer.from(key.bytes).toString('hex'));
    expect(await renewed.indexMarks.read('lineage-a')).to.deep.equal([{ applicationId: 1, namespace: 'evm', next: 80 }]);
    await renewed.destroy();
  });

  it('reads the new passphrase from WCS_KEYSTORE_NEW_PASSPHRASE_FILE; the plugin exposes the command', async () => {
    const { dir, file, env } = await setUp();
    const pf = path.join(dir, 'new.pass');
    await fs.writeFile(pf, `${NEW}\n`, { mode: 0o600 });
    expect(plugin.changePassphrase).to.be.a('function');
    // the plugin uses production scrypt parameters: the file is then written with N = 2^15
    const facts = await plugin.changePassphrase!(options(dir, { ...env, WCS_KEYSTORE_NEW_PASSPHRASE_FILE: pf }));
    expect(facts.newPassphraseSource).to.equal(`file ${pf}`);
    expect((facts.kdf as { N: number }).N).to.equal(2 ** 15);
    expect(await opensWith(file, [OLD, NEW])).to.equal(NEW);
  });

  it('refuses: no new passphrase, both forms, too short, the same, a wrong current passphrase, no file; the file is unchanged', async () => {
    const { dir, file, env } = await setUp();
    const text = await fs.readFile(file, 'utf8');
    const o = (extra: Record<string, string>) => options(dir, { ...env, ...extra });
    expect(await code(() => changeSoftwareKeystorePassphrase(o({}), FAST))).to.equal('KEYSTORE_CONFIG');
    expect(await code(() => changeSoftwareKeystorePassphrase(o({ WCS_KEYSTORE_NEW_PASSPHRASE: NEW, WCS_KEYSTORE_NEW_PASSPHRASE_FILE: '/x' }), FAST))).to.equal('KEYSTORE_CONFIG');
    expect(await code(() => changeSoftwareKeystorePassphrase(o({ WCS_KEYSTORE_NEW_PASSPHRASE: 'short' }), FAST))).to.equal('KEYSTORE_CONFIG');
    expect(await code(() => changeSoftwareKeystorePassphrase(o({ WCS_KEYSTORE_NEW_PASSPHRASE: OLD }), FAST))).to.equal('KEYSTORE_CONFIG');
    expect(await code(() => changeSoftwareKeystorePassphrase(o({ WCS_KEYSTORE_PASSPHRASE: 'not the passphrase', WCS_KEYSTORE_NEW_PASSPHRASE: NEW }), FAST))).to.equal('KEYSTORE_DECRYPT');
    expect(await fs.readFile(file, 'utf8')).to.equal(text);
    const empty = await tempDir();
    expect(await code(() => changeSoftwareKeystorePassphrase(options(empty, { ...env, WCS_KEYSTORE_NEW_PASSPHRASE: NEW }), FAST))).to.equal('KEYSTORE_NOT_INITIALIZED');
    expect((await fs.readdir(dir)).sort()).to.deep.equal(['keystore.json']);
  });

  it('kill -9 at random points of repeated changes leaves a whole file that opens with the old or the new passphrase, never a broken one', async () => {
    const { dir, file } = await setUp();
    const A = OLD;
    const B = NEW;
    // the child flips the passphrase A <-> B as fast as it can, until it is killed
    const child = `
      const { changeSoftwareKeystorePassphrase } = require(${JSON.stringify(path.join(__dirname, 'change-passphrase.js'))});
      const [A, B, dir, start] = process.argv.slice(1);
      (async () => {
        let cur = start;
        process.stdout.write('ready\\n');
        for (;;) {
          const next = cur === A ? B : A;
          await changeSoftwareKeystorePassphrase({ dataDir: dir, env: { WCS_KEYSTORE_PASSPHRASE: cur, WCS_KEYSTORE_NEW_PASSPHRASE: next }, devMode: false }, { insecureTestScryptN: 1024 });
          cur = next;
          process.stdout.write('changed\\n');
        }
      })().catch((e) => { process.stderr.write(String(e && e.stack || e)); process.exit(1); });`;
    let current = A;
    const seen = new Set<string>();
    for (let round = 0; round < 12; round++) {
      const p = spawn(process.execPath, ['-e', child, A, B, dir, current], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((r) => p.once('exit', (c) => r(c)));
      // at least one whole change first (on a loaded machine one can take longer than the random wait), then a random moment
      let out = '';
      await Promise.race([new Promise<void>((r) => p.stdout.on('data', (d: Buffer) => { out += d.toString(); if (out.includes('changed')) r(); })), exited]);
      await Promise.race([new Promise((r) => setTimeout(r, Math.random() * 120)), exited]);
      p.kill('SIGKILL');
      const exitCode = await exited;
      expect(stderr, `round ${round}: the child failed on its own (exit ${exitCode})`).to.equal('');
      current = await opensWith(file, [A, B]);
      seen.add(current);
      const f = await readKeystore(file);
      expect(f.fingerprint).to.equal('73c5da0a');
    }
    // it was killed mid-way through many changes (both passphrases were current at some kill)
    expect(seen.size, 'both passphrases seen after kills').to.equal(2);
    // what is left beside the file: at most temporary files and a dead process's lock, none of them the key store
    const left = (await fs.readdir(dir)).filter((n) => n !== 'keystore.json');
    for (const n of left) expect(n).to.match(/^\.keystore\.json\.\d+\.[0-9a-f]+\.tmp$|^keystore\.json\.lock(\.[0-9a-f]+)?$/);
    // the next change takes over a dead process's lock at once
    const t0 = Date.now();
    await changeSoftwareKeystorePassphrase(options(dir, { WCS_KEYSTORE_PASSPHRASE: current, WCS_KEYSTORE_NEW_PASSPHRASE: current === A ? B : A }), FAST);
    expect(Date.now() - t0).to.be.below(5_000);
    expect(await opensWith(file, [A, B])).to.equal(current === A ? B : A);
  });
});
