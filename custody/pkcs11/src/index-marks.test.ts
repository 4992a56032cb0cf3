import { expect } from 'chai';
import * as pkcs11js from 'pkcs11js';
import type { KeyDirectory, KeyRecord, KeyRef, KeyStoreOptions } from '@wcs/core';
import { Pkcs11KeyStore } from './pkcs11-keystore';
import { SharedModule } from './module';
import { MARKS_APPLICATION, marksLabel } from './index-marks';
import { createTestToken, SOFTHSM_LIBRARY, type TestToken } from './testing';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** A directory in memory (the server keeps it in Postgres). */
class MemoryDirectory implements KeyDirectory {
  readonly rows = new Map<string, KeyRecord>();
  private key(backend: string, ref: KeyRef): string {
    return `${backend}/${ref.spec.namespace}/${ref.purpose}/${ref.applicationId}/${ref.index}`;
  }
  async lookup(backend: string, ref: KeyRef): Promise<KeyRecord | null> {
    return this.rows.get(this.key(backend, ref)) ?? null;
  }
  async lookupOrCreate(backend: string, ref: KeyRef, create: () => Promise<KeyRecord>): Promise<KeyRecord> {
    const k = this.key(backend, ref);
    const had = this.rows.get(k);
    if (had) return had;
    const made = await create();
    this.rows.set(k, made);
    return made;
  }
}

/** The marks data objects of a lineage on the token: their values as parsed JSON. */
async function marksObjects(token: TestToken, label: string): Promise<Array<{ v: number; marks: unknown[] }>> {
  const m = SharedModule.acquire(SOFTHSM_LIBRARY);
  try {
    return await m.run((p) => {
      const slot = p.C_GetSlotList(true).find((s) => p.C_GetTokenInfo(s).label.trim() === token.label)!;
      const session = p.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
      try {
        try {
          p.C_Login(session, pkcs11js.CKU_USER, token.pin);
        } catch {
          /* this process is logged in already */
        }
        p.C_FindObjectsInit(session, [{ type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_DATA }, { type: pkcs11js.CKA_LABEL, value: label }]);
        const found = p.C_FindObjects(session, 100);
        p.C_FindObjectsFinal(session);
        return found.map((h) => {
          const [value, app, priv, tok] = p.C_GetAttributeValue(session, h, [
            { type: pkcs11js.CKA_VALUE }, { type: pkcs11js.CKA_APPLICATION }, { type: pkcs11js.CKA_PRIVATE }, { type: pkcs11js.CKA_TOKEN },
          ]);
          expect((app!.value as Buffer).toString()).to.equal(MARKS_APPLICATION);
          expect([(priv!.value as Buffer)[0], (tok!.value as Buffer)[0]], 'a private token object').to.deep.equal([1, 1]);
          return JSON.parse((value!.value as Buffer).toString('utf8')) as { v: number; marks: unknown[] };
        });
      } finally {
        p.C_CloseSession(session);
      }
    });
  } finally {
    m.release();
  }
}

describe('Pkcs11KeyStore key-index marks: token data objects merged by maximum', function () {
  this.timeout(60_000);
  let token: TestToken;
  let options: KeyStoreOptions;

  before(() => {
    token = createTestToken();
    options = { dataDir: '/nonexistent', env: token.env, devMode: false };
  });

  it('one private token object per lineage; objects left by concurrent raises or a crash are merged on read and folded into one by the next raise', async () => {
    const a = new Pkcs11KeyStore(options);
    const b = new Pkcs11KeyStore(options);
    await Promise.all([a.init(), b.init()]);
    try {
      const label = marksLabel('wcs', 'lin-p');
      await a.indexMarks.raise('lin-p', [{ applicationId: 1, namespace: 'evm', next: 10 }]);
      expect(await marksObjects(token, label)).to.deep.equal([{ v: 1, marks: [[1, 'evm', 10]] }]);
      // a second object, as a raise that crashed before destroying what it read would leave
      await (a as unknown as { withSession: (w: string, f: (p: pkcs11js.PKCS11, s: Buffer) => void) => Promise<void> }).withSession('test', (p, s) =>
        void p.C_CreateObject(s, [
          { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_DATA },
          { type: pkcs11js.CKA_TOKEN, value: true },
          { type: pkcs11js.CKA_PRIVATE, value: true },
          { type: pkcs11js.CKA_LABEL, value: label },
          { type: pkcs11js.CKA_APPLICATION, value: MARKS_APPLICATION },
          { type: pkcs11js.CKA_VALUE, value: Buffer.from(JSON.stringify({ v: 1, marks: [[1, 'evm', 7], [2, 'sol', 30]] })) },
        ]));
      expect(await marksObjects(token, label)).to.have.length(2);
      expect(await b.indexMarks.read('lin-p')).to.deep.equal([{ applicationId: 1, namespace: 'evm', next: 10 }, { applicationId: 2, namespace: 'sol', next: 30 }]);
      // a raise that changes no value still folds the two objects into one
      await b.indexMarks.raise('lin-p', [{ applicationId: 1, namespace: 'evm', next: 3 }]);
      expect(await marksObjects(token, label)).to.deep.equal([{ v: 1, marks: [[1, 'evm', 10], [2, 'sol', 30]] }]);
      // raises from two stores at once: none lost, and few objects remain
      await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).indexMarks.raise('lin-p', [{ applicationId: 10 + (i % 5), namespace: 'evm', next: i }])));
      const read = await a.indexMarks.read('lin-p');
      expect(read.filter((m) => m.applicationId >= 10).map((m) => [m.applicationId, m.next])).to.deep.equal([[10, 25], [11, 26], [12, 27], [13, 28], [14, 29]]);
      expect((await marksObjects(token, label)).length).to.be.within(1, 2);
      // another key domain on the same token keeps its own marks
      const other = new Pkcs11KeyStore({ ...options, env: { ...options.env, WCS_PKCS11_KEY_DOMAIN: 'other' } });
      await other.init();
      expect(await other.indexMarks.read('lin-p')).to.deep.equal([]);
      await other.destroy();
    } finally {
      await Promise.all([a.destroy(), b.destroy()]);
    }
  });

  it('existingPublicKey never generates a key: null for a ref without one; a key on the token but missing from the directory (a restored database) is found and recorded', async () => {
    const ref = (index: number): KeyRef => ({ applicationId: 4, index, purpose: 'deposit', spec: { namespace: 'evm', curve: 'secp256k1', pathTemplate: "m/44'/60'/{account}'/0/{index}" } });
    const before = new MemoryDirectory();
    const s1 = new Pkcs11KeyStore({ ...options, directory: before });
    await s1.init();
    const made = await s1.getPublicKey(ref(1));
    await s1.destroy();

    const restored = new MemoryDirectory(); // the directory rolled back: the row of ref 1 is gone
    const s2 = new Pkcs11KeyStore({ ...options, directory: restored });
    await s2.init();
    try {
      expect(await s2.indexMarks.existingPublicKey(ref(2))).to.equal(null);
      expect(restored.rows.size).to.equal(0);
      const found = await s2.indexMarks.existingPublicKey(ref(1));
      expect(hex(found!.bytes)).to.equal(hex(made.bytes));
      expect([...restored.rows.values()].map((r) => hex(r.publicKey))).to.deep.equal([hex(made.bytes)]);
      expect(s2.counters.keysGenerated).to.equal(0);
      expect(await s2.indexMarks.existingPublicKey(ref(2))).to.equal(null);
      expect(s2.counters.keysGenerated).to.equal(0);
    } finally {
      await s2.destroy();
    }
  });
});
