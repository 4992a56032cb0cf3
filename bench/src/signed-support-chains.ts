/**
 * Benchmark: signed GET /api/v1/wallet/support/chains requests/s versus an unsigned
 * express "hello" app, measured in the same run and printed as a ratio (goal >= 50 %).
 *
 * Both targets run as their own Node processes on this machine; the load generator
 * (autocannon, in this process) signs EVERY request to BOTH targets with a fresh
 * timestamp and nonce, so the client does identical work per request and the ratio
 * reflects the server side only. See bench/README.md.
 *
 *   npm run bench                       (from the repository root; runs every scenario)
 *   node bench/dist/signed-support-chains.js
 *   BENCH_SECONDS=30 BENCH_ROUNDS=3 node bench/dist/signed-support-chains.js
 *   BENCH_CPU_PROF=1 node bench/dist/signed-support-chains.js   (writes a .cpuprofile of the API server)
 */
import * as path from 'node:path';
import { freePort, testEnv } from '@wcs/server/testing';
import { AUTOCANNON_VERSION } from './autocannon';
import { load, problems, signedGetTarget, type LoadTarget, type RunRecord } from './lib/load';
import { dbCounters, dbDelta, openStatsConnection } from './lib/postgres';
import { checkAborted, CleanupStack, httpGet, runMain, sleep, startChild, stopChild, waitReady } from './lib/processes';
import { fmtInt, fmtMs, fmtPct, machineInfo, machineLine, noiseWarning, out, summarise, table, printFailures, writeResults } from './lib/report';
import { readLoadSettings } from './lib/settings';
import { signedHeaders } from './lib/signing';
import { createAppViaCli, prepareBenchStorage, printProfiles, startApiServer, LIMITS_FAR_ABOVE_LOAD, allChainsConfigEnv } from './lib/wcs';

const SIGNED_PATH = '/api/v1/wallet/support/chains';
const HELLO_PATH = '/hello';
const CHAINS = ['BTC', 'ETH', 'BSC', 'POLYGON', 'SOL', 'XRP', 'XLM', 'EOS'];
const GOAL_PERCENT = 50;
/** "cpu other" above this (percent of one CPU) during a measured run prints a noise warning. */
const NOISE_WARN_PERCENT = 20;
const HELLO_SERVER = path.join(__dirname, 'hello-server.js');

type TargetName = 'hello' | 'signed';

async function main(): Promise<number> {
  const s = readLoadSettings();
  const startedAt = Date.now();
  const machine = machineInfo();
  const dbMode = process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded Postgres (test cluster)';

  out(`signed GET ${SIGNED_PATH} vs unsigned express GET ${HELLO_PATH}`);
  out(machineLine(machine));
  out(
    `load: autocannon ${AUTOCANNON_VERSION}, ${s.connections} connections, pipelining ${s.pipelining}, ` +
      `${s.seconds} s per run, ${s.warmupSeconds} s warm-up per target, ${s.rounds} rounds; database: ${dbMode}`,
  );
  if (s.serverNodeArgs.length) out(`server node args: ${s.serverNodeArgs.join(' ')}`);

  const cleanup = new CleanupStack();
  let profileDir: string | null = null;
  try {
    // database + key store (the server needs one to start), all registered for cleanup
    const db = await prepareBenchStorage(cleanup);

    // 1. An application with all eight test chains, created by the operator CLI.
    const chainsEnv = allChainsConfigEnv(cleanup);
    const creds = await createAppViaCli({ ...process.env, ...testEnv(db.url, chainsEnv) }, 'bench', CHAINS);
    checkAborted();

    // 2. The server under test: the real `wcs start --api-only`.
    const server = await startApiServer({
      env: (port) => ({ ...process.env, ...testEnv(db.url, { ...chainsEnv, PORT: String(port), WCS_LOG_LEVEL: 'warn', ...LIMITS_FAR_ABOVE_LOAD }) }),
      nodeArgs: s.serverNodeArgs,
      cpuProf: s.cpuProf,
      cleanup,
    });
    profileDir = server.profileDir;
    const serverPort = server.port;

    // 3. The baseline: a minimal express app, same Node binary, its own process.
    const helloPort = await freePort();
    const hello = startChild('hello', [HELLO_SERVER], { ...process.env, PORT: String(helloPort), HOST: '127.0.0.1' });
    cleanup.push('stop hello server', () => stopChild(hello, 5_000));
    await waitReady(hello, helloPort, HELLO_PATH, 30_000);

    // 4. Correctness: one signed request by plain http must return the eight chains.
    const probe = await httpGet(serverPort, SIGNED_PATH, signedHeaders(creds, 'GET', SIGNED_PATH));
    let envelope: { code?: unknown; data?: unknown; msg?: unknown };
    try {
      envelope = JSON.parse(probe.body) as typeof envelope;
    } catch {
      throw new Error(`signed probe: HTTP ${probe.status}, body is not JSON: ${probe.body.slice(0, 500)}`);
    }
    if (probe.status !== 200 || envelope.code !== 0 || !Array.isArray(envelope.data) || envelope.data.length !== CHAINS.length) {
      throw new Error(`signed probe failed: HTTP ${probe.status}, expected code 0 and ${CHAINS.length} chains, got ${probe.body.slice(0, 500)}`);
    }
    const codes = (envelope.data as Array<{ chainCode?: string }>).map((c) => c.chainCode).sort();
    if (JSON.stringify(codes) !== JSON.stringify([...CHAINS].sort())) throw new Error(`signed probe returned chains ${codes.join(',')}`);
    out(`probe: signed request OK (HTTP 200, code 0, ${envelope.data.length} chains, ${Buffer.byteLength(probe.body)} bytes); hello ${HELLO_PATH} OK`);

    const targets: Record<TargetName, LoadTarget> = {
      // identical client work for both targets: a fresh signature for the signed path on every request
      hello: signedGetTarget('hello', helloPort, hello, creds, HELLO_PATH, SIGNED_PATH),
      signed: signedGetTarget('signed', serverPort, server.child, creds, SIGNED_PATH),
    };

    // A side connection for the nonce-batching counters (diagnostic only).
    const stats = await openStatsConnection(db.url, cleanup, 'claims/tx');

    // 5. Warm-up (discarded from the figures, still checked), then alternating rounds.
    const lo = { connections: s.connections, pipelining: s.pipelining };
    const warmups: RunRecord[] = [];
    if (s.warmupSeconds > 0) {
      for (const name of ['hello', 'signed'] as const) {
        process.stderr.write(`[bench] warm-up ${name} (${s.warmupSeconds} s)\n`);
        warmups.push(await load(targets[name], 'warm-up', s.warmupSeconds, lo));
        await sleep(500);
      }
    }
    const runs: RunRecord[] = [];
    for (let round = 1; round <= s.rounds; round++) {
      for (const name of ['hello', 'signed'] as const) {
        process.stderr.write(`[bench] round ${round}/${s.rounds}: ${name} (${s.seconds} s)\n`);
        const d0 = name === 'signed' ? await dbCounters(stats) : null;
        const r = await load(targets[name], round, s.seconds, lo);
        await sleep(1000); // settle: claims still in flight when the load stopped land now
        if (name === 'signed') r.db = dbDelta(d0, await dbCounters(stats));
        runs.push(r);
        process.stderr.write(`[bench]   ${fmtInt(r.rps)} req/s, p50 ${fmtMs(r.latencyMs.p50)} ms, p99 ${fmtMs(r.latencyMs.p99)} ms, non-2xx ${r.non2xx}\n`);
      }
    }

    // 6. Report.
    const failures = [...warmups, ...runs].flatMap(problems);
    const hs = summarise(runs.filter((r) => r.target === 'hello'));
    const ss = summarise(runs.filter((r) => r.target === 'signed'));
    const ratio = (ss.rpsMedian / hs.rpsMedian) * 100;
    const perRound: number[] = [];
    for (let round = 1; round <= s.rounds; round++) {
      const h = runs.find((r) => r.target === 'hello' && r.round === round)!;
      const g = runs.find((r) => r.target === 'signed' && r.round === round)!;
      perRound.push((g.rps / h.rps) * 100);
    }
    const met = ratio >= GOAL_PERCENT;

    out('');
    out(
      table(
        ['round', 'target', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'non-2xx', 'errors', 'cpu client', 'cpu target', 'cpu pg', 'cpu other', 'target µs/req', 'claims/tx'],
        [...warmups, ...runs].map((r) => [
          String(r.round),
          r.target,
          fmtInt(r.rps),
          fmtMs(r.latencyMs.p50),
          fmtMs(r.latencyMs.p99),
          fmtInt(r.requests),
          String(r.non2xx),
          String(r.errors),
          fmtPct(r.cpuPercent.client),
          fmtPct(r.cpuPercent.target),
          fmtPct(r.cpuPercent.postgres),
          fmtPct(r.cpuPercent.other),
          r.targetCpuUsPerRequest === null ? '-' : String(Math.round(r.targetCpuUsPerRequest)),
          r.db ? r.db.claimsPerTransaction.toFixed(1) : '-',
        ]),
        [false, false, true, true, true, true, true, true, true, true, true, true, true, true],
      ),
    );
    out('');
    out(
      table(
        ['target', 'median req/s', 'mean req/s', 'p50 ms (median)', 'p99 ms (median)', 'target µs/req (median)'],
        (
          [
            ['hello', hs],
            ['signed', ss],
          ] as const
        ).map(([n, x]) => [
          n,
          fmtInt(x.rpsMedian),
          fmtInt(x.rpsMean),
          fmtMs(x.latencyP50MsMedian),
          fmtMs(x.latencyP99MsMedian),
          x.targetCpuUsPerRequestMedian === null ? '-' : String(Math.round(x.targetCpuUsPerRequestMedian)),
        ]),
        [false, true, true, true, true, true],
      ),
    );
    out('');
    out(`ratio signed/hello (median req/s): ${ratio.toFixed(1)} %  (per round: ${perRound.map((p) => p.toFixed(1) + ' %').join(', ')})`);
    out(`goal >= ${GOAL_PERCENT}%: ${met ? 'met' : 'not met'}`);
    const noisy = noiseWarning(runs, NOISE_WARN_PERCENT);
    if (noisy) out(noisy.line);
    printFailures(out, failures);

    const resultsFile = writeResults('latest.json', {
      benchmark: 'signed-support-chains',
      description: `signed GET ${SIGNED_PATH} req/s vs unsigned express GET ${HELLO_PATH} req/s`,
      date: new Date().toISOString(),
      machine,
      settings: { ...s, autocannon: AUTOCANNON_VERSION, database: dbMode, chains: CHAINS },
      warmups,
      runs,
      summary: {
        hello: hs,
        signed: ss,
        ratioPercent: Math.round(ratio * 10) / 10,
        perRoundRatioPercent: perRound.map((p) => Math.round(p * 10) / 10),
        goalPercent: GOAL_PERCENT,
        goalMet: met,
      },
      correctness: { ok: failures.length === 0, failures },
      noisyRuns: (noisy?.runs ?? []).map((r) => ({ target: r.target, round: r.round, otherCpuPercent: r.cpuPercent.other })),
      ...(profileDir ? { cpuProfileDir: path.relative(process.cwd(), profileDir) } : {}),
    });
    out(`results: ${resultsFile}`);

    if (failures.length) return 1;
    if (s.enforceGoal && !met) return 1;
    return 0;
  } finally {
    await cleanup.run();
    printProfiles(profileDir, startedAt);
  }
}

runMain(main);
