/**
 * The graphile-worker targets of the callback-delivery benchmark (bench/src/callback-delivery.ts):
 * the attempt log they write (the columns, indexes and row contents of callback_attempts), the
 * worker processes (bench/src/callback-graphile-worker.ts, default settings and batched), the
 * QueueTarget over a worker, and the check of their database afterwards.
 */
import * as crypto from 'node:crypto';
import * as path from 'node:path';
import { QueryTypes, type Sequelize } from 'sequelize';
import { ACK_BODY, callbackBody } from './callbacks';
import { Tally, type GraphileAttemptRow, type QueueTarget, type QueueTargetName } from './callback-bench';
import { startChild, stopChild, type CleanupStack, type Child } from './processes';

const GRAPHILE_WORKER = path.join(__dirname, '..', 'callback-graphile-worker.js');
/** graphile-worker's own schema in the benchmark database (its default name). */
export const GRAPHILE_SCHEMA = 'graphile_worker';
/** The graphile target's attempt log: the columns, indexes and row contents of callback_attempts. */
export const GRAPHILE_ATTEMPTS = 'bench_graphile_attempts';
/** Job specs per graphile_worker.add_jobs call when a graphile backlog is written. */
const ADD_JOBS_CHUNK = 1000;

/** graphile-worker's settings in the benchmark (the dispatcher's concurrency, poll and per-endpoint cap). */
export interface GraphileSettings {
  readonly schema: string;
  readonly attemptsTable: string;
  readonly concurrency: number;
  readonly poolSize: number;
  readonly pollMs: number;
  readonly perEndpoint: number;
  readonly localQueueSize: number;
  readonly batchDelayMs: number;
  readonly version: string;
}

/** What the graphile targets share with the benchmark. */
export interface GraphileContext {
  readonly sequelize: Sequelize;
  readonly cleanup: CleanupStack;
  readonly databaseUrl: string;
  readonly settings: GraphileSettings;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  readonly apiKey: string;
  readonly apiSecret: string;
  readonly appId: number;
  readonly callbackUrl: string;
  waitFor(what: string, cond: () => Promise<boolean>, timeoutMs: number, child: Child): Promise<boolean>;
}

/**
 * The attempt log the graphile targets write: the service's callback_attempts as its migration
 * made it (columns, defaults, the unique (task, attempt) index), without its foreign keys (LIKE
 * copies none): callback_task_id holds the graphile job id, and a completed job is deleted.
 */
export async function createGraphileAttemptLog(sequelize: Sequelize): Promise<void> {
  await sequelize.query(`CREATE TABLE ${GRAPHILE_ATTEMPTS} (LIKE callback_attempts INCLUDING DEFAULTS INCLUDING INDEXES)`);
}

export async function startGraphile(ctx: GraphileContext, name: QueueTargetName, variant: 'default' | 'batched', task: string): Promise<Child> {
  const graphile = ctx.settings;
  const child = startChild(variant === 'default' ? 'graphile' : 'graphile-batched', [GRAPHILE_WORKER], {
    ...process.env,
    DATABASE_URL: ctx.databaseUrl,
    SCHEMA: graphile.schema,
    TASK: task,
    VARIANT: variant,
    CONCURRENCY: String(graphile.concurrency),
    POOL_SIZE: String(graphile.poolSize),
    POLL_MS: String(graphile.pollMs),
    PER_ENDPOINT: String(graphile.perEndpoint),
    TIMEOUT_MS: String(ctx.timeoutMs),
    MAX_RESPONSE_BYTES: String(ctx.maxResponseBytes),
    API_KEY: ctx.apiKey,
    API_SECRET: ctx.apiSecret,
    ATTEMPTS_TABLE: graphile.attemptsTable,
    LOCAL_QUEUE: String(graphile.localQueueSize),
    BATCH_DELAY_MS: String(graphile.batchDelayMs),
  });
  ctx.cleanup.push(`stop ${name}`, () => stopChild(child, 15_000));
  if (!(await ctx.waitFor(`${name} to start`, async () => /^READY /m.test(child.tail()), 60_000, child))) throw new Error(`${name} did not start within 60 s:\n${child.tail()}`);
  return child;
}

export function graphileTarget(ctx: GraphileContext, name: QueueTargetName, child: Child, task: string): QueueTarget {
  const { sequelize, appId, callbackUrl } = ctx;
  const count = async (sql: string, bind: unknown[]) => {
    const [row] = await sequelize.query<{ n: string }>(sql, { bind, type: QueryTypes.SELECT });
    return Number(row!.n);
  };
  const jobOf = new Map<number, string>();
  let signals = 0;
  /** SIGUSR1 pauses, SIGUSR2 resumes; the worker acknowledges the n-th signal with PAUSED n / RUNNING n. */
  const control = async (signal: 'SIGUSR1' | 'SIGUSR2') => {
    const n = ++signals;
    const ack = new RegExp(`^${signal === 'SIGUSR1' ? 'PAUSED' : 'RUNNING'} ${n}$`, 'm');
    child.proc.kill(signal);
    if (!(await ctx.waitFor(`${name} to acknowledge ${signal}`, async () => ack.test(child.tail()), 60_000, child))) throw new Error(`${name} did not acknowledge ${signal} within 60 s`);
  };
  return {
    name,
    child,
    pending: () => count(`SELECT count(*) AS n FROM ${GRAPHILE_SCHEMA}.jobs WHERE task_identifier = $1`, [task]),
    // Jobs no worker has locked (fetched, or taken into a local queue) are deleted; locked ones are delivered.
    cancel: async () =>
      (
        await sequelize.query<{ event_id: string }>(
          `DELETE FROM ${GRAPHILE_SCHEMA}._private_jobs j
            WHERE j.task_id = (SELECT id FROM ${GRAPHILE_SCHEMA}._private_tasks WHERE identifier = $1) AND j.locked_at IS NULL
           RETURNING j.payload ->> 'eventId' AS event_id`,
          { bind: [task], type: QueryTypes.SELECT },
        )
      ).map((r) => Number(r.event_id)),
    // graphile-worker's bulk enqueue (what WorkerUtils.addJobs runs), in chunks, inside the backlog's transaction.
    writePart: async (t, ids) => {
      for (let i = 0; i < ids.length; i += ADD_JOBS_CHUNK) {
        const specs = ids.slice(i, i + ADD_JOBS_CHUNK).map((id) => ({
          identifier: task,
          payload: { eventId: id, applicationId: appId, url: callbackUrl, body: callbackBody(id) },
        }));
        const rows = await sequelize.query<{ id: string; event_id: string }>(
          `SELECT id::text AS id, payload ->> 'eventId' AS event_id
             FROM ${GRAPHILE_SCHEMA}.add_jobs(array(SELECT json_populate_recordset(null::${GRAPHILE_SCHEMA}.job_spec, $1::json)))`,
          { bind: [JSON.stringify(specs)], transaction: t, type: QueryTypes.SELECT },
        );
        for (const r of rows) jobOf.set(Number(r.event_id), r.id);
      }
    },
    enqueued: [],
    cancelled: new Set(),
    arrivals: new Map(),
    jobOf,
    resume: () => control('SIGUSR2'),
    pause: () => control('SIGUSR1'),
  };
}

/**
 * graphile-worker after the runs: every job delivered once with exactly one attempt row, logged as
 * what the receiver got; no job left. Returns the attempt rows counted and the problems found.
 */
export async function checkGraphileDatabase(ctx: GraphileContext, targets: readonly QueueTarget[]): Promise<{ attemptRows: number; problems: Tally }> {
  const ackSha = crypto.createHash('sha256').update(ACK_BODY).digest('hex');
  const gAttempts = await ctx.sequelize.query<GraphileAttemptRow>(
    `SELECT callback_task_id::text AS job_id, count(*)::int AS n_attempts, bool_and(accepted) AS accepted, min(attempt_no) AS attempt_no,
            min(response_status) AS response_status, bool_and(application_id = $1 AND url = $2) AS target_logged,
            bool_and(response_body_summary = $3 AND response_body_length = $4 AND response_body_sha256 = $5 AND error_reason IS NULL AND next_retry_time IS NULL) AS response_logged,
            min(request_body_sha256) AS body_sha, min(request_body_length) AS body_length, min(request_body_summary) AS body_summary,
            min(request_headers_summary ->> 'X-Nonce') AS nonce
       FROM ${GRAPHILE_ATTEMPTS} GROUP BY callback_task_id`,
    { bind: [ctx.appId, ctx.callbackUrl, ACK_BODY, Buffer.byteLength(ACK_BODY), ackSha], type: QueryTypes.SELECT },
  );
  const attemptsOf = new Map(gAttempts.map((r) => [r.job_id, r]));
  const gLeft = await ctx.sequelize.query<{ task_identifier: string; n: string }>(
    `SELECT task_identifier, count(*) AS n FROM ${GRAPHILE_SCHEMA}.jobs GROUP BY task_identifier`,
    { type: QueryTypes.SELECT },
  );
  const gBad = new Tally();
  for (const l of gLeft) gBad.add('jobs left in graphile_worker.jobs after the runs', `${l.task_identifier}: ${l.n}`);
  const knownJobs = new Set<string>();
  for (const target of targets) {
    const jobOf = target.jobOf!;
    const mine = new Set(target.enqueued);
    if (mine.size !== target.enqueued.length) gBad.add(`${target.name}: event ids enqueued twice (benchmark bug)`, String(target.enqueued.length - mine.size));
    for (const id of target.enqueued) {
      const job = jobOf.get(id);
      if (job === undefined) {
        gBad.add(`${target.name}: events add_jobs returned no job for`, String(id));
        continue;
      }
      knownJobs.add(job);
      const a = attemptsOf.get(job);
      const got = target.arrivals.get(id) ?? [];
      if (target.cancelled.has(id)) {
        if (a) gBad.add(`${target.name}: cancelled jobs that had been attempted`, `${id} (job ${job})`);
        if (got.length) gBad.add(`${target.name}: cancelled jobs the receiver got`, String(id));
        continue;
      }
      if (!a) gBad.add(`${target.name}: jobs without an attempt row`, `${id} (job ${job})`);
      else if (a.n_attempts !== 1) gBad.add(`${target.name}: jobs without exactly one attempt row`, `${id}: ${a.n_attempts}`);
      else if (!a.accepted || a.attempt_no !== 1 || a.response_status !== 200 || !a.response_logged) gBad.add(`${target.name}: attempts not logged as accepted HTTP 200 {"code":0}`, String(id));
      else if (!a.target_logged) gBad.add(`${target.name}: attempts whose logged application or URL is wrong`, String(id));
      else {
        const body = callbackBody(id);
        if (a.body_sha !== crypto.createHash('sha256').update(body).digest('hex') || a.body_length !== Buffer.byteLength(body) || a.body_summary !== body) {
          gBad.add(`${target.name}: attempts whose logged body length, SHA-256 or summary is not the event's`, String(id));
        }
      }
      if (got.length === 0) gBad.add(`${target.name}: jobs the receiver never got`, String(id));
      else if (got.length > 1) gBad.add(`${target.name}: jobs the receiver got more than once`, `${id} x${got.length}`);
      else if (a && got[0]!.nonce !== a.nonce) gBad.add(`${target.name}: attempts whose logged X-Nonce is not the one received`, `${id}: ${a.nonce} vs ${got[0]!.nonce}`);
    }
    for (const id of target.arrivals.keys()) if (!mine.has(id)) gBad.add(`${target.name}: deliveries of events it was not given`, String(id));
  }
  for (const r of gAttempts) if (!knownJobs.has(r.job_id)) gBad.add('graphile attempt rows of jobs this benchmark did not write', r.job_id);
  return { attemptRows: gAttempts.reduce((n, r) => n + r.n_attempts, 0), problems: gBad };
}
