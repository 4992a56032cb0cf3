/**
 * Benchmark: what rate limiting and metrics cost the signed API. The same server build runs as
 * three `wcs start --api-only` processes on one database, differing only in configuration:
 *
 *   off        rate limits off (WCS_RATE_LIMIT_RPS=0, WCS_AUTH_FAILURE_BURST=0), metrics off
 *   ratelimit  rate limits on with a limit far above the load (every request takes a token from
 *              the shared bucket in Postgres, through the lease), metrics off
 *   metrics    rate limits off, metrics on (WCS_METRICS_PORT) and scraped once a second
 *
 * Each is loaded with signed GET /api/v1/wallet/support/chains in alternating rounds (the client
 * signs every request the same way for all three); figures are ratios of median req/s to `off`,
 * measured in the same run. Goals: ratelimit >= 95 %, metrics >= 95 %.
 *
 *   npm run bench:ops
 *   BENCH_SECONDS=20 BENCH_ROUNDS=3 node bench/dist/ops-overhead.js
 */
import * as http from 'node:http';
import { freePort, testEnv } from '@wcs/server/testing';
import { AUTOCANNON_VERSION } from './autocannon';
import { load, problems, signedGetTarget, type LoadTarget, type RunRecord } from './lib/load';
import { checkAborted, CleanupStack, httpGet, runMain, sleep, startChild, stopChild, waitReady } from './lib/processes';
import { fmtInt, fmtMs, fmtPct, machineInfo, machineLine, noiseWarning, out, summarise, table, printFailures, writeResults } from './lib/report';
import { readLoadSettings } from './lib/settings';
import { signedHeaders } from './lib/signing';
import { createAppViaCli, prepareBenchStorage, wcsStartArgs, allChainsConfigEnv } from './lib/wcs';

const SIGNED_PATH = '/api/v1/wallet/support/chains';
const CHAINS = ['BTC', 'ETH', 'BSC', 'POLYGON', 'SOL', 'XRP', 'XLM', 'EOS'];
const GOAL_PERCENT = 95;
const NOISE_WARN_PERCENT = 20;
const METRICS_TOKEN = 'bench-metrics-token';

type Variant = 'off' | 'ratelimit' | 'metrics';
const VARIANTS: readonly Variant[] = ['off', 'ratelimit', 'metrics'];

const OFF = { WCS_RATE_LIMIT_RPS: '0', WCS_AUTH_FAILURE_BURST: '0' };
const SETTINGS: Record<Variant, (metricsPort: number) => Record<string, string>> = {
  off: () => ({ ...OFF }),
  ratelimit: () => ({ WCS_RATE_LIMIT_RPS: '1000000', WCS_RATE_LIMIT_BURST: '10000000', WCS_AUTH_FAILURE_BURST: '100' }),
  metrics: (port) => ({ ...OFF, WCS_METRICS_PORT: String(port), WCS_METRICS_TOKEN: METRICS_TOKEN }),
};

function scrape(port: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/metrics', headers: { Authorization: `Bearer ${METRICS_TOKEN}` }, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d)).on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('scrape timed out')));
  });
}

/** The sum of every sample whose line starts with `name` (e.g. every series of one counter). */
function sampleSum(body: string, name: string): number {
  let sum = 0;
  for (const line of body.split('\n')) if (line.startsWith(name)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

async function main(): Promise<number> {
  const s = readLoadSettings();
  const machine = machineInfo();
  out(`signed GET ${SIGNED_PATH}: rate limits on (far above the load) and metrics on (scraped every second) vs both off, same build`);
  out(machineLine(machine));
  out(`load: autocannon ${AUTOCANNON_VERSION}, ${s.connections} connections, pipelining ${s.pipelining}, ${s.seconds} s per run, ${s.warmupSeconds} s warm-up per target, ${s.rounds} rounds`);

  const cleanup = new CleanupStack();
  try {
    const db = await prepareBenchStorage(cleanup);
    const chainsEnv = allChainsConfigEnv(cleanup);
    const creds = await createAppViaCli({ ...process.env, ...testEnv(db.url, chainsEnv) }, 'bench-ops', CHAINS);
    checkAborted();

    const ports = {} as Record<Variant, number>;
    const children = {} as Record<Variant, LoadTarget['child']>;
    const metricsPort = await freePort();
    for (const v of VARIANTS) {
      const port = await freePort();
      const { args } = wcsStartArgs('--api-only', s.serverNodeArgs, s.cpuProf, `ops-${v}`);
      const child = startChild(v, args, { ...process.env, ...testEnv(db.url, { ...chainsEnv, PORT: String(port), WCS_LOG_LEVEL: 'warn', ...SETTINGS[v](metricsPort) }) });
      cleanup.push(`stop ${v}`, () => stopChild(child, s.cpuProf ? 60_000 : 15_000));
      await waitReady(child, port, '/healthz', 60_000);
      ports[v] = port;
      children[v] = child;
    }

    // correctness: each answers the eight chains; the limited one sends the RateLimit fields, the others do not; metrics answer
    for (const v of VARIANTS) {
      const probe = await httpGet(ports[v], SIGNED_PATH, signedHeaders(creds, 'GET', SIGNED_PATH));
      const env = JSON.parse(probe.body) as { code: number; data: unknown[] };
      if (probe.status !== 200 || env.code !== 0 || env.data.length !== CHAINS.length) throw new Error(`${v} probe: HTTP ${probe.status} ${probe.body.slice(0, 300)}`);
      const limited = probe.headers['ratelimit-policy'] !== undefined;
      if (limited !== (v === 'ratelimit')) throw new Error(`${v} probe: RateLimit-Policy ${String(probe.headers['ratelimit-policy'])}`);
    }
    const first = await scrape(metricsPort);
    if (first.status !== 200 || !first.body.includes('wcs_http_requests_total')) throw new Error(`metrics scrape: HTTP ${first.status} ${first.body.slice(0, 300)}`);
    out(`probe: all three answer 8 chains; RateLimit headers only from "ratelimit"; /metrics answers (${Buffer.byteLength(first.body)} bytes)`);

    const targets = Object.fromEntries(VARIANTS.map((v) => [v, signedGetTarget(v, ports[v], children[v], creds, SIGNED_PATH)])) as Record<Variant, LoadTarget>;
    const lo = { connections: s.connections, pipelining: s.pipelining };
    let scrapes = 0;
    let scrapeFailures = 0;
    let scraping = false;
    const scraper = setInterval(() => {
      if (!scraping) return;
      scrape(metricsPort).then((r) => (r.status === 200 ? scrapes++ : scrapeFailures++), () => scrapeFailures++);
    }, 1000);
    cleanup.push('stop scraper', async () => clearInterval(scraper));

    const warmups: RunRecord[] = [];
    for (const v of VARIANTS) {
      if (s.warmupSeconds <= 0) break;
      process.stderr.write(`[bench] warm-up ${v} (${s.warmupSeconds} s)\n`);
      scraping = v === 'metrics';
      warmups.push(await load(targets[v], 'warm-up', s.warmupSeconds, lo));
      scraping = false;
      await sleep(300);
    }
    const runs: RunRecord[] = [];
    for (let round = 1; round <= s.rounds; round++) {
      // rotate the order each round so no variant always runs first
      const order = VARIANTS.map((_, i) => VARIANTS[(i + round - 1) % VARIANTS.length]!);
      for (const v of order) {
        process.stderr.write(`[bench] round ${round}/${s.rounds}: ${v} (${s.seconds} s)\n`);
        scraping = v === 'metrics';
        const r = await load(targets[v], round, s.seconds, lo);
        scraping = false;
        runs.push(r);
        process.stderr.write(`[bench]   ${fmtInt(r.rps)} req/s, p50 ${fmtMs(r.latencyMs.p50)} ms, p99 ${fmtMs(r.latencyMs.p99)} ms, non-2xx ${r.non2xx}\n`);
        await sleep(500);
      }
    }

    // the metrics process counted what it served (a moving value, not only a present one)
    const last = await scrape(metricsPort);
    const counted = sampleSum(last.body, 'wcs_http_requests_total{');
    const served = [...warmups, ...runs].filter((r) => r.target === 'metrics').reduce((a, r) => a + r.requests, 0);
    const failures = [...warmups, ...runs].flatMap(problems);
    if (scrapeFailures > 0) failures.push(`metrics: ${scrapeFailures} scrapes failed during the load`);
    if (counted < served) failures.push(`metrics: wcs_http_requests_total sums to ${counted}, fewer than the ${served} requests served`);

    const sum = Object.fromEntries(VARIANTS.map((v) => [v, summarise(runs.filter((r) => r.target === v))])) as Record<Variant, ReturnType<typeof summarise>>;
    const ratio = (v: Variant) => (sum[v].rpsMedian / sum.off.rpsMedian) * 100;
    const perRound = (v: Variant) =>
      Array.from({ length: s.rounds }, (_, i) => {
        const a = runs.find((r) => r.target === v && r.round === i + 1)!;
        const b = runs.find((r) => r.target === 'off' && r.round === i + 1)!;
        return (a.rps / b.rps) * 100;
      });

    out('');
    out(
      table(
        ['round', 'target', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'non-2xx', 'errors', 'cpu client', 'cpu target', 'cpu pg', 'cpu other', 'target µs/req'],
        [...warmups, ...runs].map((r) => [
          String(r.round), r.target, fmtInt(r.rps), fmtMs(r.latencyMs.p50), fmtMs(r.latencyMs.p99), fmtInt(r.requests), String(r.non2xx), String(r.errors),
          fmtPct(r.cpuPercent.client), fmtPct(r.cpuPercent.target), fmtPct(r.cpuPercent.postgres), fmtPct(r.cpuPercent.other),
          r.targetCpuUsPerRequest === null ? '-' : String(Math.round(r.targetCpuUsPerRequest)),
        ]),
        [false, false, true, true, true, true, true, true, true, true, true, true, true],
      ),
    );
    out('');
    const results: Record<string, unknown> = {};
    for (const v of ['ratelimit', 'metrics'] as const) {
      const r = ratio(v);
      results[v] = { ratioPercent: Math.round(r * 10) / 10, perRoundRatioPercent: perRound(v).map((p) => Math.round(p * 10) / 10), goalMet: r >= GOAL_PERCENT };
      out(`ratio ${v}/off (median req/s): ${r.toFixed(1)} %  (per round: ${perRound(v).map((p) => p.toFixed(1) + ' %').join(', ')})  goal >= ${GOAL_PERCENT} %: ${r >= GOAL_PERCENT ? 'met' : 'not met'}`);
    }
    out(`medians: off ${fmtInt(sum.off.rpsMedian)} req/s, ratelimit ${fmtInt(sum.ratelimit.rpsMedian)} req/s, metrics ${fmtInt(sum.metrics.rpsMedian)} req/s; ${scrapes} scrapes during the metrics runs`);
    const noisy = noiseWarning(runs, NOISE_WARN_PERCENT);
    if (noisy) out(noisy.line);
    printFailures(out, failures);
    out(`results: ${writeResults('ops-overhead.json', { benchmark: 'ops-overhead', date: new Date().toISOString(), machine, settings: s, warmups, runs, summary: { ...sum, results }, scrapes, correctness: { ok: failures.length === 0, failures } })}`);
    if (failures.length) return 1;
    if (s.enforceGoal && !(ratio('ratelimit') >= GOAL_PERCENT && ratio('metrics') >= GOAL_PERCENT)) return 1;
    return 0;
  } finally {
    await cleanup.run();
  }
}

runMain(main);
