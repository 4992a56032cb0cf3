import { expect } from 'chai';
import type { ChainDefinition } from '../chain';
import { PLUGIN_API_VERSION, type AdapterPlugin } from '../adapter';
import { AdapterRegistry } from '../registry';
import { adapterPackageRequire } from './package-loader';

/** Per-chain fixtures fed to the shared adapter suite. Every vector names its source. */
export interface AdapterFixture {
  readonly chain: ChainDefinition;
  /** Public key (hex) -> the address an independent implementation derives. */
  readonly derivations: ReadonlyArray<{ readonly publicKeyHex: string; readonly address: string; readonly source: string }>;
  /** Addresses that must validate, with their canonical form. */
  readonly valid: ReadonlyArray<{ readonly address: string; readonly memo?: string | null; readonly normalized: string; readonly normalizedMemo?: string | null; readonly source: string }>;
  /** Addresses (and address+memo pairs) that must be refused. */
  readonly invalid: ReadonlyArray<{ readonly address: string; readonly memo?: string | null; readonly why: string }>;
  /** Memo chains only: memos for indices, and texts that are not memos. */
  readonly memos?: { readonly formatted: ReadonlyArray<{ readonly index: bigint; readonly memo: string }>; readonly invalid: readonly string[] };
}

/** How the suite finds the package under test (the plugin's `name`). */
export interface AdapterConformanceOptions {
  /**
   * The adapter package's own folder, the one holding its package.json (from a test compiled to
   * dist/: `path.resolve(__dirname, '..')`). The suite loads the package from there by its name, as
   * the service would, through its `exports` or `main`. Default: the working directory when its
   * package.json names the plugin (`npm test` runs in the package's folder), else Node's resolution
   * from core's folder (the workspaces of this repository).
   */
  readonly packageDir?: string;
}

function hex(s: string): Uint8Array {
  return Uint8Array.from(Buffer.from(s, 'hex'));
}

/**
 * The one suite every adapter package runs (after Ledger's testBridge): plugin contract,
 * derivation against independent vectors, validation of good and bad inputs,
 * normalisation (idempotent), and memo rules.
 */
export function runAdapterConformance(plugin: AdapterPlugin, fixtures: readonly AdapterFixture[], options: AdapterConformanceOptions = {}): void {
  describe(`adapter conformance: ${plugin.name}`, () => {
    it('declares the plugin API of this core and its families', () => {
      expect(plugin.pluginApiVersion).to.equal(PLUGIN_API_VERSION);
      expect(plugin.families.length).to.be.greaterThan(0);
      for (const f of fixtures) expect(plugin.families).to.include(f.chain.family);
    });

    it('loads by its package name through the core registry', () => {
      const families = [...new Set(fixtures.map((f) => f.chain.family))];
      const requireFn = adapterPackageRequire(plugin.name, options.packageDir);
      expect(AdapterRegistry.load([plugin.name], requireFn).families(), 'the families the fixtures cover').to.deep.equal(families);
      // A fresh registry per chain: forChain caches one adapter per (environment, code).
      for (const f of fixtures) expect(AdapterRegistry.load([plugin.name], requireFn).forChain(f.chain).chain).to.equal(f.chain);
    });

    for (const f of fixtures) {
      const label = `${f.chain.code} (${f.chain.environment}, ${f.chain.network})`;
      describe(label, () => {
        const adapter = plugin.create(f.chain);

        it('matches the chain metadata and declares a key layout', () => {
          expect(adapter.chain).to.equal(f.chain);
          expect(adapter.curve).to.equal(f.chain.curve);
          expect(adapter.addressing).to.equal(f.chain.addressing);
          const spec = adapter.keySpec('deposit');
          expect(spec.curve).to.equal(f.chain.curve);
          expect(spec.namespace).to.match(/^[a-z0-9:_-]+$/i);
          expect(spec.pathTemplate).to.match(/^m(\/\d+'?)+\/\{account\}'(\/(\d+'?|\{index\}'?))*$/);
          expect(spec.pathTemplate).to.contain('{index}');
          expect(adapter.memo === null).to.equal(f.chain.addressing === 'hd');
          expect(['sequence', 'utxo', 'expiring']).to.include(adapter.spendModel);
          expect(adapter.createTransferNode === undefined, 'a transfer node comes with a crafter').to.equal(adapter.transfers === undefined);
        });

        it('derives the addresses an independent implementation derives', () => {
          expect(f.derivations.length, 'fixtures need derivation vectors').to.be.greaterThan(0);
          for (const d of f.derivations) {
            expect(adapter.address.addressFromPublicKey({ curve: f.chain.curve, bytes: hex(d.publicKeyHex) }), d.source).to.equal(d.address);
          }
        });

        it('accepts valid addresses and returns the canonical form, idempotently', () => {
          expect(f.valid.length).to.be.greaterThan(0);
          for (const v of f.valid) {
            const r = adapter.address.validate(v.address, v.memo ?? null);
            expect(r, `${v.address} (${v.source})`).to.deep.include({ valid: true, normalized: v.normalized });
            if (v.normalizedMemo !== undefined && r.valid) expect(r.memo).to.equal(v.normalizedMemo);
            const again = adapter.address.validate(v.normalized, r.valid ? r.memo : null);
            expect(again.valid && again.normalized).to.equal(v.normalized);
          }
          for (const d of f.derivations) expect(adapter.address.validate(d.address).valid, d.address).to.equal(true);
        });

        it('refuses invalid addresses with a reason', () => {
          expect(f.invalid.length).to.be.greaterThan(0);
          for (const bad of f.invalid) {
            const r = adapter.address.validate(bad.address, bad.memo ?? null);
            expect(r.valid, `${JSON.stringify(bad.address)}: ${bad.why}`).to.equal(false);
            if (!r.valid) expect(r.reason).to.be.a('string').and.not.equal('');
          }
          for (const junk of ['', ' ', 'x'.repeat(200), '\u0000']) expect(adapter.address.validate(junk).valid).to.equal(false);
        });

        if (f.chain.addressing === 'memo') {
          it('writes and checks memos', () => {
            expect(adapter.addressing, 'the adapter of a memo chain').to.equal('memo');
            if (adapter.addressing !== 'memo') return;
            const memo = adapter.memo;
            expect(memo.maxIndex > 0n).to.equal(true);
            const memos = f.memos;
            expect(memos, 'memo chains need memo fixtures').to.not.equal(undefined);
            if (!memos) return;
            for (const m of memos.formatted) {
              expect(memo.format(m.index)).to.equal(m.memo);
              expect(memo.isValid(m.memo)).to.equal(true);
            }
            expect(memo.format(1n)).to.not.equal(memo.format(2n));
            expect(memo.isValid(memo.format(memo.maxIndex))).to.equal(true);
            for (const bad of memos.invalid) expect(memo.isValid(bad), JSON.stringify(bad)).to.equal(false);
          });
        }
      });
    }
  });
}
