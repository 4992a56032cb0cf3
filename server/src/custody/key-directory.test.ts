import * as crypto from 'node:crypto';
import { expect } from 'chai';
import type { KeyPurpose, KeyRecord, KeyRef, KeySpec } from '@wcs/core';
import { Database } from '../db/database';
import { migrate } from '../db/migrations';
import { createTestDatabase, testConfig, testLogger, type TestDatabase } from '../testing';
import { PgKeyDirectory } from './key-directory';

const EVM: KeySpec = { namespace: 'evm', curve: 'secp256k1', pathTemplate: "m/44'/60'/{account}'/0/{index}" };
const SOL: KeySpec = { namespace: 'sol', curve: 'ed25519', pathTemplate: "m/44'/501'/{account}'/{index}'" };

function ref(applicationId: number, index: number, purpose: KeyPurpose = 'deposit', spec: KeySpec = EVM): KeyRef {
  return { applicationId, index, purpose, spec };
}

/** A record as a device would return it: a random object id and a random "public key". */
function newRecord(curve: KeySpec['curve'] = 'secp256k1'): KeyRecord {
  return { curve, keyId: new Uint8Array(crypto.randomBytes(16)), publicKey: new Uint8Array(crypto.randomBytes(curve === 'secp256k1' ? 33 : 32)) };
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('PgKeyDirectory: which device key serves which KeyRef (real Postgres)', () => {
  let tdb: TestDatabase;
  let a: Database;
  let b: Database;
  let dirA: PgKeyDirectory;
  let dirB: PgKeyDirectory;
  const rows = async (backend?: string): Promise<number> => {
    const [r] = await a.sequelize.query(
      backend ? 'SELECT count(*)::int AS n FROM custody_keys WHERE backend = $1' : 'SELECT count(*)::int AS n FROM custody_keys',
      { bind: backend ? [backend] : [] },
    );
    return (r as Array<{ n: number }>)[0]!.n;
  };

  before(async () => {
    tdb = await createTestDatabase();
    // two Database instances: two pools, as two server processes would have
    a = new Database(testConfig(tdb.url), testLogger());
    b = new Database(testConfig(tdb.url), testLogger());
    await a.open();
    await b.open();
    await migrate(a.sequelize);
    dirA = new PgKeyDirectory(a);
    dirB = new PgKeyDirectory(b);
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await tdb?.drop();
  });

  it('20 concurrent lookupOrCreate calls for one ref, through two pools, create once and agree', async () => {
    const r = ref(7, 3);
    let creates = 0;
    const made = newRecord();
    const create = async () => {
      creates++;
      await sleep(100); // a device's key generation takes a while: the others must wait, not create
      return made;
    };
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? dirA : dirB).lookupOrCreate('pkcs11', r, create)));
    expect(creates).to.equal(1);
    for (const rec of results) {
      expect(rec.curve).to.equal('secp256k1');
      expect(hex(rec.keyId)).to.equal(hex(made.keyId));
      expect(hex(rec.publicKey)).to.equal(hex(made.publicKey));
      expect(Buffer.isBuffer(rec.keyId), 'a plain Uint8Array, not a pg Buffer').to.equal(false);
    }
    expect(await rows('pkcs11')).to.equal(1);
    // copies: wiping one result changes neither another result nor the stored record
    results[0]!.publicKey.fill(0);
    expect(hex(results[1]!.publicKey)).to.equal(hex(made.publicKey));
    expect(hex((await dirB.lookup('pkcs11', r))!.publicKey)).to.equal(hex(made.publicKey));
    // a later call finds it without creating
    expect(hex((await dirA.lookupOrCreate('pkcs11', r, create)).keyId)).to.equal(hex(made.keyId));
    expect(creates).to.equal(1);
  });

  it('a create() that throws stores nothing and its error propagates unchanged; a later call creates', async () => {
    const r = ref(8, 0, 'hot');
    const boom = new Error('device refused to generate');
    let err: unknown = null;
    await dirA.lookupOrCreate('pkcs11', r, async () => {
      throw boom;
    }).catch((e: unknown) => (err = e));
    expect(err).to.equal(boom);
    expect(await dirA.lookup('pkcs11', r)).to.equal(null);
    expect(await rows()).to.equal(1); // only the first test's row

    const made = newRecord();
    const rec = await dirB.lookupOrCreate('pkcs11', r, async () => made);
    expect(hex(rec.keyId)).to.equal(hex(made.keyId));
    expect(hex((await dirA.lookup('pkcs11', r))!.keyId)).to.equal(hex(made.keyId));
  });

  it('when the lock holder\'s create() fails, the next waiter creates; every other waiter gets that one record', async () => {
    const r = ref(9, 1, 'fee');
    let calls = 0;
    const made = newRecord();
    const create = async () => {
      calls++;
      const first = calls === 1;
      await sleep(50);
      if (first) throw new Error('first attempt fails');
      return made;
    };
    const settled = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => (i % 2 ? dirA : dirB).lookupOrCreate('pkcs11', r, create)));
    expect(calls).to.equal(2);
    expect(settled.filter((s) => s.status === 'rejected').map((s) => ((s as PromiseRejectedResult).reason as Error).message)).to.deep.equal(['first attempt fails']);
    for (const s of settled) if (s.status === 'fulfilled') expect(hex(s.value.keyId)).to.equal(hex(made.keyId));
  });

  it('backend, namespace (byte-wise), purpose, application and index each make a distinct ref', async () => {
    const refs: Array<[string, KeyRef]> = [
      ['pkcs11', ref(20, 0)],
      ['other', ref(20, 0)],
      ['pkcs11', ref(20, 0, 'hot')],
      ['pkcs11', ref(20, 0, 'fee')],
      ['pkcs11', ref(21, 0)],
      ['pkcs11', ref(20, 1)],
      ['pkcs11', ref(20, 2147483647)],
      ['pkcs11', ref(20, 0, 'deposit', { ...EVM, namespace: 'EVM' })],
      ['pkcs11', ref(20, 0, 'deposit', SOL)],
    ];
    const made: KeyRecord[] = [];
    for (const [backend, r] of refs) {
      const rec = newRecord(r.spec.curve);
      made.push(rec);
      const got = await dirA.lookupOrCreate(backend, r, async () => rec);
      expect(hex(got.keyId), `${backend} ${JSON.stringify(r)}`).to.equal(hex(rec.keyId));
    }
    for (const [i, [backend, r]] of refs.entries()) {
      const got = await dirB.lookup(backend, r);
      expect(got, `${backend} ${JSON.stringify(r)}`).to.not.equal(null);
      expect(got!.curve).to.equal(r.spec.curve);
      expect(hex(got!.keyId)).to.equal(hex(made[i]!.keyId));
      expect(hex(got!.publicKey)).to.equal(hex(made[i]!.publicKey));
    }
  });

  it('lookup answers null for refs nobody created', async () => {
    expect(await dirA.lookup('pkcs11', ref(30, 0))).to.equal(null);
    expect(await dirA.lookup('pkcs11', ref(7, 4))).to.equal(null); // the first test created index 3 only
    expect(await dirA.lookup('pkcs11', ref(7, 3, 'hot'))).to.equal(null);
    expect(await dirA.lookup('software', ref(7, 3))).to.equal(null);
    expect(await dirA.lookup('pkcs11', ref(7, 3, 'deposit', { ...EVM, namespace: 'evm2' }))).to.equal(null);
  });

  it('one device key id serves one ref per backend: a duplicate key id is refused and nothing is stored', async () => {
    const rec = newRecord();
    await dirA.lookupOrCreate('pkcs11', ref(40, 0), async () => rec);
    const before = await rows();
    let err: unknown = null;
    await dirA.lookupOrCreate('pkcs11', ref(40, 1), async () => ({ ...newRecord(), keyId: rec.keyId })).catch((e: unknown) => (err = e));
    // Postgres refuses it (unique_violation on (backend, key_id)); the error is Sequelize's, unchanged
    expect((err as { parent?: { code?: string; constraint?: string } })?.parent).to.include({ code: '23505', constraint: 'custody_keys_backend_key_id_key' });
    expect(await rows()).to.equal(before);
    expect(await dirA.lookup('pkcs11', ref(40, 1))).to.equal(null);
  });

  it('refuses malformed refs and records before touching the table', async () => {
    const before = await rows();
    const bad: Array<Promise<unknown>> = [
      dirA.lookup('pkcs11', ref(0, 0)),
      dirA.lookup('pkcs11', ref(1, -1)),
      dirA.lookup('pkcs11', { ...ref(1, 0), purpose: 'cold' as KeyPurpose }),
      dirA.lookup('', ref(1, 0)),
      dirA.lookupOrCreate('pkcs11', ref(41, 0), async () => newRecord('ed25519')), // an ed25519 key for a secp256k1 ref
      dirA.lookupOrCreate('pkcs11', ref(41, 0), async () => ({ ...newRecord(), keyId: new Uint8Array(0) })),
    ];
    for (const p of bad) {
      const e = await p.then(() => null, (x: unknown) => x);
      expect(e, 'expected a KeyStoreError').to.have.property('name', 'KeyStoreError');
    }
    expect(await rows()).to.equal(before);
  });
});
