/**
 * One autocannon run against one target, with CPU accounting around it and the
 * correctness counters autocannon keeps (non-2xx, errors, body mismatches).
 */
import { runAutocannon, type AutocannonRequest, type AutocannonResult } from '../autocannon';
import { cpuPercent, cpuPerRequest, cpuSnapshot, CLK_TCK, type CpuPercent } from './cpu';
import { checkAborted, onAbort, type Child } from './processes';
import { signedHeaders, type Credentials } from './signing';

export interface LoadTarget {
  name: string;
  port: number;
  /** The process being loaded (its CPU is the "target" CPU). */
  child: Child;
  /** autocannon's request list for one run; called once per run. */
  requests: () => AutocannonRequest[];
  /** Body check per response; default: the body starts with a code 0 envelope. */
  verifyBody?: (body: string) => boolean;
}

/**
 * A target loaded with GET requestPath, every request carrying a fresh signature for a GET of
 * signedPath (the same path by default; the signed-support-chains baseline signs the API path
 * while it loads the hello app, so the client's work per request is the same for both).
 */
export function signedGetTarget(name: string, port: number, child: Child, creds: Credentials, requestPath: string, signedPath = requestPath): LoadTarget {
  return {
    name,
    port,
    child,
    requests: () => [
      {
        method: 'GET',
        path: requestPath,
        setupRequest: (req) => {
          Object.assign(req.headers, signedHeaders(creds, 'GET', signedPath));
          return req;
        },
      },
    ],
  };
}

export interface LoadOptions {
  connections: number;
  pipelining: number;
}

/** Every envelope this service (and the hello baseline) answers starts this way when code is 0. */
export const CODE_0_PREFIX = '{"code":0,';
export const isCode0 = (body: string) => body.startsWith(CODE_0_PREFIX);

export interface RunRecord {
  target: string;
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
  /** CPU time of the Postgres cluster under test per completed request (Linux, local cluster only). */
  postgresCpuUsPerRequest?: number | null;
  /** Signed runs: write transactions and nonce rows added during the run (incl. a 1 s settle). */
  db?: { writeTransactions: number; nonceRows: number; claimsPerTransaction: number } | null;
  /** Mean backend states in Postgres during the run (address-create; see lib/postgres sampleActivity). */
  pgActivity?: import('./postgres').PgActivity | null;
  /** When the load ran, in µs of the monotonic clock (the clock of V8 .cpuprofile timestamps): for cpuprofile-top --target. */
  windowUs?: [number, number];
  /** Scenario-specific checks of the response bodies (see the scenario). */
  checks?: Record<string, unknown>;
}

export async function load(t: LoadTarget, round: number | 'warm-up', seconds: number, o: LoadOptions): Promise<RunRecord> {
  checkAborted();
  const before = cpuSnapshot(t.child.proc.pid);
  const startUs = Number(process.hrtime.bigint() / 1000n);
  const hook: { off?: () => void } = {};
  const result: AutocannonResult = await runAutocannon(
    {
      url: `http://127.0.0.1:${t.port}`,
      title: `${t.name} ${round}`,
      connections: o.connections,
      pipelining: o.pipelining,
      duration: seconds,
      requests: t.requests(),
      // Anything but a code 0 envelope is counted as a mismatch.
      verifyBody: t.verifyBody ?? isCode0,
    },
    (inst) => (hook.off = onAbort(() => inst.stop())),
  ).finally(() => hook.off?.());
  const after = cpuSnapshot(t.child.proc.pid);
  const endUs = Number(process.hrtime.bigint() / 1000n);
  checkAborted();
  const statusCodes: Record<string, number> = {};
  for (const [k, v] of Object.entries(result.statusCodeStats ?? {})) statusCodes[k] = Number(v.count);
  const perRequest = cpuPerRequest(before, after, result.requests.total);
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
    postgresCpuUsPerRequest: perRequest.postgres,
    windowUs: [startUs, endUs],
  };
}

/** What went wrong in a run, one line each (empty when the run is clean). */
export function problems(r: RunRecord): string[] {
  const p: string[] = [];
  if (r.non2xx > 0) p.push(`${r.non2xx} non-2xx responses (status codes ${JSON.stringify(r.statusCodes)})`);
  if (r.mismatches > 0) p.push(`${r.mismatches} responses whose body was not a code 0 envelope`);
  if (r.errors > 0) p.push(`${r.errors} connection errors (${r.timeouts} timeouts)`);
  if (r.requests === 0) p.push('no completed requests');
  return p.map((x) => `${r.target} ${r.round === 'warm-up' ? 'warm-up' : 'round ' + r.round}: ${x}`);
}
