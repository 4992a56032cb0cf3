/**
 * Benchmark: withdrawals (the issue "Withdrawals"), two figures, on anvil serving the catalogue's
 * test ETH (chain id 11155111) with funded hot wallets:
 *
 * 1. Acceptance: items accepted per second in 50-item batches through the signed API
 *    (POST /api/v1/wallet/withdraw/batch-create, new appOrderNos every request, valid test ETH
 *    items that the ledger accepts), as a ratio to the requests per second of the signed
 *    GET /api/v1/wallet/support/chains of the same server in the same run (goal >= 30 %).
 *    `wcs start --api-only` alone: no workers process runs during this part.
 * 2. Payouts: withdrawals broadcast and confirmed per second from one hot wallet by the payout
 *    worker (`wcs start --workers-only`, WCS_WITHDRAW_POLL_MS low), from the first batch of N
 *    orders being sent to the API until all N are SUCCESS (3 confirmations), as a ratio to a
 *    bare ethers send loop (Wallet, nonce counter, sendTransaction without waiting, then every
 *    receipt at 3 confirmations) on the same anvil in the same run (goal >= 50 %). anvil mines
 *    on an interval (a block every BENCH_WD_BLOCK_MS, 50 ms, with every transaction waiting in its
 *    pool) during both runs.
 * 3. The chain check before signing (docs/transfers.md): the payouts of (2) by the service with
 *    WCS_TRANSFER_CHAIN_CHECK=on as a ratio to the same with it off, back to back in each round
 *    (goal >= 90 %). Part `chaincheck`.
 *
 * Every answer, order, transaction and callback is checked. See bench/README.md.
 *
 *   npm run bench:withdrawals              (from the repository root)
 *   BENCH_WD_PARTS=payout BENCH_CPU_PROF=1 BENCH_PGSS=1 node bench/dist/withdrawals.js
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { getAddress, hexlify, JsonRpcProvider, randomBytes, Wallet } from 'ethers';
import { ANVIL_DEV_KEYS, sendNative, startAnvil, type AnvilDevnet } from '@wcs/adapter-evm/devnet';
import { testEnv } from '@wcs/server/testing';
import { AUTOCANNON_VERSION, type AutocannonRequest } from './autocannon';
import { rpc, rpcBatch, Receiver, signatureProblem } from './lib/evm';
import { CLK_TCK, cpuPercent, cpuSnapshot, procTicks, type CpuPercent, type CpuSnapshot } from './lib/cpu';
import { anvilArgs } from './lib/deposit-chain';
import { isCode0, load, problems, type LoadTarget, type RunRecord } from './lib/load';
import { openStatsConnection, requestStatementStats, resetStatementStats, topStatements } from './lib/postgres';
import { checkAborted, CleanupStack, httpRequest, runMain, sleep, startChild, stopChild, type Child } from './lib/processes';
import {
  fmtInt, fmtMs, fmtPct, fmtUs, machineInfo, machineLine, median, medianOrNull, noiseWarning, out, percentile, progress, RESULTS_DIR, summarise, table, printFailures, writeResults,
} from './lib/report';
import { intEnv, readLoadSettings, type LoadSettings } from './lib/settings';
import { signedHeaders, signedJsonPost } from './lib/signing';
import { createAppViaCli, prepareBenchStorage, printProfiles, setCallbackViaCli, startApiServer, WCS_BIN, LIMITS_FAR_ABOVE_LOAD } from './lib/wcs';

const GOAL_ACCEPT_PERCENT = 30;
const GOAL_PAYOUT_PERCENT = 50;
/** The payout figure with the chain check before signing on, as a share of the same with it off (WCS_TRANSFER_CHAIN_CHECK). */
const GOAL_CHAIN_CHECK_PERCENT = 90;
const NOISE_WARN_PERCENT = 20;
const CHAINS_PATH = '/api/v1/wallet/support/chains';
const BATCH_PATH = '/api/v1/wallet/withdraw/batch-create';
const CALLBACK_PATH = '/withdraw-cb';
/** The catalogue's test ETH (Sepolia definition): the service checks the node's chain id. */
const EVM_CHAIN_ID = 11155111;
const ETH_TOKEN_ID = 10200;
/** Confirmations of test ETH in the catalogue: SUCCESS at tip - block + 1 >= 3. */
const CONFIRMATIONS = 3;
const ETHER = 10n ** 18n;
const AMOUNT = '0.000001';
const AMOUNT_WEI = 10n ** 12n;
const FUND_WEI = 1000n * ETHER;
/**
 * States anvil keeps (`--prune-history N`, lib/deposit-chain's anvilArgs): two minutes of blocks,
 * at least 1,000. The workers' deposit scan starts at the tip and follows it, tracing the blocks
 * with transactions it reads (the default): it never needs an older state.
 */
const keptStatesWd = (blockMs: number) => Math.max(1_000, Math.ceil(120_000 / blockMs));
/** Who funds which hot wallet, and the bare loop's sender (anvil dev accounts, 10,000 ETH each). */
const FUNDER = { accept: ANVIL_DEV_KEYS[1]!, payout: ANVIL_DEV_KEYS[2]! };
const BARE_KEY = ANVIL_DEV_KEYS[5]!;
const MAX_SAMPLES = 5;

// ---------------------------------------------------------------- settings

interface Settings extends LoadSettings {
  batchItems: number;
  payouts: number;
  payoutRounds: number;
  warmupOrders: number;
  pollMs: number;
  blockMs: number;
  parts: { accept: boolean; payout: boolean; chaincheck: boolean };
  pgss: boolean;
}

function readSettings(): Settings {
  const parts = (process.env.BENCH_WD_PARTS ?? 'accept,payout,chaincheck').split(',').map((x) => x.trim());
  const batchItems = intEnv('BENCH_WD_BATCH', 50, 1, 100);
  return {
    ...readLoadSettings(),
    batchItems,
    payouts: intEnv('BENCH_WD_PAYOUTS', 300, 1, 100_000),
    payoutRounds: intEnv('BENCH_WD_PAYOUT_ROUNDS', 3, 1, 50),
    warmupOrders: intEnv('BENCH_WD_WARMUP_ORDERS', 30, 0, 10_000),
    pollMs: intEnv('BENCH_WD_POLL_MS', 50, 10, 600_000),
    blockMs: intEnv('BENCH_WD_BLOCK_MS', 50, 10, 60_000),
    parts: { accept: parts.includes('accept'), payout: parts.includes('payout'), chaincheck: parts.includes('chaincheck') },
    pgss: process.env.BENCH_PGSS === '1',
  };
}

// ---------------------------------------------------------------- JSON-RPC (global fetch, keep-alive)

const pendingNonce = async (url: string, address: string) => Number(BigInt(await rpc<string>(url, 'eth_getTransactionCount', [address, 'pending'])));
const tipOf = async (url: string) => Number(BigInt(await rpc<string>(url, 'eth_blockNumber')));
const freshAddress = () => getAddress(hexlify(randomBytes(20)));

// ---------------------------------------------------------------- the merchant's callback receiver (in this process)

interface WithdrawEvent {
  event: string;
  id: number;
  appOrderNo: string;
  txHash: string;
  status: string;
  amount: string;
  toAddress: string;
}

// ---------------------------------------------------------------- batches

interface ItemResult {
  appOrderNo: string | null;
  success: boolean;
  withdraw: { id: number; status: string; amount: string; chainCode: string; chainTokenId: number; toAddress: string } | null;
  errorCode: number | null;
  errorMessage: string | null;
}
interface BatchResult {
  total: number;
  successCount: number;
  failedCount: number;
  items: ItemResult[];
}

/** The JSON body of one batch: items `<prefix><batch>.<i>`, test ETH, AMOUNT each, to the given addresses. */
function batchJson(prefix: string, batch: number, to: (i: number) => string, n: number): string {
  const items: string[] = [];
  for (let i = 0; i < n; i++) {
    items.push(`{"appOrderNo":"${prefix}${batch}.${i}","chainCode":"ETH","chainTokenId":${ETH_TOKEN_ID},"toAddress":"${to(i)}","amount":"${AMOUNT}"}`);
  }
  return `{"items":[${items.join(',')}]}`;
}

/** Null when the answer accepted every item of batch `batch` (in order, PROCESSING, the right amount), else why not. */
function batchProblem(body: string, prefix: string, batch: number | null, n: number): { problem: string | null; batch: number | null } {
  let d: BatchResult;
  try {
    const env = JSON.parse(body) as { code?: unknown; data?: BatchResult };
    if (env.code !== 0 || !env.data || !Array.isArray(env.data.items)) return { problem: `not a code 0 batch answer: ${body.slice(0, 200)}`, batch: null };
    d = env.data;
  } catch {
    return { problem: `unparsable answer ${body.slice(0, 200)}`, batch: null };
  }
  const m = new RegExp(`^${prefix.replace('.', '\\.')}(\\d+)\\.0$`).exec(d.items[0]?.appOrderNo ?? '');
  const b = batch ?? (m ? Number(m[1]) : null);
  if (b === null) return { problem: `first item ${JSON.stringify(d.items[0]?.appOrderNo)} is not of a batch this benchmark sent`, batch: null };
  if (d.total !== n || d.successCount !== n || d.failedCount !== 0 || d.items.length !== n) {
    const f = d.items.find((x) => !x.success);
    return { problem: `batch ${b}: total ${d.total}, successCount ${d.successCount}, failedCount ${d.failedCount}${f ? `, e.g. ${f.errorCode} ${f.errorMessage}` : ''}`, batch: b };
  }
  for (let i = 0; i < n; i++) {
    const x = d.items[i]!;
    const w = x.withdraw;
    if (!x.success || x.appOrderNo !== `${prefix}${b}.${i}` || x.errorCode !== null || !w || w.status !== 'PROCESSING' || w.amount !== AMOUNT || w.chainCode !== 'ETH' || w.chainTokenId !== ETH_TOKEN_ID) {
      return { problem: `batch ${b} item ${i}: ${JSON.stringify(x).slice(0, 300)}`, batch: b };
    }
  }
  return { problem: null, batch: b };
}

interface BatchTally {
  built: number;
  good: number;
  bad: number;
  badSamples: string[];
  answered: Set<number>;
}

function recordBad(t: BatchTally, why: string): void {
  t.bad++;
  if (t.badSamples.length < MAX_SAMPLES) t.badSamples.push(why);
}

// ---------------------------------------------------------------- CPU of the payout runs

interface PayoutCpu extends CpuPercent {
  anvil: number | null;
  api: number | null;
}

interface CpuMark {
  s: CpuSnapshot;
  anvil: number | null;
  api: number | null;
}

const cpuMark = (workersPid: number | undefined, anvilPid: number | undefined, apiPid: number | undefined): CpuMark => ({ s: cpuSnapshot(workersPid), anvil: procTicks(anvilPid), api: procTicks(apiPid) });

function cpuBetween(a: CpuMark, b: CpuMark): { cpu: PayoutCpu; wallS: number } {
  const base = cpuPercent(a.s, b.s);
  const wallS = Number(b.s.at - a.s.at) / 1e9;
  const pct = (x: number | null, y: number | null) => (x === null || y === null ? null : ((y - x) / CLK_TCK / wallS) * 100);
  const anvil = pct(a.anvil, b.anvil);
  const api = pct(a.api, b.api);
  const other = base.host === null ? null : Math.max(0, base.host - base.client - (base.target ?? 0) - (base.postgres ?? 0) - (anvil ?? 0) - (api ?? 0));
  return { cpu: { ...base, anvil, api, other }, wallS };
}

/** How long to wait for orders to reach SUCCESS before giving up on a run. */
const settleTimeout = (orders: number) => 60_000 + 500 * orders;

const perItem = (pct: number | null, wallS: number, n: number) => (pct === null || n === 0 ? null : ((pct / 100) * wallS * 1e6) / n);

interface PayoutRun {
  round: number;
  target: 'bare loop' | 'service' | 'check on' | 'check off';
  orders: number;
  seconds: number;
  perS: number;
  /** service: the N orders accepted (every batch answered), seconds after t0. */
  acceptedS: number | null;
  /** service: the last order signed / broadcast / SUCCESS (the database's clock), seconds after the first order was written. */
  lastSignedS: number | null;
  lastBroadcastS: number | null;
  lastSuccessS: number | null;
  /** service: per order, created -> SUCCESS (ms). */
  orderLatencyMs: { p50: number | null; p99: number | null } | null;
  /** bare: all sent (s after t0). */
  sentS: number | null;
  callbacksDoneS: number | null;
  /** Blocks anvil mined during the run. */
  blocks: number;
  cpuPercent: PayoutCpu;
  /** CPU µs per order/transaction: the sender (workers process, or this process for the bare loop), Postgres, anvil. */
  senderUsPerOrder: number | null;
  postgresUsPerOrder: number | null;
  anvilUsPerOrder: number | null;
  windowUs: [number, number];
}

// ---------------------------------------------------------------- main

async function main(): Promise<number> {
  const pgss = requestStatementStats(); // BENCH_PGSS=1, before the cluster starts
  const st = readSettings();
  const startedAt = Date.now();
  const machine = machineInfo();
  const cleanup = new CleanupStack();
  const failures: string[] = [];
  const profileDir = path.join(RESULTS_DIR, 'profiles');
  const dbMode = process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded Postgres (test cluster)';
  let apiProfileDir: string | null = null;
  try {
    out('withdrawals on anvil: batch-create items/s vs the signed GET support/chains req/s (same server); payouts confirmed/s of the payout worker vs a bare ethers send loop (same anvil)');
    out(machineLine(machine));
    out(
      `acceptance: autocannon ${AUTOCANNON_VERSION}, ${st.batchItems} items per request, ${st.connections} connections, pipelining ${st.pipelining}, ${st.seconds} s per run, ` +
        `${st.warmupSeconds} s warm-up per target, ${st.rounds} rounds; payouts: ${fmtInt(st.payouts)} orders per run (after ${st.warmupOrders} warm-up orders), ${st.payoutRounds} rounds, ` +
        `WCS_WITHDRAW_POLL_MS=${st.pollMs}, anvil interval mining (a block every ${st.blockMs} ms); database: ${dbMode}`,
    );
    const db = await prepareBenchStorage(cleanup);

    // 1. anvil (automine), the receiver, the applications, the API server.
    progress('starting anvil');
    // interval mining for the whole run: a block every BENCH_WD_BLOCK_MS with whatever the pool holds (see the README for why not automine)
    const anvil: AnvilDevnet = await startAnvil({ chainId: EVM_CHAIN_ID, blockTime: st.blockMs / 1000, extraArgs: anvilArgs(keptStatesWd(st.blockMs)) });
    cleanup.push('stop anvil', () => anvil.stop());
    const url = anvil.url;
    const receiver = new Receiver();
    await receiver.start();
    cleanup.push('stop receiver', () => receiver.stop());
    const env: NodeJS.ProcessEnv = { ...process.env, ...testEnv(db.url, { WCS_LOG_LEVEL: process.env.WCS_LOG_LEVEL ?? 'warn', ...LIMITS_FAR_ABOVE_LOAD }), WCS_RPC_TEST_ETH: url };
    const appA = await createAppViaCli(env, 'bench-wd-accept', ['ETH']);
    const appB = await createAppViaCli(env, 'bench-wd-payout', ['ETH']);
    if (appA.id === null || appB.id === null) throw new Error('wcs app create printed no application id');
    await setCallbackViaCli(env, appB.id, 'WITHDRAW', `http://127.0.0.1:${receiver.port}${CALLBACK_PATH}`);
    const api = await startApiServer({ env: (port) => ({ ...env, PORT: String(port) }), nodeArgs: st.serverNodeArgs, cpuProf: st.cpuProf, cleanup });
    apiProfileDir = api.profileDir;
    const pg = await openStatsConnection(db.url, cleanup, 'cpu pg');
    if (!pg) throw new Error('no connection to the benchmark database');
    const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pg.query(text, params)).rows as T[];
    const chainId = (await q<{ id: number }>(`SELECT id FROM chains WHERE code = 'ETH' AND environment = 'test'`))[0]?.id;
    if (chainId === undefined) throw new Error('no test ETH chain in the catalogue');

    // workers: one process at a time (set-up, then one per payout run)
    let workers: Child | null = null;
    cleanup.push('stop workers', async () => {
      if (workers) await stopChild(workers, st.cpuProf ? 60_000 : 15_000);
    });
    const startWorkersProc = (extra: Record<string, string>, name: string, profile: boolean): Child => {
      const args = [...st.serverNodeArgs, WCS_BIN, 'start', '--workers-only'];
      if (profile) {
        fs.mkdirSync(profileDir, { recursive: true });
        args.unshift('--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=workers-${name}-${Date.now()}.cpuprofile`);
      }
      // error level: the ledger warns on every refresh about the catalogue's test USDC, which is not deployed on anvil
      workers = startChild('workers', args, { ...env, WCS_LOG_LEVEL: process.env.WCS_LOG_LEVEL ?? 'error', ...extra });
      return workers;
    };
    const stopWorkersProc = async () => {
      if (workers) await stopChild(workers, st.cpuProf ? 60_000 : 15_000);
      workers = null;
    };
    const waitFor = async (what: string, cond: () => Promise<boolean> | boolean, timeoutMs: number, everyMs = 20): Promise<void> => {
      const deadline = Date.now() + timeoutMs;
      while (!(await cond())) {
        checkAborted();
        if (workers && workers.hasExited()) throw new Error(`the workers exited while waiting for ${what}:\n${workers.tail()}`);
        if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
        await sleep(everyMs);
      }
    };
    type Ledger = { hot_wallet_id: number; address: string; on_chain: string | null; reserved: string | null; observed_at: Date | null };
    const ledgerOf = async (appId: number): Promise<Ledger | undefined> =>
      (
        await q<Ledger>(
          `SELECT h.id AS hot_wallet_id, h.address, b.on_chain::text AS on_chain, b.reserved::text AS reserved, b.observed_at
             FROM hot_wallets h LEFT JOIN hot_wallet_balances b ON b.hot_wallet_id = h.id AND b.chain_token_id = $3
            WHERE h.application_id = $1 AND h.chain_id = $2`,
          [appId, chainId, ETH_TOKEN_ID],
        )
      )[0];
    /** Scanner: starts at the tip (no cursor), so it never catches up on the blocks of other runs. */
    const resetScan = async () => {
      await pg.query('DELETE FROM scan_blocks WHERE chain_id = $1', [chainId]);
      await pg.query('DELETE FROM scan_cursors WHERE chain_id = $1', [chainId]);
    };

    // 2. The hot wallets: made by the workers' ledger, funded from anvil dev accounts, read back by the ledger.
    progress('set-up: the workers make the hot wallets; funding them');
    await resetScan();
    startWorkersProc({ WCS_HOT_WALLET_REFRESH_MS: '200' }, 'setup', false);
    await waitFor('the hot wallets', async () => (await ledgerOf(appA.id!)) !== undefined && (await ledgerOf(appB.id!)) !== undefined, 60_000, 50);
    const hotA = (await ledgerOf(appA.id))!;
    const hotB = (await ledgerOf(appB.id))!;
    if (hotA.address.toLowerCase() === hotB.address.toLowerCase()) throw new Error('both applications have the same hot wallet');
    await sendNative(url, hotA.address, FUND_WEI, { fromPrivateKey: FUNDER.accept, wait: true });
    await sendNative(url, hotB.address, FUND_WEI, { fromPrivateKey: FUNDER.payout, wait: true });
    await waitFor('the ledger reading the funded balances', async () => {
      const [a, b] = [await ledgerOf(appA.id!), await ledgerOf(appB.id!)];
      return a?.on_chain === FUND_WEI.toString() && b?.on_chain === FUND_WEI.toString();
    }, 60_000, 50);
    await waitFor('the fee quote', async () => (await q('SELECT 1 FROM withdraw_fee_quotes WHERE chain_id = $1 AND chain_token_id = $2', [chainId, ETH_TOKEN_ID])).length === 1, 60_000, 50);
    await stopWorkersProc();
    const [{ max_fee: quote }] = await q<{ max_fee: string }>('SELECT max_fee::text AS max_fee FROM withdraw_fee_quotes WHERE chain_id = $1 AND chain_token_id = $2', [chainId, ETH_TOKEN_ID]);
    const perOrderReserve = AMOUNT_WEI + BigInt(quote!);
    out(
      `hot wallets (test ETH): acceptance app ${appA.id} ${hotA.address}, payout app ${appB.id} ${hotB.address}, each funded with ${FUND_WEI / ETHER} ETH from an anvil dev account; ` +
        `an order reserves ${AMOUNT} ETH + the fee quote ${(Number(BigInt(quote!)) / 1e18).toExponential(3)} ETH: room for ${fmtInt(Number(FUND_WEI / perOrderReserve))} orders each`,
    );

    const statements: Record<string, string[]> = {};
    const warmups: RunRecord[] = [];
    const runs: RunRecord[] = [];
    let acceptSummary: Record<string, unknown> | null = null;
    let acceptDb: Record<string, unknown> | null = null;

    // ------------------------------------------------------------ figure 1: acceptance
    if (st.parts.accept) {
      progress('acceptance: signed GET support/chains (baseline) and batch-create, alternately');
      const toPool = Array.from({ length: 4096 }, freshAddress);
      const baseTally = { built: 0 };
      const tally: BatchTally = { built: 0, good: 0, bad: 0, badSamples: [], answered: new Set() };
      const n = st.batchItems;
      const targets: Record<'baseline' | 'batch', LoadTarget> = {
        baseline: {
          name: 'baseline', port: api.port, child: api.child,
          requests: () => [{
            method: 'GET', path: CHAINS_PATH,
            setupRequest: (req) => {
              baseTally.built++;
              Object.assign(req.headers, signedHeaders(appA, 'GET', CHAINS_PATH));
              return req;
            },
          }],
        },
        batch: {
          name: 'batch', port: api.port, child: api.child,
          requests: (): AutocannonRequest[] => [{
            method: 'POST', path: BATCH_PATH,
            setupRequest: (req) => {
              const b = tally.built++;
              const { body, headers } = signedJsonPost(appA, BATCH_PATH, batchJson('a', b, (i) => toPool[(b * n + i) & 4095]!, n));
              return { ...req, method: 'POST', path: BATCH_PATH, headers: { ...req.headers, ...headers }, body };
            },
            onResponse: (status, body) => {
              if (status !== 200 || !isCode0(body)) return; // counted by autocannon (non-2xx / mismatch)
              const r = batchProblem(body, 'a', null, n);
              if (r.problem) return recordBad(tally, r.problem);
              if (r.batch! >= tally.built) return recordBad(tally, `answer for batch ${r.batch}, which was never sent`);
              if (tally.answered.has(r.batch!)) return recordBad(tally, `batch ${r.batch} answered twice`);
              tally.answered.add(r.batch!);
              tally.good++;
            },
          }],
        },
      };
      const lo = { connections: st.connections, pipelining: st.pipelining };
      const one = async (name: 'baseline' | 'batch', round: number | 'warm-up', seconds: number): Promise<RunRecord> => {
        const [good0, bad0] = [tally.good, tally.bad];
        const r = await load(targets[name], round, seconds, lo);
        await sleep(1000); // settle: requests in flight when the load stopped land now
        if (name === 'batch') {
          // batches still queued on the ledger lock when the load stopped: until every one sent is written (checked at the end)
          await waitFor('every batch sent to be written', async () => (await q<{ n: number }>('SELECT count(*)::int AS n FROM withdrawals WHERE application_id = $1', [appA.id]))[0]!.n >= tally.built * n, 60_000, 50)
            .catch((e: Error) => progress(`  ${e.message}`));
        }
        if (name === 'batch') r.checks = { goodAnswers: tally.good - good0, badAnswers: tally.bad - bad0 };
        return r;
      };
      if (st.warmupSeconds > 0) {
        for (const name of ['baseline', 'batch'] as const) {
          progress(`warm-up ${name} (${st.warmupSeconds} s)`);
          warmups.push(await one(name, 'warm-up', st.warmupSeconds));
        }
      }
      if (pgss) await resetStatementStats(pg);
      for (let round = 1; round <= st.rounds; round++) {
        for (const name of ['baseline', 'batch'] as const) {
          progress(`round ${round}/${st.rounds}: ${name} (${st.seconds} s)`);
          const r = await one(name, round, st.seconds);
          runs.push(r);
          progress(`  ${fmtInt(r.rps)} req/s${name === 'batch' ? ` = ${fmtInt(r.rps * n)} items/s` : ''}, p50 ${fmtMs(r.latencyMs.p50)} ms, p99 ${fmtMs(r.latencyMs.p99)} ms, non-2xx ${r.non2xx}`);
        }
      }
      if (pgss) statements['acceptance rounds (baseline and batch-create)'] = await topStatements(pg, 15);

      failures.push(...[...warmups, ...runs].flatMap(problems));
      if (tally.bad) failures.push(`batch: ${tally.bad} answers that did not accept the whole batch, e.g. ${tally.badSamples.join(' | ')}`);
      for (const r of [...warmups, ...runs].filter((x) => x.target === 'batch')) {
        const good = r.checks!.goodAnswers as number;
        if (good + r.non2xx + r.mismatches + (r.checks!.badAnswers as number) !== r.requests) {
          failures.push(`batch ${r.round === 'warm-up' ? 'warm-up' : 'round ' + r.round}: ${r.requests} responses but ${good} checked answers`);
        }
      }

      // The database: one order per item sent, whole batches only, all PROCESSING; the ledger holds exactly their reservations.
      const [d] = await q<{ n: number; distinct_nos: number; not_processing: number; batches: number; max_batch: number | null; reserved: string | null }>(
        `SELECT count(*)::int AS n, count(DISTINCT app_order_no)::int AS distinct_nos, count(*) FILTER (WHERE status <> 'PROCESSING')::int AS not_processing,
                count(DISTINCT split_part(app_order_no, '.', 1))::int AS batches, max(substring(app_order_no from '^a([0-9]+)\\.')::int) AS max_batch,
                sum(reserved_amount + reserved_fee)::text AS reserved
           FROM withdrawals WHERE application_id = $1`,
        [appA.id],
      );
      const [partial] = await q<{ n: number }>(
        `SELECT count(*)::int AS n FROM (SELECT split_part(app_order_no, '.', 1) FROM withdrawals WHERE application_id = $1 GROUP BY 1 HAVING count(*) <> $2) x`,
        [appA.id, n],
      );
      const answeredMissing = await q<{ n: number }>(
        `SELECT count(*)::int AS n FROM unnest($2::text[]) AS a(no) WHERE NOT EXISTS (SELECT 1 FROM withdrawals w WHERE w.application_id = $1 AND w.app_order_no = a.no)`,
        [appA.id, [...tally.answered].map((b) => `a${b}.${n - 1}`)],
      );
      const led = (await ledgerOf(appA.id))!;
      const sentItems = tally.built * n;
      const dbOk = d!.n === sentItems && d!.distinct_nos === d!.n && d!.not_processing === 0 && partial!.n === 0 && answeredMissing[0]!.n === 0 && (d!.max_batch ?? -1) < tally.built;
      const ledgerOk = led.reserved === (d!.reserved ?? '0') && BigInt(led.reserved ?? '0') <= BigInt(led.on_chain ?? '0');
      if (!dbOk) {
        failures.push(
          `acceptance database: ${d!.n} orders (${d!.distinct_nos} distinct appOrderNos, ${d!.not_processing} not PROCESSING, ${partial!.n} partial batches, highest batch ${d!.max_batch}) ` +
            `for ${tally.built} batches x ${n} = ${sentItems} items sent; ${answeredMissing[0]!.n} answered batches missing`,
        );
      }
      if (!ledgerOk) failures.push(`acceptance ledger: reserved ${led.reserved}, the orders reserve ${d!.reserved}, on chain ${led.on_chain}`);
      acceptDb = { orders: d!.n, batchesSent: tally.built, batchesAnswered: tally.answered.size, itemsSent: sentItems, reservedWei: led.reserved, onChainWei: led.on_chain, ok: dbOk && ledgerOk };

      const sum = {
        baseline: { ...summarise(runs.filter((r) => r.target === 'baseline')), postgresCpuUsPerRequestMedian: medianOrNull(runs.filter((r) => r.target === 'baseline').map((r) => r.postgresCpuUsPerRequest)) },
        batch: { ...summarise(runs.filter((r) => r.target === 'batch')), postgresCpuUsPerRequestMedian: medianOrNull(runs.filter((r) => r.target === 'batch').map((r) => r.postgresCpuUsPerRequest)) },
      };
      const itemsPerS = sum.batch.rpsMedian * n;
      const ratio = (itemsPerS / sum.baseline.rpsMedian) * 100;
      const perRound = Array.from({ length: st.rounds }, (_, i) => {
        const b = runs.find((r) => r.target === 'baseline' && r.round === i + 1)!;
        const x = runs.find((r) => r.target === 'batch' && r.round === i + 1)!;
        return ((x.rps * n) / b.rps) * 100;
      });
      acceptSummary = {
        itemsPerRequest: n,
        baseline: sum.baseline,
        batch: sum.batch,
        itemsPerSMedian: itemsPerS,
        ratioPercent: Math.round(ratio * 10) / 10,
        perRoundRatioPercent: perRound.map((p) => Math.round(p * 10) / 10),
        goalPercent: GOAL_ACCEPT_PERCENT,
        goalMet: ratio >= GOAL_ACCEPT_PERCENT,
        ordersLeftBehind: d!.n,
      };

      // The acceptance orders are never paid out: removed so that the payout worker (per chain) never sees them.
      await pg.query('DELETE FROM withdrawals WHERE application_id = $1', [appA.id]);
      await pg.query('UPDATE hot_wallet_balances SET reserved = 0 WHERE hot_wallet_id = $1', [hotA.hot_wallet_id]);
      await pg.query('VACUUM ANALYZE withdrawals, hot_wallet_balances');
    }

    // ------------------------------------------------------------ figure 2: payouts
    const payoutRuns: PayoutRun[] = [];
    let payoutSummary: Record<string, unknown> | null = null;
    const checkRuns: PayoutRun[] = [];
    let checkSummary: Record<string, unknown> | null = null;
    if (st.parts.payout || st.parts.chaincheck) {
      const anvilPid = anvil.process.pid;
      const apiPid = api.child.proc.pid;
      const provider = new JsonRpcProvider(url, EVM_CHAIN_ID, { staticNetwork: true, batchMaxCount: 1 });
      cleanup.push('close ethers provider', async () => provider.destroy());
      const bareWallet = new Wallet(BARE_KEY, provider);

      /** N transactions from the bare wallet: sendTransaction with our nonces, not waiting; then every receipt with 3 confirmations. */
      const bareSend = async (count: number, round: number, measured: boolean): Promise<PayoutRun | null> => {
        const n0 = await pendingNonce(url, bareWallet.address);
        const fees = await provider.getFeeData();
        if (fees.maxFeePerGas === null || fees.maxPriorityFeePerGas === null) throw new Error('anvil gave no EIP-1559 fee data');
        const dests = Array.from({ length: count }, freshAddress);
        const a = cpuMark(undefined, anvilPid, apiPid);
        const tip0 = await tipOf(url);
        const w0 = Number(process.hrtime.bigint() / 1000n);
        const t0 = performance.now();
        const hashes: string[] = [];
        let nonce = n0;
        for (let i = 0; i < count; i++) {
          const tx = await bareWallet.sendTransaction({
            to: dests[i]!, value: AMOUNT_WEI, nonce: nonce++, gasLimit: 21_000n, type: 2, chainId: EVM_CHAIN_ID,
            maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
          });
          hashes.push(tx.hash);
        }
        const sentS = (performance.now() - t0) / 1000;
        const receipts = new Map<string, { blockNumber: string; status: string; from: string; to: string }>();
        for (;;) {
          checkAborted();
          const missing = hashes.filter((h) => !receipts.has(h));
          if (missing.length) {
            const rs = await rpcBatch<{ blockNumber: string; status: string; from: string; to: string } | null>(url, missing.map((h) => ({ method: 'eth_getTransactionReceipt', params: [h] })));
            missing.forEach((h, i) => rs[i] && receipts.set(h, rs[i]!));
          }
          if (receipts.size === hashes.length) {
            const last = Math.max(...[...receipts.values()].map((r) => Number(BigInt(r.blockNumber))));
            if ((await tipOf(url)) - last + 1 >= CONFIRMATIONS) break;
          }
          if (performance.now() - t0 > 300_000) throw new Error(`bare loop: ${hashes.length - receipts.size} of ${count} transactions not mined within 300 s`);
          await sleep(5);
        }
        const seconds = (performance.now() - t0) / 1000;
        const w1 = Number(process.hrtime.bigint() / 1000n);
        const blocks = (await tipOf(url)) - tip0;
        const c = cpuBetween(a, cpuMark(undefined, anvilPid, apiPid));
        const bad = [...receipts.values()].filter((r) => r.status !== '0x1' || r.from.toLowerCase() !== bareWallet.address.toLowerCase());
        const n1 = await pendingNonce(url, bareWallet.address);
        if (bad.length || n1 !== n0 + count) failures.push(`bare loop round ${round}: ${bad.length} failed receipts; the nonce went ${n0} -> ${n1} for ${count} transactions`);
        if (!measured) return null;
        return {
          round, target: 'bare loop', orders: count, seconds, perS: count / seconds, acceptedS: null, lastSignedS: null, lastBroadcastS: null, lastSuccessS: null, orderLatencyMs: null,
          sentS, callbacksDoneS: null, blocks: blocks, cpuPercent: c.cpu,
          senderUsPerOrder: perItem(c.cpu.client, c.wallS, count), postgresUsPerOrder: null, anvilUsPerOrder: perItem(c.cpu.anvil, c.wallS, count), windowUs: [w0, w1],
        };
      };

      /** Sends `count` orders of the payout application in batches (all at once) through the signed API; checks every answer. */
      const acceptOrders = async (prefix: string, count: number): Promise<string[]> => {
        const n = st.batchItems;
        const batches = Math.ceil(count / n);
        const ids: string[] = [];
        await Promise.all(
          Array.from({ length: batches }, async (_, b) => {
            const size = Math.min(n, count - b * n);
            const { body, headers } = signedJsonPost(appB, BATCH_PATH, batchJson(prefix, b, () => freshAddress(), size));
            const r = await httpRequest(api.port, 'POST', BATCH_PATH, headers, body);
            const p = r.status === 200 ? batchProblem(r.body, prefix, b, size).problem : `HTTP ${r.status} ${r.body.slice(0, 200)}`;
            if (p) throw new Error(`payout orders ${prefix}: ${p}`);
            for (const x of (JSON.parse(r.body) as { data: BatchResult }).data.items) ids.push(String(x.withdraw!.id));
          }),
        );
        return ids;
      };
      /** Polls the orders' states (by primary key) every 25 ms until all are SUCCESS; a FAILED order ends the run. */
      const waitSettled = async (prefix: string, ids: string[], timeoutMs: number): Promise<void> => {
        await waitFor(`${ids.length} orders ${prefix}* SUCCESS`, async () => {
          const [c] = await q<{ success: number; failed: number }>(
            `SELECT count(*) FILTER (WHERE status = 'SUCCESS')::int AS success, count(*) FILTER (WHERE status = 'FAILED')::int AS failed FROM withdrawals WHERE id = ANY($1::bigint[])`,
            [ids],
          );
          if (c!.failed > 0) throw new Error(`${c!.failed} orders ${prefix}* FAILED: ${JSON.stringify(await q(`SELECT id, fail_reason FROM withdrawals WHERE id = ANY($1::bigint[]) AND status = 'FAILED' LIMIT 3`, [ids]))}`);
          return c!.success === ids.length;
        }, timeoutMs, 25);
      };
      const callbacksOf = (prefix: string, since: number) =>
        receiver.arrivals.slice(since).filter((x) => x.path === CALLBACK_PATH && x.body.includes(`"appOrderNo":"${prefix}`));

      /**
       * One service run of the payout workers. `check`: WCS_TRANSFER_CHAIN_CHECK of the process
       * (the chaincheck part; absent: the default, on), its orders' prefixes tagged with it.
       */
      const serviceRun = async (round: number, check?: 'on' | 'off'): Promise<PayoutRun> => {
        const tag = check === undefined ? '' : check;
        await resetScan();
        const [{ now: before }] = await q<{ now: Date }>('SELECT clock_timestamp() AS now');
        const w = startWorkersProc({ WCS_WITHDRAW_POLL_MS: String(st.pollMs), ...(check ? { WCS_TRANSFER_CHAIN_CHECK: check } : {}) }, `payout-r${round}${tag}`, st.cpuProf);
        // up: its ledger has read the hot wallet (the ledger refreshes once at start, then every WCS_HOT_WALLET_REFRESH_MS)
        await waitFor('the workers to read the ledger', async () => {
          const l = await ledgerOf(appB.id!);
          return l?.observed_at != null && l.observed_at > before!;
        }, 60_000, 20);
        if (st.warmupOrders > 0) await waitSettled(`w${round}${tag}.`, await acceptOrders(`w${round}${tag}.`, st.warmupOrders), settleTimeout(st.warmupOrders));
        const prefix = `p${round}${tag}.`;
        const since = receiver.arrivals.length;
        const n0 = await pendingNonce(url, hotB.address);
        const a = cpuMark(w.proc.pid, anvilPid, apiPid);
        const tip0 = await tipOf(url);
        const w0 = Number(process.hrtime.bigint() / 1000n);
        const t0 = performance.now();
        const ids = await acceptOrders(prefix, st.payouts);
        const acceptedS = (performance.now() - t0) / 1000;
        await waitSettled(prefix, ids, settleTimeout(st.payouts));
        const seconds = (performance.now() - t0) / 1000;
        const w1 = Number(process.hrtime.bigint() / 1000n);
        const blocks = (await tipOf(url)) - tip0;
        const c = cpuBetween(a, cpuMark(w.proc.pid, anvilPid, apiPid));
        const expectedCb = 3 * st.payouts;
        let callbacksDoneS: number | null = null;
        try {
          await waitFor(`${expectedCb} callbacks`, () => callbacksOf(prefix, since).length >= expectedCb, 60_000, 10);
          callbacksDoneS = (Math.max(...callbacksOf(prefix, since).map((x) => x.at)) - t0) / 1000;
        } catch (e) {
          failures.push(`service round ${round}${tag}: ${(e as Error).message}`);
        }
        // The deposit scan of the same process follows the chain through the payouts' blocks, reading
        // their traces (the default): a scan that stopped (e.g. a node that cannot trace) is a failure.
        const endTip = tip0 + blocks;
        let scan: { height: string | null; last_error: string | null } | undefined;
        try {
          await waitFor(`the deposit scan to reach block ${endTip}`, async () => {
            scan = (await q<{ height: string | null; last_error: string | null }>('SELECT height::text AS height, last_error FROM scan_cursors WHERE chain_id = $1', [chainId]))[0];
            return scan?.height != null && Number(scan.height) >= endTip;
          }, 30_000, 50);
        } catch (e) {
          failures.push(`service round ${round}${tag}: ${(e as Error).message} (cursor ${scan?.height ?? 'none'}, last error: ${scan?.last_error ?? 'none'})`);
        }
        await sleep(300); // nothing more should arrive
        await stopWorkersProc();

        // Checks: every order SUCCESS with one transaction; nonces contiguous from the hot wallet's next one; on chain as ordered; 3 signed callbacks each.
        const label = `service round ${round}${check ? ` (chain check ${check})` : ''}`;
        const rows = await q<{ id: string; app_order_no: string; status: string; sequence: string | null; tx_hash: string | null; to_address: string; amount: string; txs: number; created_ms: string; signed_ms: string | null; broadcast_ms: string | null; finished_ms: string | null }>(
          `SELECT w.id::text AS id, w.app_order_no, w.status, w.sequence::text AS sequence, w.tx_hash, w.to_address, w.amount::text AS amount,
                  (SELECT count(*)::int FROM withdraw_transactions x WHERE x.withdrawal_id = w.id) AS txs,
                  (extract(epoch FROM w.created_at) * 1000)::text AS created_ms, (extract(epoch FROM w.signed_at) * 1000)::text AS signed_ms,
                  (extract(epoch FROM w.broadcast_at) * 1000)::text AS broadcast_ms, (extract(epoch FROM w.finished_at) * 1000)::text AS finished_ms
             FROM withdrawals w WHERE w.application_id = $1 AND w.app_order_no LIKE $2 ORDER BY w.sequence`,
          [appB.id, `${prefix}%`],
        );
        const seqs = rows.map((r) => (r.sequence === null ? NaN : Number(r.sequence)));
        const contiguous = seqs.every((s, i) => s === n0 + i);
        const n1 = await pendingNonce(url, hotB.address);
        const notOk = rows.filter((r) => r.status !== 'SUCCESS' || r.txs !== 1 || r.tx_hash === null || r.amount !== AMOUNT_WEI.toString());
        if (rows.length !== st.payouts || notOk.length || !contiguous || n1 !== n0 + st.payouts) {
          failures.push(
            `${label}: ${rows.length} orders for ${st.payouts}, ${notOk.length} not SUCCESS with exactly one transaction (e.g. ${JSON.stringify(notOk[0] ?? null)}), ` +
              `nonces ${contiguous ? 'contiguous' : `NOT contiguous (${seqs.slice(0, 5).join(', ')}...)`} from ${n0}, hot wallet nonce ${n0} -> ${n1}`,
          );
        }
        const hashes = rows.map((r) => r.tx_hash ?? '0x' + '0'.repeat(64));
        const txs = await rpcBatch<{ from: string; to: string; nonce: string; value: string } | null>(url, hashes.map((h) => ({ method: 'eth_getTransactionByHash', params: [h] })));
        const rcs = await rpcBatch<{ status: string } | null>(url, hashes.map((h) => ({ method: 'eth_getTransactionReceipt', params: [h] })));
        const chainBad = rows.filter((r, i) => {
          const t = txs[i];
          return !t || !rcs[i] || rcs[i]!.status !== '0x1' || t.from.toLowerCase() !== hotB.address.toLowerCase() || t.to.toLowerCase() !== r.to_address.toLowerCase() ||
            BigInt(t.nonce) !== BigInt(r.sequence ?? -1) || BigInt(t.value) !== AMOUNT_WEI;
        });
        if (chainBad.length) failures.push(`${label}: ${chainBad.length} orders whose transaction on anvil is missing, failed, or not the order (e.g. ${chainBad[0]!.id})`);
        const cbs = callbacksOf(prefix, since);
        const seen = new Set<string>();
        let dup = 0;
        let badCb = 0;
        const byNo = new Map(rows.map((r) => [r.app_order_no, r]));
        for (const x of cbs) {
          const e = JSON.parse(x.body.toString('utf8')) as WithdrawEvent;
          const key = `${e.appOrderNo}:${e.status}`;
          if (seen.has(key)) dup++;
          seen.add(key);
          const r = byNo.get(e.appOrderNo);
          if (signatureProblem(x, appB) || !r || e.event !== 'withdraw' || String(e.id) !== r.id || e.txHash !== r.tx_hash || e.amount !== AMOUNT) badCb++;
        }
        const missingCb = rows.flatMap((r) => ['BROADCASTED', 'CONFIRMING', 'SUCCESS'].filter((s) => !seen.has(`${r.app_order_no}:${s}`)));
        if (dup || badCb || missingCb.length || cbs.length !== expectedCb) {
          failures.push(`${label}: ${cbs.length} callbacks for ${expectedCb} expected, ${dup} duplicates, ${badCb} wrong or badly signed, ${missingCb.length} missing`);
        }
        // where the time went, on the database's clock from the first order written
        const ms = (f: (r: (typeof rows)[number]) => string | null) => rows.map(f).filter((x): x is string => x !== null).map(Number);
        const first = Math.min(...ms((r) => r.created_ms));
        const lat = rows.filter((r) => r.finished_ms !== null).map((r) => Number(r.finished_ms) - Number(r.created_ms)).sort((x, y) => x - y);
        return {
          round, target: check === undefined ? 'service' : `check ${check}`, orders: st.payouts, seconds, perS: st.payouts / seconds, acceptedS,
          lastSignedS: (Math.max(...ms((r) => r.signed_ms)) - first) / 1000,
          lastBroadcastS: (Math.max(...ms((r) => r.broadcast_ms)) - first) / 1000,
          lastSuccessS: (Math.max(...ms((r) => r.finished_ms)) - first) / 1000,
          orderLatencyMs: { p50: percentile(lat, 50), p99: percentile(lat, 99) },
          sentS: null, callbacksDoneS, blocks: blocks, cpuPercent: c.cpu,
          senderUsPerOrder: perItem(c.cpu.target, c.wallS, st.payouts), postgresUsPerOrder: perItem(c.cpu.postgres, c.wallS, st.payouts),
          anvilUsPerOrder: perItem(c.cpu.anvil, c.wallS, st.payouts), windowUs: [w0, w1],
        };
      };

      const show = (r: PayoutRun) =>
        progress(`  ${r.target}: ${fmtInt(r.perS)}/s (${r.orders} in ${r.seconds.toFixed(2)} s${r.target !== 'bare loop' ? `, all signed ${r.lastSignedS!.toFixed(2)} s, broadcast ${r.lastBroadcastS!.toFixed(2)} s, SUCCESS ${r.lastSuccessS!.toFixed(2)} s after the first order was written` : ''})`);
      if (st.warmupOrders > 0 && st.parts.payout) {
        progress(`payouts: bare loop warm-up (${st.warmupOrders} transactions)`);
        await bareSend(st.warmupOrders, 0, false);
      }
      if (pgss) await resetStatementStats(pg);
      for (let round = 1; round <= (st.parts.payout ? st.payoutRounds : 0); round++) {
        progress(`payouts round ${round}/${st.payoutRounds}: bare loop (${st.payouts} transactions)`);
        const b = (await bareSend(st.payouts, round, true))!;
        show(b);
        payoutRuns.push(b);
        progress(`payouts round ${round}/${st.payoutRounds}: service (${st.warmupOrders} warm-up orders, then ${st.payouts})`);
        const s = await serviceRun(round);
        show(s);
        payoutRuns.push(s);
      }
      if (pgss && st.parts.payout) statements['payout rounds (bare loop and service)'] = await topStatements(pg, 15);
      // the chain check before signing on vs off, the same service run back to back (the order alternates per round),
      // after one unmeasured service run (the first run after the set-up is slower whatever it runs with: anvil, JIT, caches)
      if (st.parts.chaincheck && !st.parts.payout) {
        progress(`chain check: warm-up service run (${st.warmupOrders} warm-up orders, then ${st.payouts}; not measured)`);
        await serviceRun(0);
      }
      for (let round = 1; round <= (st.parts.chaincheck ? st.payoutRounds : 0); round++) {
        for (const check of (round % 2 === 1 ? ['on', 'off'] : ['off', 'on']) as Array<'on' | 'off'>) {
          progress(`chain check round ${round}/${st.payoutRounds}: service with WCS_TRANSFER_CHAIN_CHECK=${check} (${st.warmupOrders} warm-up orders, then ${st.payouts})`);
          const r = await serviceRun(round, check);
          show(r);
          checkRuns.push(r);
        }
      }
      if (st.parts.chaincheck) {
        const on = checkRuns.filter((r) => r.target === 'check on');
        const off = checkRuns.filter((r) => r.target === 'check off');
        const onMedian = median(on.map((r) => r.perS));
        const offMedian = median(off.map((r) => r.perS));
        const ratio = (onMedian / offMedian) * 100;
        checkSummary = {
          onMedianPerS: onMedian,
          offMedianPerS: offMedian,
          ratioPercent: Math.round(ratio * 10) / 10,
          perRoundRatioPercent: on.map((r) => Math.round((r.perS / off.find((x) => x.round === r.round)!.perS) * 1000) / 10),
          goalPercent: GOAL_CHAIN_CHECK_PERCENT,
          goalMet: ratio >= GOAL_CHAIN_CHECK_PERCENT,
          onWorkersUsPerOrderMedian: medianOrNull(on.map((r) => r.senderUsPerOrder)),
          offWorkersUsPerOrderMedian: medianOrNull(off.map((r) => r.senderUsPerOrder)),
        };
      }
    }
    if (st.parts.payout) {
      const bareRuns = payoutRuns.filter((r) => r.target === 'bare loop');
      const svcRuns = payoutRuns.filter((r) => r.target === 'service');
      const bareMedian = median(bareRuns.map((r) => r.perS));
      const svcMedian = median(svcRuns.map((r) => r.perS));
      const ratio = (svcMedian / bareMedian) * 100;
      payoutSummary = {
        bareMedianPerS: bareMedian,
        serviceMedianPerS: svcMedian,
        ratioPercent: Math.round(ratio * 10) / 10,
        perRoundRatioPercent: svcRuns.map((s) => Math.round((s.perS / bareRuns.find((b) => b.round === s.round)!.perS) * 1000) / 10),
        goalPercent: GOAL_PAYOUT_PERCENT,
        goalMet: ratio >= GOAL_PAYOUT_PERCENT,
        serviceWorkersUsPerOrderMedian: medianOrNull(svcRuns.map((r) => r.senderUsPerOrder)),
        servicePostgresUsPerOrderMedian: medianOrNull(svcRuns.map((r) => r.postgresUsPerOrder)),
        bareUsPerTxMedian: medianOrNull(bareRuns.map((r) => r.senderUsPerOrder)),
      };
    }

    // ------------------------------------------------------------ report
    out('');
    if (acceptSummary) {
      const n = st.batchItems;
      out(`acceptance: ${n}-item batches (test ETH, ${AMOUNT} ETH each, new appOrderNos every request) vs signed GET support/chains, wcs start --api-only alone`);
      out(
        table(
          ['round', 'target', 'req/s', 'items/s', 'p50 ms', 'p99 ms', 'requests', 'non-2xx', 'errors', 'bad', 'cpu client', 'cpu server', 'cpu pg', 'cpu other', 'server µs/req', 'pg µs/req', 'server µs/item'],
          [...warmups, ...runs].map((r) => [
            String(r.round),
            r.target,
            fmtInt(r.rps),
            r.target === 'batch' ? fmtInt(r.rps * n) : '-',
            fmtMs(r.latencyMs.p50),
            fmtMs(r.latencyMs.p99),
            fmtInt(r.requests),
            String(r.non2xx),
            String(r.errors),
            String(r.mismatches + ((r.checks?.badAnswers as number | undefined) ?? 0)),
            fmtPct(r.cpuPercent.client),
            fmtPct(r.cpuPercent.target),
            fmtPct(r.cpuPercent.postgres),
            fmtPct(r.cpuPercent.other),
            fmtUs(r.targetCpuUsPerRequest),
            fmtUs(r.postgresCpuUsPerRequest),
            r.target === 'batch' && r.targetCpuUsPerRequest !== null ? fmtUs(r.targetCpuUsPerRequest / n) : '-',
          ]),
          [false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
        ),
      );
      const A = acceptSummary as { baseline: ReturnType<typeof summarise>; batch: ReturnType<typeof summarise>; itemsPerSMedian: number; ratioPercent: number; perRoundRatioPercent: number[]; goalMet: boolean };
      out('');
      out(
        table(
          ['target', 'median req/s', 'median items/s', 'p50 ms (median)', 'p99 ms (median)', 'server µs/req', 'vs baseline', 'per round', 'goal', 'result'],
          [
            ['baseline (signed GET support/chains)', fmtInt(A.baseline.rpsMedian), '-', fmtMs(A.baseline.latencyP50MsMedian), fmtMs(A.baseline.latencyP99MsMedian), fmtUs(A.baseline.targetCpuUsPerRequestMedian), '100 %', '-', '-', '-'],
            [
              `batch-create (${n} items)`, fmtInt(A.batch.rpsMedian), fmtInt(A.itemsPerSMedian), fmtMs(A.batch.latencyP50MsMedian), fmtMs(A.batch.latencyP99MsMedian), fmtUs(A.batch.targetCpuUsPerRequestMedian),
              `${A.ratioPercent.toFixed(1)} %`, A.perRoundRatioPercent.map((p) => p.toFixed(1)).join(', '), `>= ${GOAL_ACCEPT_PERCENT} %`, A.goalMet ? 'met' : 'NOT MET',
            ],
          ],
          [false, true, true, true, true, true, true, false, false, false],
        ),
      );
      out(`  (vs baseline: items/s of batch-create over req/s of the baseline; server µs/req: CPU of the API process per request)`);
      if (acceptDb) out(`database check: ${fmtInt(acceptDb.orders as number)} orders for ${fmtInt(acceptDb.batchesSent as number)} batches sent (${fmtInt(acceptDb.itemsSent as number)} items; ${fmtInt(acceptDb.batchesAnswered as number)} answered and checked), whole batches, all PROCESSING, the ledger's reservation equal to theirs: ${acceptDb.ok ? 'OK' : 'MISMATCH'}`);
      out('');
    }
    if (payoutSummary) {
      out(`payouts: ${fmtInt(st.payouts)} native transfers (${AMOUNT} ETH to new addresses) from one sender per run; anvil mining a block every ${st.blockMs} ms (both runs); done = every one at ${CONFIRMATIONS} confirmations`);
      out(
        table(
          ['round', 'target', 'orders', 's', 'blocks', 'per s', 'accepted s', 'signed s', 'broadcast s', 'success s', 'order p50 ms', 'order p99 ms', 'callbacks s', 'cpu bench', 'cpu workers', 'cpu api', 'cpu pg', 'cpu anvil', 'cpu other', 'sender µs/order', 'pg µs/order', 'anvil µs/order'],
          payoutRuns.map((r) => [
            String(r.round),
            r.target,
            fmtInt(r.orders),
            r.seconds.toFixed(2),
            fmtInt(r.blocks),
            fmtInt(r.perS),
            r.acceptedS === null ? (r.sentS === null ? '-' : `sent ${r.sentS.toFixed(2)}`) : r.acceptedS.toFixed(2),
            r.lastSignedS === null ? '-' : r.lastSignedS.toFixed(2),
            r.lastBroadcastS === null ? '-' : r.lastBroadcastS.toFixed(2),
            r.lastSuccessS === null ? '-' : r.lastSuccessS.toFixed(2),
            r.orderLatencyMs?.p50 == null ? '-' : fmtInt(r.orderLatencyMs.p50),
            r.orderLatencyMs?.p99 == null ? '-' : fmtInt(r.orderLatencyMs.p99),
            r.callbacksDoneS === null ? '-' : r.callbacksDoneS.toFixed(2),
            fmtPct(r.cpuPercent.client),
            fmtPct(r.cpuPercent.target),
            fmtPct(r.cpuPercent.api),
            fmtPct(r.cpuPercent.postgres),
            fmtPct(r.cpuPercent.anvil),
            fmtPct(r.cpuPercent.other),
            fmtUs(r.senderUsPerOrder),
            fmtUs(r.postgresUsPerOrder),
            fmtUs(r.anvilUsPerOrder),
          ]),
          [false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
        ),
      );
      out('  (s: from the first order batch sent (service) or the first send (bare) until the last one reached 3 confirmations; signed/broadcast/success s: the last order\'s');
      out('   signed_at/broadcast_at/finished_at after the first order\'s created_at; sender µs/order: CPU of the workers process, or of this process for the bare loop)');
      const P = payoutSummary as { bareMedianPerS: number; serviceMedianPerS: number; ratioPercent: number; perRoundRatioPercent: number[]; goalMet: boolean };
      out('');
      out(
        table(
          ['target', 'median per s', 'per round', 'vs bare loop', 'per round', 'goal', 'result'],
          [
            ['bare ethers loop', fmtInt(P.bareMedianPerS), payoutRuns.filter((r) => r.target === 'bare loop').map((r) => fmtInt(r.perS)).join(', '), '100 %', '-', '-', '-'],
            ['service (payout worker)', fmtInt(P.serviceMedianPerS), payoutRuns.filter((r) => r.target === 'service').map((r) => fmtInt(r.perS)).join(', '), `${P.ratioPercent.toFixed(1)} %`, P.perRoundRatioPercent.map((p) => p.toFixed(1)).join(', '), `>= ${GOAL_PAYOUT_PERCENT} %`, P.goalMet ? 'met' : 'NOT MET'],
          ],
          [false, true, false, true, false, false, false],
        ),
      );
      out('');
    }
    if (checkSummary) {
      out(`chain check before signing: the same service payout run (${fmtInt(st.payouts)} orders, one hot wallet) with WCS_TRANSFER_CHAIN_CHECK=on and =off, back to back in each round`);
      out(
        table(
          ['round', 'check', 'orders', 's', 'per s', 'signed s', 'broadcast s', 'success s', 'order p50 ms', 'order p99 ms', 'cpu workers', 'cpu pg', 'cpu anvil', 'cpu other', 'workers µs/order', 'pg µs/order'],
          checkRuns.map((r) => [
            String(r.round), r.target.replace('check ', ''), fmtInt(r.orders), r.seconds.toFixed(2), fmtInt(r.perS),
            r.lastSignedS === null ? '-' : r.lastSignedS.toFixed(2), r.lastBroadcastS === null ? '-' : r.lastBroadcastS.toFixed(2), r.lastSuccessS === null ? '-' : r.lastSuccessS.toFixed(2),
            r.orderLatencyMs?.p50 == null ? '-' : fmtInt(r.orderLatencyMs.p50), r.orderLatencyMs?.p99 == null ? '-' : fmtInt(r.orderLatencyMs.p99),
            fmtPct(r.cpuPercent.target), fmtPct(r.cpuPercent.postgres), fmtPct(r.cpuPercent.anvil), fmtPct(r.cpuPercent.other), fmtUs(r.senderUsPerOrder), fmtUs(r.postgresUsPerOrder),
          ]),
          [false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
        ),
      );
      const C = checkSummary as { onMedianPerS: number; offMedianPerS: number; ratioPercent: number; perRoundRatioPercent: number[]; goalMet: boolean };
      out('');
      out(
        table(
          ['target', 'median per s', 'per round', 'vs check off', 'per round', 'goal', 'result'],
          [
            ['service, chain check off', fmtInt(C.offMedianPerS), checkRuns.filter((r) => r.target === 'check off').map((r) => fmtInt(r.perS)).join(', '), '100 %', '-', '-', '-'],
            ['service, chain check on', fmtInt(C.onMedianPerS), checkRuns.filter((r) => r.target === 'check on').map((r) => fmtInt(r.perS)).join(', '), `${C.ratioPercent.toFixed(1)} %`, C.perRoundRatioPercent.map((p) => p.toFixed(1)).join(', '), `>= ${GOAL_CHAIN_CHECK_PERCENT} %`, C.goalMet ? 'met' : 'NOT MET'],
          ],
          [false, true, false, true, false, false, false],
        ),
      );
      out('');
    }
    for (const [part, lines] of Object.entries(statements)) {
      out(`Postgres statements by total execution time, ${part} (BENCH_PGSS):`);
      for (const l of lines) out(`  ${l}`);
      out('');
    }
    if (acceptSummary) out(`goal acceptance items/s >= ${GOAL_ACCEPT_PERCENT} % of the baseline req/s: ${(acceptSummary.ratioPercent as number).toFixed(1)} %, ${acceptSummary.goalMet ? 'met' : 'not met'}`);
    if (payoutSummary) out(`goal payouts confirmed/s >= ${GOAL_PAYOUT_PERCENT} % of the bare ethers loop: ${(payoutSummary.ratioPercent as number).toFixed(1)} %, ${payoutSummary.goalMet ? 'met' : 'not met'}`);
    if (checkSummary) out(`goal payouts confirmed/s with the chain check on >= ${GOAL_CHAIN_CHECK_PERCENT} % of the same with it off: ${(checkSummary.ratioPercent as number).toFixed(1)} %, ${checkSummary.goalMet ? 'met' : 'not met'}`);
    const noisy = noiseWarning(
      [...runs, ...[...payoutRuns, ...checkRuns].map((r) => ({ target: r.target, round: r.round, cpuPercent: r.cpuPercent }))],
      NOISE_WARN_PERCENT,
    );
    if (noisy) out(noisy.line);
    printFailures(out, failures);
    const resultsFile = writeResults('withdrawals.json', {
      benchmark: 'withdrawals',
      description: 'withdrawals on anvil: batch-create items/s vs signed GET support/chains req/s; payouts confirmed/s of the payout worker vs a bare ethers send loop',
      date: new Date().toISOString(),
      machine,
      settings: { ...st, autocannon: AUTOCANNON_VERSION, anvilArgs: anvilArgs(keptStatesWd(st.blockMs)), database: dbMode, amount: AMOUNT, fundedWei: FUND_WEI.toString(), feeQuoteWei: quote },
      // warmups/runs at the top (every run with its target and windowUs), for cpuprofile-top --results --target
      warmups,
      runs: [...runs, ...payoutRuns, ...checkRuns],
      acceptance: acceptSummary ? { summary: acceptSummary, database: acceptDb } : null,
      payouts: payoutSummary ? { summary: payoutSummary } : null,
      chainCheck: checkSummary ? { summary: checkSummary } : null,
      ...(pgss ? { topStatements: statements } : {}),
      correctness: { ok: failures.length === 0, failures },
      noisyRuns: (noisy?.runs ?? []).map((r) => ({ target: r.target, round: r.round, otherCpuPercent: r.cpuPercent.other })),
      ...(st.cpuProf ? { cpuProfileDir: path.relative(process.cwd(), profileDir) } : {}),
    });
    out(`results: ${resultsFile}`);
    if (failures.length) return 1;
    const goals = [acceptSummary ? Boolean(acceptSummary.goalMet) : true, payoutSummary ? Boolean(payoutSummary.goalMet) : true, checkSummary ? Boolean(checkSummary.goalMet) : true];
    if (st.enforceGoal && !goals.every(Boolean)) return 1;
    return 0;
  } finally {
    await cleanup.run();
    if (st.cpuProf) printProfiles(apiProfileDir ?? profileDir, startedAt);
  }
}

runMain(main);
