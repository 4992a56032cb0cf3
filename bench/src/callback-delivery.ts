/**
 * Benchmark: callback (webhook) deliveries per second of the real dispatcher
 * (`wcs start --workers-only`: claim under a lease, signed POST, attempt row + task state in
 * one transaction) to a local ACKing receiver, as a ratio to a bare HTTP POST loop to the same
 * receiver in the same run (goal >= 25 %) and to the peer a Node team would pick instead,
 * graphile-worker 0.17 doing the same work per delivery (signed POST, ACK judged, one
 * attempt-log INSERT; bench/src/callback-graphile-worker.ts) on the same Postgres, with its
 * default settings (goal: dispatcher >= 1.5x) and with its batching on (local queue, batched
 * completion; reported); then the end-to-end capacity (producers writing through the real outbox
 * as fast as they can while the dispatcher delivers) and the due-to-sent latency of tasks enqueued
 * at a fixed rate through the real outbox, at half that capacity (goal p99 <= 100 ms) and, reported
 * beside it, at half the dispatch-only rate. Every delivery is checked afterwards, in the receiver
 * (signature, body bytes, nonce) and in Postgres (exactly one accepted attempt per task or job,
 * logged as sent). See bench/README.md.
 *
 *   npm run bench:callbacks             (from the repository root)
 *   BENCH_SECONDS=30 BENCH_ROUNDS=3 node bench/dist/callback-delivery.js
 *   BENCH_CPU_PROF=1 node bench/dist/callback-delivery.js   (writes a .cpuprofile of the workers process)
 */
import * as crypto from 'node:crypto';
import * as path from 'node:path';
import { QueryTypes, Sequelize } from 'sequelize';
import { enqueueCallback, loadConfig, PREFETCH } from '@wcs/server';
import { freePort, testEnv } from '@wcs/server/testing';
import { callbackBody, callbackPayload, CALLBACK_PATH, CONTROL, type ReceiverTake } from './lib/callbacks';
import { openStatsConnection, requestStatementStats, resetStatementStats, sampleActivity, topStatements, type PgActivity } from './lib/postgres';
import { checkAborted, CleanupStack, runMain, sleep, startChild, stopChild, waitReady, withTimeout, type Child } from './lib/processes';
import { fmtInt, fmtMs, fmtPct, fmtUs, machineInfo, machineLine, median, medianOrNull, noiseWarning, out, progress, table, printFailures, writeResults } from './lib/report';
import { intEnv, readLoadSettings } from './lib/settings';
import { checkGraphileDatabase, createGraphileAttemptLog, GRAPHILE_ATTEMPTS, GRAPHILE_SCHEMA, graphileTarget, startGraphile, type GraphileContext, type GraphileSettings } from './lib/callback-graphile';
import { createAppViaCli, prepareBenchStorage, printProfiles, setCallbackViaCli, startWorkers } from './lib/wcs';

const GOAL_RATIO_PERCENT = 25;
/** Goal: the dispatcher's median deliveries/s at least this multiple of graphile-worker's (default settings, attempt log). */
const GOAL_VS_GRAPHILE = 1.5;
const GOAL_P99_MS = 100;
const NOISE_WARN_PERCENT = 20;
const BIZ_TYPE = 'RECHARGE';
const RECEIVER = path.join(__dirname, 'callback-receiver.js');
const POST_LOOP = path.join(__dirname, 'callback-post-loop.js');
/** Backlog of a round's queue runs (dispatcher, graphile): the dispatcher's last rate measured x seconds x this margin (a shorter window is used if it runs out). */
const BACKLOG_MARGIN = 1.5;
/** Deliveries/s assumed for a target's first backlog, before any was measured. */
const FIRST_GUESS_PER_S = 250;
/** Concurrent producer loops of the end-to-end capacity run (each: transactions of txTasks events, back to back). */
const CAPACITY_PRODUCERS = 4;

import { QueueTargetName, TargetName, QUEUE_TARGETS, CpuRecord, Run, LatencyBasis, LatencyRun, OpenLoopRun, TaskRow, QueueTarget, dist, cpuMark, cpuBetween, perDelivery, receiverCount, receiverTake, windowRate, receiverProblems, runLabel, Tally } from './lib/callback-bench';

async function main(): Promise<number> {
  const pgss = requestStatementStats(); // BENCH_PGSS=1, before the cluster starts
  const s = readLoadSettings();
  const loadPercent = intEnv('BENCH_CALLBACK_LOAD_PERCENT', 50, 1, 200);
  const txTasks = intEnv('BENCH_CALLBACK_TX_TASKS', 5, 1, 1000);
  const prefillTx = intEnv('BENCH_CALLBACK_PREFILL_TX', 4, 1, 32);
  const maxBacklog = intEnv('BENCH_CALLBACK_MAX_BACKLOG', 50_000, 100, 10_000_000);
  const startedAt = Date.now();
  const machine = machineInfo();
  const dbMode = process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded Postgres (test cluster)';

  out(
    'callback deliveries/s of `wcs start --workers-only` vs a bare HTTP POST loop to the same receiver and vs graphile-worker 0.17 doing the same work; ' +
      'then due-to-sent latency at a fixed rate',
  );
  out(machineLine(machine));

  const cleanup = new CleanupStack();
  let profileDir: string | null = null;
  try {
    const db = await prepareBenchStorage(cleanup);
    const env = { ...process.env, ...testEnv(db.url, { WCS_LOG_LEVEL: 'warn' }) };
    // The dispatcher's settings exactly as the workers process reads them (WCS_CALLBACK_* pass through).
    const config = loadConfig(env);
    const cb = config.callbacks;
    // graphile-worker: the dispatcher's concurrency, poll and per-endpoint socket cap; its pool the workers process's
    // (WCS_DB_POOL_MAX) plus one, as graphile-worker keeps one pool client for LISTEN where the dispatcher opens its own.
    const graphile: GraphileSettings = {
      schema: GRAPHILE_SCHEMA,
      attemptsTable: GRAPHILE_ATTEMPTS,
      concurrency: cb.concurrency,
      poolSize: intEnv('BENCH_GRAPHILE_POOL', config.dbPoolMax + 1, 2, 1000),
      pollMs: cb.pollMs,
      perEndpoint: cb.perEndpoint,
      localQueueSize: intEnv('BENCH_GRAPHILE_LOCAL_QUEUE', cb.concurrency * PREFETCH, 2, 100_000),
      batchDelayMs: intEnv('BENCH_GRAPHILE_BATCH_DELAY_MS', 0, 0, 10_000),
      version: (require('graphile-worker/package.json') as { version: string }).version,
    };
    out(
      `dispatcher: concurrency ${cb.concurrency}, ${cb.perEndpoint} per endpoint, poll ${cb.pollMs} ms; bare POST loop: ${cb.perEndpoint} concurrent, keep-alive; ` +
        `${s.seconds} s per run, ${s.warmupSeconds} s warm-up, ${s.rounds} rounds; latency: ${loadPercent} % of the median throughput, ` +
        `${txTasks} tasks per transaction; database: ${dbMode}`,
    );
    out(
      `graphile-worker ${graphile.version} (schema ${graphile.schema}, attempt log ${graphile.attemptsTable}): concurrency ${graphile.concurrency}, ` +
        `maxPoolSize ${graphile.poolSize}, pollInterval ${graphile.pollMs} ms, keep-alive agent of ${graphile.perEndpoint} sockets; ` +
        `batched: localQueue.size ${graphile.localQueueSize}, completeJobBatchDelay and failJobBatchDelay ${graphile.batchDelayMs} ms`,
    );
    if (s.serverNodeArgs.length) out(`workers node args: ${s.serverNodeArgs.join(' ')}`);

    // 1. The application (CLI), the receiver, the callback URL (CLI), the producer's pool, the workers process.
    const app = await createAppViaCli(env, 'bench-callbacks', ['ETH']);
    if (app.id === null) throw new Error('wcs app create printed no application id');
    const appId = app.id;
    const receiverPort = await freePort();
    const receiver = startChild('receiver', [RECEIVER], { ...process.env, PORT: String(receiverPort), API_KEY: app.apiKey, API_SECRET: app.apiSecret });
    cleanup.push('stop receiver', () => stopChild(receiver, 5_000));
    await waitReady(receiver, receiverPort, CONTROL.count, 30_000);
    const callbackUrl = `http://127.0.0.1:${receiverPort}${CALLBACK_PATH}`;
    await setCallbackViaCli(env, appId, BIZ_TYPE, callbackUrl);
    checkAborted();

    const sequelize = new Sequelize(db.url, { dialect: 'postgres', logging: false, pool: { max: Math.max(prefillTx, 8), min: 0, idle: 60_000 } });
    cleanup.push('close producer pool', () => withTimeout(sequelize.close(), 10_000));
    const stats = await openStatsConnection(db.url, cleanup, 'cpu pg and pg activity');

    const workers = startWorkers({ env, nodeArgs: s.serverNodeArgs, cpuProf: s.cpuProf, cleanup });
    profileDir = workers.profileDir;

    let nextId = 1;
    const event = (id: number) => ({ applicationId: appId, bizType: BIZ_TYPE as 'RECHARGE', bizId: id, payload: callbackPayload(id) });
    const failures: string[] = [];
    /** Every signed request's nonce over the whole benchmark (the receiver checks within one take). */
    const allNonces = new Set<string>();
    let nonceRepeats = 0;
    const keep = (target: QueueTarget, t: ReceiverTake) => {
      for (let i = 0; i < t.count; i++) {
        const list = target.arrivals.get(t.id[i]!) ?? [];
        list.push({ at: t.at[i]!, nonce: t.nonce[i]! });
        target.arrivals.set(t.id[i]!, list);
        if (allNonces.has(t.nonce[i]!)) nonceRepeats++;
        allNonces.add(t.nonce[i]!);
      }
    };
    const waitFor = async (what: string, cond: () => Promise<boolean>, timeoutMs: number, child: Child): Promise<boolean> => {
      const deadline = Date.now() + timeoutMs;
      while (!(await cond())) {
        checkAborted();
        if (child.hasExited()) throw new Error(`${child.name} exited while waiting for ${what}:\n${child.tail()}`);
        if (Date.now() > deadline) return false;
        await sleep(50);
      }
      return true;
    };
    const count = async (sql: string, bind: unknown[]) => {
      const [row] = await sequelize.query<{ n: string }>(sql, { bind, type: QueryTypes.SELECT });
      return Number(row!.n);
    };

    // The dispatcher's queue: a callback_queue row exists while a task waits for its first delivery or a retry, or is being delivered.
    const dispatcher: QueueTarget = {
      name: 'dispatcher',
      child: workers.child,
      pending: () => count(`SELECT count(*) AS n FROM callback_queue WHERE application_id = $1`, [appId]),
      // Queue rows no dispatcher holds (lease_owner NULL) are removed and their tasks failed with no retry, in one statement;
      // a held row is never touched (the claim's row lock and the WHERE see to that) and is delivered.
      cancel: async () =>
        (
          await sequelize.query<{ biz_id: string }>(
            `WITH q AS (DELETE FROM callback_queue WHERE application_id = $1 AND lease_owner IS NULL RETURNING task_id)
             UPDATE callback_tasks t SET status = 'FAILED', next_retry_time = NULL, last_error = 'cancelled by the benchmark after its run', updated_at = now()
               FROM q WHERE t.id = q.task_id
             RETURNING t.biz_id`,
            { bind: [appId], type: QueryTypes.SELECT },
          )
        ).map((r) => Number(r.biz_id)),
      writePart: async (t, ids) => {
        for (const id of ids) await enqueueCallback(sequelize, t, event(id));
      },
      enqueued: [],
      cancelled: new Set(),
      arrivals: new Map(),
      jobOf: null,
      // The workers process runs throughout, as deployed (idle, it polls once per WCS_CALLBACK_POLL_MS).
      resume: async () => undefined,
      pause: async () => undefined,
    };

    // graphile-worker: its schema (migrated by the first worker process), the attempt log, one task identifier per variant.
    const gCtx: GraphileContext = {
      sequelize, cleanup, databaseUrl: db.url, settings: graphile, timeoutMs: cb.timeoutMs, maxResponseBytes: cb.maxResponseBytes,
      apiKey: app.apiKey, apiSecret: app.apiSecret, appId, callbackUrl, waitFor,
    };
    await createGraphileAttemptLog(sequelize);
    // One after the other (the first one migrates graphile-worker's schema); each is paused until its own runs.
    const gDefault = graphileTarget(gCtx, 'graphile-worker', await startGraphile(gCtx, 'graphile-worker', 'default', 'bench_callback'), 'bench_callback');
    await gDefault.pause();
    const gBatched = graphileTarget(gCtx, 'graphile batched', await startGraphile(gCtx, 'graphile batched', 'batched', 'bench_callback_batched'), 'bench_callback_batched');
    await gBatched.pause();
    const targets: Record<QueueTargetName, QueueTarget> = { dispatcher, 'graphile-worker': gDefault, 'graphile batched': gBatched };

    /**
     * Waits up to timeoutMs until the receiver has n requests; gives up early when the target
     * has nothing pending any more. True when all n arrived.
     */
    const drain = async (target: QueueTarget, n: number, timeoutMs: number): Promise<boolean> => {
      let checked = Date.now();
      let done = false;
      await waitFor(
        `${n} deliveries`,
        async () => {
          if ((await receiverCount(receiverPort)).count >= n) return (done = true);
          if (Date.now() - checked < 1000) return false;
          checked = Date.now();
          if ((await target.pending()) > 0) return false;
          done = (await receiverCount(receiverPort)).count >= n;
          return true;
        },
        timeoutMs,
        target.child,
      );
      return done;
    };
    /**
     * Ends a run: waits up to graceMs for the rest of its tasks or jobs, then cancels what is
     * still queued (or waiting for a retry) so nothing spills into the next run, and waits until
     * the deliveries in flight are recorded. Returns how many were cancelled.
     */
    const finish = async (target: QueueTarget, n: number, graceMs: number): Promise<number> => {
      const ids = (await drain(target, n, graceMs)) ? [] : await target.cancel();
      for (const id of ids) target.cancelled.add(id);
      // A request arrives before its attempt is recorded: wait until every task or job is settled.
      if (!(await waitFor('the deliveries in flight', async () => (await target.pending()) === 0, 60_000, target.child))) {
        throw new Error(`${target.name}: deliveries still in flight 60 s after the end of a run`);
      }
      return ids.length;
    };
    /** Writes ids for the target in `parts` transactions that commit together; the returned function commits them. */
    const writeBacklog = async (target: QueueTarget, ids: number[], parts: number): Promise<() => Promise<void>> => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const ready: Array<Promise<unknown>> = [];
      const committed: Array<Promise<void>> = [];
      for (let k = 0; k < parts; k++) {
        const part = ids.filter((_, i) => i % parts === k);
        let written!: () => void;
        const writtenP = new Promise<void>((r) => (written = r));
        const tx = sequelize.transaction(async (t) => {
          await target.writePart(t, part);
          written();
          await gate;
        });
        committed.push(tx);
        ready.push(Promise.race([writtenP, tx.catch(() => undefined)]));
      }
      await Promise.all(ready);
      target.enqueued.push(...ids);
      return async () => {
        release();
        const r = await Promise.allSettled(committed);
        const bad = r.find((x) => x.status === 'rejected') as PromiseRejectedResult | undefined;
        if (bad) throw new Error(`${target.name} backlog transaction failed: ${(bad.reason as Error)?.message ?? bad.reason}`);
      };
    };

    if (pgss) await resetStatementStats(stats);

    // 2. Probes: one task through the real outbox, one job per graphile variant; a delivery also says the sender is up.
    for (const target of QUEUE_TARGETS.map((n) => targets[n])) {
      const id = nextId++;
      await target.resume();
      await (await writeBacklog(target, [id], 1))();
      if ((await finish(target, 1, 60_000)) !== 0) throw new Error(`${target.name} probe not delivered within 60 s:\n${target.child.tail()}`);
      await target.pause();
      const take = await receiverTake(receiverPort, true);
      keep(target, take);
      const p = receiverProblems(`${target.name} probe`, take.checks, true, take.count);
      if (take.count !== 1 || take.id[0] !== id || p.length) throw new Error(`${target.name} probe delivery wrong: ${take.count} requests, ids ${take.id.join(',')}; ${p.join('; ')}`);
      out(`probe ${target.name}: one ${target.name === 'dispatcher' ? 'task through the outbox' : 'job'} delivered to ${callbackUrl}; signature verified, body exact (${Buffer.byteLength(callbackBody(id))} bytes)`);
    }

    // 3. Throughput runs.
    /** Every run starts with nothing queued and nothing received. */
    const quiet = async (what: string) => {
      const pend = await Promise.all(QUEUE_TARGETS.map(async (n) => `${n} ${await targets[n].pending()}`));
      const c = await receiverCount(receiverPort);
      if (pend.some((x) => !x.endsWith(' 0')) || c.count !== 0) throw new Error(`${what}: pending ${pend.join(', ')} and ${c.count} requests received before the start (benchmark bug)`);
    };
    const bareRun = async (round: number | 'warm-up', seconds: number): Promise<Run> => {
      checkAborted();
      await quiet(runLabel({ target: 'bare POST', round }));
      const startAt = Date.now() + 800; // the loop process starts, then waits for this moment
      const loop = startChild('post-loop', [POST_LOOP], {
        ...process.env,
        PORT: String(receiverPort),
        API_KEY: app.apiKey,
        CONCURRENCY: String(cb.perEndpoint),
        SECONDS: String(seconds),
        START_AT: String(startAt),
      });
      try {
        await sleep(Math.max(0, startAt - Date.now()));
        const a = cpuMark(loop.proc.pid, receiver.proc.pid);
        const sampler = sampleActivity(stats);
        // The loop prints RESULT when its time is up and then waits to be stopped, so its CPU can still be read.
        const result = () => /^RESULT (.*)$/m.exec(loop.tail())?.[1] ?? null;
        if (!(await waitFor('the bare POST loop', async () => result() !== null, (seconds + 30) * 1000, loop))) throw new Error('the bare POST loop did not finish');
        const c = cpuBetween(a, cpuMark(loop.proc.pid, receiver.proc.pid));
        const pgActivity = await sampler.stop();
        const take = await receiverTake(receiverPort, false);
        const w = windowRate(take.at, seconds);
        const res = JSON.parse(result()!) as { requests: number; ok: number; badAck: number; errors: number; errorSamples: string[] };
        const r: Run = {
          target: 'bare POST', round, rate: w.rate, windowS: w.windowS, inWindow: w.inWindow, received: take.count, backlog: null, cancelled: null, backlogRanOut: false, prefillS: null,
          senderErrors: res.errors + res.badAck, cpuPercent: c.cpu, senderUsPerDelivery: perDelivery(c.cpu.target, c.wallS, take.count),
          postgresUsPerDelivery: perDelivery(c.cpu.postgres, c.wallS, take.count), pgActivity, checks: take.checks,
        };
        failures.push(...receiverProblems(runLabel(r), take.checks, false, take.count));
        if (res.errors || res.badAck) failures.push(`${runLabel(r)}: ${res.errors} errors, ${res.badAck} answers that were not the ACK (${res.errorSamples.join(' | ')})`);
        if (res.ok !== take.count) failures.push(`${runLabel(r)}: the loop counted ${res.ok} ACKs, the receiver ${take.count} requests`);
        if (take.count === 0) failures.push(`${runLabel(r)}: no requests arrived`);
        return r;
      } finally {
        await stopChild(loop, 5_000);
      }
    };

    /** A backlog drained by a queue target (dispatcher or graphile), measured from the receiver's arrivals. */
    const queueRun = async (target: QueueTarget, round: number | 'warm-up', seconds: number, backlog: number): Promise<Run> => {
      checkAborted();
      await target.resume();
      await quiet(runLabel({ target: target.name, round }));
      const ids = Array.from({ length: backlog }, () => nextId++);
      const t0 = Date.now();
      const commit = await writeBacklog(target, ids, prefillTx);
      const prefillS = (Date.now() - t0) / 1000;
      const a = cpuMark(target.child.proc.pid, receiver.proc.pid);
      const sampler = sampleActivity(stats);
      await commit(); // visible and NOTIFYed now
      // The window: from the first arrival for `seconds`, or until the backlog is done.
      await waitFor(
        'the window',
        async () => {
          const c = await receiverCount(receiverPort);
          return c.count >= backlog || (c.first !== null && Date.now() >= c.first + seconds * 1000);
        },
        (seconds + 60) * 1000,
        target.child,
      );
      const cpuAt = Date.now();
      const c = cpuBetween(a, cpuMark(target.child.proc.pid, receiver.proc.pid));
      const pgActivity = await sampler.stop();
      // The rest of the backlog (it is sized to outlast the window) gets a grace period, then is cancelled.
      const cancelledN = await finish(target, backlog, (2 + seconds / 2) * 1000);
      await target.pause();
      const take = await receiverTake(receiverPort, true);
      keep(target, take);
      const w = windowRate(take.at, seconds);
      const inCpuWindow = take.at.filter((t) => t <= cpuAt).length;
      const r: Run = {
        target: target.name, round, rate: w.rate, windowS: w.windowS, inWindow: w.inWindow, received: take.count, backlog, cancelled: cancelledN, backlogRanOut: w.ranOut, prefillS,
        senderErrors: 0, cpuPercent: c.cpu, senderUsPerDelivery: perDelivery(c.cpu.target, c.wallS, inCpuWindow),
        postgresUsPerDelivery: perDelivery(c.cpu.postgres, c.wallS, inCpuWindow), pgActivity, checks: take.checks,
      };
      failures.push(...receiverProblems(runLabel(r), take.checks, true, take.count));
      if (take.count + cancelledN !== backlog) failures.push(`${runLabel(r)}: ${backlog} queued, ${cancelledN} cancelled after the run, the receiver got ${take.count} requests`);
      return r;
    };

    // The backlog of a round: the dispatcher's last rate x seconds x margin (a first guess before any); every queue target
    // of the round gets one of that size, so each starts from the same number of queued tasks or jobs.
    let lastRate: number | null = null;
    const backlogFor = (seconds: number) => Math.min(maxBacklog, Math.max(100, Math.ceil((lastRate ?? FIRST_GUESS_PER_S) * seconds * BACKLOG_MARGIN)));
    const show = (r: Run) =>
      progress(
        `  ${fmtInt(r.rate)}/s over ${r.windowS.toFixed(1)} s (${fmtInt(r.received)} requests` +
          (r.backlog !== null ? `; backlog ${fmtInt(r.backlog)} written in ${r.prefillS!.toFixed(1)} s${r.backlogRanOut ? ', ran out' : ''}, ${fmtInt(r.cancelled ?? 0)} cancelled after the run` : '') +
          ')',
      );
    /** One round: the bare POST loop, then each queue target with a backlog of the same size. */
    const round = async (label: number | 'warm-up', seconds: number, into: Run[]) => {
      const what = label === 'warm-up' ? 'warm-up' : `round ${label}/${s.rounds}:`;
      progress(`${what} bare POST (${seconds} s)`);
      const b = await bareRun(label, seconds);
      show(b);
      into.push(b);
      const n = backlogFor(seconds);
      for (const target of QUEUE_TARGETS.map((name) => targets[name])) {
        progress(`${what} ${target.name} (backlog ${fmtInt(n)})`);
        const r = await queueRun(target, label, seconds, n);
        show(r);
        into.push(r);
        if (target === dispatcher) lastRate = r.rate;
      }
    };

    const warmups: Run[] = [];
    if (s.warmupSeconds > 0) await round('warm-up', s.warmupSeconds, warmups);
    const runs: Run[] = [];
    for (let r = 1; r <= s.rounds; r++) await round(r, s.seconds, runs);
    const ratesOf = (t: TargetName) => runs.filter((r) => r.target === t).map((r) => r.rate);
    const bareRates = ratesOf('bare POST');
    const dispRates = ratesOf('dispatcher');
    const gRates = ratesOf('graphile-worker');
    const gbRates = ratesOf('graphile batched');
    const perRound = Array.from({ length: s.rounds }, (_, i) => (dispRates[i]! / bareRates[i]!) * 100);
    const ratio = (median(dispRates) / median(bareRates)) * 100;
    /** Dispatcher deliveries/s as a multiple of a graphile variant's (medians; and per round). */
    const vsGraphile = median(dispRates) / median(gRates);
    const vsGraphileBatched = median(dispRates) / median(gbRates);
    const perRoundVsG = Array.from({ length: s.rounds }, (_, i) => dispRates[i]! / gRates[i]!);
    const perRoundVsGb = Array.from({ length: s.rounds }, (_, i) => dispRates[i]! / gbRates[i]!);

    // graphile-worker's tables are vacuumed now, so autovacuum work left by the graphile runs does not land in the latency run.
    await sequelize.query(`VACUUM (ANALYZE) ${GRAPHILE_SCHEMA}._private_jobs, ${GRAPHILE_ATTEMPTS}`);

    const statements: Record<string, string[]> = {};
    if (pgss) {
      statements['throughput runs (warm-up and rounds)'] = await topStatements(stats, 8);
      await resetStatementStats(stats);
    }

    /** Enqueues ids through the real outbox, `txTasks` per transaction (one enqueueCallback per event, as a business change would). */
    const produce = (ids: number[]) =>
      sequelize.transaction(async (t) => {
        for (const id of ids) await enqueueCallback(sequelize, t, event(id));
      });

    // 4. End-to-end capacity: producers write through the outbox as fast as they can while the
    // dispatcher delivers, on the same machine. Deliveries/s in that state are what the whole path
    // (writing the event, claiming, sending, recording) sustains: the throughput runs above leave
    // the writing out (their backlog is written before the window). The latency goal's load is a
    // share of this capacity: load as utilisation of what the machine can do end to end.
    progress(`end-to-end capacity: ${CAPACITY_PRODUCERS} producers writing transactions of ${txTasks} as fast as they can for ${s.seconds} s`);
    await receiverTake(receiverPort, true); // nothing expected
    const capIds: number[] = [];
    const capA = cpuMark(workers.child.proc.pid, receiver.proc.pid);
    const capEnd = Date.now() + s.seconds * 1000;
    const producers = Array.from({ length: CAPACITY_PRODUCERS }, async () => {
      while (Date.now() < capEnd) {
        checkAborted();
        const ids = Array.from({ length: txTasks }, () => nextId++);
        capIds.push(...ids);
        await produce(ids);
      }
    });
    // the window starts once the pipeline is full (1 s in) and ends when the producers stop
    await sleep(1000);
    const capFrom = { at: Date.now(), count: (await receiverCount(receiverPort)).count, written: capIds.length };
    await sleep(Math.max(0, capEnd - Date.now()));
    const capTo = { at: Date.now(), count: (await receiverCount(receiverPort)).count, written: capIds.length };
    await Promise.all(producers);
    const capC = cpuBetween(capA, cpuMark(workers.child.proc.pid, receiver.proc.pid));
    const capacity = {
      deliveredPerS: ((capTo.count - capFrom.count) * 1000) / (capTo.at - capFrom.at),
      writtenPerS: ((capTo.written - capFrom.written) * 1000) / (capTo.at - capFrom.at),
      tasks: capIds.length,
      cpuPercent: capC.cpu,
      cancelled: 0,
    };
    dispatcher.enqueued.push(...capIds);
    capacity.cancelled = await finish(dispatcher, capIds.length, Math.max(30, 3 * s.seconds) * 1000);
    const capTake = await receiverTake(receiverPort, true);
    keep(dispatcher, capTake);
    failures.push(...receiverProblems('capacity run', capTake.checks, true, capTake.count));
    if (capTake.count + capacity.cancelled !== capIds.length) failures.push(`capacity run: ${capIds.length} tasks queued, ${capacity.cancelled} cancelled, the receiver got ${capTake.count} requests`);
    if (pgss) statements['capacity run'] = await topStatements(stats, 8);
    if (pgss) await resetStatementStats(stats);

    // 5. Latency: an open-loop producer enqueues through the real outbox at a fixed rate.
    const latencyRun = async (offered: number, basis: LatencyBasis): Promise<OpenLoopRun> => {
      progress(`latency (${loadPercent} % of the ${basis}): ${fmtInt(offered)} tasks/s in transactions of ${txTasks} for ${s.seconds} s`);
      await receiverTake(receiverPort, true); // nothing expected
      const ids: number[] = [];
      const txDone = new Map<number, number>();
      const intervalMs = (txTasks / offered) * 1000;
      const txCount = Math.max(1, Math.round((s.seconds * 1000) / intervalMs));
      const la = cpuMark(workers.child.proc.pid, receiver.proc.pid);
      const lSampler = sampleActivity(stats);
      const inflight = new Set<Promise<void>>();
      let maxLate = 0;
      const p0 = Date.now() + 20;
      for (let i = 0; i < txCount; i++) {
        checkAborted();
        const due = p0 + i * intervalMs;
        const wait = due - Date.now();
        if (wait >= 1) await sleep(wait);
        maxLate = Math.max(maxLate, Date.now() - due);
        const batch = Array.from({ length: txTasks }, () => nextId++);
        ids.push(...batch);
        const p: Promise<void> = produce(batch)
          .then(
            () => {
              const done = Date.now();
              for (const id of batch) txDone.set(id, done);
            },
            (e: unknown) => void failures.push(`latency producer transaction failed: ${(e as Error)?.message ?? e}`),
          )
          .finally(() => inflight.delete(p));
        inflight.add(p);
      }
      await Promise.all(inflight);
      const producedS = (Date.now() - p0) / 1000;
      dispatcher.enqueued.push(...ids);
      const lc = cpuBetween(la, cpuMark(workers.child.proc.pid, receiver.proc.pid));
      const lPg = await lSampler.stop();
      // At this load everything should be delivered at once; what is not delivered within the grace period is cancelled and counts against the goal.
      const graceS = Math.max(30, 3 * s.seconds);
      const cancelledN = await finish(dispatcher, ids.length, graceS * 1000);
      const take = await receiverTake(receiverPort, true);
      keep(dispatcher, take);
      failures.push(...receiverProblems(`latency run (${basis})`, take.checks, true, take.count));
      if (take.count + cancelledN !== ids.length) failures.push(`latency run (${basis}): ${ids.length} tasks queued, ${cancelledN} cancelled, the receiver got ${take.count} requests`);
      if (pgss) {
        statements[`latency run (${loadPercent} % of the ${basis})`] = await topStatements(stats, 8);
        await resetStatementStats(stats);
      }
      return {
        basis, ids, txDone, graceS,
        base: {
          target: 'dispatcher', round: 'latency', offeredPerS: offered, achievedPerS: ids.length / producedS, tasks: ids.length, transactions: txCount,
          tasksPerTransaction: txTasks, notDelivered: cancelledN, producerMaxLateMs: maxLate, cpuPercent: lc.cpu, senderUsPerDelivery: perDelivery(lc.cpu.target, lc.wallS, take.count),
          postgresUsPerDelivery: perDelivery(lc.cpu.postgres, lc.wallS, take.count), pgActivity: lPg, checks: take.checks,
        },
      };
    };
    // the goal: a share of the end-to-end capacity; then, reported beside it, the same share of the dispatch-only rate
    const openLoops = [
      await latencyRun(Math.max(1, (capacity.deliveredPerS * loadPercent) / 100), 'end-to-end capacity'),
      await latencyRun(Math.max(1, (median(dispRates) * loadPercent) / 100), 'dispatch-only rate'),
    ];


    // 5. The database: every task delivered once, its one attempt logged as what the receiver got.
    progress('checking the database');
    const rows = await sequelize.query<TaskRow>(
      `SELECT t.biz_id, t.status, t.attempts, t.retry_times, NOT EXISTS (SELECT 1 FROM callback_queue q WHERE q.task_id = t.id) AS unqueued,
              extract(epoch FROM t.created_at) * 1000 AS created_ms, encode(sha256(t.body), 'hex') AS body_sha,
              count(a.id)::int AS n_attempts, bool_and(a.accepted) AS accepted, min(a.attempt_no) AS attempt_no, min(a.response_status) AS response_status,
              bool_and(a.request_body_sha256 = encode(sha256(t.body), 'hex') AND a.request_body_length = octet_length(t.body) AND a.url = $2) AS body_logged,
              bool_and(a.response_body_summary = '{"code":0}' AND a.error_reason IS NULL AND a.next_retry_time IS NULL) AS response_logged,
              min(a.request_headers_summary ->> 'X-Nonce') AS nonce, min(extract(epoch FROM a.created_at) * 1000) AS attempt_ms
         FROM callback_tasks t LEFT JOIN callback_attempts a ON a.callback_task_id = t.id
        WHERE t.application_id = $1
        GROUP BY t.id`,
      { bind: [appId, callbackUrl], type: QueryTypes.SELECT },
    );
    const byId = new Map(rows.map((r) => [Number(r.biz_id), r]));
    const bad = new Tally();
    const enqueued = dispatcher.enqueued;
    const arrivals = dispatcher.arrivals;
    const cancelled = dispatcher.cancelled;
    const wanted = new Set(enqueued);
    if (wanted.size !== enqueued.length) bad.add('event ids enqueued twice (benchmark bug)', String(enqueued.length - wanted.size));
    for (const id of enqueued) {
      const r = byId.get(id);
      if (!r) {
        bad.add('tasks missing from callback_tasks', String(id));
        continue;
      }
      if (cancelled.has(id)) {
        // cancelled while still queued: never attempted, never received
        if (r.status !== 'FAILED' || r.attempts !== 0 || r.n_attempts !== 0 || !r.unqueued) bad.add('cancelled tasks that had been attempted or are still queued', `${id}: ${r.status}, attempts ${r.attempts}`);
        if (arrivals.has(id)) bad.add('cancelled tasks the receiver got', String(id));
        continue;
      }
      if (r.status !== 'SUCCESS' || r.attempts !== 1 || r.retry_times !== 0 || !r.unqueued) bad.add('tasks not SUCCESS after one attempt with no queue row left', `${id}: ${r.status}, attempts ${r.attempts}, retries ${r.retry_times}, queued ${!r.unqueued}`);
      if (r.n_attempts !== 1) bad.add('tasks without exactly one attempt row', `${id}: ${r.n_attempts}`);
      else if (!r.accepted || r.attempt_no !== 1 || r.response_status !== 200 || !r.response_logged) bad.add('attempts not logged as accepted HTTP 200 {"code":0}', String(id));
      else if (!r.body_logged) bad.add('attempts whose logged URL, body length or SHA-256 is not the task\'s', String(id));
      if (r.body_sha !== crypto.createHash('sha256').update(callbackBody(id)).digest('hex')) bad.add('task bodies that are not the event\'s bytes', String(id));
      const got = arrivals.get(id) ?? [];
      if (got.length === 0) bad.add('tasks the receiver never got', String(id));
      else if (got.length > 1) bad.add('tasks the receiver got more than once', `${id} x${got.length}`);
      else if (r.nonce !== null && got[0]!.nonce !== r.nonce) bad.add('attempts whose logged X-Nonce is not the one received', `${id}: ${r.nonce} vs ${got[0]!.nonce}`);
    }
    for (const r of rows) if (!wanted.has(Number(r.biz_id))) bad.add('tasks this benchmark did not write', r.biz_id);
    for (const id of arrivals.keys()) if (!wanted.has(id)) bad.add('dispatcher deliveries of events it was not given', String(id));
    const dbLines = bad.lines();
    failures.push(...dbLines.map((l) => `database: ${l}`));

    // graphile-worker: every job delivered once with exactly one attempt row, logged as what the receiver got; no job left.
    const { attemptRows: gAttemptRows, problems: gProblems } = await checkGraphileDatabase(gCtx, [gDefault, gBatched]);
    if (nonceRepeats) gProblems.add('nonces repeated across the whole benchmark', String(nonceRepeats));
    const gLines = gProblems.lines();
    failures.push(...gLines.map((l) => `database (graphile): ${l}`));
    const gJobs = gDefault.enqueued.length + gBatched.enqueued.length;
    const gCancelled = gDefault.cancelled.size + gBatched.cancelled.size;

    // Latencies (same machine clock: created_at from the producer's Date, arrival from the receiver's Date.now()).
    const latencyOf = (o: OpenLoopRun): LatencyRun => {
      const dueToSent: number[] = [];
      const dueToClaimed: number[] = [];
      const claimedToArrival: number[] = [];
      const producerTx: number[] = [];
      for (const id of o.ids) {
        const r = byId.get(id);
        const a = arrivals.get(id)?.[0];
        if (!r || !a) continue;
        dueToSent.push(a.at - r.created_ms);
        if (r.attempt_ms !== null) {
          dueToClaimed.push(r.attempt_ms - r.created_ms);
          claimedToArrival.push(a.at - r.attempt_ms);
        }
        const d = o.txDone.get(id);
        if (d !== undefined) producerTx.push(d - r.created_ms);
      }
      return { ...o.base, basis: o.basis, dueToSent: dist(dueToSent), dueToClaimed: dist(dueToClaimed), claimedToArrival: dist(claimedToArrival), producerTx: dist(producerTx) };
    };
    const latencies = openLoops.map(latencyOf);
    const lat = latencies[0]!;
    const p99 = lat.dueToSent.p99;
    const ratioMet = ratio >= GOAL_RATIO_PERCENT;
    const vsGraphileMet = vsGraphile >= GOAL_VS_GRAPHILE;
    const latencyMet = p99 !== null && p99 <= GOAL_P99_MS && lat.notDelivered === 0;

    // 6. Report.
    const cpuCols = (c: CpuRecord) => [fmtPct(c.client), fmtPct(c.target), fmtPct(c.receiver), fmtPct(c.postgres), fmtPct(c.other)];
    const actCols = (a: PgActivity | null) => [a ? a.connections.toFixed(1) : '-', a ? a.active.toFixed(1) : '-', a ? a.idleInTransaction.toFixed(1) : '-'];
    out('');
    out(
      table(
        ['round', 'target', 'deliveries/s', 'window s', 'in window', 'requests', 'backlog', 'cancelled', 'cpu bench', 'cpu sender', 'cpu receiver', 'cpu pg', 'cpu other', 'sender µs/del', 'pg µs/del', 'pg conns', 'active', 'idle in tx'],
        [...warmups, ...runs].map((r) => [
          String(r.round),
          r.target,
          fmtInt(r.rate),
          r.windowS.toFixed(1) + (r.backlogRanOut ? '*' : ''),
          fmtInt(r.inWindow),
          fmtInt(r.received),
          r.backlog === null ? '-' : fmtInt(r.backlog),
          r.cancelled === null ? '-' : fmtInt(r.cancelled),
          ...cpuCols(r.cpuPercent),
          fmtUs(r.senderUsPerDelivery),
          fmtUs(r.postgresUsPerDelivery),
          ...actCols(r.pgActivity),
        ]),
        [false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
      ),
    );
    if ([...warmups, ...runs].some((r) => r.backlogRanOut)) out('  * the backlog was delivered before the window ended: the rate is over the shorter window');
    out('');
    const usOf = (t: TargetName, f: (r: Run) => number | null) => fmtUs(medianOrNull(runs.filter((r) => r.target === t).map(f)));
    const x = (v: number) => `${v.toFixed(2)}x`;
    const summaryRow = (t: TargetName, rates: number[], vsBare: string, dispVs: string, goal: string, result: string) => [
      t, fmtInt(median(rates)), rates.map(fmtInt).join(', '), vsBare, dispVs, usOf(t, (r) => r.senderUsPerDelivery), usOf(t, (r) => r.postgresUsPerDelivery), goal, result,
    ];
    const pctOfBare = (rates: number[]) => `${((median(rates) / median(bareRates)) * 100).toFixed(1)} %`;
    out(
      table(
        ['target', 'median deliveries/s', 'per round', 'vs bare POST', 'dispatcher vs it', 'sender µs/del', 'pg µs/del', 'goal', 'result'],
        [
          summaryRow('bare POST', bareRates, '100 %', '-', '-', '-'),
          summaryRow('dispatcher', dispRates, `${ratio.toFixed(1)} %`, '-', `>= ${GOAL_RATIO_PERCENT} % of bare POST`, ratioMet ? 'met' : 'NOT MET'),
          summaryRow('graphile-worker', gRates, pctOfBare(gRates), x(vsGraphile), `dispatcher >= ${GOAL_VS_GRAPHILE}x`, vsGraphileMet ? 'met' : 'NOT MET'),
          summaryRow('graphile batched', gbRates, pctOfBare(gbRates), x(vsGraphileBatched), '-', '-'),
        ],
        [false, true, false, true, true, true, true, false, false],
      ),
    );
    out(`ratio dispatcher/bare POST (median deliveries/s): ${ratio.toFixed(1)} %  (per round: ${perRound.map((p) => p.toFixed(1) + ' %').join(', ')})`);
    out(`ratio dispatcher/graphile-worker with the log (median deliveries/s): ${x(vsGraphile)}  (per round: ${perRoundVsG.map(x).join(', ')})`);
    out(`ratio dispatcher/graphile batched (localQueue, batched completion): ${x(vsGraphileBatched)}  (per round: ${perRoundVsGb.map(x).join(', ')})`);
    out('');
    out(
      `end-to-end capacity: ${fmtInt(capacity.deliveredPerS)} deliveries/s (${((capacity.deliveredPerS / median(dispRates)) * 100).toFixed(0)} % of the dispatch-only median ${fmtInt(median(dispRates))}) ` +
        `while ${CAPACITY_PRODUCERS} producers wrote ${fmtInt(capacity.writtenPerS)} tasks/s through the outbox; ` +
        `cpu: bench (producers) ${fmtPct(capacity.cpuPercent.client)}, workers ${fmtPct(capacity.cpuPercent.target)}, receiver ${fmtPct(capacity.cpuPercent.receiver)}, pg ${fmtPct(capacity.cpuPercent.postgres)}, other ${fmtPct(capacity.cpuPercent.other)}` +
        (capacity.cancelled ? `; ${fmtInt(capacity.cancelled)} tasks not delivered within the grace period (cancelled)` : ''),
    );
    for (const [i, l] of latencies.entries()) {
      const o = openLoops[i]!;
      out('');
      out(
        `latency run${i === 0 ? ' (the goal)' : ' (reported, no goal)'}: ${fmtInt(l.offeredPerS)} tasks/s offered (${loadPercent} % of the ${l.basis}), ${fmtInt(l.achievedPerS)}/s written, ` +
          `${fmtInt(l.tasks)} tasks in ${fmtInt(l.transactions)} transactions of ${txTasks}; producer at most ${fmtInt(l.producerMaxLateMs)} ms behind schedule`,
      );
      if (l.notDelivered) out(`  ${fmtInt(l.notDelivered)} tasks NOT DELIVERED within ${o.graceS} s after the producer stopped (cancelled; the dispatcher fell behind)`);
      out(
        `  cpu: bench (producer) ${fmtPct(l.cpuPercent.client)}, workers ${fmtPct(l.cpuPercent.target)}, receiver ${fmtPct(l.cpuPercent.receiver)}, ` +
          `pg ${fmtPct(l.cpuPercent.postgres)}, other ${fmtPct(l.cpuPercent.other)}; workers ${fmtUs(l.senderUsPerDelivery)} µs/del, pg ${fmtUs(l.postgresUsPerDelivery)} µs/del`,
      );
      out(
        table(
          ['ms', 'p50', 'p95', 'p99', 'max', 'n'],
          (
            [
              ['due -> sent (created_at -> receiver arrival)', l.dueToSent],
              ['  due -> claimed (created_at -> attempt start)', l.dueToClaimed],
              ['  claimed -> arrival', l.claimedToArrival],
              ['producer transaction (created_at -> COMMIT acknowledged)', l.producerTx],
            ] as const
          ).map(([n, d]) => [n, ...[d.p50, d.p95, d.p99, d.max].map((v) => (v === null ? '-' : fmtMs(v))), fmtInt(d.n)]),
          [false, true, true, true, true, true],
        ),
      );
    }
    out('');
    out(
      `database: ${fmtInt(rows.length)} tasks, ${fmtInt(enqueued.length)} written by this benchmark, ${fmtInt(cancelled.size)} cancelled after their run; ` +
        (dbLines.length ? 'PROBLEMS (below)' : 'every other one SUCCESS with exactly one accepted attempt and no queue row, logged with the body, URL and nonce the receiver got; no duplicate deliveries'),
    );
    out(
      `graphile: ${fmtInt(gJobs)} jobs written (${fmtInt(gDefault.enqueued.length)} default, ${fmtInt(gBatched.enqueued.length)} batched), ${fmtInt(gCancelled)} cancelled after their run; ` +
        (gLines.length
          ? 'PROBLEMS (below)'
          : `every other one delivered once with exactly one accepted attempt row in ${GRAPHILE_ATTEMPTS}, logged with the body, URL and nonce the receiver got; no job left; no nonce repeated in ${fmtInt(allNonces.size)} signed requests`),
    );
    for (const [part, lines] of Object.entries(statements)) {
      out('');
      out(`Postgres statements by total execution time, ${part} (BENCH_PGSS):`);
      for (const l of lines) out(`  ${l}`);
    }
    out('');
    out(`goal deliveries/s >= ${GOAL_RATIO_PERCENT} % of bare POST: ${ratio.toFixed(1)} %, ${ratioMet ? 'met' : 'not met'}`);
    out(`goal dispatcher >= ${GOAL_VS_GRAPHILE}x graphile-worker with the log: ${x(vsGraphile)}, ${vsGraphileMet ? 'met' : 'not met'}`);
    out(`goal due-to-sent p99 <= ${GOAL_P99_MS} ms at ${loadPercent} % load (of the end-to-end capacity): ${p99 === null ? '-' : fmtMs(p99) + ' ms'}, ${latencyMet ? 'met' : 'not met'}`);
    const other = latencies[1]!.dueToSent.p99;
    out(`  (reported: p99 at ${loadPercent} % of the dispatch-only rate, ${fmtInt(latencies[1]!.offeredPerS)}/s: ${other === null ? '-' : fmtMs(other) + ' ms'}${latencies[1]!.notDelivered ? `, ${fmtInt(latencies[1]!.notDelivered)} not delivered` : ''})`)
    const noisy = noiseWarning<Run | LatencyRun>([...runs, ...latencies], NOISE_WARN_PERCENT);
    if (noisy) out(noisy.line);
    printFailures(out, failures);

    const round1 = (v: number) => Math.round(v * 10) / 10;
    const round2 = (v: number) => Math.round(v * 100) / 100;
    const resultsFile = writeResults('callback-delivery.json', {
      benchmark: 'callback-delivery',
      description:
        'callback deliveries/s of wcs start --workers-only (attempt log) vs a bare HTTP POST loop to the same receiver and vs graphile-worker doing the same work ' +
        '(default and batched); due-to-sent latency at a fixed rate',
      date: new Date().toISOString(),
      machine,
      settings: { ...s, loadPercent, txTasks, prefillTx, database: dbMode, dispatcher: cb, dbPoolMax: config.dbPoolMax, graphile, bodyBytes: Buffer.byteLength(callbackBody(1)) },
      warmups,
      runs,
      capacity,
      latency: latencies,
      summary: {
        bareMedianPerS: median(bareRates),
        dispatcherMedianPerS: median(dispRates),
        graphileMedianPerS: median(gRates),
        graphileBatchedMedianPerS: median(gbRates),
        ratioPercent: round1(ratio),
        perRoundRatioPercent: perRound.map(round1),
        goalRatioPercent: GOAL_RATIO_PERCENT,
        ratioGoalMet: ratioMet,
        dispatcherVsGraphile: round2(vsGraphile),
        perRoundDispatcherVsGraphile: perRoundVsG.map(round2),
        goalVsGraphile: GOAL_VS_GRAPHILE,
        vsGraphileGoalMet: vsGraphileMet,
        dispatcherVsGraphileBatched: round2(vsGraphileBatched),
        perRoundDispatcherVsGraphileBatched: perRoundVsGb.map(round2),
        endToEndCapacityPerS: Math.round(capacity.deliveredPerS),
        dueToSentP99Ms: p99,
        dueToSentP99MsAtDispatchOnlyShare: other,
        goalP99Ms: GOAL_P99_MS,
        latencyGoalMet: latencyMet,
      },
      ...(pgss ? { topStatements: statements } : {}),
      database: { tasks: rows.length, written: enqueued.length, cancelledAfterRun: cancelled.size, problems: dbLines },
      graphileDatabase: {
        jobsWritten: { default: gDefault.enqueued.length, batched: gBatched.enqueued.length },
        cancelledAfterRun: { default: gDefault.cancelled.size, batched: gBatched.cancelled.size },
        attemptRows: gAttemptRows,
        signedRequests: allNonces.size + nonceRepeats,
        problems: gLines,
      },
      correctness: { ok: failures.length === 0, failures },
      noisyRuns: (noisy?.runs ?? []).map((r) => ({ target: r.target, round: r.round, otherCpuPercent: r.cpuPercent.other })),
      ...(profileDir ? { cpuProfileDir: path.relative(process.cwd(), profileDir) } : {}),
    });
    out(`results: ${resultsFile}`);

    if (failures.length) return 1;
    if (s.enforceGoal && !(ratioMet && vsGraphileMet && latencyMet)) return 1;
    return 0;
  } finally {
    await cleanup.run();
    printProfiles(profileDir, startedAt);
  }
}

runMain(main);
