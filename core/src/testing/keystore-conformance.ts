import { expect } from 'chai';
import { secp256k1 } from '@noble/curves/secp256k1';
import { ed25519 } from '@noble/curves/ed25519';
import { sha256 } from '@noble/hashes/sha2';
import type { Curve } from '../chain';
import { PLUGIN_API_VERSION } from '../adapter';
import type { KeyPurpose, KeyRef, KeySpec, KeyStore } from '../keystore';
import { runIndexMarksConformance } from './index-marks-conformance';

export interface KeyStoreConformanceOptions {
  /** Curves the backend supports (default: both). */
  readonly curves?: readonly Curve[];
  /**
   * Two specs per curve, with different namespaces and different path templates
   * (defaults: EVM- and BIP-84-like for secp256k1, Solana- and Stellar-like for ed25519).
   */
  readonly specs?: Partial<Record<Curve, readonly [KeySpec, KeySpec]>>;
  /** How many secp256k1 signatures the low-S check samples (default 64). */
  readonly signatures?: number;
  /** How many signatures run in parallel in the concurrency check (default 50). */
  readonly concurrency?: number;
  /**
   * Whether two stores from makeStore() hold the same key material (default true), so a
   * ref gets the same public key from both.
   */
  readonly persistent?: boolean;
  /** Whether the backend keeps key-index marks (the indexMarks capability; default true). */
  readonly indexMarks?: boolean;
}

const DEFAULT_SPECS: Record<Curve, readonly [KeySpec, KeySpec]> = {
  secp256k1: [
    { namespace: 'conformance-secp-a', curve: 'secp256k1', pathTemplate: "m/44'/60'/{account}'/0/{index}" },
    { namespace: 'conformance-secp-b', curve: 'secp256k1', pathTemplate: "m/84'/0'/{account}'/0/{index}" },
  ],
  ed25519: [
    { namespace: 'conformance-ed-a', curve: 'ed25519', pathTemplate: "m/44'/501'/{account}'/{index}'" },
    { namespace: 'conformance-ed-b', curve: 'ed25519', pathTemplate: "m/44'/148'/{account}'/{index}'" },
  ],
};

const N = secp256k1.CURVE.n;
/** Signatures are 64-byte r || s; verification also refuses high S. */
const COMPACT = { format: 'compact', lowS: true } as const;

function hex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}

function ref(spec: KeySpec, applicationId: number, index: number, purpose: KeyPurpose = 'deposit'): KeyRef {
  return { applicationId, spec, purpose, index };
}

function digestOf(text: string): Uint8Array {
  return sha256(new TextEncoder().encode(text));
}

/** Expects the promise (or the function's promise) to reject; returns the error. */
async function rejects(what: () => Promise<unknown>, label: string): Promise<Error> {
  let result: unknown;
  try {
    result = await what();
  } catch (e) {
    expect(e, label).to.be.instanceOf(Error);
    return e as Error;
  }
  expect.fail(`${label}: expected a rejection, got ${JSON.stringify(result, (_k, v: unknown) => (v instanceof Uint8Array ? hex(v) : v))}`);
}

/**
 * The one suite every KeyStore backend runs (software now, PKCS#11 later). `makeStore` returns a
 * new, not yet initialised store; the suite calls init() and destroy() itself.
 */
export function runKeyStoreConformance(name: string, makeStore: () => Promise<KeyStore>, opts: KeyStoreConformanceOptions = {}): void {
  const curves = opts.curves ?? (['secp256k1', 'ed25519'] as const);
  const signatures = opts.signatures ?? 64;
  const concurrency = opts.concurrency ?? 50;
  const persistent = opts.persistent ?? true;
  const specsFor = (curve: Curve): readonly [KeySpec, KeySpec] => opts.specs?.[curve] ?? DEFAULT_SPECS[curve];

  describe(`keystore conformance: ${name}`, function () {
    this.timeout(60_000);
    let store: KeyStore;

    before(async () => {
      store = await makeStore();
      await store.init();
    });

    after(async () => {
      await store?.destroy();
    });

    it('declares the plugin API of this core and a name', () => {
      expect(store.pluginApiVersion).to.equal(PLUGIN_API_VERSION);
      expect(store.name).to.be.a('string').and.not.equal('');
    });

    it('refuses work before init() and after destroy(); init() is idempotent; destroy() twice is fine', async () => {
      const spec = specsFor(curves[0]!)[0];
      const s = await makeStore();
      await rejects(() => s.getPublicKey(ref(spec, 1, 0)), 'getPublicKey before init');
      await Promise.all([s.init(), s.init()]);
      await s.init();
      const pk = await s.getPublicKey(ref(spec, 1, 0));
      expect(pk.curve).to.equal(spec.curve);
      expect(await s.status()).to.be.an('object');
      await s.destroy();
      await rejects(() => s.getPublicKey(ref(spec, 1, 0)), 'getPublicKey after destroy');
      await rejects(() => s.sign(ref(spec, 1, 0), spec.curve === 'secp256k1' ? digestOf('x') : new Uint8Array([1])), 'sign after destroy');
      await s.destroy();
      expect(await s.status()).to.be.an('object');
    });

    it('rejects malformed refs (applicationId >= 1, 0 <= index < 2^31, integers)', async () => {
      const spec = specsFor(curves[0]!)[0];
      for (const [applicationId, index] of [
        [0, 0],
        [-1, 0],
        [1.5, 0],
        [2 ** 31, 0],
        [Number.NaN, 0],
        [1, -1],
        [1, 0.5],
        [1, 2 ** 31],
        [1, Number.POSITIVE_INFINITY],
      ] as const) {
        await rejects(() => store.getPublicKey(ref(spec, applicationId, index)), `applicationId ${applicationId}, index ${index}`);
      }
    });

    it('rejects an unsupported curve', async () => {
      const spec = specsFor(curves[0]!)[0];
      const bogus = { ...spec, curve: 'p256' as unknown as Curve };
      await rejects(() => store.getPublicKey(ref(bogus, 1, 0)), 'getPublicKey with curve p256');
      await rejects(() => store.sign(ref(bogus, 1, 0), digestOf('x')), 'sign with curve p256');
    });

    for (const curve of curves) {
      const [specA, specB] = specsFor(curve);
      describe(curve, () => {
        it('returns the same public key for the same ref, in the right format', async () => {
          const a = await store.getPublicKey(ref(specA, 1, 0));
          const b = await store.getPublicKey(ref(specA, 1, 0));
          expect(a.curve).to.equal(curve);
          expect(hex(a.bytes)).to.equal(hex(b.bytes));
          if (curve === 'secp256k1') {
            expect(a.bytes.length).to.equal(33);
            expect([2, 3]).to.include(a.bytes[0]);
            expect(() => secp256k1.ProjectivePoint.fromHex(a.bytes).assertValidity()).to.not.throw();
            // an uncompressed form, where a store gives one, is the same point
            for (const k of [a, await store.getPublicKey(ref(specA, 1, 7))]) {
              if (k.uncompressed) expect(hex(k.uncompressed)).to.equal(hex(secp256k1.ProjectivePoint.fromHex(k.bytes).toRawBytes(false)));
            }
          } else {
            expect(a.bytes.length).to.equal(32);
            expect(() => ed25519.ExtendedPoint.fromHex(a.bytes).assertValidity()).to.not.throw();
          }
        });

        it('returns distinct keys across applicationId, index and namespace', async () => {
          const refs = [ref(specA, 1, 0), ref(specA, 2, 0), ref(specA, 1, 1), ref(specA, 2, 1), ref(specA, 1, 2 ** 31 - 1), ref(specB, 1, 0), ref(specB, 2, 0)];
          const keys = await Promise.all(refs.map(async (r) => hex((await store.getPublicKey(r)).bytes)));
          expect(new Set(keys).size, keys.join('\n')).to.equal(refs.length);
        });

        if (persistent) {
          it('gives a second store over the same key material the same keys', async () => {
            const other = await makeStore();
            await other.init();
            try {
              for (const r of [ref(specA, 1, 0), ref(specB, 3, 7)]) {
                expect(hex((await other.getPublicKey(r)).bytes)).to.equal(hex((await store.getPublicKey(r)).bytes));
              }
            } finally {
              await other.destroy();
            }
          });
        }

        it('refuses a spec whose curve contradicts its namespace', async () => {
          await store.getPublicKey(ref(specA, 1, 0));
          const otherCurve: Curve = curve === 'secp256k1' ? 'ed25519' : 'secp256k1';
          const mismatched: KeySpec = {
            namespace: specA.namespace,
            curve: otherCurve,
            pathTemplate: otherCurve === 'ed25519' ? "m/44'/9999'/{account}'/{index}'" : "m/44'/9999'/{account}'/0/{index}",
          };
          await rejects(() => store.getPublicKey(ref(mismatched, 1, 0)), 'getPublicKey with the other curve');
          await rejects(() => store.sign(ref(mismatched, 1, 0), digestOf('mismatch')), 'sign with the other curve');
        });

        if (curve === 'secp256k1') {
          it('signs a 32-byte digest: 64-byte r||s that verifies against the public key', async () => {
            const r = ref(specA, 1, 5);
            const pub = await store.getPublicKey(r);
            const digest = digestOf('conformance: secp256k1');
            const sig = await store.sign(r, digest);
            expect(sig.curve).to.equal('secp256k1');
            expect(sig.bytes.length).to.equal(64);
            expect(secp256k1.verify(sig.bytes, digest, pub.bytes, COMPACT)).to.equal(true);
            expect(secp256k1.verify(sig.bytes, digestOf('other'), pub.bytes, COMPACT)).to.equal(false);
            const other = await store.getPublicKey(ref(specA, 2, 5));
            expect(secp256k1.verify(sig.bytes, digest, other.bytes, COMPACT)).to.equal(false);
          });

          it(`always returns low-S signatures whose recovery id recovers the public key (${signatures} signatures)`, async () => {
            const half = N >> 1n;
            const recoveries = new Set<number>();
            for (let i = 0; i < signatures; i++) {
              const r = ref(i % 2 ? specA : specB, 1 + (i % 3), i);
              const pub = await store.getPublicKey(r);
              const digest = digestOf(`low-s ${i}`);
              const sig = await store.sign(r, digest);
              const parsed = secp256k1.Signature.fromCompact(sig.bytes);
              expect(parsed.s <= half, `signature ${i} has high S`).to.equal(true);
              expect(parsed.r > 0n && parsed.s > 0n).to.equal(true);
              expect([0, 1]).to.include(sig.recovery);
              recoveries.add(sig.recovery!);
              const recovered = parsed.addRecoveryBit(sig.recovery!).recoverPublicKey(digest);
              expect(recovered.toHex(true), `signature ${i} recovers another key`).to.equal(hex(pub.bytes));
              expect(secp256k1.verify(sig.bytes, digest, pub.bytes, COMPACT)).to.equal(true);
            }
            if (signatures >= 32) expect(recoveries.size, 'recovery ids 0 and 1 both occur').to.equal(2);
          });

          it('rejects payloads that are not 32 bytes', async () => {
            const r = ref(specA, 1, 0);
            for (const len of [0, 1, 31, 33, 64]) {
              await rejects(() => store.sign(r, new Uint8Array(len).fill(7)), `${len}-byte payload`);
            }
            await rejects(() => store.sign(r, 'x'.repeat(32) as unknown as Uint8Array), 'string payload');
          });
        } else {
          it('signs messages with EdDSA that verify against the public key', async () => {
            const r = ref(specA, 1, 5);
            const pub = await store.getPublicKey(r);
            for (const len of [1, 32, 200, 1232]) {
              const message = new Uint8Array(len).map((_v, i) => (i * 31 + len) & 0xff);
              const sig = await store.sign(r, message);
              expect(sig.curve).to.equal('ed25519');
              expect(sig.bytes.length).to.equal(64);
              expect(sig.recovery).to.equal(null);
              expect(ed25519.verify(sig.bytes, message, pub.bytes), `${len}-byte message`).to.equal(true);
              const tampered = message.slice();
              tampered[0] ^= 1;
              expect(ed25519.verify(sig.bytes, tampered, pub.bytes)).to.equal(false);
            }
            const other = await store.getPublicKey(ref(specA, 2, 5));
            const sig = await store.sign(r, digestOf('ed25519'));
            expect(ed25519.verify(sig.bytes, digestOf('ed25519'), other.bytes)).to.equal(false);
          });

          it('rejects a payload that is not bytes', async () => {
            await rejects(() => store.sign(ref(specA, 1, 0), 'message' as unknown as Uint8Array), 'string payload');
          });
        }

        it(`signs ${concurrency} payloads in parallel, all verifying`, async () => {
          const jobs = Array.from({ length: concurrency }, (_v, i) => ({ r: ref(i % 2 ? specA : specB, 1 + (i % 4), 100 + i), payload: digestOf(`parallel ${curve} ${i}`) }));
          const pubs = await Promise.all(jobs.map((j) => store.getPublicKey(j.r)));
          const sigs = await Promise.all(jobs.map((j) => store.sign(j.r, j.payload)));
          sigs.forEach((sig, i) => {
            const { payload } = jobs[i]!;
            const ok =
              curve === 'secp256k1'
                ? secp256k1.verify(sig.bytes, payload, pubs[i]!.bytes, COMPACT)
                : ed25519.verify(sig.bytes, payload, pubs[i]!.bytes);
            expect(ok, `parallel signature ${i}`).to.equal(true);
          });
          const again = await Promise.all(jobs.map((j) => store.getPublicKey(j.r)));
          expect(again.map((p) => hex(p.bytes))).to.deep.equal(pubs.map((p) => hex(p.bytes)));
        });
      });
    }

    if (opts.indexMarks ?? true) runIndexMarksConformance(makeStore, () => store, specsFor(curves[0]!)[0], persistent);
  });
}
