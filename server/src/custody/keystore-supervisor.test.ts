import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { expect } from 'chai';
import { KeyStoreError, type KeyStore } from '@wcs/core';
import { createLogger } from '../config/logger';
import { keyStoreOptions, loadKeyStorePlugin } from '../plugins/loader';
import { testConfig, testEnv } from '../testing';
import { KeyStoreSupervisor } from './keystore-supervisor';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what: string, cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

function capture() {
  const stream = new PassThrough();
  const lines: Array<Record<string, unknown>> = [];
  let text = '';
  stream.on('data', (d: Buffer) => {
    text += d.toString();
    for (const l of d.toString().split('\n')) if (l.trim() !== '') lines.push(JSON.parse(l));
  });
  return { logger: createLogger({ level: 'debug', format: 'json', stream }), lines, text: () => text };
}

/**
 * The real software key store of the test process (created by the mocha root hook), opened with
 * its passphrase read from a file this test controls: a wrong passphrase is a real init() failure.
 */
describe('KeyStoreSupervisor: a key store that cannot open does not stop the service', () => {
  let right: string;
  let dir: string;
  let passFile: string;
  const stores: KeyStore[] = [];
  const supervisors: KeyStoreSupervisor[] = [];

  const softwareStore = (): KeyStore => {
    const cfg = testConfig('postgres://unused/unused', { WCS_KEYSTORE_PASSPHRASE: '', WCS_KEYSTORE_PASSPHRASE_FILE: passFile });
    const store = loadKeyStorePlugin(cfg).create(keyStoreOptions(cfg));
    stores.push(store);
    return store;
  };
  const supervise = (store: KeyStore, logger: ReturnType<typeof capture>['logger'], delays = { initialDelayMs: 20, maxDelayMs: 80 }) => {
    const s = new KeyStoreSupervisor(store, logger, delays);
    supervisors.push(s);
    return s;
  };

  before(() => {
    right = testEnv('postgres://unused/unused').WCS_KEYSTORE_PASSPHRASE!;
    expect(right, 'the test key store passphrase').to.be.a('string').and.not.equal('');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-ks-sup-'));
    passFile = path.join(dir, 'passphrase');
  });
  afterEach(async () => {
    for (const s of supervisors.splice(0)) s.stop();
    for (const k of stores.splice(0)) await k.destroy();
  });
  after(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('wrong passphrase: start() resolves, readiness says why, retries back off (doubling, capped), each message is logged once; the right passphrase opens it', async () => {
    fs.writeFileSync(passFile, 'not-the-passphrase\n');
    const log = capture();
    const store = softwareStore();
    const sup = supervise(store, log.logger);
    await sup.start();
    expect(sup.ready).to.equal(false);
    const check = await sup.check();
    expect(check.ready).to.equal(false);
    expect(check.detail).to.match(/^unavailable: .*passphrase/i);
    expect(() => sup.assertReady()).to.throw(KeyStoreError, /^the key store is not open: .*passphrase/).with.property('code', 'KEYSTORE_UNAVAILABLE');

    await waitFor('five retries', () => sup.attempts >= 6);
    expect(sup.ready).to.equal(false);
    expect(sup.scheduledDelays.slice(0, 5)).to.deep.equal([20, 40, 80, 80, 80]);
    const errors = () => log.lines.filter((l) => l.level === 'error');
    expect(errors().map((l) => l.code)).to.deep.equal(['KEYSTORE_DECRYPT']);
    expect(errors()[0]!.reason).to.match(/passphrase/i);

    // another failure (the file is gone: a retry-time KEYSTORE_CONFIG is retried too) is logged once more
    fs.rmSync(passFile);
    const n = sup.attempts;
    await waitFor('two more retries', () => sup.attempts >= n + 2);
    expect(errors().map((l) => l.code)).to.deep.equal(['KEYSTORE_DECRYPT', 'KEYSTORE_CONFIG']);
    expect((await sup.check()).detail).to.match(/^unavailable: cannot read the keystore passphrase file/);

    fs.writeFileSync(passFile, `${right}\n`);
    await waitFor('the store to open', () => sup.ready);
    expect(await sup.check()).to.deep.equal({ ready: true, detail: 'ok' });
    expect(() => sup.assertReady()).not.to.throw();
    expect(log.lines.filter((l) => l.level === 'info').map((l) => l.message)).to.deep.equal(['key store ready']);
    expect((await store.status()).unlocked).to.equal(true);
    // no retry after success
    const done = sup.attempts;
    await sleep(200);
    expect(sup.attempts).to.equal(done);
    expect(errors()).to.have.length(2);
    expect(log.text()).not.to.contain(right);
    expect(log.text()).not.to.contain('not-the-passphrase');
  });

  it('static misconfiguration (KEYSTORE_CONFIG) at start rejects and schedules nothing', async () => {
    fs.rmSync(passFile, { force: true });
    const log = capture();
    const sup = supervise(softwareStore(), log.logger);
    const err = await sup.start().then(() => null, (e: unknown) => e);
    expect(err).to.be.instanceOf(KeyStoreError);
    expect((err as KeyStoreError).code).to.equal('KEYSTORE_CONFIG');
    await sleep(100);
    expect(sup.attempts).to.equal(1);
    expect(sup.scheduledDelays).to.deep.equal([]);
  });

  it('stop() ends the retries', async () => {
    fs.writeFileSync(passFile, 'still-wrong\n');
    const log = capture();
    const sup = supervise(softwareStore(), log.logger);
    await sup.start();
    await waitFor('a retry', () => sup.attempts >= 2);
    sup.stop();
    const n = sup.attempts;
    await sleep(300);
    expect(sup.attempts).to.be.at.most(n + 1); // at most the attempt that was already running
    expect(sup.ready).to.equal(false);
  });

  it('after init succeeded, readiness follows status(): a store that reports itself unavailable is not ready', async () => {
    fs.writeFileSync(passFile, `${right}\n`);
    const log = capture();
    const store = softwareStore();
    const sup = supervise(store, log.logger);
    await sup.start();
    expect(await sup.check()).to.deep.equal({ ready: true, detail: 'ok' });
    // destroy() locks the real store: status() then says unlocked: false
    await store.destroy();
    expect(await sup.check()).to.deep.equal({ ready: false, detail: 'locked' });
    // a backend (PKCS#11) that says why: the reason is shown
    const gone: KeyStore = {
      name: store.name,
      pluginApiVersion: store.pluginApiVersion,
      init: () => store.init(),
      destroy: () => store.destroy(),
      getPublicKey: (r) => store.getPublicKey(r),
      sign: (r, p) => store.sign(r, p),
      status: async () => ({ ...(await store.status()), unlocked: false, reason: 'token removed from slot 0' }),
    };
    const sup2 = supervise(gone, log.logger);
    await sup2.start();
    expect(await sup2.check()).to.deep.equal({ ready: false, detail: 'unavailable: token removed from slot 0' });
  });
});
