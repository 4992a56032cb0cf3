/**
 * One collection mode of the service on a chain of its own (collection-delegated benchmark): a
 * fresh anvil (Prague, blocks on a clock) with an ERC-20, a fresh database, `wcs app create`,
 * `wcs start --api-only` and `--workers-only`; a warm-up sweep in the mode measured (the fee
 * wallet made and funded; in DELEGATED mode the forwarder and the batch sweeper deployed there);
 * N deposit addresses made through the signed API, funded (half the ERC-20 and no gas, half
 * native) and CONFIRMED as deposits; then each sweep: the two policies enabled in the mode (the
 * trigger) until every item is SUCCESS, its transactions and receipts read after. A second sweep
 * funds the same addresses again (in DELEGATED mode they are delegated by then: no
 * authorization). The chain stays up for the caller (the bare script runs on it).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { deployErc20, startAnvil, startBlockClock, type AnvilDevnet, type BlockClock } from '@wcs/adapter-evm/devnet';
import { createTestDatabase, testEnv } from '@wcs/server/testing';
import { rpc } from './evm';
import { checkAborted, CleanupStack, sleep, startChild, stopChild, withTimeout, type Child } from './processes';
import { progress } from './report';
import { ETHER, EVM_CHAIN_ID, FEE_FUNDER, feeNow, fund, nativeBalances, NATIVE_AMOUNT, sendMany, tipOf, tokenBalances, TOKEN_AMOUNT, waitReceipts } from './sweep-chain';
import { batchTimeline, deployCosts, queryOf, sweepCosts, timeline, type BatchTimelineRow, type SweepCosts, type TimelineRow } from './sweep-measure';
import type { CostTotals } from './sweep-gas';
import { createAddresses as createAddressesVia, createAppViaCli, startApiServer, wcsStartArgs, LIMITS_FAR_ABOVE_LOAD } from './wcs';

export type SweepMode = 'TOPUP' | 'DELEGATED';
export const ETH_TOKEN_ID = 10200;
export const TOKEN_ID = 10299;
export const CONFIRMATIONS = 3;
export const ANVIL_ARGS = ['--hardfork', 'prague'];

export interface ServiceSettings {
  readonly n: number;
  readonly blockMs: number;
  readonly pollMs: number;
  readonly planMs: number;
  readonly stallMs: number;
  readonly secondSweep: boolean;
  /** The test ETH chain's `traces` option: "off", or "auto" (the catalogue's default). */
  readonly traces: 'off' | 'auto';
}

/** The catalogue's built-in test ETH entry (server/src/catalogue/default-catalogue.ts), given again with options. */
const ETH_TEST_CHAIN = { id: 102, code: 'ETH', name: 'Ethereum Sepolia', family: 'evm', environment: 'test', network: 'sepolia', nativeSymbol: 'ETH', decimals: 18, confirmations: 3, evmChainId: EVM_CHAIN_ID };

export interface SweepRun {
  readonly label: 'first' | 'second';
  readonly seconds: number;
  readonly blocks: number;
  /** Blocks as the bench saw them appear (the tip polled about every 50 ms with the items): mean interval and longest gap, ms. */
  readonly blockClock: { meanMs: number | null; longestGapMs: number | null };
  /** Why the sweep stopped short (items FAILED, or none reached SUCCESS for stallMs), else null. */
  readonly stuck: string | null;
  readonly costs: SweepCosts | null;
  readonly timeline: TimelineRow[];
  /** DELEGATED: each batch's life, seconds after the trigger (database clock). */
  readonly batches: BatchTimelineRow[];
}

export interface ModeRun {
  readonly mode: SweepMode;
  readonly url: string;
  /** The chain's block clock (still running: the caller's chainCleanup stops it). */
  readonly clock: BlockClock;
  readonly token: string;
  readonly hot: string;
  readonly feeWallet: string;
  readonly sweeps: SweepRun[];
  /** Every DEPLOY of the application (made at the warm-up in DELEGATED mode). */
  readonly deploy: CostTotals;
  readonly failures: string[];
}

/**
 * Runs one mode. `chainCleanup` receives the anvil and its block clock (the caller stops them
 * after whatever else it runs on that chain); everything else is stopped before this returns.
 */
export async function runServiceMode(mode: SweepMode, s: ServiceSettings, chainCleanup: CleanupStack): Promise<ModeRun> {
  const cleanup = new CleanupStack();
  const failures: string[] = [];
  try {
    const db = await createTestDatabase();
    cleanup.push('drop database', () => withTimeout(db.drop(), 30_000));
    const anvil: AnvilDevnet = await startAnvil({ chainId: EVM_CHAIN_ID, extraArgs: ANVIL_ARGS });
    chainCleanup.push('stop anvil', () => anvil.stop());
    const url = anvil.url;
    const token = await deployErc20(url, { name: 'Test USD', symbol: 'TUSD' });
    const clock: BlockClock = await startBlockClock(url, s.blockMs);
    chainCleanup.push('stop block clock', () => clock.stop());
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-bench-delegated-'));
    cleanup.push('remove config', async () => fs.rmSync(dir, { recursive: true, force: true }));
    const configFile = path.join(dir, 'config.json');
    // traces "off" (default): anvil's debug_traceBlockByNumber grows with the square of a block's
    // transactions (bench/README.md, deposits), and the funding and the top-up sweeps put hundreds in
    // a block: with the scanner's default (traces read) anvil stops answering for minutes
    const chains = s.traces === 'off' ? [{ ...ETH_TEST_CHAIN, options: { traces: 'off' } }] : [];
    fs.writeFileSync(configFile, JSON.stringify({ chains, tokens: [{ id: TOKEN_ID, chainCode: 'ETH', environment: 'test', symbol: 'TUSD', name: 'Test USD (anvil)', contract: token, decimals: 18 }] }));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...testEnv(db.url, { WCS_LOG_LEVEL: process.env.WCS_LOG_LEVEL ?? 'error', ...LIMITS_FAR_ABOVE_LOAD }),
      WCS_RPC_TEST_ETH: url, WCS_CONFIG: configFile,
    };
    const app = await createAppViaCli(env, `bench-${mode.toLowerCase()}`, ['ETH']);
    if (app.id === null) throw new Error('wcs app create printed no application id');
    const appId = app.id;
    const api = await startApiServer({ env: (port) => ({ ...env, PORT: String(port) }), nodeArgs: [], cpuProf: false, cleanup });
    const pg = new Client({ connectionString: db.url });
    pg.on('error', (e) => progress(`bench pg: ${e.message}`));
    await pg.connect();
    cleanup.push('close pg', () => withTimeout(pg.end(), 5_000));
    const q = queryOf(pg);
    const chainId = (await q<{ id: number }>(`SELECT id FROM chains WHERE code = 'ETH' AND environment = 'test'`))[0]?.id;
    if (chainId === undefined) throw new Error('no test ETH chain in the catalogue');
    const started = wcsStartArgs('--workers-only', [], false, `delegated-${mode}`);
    let workers: Child | null = startChild(`workers ${mode.toLowerCase()}`, started.args, {
      ...env, WCS_SCAN_POLL_MS: '200', WCS_HOT_WALLET_REFRESH_MS: '300', WCS_WITHDRAW_POLL_MS: String(s.pollMs), WCS_COLLECT_PLAN_MS: String(s.planMs),
    });
    cleanup.push('stop workers', async () => { if (workers) await stopChild(workers, 30_000); });
    const waitFor = async (what: string, cond: () => Promise<boolean>, timeoutMs: number, explain?: () => Promise<string>): Promise<void> => {
      const deadline = Date.now() + timeoutMs;
      while (!(await cond())) {
        checkAborted();
        if (workers && workers.hasExited()) throw new Error(`${mode}: the workers exited while waiting for ${what}:\n${workers.tail()}`);
        if (Date.now() > deadline) throw new Error(`${mode}: timed out after ${timeoutMs} ms waiting for ${what}${explain ? `: ${await explain().catch((e: Error) => e.message)}` : ''}`);
        await sleep(100);
      }
    };
    const setPolicies = (enabled: boolean) => q(
      `INSERT INTO collection_policies (application_id, chain_token_id, threshold, max_fee_bps, native_value, on_confirmed, schedule_seconds, enabled, sweep_mode)
       VALUES ($1, $2, $3::numeric, 1000, NULL, true, NULL, $5, $8), ($1, $4, $6::numeric, 1000, $7::numeric, true, NULL, $5, $8)
       ON CONFLICT (application_id, chain_token_id) DO UPDATE SET enabled = EXCLUDED.enabled, sweep_mode = EXCLUDED.sweep_mode, updated_at = now()`,
      [appId, ETH_TOKEN_ID, (ETHER / 1000n).toString(), TOKEN_ID, enabled, ETHER.toString(), (3000n * ETHER).toString(), mode],
    );
    const createAddresses = (users: string[]) => createAddressesVia(api.port, app, 'ETH', users);
    const confirmed = async (addrs: string[]) =>
      (await q<{ n: number }>(`SELECT count(*)::int AS n FROM recharges WHERE chain_id = $1 AND application_id = $2 AND tx_status IN ('CONFIRMED','SETTLED') AND address = ANY($3::text[])`, [chainId, appId, addrs]))[0]!.n;
    const itemStates = (addrs: string[], afterItem: string) =>
      q<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM collection_items WHERE application_id = $1 AND stage = 'HOT_GATHER' AND id > $3::bigint AND from_address = ANY($2::text[]) GROUP BY status`, [appId, addrs, afterItem]);
    const lastItem = async () => (await q<{ id: string }>('SELECT coalesce(max(id), 0)::text AS id FROM collection_items WHERE application_id = $1', [appId]))[0]!.id;
    /** Funds the addresses (native with room for a delegated account's receive()) and waits for `expect` confirmed deposits among them. */
    const fundAndConfirm = async (what: string, tok: string[], nat: string[], expectDeposits: number) => {
      await fund(url, token, tok, nat, NATIVE_AMOUNT, clock);
      const all = [...tok, ...nat];
      await waitFor(`${what}: ${expectDeposits} deposits CONFIRMED`, async () => (await confirmed(all)) >= expectDeposits, 120_000 + 100 * all.length, async () => JSON.stringify({
        recharges: await q(`SELECT tx_status, count(*)::int AS n FROM recharges WHERE application_id = $1 AND address = ANY($2::text[]) GROUP BY 1`, [appId, all]),
        tip: await tipOf(url),
      }));
    };

    // ------------------------------------------------------------ hot wallet, fee quote, warm-up (fee wallet; contracts in DELEGATED mode)
    progress(`${mode}: hot wallet, native fee quote`);
    let hot = '';
    await waitFor('the hot wallet', async () => {
      hot = (await q<{ address: string }>('SELECT address FROM hot_wallets WHERE application_id = $1 AND chain_id = $2', [appId, chainId]))[0]?.address ?? '';
      return hot !== '';
    }, 60_000);
    await fund(url, token, [], [hot], () => 10n * ETHER, clock);
    await waitFor('the native fee quote', async () => (await q<{ n: number }>('SELECT count(*)::int AS n FROM withdraw_fee_quotes WHERE chain_id = $1 AND chain_token_id = $2', [chainId, ETH_TOKEN_ID]))[0]!.n === 1, 60_000);
    progress(`${mode}: warm-up sweep of one ERC-20 and one native address`);
    const warm = await createAddresses(['warm-t', 'warm-n']);
    await fundAndConfirm('warm-up', [warm[0]!], [warm[1]!], 2);
    await setPolicies(true);
    let feeWallet = '';
    await waitFor('the fee wallet', async () => {
      feeWallet = (await q<{ address: string }>('SELECT address FROM fee_wallets WHERE application_id = $1 AND chain_id = $2', [appId, chainId]))[0]?.address ?? '';
      return feeWallet !== '';
    }, 120_000);
    const f0 = await feeNow(url);
    await waitReceipts(url, await sendMany(url, FEE_FUNDER, [{ to: feeWallet, value: 100n * ETHER, gasLimit: 21_000n }], { maxFee: f0.maxFee * 2n, tip: f0.tip }), 1, 60_000, 'fee wallet funding');
    await waitFor('the warm-up items SUCCESS', async () => (await itemStates(warm, '0')).find((x) => x.status === 'SUCCESS')?.n === 2, 180_000, async () =>
      JSON.stringify(await q('SELECT i.status, i.waiting_reason, x.kind, x.status AS transfer_status, x.fail_reason FROM collection_items i LEFT JOIN transfers x ON x.id IN (i.transfer_id, i.topup_transfer_id) WHERE i.application_id = $1', [appId])));
    await setPolicies(false);

    // ------------------------------------------------------------ the N addresses
    const nTok = Math.floor(s.n / 2);
    progress(`${mode}: creating ${s.n} deposit addresses through the API, funding them`);
    const addrs = await createAddresses([...Array.from({ length: nTok }, (_, i) => `t-${i}`), ...Array.from({ length: s.n - nTok }, (_, i) => `n-${i}`)]);
    const tok = addrs.slice(0, nTok);
    const nat = addrs.slice(nTok);
    await fundAndConfirm('funding', tok, nat, s.n);
    const sweeps: SweepRun[] = [];
    for (const label of s.secondSweep ? (['first', 'second'] as const) : (['first'] as const)) {
      if (label === 'second') {
        await setPolicies(false);
        progress(`${mode}: funding the same addresses again for the second sweep`);
        await fundAndConfirm('second funding', tok, nat, 2 * s.n);
      }
      const afterItem = await lastItem();
      if ((await itemStates(addrs, afterItem)).length) throw new Error(`${mode}: items planned before the trigger`);
      const tip0 = await tipOf(url);
      progress(`${mode}: ${label} sweep: policies enabled (the trigger); waiting for every item SUCCESS`);
      const [{ trigger }] = (await q<{ trigger: Date }>('SELECT clock_timestamp() AS trigger')) as [{ trigger: Date }];
      const t0 = performance.now();
      await setPolicies(true);
      let lastDone = -1;
      let lastChange = performance.now();
      let lastShow = 0;
      let stuck: string | null = null;
      // when each block was first seen (the tip polled with the items): how fast anvil mined during the sweep
      const seen = new Map<number, number>([[tip0, Date.now()]]);
      for (;;) {
        checkAborted();
        const [st, tip] = await Promise.all([itemStates(addrs, afterItem), tipOf(url)]);
        if (!seen.has(tip)) seen.set(tip, Date.now());
        const done = st.find((x) => x.status === 'SUCCESS')?.n ?? 0;
        const failed = st.find((x) => x.status === 'FAILED')?.n ?? 0;
        if (done === s.n) break;
        if (failed > 0) {
          stuck = `${failed} items FAILED: ${JSON.stringify(await q(`SELECT id, failure_code, failure_message FROM collection_items WHERE application_id = $1 AND status = 'FAILED' AND id > $3::bigint AND from_address = ANY($2::text[]) LIMIT 3`, [appId, addrs, afterItem]))}`;
          break;
        }
        if (done !== lastDone) { lastDone = done; lastChange = performance.now(); }
        if (performance.now() - lastShow > 5000) { lastShow = performance.now(); progress(`  ${((performance.now() - t0) / 1000).toFixed(1)} s: ${st.map((x) => `${x.status} ${x.n}`).join(', ')}`); }
        if (performance.now() - lastChange > s.stallMs) {
          stuck = `no item reached SUCCESS for ${s.stallMs / 1000} s: ${st.map((x) => `${x.status} ${x.n}`).join(', ')}; waiting reasons ${JSON.stringify(await q(`SELECT waiting_reason, status, count(*)::int AS n FROM collection_items WHERE application_id = $1 AND status <> 'SUCCESS' AND id > $3::bigint AND from_address = ANY($2::text[]) GROUP BY 1, 2`, [appId, addrs, afterItem]))}; ` +
            `transfers ${JSON.stringify(await q(`SELECT kind, status, fail_code, count(*)::int AS n FROM transfers WHERE application_id = $1 AND created_at >= $2 GROUP BY 1, 2, 3`, [appId, trigger]))}`;
          break;
        }
        await sleep(50);
      }
      const seconds = (performance.now() - t0) / 1000;
      const blocks = (await tipOf(url)) - tip0;
      const seenList = [...seen.entries()].sort((a, b) => a[0] - b[0]);
      const gaps = seenList.slice(1).map(([, at], i) => at - seenList[i]![1]);
      const blockClock = { meanMs: gaps.length ? (seenList[seenList.length - 1]![1] - seenList[0]![1]) / (seenList[seenList.length - 1]![0] - seenList[0]![0]) : null, longestGapMs: gaps.length ? Math.max(...gaps) : null };
      const minedAt = (block: number | null) => {
        if (block === null) return null;
        const first = seenList.find(([b]) => b >= block);
        return first ? (first[1] - trigger.getTime()) / 1000 : null;
      };
      if (stuck) failures.push(`${mode} ${label} sweep: ${stuck}`);
      progress(`  ${mode} ${label}: ${stuck ? 'STOPPED' : 'done'} after ${seconds.toFixed(2)} s (${blocks} blocks)`);
      const tl = await timeline(q, { appId, afterItem, addrs, trigger }).catch((e: Error) => { failures.push(`${mode} ${label}: timeline not read: ${e.message}`); return []; });
      const bt = mode === 'DELEGATED' ? await batchTimeline(q, { appId, since: trigger }).catch((e: Error) => { failures.push(`${mode} ${label}: batch timeline not read: ${e.message}`); return []; }) : [];
      for (const b of bt) b.seen = minedAt(b.block);
      // every transaction sent is mined (or the sweep stopped): wait for the stragglers' receipts before reading them
      await sleep(3 * s.blockMs);
      const costs = await sweepCosts(q, url, { appId, afterItem, since: trigger, addrs, tokenId: TOKEN_ID }).catch((e: Error) => { failures.push(`${mode} ${label}: costs not read: ${e.message}`); return null; });
      if (costs) checkCosts(mode, label, costs, s.n, failures);
      // every unit at the hot wallet: the deposit addresses hold no token; native ones nothing at all
      const tb = await tokenBalances(url, token, tok);
      if (!stuck && tb.some((b) => b !== 0n)) failures.push(`${mode} ${label}: ${tb.filter((b) => b !== 0n).length} ERC-20 addresses still hold tokens`);
      const nb = await nativeBalances(url, nat);
      if (!stuck && nb.some((b) => b !== 0n)) failures.push(`${mode} ${label}: ${nb.filter((b) => b !== 0n).length} native addresses still hold ether`);
      const hotTok = (await tokenBalances(url, token, [hot]))[0]!;
      const expected = BigInt(sweeps.length + 1) * tok.reduce((a, _x, i) => a + TOKEN_AMOUNT(i), 0n) + TOKEN_AMOUNT(0);
      if (!stuck && hotTok !== expected) failures.push(`${mode} ${label}: the hot wallet holds ${hotTok} token units, expected ${expected}`);
      sweeps.push({ label, seconds, blocks, blockClock, stuck, costs, timeline: tl, batches: bt });
      if (stuck) break;
    }
    await stopChild(workers, 30_000);
    workers = null;
    const deploy = await deployCosts(q, url, appId);
    if (mode === 'DELEGATED') {
      const code = await rpc<string>(url, 'eth_getCode', [tok[0], 'latest']);
      if (!code.startsWith('0xef0100')) failures.push(`DELEGATED: ${tok[0]} is not delegated after the sweeps (code ${code.slice(0, 20)})`);
    }
    return { mode, url, clock, token, hot, feeWallet, sweeps, deploy, failures };
  } finally {
    await cleanup.run();
  }
}

/** What must hold of a sweep's transactions: every one mined successfully; in DELEGATED mode batches only (no top-up path), authorizations on the first sweep only. */
function checkCosts(mode: SweepMode, label: string, c: SweepCosts, n: number, failures: string[]): void {
  const bad = c.txs.filter((t) => !t.ok);
  if (bad.length) failures.push(`${mode} ${label}: ${bad.length} transactions reverted (e.g. ${bad[0]!.kind} ${bad[0]!.hash})`);
  if (c.unsent.length) failures.push(`${mode} ${label}: transfers never sent: ${JSON.stringify(c.unsent)}`);
  const kinds = new Set(c.txs.map((t) => t.kind));
  if (mode === 'DELEGATED') {
    if (kinds.has('TOP_UP') || kinds.has('SWEEP')) failures.push(`DELEGATED ${label}: the top-up path ran (${[...kinds].join(', ')}): delegated sweeps were not used`);
    const swept = c.batchSizes.reduce((a, b) => a + b, 0);
    if (swept !== n) failures.push(`DELEGATED ${label}: the batches swept ${swept} items, expected ${n}`);
    const wantAuth = label === 'first' ? n : 0;
    if (c.authorizations !== wantAuth) failures.push(`DELEGATED ${label}: ${c.authorizations} authorizations sent, expected ${wantAuth}`);
  } else {
    if (kinds.has('SWEEP_BATCH')) failures.push(`TOPUP ${label}: batches in top-up mode`);
    if (c.irregular.length) failures.push(`TOPUP ${label}: ${c.irregular.length} ERC-20 addresses not swept by exactly one top-up and one sweep (e.g. ${c.irregular[0]})`);
  }
}
