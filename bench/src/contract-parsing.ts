/**
 * Benchmark: the signed API with its requests parsed by the zod schemas of server/src/contract/
 * ("after") against the build before them, whose routes read requests with the hand-made
 * BodyReader and QueryReader ("before"), in the same run:
 *
 *   create   signed POST /api/v1/wallet/address/create for users that already exist (ETH and BTC
 *            alternately), as the address-create scenario's "repeat"                 goal >= 97 %
 *   batch    signed POST /api/v1/wallet/withdraw/batch-create, 50 test-ETH items each, every item
 *            accepted (a funded hot wallet on anvil), as the withdrawals scenario's acceptance
 *                                                                                     goal >= 97 %
 *
 * "before" is a detached git worktree of the last commit that had server/src/http/body.ts
 * (BENCH_BASELINE_REF overrides), with only its server package compiled (lib/baseline.ts); the
 * @wcs/* packages it loads are this checkout's. Both builds serve one database (their server/src/db
 * must not differ) and one test key store, each with its own applications (made by its own CLI),
 * its own funded hot wallet on one anvil and its own `wcs start --api-only`. Each round runs a
 * scenario's before and after back to back, the order swapped every round; the figure is the
 * median over the rounds of after / before req/s (a round's pair ran a few seconds apart, so a
 * machine whose other load drifts meets both alike), with the ratio of the medians beside it.
 * Every answer is checked. See bench/README.md.
 *
 *   npx tsc -b tsconfig.json && node bench/dist/contract-parsing.js      (from the repository root)
 *   BENCH_SECONDS=20 BENCH_ROUNDS=6 node bench/dist/contract-parsing.js
 */
import * as path from 'node:path';
import { getAddress, hexlify, randomBytes } from 'ethers';
import type { Client } from 'pg';
import { ANVIL_DEV_KEYS, sendNative, startAnvil } from '@wcs/adapter-evm/devnet';
import { createTestDatabase, prepareTestKeystore, testEnv } from '@wcs/server/testing';
import { AUTOCANNON_VERSION, type AutocannonRequest } from './autocannon';
import { appCreate, buildBaseline, lastCommitWith, resolveCommit, startApi } from './lib/baseline';
import { anvilArgs } from './lib/deposit-chain';
import { isCode0, load, problems, type LoadTarget, type RunRecord } from './lib/load';
import { openStatsConnection, stopCluster } from './lib/postgres';
import { checkAborted, CleanupStack, httpRequest, runMain, sleep, startChild, stopChild, withTimeout } from './lib/processes';
import { fmtInt, fmtMs, fmtPct, machineInfo, machineLine, median, noiseWarning, out, printFailures, progress, summarise, table, writeResults } from './lib/report';
import { intEnv, readLoadSettings } from './lib/settings';
import { signedJsonPost, type Credentials } from './lib/signing';
import { LIMITS_FAR_ABOVE_LOAD, removeTestKeystore, SERVER_DIR, WCS_BIN } from './lib/wcs';

const GOAL_PERCENT = 97;
const NOISE_WARN_PERCENT = 20;
const CREATE_PATH = '/api/v1/wallet/address/create';
const BATCH_PATH = '/api/v1/wallet/withdraw/batch-create';
const EVM_CHAIN_ID = 11155111;
const ETH_TOKEN_ID = 10200;
const AMOUNT = '0.000001';
const FUND_WEI = 1000n * 10n ** 18n;
const MAX_SAMPLES = 5;

type Side = 'before' | 'after';
type Scenario = 'create' | 'batch';
const SIDES: readonly Side[] = ['before', 'after'];
const SCENARIOS: readonly Scenario[] = ['create', 'batch'];

interface AddressRecord { id: number; chainCode: string; address: string; externalUserId: string; memo: string | null }

/** One build under test: its server, database, applications and the users that already exist. */
interface Service {
  side: Side;
  port: number;
  child: LoadTarget['child'];
  addrApp: Credentials;
  wdApp: Credentials & { id: number };
  users: AddressRecord[];
}

interface Tally { built: number; good: number; bad: number; samples: string[] }
const newTally = (): Tally => ({ built: 0, good: 0, bad: 0, samples: [] });
function recordBad(t: Tally, why: string): void {
  t.bad++;
  if (t.samples.length < MAX_SAMPLES) t.samples.push(why);
}

function codeZeroData<T>(body: string): T | null {
  try {
    const env = JSON.parse(body) as { code?: unknown; data?: T };
    return env.code === 0 && env.data ? env.data : null;
  } catch {
    return null;
  }
}

/** Signed creates for the service's existing users, cycling; each answer must be that user's first record. */
function createRequests(s: Service, t: Tally): AutocannonRequest[] {
  const byUser = new Map(s.users.map((u) => [`${u.chainCode}:${u.externalUserId}`, u]));
  return [{
    method: 'POST',
    path: CREATE_PATH,
    setupRequest: (req) => {
      const u = s.users[t.built++ % s.users.length]!;
      const { body, headers } = signedJsonPost(s.addrApp, CREATE_PATH, `{"chainCode":"${u.chainCode}","externalUserId":"${u.externalUserId}"}`);
      return { ...req, method: 'POST', path: CREATE_PATH, headers: { ...req.headers, ...headers }, body };
    },
    onResponse: (status, body) => {
      if (status !== 200 || !isCode0(body)) return; // counted by autocannon (non-2xx / mismatch)
      const r = codeZeroData<AddressRecord>(body);
      const want = r ? byUser.get(`${r.chainCode}:${r.externalUserId}`) : undefined;
      if (!r || !want || r.id !== want.id || r.address !== want.address || r.memo !== null) return recordBad(t, `${s.side} create answered ${body.slice(0, 200)}`);
      t.good++;
    },
  }];
}

/** Signed 50-item batches (distinct appOrderNos per side and batch); each answer must accept every item, in order. */
function batchRequests(s: Service, n: number, to: string[], t: Tally): AutocannonRequest[] {
  const prefix = s.side === 'before' ? 'b' : 'a';
  return [{
    method: 'POST',
    path: BATCH_PATH,
    setupRequest: (req) => {
      const b = t.built++;
      const items: string[] = [];
      for (let i = 0; i < n; i++) items.push(`{"appOrderNo":"${prefix}${b}.${i}","chainCode":"ETH","chainTokenId":${ETH_TOKEN_ID},"toAddress":"${to[(b * n + i) % to.length]}","amount":"${AMOUNT}"}`);
      const { body, headers } = signedJsonPost(s.wdApp, BATCH_PATH, `{"items":[${items.join(',')}]}`);
      return { ...req, method: 'POST', path: BATCH_PATH, headers: { ...req.headers, ...headers }, body };
    },
    onResponse: (status, body) => {
      if (status !== 200 || !isCode0(body)) return;
      const d = codeZeroData<{ total: number; successCount: number; items: Array<{ appOrderNo: string; success: boolean; withdraw: { status: string; amount: string } | null }> }>(body);
      const m = d ? new RegExp(`^${prefix}(\\d+)\\.0$`).exec(d.items[0]?.appOrderNo ?? '') : null;
      const ok = d && m && d.total === n && d.successCount === n &&
        d.items.every((x, i) => x.success && x.appOrderNo === `${prefix}${m[1]}.${i}` && x.withdraw?.status === 'PROCESSING' && x.withdraw.amount === AMOUNT);
      if (!ok) return recordBad(t, `${s.side} batch answered ${body.slice(0, 300)}`);
      t.good++;
    },
  }];
}

type Handler = (ctx: { app: unknown; body: unknown; query: unknown; requestId: string }) => Promise<unknown>;

/** The two route handlers of a build (its dist folder), over stub services that answer at once. */
function handlersOf(serverDist: string): Record<Scenario, Handler> {
  const record = { id: 1, chainCode: 'ETH', address: '0x0', memo: null };
  const addresses = { create: async () => record };
  const withdrawals = { accept: async (_app: unknown, items: unknown[]) => items.map((x) => (x instanceof Error ? { ok: false, error: x } : { ok: true, record })) };
  const { addressRoutes } = require(path.join(serverDist, 'http', 'address-routes.js')) as { addressRoutes: (s: unknown) => Array<{ path: string; handler: Handler }> };
  const { withdrawRoutes } = require(path.join(serverDist, 'http', 'withdraw-routes.js')) as { withdrawRoutes: (s: unknown) => Array<{ path: string; handler: Handler }> };
  const find = (routes: Array<{ path: string; handler: Handler }>, p: string) => routes.find((r) => `/api/v1${r.path}` === p)!.handler;
  return { create: find(addressRoutes(addresses), CREATE_PATH), batch: find(withdrawRoutes(withdrawals), BATCH_PATH) };
}

/**
 * The handlers alone, in this process (no HTTP, no signature, no database): µs per call of each
 * build's address/create and withdraw/batch-create handler with stub services, i.e. what reading
 * the request and shaping the answer cost. Interleaved blocks; the median block per build.
 */
async function handlerTiming(beforeDist: string, batchItems: number): Promise<Record<Scenario, Record<Side, number>>> {
  const handlers: Record<Side, Record<Scenario, Handler>> = { before: handlersOf(beforeDist), after: handlersOf(path.join(SERVER_DIR, 'dist')) };
  const to = getAddress(hexlify(randomBytes(20)));
  const bodies: Record<Scenario, unknown[]> = {
    create: Array.from({ length: 64 }, (_, i) => JSON.parse(`{"chainCode":"${i % 2 ? 'BTC' : 'ETH'}","externalUserId":"rp-${i}"}`)),
    batch: Array.from({ length: 64 }, (_, b) => JSON.parse(`{"items":[${Array.from({ length: batchItems }, (_, i) => `{"appOrderNo":"a${b}.${i}","chainCode":"ETH","chainTokenId":${ETH_TOKEN_ID},"toAddress":"${to}","amount":"${AMOUNT}"}`).join(',')}]}`)),
  };
  const calls: Record<Scenario, number> = { create: 200_000, batch: 4_000 };
  const blocks: Record<Scenario, Record<Side, number[]>> = { create: { before: [], after: [] }, batch: { before: [], after: [] } };
  for (let k = 0; k < 8; k++) {
    for (const sc of SCENARIOS) {
      for (const side of k % 2 === 0 ? SIDES : [...SIDES].reverse()) {
        const h = handlers[side][sc];
        const bs = bodies[sc];
        const t0 = process.hrtime.bigint();
        for (let i = 0; i < calls[sc]; i++) await h({ app: {}, body: bs[i % bs.length], query: {}, requestId: 'r' });
        if (k > 0) blocks[sc][side].push(Number(process.hrtime.bigint() - t0) / 1e3 / calls[sc]); // block 0 warms up
      }
    }
  }
  return { create: { before: median(blocks.create.before), after: median(blocks.create.after) }, batch: { before: median(blocks.batch.before), after: median(blocks.batch.after) } };
}

async function waitFor(what: string, cond: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    checkAborted();
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

/** A build's applications: one for the address creates, one for the withdrawals (made by that build's CLI). */
interface Apps { addrApp: Credentials; wdApp: Credentials & { id: number } }

/**
 * The shared database: each build's applications made by its own CLI, then the hot wallets of both
 * withdrawal applications made by the workers, funded on anvil and read back by the ledger.
 */
async function setUpDatabase(env: NodeJS.ProcessEnv, bins: Record<Side, string>, pg: Client, anvilUrl: string): Promise<Record<Side, Apps>> {
  const apps = {} as Record<Side, Apps>;
  for (const side of SIDES) {
    apps[side] = {
      addrApp: await appCreate(bins[side], env, `bench-contract-${side}-addr`, ['BTC', 'ETH', 'BSC', 'POLYGON']),
      wdApp: await appCreate(bins[side], env, `bench-contract-${side}-wd`, ['ETH']),
    };
  }
  const ledger = async (appId: number) =>
    (await pg.query<{ address: string; on_chain: string | null }>(
      `SELECT h.address, b.on_chain::text AS on_chain FROM hot_wallets h JOIN chains c ON c.id = h.chain_id AND c.code = 'ETH' AND c.environment = 'test'
         LEFT JOIN hot_wallet_balances b ON b.hot_wallet_id = h.id AND b.chain_token_id = $2 WHERE h.application_id = $1`,
      [appId, ETH_TOKEN_ID],
    )).rows[0];
  progress('hot wallets: made by the workers, funded on anvil, read back by the ledger');
  const workers = startChild('workers', [WCS_BIN, 'start', '--workers-only'], { ...env, WCS_LOG_LEVEL: 'error', WCS_HOT_WALLET_REFRESH_MS: '200' });
  try {
    for (const side of SIDES) {
      const id = apps[side].wdApp.id;
      await waitFor(`the ${side} hot wallet`, async () => (await ledger(id)) !== undefined, 60_000);
      await sendNative(anvilUrl, (await ledger(id))!.address, FUND_WEI, { fromPrivateKey: side === 'before' ? ANVIL_DEV_KEYS[1]! : ANVIL_DEV_KEYS[2]!, wait: true });
      await waitFor(`the ${side} ledger reading the funded balance`, async () => BigInt((await ledger(id))?.on_chain ?? '0') >= FUND_WEI, 60_000);
    }
    await waitFor('the fee quote', async () => (await pg.query(`SELECT 1 FROM withdraw_fee_quotes q JOIN chains c ON c.id = q.chain_id AND c.code = 'ETH' AND c.environment = 'test' WHERE q.chain_token_id = $1`, [ETH_TOKEN_ID])).rowCount! >= 1, 60_000);
  } finally {
    await stopChild(workers, 15_000);
  }
  return apps;
}

/** One build's API server on the shared database, and its users that already exist (created through it). */
async function startSide(side: Side, wcsBin: string, env: NodeJS.ProcessEnv, apps: Apps, users: number, nodeArgs: string[], cleanup: CleanupStack): Promise<Service> {
  const api = await startApi(`${side} api`, wcsBin, env, nodeArgs, cleanup);
  progress(`${side}: ${users} existing users (ETH and BTC alternately)`);
  const records: AddressRecord[] = [];
  for (let i = 0; i < users; i++) {
    const chainCode = i % 2 === 0 ? 'ETH' : 'BTC';
    const { body, headers } = signedJsonPost(apps.addrApp, CREATE_PATH, JSON.stringify({ chainCode, externalUserId: `rp-${i}` }));
    const res = await httpRequest(api.port, 'POST', CREATE_PATH, headers, body);
    const r = res.status === 200 ? codeZeroData<AddressRecord>(res.body) : null;
    if (!r || r.chainCode !== chainCode || r.externalUserId !== `rp-${i}`) throw new Error(`${side} create rp-${i}: HTTP ${res.status} ${res.body.slice(0, 300)}`);
    records.push(r);
  }
  return { side, port: api.port, child: api.child, ...apps, users: records };
}

async function main(): Promise<number> {
  const s = readLoadSettings();
  const batchItems = intEnv('BENCH_CONTRACT_BATCH', 50, 1, 100);
  const userCount = intEnv('BENCH_CONTRACT_USERS', 200, 2, 100_000);
  const machine = machineInfo();
  const cleanup = new CleanupStack();
  const failures: string[] = [];
  try {
    const commit = process.env.BENCH_BASELINE_REF ? resolveCommit(process.env.BENCH_BASELINE_REF) : lastCommitWith('server/src/http/body.ts');
    out('request parsing by the zod schemas (server/src/contract) vs the build before them (BodyReader/QueryReader), same run');
    out(machineLine(machine));
    out(`load: autocannon ${AUTOCANNON_VERSION}, ${s.connections} connections, pipelining ${s.pipelining}, ${s.seconds} s per run, ${s.warmupSeconds} s warm-up per target, ${s.rounds} rounds; batches of ${batchItems} items; ${userCount} existing users`);
    const base = await buildBaseline(commit, cleanup);
    out(`before: ${base.commit.slice(0, 12)} "${base.subject}" (worktree, server compiled in ${base.buildSeconds.toFixed(0)} s); after: this checkout's build`);
    out(`server/src files that differ between them: ${base.changedServerFiles.length} (${base.changedServerFiles.join(', ')})`);

    // one database serves both: the baseline's migrations must be the first of this checkout's, unchanged (later
    // ones only add what the baseline never reads; the database is migrated to this checkout's last)
    const migrationsOf = (dist: string) => (require(path.join(dist, 'db', 'migrations.js')) as { MIGRATIONS: ReadonlyArray<{ version: number; sql?: unknown }> }).MIGRATIONS;
    const ours = migrationsOf(path.join(SERVER_DIR, 'dist'));
    const theirs = migrationsOf(path.join(base.dir, 'server', 'dist'));
    if (theirs.length > ours.length || theirs.some((m, i) => JSON.stringify(m) !== JSON.stringify(ours[i]))) {
      throw new Error('the baseline\'s migrations are not the first of this checkout\'s: the two builds cannot share one database');
    }
    if (theirs.length < ours.length) out(`database: this checkout's migrations ${ours.slice(theirs.length).map((m) => m.version).join(', ')} are beyond the baseline's (added after it; the baseline's requests do not read them)`);

    cleanup.push('stop test cluster', () => stopCluster());
    const db = await createTestDatabase();
    cleanup.push('drop database', () => withTimeout(db.drop(), 30_000));
    cleanup.push('remove test key store', async () => removeTestKeystore(await prepareTestKeystore()));
    await prepareTestKeystore();
    progress('starting anvil');
    const anvil = await startAnvil({ chainId: EVM_CHAIN_ID, blockTime: 0.5, extraArgs: anvilArgs(1_000) });
    cleanup.push('stop anvil', () => anvil.stop());
    const env: NodeJS.ProcessEnv = { ...process.env, ...testEnv(db.url, { WCS_LOG_LEVEL: process.env.WCS_LOG_LEVEL ?? 'warn', ...LIMITS_FAR_ABOVE_LOAD }), WCS_RPC_TEST_ETH: anvil.url };
    const pg = await openStatsConnection(db.url, cleanup, 'bench pg');
    if (!pg) throw new Error('no connection to the benchmark database');
    const apps = await setUpDatabase(env, { before: base.wcsBin, after: WCS_BIN }, pg, anvil.url);
    // one after the other: the second server starts once the first has made its users' keys (the key store's marks are read at start)
    const services = {} as Record<Side, Service>;
    for (const side of SIDES) services[side] = await startSide(side, side === 'before' ? base.wcsBin : WCS_BIN, env, apps[side], userCount, s.serverNodeArgs, cleanup);

    const to = Array.from({ length: 4096 }, () => getAddress(hexlify(randomBytes(20))));
    const tallies = {} as Record<string, Tally>;
    const targets = {} as Record<string, LoadTarget>;
    for (const sc of SCENARIOS) {
      for (const side of SIDES) {
        const name = `${sc} ${side}`;
        const t = (tallies[name] = newTally());
        const svc = services[side];
        targets[name] = { name, port: svc.port, child: svc.child, requests: () => (sc === 'create' ? createRequests(svc, t) : batchRequests(svc, batchItems, to, t)) };
      }
    }
    const lo = { connections: s.connections, pipelining: s.pipelining };
    const one = async (name: string, round: number | 'warm-up', seconds: number) => {
      const t = tallies[name]!;
      const [good0, bad0] = [t.good, t.bad];
      const r = await load(targets[name]!, round, seconds, lo);
      await sleep(1000); // requests in flight when the load stopped land now
      r.checks = { goodAnswers: t.good - good0, badAnswers: t.bad - bad0 };
      return r;
    };
    const warmups: RunRecord[] = [];
    const runs: RunRecord[] = [];
    if (s.warmupSeconds > 0) for (const name of Object.keys(targets)) warmups.push(await one(name, 'warm-up', s.warmupSeconds));
    for (let round = 1; round <= s.rounds; round++) {
      for (const sc of SCENARIOS) {
        for (const side of round % 2 === 1 ? SIDES : [...SIDES].reverse()) {
          const name = `${sc} ${side}`;
          progress(`round ${round}/${s.rounds}: ${name} (${s.seconds} s)`);
          const r = await one(name, round, s.seconds);
          runs.push(r);
          progress(`  ${fmtInt(r.rps)} req/s, p50 ${fmtMs(r.latencyMs.p50)} ms, p99 ${fmtMs(r.latencyMs.p99)} ms, non-2xx ${r.non2xx}`);
        }
      }
    }

    // correctness: autocannon's counters, every answer checked, and each database holds exactly the orders answered
    failures.push(...[...warmups, ...runs].flatMap(problems));
    for (const [name, t] of Object.entries(tallies)) if (t.bad) failures.push(`${name}: ${t.bad} wrong answers, e.g. ${t.samples.join(' | ')}`);
    for (const side of SIDES) {
      const svc = services[side];
      const answered = tallies[`batch ${side}`]!.good * batchItems;
      const [d] = (await pg.query<{ n: number; distinct_nos: number; not_processing: number }>(
        `SELECT count(*)::int AS n, count(DISTINCT app_order_no)::int AS distinct_nos, count(*) FILTER (WHERE status <> 'PROCESSING')::int AS not_processing FROM withdrawals WHERE application_id = $1`,
        [svc.wdApp.id],
      )).rows;
      if (d!.n < answered || d!.distinct_nos !== d!.n || d!.not_processing !== 0) failures.push(`${side} database: ${d!.n} orders (${d!.distinct_nos} distinct, ${d!.not_processing} not PROCESSING) for ${answered} items answered`);
    }

    out('');
    out(table(
      ['round', 'target', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'non-2xx', 'cpu client', 'cpu target', 'cpu pg', 'cpu other', 'target µs/req'],
      [...warmups, ...runs].map((r) => [
        String(r.round), r.target, fmtInt(r.rps), fmtMs(r.latencyMs.p50), fmtMs(r.latencyMs.p99), fmtInt(r.requests), String(r.non2xx),
        fmtPct(r.cpuPercent.client), fmtPct(r.cpuPercent.target), fmtPct(r.cpuPercent.postgres), fmtPct(r.cpuPercent.other),
        r.targetCpuUsPerRequest === null ? '-' : String(Math.round(r.targetCpuUsPerRequest)),
      ]),
      [false, false, true, true, true, true, true, true, true, true, true, true],
    ));
    out('');
    const results: Record<string, unknown> = {};
    let goalsMet = true;
    for (const sc of SCENARIOS) {
      const sum = { before: summarise(runs.filter((r) => r.target === `${sc} before`)), after: summarise(runs.filter((r) => r.target === `${sc} after`)) };
      const perRound = Array.from({ length: s.rounds }, (_, i) => {
        const at = (side: Side) => runs.find((r) => r.target === `${sc} ${side}` && r.round === i + 1)!.rps;
        return (at('after') / at('before')) * 100;
      });
      const ratio = median(perRound);
      const ofMedians = (sum.after.rpsMedian / sum.before.rpsMedian) * 100;
      const cpu = (x: typeof sum.before) => (x.targetCpuUsPerRequestMedian === null ? '-' : `${Math.round(x.targetCpuUsPerRequestMedian)} µs`);
      goalsMet &&= ratio >= GOAL_PERCENT;
      results[sc] = {
        before: sum.before, after: sum.after, ratioPercent: Math.round(ratio * 10) / 10, perRoundRatioPercent: perRound.map((p) => Math.round(p * 10) / 10),
        ratioOfMediansPercent: Math.round(ofMedians * 10) / 10, goalPercent: GOAL_PERCENT, goalMet: ratio >= GOAL_PERCENT,
      };
      out(`${sc}: after/before ${ratio.toFixed(1)} % (median of the rounds: ${perRound.map((p) => p.toFixed(1) + ' %').join(', ')}; ratio of the median req/s ${ofMedians.toFixed(1)} %, ${fmtInt(sum.after.rpsMedian)} / ${fmtInt(sum.before.rpsMedian)}; server CPU per request ${cpu(sum.after)} / ${cpu(sum.before)})  goal >= ${GOAL_PERCENT} %: ${ratio >= GOAL_PERCENT ? 'met' : 'not met'}`);
    }
    progress('the handlers alone, in this process, with stub services');
    const handlers = await handlerTiming(path.join(base.dir, 'server', 'dist'), batchItems);
    for (const sc of SCENARIOS) {
      const h = handlers[sc];
      (results[sc] as Record<string, unknown>).handlerUsPerCall = { before: Math.round(h.before * 100) / 100, after: Math.round(h.after * 100) / 100 };
      out(`${sc} handler alone (stub services, no HTTP): ${h.after.toFixed(2)} µs after, ${h.before.toFixed(2)} µs before per call (+${(h.after - h.before).toFixed(2)} µs)`);
    }
    const noisy = noiseWarning(runs, NOISE_WARN_PERCENT);
    if (noisy) out(noisy.line);
    printFailures(out, failures);
    out(`results: ${writeResults('contract-parsing.json', { benchmark: 'contract-parsing', date: new Date().toISOString(), machine, settings: { ...s, batchItems, userCount }, baseline: { commit: base.commit, subject: base.subject, changedServerFiles: base.changedServerFiles }, warmups, runs, results, correctness: { ok: failures.length === 0, failures } })}`);
    if (failures.length) return 1;
    return s.enforceGoal && !goalsMet ? 1 : 0;
  } finally {
    await cleanup.run();
  }
}

runMain(main);
