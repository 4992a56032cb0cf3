import { expect } from 'chai';
import { secp256k1 } from '@noble/curves/secp256k1';
import { keccak_256 } from '@noble/hashes/sha3';
import { runKeyStoreConformance } from '@wcs/core/testing';
import type { KeyStore } from '@wcs/core';
import { Database, migrate, PgKeyDirectory, WcsService, type CreatedApplication } from '@wcs/server';
import { createTestDatabase, testConfig, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { Pkcs11KeyStore } from '@wcs/custody-pkcs11';
import { rawRequest, SigningClient } from './client/signing-client';
import { expectEnvelope, expectOk, pollUntil } from './support/expect';
import { createTestToken, removeTestToken, type TestToken } from './support/softhsm';

const CREATE = '/api/v1/wallet/address/create';

interface Address { id: number; chainCode: string; address: string; memo: string | null; externalUserId: string }

/** EIP-55-independent check: the lower-case address is keccak256(uncompressed point x||y)[12:]. */
function evmAddressOf(compressed: Buffer): string {
  const point = secp256k1.ProjectivePoint.fromHex(compressed).toRawBytes(false);
  return '0x' + Buffer.from(keccak_256(point.subarray(1))).subarray(12).toString('hex');
}

describe('KeyStore conformance: pkcs11 (SoftHSM2) with the Postgres key directory', function () {
  let tdb: TestDatabase;
  let db: Database;
  let token: TestToken;

  before(async () => {
    token = createTestToken();
    tdb = await createTestDatabase();
    db = new Database(testConfig(tdb.url), testLogger());
    await db.open();
    await migrate(db.sequelize);
  });
  after(async () => {
    await db?.close();
    await tdb?.drop();
  });

  runKeyStoreConformance(
    '@wcs/custody-pkcs11 + PgKeyDirectory',
    async (): Promise<KeyStore> => new Pkcs11KeyStore({ dataDir: '/nonexistent', env: token.env, devMode: false, directory: new PgKeyDirectory(db) }),
    { signatures: 64, concurrency: 50 },
  );
});

describe('deposit addresses through the signed API with the pkcs11 key store (SoftHSM2)', function () {
  let token: TestToken;
  let tdb: TestDatabase;
  let svc: WcsService;
  let app: CreatedApplication;
  const start = async () => WcsService.start(testConfig(tdb.url, token.env), testLogger(), { api: true, workers: false });
  const client = () => new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
  const rows = async <R>(sql: string, bind: unknown[] = []) => (await svc.storage.database.sequelize.query(sql, { bind }))[0] as R[];

  before(async () => {
    token = createTestToken();
    tdb = await createTestDatabase();
    svc = await start();
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'hsm', environment: 'test', chains: ['ETH', 'BSC', 'POLYGON', 'BTC', 'SOL', 'XRP'] });
  });
  after(async () => {
    await svc?.stop();
    await tdb?.drop();
  });

  it('one key per user in the EVM namespace: the same address on every EVM chain, made from the key the HSM holds', async () => {
    const c = client();
    const eth: Address = expectOk(await c.post(CREATE, { chainCode: 'ETH', externalUserId: 'alice' }));
    const bsc: Address = expectOk(await c.post(CREATE, { chainCode: 'BSC', externalUserId: 'alice' }));
    const polygon: Address = expectOk(await c.post(CREATE, { chainCode: 'POLYGON', externalUserId: 'alice' }));
    expect(bsc.address).to.equal(eth.address);
    expect(polygon.address).to.equal(eth.address);
    const bob: Address = expectOk(await c.post(CREATE, { chainCode: 'BSC', externalUserId: 'bob' }));
    expect(bob.address).to.not.equal(eth.address);
    const keys = await rows<{ key_index: string; public_key: Buffer }>(
      `SELECT key_index, public_key FROM custody_keys WHERE backend = 'pkcs11' AND namespace = 'evm' AND application_id = $1 ORDER BY key_index`,
      [app.id],
    );
    expect(keys.map((k) => Number(k.key_index))).to.deep.equal([0, 1]);
    expect(evmAddressOf(keys[0]!.public_key)).to.equal(eth.address.toLowerCase());
    expect(evmAddressOf(keys[1]!.public_key)).to.equal(bob.address.toLowerCase());
  });

  it('40 users at once on three chain families: one HSM key each, no key generated twice', async () => {
    const c = client();
    const jobs = Array.from({ length: 40 }, (_v, i) => ({ chainCode: ['ETH', 'BTC', 'SOL'][i % 3]!, externalUserId: `many-${i}` }));
    const out: Address[] = await Promise.all(jobs.map(async (j) => expectOk(await c.post(CREATE, j))));
    // each user asked twice more, concurrently: the same records
    const again: Address[] = await Promise.all(jobs.map(async (j) => expectOk(await c.post(CREATE, j))));
    expect(again).to.deep.equal(out);
    expect(new Set(out.map((a) => a.address)).size).to.equal(40);
    const [dupes] = await rows<{ n: number }>(`SELECT count(*)::int - count(DISTINCT public_key)::int AS n FROM custody_keys`);
    expect(dupes!.n).to.equal(0);
    const counts = await rows<{ namespace: string; n: number }>(
      `SELECT k.namespace, count(*)::int AS n FROM user_keys k JOIN custody_keys c
         ON c.namespace = k.namespace AND c.application_id = k.application_id AND c.key_index = k.key_index AND c.public_key = k.public_key
        WHERE k.application_id = $1 GROUP BY k.namespace ORDER BY k.namespace`,
      [app.id],
    );
    // every user key is an HSM key recorded with its ref: evm has alice and bob too
    const total = await rows<{ n: number }>(`SELECT count(*)::int AS n FROM user_keys WHERE application_id = $1`, [app.id]);
    expect(counts.reduce((s, r) => s + r.n, 0)).to.equal(total[0]!.n);
  });

  it('survives a restart: a new service process on the same token and database gives the same addresses, generating nothing', async () => {
    const c = client();
    const before: Address = expectOk(await c.post(CREATE, { chainCode: 'SOL', externalUserId: 'alice' }));
    const xrp: Address = expectOk(await c.post(CREATE, { chainCode: 'XRP', externalUserId: 'alice' }));
    const eth: Address = expectOk(await c.post(CREATE, { chainCode: 'ETH', externalUserId: 'alice' }));
    const keysBefore = (await rows<{ n: number }>('SELECT count(*)::int AS n FROM custody_keys'))[0]!.n;
    await svc.stop();
    svc = await start();
    const c2 = client();
    expect(expectOk(await c2.post(CREATE, { chainCode: 'SOL', externalUserId: 'alice' }))).to.deep.equal(before);
    expect(expectOk(await c2.post(CREATE, { chainCode: 'XRP', externalUserId: 'alice' }))).to.deep.equal(xrp);
    expect(expectOk(await c2.post(CREATE, { chainCode: 'ETH', externalUserId: 'alice' }))).to.deep.equal(eth);
    expect((await rows<{ n: number }>('SELECT count(*)::int AS n FROM custody_keys'))[0]!.n).to.equal(keysBefore);
  });

  it('a removed token: /readyz 503 naming it, new addresses 503 with nothing written; put back: ready again without a restart', async () => {
    const putBack = removeTestToken(token);
    let restored = false;
    try {
      const r = await pollUntil(() => rawRequest(svc.url, { method: 'GET', path: '/readyz' }), (x) => x.status === 503, 10_000, 200);
      expect(r.ok, r.result.text).to.equal(true);
      expect(String(expectEnvelope(r.result).data.checks.keystore)).to.match(/^unavailable: .*/).and.include(token.label);
      const keysBefore = (await rows<{ n: number }>('SELECT count(*)::int AS n FROM custody_keys'))[0]!.n;
      const usersBefore = (await rows<{ n: number }>('SELECT count(*)::int AS n FROM user_keys'))[0]!.n;
      const res = await client().post(CREATE, { chainCode: 'ETH', externalUserId: 'while-removed' });
      expect(res.status, res.text).to.equal(503);
      expect(res.json.code).to.equal(1000009003);
      expect((await rows<{ n: number }>('SELECT count(*)::int AS n FROM custody_keys'))[0]!.n).to.equal(keysBefore);
      expect((await rows<{ n: number }>('SELECT count(*)::int AS n FROM user_keys'))[0]!.n).to.equal(usersBefore);
      putBack();
      restored = true;
      const back = await pollUntil(() => rawRequest(svc.url, { method: 'GET', path: '/readyz' }), (x) => x.status === 200, 15_000, 250);
      expect(back.ok, back.result.text).to.equal(true);
      expectOk(await client().post(CREATE, { chainCode: 'ETH', externalUserId: 'after-removal' }));
    } finally {
      if (!restored) putBack();
    }
  });
});
