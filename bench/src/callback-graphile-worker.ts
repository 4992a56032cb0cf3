/**
 * The peer of the callback-delivery benchmark: the same callback delivery written as a
 * graphile-worker 0.17 task, the way a Node team would build it on that library, in its own
 * process. graphile-worker's `run()` with one task: per job, the signed POST to the job's URL
 * (the spec's HMAC-SHA256 headers over the exact body bytes, on a keep-alive http.Agent with
 * the dispatcher's per-endpoint socket cap), the ACK judged by the spec's rule, then ONE
 * INSERT of the attempt row (the columns and contents of the service's callback_attempts)
 * into ATTEMPTS_TABLE; a delivery that is not ACKed throws, so graphile-worker retries it.
 * Jobs are added by the benchmark (graphile_worker.add_jobs) with the payload
 * { eventId, applicationId, url, body } (body: the event's exact JSON text).
 *
 * VARIANT=default: graphile-worker's defaults (every worker fetches and completes its own job).
 * VARIANT=batched: 0.17's batching: a local queue (LOCAL_QUEUE jobs fetched and locked at once)
 * and batched job completion and failure (BATCH_DELAY_MS).
 *
 * Prints READY once the runner is up. SIGUSR1 pauses it (graceful stop of the runner, so it does
 * not poll Postgres while the benchmark measures another target), SIGUSR2 resumes it (a new
 * runner in the same, warm, process); the n-th of these signals is acknowledged on stdout with
 * PAUSED n / RUNNING n. SIGTERM stops the runner and exits.
 *
 * Usage: DATABASE_URL=... SCHEMA=graphile_worker TASK=<identifier> VARIANT=default|batched
 *        CONCURRENCY=64 POOL_SIZE=11 POLL_MS=1000 PER_ENDPOINT=8 TIMEOUT_MS=10000
 *        MAX_RESPONSE_BYTES=65536 API_KEY=... API_SECRET=... ATTEMPTS_TABLE=bench_graphile_attempts
 *        [LOCAL_QUEUE=256 BATCH_DELAY_MS=0] node bench/dist/callback-graphile-worker.js
 */
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import { EventEmitter } from 'node:events';
import { Logger, run, type JobHelpers, type Runner, type TaskList, type WorkerEvents } from 'graphile-worker';

const env = (name: string, dflt?: string): string => {
  const v = process.env[name] ?? dflt;
  if (v === undefined || v === '') throw new Error(`${name} is not set`);
  return v;
};
const num = (name: string, dflt?: number): number => {
  const v = Number(env(name, dflt === undefined ? undefined : String(dflt)));
  if (!Number.isFinite(v)) throw new Error(`${name}: not a number`);
  return v;
};

const connectionString = env('DATABASE_URL');
const schema = env('SCHEMA', 'graphile_worker');
const taskIdentifier = env('TASK');
const variant = env('VARIANT', 'default');
if (variant !== 'default' && variant !== 'batched') throw new Error(`VARIANT: default or batched, got ${variant}`);
const concurrency = num('CONCURRENCY');
const poolSize = num('POOL_SIZE');
const pollMs = num('POLL_MS');
const perEndpoint = num('PER_ENDPOINT');
const timeoutMs = num('TIMEOUT_MS');
const maxResponseBytes = num('MAX_RESPONSE_BYTES');
const apiKey = env('API_KEY');
const secret = Buffer.from(env('API_SECRET'), 'utf8');
const attemptsTable = env('ATTEMPTS_TABLE');
if (!/^[a-z_][a-z0-9_]*$/.test(attemptsTable)) throw new Error(`ATTEMPTS_TABLE: not a plain identifier: ${attemptsTable}`);
const localQueueSize = variant === 'batched' ? num('LOCAL_QUEUE') : -1;
const batchDelayMs = variant === 'batched' ? num('BATCH_DELAY_MS') : -1;

const SUMMARY_MAX_CHARS = 1000;
const TRUNCATION_MARKER = '...[truncated]';
const USER_AGENT = 'wcs-callback/1';

/** One keep-alive pool for the (single) receiver endpoint, with the dispatcher's per-endpoint socket cap. */
const agent = new http.Agent({ keepAlive: true, maxSockets: perEndpoint });

const sha256Hex = (b: Buffer | string) => crypto.createHash('sha256').update(b).digest('hex');

function summarize(text: string): string {
  const chars = Array.from(text);
  return chars.length <= SUMMARY_MAX_CHARS ? text : chars.slice(0, SUMMARY_MAX_CHARS).join('') + TRUNCATION_MARKER;
}

function mask(value: string, keepStart: number, keepEnd = 4): string {
  if (value.length <= keepStart + keepEnd) return '*'.repeat(value.length);
  return `${value.slice(0, keepStart)}****${value.slice(-keepEnd)}`;
}

/** The ACK rule (docs/callbacks.md): HTTP 200 and a JSON object with code 0, or the word success/ok. Null on ACK, else why not. */
function judgeAck(status: number, body: Buffer): string | null {
  if (status !== 200) return status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}`;
  const text = body.toString('utf8').trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) && 'code' in parsed) {
    const code = (parsed as { code: unknown }).code;
    return code === 0 || code === '0' ? null : `receiver rejected the callback: code ${JSON.stringify(code)}`;
  }
  const word = typeof parsed === 'string' ? parsed.trim() : text;
  return /^(success|ok)$/i.test(word) ? null : 'no ACK marker in the response body';
}

interface Result {
  headersSummary: Record<string, string>;
  status: number | null;
  contentType: string | null;
  responseBody: Buffer | null;
  accepted: boolean;
  latencyMs: number;
  error: string | null;
}

/** The signed POST (docs/api.md signature over POST \n path \n ts \n nonce \n sha256(body)), one deadline, the answer read up to a cap. */
function deliver(urlText: string, body: Buffer): Promise<Result> {
  const url = new URL(urlText);
  const timestamp = String(Date.now());
  const nonce = crypto.randomBytes(16).toString('hex');
  const signature = crypto.createHmac('sha256', secret).update(['POST', url.pathname, timestamp, nonce, sha256Hex(body)].join('\n')).digest('hex');
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'Content-Length': String(body.length),
    'User-Agent': USER_AGENT,
    'X-Api-Key': apiKey,
    'X-Timestamp': timestamp,
    'X-Nonce': nonce,
    'X-Signature': signature,
  };
  const headersSummary: Record<string, string> = {
    ':method': 'POST',
    ':url': urlText,
    'Content-Type': 'application/json',
    'X-Api-Key': mask(apiKey, apiKey.startsWith('pk_') ? 10 : 4),
    'X-Timestamp': timestamp,
    'X-Nonce': nonce,
    'X-Signature': mask(signature, 4),
  };
  const started = process.hrtime.bigint();
  return new Promise<Result>((resolve) => {
    let settled = false;
    let status: number | null = null;
    let contentType: string | null = null;
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (accepted: boolean, error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const latencyMs = Math.round(Number(process.hrtime.bigint() - started) / 1e6);
      resolve({ headersSummary, status, contentType, responseBody: status === null ? null : Buffer.concat(chunks), accepted, latencyMs, error });
    };
    const request = http.request(url, { method: 'POST', headers, agent }, (res) => {
      status = res.statusCode ?? null;
      const ct = res.headers['content-type'];
      contentType = typeof ct === 'string' ? ct.slice(0, 256) : null;
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        received += chunk.length;
        if (received > maxResponseBytes) {
          chunks.push(chunk.subarray(0, chunk.length - (received - maxResponseBytes)));
          finish(false, `response body larger than ${maxResponseBytes} bytes (not read further)`);
          res.destroy();
          request.destroy();
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => {
        const why = judgeAck(status!, Buffer.concat(chunks));
        finish(why === null, why);
      });
      res.on('error', (e: NodeJS.ErrnoException) => finish(false, `network error: ${e.code ?? e.message}`));
    });
    const timer = setTimeout(() => {
      finish(false, `timeout after ${timeoutMs} ms`);
      request.destroy();
    }, timeoutMs);
    request.on('error', (e: NodeJS.ErrnoException) => finish(false, `network error: ${e.code ?? e.message}`));
    request.end(body);
  });
}

interface Payload {
  eventId: number;
  applicationId: number;
  url: string;
  body: string;
}

const INSERT_ATTEMPT = `INSERT INTO ${attemptsTable} (callback_task_id, application_id, attempt_no, url, request_headers_summary, request_body_summary,
    request_body_length, request_body_sha256, response_status, response_content_type, response_body_summary, response_body_length,
    response_body_sha256, accepted, latency_ms, error_reason, next_retry_time, created_at)
  VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`;

async function deliverCallback(rawPayload: unknown, helpers: JobHelpers): Promise<void> {
  const p = rawPayload as Payload;
  const { job } = helpers;
  const startedAt = new Date();
  const body = Buffer.from(p.body, 'utf8');
  const r = await deliver(p.url, body);
  // graphile-worker's own retry: run_at = now + exp(min(attempts, 10)) s while attempts remain
  const next = r.accepted || job.attempts >= job.max_attempts ? null : new Date(Date.now() + Math.exp(Math.min(job.attempts, 10)) * 1000);
  await helpers.query(INSERT_ATTEMPT, [
    job.id,
    p.applicationId,
    job.attempts,
    p.url,
    JSON.stringify(r.headersSummary),
    summarize(p.body),
    body.length,
    sha256Hex(body),
    r.status,
    r.contentType,
    r.responseBody === null ? null : summarize(r.responseBody.toString('utf8')),
    r.responseBody === null ? null : r.responseBody.length,
    r.responseBody === null ? null : sha256Hex(r.responseBody),
    r.accepted,
    r.latencyMs,
    r.error,
    next,
    startedAt,
  ]);
  if (!r.accepted) throw new Error(`callback not accepted: ${r.error}`);
}

/**
 * Warnings and errors only (the dispatcher runs at WCS_LOG_LEVEL=warn too; graphile-worker logs
 * every job at info); a warning once (each resume starts a runner that warns again).
 */
const warned = new Set<string>();
const logger = new Logger((scope) => (level, message) => {
  if ((level as string) === 'warning' && warned.has(message)) return;
  if ((level as string) === 'warning') warned.add(message);
  if ((level as string) === 'error' || (level as string) === 'warning') {
    process.stderr.write(`${level}${scope.label ? ` [${scope.label}]` : ''}: ${message}\n`);
  }
});

const taskList: TaskList = { [taskIdentifier]: deliverCallback };

/** The runner while working; null while paused. */
let runner: Runner | null = null;

/** Starts a runner (a new one after a pause: same process, so the code stays warm) and waits for its LISTEN connection. */
async function start(): Promise<void> {
  const events = new EventEmitter() as WorkerEvents;
  const listening = new Promise<void>((resolve) => {
    // emitted just before graphile-worker sends LISTEN on that client: a query queued after it answers once LISTEN is in place
    events.once('pool:listen:success', ({ client }) => setImmediate(() => void client.query('SELECT 1').then(() => resolve(), () => resolve())));
    setTimeout(resolve, 10_000).unref();
  });
  const r = await run(
    {
      connectionString,
      schema,
      concurrency,
      maxPoolSize: poolSize,
      pollInterval: pollMs,
      noHandleSignals: true,
      logger,
      events,
      taskList,
      ...(variant === 'batched' ? { preset: { worker: { localQueue: { size: localQueueSize }, completeJobBatchDelay: batchDelayMs, failJobBatchDelay: batchDelayMs } } } : {}),
    },
    undefined,
    [], // no cron
  );
  runner = r;
  r.promise.catch((e: unknown) => {
    if (runner !== r) return;
    process.stderr.write(`graphile-worker runner failed: ${(e as Error)?.stack ?? e}\n`);
    process.exit(1);
  });
  await listening;
}

/** Stops the runner gracefully (running jobs finish, a local queue returns what it holds): no polling while other targets run. */
async function pause(): Promise<void> {
  const r = runner;
  runner = null;
  if (r) await r.stop();
}

async function main(): Promise<void> {
  setInterval(() => undefined, 1 << 30); // alive while paused (no runner, no pool)
  await start();
  // Control by signals, in order: SIGUSR1 pauses, SIGUSR2 resumes; the n-th one is acknowledged with "PAUSED n" / "RUNNING n".
  let chain: Promise<void> = Promise.resolve();
  let seq = 0;
  const fail = (e: unknown) => {
    process.stderr.write(`graphile worker control failed: ${(e as Error)?.stack ?? e}\n`);
    process.exit(1);
  };
  process.on('SIGUSR1', () => {
    const n = ++seq;
    chain = chain.then(pause).then(() => void process.stdout.write(`PAUSED ${n}\n`), fail);
  });
  process.on('SIGUSR2', () => {
    const n = ++seq;
    chain = chain.then(() => (runner ? undefined : start())).then(() => void process.stdout.write(`RUNNING ${n}\n`), fail);
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    chain
      .then(pause)
      .catch((e: unknown) => process.stderr.write(`graphile-worker stop failed: ${(e as Error)?.message ?? e}\n`))
      .finally(() => {
        agent.destroy();
        process.exit(0);
      });
  };
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(sig, stop);
  process.stdout.write(
    `READY graphile-worker ${variant}: task ${taskIdentifier}, concurrency ${concurrency}, pool ${poolSize}, poll ${pollMs} ms, ${perEndpoint} sockets` +
      (variant === 'batched' ? `, localQueue.size ${localQueueSize}, completeJobBatchDelay ${batchDelayMs} ms, failJobBatchDelay ${batchDelayMs} ms` : '') +
      '\n',
  );
}

main().catch((e: unknown) => {
  process.stderr.write(`graphile worker failed: ${(e as Error)?.stack ?? e}\n`);
  process.exit(1);
});
