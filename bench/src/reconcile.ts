/**
 * Benchmark: a full reconciliation pass over 10,000 EVM deposit addresses with two tokens on anvil
 * (issue 28, "Benchmark") vs a bare script reading the same balances with the same batching.
 *
 *   A (the service): `wcs reconcile run --chain ETH --full`: the read point, custody addresses,
 *     30,000 balances (ETH and two ERC-20s per address) through the EVM BalanceReader
 *     (eth_getBalance in JSON-RPC batches of 100, balanceOf aggregated 500 per Multicall3
 *     aggregate3 call), the ledger in one SQL aggregate over 20,000 deposit records, the
 *     explanations, 30,000 comparisons written in one transaction. Timed by the pass itself
 *     (its durationMs: from its first query to its commit; the CLI's start is not counted).
 *   B (bare): the same 30,000 balances at the same block read by an EvmBalanceReader in this
 *     process, in one call (the same JSON-RPC batches and Multicall3 aggregation), nothing else.
 *
 * Figure: B time / A time per round (the pass's throughput as a share of the bare read's), median
 * over rounds; goal >= 70 %. Checked: every pass compares 30,000 (address, token) pairs with zero
 * unexplained. See bench/README.md ("reconcile").
 *
 *   node bench/dist/reconcile.js                 (after npx tsc -b tsconfig.json)
 *   BENCH_RECONCILE_ADDRESSES=2000 BENCH_RECONCILE_ROUNDS=1 node bench/dist/reconcile.js   (a quick run)
 *   BENCH_CPU_PROF=1 BENCH_PGSS=1 node bench/dist/reconcile.js   (a CPU profile of each measured pass's CLI process, top statements)
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import { Client } from 'pg';
import { getAddress, hexlify, randomBytes } from 'ethers';
import { anvilRpc, deployErc20, deployMulticall3, mine, setAutomine, startAnvil } from '@wcs/adapter-evm/devnet';
import { EvmBalanceReader } from '@wcs/adapter-evm';
import { createTestDatabase, prepareTestKeystore, testEnv, TEST_ACTOR } from '@wcs/server/testing';
import { openStorage, loadConfig, createLogger } from '@wcs/server';
import { requestStatementStats, resetStatementStats, topStatements } from './lib/postgres';
import { RESULTS_DIR } from './lib/report';
import { boolEnv } from './lib/settings';

const ETH_CHAIN = 102;
const TOKENS = [{ id: 10296, symbol: 'TUSD', decimals: 18 }, { id: 10295, symbol: 'TEUR', decimals: 6 }];
const DEV = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const GOAL_PERCENT = 70;
const WCS_BIN = path.join(path.dirname(require.resolve('@wcs/server/package.json')), 'bin', 'wcs.js');

const intEnv = (k: string, d: number) => (process.env[k] ? Number(process.env[k]) : d);
const mint = (to: string, amount: bigint) => '0x40c10f19' + to.slice(2).toLowerCase().padStart(64, '0') + amount.toString(16).padStart(64, '0');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const say = (s: string) => process.stdout.write(s + '\n');

function wcs(args: string[], env: NodeJS.ProcessEnv, nodeArgs: string[] = []): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...nodeArgs, WCS_BIN, ...args], { env, maxBuffer: 64 * 1024 * 1024, timeout: 600_000 }, (e, stdout, stderr) => (e ? reject(new Error(`wcs ${args.join(' ')}: ${e.message}\n${stdout}\n${stderr}`)) : resolve({ stdout, stderr })));
  });
}

async function main(): Promise<void> {
  const n = intEnv('BENCH_RECONCILE_ADDRESSES', 10_000);
  const rounds = intEnv('BENCH_RECONCILE_ROUNDS', 3);
  const cpuProf = boolEnv('BENCH_CPU_PROF');
  const pgss = requestStatementStats(); // BENCH_PGSS=1, before the cluster starts
  const profileDir = path.join(RESULTS_DIR, 'profiles');
  const anvil = await startAnvil({ chainId: 11155111 });
  const db = await createTestDatabase();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-bench-reconcile-'));
  try {
    await deployMulticall3(anvil.url);
    const contracts = [await deployErc20(anvil.url, { name: 'Test USD', symbol: 'TUSD' }), await deployErc20(anvil.url, { name: 'Test EUR', symbol: 'TEUR' })];
    const configFile = path.join(dir, 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({
      includeDefaultCatalogue: true,
      tokens: TOKENS.map((t, i) => ({ id: t.id, chainCode: 'ETH', environment: 'test', symbol: t.symbol, name: `${t.symbol} (anvil)`, contract: contracts[i], decimals: t.decimals })),
    }));
    const ksEnv = await prepareTestKeystore();
    const env = { ...process.env, ...ksEnv, ...testEnv(db.url, { WCS_RPC_TEST_ETH: anvil.url, WCS_CONFIG: configFile, WCS_RECONCILE_INTERVAL_SECONDS: '0' }) } as NodeJS.ProcessEnv;
    const config = loadConfig(env as Record<string, string>);
    const storage = await openStorage(config, createLogger({ level: 'warn', format: 'json' }));
    const app = await storage.applications.create(TEST_ACTOR, { name: 'bench-reconcile', environment: 'test', chains: ['ETH'] });
    // the default catalogue's Sepolia tokens have no contract on anvil: out of this run
    await storage.database.sequelize.query(`UPDATE chain_tokens SET active = false WHERE chain_id = $1 AND contract IS NOT NULL AND id <> ALL($2::int[])`, { bind: [ETH_CHAIN, TOKENS.map((t) => t.id)] });
    await storage.close();

    // 10,000 deposit addresses (bulk rows, as the deposits benchmark), each holding both tokens
    const addresses = Array.from({ length: n }, () => getAddress(hexlify(randomBytes(20))));
    const pg = new Client({ connectionString: db.url });
    await pg.connect();
    await pg.query(
      `WITH k AS (INSERT INTO user_keys (application_id, namespace, external_user_id, key_index, public_key)
                  SELECT $1, 'evm', u, i, pk FROM unnest($2::text[], $3::bigint[], $4::bytea[]) AS t(u, i, pk) RETURNING id, external_user_id)
       INSERT INTO addresses (application_id, chain_id, chain_code, external_user_id, address, memo, user_key_id)
       SELECT $1, $5, 'ETH', k.external_user_id, a.address, NULL, k.id FROM k JOIN unnest($2::text[], $6::text[]) AS a(u, address) ON a.u = k.external_user_id`,
      [app.id, addresses.map((_, i) => `r-${i}`), addresses.map((_, i) => String(1_000_000 + i)), addresses.map(() => Buffer.concat([Buffer.from([2]), randomBytes(32)])), ETH_CHAIN, addresses],
    );
    say(`minting ${2 * n} balances on anvil...`);
    await setAutomine(anvil.url, false);
    let nonce = BigInt(await anvilRpc<string>(anvil.url, 'eth_getTransactionCount', [DEV, 'pending']));
    const amountOf = (i: number, t: number) => BigInt(i + 1) * (t === 0 ? 10n ** 15n : 1000n);
    const sends = addresses.flatMap((a, i) => contracts.map((c, t) => ({ from: DEV, to: c, data: mint(a, amountOf(i, t)), gas: '0x186a0', nonce: `0x${(nonce++).toString(16)}` })));
    for (let i = 0; i < sends.length; i += 100) {
      await Promise.all(sends.slice(i, i + 100).map((tx) => anvilRpc(anvil.url, 'eth_sendTransaction', [tx])));
      await mine(anvil.url, 1); // anvil's pool holds a bounded number of one sender's transactions
    }
    for (let left = 1; left > 0;) {
      await mine(anvil.url, 1);
      left = Number(BigInt((await anvilRpc<{ pending: string }>(anvil.url, 'txpool_status')).pending));
    }
    const last = await anvilRpc<{ status: string } | null>(anvil.url, 'eth_getTransactionReceipt', [await anvilRpc<string>(anvil.url, 'eth_sendTransaction', [{ ...sends[0]!, nonce: `0x${(nonce++).toString(16)}`, data: mint(addresses[0]!, 0n) }]).then(async (h) => { await mine(anvil.url, 1); return h; })]);
    if (last?.status !== '0x1') throw new Error('the mints did not all apply');
    const head = await anvilRpc<{ number: string; hash: string }>(anvil.url, 'eth_getBlockByNumber', ['latest', false]);
    // the ledger: one credited deposit per (address, token), as the scan would have recorded them; the scan's cursor at the head
    const rows = addresses.flatMap((a, i) => TOKENS.map((t, k) => ({ a, token: t.id, amount: amountOf(i, k).toString(), tx: `0x${i.toString(16).padStart(8, '0')}${k}` })));
    await pg.query(
      `INSERT INTO recharges (application_id, chain_id, chain_token_id, address_id, external_user_id, address, tx_hash, position, amount, block_height, block_hash, tx_status, confirmations, min_confirmations)
       SELECT $1, $2, u.token, x.id, x.external_user_id, x.address, u.tx, 0, u.amount::numeric, $3, $4, 'SETTLED', 10, 3
         FROM unnest($5::text[], $6::int[], $7::text[], $8::text[]) AS u(address, token, amount, tx) JOIN addresses x ON x.chain_id = $2 AND x.address = u.address`,
      [app.id, ETH_CHAIN, BigInt(head.number).toString(), head.hash, rows.map((r) => r.a), rows.map((r) => r.token), rows.map((r) => r.amount), rows.map((r) => r.tx)],
    );
    await pg.query('INSERT INTO scan_cursors (chain_id, height, hash) VALUES ($1, $2, $3) ON CONFLICT (chain_id) DO UPDATE SET height = EXCLUDED.height, hash = EXCLUDED.hash',
      [ETH_CHAIN, BigInt(head.number).toString(), head.hash]);
    await pg.end();

    // the bare read runs in a fresh process, as the pass does (`wcs reconcile run`): no warm caches or JIT of an earlier read
    const queries = addresses.flatMap((a) => [{ address: a, contract: null }, ...contracts.map((c) => ({ address: a, contract: c }))]);
    const bareFile = path.join(dir, 'bare.json');
    fs.writeFileSync(bareFile, JSON.stringify({ url: anvil.url, height: head.number, blockHash: head.hash, queries }));
    const bare = async (profile: string | null = null) => {
      if (profile) fs.mkdirSync(profileDir, { recursive: true });
      const nodeArgs = profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${profile}`] : [];
      const out = await new Promise<string>((resolve, reject) => execFile(process.execPath, [...nodeArgs, __filename, '--bare', bareFile], { maxBuffer: 1 << 20, timeout: 600_000 }, (e, stdout, stderr) => (e ? reject(new Error(`bare read: ${e.message}\n${stderr}`)) : resolve(stdout))));
      const r = JSON.parse(out) as { ms: number; cpuMs: number; answers: number };
      if (r.answers !== queries.length) throw new Error('bare: answers missing');
      say(`  bare read: ${r.ms.toFixed(0)} ms, its process's CPU ${r.cpuMs.toFixed(0)} ms`);
      return r.ms;
    };
    const pass = async (profile: string | null = null) => {
      if (profile) fs.mkdirSync(profileDir, { recursive: true });
      const nodeArgs = profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${profile}`] : [];
      const run = await wcs(['reconcile', 'run', '--chain', 'ETH', '--full', '--json'], { ...env, WCS_LOG_LEVEL: 'info', WCS_LOG_FORMAT: 'json' }, nodeArgs);
      const p = (JSON.parse(run.stdout) as Array<{ compared: number; unexplained: number; durationMs: number }>)[0]!;
      // the pass's log line: wall-clock ms per step
      const line = run.stderr.split('\n').map((l) => { try { return JSON.parse(l) as { message?: string; stepsMs?: Record<string, number> }; } catch { return null; } }).find((l) => l?.message === 'reconciliation pass');
      if (line?.stepsMs) say(`  pass steps (ms): ${Object.entries(line.stepsMs).map(([k, v]) => `${k} ${v}`).join(', ')}`);
      if (p.compared !== 3 * n || p.unexplained !== 0) throw new Error(`pass: compared ${p.compared} (expected ${3 * n}), unexplained ${p.unexplained} (expected 0)`);
      return p.durationMs;
    };
    say('warm-up (unmeasured): a pass and a bare read');
    await pass();
    await bare();
    const stats = pgss ? new Client({ connectionString: db.url }) : null;
    if (stats) await stats.connect();
    await resetStatementStats(stats);
    const ratios: number[] = [];
    const profiles: string[] = [];
    for (let r = 1; r <= rounds; r++) {
      const bareProfile = cpuProf ? `reconcile-bare-${r}-${Date.now()}.cpuprofile` : null;
      const b = await bare(bareProfile);
      if (bareProfile) profiles.push(path.relative(process.cwd(), path.join(profileDir, bareProfile)));
      const profile = cpuProf ? `reconcile-pass-${r}-${Date.now()}.cpuprofile` : null;
      const a = await pass(profile);
      if (profile) profiles.push(path.relative(process.cwd(), path.join(profileDir, profile)));
      ratios.push((b / a) * 100);
      say(`round ${r}: pass ${a.toFixed(0)} ms (${Math.round((3 * n) / (a / 1000))} balances/s), bare read ${b.toFixed(0)} ms (${Math.round((3 * n) / (b / 1000))} balances/s): ${((b / a) * 100).toFixed(1)} %`);
    }
    if (profiles.length) say(`cpu profiles of the bare reads and the passes (read with node bench/dist/cpuprofile-top.js): ${profiles.join(', ')}`);
    if (stats) {
      say(`Postgres statements of the ${rounds} measured passes by total execution time (BENCH_PGSS):`);
      for (const l of await topStatements(stats, 12)) say(`  ${l}`);
      const upd = await stats.query<{ upd: string; hot: string }>(`SELECT n_tup_upd::text AS upd, n_tup_hot_upd::text AS hot FROM pg_stat_user_tables WHERE relname = 'reconcile_balances'`);
      say(`  reconcile_balances rewrites in place (HOT) since the first pass: ${upd.rows[0]?.hot} of ${upd.rows[0]?.upd}`);
      await stats.end();
    }
    const m = median(ratios);
    say(`reconcile: ${n} addresses x 3 tokens, median pass throughput ${m.toFixed(1)} % of the bare read (goal >= ${GOAL_PERCENT} %)${m < GOAL_PERCENT ? ' BELOW GOAL' : ''}`);
  } finally {
    await db.drop().catch(() => undefined);
    await anvil.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The bare read (child process): a new EvmBalanceReader, its head() (the chain check, the history probe) untimed, then every balance at the point in one call. */
async function bareRead(file: string): Promise<void> {
  const b = JSON.parse(fs.readFileSync(file, 'utf8')) as { url: string; height: string; blockHash: string; queries: Array<{ address: string; contract: string | null }> };
  const reader = new EvmBalanceReader({ url: b.url, timeoutMs: 60_000 }, { expectedChainId: 11155111 });
  await reader.head();
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  const r = await reader.balancesAt(b.queries, { height: BigInt(b.height), blockHash: b.blockHash });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const c = process.cpuUsage(c0);
  process.stdout.write(JSON.stringify({ ms, cpuMs: (c.user + c.system) / 1000, answers: r.answers.length }));
}

(process.argv[2] === '--bare' ? bareRead(process.argv[3]!) : main()).then(() => process.exit(0), (e: unknown) => {
  process.stderr.write(`${(e as Error)?.stack ?? String(e)}\n`);
  process.exit(1);
});
