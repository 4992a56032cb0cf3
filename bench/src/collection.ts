/**
 * Benchmark: collection (sweeps) on anvil serving the catalogue's test ETH (chain id 11155111),
 * two figures, one run:
 *
 * 1. Sweep throughput: N deposit addresses (BENCH_COLLECT_N, default 1000; half holding an
 *    ERC-20 deployed on anvil and no gas, half holding native ETH), made through the signed API
 *    (POST /api/v1/wallet/address/create) and all funded and CONFIRMED as deposits before the
 *    clock starts. The clock starts at the sweep trigger (the two collection policies enabled)
 *    and stops when every collection item of those addresses is SUCCESS (3 confirmations, the
 *    catalogue's). Against a bare ethers script on the same anvil with the same settings (keys in
 *    memory, manual nonces): a gas top-up per token address from one fee wallet (nonces allocated
 *    by hand, sent together) and every native address's whole-balance transfer at once; the
 *    top-ups waited for at 3 confirmations (the service too funds a sweep only once its top-up
 *    is confirmed); then every token transfer to a hot address; until every receipt is in with 3
 *    confirmations. Ratio service/bare as throughput % (goal >= 50 %).
 * 2. Cost: per swept address, what was paid (top-up fee + sweep fee, gasUsed x effectiveGasPrice
 *    from the receipts) plus over-funding (the top-up amount less what the sweep consumed) over
 *    the least those transfers need at the same prices (21000 for the top-up and the sweep's
 *    gasUsed, each at its effectiveGasPrice). Goal <= 1.10x. Plus the gas left per token address.
 *
 * anvil mines on an interval (a block every BENCH_COLLECT_BLOCK_MS, 100 ms) for both runs.
 *
 *   npm run bench:collection              (from the repository root)
 *   BENCH_COLLECT_N=100 node bench/dist/collection.js
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { getAddress, hexlify, randomBytes, Wallet } from 'ethers';
import { deployErc20, startAnvil, type AnvilDevnet } from '@wcs/adapter-evm/devnet';
import { testEnv } from '@wcs/server/testing';
import { rpc, rpcBatch } from './lib/evm';
import { big, ERC20, ETHER, EVM_CHAIN_ID, FEE_FUNDER, feeNow, MINTER, NATIVE_AMOUNT, NATIVE_FUNDER, sendMany, tipOf, TOKEN_AMOUNT, waitReceipts, type Receipt } from './lib/sweep-chain';
import { openStatsConnection, requestStatementStats, resetStatementStats } from './lib/postgres';
import { checkAborted, CleanupStack, runMain, sleep, startChild, stopChild, type Child } from './lib/processes';
import { fmtInt, machineInfo, machineLine, out, printFailures, progress, table, writeResults } from './lib/report';
import { boolEnv, intEnv } from './lib/settings';
import { createAddresses as createAddressesVia, createAppViaCli, prepareBenchStorage, startApiServer, wcsStartArgs, LIMITS_FAR_ABOVE_LOAD } from './lib/wcs';

const GOAL_THROUGHPUT_PERCENT = 50;
const GOAL_COST_RATIO = 1.1;
const ETH_TOKEN_ID = 10200;
const TOKEN_ID = 10299;
const CONFIRMATIONS = 3;
const ANVIL_ARGS = ['--hardfork', 'cancun'];

interface CostRow { kind: 'token' | 'native'; paid: bigint; waste: bigint; min: bigint; leftover: bigint }
function costSummary(rows: CostRow[]) {
  const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);
  const part = (k: 'token' | 'native' | 'all') => {
    const r = rows.filter((x) => k === 'all' || x.kind === k);
    const paid = sum(r.map((x) => x.paid));
    const waste = sum(r.map((x) => x.waste));
    const min = sum(r.map((x) => x.min));
    const perAddr = r.map((x) => Number(x.paid + x.waste) / Number(x.min)).sort((a, b) => a - b);
    const left = r.map((x) => x.leftover).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return {
      addresses: r.length, paidWei: paid.toString(), wasteWei: waste.toString(), minWei: min.toString(),
      ratio: min === 0n ? null : Number(paid + waste) / Number(min),
      worstAddressRatio: perAddr.length ? perAddr[perAddr.length - 1]! : null,
      leftoverMeanWei: r.length ? (sum(left) / BigInt(r.length)).toString() : null,
      leftoverMaxWei: left.length ? left[left.length - 1]!.toString() : null,
      leftoverMinWei: left.length ? left[0]!.toString() : null,
    };
  };
  return { token: part('token'), native: part('native'), all: part('all') };
}

/** Cost rows from the receipts: token addresses (top-up + sweep), native addresses (sweep). */
async function costRows(url: string, list0: Array<{ address: string; topup: string | null; topupValue: bigint; sweep: string }>): Promise<CostRow[]> {
  let list = list0;
  const hashes = list.flatMap((x) => (x.topup ? [x.topup, x.sweep] : [x.sweep]));
  const rs = await rpcBatch<Receipt | null>(url, hashes.map((h) => ({ method: 'eth_getTransactionReceipt', params: [h] })));
  const by = new Map(rs.filter((r): r is Receipt => r !== null).map((r) => [r.transactionHash.toLowerCase(), r]));
  list = list.filter((x) => by.has(x.sweep.toLowerCase()) && (!x.topup || by.has(x.topup.toLowerCase())));
  const bals = await rpcBatch<string>(url, list.map((x) => ({ method: 'eth_getBalance', params: [x.address, 'latest'] })));
  return list.map((x, i) => {
    const s = by.get(x.sweep.toLowerCase())!;
    const sweepFee = big(s.gasUsed) * big(s.effectiveGasPrice);
    const leftover = big(bals[i]!);
    if (!x.topup) return { kind: 'native' as const, paid: sweepFee, waste: leftover, min: 21_000n * big(s.effectiveGasPrice), leftover };
    const t = by.get(x.topup.toLowerCase())!;
    const topFee = big(t.gasUsed) * big(t.effectiveGasPrice);
    const over = x.topupValue - sweepFee;
    return { kind: 'token' as const, paid: topFee + sweepFee, waste: over > 0n ? over : 0n, min: 21_000n * big(t.effectiveGasPrice) + sweepFee, leftover };
  });
}

async function main(): Promise<number> {
  const N = intEnv('BENCH_COLLECT_N', 1000, 2, 20_000);
  const blockMs = intEnv('BENCH_COLLECT_BLOCK_MS', 100, 10, 10_000);
  const pollMs = intEnv('BENCH_COLLECT_POLL_MS', 50, 10, 60_000);
  const planMs = intEnv('BENCH_COLLECT_PLAN_MS', 200, 100, 60_000);
  const enforce = boolEnv('BENCH_ENFORCE_GOAL');
  const stallMs = intEnv('BENCH_COLLECT_STALL_S', 60, 5, 3600) * 1000;
  const nTok = Math.floor(N / 2);
  const nNat = N - nTok;
  const machine = machineInfo();
  const cleanup = new CleanupStack();
  const failures: string[] = [];
  try {
    out(`collection on anvil: ${fmtInt(N)} deposit addresses (${nTok} ERC-20 needing a gas top-up, ${nNat} native) swept by the service vs a bare ethers script, same anvil`);
    out(machineLine(machine));
    out(`anvil interval mining, a block every ${blockMs} ms (both runs); done = every transfer at ${CONFIRMATIONS} confirmations (the catalogue's test ETH) for both; WCS_WITHDRAW_POLL_MS=${pollMs}, WCS_COLLECT_PLAN_MS=${planMs}`);
    const pgss = requestStatementStats(); // BENCH_PGSS=1 (before the cluster starts): the statements of the service's run, by calls
    const db = await prepareBenchStorage(cleanup);
    progress('starting anvil, deploying the token');
    const anvil: AnvilDevnet = await startAnvil({ chainId: EVM_CHAIN_ID, blockTime: blockMs / 1000, extraArgs: ANVIL_ARGS });
    cleanup.push('stop anvil', () => anvil.stop());
    const url = anvil.url;
    const token = await deployErc20(url, { name: 'Test USD', symbol: 'TUSD' });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-bench-collect-'));
    cleanup.push('remove config', async () => fs.rmSync(dir, { recursive: true, force: true }));
    const configFile = path.join(dir, 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({ tokens: [{ id: TOKEN_ID, chainCode: 'ETH', environment: 'test', symbol: 'TUSD', name: 'Test USD (anvil)', contract: token, decimals: 18 }] }));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...testEnv(db.url, { WCS_LOG_LEVEL: process.env.WCS_LOG_LEVEL ?? 'error', ...LIMITS_FAR_ABOVE_LOAD }),
      WCS_RPC_TEST_ETH: url, WCS_CONFIG: configFile,
    };
    const app = await createAppViaCli(env, 'bench-collect', ['ETH']);
    if (app.id === null) throw new Error('wcs app create printed no application id');
    const api = await startApiServer({ env: (port) => ({ ...env, PORT: String(port) }), nodeArgs: [], cpuProf: false, cleanup });
    const pg = await openStatsConnection(db.url, cleanup, 'bench pg');
    if (!pg) throw new Error('no connection to the benchmark database');
    const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pg.query(text, params)).rows as T[];
    const chainId = (await q<{ id: number }>(`SELECT id FROM chains WHERE code = 'ETH' AND environment = 'test'`))[0]?.id;
    if (chainId === undefined) throw new Error('no test ETH chain in the catalogue');

    let workers: Child | null = null;
    cleanup.push('stop workers', async () => { if (workers) await stopChild(workers, 60_000); });
    // BENCH_CPU_PROF=1: the workers run under --cpu-prof (bench/results/profiles; read with bench/dist/cpuprofile-top.js)
    const started = wcsStartArgs('--workers-only', [], boolEnv('BENCH_CPU_PROF'), 'collection-workers');
    if (started.profileDir) progress(`workers under --cpu-prof: ${started.profileDir}`);
    workers = startChild('workers', started.args, {
      ...env, WCS_SCAN_POLL_MS: '200', WCS_HOT_WALLET_REFRESH_MS: '300', WCS_WITHDRAW_POLL_MS: String(pollMs), WCS_COLLECT_PLAN_MS: String(planMs),
    });
    const waitFor = async (what: string, cond: () => Promise<boolean>, timeoutMs: number, everyMs = 100, explain?: () => Promise<string>): Promise<void> => {
      const deadline = Date.now() + timeoutMs;
      while (!(await cond())) {
        checkAborted();
        if (workers && workers.hasExited()) throw new Error(`the workers exited while waiting for ${what}:\n${workers.tail()}`);
        if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${explain ? `: ${await explain().catch((e: Error) => e.message)}` : ''}${workers ? `\nworkers' last output:\n${workers.tail()}` : ''}`);
        await sleep(everyMs);
      }
    };
    let fee = await feeNow(url);
    const mintGas = big(await rpc<string>(url, 'eth_estimateGas', [{ from: new Wallet(MINTER).address, to: token, data: ERC20.encodeFunctionData('mint', [getAddress(hexlify(randomBytes(20))), 1n]) }])) * 2n;

    /** Funds addresses: tokens minted, native sent; waits until mined. */
    const fund = async (tokenAddrs: string[], nativeAddrs: string[], nativeValue: (i: number) => bigint) => {
      fee = await feeNow(url);
      const f = { maxFee: fee.maxFee * 2n, tip: fee.tip };
      const [a, b] = await Promise.all([
        sendMany(url, MINTER, tokenAddrs.map((to, i) => ({ to: token, data: ERC20.encodeFunctionData('mint', [to, TOKEN_AMOUNT(i)]), gasLimit: mintGas })), f),
        sendMany(url, NATIVE_FUNDER, nativeAddrs.map((to, i) => ({ to, value: nativeValue(i), gasLimit: 21_000n })), f),
      ]);
      const rs = await waitReceipts(url, [...a, ...b], 1, 120_000, 'funding');
      if ([...rs.values()].some((r) => r.status !== '0x1')) throw new Error('a funding transaction failed');
    };

    // ------------------------------------------------------------ set-up: hot wallet, fee quotes, fee wallet (warm-up sweep)
    progress('set-up: hot wallet, native fee quote');
    let hot = '';
    await waitFor('the hot wallet', async () => {
      const r = await q<{ address: string }>('SELECT address FROM hot_wallets WHERE application_id = $1 AND chain_id = $2', [app.id, chainId]);
      hot = r[0]?.address ?? '';
      return hot !== '';
    }, 60_000);
    // Ether for the hot wallet's own gas, never the token: the warm-up sweep below is the token's first
    // sweep into a hot wallet that never held it, priced by the sweep itself (docs/collection.md)
    await fund([], [hot], () => 10n * ETHER);
    await waitFor('the native fee quote', async () => (await q<{ n: number }>('SELECT count(*)::int AS n FROM withdraw_fee_quotes WHERE chain_id = $1 AND chain_token_id = $2', [chainId, ETH_TOKEN_ID]))[0]!.n === 1, 60_000);

    const createAddresses = (users: string[]) => createAddressesVia(api.port, app, 'ETH', users);
    const confirmedDeposits = async (addrs: string[]) =>
      (await q<{ n: number }>(`SELECT count(DISTINCT address)::int AS n FROM recharges WHERE chain_id = $1 AND application_id = $2 AND tx_status IN ('CONFIRMED','SETTLED') AND address = ANY($3::text[])`, [chainId, app.id, addrs]))[0]!.n;
    const itemStates = (addrs: string[]) =>
      q<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM collection_items WHERE application_id = $1 AND stage = 'HOT_GATHER' AND from_address = ANY($2::text[]) GROUP BY status`, [app.id, addrs]);
    const setPolicies = async (enabled: boolean) => {
      await q(
        `INSERT INTO collection_policies (application_id, chain_token_id, threshold, max_fee_bps, native_value, on_confirmed, schedule_seconds, enabled)
         VALUES ($1, $2, $3::numeric, 1000, NULL, true, NULL, $5), ($1, $4, $6::numeric, 1000, $7::numeric, true, NULL, $5)
         ON CONFLICT (application_id, chain_token_id) DO UPDATE SET enabled = EXCLUDED.enabled, updated_at = now()`,
        [app.id, ETH_TOKEN_ID, (ETHER / 1000n).toString(), TOKEN_ID, enabled, ETHER.toString(), (3000n * ETHER).toString()],
      );
    };

    progress('warm-up: one token and one native address swept (the service makes its fee wallet, funded then)');
    const [wTok, wNat] = await createAddresses(['warm-t', 'warm-n']);
    await fund([wTok!], [wNat!], NATIVE_AMOUNT);
    await waitFor('the warm-up deposits CONFIRMED', async () => (await confirmedDeposits([wTok!, wNat!])) === 2, 60_000).catch(async (e: Error) => {
      throw new Error(`${e.message}; tip ${await tipOf(url)}, addresses ${wTok} ${wNat}, recharges ${JSON.stringify(await q('SELECT address, chain_token_id, tx_status, confirmations FROM recharges'))}, ` +
        `cursors ${JSON.stringify(await q('SELECT * FROM scan_cursors'))}, alerts ${JSON.stringify(await q('SELECT kind, message FROM operator_alerts ORDER BY id DESC LIMIT 3'))}`);
    });
    await setPolicies(true);
    let feeWallet = '';
    await waitFor('the fee wallet', async () => {
      const r = await q<{ address: string }>('SELECT address FROM fee_wallets WHERE application_id = $1 AND chain_id = $2', [app.id, chainId]);
      feeWallet = r[0]?.address ?? '';
      return feeWallet !== '';
    }, 120_000);
    const feeFund = await sendMany(url, FEE_FUNDER, [{ to: feeWallet, value: 100n * ETHER, gasLimit: 21_000n }], { maxFee: (await feeNow(url)).maxFee * 2n, tip: fee.tip });
    await waitReceipts(url, feeFund, 1, 60_000, 'fee wallet funding');
    await waitFor('the warm-up items SUCCESS', async () => (await itemStates([wTok!, wNat!])).find((s) => s.status === 'SUCCESS')?.n === 2, 60_000).catch(async (e: Error) => {
      failures.push(`warm-up: ${e.message}: ${JSON.stringify(await q('SELECT i.status, i.waiting_reason, x.kind, x.status AS transfer_status FROM collection_items i LEFT JOIN transfers x ON x.id IN (i.transfer_id, i.topup_transfer_id) WHERE i.application_id = $1', [app.id]))}`);
    });
    await setPolicies(false);
    out(`application ${app.id}: hot wallet ${hot}, fee wallet ${feeWallet} (100 ETH), token ${token}`);

    // ------------------------------------------------------------ figure 1a: the service
    progress(`creating ${N} deposit addresses through the API`);
    const users = [...Array.from({ length: nTok }, (_, i) => `t-${i}`), ...Array.from({ length: nNat }, (_, i) => `n-${i}`)];
    const addrs = await createAddresses(users);
    const tokAddrs = addrs.slice(0, nTok);
    const natAddrs = addrs.slice(nTok);
    progress('funding them (tokens minted, native sent), waiting for the deposits CONFIRMED');
    await fund(tokAddrs, natAddrs, NATIVE_AMOUNT);
    await waitFor(`${N} deposits CONFIRMED`, async () => (await confirmedDeposits(addrs)) === N, 120_000 + 100 * N, 250, async () => JSON.stringify({
      recharges: await q(`SELECT tx_status, count(*)::int AS n, count(DISTINCT address)::int AS addresses FROM recharges WHERE application_id = $1 AND address = ANY($2::text[]) GROUP BY 1`, [app.id, addrs]),
      scanner: await q(`SELECT * FROM scan_cursors`).catch((e: Error) => e.message),
      tip: await tipOf(url),
    }));
    if ((await itemStates(addrs)).length) throw new Error('items planned before the trigger');
    const tip0 = await tipOf(url);
    progress('service: policies enabled (the trigger); waiting for every item SUCCESS');
    const dbStats = () => q<{ xacts: string; writes: string; calls: string }>(
      `SELECT (xact_commit + xact_rollback)::text AS xacts, (tup_inserted + tup_updated + tup_deleted)::text AS writes,
              (SELECT coalesce(sum(calls), 0)::text FROM pg_stat_user_functions) AS calls FROM pg_stat_database WHERE datname = current_database()`,
    ).then((r) => r[0]!);
    if (pgss) await resetStatementStats(pg);
    const db0 = await dbStats();
    const t0 = performance.now();
    const w0 = Number(process.hrtime.bigint() / 1000n);
    await setPolicies(true);
    const [{ trigger }] = await q<{ trigger: Date }>('SELECT clock_timestamp() AS trigger');
    let lastDone = -1;
    let lastChange = performance.now();
    let lastShow = 0;
    let stuck: string | null = null;
    for (;;) {
      checkAborted();
      const st = await itemStates(addrs);
      const done = st.find((s) => s.status === 'SUCCESS')?.n ?? 0;
      const failed = st.find((s) => s.status === 'FAILED')?.n ?? 0;
      if (done === N) break;
      if (failed > 0) {
        stuck = `${failed} items FAILED: ${JSON.stringify(await q(`SELECT id, failure_code, failure_message FROM collection_items WHERE application_id = $1 AND status = 'FAILED' AND from_address = ANY($2::text[]) LIMIT 3`, [app.id, addrs]))}`;
        break;
      }
      if (done !== lastDone) { lastDone = done; lastChange = performance.now(); }
      if (performance.now() - lastShow > 5000) { lastShow = performance.now(); progress(`  ${((performance.now() - t0) / 1000).toFixed(1)} s: ${st.map((s) => `${s.status} ${s.n}`).join(', ')}`); }
      if (performance.now() - lastChange > stallMs) {
        stuck = `no item reached SUCCESS for ${stallMs / 1000} s: ${st.map((s) => `${s.status} ${s.n}`).join(', ')}; waiting reasons ${JSON.stringify(await q(`SELECT waiting_reason, status, count(*)::int AS n FROM collection_items WHERE application_id = $1 AND status <> 'SUCCESS' AND from_address = ANY($2::text[]) GROUP BY 1, 2`, [app.id, addrs]))}; ` +
          `transfers ${JSON.stringify(await q(`SELECT kind, status, count(*)::int AS n FROM transfers WHERE application_id = $1 GROUP BY 1, 2`, [app.id]))}`;
        break;
      }
      await sleep(50);
    }
    const serviceS = (performance.now() - t0) / 1000;
    const w1 = Number(process.hrtime.bigint() / 1000n);
    const db1 = await dbStats();
    const serviceBlocks = (await tipOf(url)) - tip0;
    if (stuck) failures.push(`service: ${stuck}`);
    progress(`  service: ${stuck ? 'STOPPED' : 'done'} after ${serviceS.toFixed(2)} s (${serviceBlocks} blocks)`);
    // where the service's time went: the database's clock, from the trigger
    const [phase] = await q<{ first_topup_s: number | null; last_topup_s: number | null; last_funded_s: number | null; last_sweep_signed_s: number | null; last_success_s: number | null; topups: number; sweeps: number }>(
      `WITH i AS (SELECT * FROM collection_items WHERE application_id = $1 AND from_address = ANY($2::text[])), t0 AS (SELECT min(created_at) AS t FROM i)
       SELECT extract(epoch FROM (SELECT min(x.created_at) FROM transfers x JOIN i ON i.topup_transfer_id = x.id) - t0.t)::float AS first_topup_s,
              extract(epoch FROM (SELECT max(x.broadcast_at) FROM transfers x JOIN i ON i.topup_transfer_id = x.id) - t0.t)::float AS last_topup_s,
              extract(epoch FROM (SELECT max(x.finished_at) FROM transfers x JOIN i ON i.topup_transfer_id = x.id) - t0.t)::float AS last_funded_s,
              extract(epoch FROM (SELECT max(x.broadcast_at) FROM transfers x JOIN i ON i.transfer_id = x.id) - t0.t)::float AS last_sweep_signed_s,
              extract(epoch FROM (SELECT max(finished_at) FROM i) - t0.t)::float AS last_success_s,
              (SELECT count(*)::int FROM transfers x JOIN i ON i.topup_transfer_id = x.id) AS topups, (SELECT count(*)::int FROM transfers x JOIN i ON i.transfer_id = x.id) AS sweeps
         FROM t0`,
      [app.id, addrs],
    ).catch((e: Error) => [{ error: e.message } as never]);
    // each kind of transfer: when the first and the last of them were created, signed, broadcast and finished
    const timeline = await q<{ what: string; n: number; created: string; signed: string; broadcast: string; finished: string }>(
      `WITH x AS (SELECT CASE WHEN x.kind = 'SWEEP' AND t.contract IS NULL THEN 'native sweep' WHEN x.kind = 'SWEEP' THEN 'token sweep' ELSE 'top-up' END AS what, x.*
                    FROM transfers x JOIN collection_items i ON x.id IN (i.transfer_id, i.topup_transfer_id) JOIN chain_tokens t ON t.id = x.chain_token_id WHERE i.application_id = $1 AND i.from_address = ANY($2::text[])),
            span AS (SELECT what, count(*)::int AS n,
                            min(created_at) AS c0, max(created_at) AS c1, min(signed_at) AS s0, max(signed_at) AS s1,
                            min(broadcast_at) AS b0, max(broadcast_at) AS b1, min(finished_at) AS f0, max(finished_at) AS f1 FROM x GROUP BY what
              UNION ALL SELECT 'items', count(*)::int, min(created_at), max(created_at), NULL, NULL, NULL, NULL, min(finished_at), max(finished_at)
                FROM collection_items WHERE application_id = $1 AND from_address = ANY($2::text[]))
       SELECT what, n, ${['c', 's', 'b', 'f'].map((k) => `coalesce(to_char(extract(epoch FROM ${k}0 - $3::timestamptz), 'FM990.00') || ' / ' || to_char(extract(epoch FROM ${k}1 - $3::timestamptz), 'FM990.00'), '-') AS ${({ c: 'created', s: 'signed', b: 'broadcast', f: 'finished' } as Record<string, string>)[k]}`).join(', ')}
         FROM span ORDER BY what DESC`,
      [app.id, addrs, trigger],
    ).catch((e: Error) => { out(`timeline not read: ${e.message}`); return []; });
    await stopChild(workers, 15_000);
    workers = null;

    // service cost rows
    const svcTx = await q<{ from_address: string; topup_hash: string | null; topup_amount: string | null; sweep_hash: string | null; topups: number }>(
      `SELECT i.from_address, tu.tx_hash AS topup_hash, tu.amount::text AS topup_amount, sw.tx_hash AS sweep_hash,
              (SELECT count(*)::int FROM transfers y WHERE y.kind = 'TOP_UP' AND y.to_address = i.from_address) AS topups
         FROM collection_items i LEFT JOIN transfers tu ON tu.id = i.topup_transfer_id LEFT JOIN transfers sw ON sw.id = i.transfer_id
        WHERE i.application_id = $1 AND sw.tx_hash IS NOT NULL AND i.from_address = ANY($2::text[])`,
      [app.id, addrs],
    );
    const tokSet = new Set(tokAddrs.map((a) => a.toLowerCase()));
    const badTok = svcTx.filter((r) => tokSet.has(r.from_address.toLowerCase()) && (r.topups !== 1 || !r.topup_hash));
    if (badTok.length) failures.push(`service: ${badTok.length} token addresses not topped up exactly once (e.g. ${JSON.stringify(badTok[0])})`);
    const svcCost = await costRows(url, svcTx.filter((r) => r.sweep_hash).map((r) => ({ address: r.from_address, topup: tokSet.has(r.from_address.toLowerCase()) ? r.topup_hash : null, topupValue: big(r.topup_amount ?? '0'), sweep: r.sweep_hash! })));
    // every token unit at the hot wallet, native addresses at 0
    const tokBals = await rpcBatch<string>(url, tokAddrs.map((a) => ({ method: 'eth_call', params: [{ to: token, data: ERC20.encodeFunctionData('balanceOf', [a]) }, 'latest'] })));
    if (!stuck && tokBals.some((b) => big(b) !== 0n)) failures.push(`service: ${tokBals.filter((b) => big(b) !== 0n).length} token addresses still hold tokens`);

    // ------------------------------------------------------------ figure 1b: the bare script
    progress('bare script: keys in memory, funding the same amounts');
    const bareTok = Array.from({ length: nTok }, () => new Wallet(hexlify(randomBytes(32))));
    const bareNat = Array.from({ length: nNat }, () => new Wallet(hexlify(randomBytes(32))));
    const bareFee = new Wallet(hexlify(randomBytes(32)));
    const bareHot = getAddress(hexlify(randomBytes(20)));
    await fund([...bareTok.map((w) => w.address), bareHot], [...bareNat.map((w) => w.address), bareFee.address], (i) => (i < nNat ? NATIVE_AMOUNT(i) : 100n * ETHER));
    const tipB0 = await tipOf(url);
    progress('bare script: top-ups and native sweeps, then token sweeps');
    const b0 = performance.now();
    fee = await feeNow(url);
    const price = fee.maxFee;
    const sweepData = bareTok.map((_w, i) => ERC20.encodeFunctionData('transfer', [bareHot, TOKEN_AMOUNT(i)]));
    // the estimate with the service's own 20 % margin (its EVM node's default): the same gas limit, so the same top-up
    const sweepGas = (big(await rpc<string>(url, 'eth_estimateGas', [{ from: bareTok[0]!.address, to: token, data: sweepData[0] }])) * 120n + 99n) / 100n;
    const topupValue = sweepGas * price;
    const natBals = await rpcBatch<string>(url, bareNat.map((w) => ({ method: 'eth_getBalance', params: [w.address, 'latest'] })));
    const natRaw = await Promise.all(bareNat.map((w, i) => w.signTransaction({ type: 2, chainId: EVM_CHAIN_ID, nonce: 0, to: bareHot, value: big(natBals[i]!) - 21_000n * price, gasLimit: 21_000n, maxFeePerGas: price, maxPriorityFeePerGas: price })));
    const [topHashes, natHashes] = await Promise.all([
      sendMany(url, bareFee.privateKey, bareTok.map((w) => ({ to: w.address, value: topupValue, gasLimit: 21_000n })), { maxFee: price, tip: fee.tip }),
      rpcBatch<string>(url, natRaw.map((r) => ({ method: 'eth_sendRawTransaction', params: [r] }))),
    ]);
    await waitReceipts(url, topHashes, CONFIRMATIONS, 300_000, 'bare top-ups');
    const sweepRaw = await Promise.all(bareTok.map((w, i) => w.signTransaction({ type: 2, chainId: EVM_CHAIN_ID, nonce: 0, to: token, data: sweepData[i]!, gasLimit: sweepGas, maxFeePerGas: price, maxPriorityFeePerGas: fee.tip })));
    const sweepHashes = await rpcBatch<string>(url, sweepRaw.map((r) => ({ method: 'eth_sendRawTransaction', params: [r] })));
    const bareRc = await waitReceipts(url, [...natHashes, ...sweepHashes], CONFIRMATIONS, 300_000, 'bare sweeps');
    const bareS = (performance.now() - b0) / 1000;
    const bareBlocks = (await tipOf(url)) - tipB0;
    const bareFailed = [...bareRc.values()].filter((r) => r.status !== '0x1');
    if (bareFailed.length > 0) failures.push(`bare: ${bareFailed.length} sweeps failed (e.g. ${bareFailed[0]!.transactionHash} gasUsed ${big(bareFailed[0]!.gasUsed)})`);
    progress(`  bare: ${bareS.toFixed(2)} s (${bareBlocks} blocks)`);
    const bareCost = await costRows(url, [
      ...bareTok.map((w, i) => ({ address: w.address, topup: topHashes[i]!, topupValue, sweep: sweepHashes[i]! })),
      ...bareNat.map((w, i) => ({ address: w.address, topup: null, topupValue: 0n, sweep: natHashes[i]! })),
    ]);

    // ------------------------------------------------------------ report
    const ratio = (bareS / serviceS) * 100;
    const svcC = costSummary(svcCost);
    const bareC = costSummary(bareCost);
    out('');
    out(`sweep throughput: ${fmtInt(N)} addresses (${nTok} token + top-up, ${nNat} native), from the trigger until every transfer has ${CONFIRMATIONS} confirmations`);
    out(`  (the bare script also waits for ${CONFIRMATIONS} confirmations, of its top-ups before the token transfers and of every last receipt, for fairness)`);
    out(table(['target', 's', 'blocks', 'addresses/s', 'vs bare', 'goal', 'result'], [
      ['bare ethers script', bareS.toFixed(2), fmtInt(bareBlocks), (N / bareS).toFixed(1), '100 %', '-', '-'],
      ['service (workers)', stuck ? `${serviceS.toFixed(2)} (stopped)` : serviceS.toFixed(2), fmtInt(serviceBlocks), stuck ? '-' : (N / serviceS).toFixed(1), `${ratio.toFixed(1)} %`, `>= ${GOAL_THROUGHPUT_PERCENT} %`, stuck ? 'INVALID' : ratio >= GOAL_THROUGHPUT_PERCENT ? 'met' : 'NOT MET'],
    ], [false, true, true, true, true, false, false]));
    if (phase) out(`  service phases (database clock, s after the first item was planned): ${JSON.stringify(phase)}`);
    if (pgss) {
      out('  statements during the run by total time (BENCH_PGSS):');
      const top = await q<{ calls: string; us: string; ms: string; q: string }>(
        `SELECT calls::text, round((total_exec_time / calls)::numeric * 1000, 1)::text AS us, round(total_exec_time::numeric, 1)::text AS ms, left(regexp_replace(query, '\\s+', ' ', 'g'), 150) AS q
           FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY total_exec_time DESC LIMIT 25`,
      );
      for (const x of top) out(`    ${x.ms} ms, ${x.calls} calls, ${x.us} µs/call: ${x.q}`);
    }
    out(`  database during the run (all processes, the bench's own polling included): ${fmtInt(Number(db1.xacts) - Number(db0.xacts))} transactions, ${fmtInt(Number(db1.writes) - Number(db0.writes))} rows written`);
    if (timeline.length) {
      out('  timeline (database clock, s after the trigger; first / last of each step):');
      out(table(['transfers', 'n', 'created', 'signed', 'broadcast', 'finished'], timeline.map((r) => [r.what, fmtInt(r.n), r.created, r.signed, r.broadcast, r.finished]), [false, true, false, false, false, false]));
    }
    out('');
    out(`cost per swept address (service: every sweep mined on chain, whatever its item's state): (fees paid + over-funding) / (21000 x top-up price + sweep gasUsed x its price); goal <= ${GOAL_COST_RATIO.toFixed(2)}x`);
    const gw = (w: string | null) => (w === null ? '-' : `${(Number(w) / 1e9).toFixed(0)} gwei`);
    const rowsOf = (name: string, c: ReturnType<typeof costSummary>) => (['token', 'native', 'all'] as const).map((k) => [
      name, k, fmtInt(c[k].addresses), c[k].ratio === null ? '-' : `${c[k].ratio!.toFixed(4)}x`, c[k].worstAddressRatio === null ? '-' : `${c[k].worstAddressRatio!.toFixed(4)}x`,
      gw(c[k].wasteWei === '0' ? '0' : String(Number(c[k].wasteWei) / Math.max(1, c[k].addresses))), gw(c[k].leftoverMeanWei), gw(c[k].leftoverMaxWei),
    ]);
    out(table(['target', 'addresses', 'n', 'ratio', 'worst address', 'over-funding/addr', 'leftover mean', 'leftover max'],
      [...rowsOf('service', svcC), ...rowsOf('bare', bareC)], [false, false, true, true, true, true, true, true]));
    const svcRatio = svcC.all.ratio;
    out('');
    out(`goal sweep throughput >= ${GOAL_THROUGHPUT_PERCENT} % of the bare script: ${ratio.toFixed(1)} %, ${!stuck && ratio >= GOAL_THROUGHPUT_PERCENT ? 'met' : 'not met'}`);
    out(`goal cost <= ${GOAL_COST_RATIO}x: ${svcRatio === null ? '-' : svcRatio.toFixed(4) + 'x'} (token addresses ${svcC.token.ratio === null || svcC.token.ratio === undefined ? '-' : svcC.token.ratio.toFixed(4) + 'x'}), ${svcRatio !== null && svcRatio <= GOAL_COST_RATIO ? 'met' : 'not met'}`);
    out('BTC consolidation (vsize vs minimum): not measured by this script');
    printFailures(out, failures);
    const resultsFile = writeResults('collection.json', {
      benchmark: 'collection', date: new Date().toISOString(), machine,
      settings: { n: N, tokenAddresses: nTok, nativeAddresses: nNat, blockMs, pollMs, planMs, confirmations: CONFIRMATIONS, anvilArgs: ANVIL_ARGS },
      throughput: { serviceSeconds: serviceS, bareSeconds: bareS, serviceBlocks, bareBlocks, ratioPercent: ratio, goalPercent: GOAL_THROUGHPUT_PERCENT, phases: phase ?? null, stuck },
      cost: { service: svcC, bare: bareC, goal: GOAL_COST_RATIO, bareSweepGasLimit: sweepGas.toString(), barePriceWei: price.toString() },
      correctness: { ok: failures.length === 0, failures },
      // the service's run on the monotonic clock (µs), for cpuprofile-top --results --target service
      runs: [{ target: 'service', windowUs: [w0, w1] }],
    });
    out(`results: ${resultsFile}`);
    if (failures.length) return 1;
    if (enforce && !(ratio >= GOAL_THROUGHPUT_PERCENT && svcRatio !== null && svcRatio <= GOAL_COST_RATIO)) return 1;
    return 0;
  } finally {
    await cleanup.run();
  }
}

runMain(main);
