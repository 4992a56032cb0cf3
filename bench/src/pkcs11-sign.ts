/**
 * Benchmark: signatures per second through the PKCS#11 key store (@wcs/custody-pkcs11,
 * Pkcs11KeyStore.sign, as the service calls it) versus a bare pkcs11js sign loop on the same
 * SoftHSM2 token and the same key, in the same process and the same run. Goal: backend / bare
 * at least 80 % per curve (secp256k1 over 32-byte digests, ed25519 over 200-byte messages).
 *
 * Baseline ("bare async"): as many sessions as the store's pool (BENCH_PKCS11_SESSIONS), each
 * running C_SignInit + C_SignAsync in a loop, all concurrently. It does nothing with the
 * signatures: no verification, no low-S normalisation, no recovery id, all of which the backend
 * does. A second reference ("bare sync"): one session, synchronous C_SignInit + C_Sign.
 * Backend: BENCH_PKCS11_INFLIGHT (sessions x 4) sign() calls kept in flight.
 *
 * One process, one loaded library: the store's SharedModule loads and initialises SoftHSM2;
 * the bare loop loads the same .so (dlopen gives the same library state), gets
 * CKR_CRYPTOKI_ALREADY_INITIALIZED from C_Initialize, opens its own sessions on the same token
 * (already logged in: the login is per application) and never calls C_Finalize. Both targets
 * thus use the same library instance, the same libuv thread pool and the same event loop; runs
 * never overlap.
 *
 *   npm run bench:pkcs11               (from the repository root)
 *   BENCH_PKCS11_SECONDS=10 BENCH_PKCS11_ROUNDS=5 node bench/dist/pkcs11-sign.js
 */
import { createPublicKey, randomBytes, verify, type KeyObject } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as pkcs11js from 'pkcs11js';
import { secp256k1 } from '@noble/curves/secp256k1';
import type { KeyRef } from '@wcs/core';
import { keyIdentity, MECHANISMS, Pkcs11KeyStore } from '@wcs/custody-pkcs11';
import { createTestToken, removeSoftHsm, SOFTHSM_LIBRARY } from '@wcs/custody-pkcs11/testing';
import { cpuPercent, cpuSnapshot } from './lib/cpu';
import { checkAborted, runMain, sleep } from './lib/processes';
import { fmtInt, machineInfo, machineLine, median, noiseWarning, fmtPct, out, progress, table, printFailures, writeResults } from './lib/report';
import { boolEnv, intEnv } from './lib/settings';

const GOAL_PERCENT = 80;
const NOISE_WARN_PERCENT = 20;
/** ed25519 message size: about a transaction. */
const ED25519_MESSAGE_BYTES = 200;
/** Distinct payloads cycled through by every target. */
const PAYLOADS = 256;

type Curve = 'secp256k1' | 'ed25519';
type Target = 'bare async' | 'backend' | 'bare sync';
type Handle = Buffer;

interface Run {
  round: number;
  curve: Curve;
  target: Target;
  /** Sessions (bare) or calls in flight (backend). */
  concurrency: number;
  signatures: number;
  seconds: number;
  rate: number;
  /** Process CPU (all threads: event loop, libuv pool, V8), percent of one CPU. */
  cpuPercent: number;
  /** The rest of the host (other processes, kernel), percent of one CPU: noise. */
  otherCpuPercent: number | null;
  cpuUsPerSignature: number;
  /** Event-loop utilisation during the window, percent (includes time the thread waited for a CPU). */
  eventLoopPercent: number;
  /** Main thread on a CPU, µs per signature (Linux schedstat; null elsewhere). */
  mainCpuUsPerSignature: number | null;
  /** Main thread runnable but waiting for a CPU, percent of the window (Linux schedstat; null elsewhere). */
  mainRunqueuePercent: number | null;
  /** The measured window on the monotonic clock (µs), for cpuprofile-top --results/--target. */
  windowUs: [number, number];
}

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

/** The main thread's [on-CPU ns, runqueue-wait ns] from /proc (Linux), or null. */
function mainThreadSchedstat(): [number, number] | null {
  try {
    const [run, wait] = fs.readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
    return Number.isFinite(run) && Number.isFinite(wait) ? [run!, wait!] : null;
  } catch {
    return null;
  }
}

type Measured = Omit<Run, 'round' | 'curve' | 'target' | 'concurrency'>;

/** Starts a measured window: process CPU, event-loop utilisation and the main thread's scheduler figures. */
function startWindow(): (signatures: number, eventLoopBusy?: boolean) => Measured {
  const cpu0 = cpuSnapshot(undefined);
  const elu0 = performance.eventLoopUtilization();
  const sched0 = mainThreadSchedstat();
  const startUs = nowUs();
  return (n, eventLoopBusy = false) => {
    const cpu1 = cpuSnapshot(undefined);
    const endUs = nowUs();
    const elu = performance.eventLoopUtilization(elu0);
    const sched1 = mainThreadSchedstat();
    const elapsed = Number(cpu1.at - cpu0.at) / 1e9;
    const cpu = cpuPercent(cpu0, cpu1);
    return {
      signatures: n,
      seconds: elapsed,
      rate: n / elapsed,
      cpuPercent: cpu.client,
      otherCpuPercent: cpu.host === null ? null : Math.max(0, cpu.host - cpu.client),
      cpuUsPerSignature: n ? ((cpu.client / 100) * elapsed * 1e6) / n : 0,
      eventLoopPercent: eventLoopBusy ? 100 : elu.utilization * 100,
      mainCpuUsPerSignature: sched0 && sched1 && n ? (sched1[0] - sched0[0]) / 1e3 / n : null,
      mainRunqueuePercent: sched0 && sched1 ? ((sched1[1] - sched0[1]) / 1e9 / elapsed) * 100 : null,
      windowUs: [startUs, endUs],
    };
  };
}

interface Case {
  curve: Curve;
  ref: KeyRef;
  payloads: Buffer[];
  /** 33-byte compressed (secp256k1) or 32 bytes (ed25519), from the backend. */
  publicKey: Uint8Array;
  edKey?: KeyObject;
  privateHandle?: Handle;
}

const ED25519_SPKI = Buffer.from('302a300506032b6570032100', 'hex');

/** Independent check of a raw signature (noble for secp256k1, OpenSSL for ed25519). */
function verifyRaw(c: Case, sig: Uint8Array, payload: Buffer): boolean {
  try {
    if (c.curve === 'secp256k1') return sig.length === 64 && secp256k1.verify(sig, payload, c.publicKey, { lowS: false });
    c.edKey ??= createPublicKey({ key: Buffer.concat([ED25519_SPKI, c.publicKey]), format: 'der', type: 'spki' });
    return sig.length === 64 && verify(null, payload, c.edKey, sig);
  } catch {
    return false;
  }
}

/** What the backend promises on top: low S and a recovery id that recovers the key (secp256k1). */
function checkBackend(c: Case, sig: { bytes: Uint8Array; recovery: number | null }, payload: Buffer): string | null {
  if (!verifyRaw(c, sig.bytes, payload)) return 'does not verify';
  if (c.curve === 'ed25519') return sig.recovery === null ? null : 'ed25519 signature with a recovery id';
  const s = secp256k1.Signature.fromCompact(sig.bytes);
  if (s.hasHighS()) return 'high S';
  if (sig.recovery !== 0 && sig.recovery !== 1) return `recovery id ${sig.recovery}`;
  const recovered = s.addRecoveryBit(sig.recovery).recoverPublicKey(payload).toRawBytes(true);
  return Buffer.from(recovered).equals(Buffer.from(c.publicKey)) ? null : 'recovery id does not recover the key';
}

function ckr(e: unknown): number | null {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'number' ? code : null;
}

async function main(): Promise<number> {
  const sessions = intEnv('BENCH_PKCS11_SESSIONS', 4, 1, 64);
  const inflight = intEnv('BENCH_PKCS11_INFLIGHT', sessions * 4, 1, 10_000);
  const seconds = intEnv('BENCH_PKCS11_SECONDS', 5, 1, 3600);
  const warmupSeconds = intEnv('BENCH_PKCS11_WARMUP_SECONDS', 1, 0, 600);
  const rounds = intEnv('BENCH_PKCS11_ROUNDS', 3, 1, 100);
  const withSync = !boolEnv('BENCH_PKCS11_NO_SYNC');
  const curves = (process.env.BENCH_PKCS11_CURVES ?? 'secp256k1,ed25519').split(',').map((x) => x.trim()).filter((x) => x !== '');
  for (const x of curves) if (x !== 'secp256k1' && x !== 'ed25519') throw new Error(`BENCH_PKCS11_CURVES: secp256k1 and/or ed25519, not ${JSON.stringify(x)}`);
  const enforceGoal = boolEnv('BENCH_ENFORCE_GOAL');
  // C_SignAsync runs on the libuv pool (4 threads by default): never fewer threads than sessions.
  // libuv reads the variable when the pool starts, on first use (nothing has used it yet here).
  if (!process.env.UV_THREADPOOL_SIZE) process.env.UV_THREADPOOL_SIZE = String(Math.max(4, sessions));
  const threadPool = Number(process.env.UV_THREADPOOL_SIZE);
  const machine = machineInfo();
  out(machineLine(machine));
  out(
    `settings: ${sessions} sessions (bare async and the backend pool), backend ${inflight} sign() calls in flight, ` +
      `${warmupSeconds} s warm-up + ${seconds} s measured per run, ${rounds} rounds, libuv pool ${threadPool} threads, ` +
      `library ${SOFTHSM_LIBRARY}`,
  );

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-bench-pkcs11-'));
  let store: Pkcs11KeyStore | null = null;
  let bare: pkcs11js.PKCS11 | null = null;
  const bareSessions: Handle[] = [];
  try {
    // Before any PKCS#11 module is initialised in this process: sets SOFTHSM2_CONF.
    const token = createTestToken();
    const ks = new Pkcs11KeyStore({ dataDir, env: { ...token.env, WCS_PKCS11_SESSIONS: String(sessions) }, devMode: false });
    store = ks;
    let t0 = performance.now();
    await ks.init();
    const initMs = performance.now() - t0;

    const allCases: Case[] = [
      {
        curve: 'secp256k1',
        ref: { applicationId: 1, spec: { namespace: 'bench-secp', curve: 'secp256k1', pathTemplate: "m/44'/60'/{account}'/0/{index}" }, purpose: 'deposit', index: 0 },
        payloads: Array.from({ length: PAYLOADS }, () => randomBytes(32)),
        publicKey: new Uint8Array(0),
      },
      {
        curve: 'ed25519',
        ref: { applicationId: 1, spec: { namespace: 'bench-ed', curve: 'ed25519', pathTemplate: "m/44'/501'/{account}'/{index}'" }, purpose: 'deposit', index: 0 },
        payloads: Array.from({ length: PAYLOADS }, () => randomBytes(ED25519_MESSAGE_BYTES)),
        publicKey: new Uint8Array(0),
      },
    ];
    const cases = allCases.filter((c) => curves.includes(c.curve));
    t0 = performance.now();
    for (const c of cases) c.publicKey = (await ks.getPublicKey(c.ref)).bytes;
    const keygenMs = performance.now() - t0;

    // ---------------------------------------------------------------- the bare side: same library, same token, same keys
    const p = new pkcs11js.PKCS11();
    p.load(SOFTHSM_LIBRARY);
    bare = p;
    let shared = false;
    try {
      p.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
    } catch (e) {
      if (ckr(e) !== pkcs11js.CKR_CRYPTOKI_ALREADY_INITIALIZED) throw e;
      shared = true;
    }
    // (a library that initialised again would be a second instance, not the store's state)
    if (!shared) throw new Error('C_Initialize of the bare instance succeeded: it does not share the library state of the store');
    const slot = p.C_GetSlotList(true).find((s) => p.C_GetTokenInfo(s).label.replace(/[\s\0]+$/, '') === token.label);
    if (!slot) throw new Error(`token ${token.label} not found by the bare instance`);
    for (let i = 0; i < sessions; i++) bareSessions.push(p.C_OpenSession(slot, pkcs11js.CKF_RW_SESSION | pkcs11js.CKF_SERIAL_SESSION));
    try {
      p.C_Login(bareSessions[0]!, pkcs11js.CKU_USER, token.pin);
    } catch (e) {
      if (ckr(e) !== pkcs11js.CKR_USER_ALREADY_LOGGED_IN) throw e;
    }
    for (const c of cases) {
      const id = keyIdentity(ks.config.keyDomain, c.ref).id;
      p.C_FindObjectsInit(bareSessions[0]!, [
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
        { type: pkcs11js.CKA_ID, value: id },
      ]);
      const found = p.C_FindObjects(bareSessions[0]!, 2);
      p.C_FindObjectsFinal(bareSessions[0]!);
      if (found.length !== 1) throw new Error(`${c.curve}: expected one private key with the ref's CKA_ID, found ${found.length}`);
      c.privateHandle = found[0]!;
    }
    out(
      `set-up (not measured): token ${token.label}, store init ${initMs.toFixed(0)} ms, key generation (${cases.length} keys) ${keygenMs.toFixed(0)} ms; ` +
        `bare C_Initialize: CKR_CRYPTOKI_ALREADY_INITIALIZED (shared library state, as intended)`,
    );

    // ---------------------------------------------------------------- correctness probes and counters
    let checked = 0;
    const failures: string[] = [];
    const fail = (what: string) => {
      if (failures.length < 20) failures.push(what);
    };
    for (const c of cases) {
      const payload = c.payloads[0]!;
      const s = await ks.sign(c.ref, payload);
      checked++;
      const problem = checkBackend(c, s, payload);
      if (problem) fail(`${c.curve} backend probe: ${problem}`);
      p.C_SignInit(bareSessions[0]!, { mechanism: MECHANISMS[c.curve].sign }, c.privateHandle!);
      const raw = p.C_Sign(bareSessions[0]!, payload, Buffer.alloc(c.curve === 'secp256k1' ? 72 : 64));
      checked++;
      if (!verifyRaw(c, raw, payload)) fail(`${c.curve} bare probe: does not verify`);
    }

    // ---------------------------------------------------------------- one run of one target
    /**
     * Starts the loops, lets them run warmupSeconds, then counts completions during `seconds`
     * (process CPU and main-thread utilisation over the same window), stops and drains them.
     * The last result of every loop is checked afterwards, outside the window.
     */
    const runAsync = async (
      round: number,
      c: Case,
      target: Target,
      loops: number,
      one: (loop: number, payload: Buffer) => Promise<void>,
    ): Promise<Run> => {
      let count = 0;
      let stop = false;
      let error: unknown = null;
      const workers = Array.from({ length: loops }, async (_, loop) => {
        let i = loop;
        while (!stop) {
          try {
            await one(loop, c.payloads[i % PAYLOADS]!);
          } catch (e) {
            error ??= e;
            stop = true;
            return;
          }
          i += loops;
          count++;
        }
      });
      await sleep(warmupSeconds * 1000);
      const c0 = count;
      const stopWindow = startWindow();
      await sleep(seconds * 1000);
      const measured = stopWindow(count - c0);
      stop = true;
      await Promise.all(workers);
      if (error) fail(`${c.curve} ${target} round ${round}: ${(error as Error)?.message ?? String(error)}`);
      return { round, curve: c.curve, target, concurrency: loops, ...measured };
    };

    const bareAsync = async (round: number, c: Case): Promise<Run> => {
      const mechanism = { mechanism: MECHANISMS[c.curve].sign };
      const size = c.curve === 'secp256k1' ? 72 : 64;
      const last: Array<{ sig: Buffer; payload: Buffer } | undefined> = new Array(sessions);
      const run = await runAsync(round, c, 'bare async', sessions, async (loop, payload) => {
        const session = bareSessions[loop]!;
        p.C_SignInit(session, mechanism, c.privateHandle!);
        last[loop] = { sig: await p.C_SignAsync(session, payload, Buffer.alloc(size)), payload };
      });
      for (const l of last) {
        if (!l) continue;
        checked++;
        if (!verifyRaw(c, l.sig, l.payload)) fail(`${c.curve} bare async round ${round}: a signature does not verify`);
      }
      return run;
    };

    const backend = async (round: number, c: Case): Promise<Run> => {
      const last: Array<{ sig: { bytes: Uint8Array; recovery: number | null }; payload: Buffer } | undefined> = new Array(inflight);
      const run = await runAsync(round, c, 'backend', inflight, async (loop, payload) => {
        last[loop] = { sig: await ks.sign(c.ref, payload), payload };
      });
      for (const l of last) {
        if (!l) continue;
        checked++;
        const problem = checkBackend(c, l.sig, l.payload);
        if (problem) fail(`${c.curve} backend round ${round}: ${problem}`);
      }
      return run;
    };

    /** One session, synchronous C_SignInit + C_Sign; blocks the event loop for the whole run. */
    const bareSync = async (round: number, c: Case): Promise<Run> => {
      const mechanism = { mechanism: MECHANISMS[c.curve].sign };
      const session = bareSessions[0]!;
      const size = c.curve === 'secp256k1' ? 72 : 64;
      let i = 0;
      const sign = () => {
        const payload = c.payloads[i++ % PAYLOADS]!;
        p.C_SignInit(session, mechanism, c.privateHandle!);
        return { sig: p.C_Sign(session, payload, Buffer.alloc(size)), payload };
      };
      const warmEnd = performance.now() + warmupSeconds * 1000;
      while (performance.now() < warmEnd) sign();
      const stopWindow = startWindow();
      const end = performance.now() + seconds * 1000;
      let n = 0;
      let last = sign();
      n++;
      while (performance.now() < end) {
        last = sign();
        n++;
      }
      const measured = stopWindow(n, true);
      checked++;
      if (!verifyRaw(c, last.sig, last.payload)) fail(`${c.curve} bare sync round ${round}: a signature does not verify`);
      await sleep(0); // let a Ctrl-C be seen
      return { round, curve: c.curve, target: 'bare sync', concurrency: 1, ...measured };
    };

    // ---------------------------------------------------------------- rounds: bare and backend alternate
    const runs: Run[] = [];
    const signed0 = ks.counters.signatures;
    const targets: Record<Target, (round: number, c: Case) => Promise<Run>> = { 'bare async': bareAsync, backend, 'bare sync': bareSync };
    for (let round = 1; round <= rounds; round++) {
      for (const c of cases) {
        const order: Target[] = round % 2 === 1 ? ['bare async', 'backend'] : ['backend', 'bare async'];
        if (withSync) order.push('bare sync');
        for (const target of order) {
          checkAborted();
          progress(`round ${round}/${rounds}: ${c.curve} ${target}`);
          const r = await targets[target](round, c);
          runs.push(r);
          progress(`  ${fmtInt(r.rate)} signatures/s`);
        }
      }
    }
    const invalid = ks.counters.invalidSignatures;

    // ---------------------------------------------------------------- report
    out('');
    out(
      table(
        ['round', 'curve', 'target', 'concurrency', 'signatures', 's', 'signatures/s', 'cpu %', 'cpu µs/sig', 'event loop %', 'main cpu µs/sig', 'main runq %', 'cpu other'],
        runs.map((r) => [
          String(r.round),
          r.curve,
          r.target,
          String(r.concurrency),
          fmtInt(r.signatures),
          r.seconds.toFixed(2),
          fmtInt(r.rate),
          String(Math.round(r.cpuPercent)),
          r.cpuUsPerSignature.toFixed(0),
          String(Math.round(r.eventLoopPercent)),
          r.mainCpuUsPerSignature === null ? '-' : r.mainCpuUsPerSignature.toFixed(0),
          r.mainRunqueuePercent === null ? '-' : String(Math.round(r.mainRunqueuePercent)),
          fmtPct(r.otherCpuPercent),
        ]),
        [true, false, false, true, true, true, true, true, true, true, true, true, true],
      ),
    );

    const rateOf = (curve: Curve, target: Target) => median(runs.filter((r) => r.curve === curve && r.target === target).map((r) => r.rate));
    const summary = cases.map(({ curve }) => {
      const bareRate = rateOf(curve, 'bare async');
      const backendRate = rateOf(curve, 'backend');
      const syncRate = withSync ? rateOf(curve, 'bare sync') : null;
      const perRound = Array.from({ length: rounds }, (_, i) => {
        const of = (target: Target) => runs.find((r) => r.curve === curve && r.target === target && r.round === i + 1)!.rate;
        return (of('backend') / of('bare async')) * 100;
      });
      const percent = (backendRate / bareRate) * 100;
      return { curve, bareRate, backendRate, syncRate, percent, perRound, vsSync: syncRate ? (backendRate / syncRate) * 100 : null, met: percent >= GOAL_PERCENT };
    });
    out('');
    out(
      table(
        ['curve', 'bare async sig/s', 'backend sig/s', 'backend / bare', 'per round', 'goal', 'result', 'bare sync sig/s', 'backend / sync'],
        summary.map((s) => [
          s.curve,
          fmtInt(s.bareRate),
          fmtInt(s.backendRate),
          `${s.percent.toFixed(1)} %`,
          s.perRound.map((x) => x.toFixed(1)).join(', '),
          `>= ${GOAL_PERCENT} %`,
          s.met ? 'met' : 'NOT MET',
          s.syncRate === null ? '-' : fmtInt(s.syncRate),
          s.vsSync === null ? '-' : `${s.vsSync.toFixed(1)} %`,
        ]),
        [false, true, true, true, false, false, false, true, true],
      ),
    );
    out('');
    out(
      `correctness: ${fmtInt(checked)} signatures checked independently (probes and the last signature of every loop of every run: ` +
        `noble secp256k1 verify, low S and recovery id for the backend; OpenSSL Ed25519 verify); ` +
        `backend counters: ${fmtInt(ks.counters.signatures - signed0)} signatures in the runs, ${invalid} re-signed after a failed verification`,
    );
    for (const s of summary) out(`goal ${s.curve} backend/bare >= ${GOAL_PERCENT} %: ${s.percent.toFixed(1)} %, ${s.met ? 'met' : 'NOT MET'}`);
    const noisy = noiseWarning(
      runs.map((r) => ({ target: `${r.curve} ${r.target}`, round: r.round, cpuPercent: { other: r.otherCpuPercent } })),
      NOISE_WARN_PERCENT,
    );
    if (noisy) out(noisy.line);
    printFailures(out, failures);
    const resultsFile = writeResults('pkcs11-sign.json', {
      benchmark: 'pkcs11-sign',
      description:
        'signatures/s: Pkcs11KeyStore.sign (verification, low-S, recovery id) vs a bare pkcs11js C_SignInit + C_SignAsync loop on as many sessions, same SoftHSM2 token and key, one process',
      date: new Date().toISOString(),
      machine,
      settings: { curves, sessions, inflight, seconds, warmupSeconds, rounds, threadPool, library: SOFTHSM_LIBRARY, ed25519MessageBytes: ED25519_MESSAGE_BYTES, goalPercent: GOAL_PERCENT },
      setupMs: { storeInit: initMs, keyGeneration: keygenMs },
      runs,
      summary,
      noisyRuns: (noisy?.runs ?? []).map((r) => ({ target: r.target, round: r.round, otherCpuPercent: r.cpuPercent.other })),
      correctness: { ok: failures.length === 0, checked, invalidSignaturesResigned: invalid, failures },
    });
    out(`results: ${resultsFile}`);
    if (failures.length) return 1;
    if (enforceGoal && summary.some((s) => !s.met)) return 1;
    return 0;
  } finally {
    // The bare instance shares the store's library state: close only its own sessions, never
    // C_Finalize (the store's module does that on destroy); dlclose only drops a reference.
    for (const s of bareSessions) {
      try {
        bare?.C_CloseSession(s);
      } catch {
        /* already closed */
      }
    }
    await store?.destroy().catch(() => undefined);
    try {
      bare?.close();
    } catch {
      /* already unloaded */
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
    removeSoftHsm();
  }
}

runMain(main);
