import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { KeyIndexMark, KeyIndexMarks } from '../index-marks';
import type { KeyRef, KeySpec, KeyStore } from '../keystore';

function hex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}

async function rejects(what: () => Promise<unknown>, label: string): Promise<Error> {
  try {
    await what();
  } catch (e) {
    expect(e, label).to.be.instanceOf(Error);
    return e as Error;
  }
  expect.fail(`${label}: expected a rejection`);
}

function marksOf(store: KeyStore): KeyIndexMarks {
  expect(store.indexMarks, 'the store has the indexMarks capability').to.be.an('object');
  return store.indexMarks!;
}

const sorted = (marks: readonly KeyIndexMark[]) =>
  [...marks].map((m) => `${m.applicationId}/${m.namespace}=${m.next}`).sort();

/** A fresh lineage per test, so stores that persist marks never see an earlier test's. */
const lineage = () => `conf-${randomBytes(6).toString('hex')}`;

/**
 * The key-index marks part of the key-store conformance suite (run by runKeyStoreConformance
 * inside its describe, with the suite's initialised store).
 */
export function runIndexMarksConformance(makeStore: () => Promise<KeyStore>, store: () => KeyStore, spec: KeySpec, persistent: boolean): void {
  describe('key-index marks (indexMarks)', () => {
    it('a new lineage has no marks; raise keeps the highest value and answers the marks after', async () => {
      const m = marksOf(store());
      const l = lineage();
      expect(await m.read(l)).to.deep.equal([]);
      const first = await m.raise(l, [{ applicationId: 1, namespace: 'evm', next: 20 }, { applicationId: 2, namespace: 'evm', next: 5 }]);
      expect(sorted(first)).to.deep.equal(['1/evm=20', '2/evm=5']);
      // a lower value leaves the mark; a higher one raises it; a new pair is added
      const second = await m.raise(l, [{ applicationId: 1, namespace: 'evm', next: 3 }, { applicationId: 2, namespace: 'evm', next: 9 }, { applicationId: 1, namespace: 'btc', next: 0 }]);
      expect(second.map((x) => x.next)).to.deep.equal([20, 9, 0]);
      expect(sorted(await m.read(l))).to.deep.equal(['1/btc=0', '1/evm=20', '2/evm=9']);
      // the bounds: 2^31 (every index) is a valid mark
      await m.raise(l, [{ applicationId: 2 ** 31 - 1, namespace: 'n'.repeat(128), next: 2 ** 31 }]);
      expect(sorted(await m.read(l))).to.include(`${2 ** 31 - 1}/${'n'.repeat(128)}=${2 ** 31}`);
    });

    it('keeps lineages apart', async () => {
      const m = marksOf(store());
      const [a, b] = [lineage(), lineage()];
      await m.raise(a, [{ applicationId: 1, namespace: 'evm', next: 40 }]);
      await m.raise(b, [{ applicationId: 1, namespace: 'evm', next: 7 }]);
      expect(sorted(await m.read(a))).to.deep.equal(['1/evm=40']);
      expect(sorted(await m.read(b))).to.deep.equal(['1/evm=7']);
    });

    it('refuses a malformed lineage or mark, and records nothing of that call', async () => {
      const m = marksOf(store());
      const l = lineage();
      await m.raise(l, [{ applicationId: 1, namespace: 'evm', next: 1 }]);
      for (const bad of ['', 'has space', 'x'.repeat(65), 'semi;colon', 42 as unknown as string]) {
        await rejects(() => m.read(bad), `read lineage ${JSON.stringify(bad)}`);
        await rejects(() => m.raise(bad, [{ applicationId: 1, namespace: 'evm', next: 2 }]), `raise lineage ${JSON.stringify(bad)}`);
      }
      const badMarks: KeyIndexMark[] = [
        { applicationId: 0, namespace: 'evm', next: 1 },
        { applicationId: 1.5, namespace: 'evm', next: 1 },
        { applicationId: 1, namespace: '', next: 1 },
        { applicationId: 1, namespace: 'n'.repeat(129), next: 1 },
        { applicationId: 1, namespace: 'evm', next: -1 },
        { applicationId: 1, namespace: 'evm', next: 2 ** 31 + 1 },
        { applicationId: 1, namespace: 'evm', next: Number.NaN },
      ];
      for (const bad of badMarks) {
        // the good mark first: a refused batch records none of its marks
        await rejects(() => m.raise(l, [{ applicationId: 1, namespace: 'evm', next: 99 }, bad]), `raise ${JSON.stringify(bad)}`);
      }
      expect(sorted(await m.read(l))).to.deep.equal(['1/evm=1']);
    });

    it('refuses marks before init() and after destroy()', async () => {
      const s = await makeStore();
      const l = lineage();
      await rejects(() => marksOf(s).read(l), 'read before init');
      await rejects(() => marksOf(s).raise(l, [{ applicationId: 1, namespace: 'evm', next: 1 }]), 'raise before init');
      await s.init();
      await marksOf(s).raise(l, [{ applicationId: 1, namespace: 'evm', next: 1 }]);
      await s.destroy();
      await rejects(() => marksOf(s).raise(l, [{ applicationId: 1, namespace: 'evm', next: 2 }]), 'raise after destroy');
    });

    it('existingPublicKey: the key of a ref asked before; for a ref never asked, null or the key getPublicKey gives it', async () => {
      const s = store();
      const m = marksOf(s);
      const asked: KeyRef = { applicationId: 7, spec, purpose: 'deposit', index: 3 };
      const pub = await s.getPublicKey(asked);
      const existing = await m.existingPublicKey(asked);
      expect(existing, 'a key asked for before exists').to.not.equal(null);
      expect(hex(existing!.bytes)).to.equal(hex(pub.bytes));
      const never: KeyRef = { applicationId: 7, spec, purpose: 'deposit', index: 1_000_000 + Math.floor(Math.random() * 1_000_000) };
      const before = await m.existingPublicKey(never);
      const made = await s.getPublicKey(never);
      if (before !== null) expect(hex(before.bytes), 'an HD store derives the same key').to.equal(hex(made.bytes));
      expect(hex((await m.existingPublicKey(never))!.bytes)).to.equal(hex(made.bytes));
      await rejects(() => m.existingPublicKey({ ...asked, index: -1 }), 'existingPublicKey with index -1');
    });

    if (persistent) {
      it('is durable: a second store over the same key material reads the marks; concurrent raises from two stores lose none', async () => {
        const l = lineage();
        const other = await makeStore();
        await other.init();
        try {
          await marksOf(store()).raise(l, [{ applicationId: 3, namespace: 'sol', next: 11 }]);
          expect(sorted(await marksOf(other).read(l))).to.deep.equal(['3/sol=11']);
          // 40 raises at once, split between the two stores: distinct pairs and one shared pair
          const jobs = Array.from({ length: 40 }, (_, i) => ({ s: i % 2 ? store() : other, mark: { applicationId: 10 + i, namespace: 'evm', next: i + 1 } }));
          const shared = Array.from({ length: 20 }, (_, i) => ({ s: i % 2 ? store() : other, mark: { applicationId: 5, namespace: 'evm', next: 100 + i } }));
          await Promise.all([...jobs, ...shared].map((j) => marksOf(j.s).raise(l, [j.mark])));
          const third = await makeStore();
          await third.init();
          try {
            const read = await marksOf(third).read(l);
            expect(sorted(read)).to.deep.equal(sorted([
              { applicationId: 3, namespace: 'sol', next: 11 },
              ...jobs.map((j) => j.mark),
              { applicationId: 5, namespace: 'evm', next: 119 },
            ]));
          } finally {
            await third.destroy();
          }
        } finally {
          await other.destroy();
        }
      });
    }
  });
}
