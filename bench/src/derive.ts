/**
 * Benchmark: public-key derivations per second of the software key store
 * (@wcs/custody-software, through its KeyStore.getPublicKey) versus Trust Wallet's
 * @trustwallet/wallet-core (C++ compiled to WASM: HDWallet.getKey + public key), in one
 * process, for the same paths of the same mnemonic (TEST_MNEMONIC). Goal: ours / wallet-core
 * at least 1.0x per curve. Every key is compared byte for byte between the two.
 *
 *   secp256k1  EVM     m/44'/60'/1'/0/i    (the service's ETH/BSC/POLYGON deposit path, application 1)
 *   secp256k1  BIP-84  m/84'/0'/1'/0/i     (BTC mainnet deposit path, application 1)
 *   ed25519    Solana  m/44'/501'/1'/i'    (SOL deposit path, application 1)
 *
 * Indices are fresh throughout (warm-up and every round use new ones), so the key store's
 * public-key cache never hits; its account-level xpub cache does, as in the service.
 *
 *   npm run bench:derive                (from the repository root)
 *   BENCH_DERIVE_SECP=20000 BENCH_DERIVE_ROUNDS=5 node bench/dist/derive.js
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { KeySpec, KeyStore, KeyStoreOptions, KeyStorePlugin } from '@wcs/core';
import { TEST_MNEMONIC } from '@wcs/server/testing';
import { checkAborted, runMain } from './lib/processes';
import { fmtInt, machineInfo, machineLine, median, out, progress, table, printFailures, writeResults } from './lib/report';
import { intEnv, boolEnv } from './lib/settings';

const GOAL_RATIO = 1.0;
/** The application id, i.e. the hardened account level of every path. */
const ACCOUNT = 1;

// ---------------------------------------------------------------- wallet-core (typed here: only what is used)

interface WcObject {
  delete(): void;
}
interface WcPublicKey extends WcObject {
  data(): Uint8Array;
  compressed(): WcPublicKey;
}
interface WcPrivateKey extends WcObject {
  getPublicKeySecp256k1(compressed: boolean): WcPublicKey;
  getPublicKeyEd25519(): WcPublicKey;
}
interface WcHDWallet extends WcObject {
  getKey(coin: unknown, derivationPath: string): WcPrivateKey;
  getExtendedPublicKeyAccount(purpose: unknown, coin: unknown, derivation: unknown, version: unknown, account: number): string;
}
interface WalletCore {
  HDWallet: {
    createWithMnemonic(mnemonic: string, passphrase: string): WcHDWallet;
    getPublicKeyFromExtended(extended: string, coin: unknown, derivationPath: string): WcPublicKey;
  };
  CoinType: Record<'ethereum' | 'bitcoin' | 'solana', unknown>;
  Purpose: Record<'bip44' | 'bip84', unknown>;
  Derivation: Record<'default' | 'bitcoinSegwit', unknown>;
  HDVersion: Record<'xpub' | 'zpub', unknown>;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { initWasm } = require('@trustwallet/wallet-core') as { initWasm: () => Promise<WalletCore> };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const WALLET_CORE_VERSION = (require('@trustwallet/wallet-core/package.json') as { version: string }).version;

// ---------------------------------------------------------------- cases

type Curve = 'secp256k1' | 'ed25519';
type Impl = 'key store' | 'wallet-core' | 'wallet-core xpub';

interface Case {
  name: string;
  curve: Curve;
  /** The KeySpec the key store is asked for (as an adapter would give it). */
  spec: KeySpec;
  path: (i: number) => string;
  coin: 'ethereum' | 'bitcoin' | 'solana';
  /** For the informational "wallet-core from the account xpub" variant (secp256k1 only). */
  xpub?: { purpose: 'bip44' | 'bip84'; derivation: 'default' | 'bitcoinSegwit'; version: 'xpub' | 'zpub' };
  n: number;
  /** Next fresh index. */
  next: number;
}

interface Batch {
  case: string;
  curve: Curve;
  impl: Impl;
  round: number | 'warm-up';
  firstIndex: number;
  keys: number;
  seconds: number;
  cpuSeconds: number;
  keysPerSecond: number;
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const YIELD_EVERY = 250;
const yieldToEventLoop = () => new Promise<void>((r) => setImmediate(r));

async function main(): Promise<number> {
  const nSecp = intEnv('BENCH_DERIVE_SECP', 5000, 1, 10_000_000);
  const nEd = intEnv('BENCH_DERIVE_ED', 2000, 1, 10_000_000);
  const rounds = intEnv('BENCH_DERIVE_ROUNDS', 3, 1, 100);
  const warmup = intEnv('BENCH_DERIVE_WARMUP', 500, 0, 1_000_000);
  const withXpub = !boolEnv('BENCH_DERIVE_NO_XPUB');
  const enforceGoal = boolEnv('BENCH_ENFORCE_GOAL');
  const machine = machineInfo();

  const cases: Case[] = [
    {
      name: 'EVM',
      curve: 'secp256k1',
      spec: { namespace: 'evm', curve: 'secp256k1', pathTemplate: "m/44'/60'/{account}'/0/{index}" },
      path: (i) => `m/44'/60'/${ACCOUNT}'/0/${i}`,
      coin: 'ethereum',
      xpub: { purpose: 'bip44', derivation: 'default', version: 'xpub' },
      n: nSecp,
      next: 0,
    },
    {
      name: 'BIP-84',
      curve: 'secp256k1',
      spec: { namespace: 'btc:mainnet', curve: 'secp256k1', pathTemplate: "m/84'/0'/{account}'/0/{index}" },
      path: (i) => `m/84'/0'/${ACCOUNT}'/0/${i}`,
      coin: 'bitcoin',
      xpub: { purpose: 'bip84', derivation: 'bitcoinSegwit', version: 'zpub' },
      n: nSecp,
      next: 0,
    },
    {
      name: 'Solana',
      curve: 'ed25519',
      spec: { namespace: 'sol', curve: 'ed25519', pathTemplate: "m/44'/501'/{account}'/{index}'" },
      path: (i) => `m/44'/501'/${ACCOUNT}'/${i}'`,
      coin: 'solana',
      n: nEd,
      next: 0,
    },
  ];
  const label = (c: Case) => `${c.curve} ${c.name} ${c.path(0).replace(/0('?)$/, 'i$1')}`;

  out(`key derivation: software key store (@wcs/custody-software, KeyStore.getPublicKey) vs @trustwallet/wallet-core ${WALLET_CORE_VERSION} (WASM), one process`);
  out(machineLine(machine));
  out(
    `per round and path: ${fmtInt(nSecp)} secp256k1 / ${fmtInt(nEd)} ed25519 keys, ${rounds} rounds (order alternates), ` +
      `warm-up ${fmtInt(warmup)} keys per path and implementation; fresh indices throughout; mnemonic TEST_MNEMONIC`,
  );

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-bench-ks-'));
  const removeTmp = () => fs.rmSync(tmp, { recursive: true, force: true });
  process.on('exit', removeTmp);
  let ks: KeyStore | null = null;
  try {
    // The key store exactly as the service builds it: initialize (wcs keystore init), create, init (unlock).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const plugin = (require('@wcs/custody-software') as { plugin: KeyStorePlugin }).plugin;
    const options: KeyStoreOptions = {
      dataDir: tmp,
      env: { WCS_KEYSTORE_FILE: path.join(tmp, 'keystore.json'), WCS_KEYSTORE_PASSPHRASE: crypto.randomBytes(16).toString('hex') },
      devMode: false,
    };
    let t0 = process.hrtime.bigint();
    await plugin.initialize(options, { mnemonic: TEST_MNEMONIC });
    const initMs = Number(process.hrtime.bigint() - t0) / 1e6;
    ks = plugin.create(options);
    t0 = process.hrtime.bigint();
    await ks.init();
    const unlockMs = Number(process.hrtime.bigint() - t0) / 1e6;
    t0 = process.hrtime.bigint();
    const core = await initWasm();
    const wallet = core.HDWallet.createWithMnemonic(TEST_MNEMONIC, '');
    const wcInitMs = Number(process.hrtime.bigint() - t0) / 1e6;
    out(`set-up (not measured): key store initialize ${initMs.toFixed(0)} ms, unlock ${unlockMs.toFixed(0)} ms (scrypt); wallet-core initWasm + HDWallet ${wcInitMs.toFixed(0)} ms`);
    const xpubs = new Map<string, string>();
    for (const c of cases) {
      if (c.xpub) {
        xpubs.set(c.name, wallet.getExtendedPublicKeyAccount(core.Purpose[c.xpub.purpose], core.CoinType[c.coin], core.Derivation[c.xpub.derivation], core.HDVersion[c.xpub.version], ACCOUNT));
      }
    }

    const store = ks;
    const derivers: Record<Impl, (c: Case, i: number) => Promise<Uint8Array> | Uint8Array> = {
      'key store': async (c, i) => (await store.getPublicKey({ applicationId: ACCOUNT, spec: c.spec, purpose: 'deposit', index: i })).bytes,
      'wallet-core': (c, i) => {
        const key = wallet.getKey(core.CoinType[c.coin], c.path(i));
        const pub = c.curve === 'ed25519' ? key.getPublicKeyEd25519() : key.getPublicKeySecp256k1(true);
        const bytes = pub.data();
        pub.delete();
        key.delete();
        return bytes;
      },
      'wallet-core xpub': (c, i) => {
        const pub = core.HDWallet.getPublicKeyFromExtended(xpubs.get(c.name)!, core.CoinType[c.coin], c.path(i));
        const comp = pub.compressed(); // ethereum's public keys are the 65-byte form
        const bytes = comp.data();
        comp.delete();
        pub.delete();
        return bytes;
      },
    };
    const implsFor = (c: Case): Impl[] => (c.xpub && withXpub ? ['key store', 'wallet-core', 'wallet-core xpub'] : ['key store', 'wallet-core']);

    let compared = 0;
    let mismatchCount = 0;
    const mismatches: string[] = [];
    const batches: Batch[] = [];

    /** Derives keys first..first+n-1 with one implementation, timed; returns the keys. */
    const runBatch = async (c: Case, impl: Impl, round: number | 'warm-up', first: number, n: number): Promise<Uint8Array[]> => {
      const derive = derivers[impl];
      const keys: Uint8Array[] = new Array(n);
      const cpu0 = process.cpuUsage();
      const t = process.hrtime.bigint();
      // Every YIELD_EVERY keys: one turn of the event loop, so a Ctrl-C is seen (the awaits
      // of the key store resolve as microtasks and never let a signal handler run).
      for (let k = 0; k < n; k += YIELD_EVERY) {
        const end = Math.min(n, k + YIELD_EVERY);
        if (impl === 'key store') {
          for (let j = k; j < end; j++) keys[j] = await derive(c, first + j);
        } else {
          for (let j = k; j < end; j++) keys[j] = derive(c, first + j) as Uint8Array;
        }
        await yieldToEventLoop();
        checkAborted();
      }
      const seconds = Number(process.hrtime.bigint() - t) / 1e9;
      const cpu = process.cpuUsage(cpu0);
      batches.push({ case: c.name, curve: c.curve, impl, round, firstIndex: first, keys: n, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, keysPerSecond: n / seconds });
      return keys;
    };

    /** One batch per implementation over the same fresh indices, in the given order; then every key is compared. */
    const measure = async (c: Case, round: number | 'warm-up', n: number, order: Impl[]): Promise<void> => {
      const first = c.next;
      c.next += n;
      const got = new Map<Impl, Uint8Array[]>();
      for (const impl of order) {
        checkAborted();
        got.set(impl, await runBatch(c, impl, round, first, n));
      }
      const ours = got.get('key store')!;
      const expectedLength = c.curve === 'ed25519' ? 32 : 33;
      for (const [impl, keys] of got) {
        if (impl === 'key store') continue;
        for (let k = 0; k < n; k++) {
          compared++;
          if (ours[k]!.length !== expectedLength || !Buffer.from(ours[k]!).equals(Buffer.from(keys[k]!))) {
            if (++mismatchCount <= 10) mismatches.push(`${c.path(first + k)}: key store ${hex(ours[k]!)}, ${impl} ${hex(keys[k]!)}`);
          }
        }
      }
    };

    if (warmup > 0) {
      for (const c of cases) {
        progress(`warm-up ${label(c)}`);
        await measure(c, 'warm-up', Math.min(warmup, c.n), implsFor(c));
      }
    }
    for (let round = 1; round <= rounds; round++) {
      for (const c of cases) {
        const order = implsFor(c);
        if (round % 2 === 0) order.reverse();
        progress(`round ${round}/${rounds}: ${label(c)} (${order.join(', ')})`);
        await measure(c, round, c.n, order);
        const last = batches.slice(-order.length);
        progress(`  ${last.map((b) => `${b.impl} ${fmtInt(b.keysPerSecond)}/s`).join(', ')}`);
      }
    }

    // ---------------------------------------------------------------- report
    const measured = batches.filter((b) => b.round !== 'warm-up');
    out('');
    out(
      table(
        ['round', 'path', 'implementation', 'keys', 'first index', 'ms', 'keys/s', 'µs/key', 'cpu %'],
        batches.map((b) => {
          const c = cases.find((x) => x.name === b.case)!;
          return [
            String(b.round),
            label(c),
            b.impl,
            fmtInt(b.keys),
            fmtInt(b.firstIndex),
            (b.seconds * 1000).toFixed(0),
            fmtInt(b.keysPerSecond),
            ((b.seconds / b.keys) * 1e6).toFixed(1),
            String(Math.round((b.cpuSeconds / b.seconds) * 100)),
          ];
        }),
        [false, false, false, true, true, true, true, true, true],
      ),
    );

    /** Median over rounds of keys/s for one implementation over a set of cases (keys summed / seconds summed per round). */
    const rate = (impl: Impl, names: string[]) =>
      median(
        Array.from({ length: rounds }, (_, i) => {
          const bs = measured.filter((b) => b.round === i + 1 && b.impl === impl && names.includes(b.case));
          return bs.reduce((a, b) => a + b.keys, 0) / bs.reduce((a, b) => a + b.seconds, 0);
        }),
      );
    const perRound = (names: string[], impl: Impl = 'wallet-core') =>
      Array.from({ length: rounds }, (_, i) => {
        const sum = (x: Impl) => {
          const bs = measured.filter((b) => b.round === i + 1 && b.impl === x && names.includes(b.case));
          return bs.reduce((a, b) => a + b.keys, 0) / bs.reduce((a, b) => a + b.seconds, 0);
        };
        return sum('key store') / sum(impl);
      });

    interface Row {
      what: string;
      names: string[];
      goal: boolean;
    }
    const rows: Row[] = [
      ...cases.map((c) => ({ what: label(c), names: [c.name], goal: false })),
      ...(['secp256k1', 'ed25519'] as const).map((curve) => ({
        what: `${curve} (curve total)`,
        names: cases.filter((c) => c.curve === curve).map((c) => c.name),
        goal: true,
      })),
    ];
    const summary = rows.map((r) => {
      const ours = rate('key store', r.names);
      const wc = rate('wallet-core', r.names);
      return { ...r, ours, wc, ratio: ours / wc, perRound: perRound(r.names), met: ours / wc >= GOAL_RATIO };
    });
    out('');
    out(
      table(
        ['path / curve', 'key store keys/s', 'wallet-core keys/s', 'ours / wallet-core', 'per round', 'goal', 'result'],
        summary.map((s) => [
          s.what,
          fmtInt(s.ours),
          fmtInt(s.wc),
          `${s.ratio.toFixed(2)}x`,
          s.perRound.map((p) => p.toFixed(2)).join(', '),
          s.goal ? `>= ${GOAL_RATIO.toFixed(1)}x` : '-',
          s.goal ? (s.met ? 'met' : 'NOT MET') : '-',
        ]),
        [false, true, true, true, false, false, false],
      ),
    );
    const xpubRows = withXpub
      ? cases
          .filter((c) => c.xpub)
          .map((c) => {
            const wx = rate('wallet-core xpub', [c.name]);
            return { what: label(c), wcXpub: wx, ratio: rate('key store', [c.name]) / wx };
          })
      : [];
    if (xpubRows.length) {
      out('');
      out('for information (no goal): wallet-core deriving from the account xpub (HDWallet.getPublicKeyFromExtended), as the key store does from its cached account xpub:');
      for (const x of xpubRows) out(`  ${x.what}: wallet-core xpub ${fmtInt(x.wcXpub)} keys/s; ours / that ${x.ratio.toFixed(2)}x`);
    }
    out('');
    out(
      `correctness: ${fmtInt(compared - mismatchCount)} of ${fmtInt(compared)} public keys byte-equal between the key store and wallet-core ` +
        `(every key of every batch, warm-ups included; 33-byte compressed secp256k1, 32-byte ed25519)`,
    );
    const goals = summary.filter((s) => s.goal);
    for (const g of goals) out(`goal ${g.what.replace(' (curve total)', '')} ours/wallet-core >= ${GOAL_RATIO.toFixed(1)}x: ${g.ratio.toFixed(2)}x, ${g.met ? 'met' : 'not met'}`);
    const failures = mismatchCount ? [`${mismatchCount} keys differ`, ...mismatches] : [];
    printFailures(out, failures);
    const resultsFile = writeResults('derive.json', {
      benchmark: 'derive',
      description: 'public-key derivations/s: software key store (getPublicKey) vs @trustwallet/wallet-core (getKey + public key), same paths, one process',
      date: new Date().toISOString(),
      machine,
      settings: { secp256k1PerRound: nSecp, ed25519PerRound: nEd, rounds, warmup, account: ACCOUNT, walletCore: WALLET_CORE_VERSION, xpubVariant: withXpub },
      setupMs: { keystoreInitialize: initMs, keystoreUnlock: unlockMs, walletCoreInit: wcInitMs },
      batches,
      summary: summary.map((s) => ({ what: s.what, keystoreKeysPerSecond: s.ours, walletCoreKeysPerSecond: s.wc, ratio: s.ratio, perRoundRatio: s.perRound, ...(s.goal ? { goalRatio: GOAL_RATIO, goalMet: s.met } : {}) })),
      walletCoreXpub: xpubRows,
      correctness: { ok: failures.length === 0, compared, failures },
    });
    out(`results: ${resultsFile}`);
    wallet.delete();
    if (failures.length) return 1;
    if (enforceGoal && goals.some((g) => !g.met)) return 1;
    return 0;
  } finally {
    await ks?.destroy();
    removeTmp();
  }
}

runMain(main);
