/**
 * Benchmark: the callback task listing with 200,000 tasks in the database (issue 17).
 *
 * One `wcs start --api-only --console` process serves both the signed API and the operator
 * console; autocannon loads, in alternating rounds:
 *   - console-first: the console's task list of the application, newest page (GET /callbacks);
 *   - console-last:  the same listing's oldest page, reached by its keyset cursor;
 *   - api-first:     the spec's signed listing, pageNo=1;
 *   - api-last:      the spec's signed listing, the last pageNo.
 * All four show the same page size, so "the same page" is the same rows. Figures (ratios of
 * median req/s, same run):
 *   - console-last / console-first: the thousandth page costs what the first does (goal >= 90 %);
 *   - console-first / api-first and console-last / api-last: the console's data request against
 *     the signed listing of the same page (goal >= 80 %).
 *
 *   npm run bench:console        (from the repository root)
 *   BENCH_TASKS=200000 BENCH_SECONDS=5 BENCH_ROUNDS=3 node bench/dist/console-listing.js
 */
import * as crypto from 'node:crypto';
import { Client } from 'pg';
import { freePort, testEnv } from '@wcs/server/testing';
import { AUTOCANNON_VERSION } from './autocannon';
import { load, problems, signedGetTarget, type LoadTarget, type RunRecord } from './lib/load';
import { CleanupStack, checkAborted, httpGet, httpRequest, runMain, runNode, sleep, startChild, stopChild, waitReady } from './lib/processes';
import { fmtInt, fmtMs, fmtPct, machineInfo, machineLine, out, printFailures, progress, summarise, table, writeResults } from './lib/report';
import { intEnv, readLoadSettings } from './lib/settings';
import { signedHeaders } from './lib/signing';
import { WCS_BIN, createAppViaCli, prepareBenchStorage, LIMITS_FAR_ABOVE_LOAD } from './lib/wcs';

const PAGE = 50;
const GOAL_DEPTH = 90;
const GOAL_VS_API = 80;
const API_PATH = '/api/v1/wallet/callback/tasks';
const TARGETS = ['console-first', 'console-last', 'api-first', 'api-last'] as const;
type TargetName = (typeof TARGETS)[number];

/** `name=value` pairs of the Set-Cookie headers. */
function cookieHeader(setCookie: string[] | undefined): string {
  return (setCookie ?? []).map((c) => c.split(';')[0]!).join('; ');
}

async function consoleSession(port: number, username: string, password: string): Promise<string> {
  const form = (o: Record<string, string>) => Buffer.from(new URLSearchParams(o).toString());
  const hdr = { 'Content-Type': 'application/x-www-form-urlencoded' };
  const login = await httpRequest(port, 'POST', '/login', hdr, form({ username, password, totp: '' }));
  if (login.status !== 303) throw new Error(`console login: HTTP ${login.status}: ${login.body.slice(0, 300)}`);
  const cookie = cookieHeader(login.headers['set-cookie']);
  const csrf = /wcs_csrf=([^;]+)/.exec(cookie)?.[1];
  if (!csrf) throw new Error('console login set no CSRF cookie');
  // the first login must change the generated password; the session stays
  const next = crypto.randomBytes(18).toString('base64url');
  const changed = await httpRequest(port, 'POST', '/password', { ...hdr, Cookie: cookie }, form({ _csrf: decodeURIComponent(csrf), current: password, next }));
  if (changed.status !== 200) throw new Error(`console password change: HTTP ${changed.status}: ${changed.body.slice(0, 300)}`);
  return cookie;
}

async function main(): Promise<number> {
  const s = readLoadSettings();
  const tasks = intEnv('BENCH_TASKS', 200_000, 1_000, 5_000_000);
  const machine = machineInfo();
  out(`callback task listing over ${fmtInt(tasks)} tasks: console (keyset) vs signed API (pageNo/pageSize), first and last page of ${PAGE}`);
  out(machineLine(machine));
  out(`load: autocannon ${AUTOCANNON_VERSION}, ${s.connections} connections, pipelining ${s.pipelining}, ${s.seconds} s per run, ${s.warmupSeconds} s warm-up per target, ${s.rounds} rounds`);

  const cleanup = new CleanupStack();
  try {
    const db = await prepareBenchStorage(cleanup);
    const env = { ...process.env, ...testEnv(db.url) };
    const creds = await createAppViaCli(env, 'bench-console', ['ETH']);
    if (creds.id === null) throw new Error('wcs app create printed no id');
    const made = JSON.parse((await runNode('wcs operator create', [WCS_BIN, 'operator', 'create', '--username', 'bench', '--role', 'viewer', '--json'], env, 120_000)).replace(/^[^{]*/, '')) as { password: string };

    // 1. The tasks: one application, spread over 30 days, a mix of business types and states.
    progress(`inserting ${fmtInt(tasks)} callback tasks`);
    const pg = new Client({ connectionString: db.url });
    await pg.connect();
    cleanup.push('close pg', () => pg.end());
    const t0 = Date.now();
    await pg.query(
      `INSERT INTO callback_tasks (application_id, biz_type, biz_id, url, url_source, body, status, retry_times, created_at, updated_at)
       SELECT $1, (ARRAY['RECHARGE','WITHDRAW','COLLECT'])[1 + g % 3], g, 'https://merchant.example/cb', 'APPLICATION', convert_to('{"n":' || g || '}', 'UTF8'),
              (ARRAY['SUCCESS','SUCCESS','SUCCESS','FAILED'])[1 + g % 4], g % 4, ts, ts
         FROM generate_series(1, $2::int) g, LATERAL (SELECT now() - interval '30 days' + g * (interval '30 days' / $2::int) AS ts) x`,
      [creds.id, tasks],
    );
    await pg.query('VACUUM ANALYZE callback_tasks');
    progress(`inserted and vacuumed in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const lastPageNo = Math.ceil(tasks / PAGE);
    // the keyset cursor of the oldest page: the row just newer than its first row
    const { rows: [edge] } = await pg.query<{ micros: string; id: string }>(
      `SELECT (extract(epoch FROM created_at) * 1000000)::bigint::text AS micros, id::text AS id FROM callback_tasks WHERE application_id = $1
        ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`,
      [creds.id, (lastPageNo - 1) * PAGE - 1],
    );
    const { rows: [oldest] } = await pg.query<{ id: string }>('SELECT id::text AS id FROM callback_tasks WHERE application_id = $1 ORDER BY created_at, id LIMIT 1', [creds.id]);
    const { rows: [newest] } = await pg.query<{ id: string }>('SELECT id::text AS id FROM callback_tasks WHERE application_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1', [creds.id]);

    // 2. The server: API and console in one process.
    const apiPort = await freePort();
    const consolePort = await freePort();
    const server = startChild('server', [WCS_BIN, 'start', '--api-only', '--console'], {
      ...env, ...LIMITS_FAR_ABOVE_LOAD, PORT: String(apiPort), WCS_CONSOLE_PORT: String(consolePort), WCS_LOG_LEVEL: 'warn',
    });
    cleanup.push('stop server', () => stopChild(server, 15_000));
    await waitReady(server, apiPort, '/healthz', 60_000);
    const cookie = await consoleSession(consolePort, 'bench', made.password);

    const consoleFirst = `/callbacks?app=${creds.id}`;
    const consoleLast = `/callbacks?app=${creds.id}&older=${edge!.micros}.${edge!.id}`;
    const apiFirst = `${API_PATH}?pageNo=1&pageSize=${PAGE}`;
    const apiLast = `${API_PATH}?pageNo=${lastPageNo}&pageSize=${PAGE}`;

    // 3. Correctness: each target shows the page it should (the newest or the oldest task on it).
    const shows = (body: string, id: string) => body.includes(`/callbacks/${id}"`) || body.includes(`"id":${id},`);
    const consoleTarget = (name: TargetName, p: string, id: string): LoadTarget => ({
      name, port: consolePort, child: server,
      requests: () => [{ method: 'GET', path: p, headers: { Cookie: cookie } }],
      verifyBody: (b) => shows(b, id),
    });
    const apiTarget = (name: TargetName, p: string, id: string): LoadTarget => ({
      ...signedGetTarget(name, apiPort, server, creds, p, API_PATH),
      verifyBody: (b) => b.startsWith('{"code":0,') && shows(b, id),
    });
    const targets: Record<TargetName, LoadTarget> = {
      'console-first': consoleTarget('console-first', consoleFirst, newest!.id),
      'console-last': consoleTarget('console-last', consoleLast, oldest!.id),
      'api-first': apiTarget('api-first', apiFirst, newest!.id),
      'api-last': apiTarget('api-last', apiLast, oldest!.id),
    };
    const paths: Record<TargetName, string> = { 'console-first': consoleFirst, 'console-last': consoleLast, 'api-first': apiFirst, 'api-last': apiLast };
    for (const name of TARGETS) {
      const t = targets[name];
      const r = name.startsWith('console')
        ? await httpGet(consolePort, paths[name], { Cookie: cookie })
        : await httpGet(apiPort, paths[name], signedHeaders(creds, 'GET', API_PATH));
      if (r.status !== 200 || !t.verifyBody!(r.body)) throw new Error(`probe ${name}: HTTP ${r.status}, the page does not show the expected task:\n${r.body.slice(0, 600)}`);
    }
    out(`probe: every target shows its page (newest task ${newest!.id}, oldest ${oldest!.id}; last pageNo ${lastPageNo})`);

    // 4. Warm-up, then alternating rounds.
    const lo = { connections: s.connections, pipelining: s.pipelining };
    const warmups: RunRecord[] = [];
    for (const name of TARGETS) {
      if (s.warmupSeconds <= 0) break;
      progress(`warm-up ${name} (${s.warmupSeconds} s)`);
      warmups.push(await load(targets[name], 'warm-up', s.warmupSeconds, lo));
    }
    const runs: RunRecord[] = [];
    for (let round = 1; round <= s.rounds; round++) {
      for (const name of TARGETS) {
        checkAborted();
        progress(`round ${round}/${s.rounds}: ${name} (${s.seconds} s)`);
        const r = await load(targets[name], round, s.seconds, lo);
        runs.push(r);
        progress(`  ${fmtInt(r.rps)} req/s, p50 ${fmtMs(r.latencyMs.p50)} ms, p99 ${fmtMs(r.latencyMs.p99)} ms`);
        await sleep(300);
      }
    }

    // 5. Report.
    const failures = [...warmups, ...runs].flatMap(problems);
    const sum = Object.fromEntries(TARGETS.map((n) => [n, summarise(runs.filter((r) => r.target === n))])) as Record<TargetName, ReturnType<typeof summarise>>;
    const ratio = (a: TargetName, b: TargetName) => (sum[a].rpsMedian / sum[b].rpsMedian) * 100;
    const figures = {
      depth: ratio('console-last', 'console-first'),
      firstVsApi: ratio('console-first', 'api-first'),
      lastVsApi: ratio('console-last', 'api-last'),
      apiDepth: ratio('api-last', 'api-first'),
    };
    out('');
    out(table(
      ['round', 'target', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'non-2xx', 'errors', 'cpu target', 'cpu pg', 'target µs/req'],
      [...warmups, ...runs].map((r) => [String(r.round), r.target, fmtInt(r.rps), fmtMs(r.latencyMs.p50), fmtMs(r.latencyMs.p99), fmtInt(r.requests), String(r.non2xx), String(r.errors),
        fmtPct(r.cpuPercent.target), fmtPct(r.cpuPercent.postgres), r.targetCpuUsPerRequest === null ? '-' : String(Math.round(r.targetCpuUsPerRequest))]),
      [false, false, true, true, true, true, true, true, true, true, true],
    ));
    out('');
    out(table(['target', 'median req/s', 'p50 ms (median)', 'p99 ms (median)'], TARGETS.map((n) => [n, fmtInt(sum[n].rpsMedian), fmtMs(sum[n].latencyP50MsMedian), fmtMs(sum[n].latencyP99MsMedian)]), [false, true, true, true]));
    out('');
    const depthMet = figures.depth >= GOAL_DEPTH;
    const apiMet = figures.firstVsApi >= GOAL_VS_API && figures.lastVsApi >= GOAL_VS_API;
    out(`console last page / console first page: ${figures.depth.toFixed(1)} %  (goal >= ${GOAL_DEPTH} %: ${depthMet ? 'met' : 'not met'})`);
    out(`console / signed API, first page: ${figures.firstVsApi.toFixed(1)} %; last page: ${figures.lastVsApi.toFixed(1)} %  (goal >= ${GOAL_VS_API} %: ${apiMet ? 'met' : 'not met'})`);
    out(`for reference, the signed API's last page / its first page: ${figures.apiDepth.toFixed(1)} %`);
    printFailures(out, failures);
    const file = writeResults('console-listing.json', {
      benchmark: 'console-listing', date: new Date().toISOString(), machine,
      settings: { ...s, tasks, page: PAGE, autocannon: AUTOCANNON_VERSION },
      warmups, runs, summary: { ...sum, ratiosPercent: figures, goals: { depth: GOAL_DEPTH, vsApi: GOAL_VS_API }, met: { depth: depthMet, vsApi: apiMet } },
      correctness: { ok: failures.length === 0, failures },
    });
    out(`results: ${file}`);
    if (failures.length) return 1;
    if (s.enforceGoal && !(depthMet && apiMet)) return 1;
    return 0;
  } finally {
    await cleanup.run();
  }
}

runMain(main);
