import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'chai';
import type { CreatedApplication } from '@wcs/server';
import { startTestService, type TestService } from '@wcs/server/testing';
import { rawRequest, SigningClient } from './client/signing-client';
import { Codes, expectEnvelope, expectError, expectOk, pollUntil } from './support/expect';
import { createTestToken, type TestToken } from './support/softhsm';

const CREATE = '/api/v1/wallet/address/create';

interface KeyRow { backend: string; namespace: string; purpose: string; application_id: number; key_index: string; curve: string; key_id: Buffer; public_key: Buffer }

describe('pkcs11 key store through the API (SoftHSM2): keys recorded in custody_keys; a wrong PIN file is fixed without a restart', function () {
  let token: TestToken;
  let tmp: string;
  let pinFile: string;
  let svc: TestService;
  let app: CreatedApplication;
  let client: SigningClient;
  let query: <R>(sql: string, bind?: unknown[]) => Promise<R[]>;

  before(async function () {
    token = createTestToken();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-pkcs11-e2e-'));
    pinFile = path.join(tmp, 'pin');
    fs.writeFileSync(pinFile, '000000\n', { mode: 0o600 });
    const { WCS_PKCS11_PIN: _pin, SOFTHSM2_CONF: _conf, ...tokenEnv } = token.env;
    svc = await startTestService({
      env: { ...tokenEnv, WCS_KEYSTORE_BACKEND: 'pkcs11', WCS_PKCS11_PIN_FILE: pinFile },
      workers: false,
    });
    app = await svc.createApp({ chains: ['ETH', 'BSC', 'SOL', 'XRP'] });
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    query = async <R>(sql: string, bind: unknown[] = []) => (await svc.service.storage.database.sequelize.query(sql, { bind }))[0] as R[];
  });
  after(async function () {
    if (svc) await svc.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('wrong PIN: the service starts, /readyz says why, address/create is 503 1000009003 and writes nothing', async function () {
    const ready = await rawRequest(svc.url, { method: 'GET', path: '/readyz' });
    expect(ready.status, ready.text).to.equal(503);
    expect(expectEnvelope(ready).data.checks.keystore).to.match(/^unavailable: .*PIN/);
    const res = await client.post(CREATE, { chainCode: 'ETH', externalUserId: 'p-1' });
    expectError(res, 503, Codes.KEYSTORE_UNAVAILABLE, 'The key store is unavailable; retry later');
    expect(res.text).not.to.contain(token.pin);
    for (const table of ['custody_keys', 'user_keys', 'addresses', 'key_counters', 'deposit_accounts']) {
      expect((await query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n, table).to.equal(0);
    }
  });

  it('the right PIN in the file: ready without a restart; each new key is generated once and recorded with its ref', async function () {
    fs.writeFileSync(pinFile, `${token.pin}\n`, { mode: 0o600 });
    const { ok, result, elapsedMs } = await pollUntil(() => rawRequest(svc.url, { method: 'GET', path: '/readyz' }), (r) => r.status === 200, 35_000, 200);
    expect(ok, `readyz after ${elapsedMs} ms: ${result.text}`).to.equal(true);
    expect(result.json.data.checks.keystore).to.equal('ok');

    const eth = expectOk(await client.post(CREATE, { chainCode: 'ETH', externalUserId: 'p-1' }));
    const sol = expectOk(await client.post(CREATE, { chainCode: 'SOL', externalUserId: 'p-1' }));
    const xrp = expectOk(await client.post(CREATE, { chainCode: 'XRP', externalUserId: 'p-1' }));
    expect(eth.address).to.match(/^0x[0-9a-fA-F]{40}$/);
    expect(xrp.memo).to.match(/^[1-9][0-9]*$/);
    // repeated creates: the same records, no new keys
    expect(expectOk(await client.post(CREATE, { chainCode: 'ETH', externalUserId: 'p-1' }))).to.deep.equal(eth);
    expect(expectOk(await client.post(CREATE, { chainCode: 'SOL', externalUserId: 'p-1' }))).to.deep.equal(sol);

    const keys = await query<KeyRow>('SELECT * FROM custody_keys ORDER BY namespace');
    expect(keys.map((k) => [k.backend, k.namespace, k.purpose, k.application_id, Number(k.key_index), k.curve])).to.deep.equal([
      ['pkcs11', 'evm', 'deposit', app.id, 0, 'secp256k1'],
      ['pkcs11', 'sol', 'deposit', app.id, 0, 'ed25519'],
      ['pkcs11', 'xrp', 'deposit', app.id, 0, 'secp256k1'],
    ]);
    expect(new Set(keys.map((k) => k.key_id.toString('hex'))).size).to.equal(3);
    // the recorded public keys are the ones the addresses were made from
    const userKeys = await query<{ namespace: string; public_key: Buffer }>('SELECT namespace, public_key FROM user_keys ORDER BY namespace');
    expect(userKeys.map((k) => [k.namespace, k.public_key.toString('hex')])).to.deep.equal(
      keys.filter((k) => k.namespace !== 'xrp').map((k) => [k.namespace, k.public_key.toString('hex')]),
    );
    const [account] = await query<{ public_key: Buffer }>('SELECT public_key FROM deposit_accounts');
    expect(account!.public_key.toString('hex')).to.equal(keys.find((k) => k.namespace === 'xrp')!.public_key.toString('hex'));
  });
});
