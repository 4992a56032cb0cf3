import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'chai';
import type { CreatedApplication } from '@wcs/server';
import { startTestService, TEST_MASTER_KEY, TEST_MNEMONIC, type TestService } from '@wcs/server/testing';
import { rawRequest, SigningClient } from './client/signing-client';
import { Codes, expectEnvelope, expectError, expectOk, pollUntil } from './support/expect';
import { cleanEnv, cliJson, describeCli, runCli } from './support/processes';

const CREATE = '/api/v1/wallet/address/create';
const BATCH = '/api/v1/wallet/address/batch-create';
/** The catalogue message of 1000009003 (docs/errors.md): the only text a merchant sees. */
const KEYSTORE_UNAVAILABLE_MSG = 'The key store is unavailable; retry later';

describe('key store that cannot unlock: the service starts, answers 503 for key operations, and recovers without a restart', function () {
  let tmp: string;
  let keystoreFile: string;
  let passFile: string;
  const right = 'right passphrase for this key store';
  let svc: TestService;
  let app: CreatedApplication;
  let client: SigningClient;
  let count: (table: string) => Promise<number>;

  before(async function () {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-ks-down-'));
    keystoreFile = path.join(tmp, 'keystore.json');
    passFile = path.join(tmp, 'passphrase');
    fs.writeFileSync(path.join(tmp, 'mnemonic.txt'), TEST_MNEMONIC + '\n', { mode: 0o600 });
    // a key store created (by the real CLI) with one passphrase...
    fs.writeFileSync(passFile, `${right}\n`, { mode: 0o600 });
    const args = ['keystore', 'init', '--backend', 'software', '--mnemonic-file', path.join(tmp, 'mnemonic.txt'), '--json'];
    const init = await runCli(args, cleanEnv({
      DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused', // keystore commands never touch the database
      WCS_MASTER_KEY: TEST_MASTER_KEY,
      WCS_KEYSTORE_FILE: keystoreFile,
      WCS_KEYSTORE_PASSPHRASE_FILE: passFile,
    }));
    expect(init.code, describeCli(args, init)).to.equal(0);
    expect(cliJson(args, init)).to.include({ backend: 'software', mnemonic: 'provided' });
    // ...and a service that reads another one
    fs.writeFileSync(passFile, 'a wrong passphrase\n', { mode: 0o600 });
    svc = await startTestService({
      env: { WCS_KEYSTORE_FILE: keystoreFile, WCS_KEYSTORE_PASSPHRASE: '', WCS_KEYSTORE_PASSPHRASE_FILE: passFile },
    });
    app = await svc.createApp({ chains: ['ETH', 'BSC', 'XRP'] });
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    count = async (table) => {
      const [rows] = await svc.service.storage.database.sequelize.query(`SELECT count(*)::int AS n FROM ${table}`);
      return (rows as Array<{ n: number }>)[0]!.n;
    };
  });
  after(async function () {
    if (svc) await svc.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('starts anyway: /healthz is 200, /readyz is 503 and says the key store is unavailable', async function () {
    expectOk(await rawRequest(svc.url, { method: 'GET', path: '/healthz' }));
    const ready = await rawRequest(svc.url, { method: 'GET', path: '/readyz' });
    const env = expectEnvelope(ready);
    expect(ready.status, ready.text).to.equal(503);
    expect(env.code).to.equal(Codes.SERVICE_UNAVAILABLE);
    expect(env.data.status).to.equal('not_ready');
    expect(env.data.checks.database).to.equal('ok');
    expect(env.data.checks.keystore).to.match(/^unavailable: .*passphrase/);
    expect(ready.text).not.to.contain('a wrong passphrase');
  });

  it('key operations answer 503 with code 1000009003 and the catalogue message only; nothing is written', async function () {
    const bodies: string[] = [];
    for (const body of [{ chainCode: 'ETH', externalUserId: 'u-1' }, { chainCode: 'XRP', externalUserId: 'u-1' }]) {
      const res = await client.post(CREATE, body);
      expect(expectError(res, 503, Codes.KEYSTORE_UNAVAILABLE)).to.equal(KEYSTORE_UNAVAILABLE_MSG);
      bodies.push(res.text);
    }
    // a batch whose entries need keys fails as a whole (entries are idempotent: retry it)
    const batch = await client.post(BATCH, { items: [{ chainCode: 'ETH', externalUserId: 'u-2' }, { chainCode: 'XRP', externalUserId: 'u-2' }] });
    expect(expectError(batch, 503, Codes.KEYSTORE_UNAVAILABLE)).to.equal(KEYSTORE_UNAVAILABLE_MSG);
    bodies.push(batch.text);
    for (const text of bodies) {
      expect(text).not.to.match(/\n\s+at |\bat [\w.<>]+ \(|KeyStoreError|KEYSTORE_|passphrase|locked/i);
    }
    // nothing written, and no key index consumed: after the outage the first user gets index 0
    for (const table of ['addresses', 'user_keys', 'custody_keys', 'deposit_accounts', 'memo_counters', 'key_counters']) {
      expect(await count(table), table).to.equal(0);
    }
    // what needs no key still works
    const v = expectOk(await client.post('/api/v1/wallet/address/validate', { chainCode: 'ETH', address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94' }));
    expect(v.valid).to.equal(true);
  });

  it('once the passphrase file is right, a background retry opens the key store: /readyz turns 200 and address/create succeeds, same process', async function () {
    const url = svc.url;
    fs.writeFileSync(passFile, `${right}\n`, { mode: 0o600 });
    // retries back off from 1 s doubling to 30 s: the next one comes at most 30 s from now
    const { ok, result, elapsedMs } = await pollUntil(() => rawRequest(url, { method: 'GET', path: '/readyz' }), (r) => r.status === 200, 35_000, 200);
    expect(ok, `readyz after ${elapsedMs} ms: ${result.text}`).to.equal(true);
    expect(expectOk(result)).to.deep.include({ status: 'ready' });
    expect(result.json.data.checks.keystore).to.equal('ok');
    expect(svc.url).to.equal(url);

    const eth = expectOk(await client.post(CREATE, { chainCode: 'ETH', externalUserId: 'u-1' }));
    expect(eth.address).to.match(/^0x[0-9a-fA-F]{40}$/);
    const xrp = expectOk(await client.post(CREATE, { chainCode: 'XRP', externalUserId: 'u-1' }));
    expect(xrp.memo).to.match(/^[1-9][0-9]*$/);
    const batch = expectOk(await client.post(BATCH, { items: [{ chainCode: 'ETH', externalUserId: 'u-2' }, { chainCode: 'XRP', externalUserId: 'u-2' }] }));
    expect(batch).to.include({ total: 2, successCount: 2, failedCount: 0 });
    const [keys] = await svc.service.storage.database.sequelize.query('SELECT key_index FROM user_keys ORDER BY key_index');
    expect((keys as Array<{ key_index: string }>).map((k) => Number(k.key_index)), 'no index lost to the outage').to.deep.equal([0, 1]);
    expect(await count('addresses')).to.equal(2 * 3); // ETH and BSC share the user's EVM key; XRP by memo
    expect(await count('custody_keys')).to.equal(0); // the software backend derives keys: no directory rows
  });
});
