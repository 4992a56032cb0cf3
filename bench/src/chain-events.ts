/**
 * Benchmark: chain event subscriptions in the deposit scanner on anvil (issue 18, "Benchmark").
 *
 * The deposits scenario's catch-up (5,000 blocks, a deposit block every 10, 10,000 watched
 * deposit addresses; `wcs start --workers-only` at the scanner defaults) run two ways, in the
 * same run, on the same chain, alternating:
 *
 *   A: no live subscription (the deposit addresses are still passed to the scanner as senders,
 *      for unexpected outflows: both runs pay that);
 *   B: 10,000 more addresses monitored by 10 subscriptions (1,000 each, direction BOTH, made,
 *      paused and resumed through the signed API), 1,000 of which receive or send a transfer in
 *      those blocks (native and ERC-20, in and out; as many as the deposit addresses receive):
 *      1,000 chain events recorded, confirmed and called back.
 *
 * Figure: catch-up blocks/s B / A (each round's B over its A, median over rounds; goal >= 80 %),
 * both also against a bare
 * eth_getBlockByNumber(full) + eth_getLogs loop over the same blocks. Checked: every run records
 * exactly the deposits sent (the same in A and B), B exactly the chain events expected (the
 * chain_events rows, and one signed chain_event callback each), A none, no custody outflow. See
 * bench/README.md.
 *
 *   npm run bench:chain-events               (from the repository root)
 *   BENCH_CHAIN_EVENTS_ROUNDS=1 BENCH_CHAIN_EVENTS_BARE=0 node bench/dist/chain-events.js   (a quick run)
 *   BENCH_CPU_PROF=1 BENCH_PGSS=1 node bench/dist/chain-events.js   (profiles of the workers, top statements)
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { getAddress, hexlify, randomBytes, Wallet } from 'ethers';
import { ANVIL_DEV_KEYS, deployErc20, mine, mintErc20, setAutomine, startAnvil, type AnvilDevnet } from '@wcs/adapter-evm/devnet';
import { loadConfig } from '@wcs/server';
import { TEST_MASTER_KEY, testEnv } from '@wcs/server/testing';
import { anvilArgs as anvilArgsFor, keptStatesFor, bulkAddresses, cpuBetween, cpuMark, resetScanState, erc20Mint, erc20Transfer, ERC20_TRANSFER_TOPIC, ETHER, EVM_CHAIN_ID, hex, perBlock, TOKEN_ID, units18, type CpuRecord } from './lib/deposit-chain';
import { rpc, rpcBatch, Receiver, signatureProblem } from './lib/evm';
import { openStatsConnection, requestStatementStats, resetStatementStats, topStatements } from './lib/postgres';
import { checkAborted, CleanupStack, httpRequest, runMain, sleep, startChild, stopChild, type Child } from './lib/processes';
import { fmtInt, fmtPct, fmtUs, machineInfo, machineLine, median, noiseWarning, out, printFailures, progress, RESULTS_DIR, table, writeResults } from './lib/report';
import { boolEnv, intEnv, listEnv } from './lib/settings';
import { signedJsonPost } from './lib/signing';
import { createAppViaCli, prepareBenchStorage, printProfiles, setCallbackViaCli, startApiServer, WCS_BIN } from './lib/wcs';

const GOAL_RATIO_PERCENT = 80;
const NOISE_WARN_PERCENT = 20;
const RECHARGE_PATH = '/cb';
const CHAIN_EVENT_PATH = '/ce';
const SUB_CREATE_PATH = '/api/v1/wallet/chain-event/subscription/create';
const SUB_UPDATE_PATH = '/api/v1/wallet/chain-event/subscription/update';
/** Addresses per create or update request (the API's maximum). */
const ADDRESSES_PER_REQUEST = 1_000;
const NATIVE_DEPOSIT = ETHER / 100n; // 0.01 ETH
const TOKEN_DEPOSIT = 2n * ETHER; // 2 TUSD (minDeposit 1)
const NATIVE_IN = ETHER / 50n; // 0.02 ETH into a monitored address
const TOKEN_IN = 3n * ETHER; // 3 TUSD into a monitored address
const NATIVE_OUT = ETHER / 1000n; // 0.001 ETH out of a monitored address
const TOKEN_OUT = ETHER; // 1 TUSD out of a monitored address
/** Receivers of the monitored addresses' outgoing transfers (one eth_getCode each per workers process: the nature cache). */
const COUNTERPARTIES = 50;

const DEV = ANVIL_DEV_KEYS.map((k) => new Wallet(k).address);
/** Who sends what (anvil's unlocked dev accounts: eth_sendTransaction); the monitored senders are impersonated. */
const ACCT = { tokenDeposits: DEV[0]!, nativeDeposits: DEV[1]!, unrelatedNative: DEV[2]!, unrelatedToken: DEV[3]!, nativeIn: DEV[5]!, unrelatedNative2: DEV[6]!, tokenIn: DEV[8]! };

type Variant = 'A' | 'B';

// ---------------------------------------------------------------- settings

interface Settings {
  blocks: number;
  every: number;
  watched: number;
  monitored: number;
  subscriptions: number;
  /** Transfers of monitored addresses per deposit block (2: one in, one out; 4: native and ERC-20 each way; 0: none, a diagnostic). */
  perBlock: number;
  /** false (a diagnostic): no CHAIN_EVENT callback URL, so chain_event tasks are written FAILED and not delivered. */
  deliver: boolean;
  rounds: number;
  bare: boolean;
  cpuProf: boolean;
  enforceGoal: boolean;
  workersNodeArgs: string[];
}

function readSettings(): Settings {
  const every = intEnv('BENCH_CHAIN_EVENTS_EVERY', 10, 1, 1_000_000);
  const blocks = intEnv('BENCH_CHAIN_EVENTS_BLOCKS', 5000, every, 1_000_000);
  if (blocks % every !== 0) throw new Error(`BENCH_CHAIN_EVENTS_BLOCKS (${blocks}) must be a multiple of BENCH_CHAIN_EVENTS_EVERY (${every})`);
  const subscriptions = intEnv('BENCH_CHAIN_EVENTS_SUBSCRIPTIONS', 10, 1, 100);
  const monitored = intEnv('BENCH_CHAIN_EVENTS_MONITORED', 10_000, subscriptions, 100_000);
  if (monitored / subscriptions > 10_000) throw new Error(`BENCH_CHAIN_EVENTS_MONITORED / BENCH_CHAIN_EVENTS_SUBSCRIPTIONS must be at most 10,000 (a subscription's maximum)`);
  const perBlock = intEnv('BENCH_CHAIN_EVENTS_PER_BLOCK', 2, 0, 4);
  if (perBlock !== 0 && perBlock !== 2 && perBlock !== 4) throw new Error('BENCH_CHAIN_EVENTS_PER_BLOCK must be 0, 2 or 4');
  if (monitored < perBlock * (blocks / every)) throw new Error(`BENCH_CHAIN_EVENTS_MONITORED (${monitored}) must be at least ${perBlock} per deposit block (${perBlock * (blocks / every)})`);
  return {
    blocks,
    every,
    watched: intEnv('BENCH_CHAIN_EVENTS_WATCHED', 10_000, 2, 1_000_000),
    monitored,
    subscriptions,
    perBlock,
    rounds: intEnv('BENCH_CHAIN_EVENTS_ROUNDS', 3, 1, 20),
    bare: (process.env.BENCH_CHAIN_EVENTS_BARE ?? '1').trim() !== '0',
    deliver: (process.env.BENCH_CHAIN_EVENTS_DELIVER ?? '1').trim() !== '0',
    cpuProf: boolEnv('BENCH_CPU_PROF'),
    enforceGoal: boolEnv('BENCH_ENFORCE_GOAL'),
    workersNodeArgs: listEnv('BENCH_SERVER_NODE_ARGS'),
  };
}

// ---------------------------------------------------------------- the bare loop

interface RawBlock {
  transactions: Array<{ hash: string; from: string; to: string | null; value: string }>;
}
interface RawLog {
  topics: string[];
  transactionHash: string;
  removed?: boolean;
}

/**
 * What a naive scanner with subscriptions does with one block: the block with its transactions,
 * then its Transfer logs; a transfer into a receiver or out of a sender matches (lower-case sets).
 */
async function bareBlock(url: string, h: number, receivers: ReadonlySet<string>, senders: ReadonlySet<string>, found: (txHash: string) => void): Promise<void> {
  const block = await rpc<RawBlock | null>(url, 'eth_getBlockByNumber', [hex(h), true]);
  const logs = await rpc<RawLog[]>(url, 'eth_getLogs', [{ fromBlock: hex(h), toBlock: hex(h), topics: [ERC20_TRANSFER_TOPIC] }]);
  if (!block) throw new Error(`block ${h} not found`);
  for (const tx of block.transactions) {
    if (BigInt(tx.value) <= 0n) continue;
    if ((tx.to && receivers.has(tx.to.toLowerCase())) || senders.has(tx.from.toLowerCase())) found(tx.hash.toLowerCase());
  }
  for (const l of logs) {
    if (l.removed || l.topics.length !== 3) continue;
    if (receivers.has('0x' + l.topics[2]!.slice(26).toLowerCase()) || senders.has('0x' + l.topics[1]!.slice(26).toLowerCase())) found(l.transactionHash.toLowerCase());
  }
}

// ---------------------------------------------------------------- records

/** A transfer of the chain that a subscription must report. */
interface ExpectedEvent {
  txHash: string;
  direction: 'IN' | 'OUT';
  monitored: string;
  from: string;
  to: string;
  amount: bigint;
  native: boolean;
  blockHeight: number;
}

interface ChainEventPayload {
  event: string;
  id: number;
  subscriptionId: number;
  applicationId: number;
  chainId: number;
  chainTokenId: number;
  contractAddress: string;
  fromAddress: string;
  toAddress: string;
  amount: string;
  txHash: string;
  blockHeight: number;
  directionMatched: string;
  addressNature: string;
}

interface RechargePayload {
  id: number;
  txStatus: string;
}

interface Run {
  round: number;
  target: string;
  variant: Variant | null;
  blocks: number;
  seconds: number;
  blocksPerS: number;
  /** Deposits found (bare) or recorded (service). */
  deposits: number;
  /** Transfers of monitored addresses found (bare) or chain_events rows (service). */
  chainEvents: number;
  callbacks: number | null;
  callbacksDoneS: number | null;
  cpuPercent: CpuRecord;
  scannerUsPerBlock: number | null;
  postgresUsPerBlock: number | null;
  anvilUsPerBlock: number | null;
  /** Service runs: from the first cursor to the last callback, µs of the monotonic clock (cpuprofile-top --results --target). */
  windowUs?: [number, number];
}

// ---------------------------------------------------------------- main

async function main(): Promise<number> {
  const pgss = requestStatementStats(); // BENCH_PGSS=1, before the cluster starts
  const startedAt = Date.now();
  const machine = machineInfo();
  const cleanup = new CleanupStack();
  const failures: string[] = [];
  const profileDir = path.join(RESULTS_DIR, 'profiles');
  const scanDefaults = loadConfig({ ...process.env, DATABASE_URL: 'postgres://unused/unused', WCS_MASTER_KEY: TEST_MASTER_KEY }).deposits;
  const st = readSettings();
  const groups = st.blocks / st.every;
  const VARIANT_NAME: Record<Variant, string> = { A: 'A: no subscriptions', B: `B: + ${fmtInt(st.monitored)} monitored` };
  try {
    const db = await prepareBenchStorage(cleanup);
    const baseEnv = { ...process.env, ...testEnv(db.url, { WCS_LOG_LEVEL: process.env.WCS_LOG_LEVEL ?? 'warn' }) };
    const dbMode = process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded Postgres (test cluster)';
    out('chain event subscriptions in the deposit scanner on anvil: catch-up blocks/s with 10,000 more monitored addresses (B) vs without subscriptions (A)');
    out(machineLine(machine));
    out(
      `catch-up: ${fmtInt(st.blocks)} blocks, a deposit block every ${st.every} (two deposits, three unrelated transfers, ${st.perBlock} transfers of monitored addresses, in and out), ` +
        `${fmtInt(st.watched)} deposit addresses; B: ${fmtInt(st.monitored)} monitored addresses in ${st.subscriptions} subscriptions (BOTH); ` +
        `scanner defaults ${scanDefaults.batchBlocks} blocks x ${scanDefaults.concurrency} ranges; ${st.rounds} rounds (A, B alternately first)${st.bare ? ' and a bare loop each' : ''}; database: ${dbMode}` +
        (st.deliver ? '' : '; chain_event callbacks written but not delivered (no CHAIN_EVENT URL: BENCH_CHAIN_EVENTS_DELIVER=0)'),
    );

    // 1. anvil, the token, the config file listing it.
    progress('starting anvil');
    // every block of the chain kept traceable (--prune-history N): the service's scan reads internal transfers from traces (the default)
    const anvilArgs = anvilArgsFor(keptStatesFor(st.blocks));
    const anvil: AnvilDevnet = await startAnvil({ chainId: EVM_CHAIN_ID, extraArgs: anvilArgs });
    cleanup.push('stop anvil', () => anvil.stop());
    const url = anvil.url;
    const token = await deployErc20(url, { name: 'Test USD', symbol: 'TUSD' });
    for (const holder of [ACCT.tokenDeposits, ACCT.unrelatedToken, ACCT.tokenIn]) await mintErc20(url, token, holder, 1_000_000_000n * ETHER);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-bench-ce-'));
    cleanup.push('remove config dir', async () => fs.rmSync(tmp, { recursive: true, force: true }));
    const configFile = path.join(tmp, 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({ tokens: [{ id: TOKEN_ID, chainCode: 'ETH', environment: 'test', symbol: 'TUSD', name: 'Test USD (anvil)', contract: token, decimals: 18, minDeposit: '1' }] }));
    const env: NodeJS.ProcessEnv = { ...baseEnv, WCS_RPC_TEST_ETH: url, WCS_CONFIG: configFile };

    // 2. The receiver, the application (CLI), its RECHARGE and CHAIN_EVENT callback URLs (CLI), the API server.
    const receiver = new Receiver();
    await receiver.start();
    cleanup.push('stop receiver', () => receiver.stop());
    const app = await createAppViaCli(env, 'bench-chain-events', ['ETH']);
    if (app.id === null) throw new Error('wcs app create printed no application id');
    const appId = app.id;
    await setCallbackViaCli(env, appId, 'RECHARGE', `http://127.0.0.1:${receiver.port}${RECHARGE_PATH}`);
    if (st.deliver) await setCallbackViaCli(env, appId, 'CHAIN_EVENT', `http://127.0.0.1:${receiver.port}${CHAIN_EVENT_PATH}`);
    const api = await startApiServer({ env: (port) => ({ ...env, PORT: String(port) }), nodeArgs: [], cpuProf: false, cleanup });
    const pg = await openStatsConnection(db.url, cleanup, 'cpu pg');
    if (!pg) throw new Error('no connection to the benchmark database');
    const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pg.query(text, params)).rows as T[];
    const chainId = (await q<{ id: number }>(`SELECT id FROM chains WHERE code = 'ETH' AND environment = 'test'`))[0]?.id;
    if (chainId === undefined) throw new Error('no test ETH chain in the catalogue');
    const nativeTokenId = chainId * 100;
    checkAborted();

    // 3. The deposit addresses (in bulk, as the deposits scenario) and the addresses to monitor.
    progress(`writing ${fmtInt(st.watched)} deposit address rows in bulk`);
    const deposit = Array.from({ length: st.watched }, () => getAddress(hexlify(randomBytes(20))));
    await bulkAddresses(pg, appId, chainId, deposit);
    const watchedRows = Number((await q<{ n: string }>('SELECT count(*) AS n FROM addresses WHERE chain_id = $1', [chainId]))[0]!.n);
    if (watchedRows !== st.watched) throw new Error(`${watchedRows} address rows on test ETH, expected ${st.watched}`);
    const monitored = Array.from({ length: st.monitored }, () => getAddress(hexlify(randomBytes(20))));
    const perSub = Math.ceil(st.monitored / st.subscriptions);
    // The transfers of monitored addresses, kinds in turn (native in, ERC-20 out; ERC-20 in, native out: or all four per
    // block), each monitored address used once, spread over every subscription. The other sides: the two dev accounts
    // sending in, and a pool of counterparties receiving (they repeat, as exchanges and hot wallets do).
    type Kind = 'nativeIn' | 'tokenIn' | 'nativeOut' | 'tokenOut';
    const kindsOf = (g: number): Kind[] =>
      st.perBlock === 0 ? [] : st.perBlock === 4 ? ['nativeIn', 'tokenIn', 'nativeOut', 'tokenOut'] : g % 2 === 0 ? ['nativeIn', 'tokenOut'] : ['tokenIn', 'nativeOut'];
    const stride = st.perBlock === 0 ? 0 : Math.floor(st.monitored / (st.perBlock * groups));
    const counterparties = Array.from({ length: COUNTERPARTIES }, () => getAddress(hexlify(randomBytes(20))));
    const plan = Array.from({ length: groups }, (_, g) =>
      kindsOf(g).map((kind, k) => ({ kind, address: monitored[(st.perBlock * g + k) * stride]!, counterparty: counterparties[(st.perBlock * g + k) % COUNTERPARTIES]! })));
    const outSenders = plan.flat().filter((x) => x.kind === 'nativeOut' || x.kind === 'tokenOut');

    // 4. The chain: automine off; the monitored senders funded (ETH for gas, TUSD to send), then the blocks.
    await setAutomine(url, false);
    await rpc(url, 'anvil_autoImpersonateAccount', [true]);
    progress(`funding ${fmtInt(outSenders.length)} monitored senders`);
    await rpcBatch(url, outSenders.map((x) => ({ method: 'anvil_setBalance', params: [x.address, hex(ETHER)] })));
    const tokenSenders = outSenders.filter((x) => x.kind === 'tokenOut').map((x) => x.address);
    for (let i = 0; i < tokenSenders.length; i += 100) {
      const part = tokenSenders.slice(i, i + 100);
      const hashes = await rpcBatch<string>(url, part.map((a) => ({ method: 'eth_sendTransaction', params: [{ from: ACCT.tokenDeposits, to: token, data: erc20Mint(a, 1_000_000n * ETHER), gas: '0x30000' }] })));
      await rpc(url, 'evm_mine');
      const receipts = await rpcBatch<{ status: string } | null>(url, hashes.map((h) => ({ method: 'eth_getTransactionReceipt', params: [h] })));
      if (receipts.some((r) => !r || r.status !== '0x1')) throw new Error('a mint to a monitored sender failed or was not mined');
    }

    progress(`mining ${fmtInt(st.blocks)} blocks`);
    const from = Number(BigInt(await rpc<string>(url, 'eth_blockNumber'))) + 1;
    const sent = new Set<string>();
    const monitoredTx: Array<Omit<ExpectedEvent, 'blockHeight'>> = [];
    const t0 = performance.now();
    for (let g = 0; g < groups; g++) {
      checkAborted();
      const nativeTo = deposit[(g * 7919) % st.watched]!;
      const tokenTo = deposit[(g * 7919 + 3571) % st.watched]!;
      const stranger = () => getAddress(hexlify(randomBytes(20)));
      const b = BigInt(g);
      const txs: Array<Record<string, string>> = [
        { from: ACCT.nativeDeposits, to: nativeTo, value: hex(NATIVE_DEPOSIT + b) },
        { from: ACCT.tokenDeposits, to: token, data: erc20Transfer(tokenTo, TOKEN_DEPOSIT + b), gas: '0x20000' },
        { from: ACCT.unrelatedNative, to: stranger(), value: '0x1' },
        { from: ACCT.unrelatedToken, to: token, data: erc20Transfer(stranger(), 5n * ETHER), gas: '0x20000' },
        { from: ACCT.unrelatedNative2, to: stranger(), value: hex(ETHER / 1000n) },
      ];
      const firstMonitored = txs.length;
      const events: Array<Omit<ExpectedEvent, 'blockHeight' | 'txHash'>> = [];
      for (const { kind, address: m, counterparty: c } of plan[g]!) {
        if (kind === 'nativeIn') {
          txs.push({ from: ACCT.nativeIn, to: m, value: hex(NATIVE_IN + b) });
          events.push({ direction: 'IN', monitored: m, from: ACCT.nativeIn, to: m, amount: NATIVE_IN + b, native: true });
        } else if (kind === 'tokenIn') {
          txs.push({ from: ACCT.tokenIn, to: token, data: erc20Transfer(m, TOKEN_IN + b), gas: '0x20000' });
          events.push({ direction: 'IN', monitored: m, from: ACCT.tokenIn, to: m, amount: TOKEN_IN + b, native: false });
        } else if (kind === 'nativeOut') {
          txs.push({ from: m, to: c, value: hex(NATIVE_OUT + b), gas: '0x5208' });
          events.push({ direction: 'OUT', monitored: m, from: m, to: c, amount: NATIVE_OUT + b, native: true });
        } else {
          txs.push({ from: m, to: token, data: erc20Transfer(c, TOKEN_OUT + b), gas: '0x20000' });
          events.push({ direction: 'OUT', monitored: m, from: m, to: c, amount: TOKEN_OUT + b, native: false });
        }
      }
      const hashes = (await rpcBatch<string>(url, txs.map((tx) => ({ method: 'eth_sendTransaction', params: [tx] })))).map((h) => h.toLowerCase());
      sent.add(hashes[0]!);
      sent.add(hashes[1]!);
      events.forEach((e, i) => monitoredTx.push({ ...e, txHash: hashes[firstMonitored + i]! }));
      await rpc(url, 'evm_mine');
      if (st.every > 1) await mine(url, st.every - 1);
    }
    const to = Number(BigInt(await rpc<string>(url, 'eth_blockNumber')));
    if (to !== from + st.blocks - 1) throw new Error(`mined up to ${to}, expected ${from + st.blocks - 1}`);
    // every transaction mined and succeeded; the blocks of the monitored ones
    const receipts = await rpcBatch<{ status: string; blockNumber: string } | null>(url, [...sent, ...monitoredTx.map((x) => x.txHash)].map((h) => ({ method: 'eth_getTransactionReceipt', params: [h] })));
    if (receipts.some((r) => !r || r.status !== '0x1')) throw new Error(`${receipts.filter((r) => !r || r.status !== '0x1').length} transactions of the chain failed or were not mined`);
    const expected: ExpectedEvent[] = monitoredTx.map((x, i) => ({ ...x, blockHeight: Number(BigInt(receipts[sent.size + i]!.blockNumber)) }));
    progress(`  blocks ${from}..${to} in ${((performance.now() - t0) / 1000).toFixed(1)} s, ${sent.size} deposits, ${expected.length} transfers of monitored addresses`);

    // 5. Subscriptions through the signed API: made before the first B run, paused for A, resumed for B.
    const post = async <T>(p: string, body: unknown): Promise<T> => {
      const req = signedJsonPost(app, p, JSON.stringify(body));
      const r = await httpRequest(api.port, 'POST', p, req.headers, req.body);
      const parsed = JSON.parse(r.body) as { code: number; data?: T };
      if (r.status !== 200 || parsed.code !== 0 || parsed.data === undefined) throw new Error(`POST ${p}: HTTP ${r.status} ${r.body.slice(0, 500)}`);
      return parsed.data;
    };
    const subIds: number[] = [];
    const subOfAddress = new Map<string, number>();
    let subsActive = false;
    const setSubscriptions = async (active: boolean) => {
      if (active && subIds.length === 0) {
        progress(`creating ${st.subscriptions} subscriptions of ${fmtInt(perSub)} addresses through the signed API`);
        for (let s = 0; s < st.subscriptions; s++) {
          const addrs = monitored.slice(s * perSub, (s + 1) * perSub);
          const created = await post<{ id: number; addressCount: number; created: boolean }>(SUB_CREATE_PATH, {
            appSubscriptionNo: `bench-ce-${s}`, chainCode: 'ETH', addresses: addrs.slice(0, ADDRESSES_PER_REQUEST), direction: 'BOTH',
          });
          for (let i = ADDRESSES_PER_REQUEST; i < addrs.length; i += ADDRESSES_PER_REQUEST) {
            await post(SUB_UPDATE_PATH, { id: created.id, addAddresses: addrs.slice(i, i + ADDRESSES_PER_REQUEST) });
          }
          subIds.push(created.id);
          for (const a of addrs) subOfAddress.set(a, created.id);
        }
      } else if (subIds.length > 0 && active !== subsActive) {
        for (const id of subIds) await post(SUB_UPDATE_PATH, { id, status: active ? 'ACTIVE' : 'PAUSED' });
      }
      subsActive = active;
      const live = Number((await q<{ n: string }>(
        `SELECT count(*) AS n FROM chain_subscription_addresses a JOIN chain_subscriptions s ON s.id = a.subscription_id WHERE s.chain_id = $1 AND s.status = 'ACTIVE'`, [chainId],
      ))[0]!.n);
      if (live !== (active ? st.monitored : 0)) throw new Error(`${live} addresses in live subscriptions, expected ${active ? st.monitored : 0}`);
    };

    // workers: one process at a time, restarted per catch-up run
    let workers: Child | null = null;
    cleanup.push('stop workers', async () => {
      if (workers) await stopChild(workers, st.cpuProf ? 60_000 : 15_000);
    });
    const cursor = async () => {
      const r = (await q<{ height: string | null }>('SELECT height::text AS height FROM scan_cursors WHERE chain_id = $1', [chainId]))[0];
      return r?.height == null ? null : Number(r.height);
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

    const resetScan = () => resetScanState(pg, appId, chainId);

    const anvilPid = anvil.process.pid;
    const runs: Run[] = [];
    const statements: Record<string, string[]> = {};
    /** What every run must find: the deposit snapshot of the first service run, compared with every later one. */
    let depositSnapshot: string | null = null;
    // the bare loop matches as B does: transfers into or out of a deposit or monitored address
    const bareWatch = new Set([...deposit, ...monitored].map((a) => a.toLowerCase()));
    const expectedBare = new Set([...sent, ...expected.map((x) => x.txHash)]);

    const bareRun = async (round: number): Promise<Run> => {
      checkAborted();
      const found = new Set<string>();
      const a = cpuMark(undefined, anvilPid);
      const t = performance.now();
      for (let h = from; h <= to; h++) await bareBlock(url, h, bareWatch, bareWatch, (x) => found.add(x));
      const seconds = (performance.now() - t) / 1000;
      const c = cpuBetween(a, cpuMark(undefined, anvilPid));
      const missing = [...expectedBare].filter((x) => !found.has(x));
      if (found.size !== expectedBare.size || missing.length) failures.push(`bare loop round ${round}: found ${found.size} transfers, ${expectedBare.size} expected (missing e.g. ${missing.slice(0, 3).join(', ')})`);
      return {
        round, target: 'bare loop', variant: null, blocks: st.blocks, seconds, blocksPerS: st.blocks / seconds,
        deposits: [...sent].filter((x) => found.has(x)).length, chainEvents: expected.filter((x) => found.has(x.txHash)).length, callbacks: null, callbacksDoneS: null,
        cpuPercent: c.cpu, scannerUsPerBlock: perBlock(c.cpu.client, c.wallS, st.blocks), postgresUsPerBlock: null, anvilUsPerBlock: perBlock(c.cpu.anvil, c.wallS, st.blocks),
      };
    };

    const serviceRun = async (round: number, variant: Variant): Promise<Run> => {
      checkAborted();
      await setSubscriptions(variant === 'B');
      await resetScan();
      if (pgss) await resetStatementStats(pg);
      const since = receiver.arrivals.length;
      const args = [...st.workersNodeArgs, WCS_BIN, 'start', '--workers-only'];
      if (st.cpuProf) {
        fs.mkdirSync(profileDir, { recursive: true });
        args.unshift('--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=workers-chain-events-${variant}-r${round}-${Date.now()}.cpuprofile`);
      }
      workers = startChild('workers', args, { ...env, WCS_SCAN_START_TEST_ETH: String(from) });
      const pid = workers.proc.pid;
      let h0 = 0;
      await waitFor('the first cursor', async () => {
        const c = await cursor();
        if (c === null) return false;
        h0 = c;
        return true;
      }, 60_000, 5);
      const t = performance.now();
      const w0 = Number(process.hrtime.bigint() / 1000n);
      const a = cpuMark(pid, anvilPid);
      await waitFor(`the cursor at ${to}`, async () => (await cursor())! >= to, 600_000, 10);
      const seconds = (performance.now() - t) / 1000;
      const c = cpuBetween(a, cpuMark(pid, anvilPid));
      const wantEvents = variant === 'B' && st.deliver ? expected.length : 0;
      const wantRecharge = 3 * sent.size;
      await waitFor(`${wantRecharge} recharge and ${wantEvents} chain_event callbacks`, () =>
        receiver.count(RECHARGE_PATH, since) >= wantRecharge && receiver.count(CHAIN_EVENT_PATH, since) >= wantEvents, 120_000, 10);
      const callbacksDoneS = (performance.now() - t) / 1000;
      const w1 = Number(process.hrtime.bigint() / 1000n);
      await sleep(300); // nothing more should arrive
      await stopChild(workers, st.cpuProf ? 60_000 : 15_000);
      workers = null;
      const label = `${VARIANT_NAME[variant]} round ${round}`;
      if (pgss) statements[label] = await topStatements(pg, 12);

      // deposits: one SETTLED record per deposit sent, the same records in every run
      const recs = await q<{ id: string; tx_hash: string; position: number; address: string; amount: string; chain_token_id: number; block_height: string; tx_status: string }>(
        'SELECT id::text AS id, tx_hash, position, address, amount::text AS amount, chain_token_id, block_height::text AS block_height, tx_status FROM recharges WHERE chain_id = $1', [chainId]);
      const recHashes = new Set(recs.map((r) => r.tx_hash.toLowerCase()));
      if (recs.length !== sent.size || [...sent].some((h) => !recHashes.has(h))) failures.push(`${label}: ${recs.length} deposit records for ${sent.size} deposits sent`);
      const notSettled = recs.filter((r) => r.tx_status !== 'SETTLED');
      if (notSettled.length) failures.push(`${label}: ${notSettled.length} deposit records not SETTLED (e.g. ${notSettled[0]!.id} ${notSettled[0]!.tx_status})`);
      const snapshot = recs.map((r) => [r.tx_hash.toLowerCase(), r.position, r.address, r.amount, r.chain_token_id, r.block_height, r.tx_status].join('|')).sort().join('\n');
      if (depositSnapshot === null) {
        depositSnapshot = snapshot;
      } else if (snapshot !== depositSnapshot) {
        failures.push(`${label}: the deposit records differ from those of the first service run`);
      }
      // recharge callbacks: PENDING, CONFIRMED, SETTLED once each per record, signed
      const arrivals = receiver.arrivals.slice(since);
      const rcb = arrivals.filter((x) => x.path === RECHARGE_PATH);
      const seen = new Set<string>();
      let dup = 0;
      let badSig = 0;
      for (const x of rcb) {
        const e = JSON.parse(x.body.toString('utf8')) as RechargePayload;
        const key = `${e.id}:${e.txStatus}`;
        if (seen.has(key)) dup++;
        seen.add(key);
        if (signatureProblem(x, app)) badSig++;
      }
      const missingCb = recs.flatMap((r) => ['PENDING', 'CONFIRMED', 'SETTLED'].filter((s) => !seen.has(`${r.id}:${s}`)));
      if (dup || badSig || missingCb.length || rcb.length !== wantRecharge) {
        failures.push(`${label}: ${rcb.length} recharge callbacks for ${wantRecharge} expected, ${dup} duplicates, ${badSig} bad signatures, ${missingCb.length} missing`);
      }

      // chain events: B exactly the expected ones, CONFIRMED with their callback task; A none
      // (the event's callback task found by bizType and bizId: the schema need not link them)
      const rows = await q<{ id: string; subscription_id: string; tx_hash: string; direction: string; monitored_address: string; status: string; tasks: number }>(
        `SELECT e.id::text AS id, e.subscription_id::text AS subscription_id, e.tx_hash, e.direction, e.monitored_address, e.status,
                (SELECT count(*) FROM callback_tasks k WHERE k.application_id = e.application_id AND k.biz_type = 'CHAIN_EVENT' AND k.biz_id = e.id)::int AS tasks
           FROM chain_events e WHERE e.chain_id = $1`, [chainId]);
      const want = variant === 'B' ? expected : [];
      const wantByKey = new Map(want.map((x) => [`${x.txHash}:${x.direction}`, x]));
      let wrong = 0;
      const rowKeys = new Set<string>();
      for (const r of rows) {
        const key = `${r.tx_hash.toLowerCase()}:${r.direction}`;
        const x = wantByKey.get(key);
        if (!x || rowKeys.has(key) || r.monitored_address !== x.monitored || Number(r.subscription_id) !== subOfAddress.get(x.monitored) || r.status !== 'CONFIRMED' || r.tasks !== 1) wrong++;
        rowKeys.add(key);
      }
      if (rows.length !== want.length || wrong) failures.push(`${label}: ${rows.length} chain_events rows for ${want.length} expected, ${wrong} unexpected, duplicated, not CONFIRMED or without exactly one callback task`);
      // chain_event callbacks: one per event, every field as expected, signed
      const ccb = arrivals.filter((x) => x.path === CHAIN_EVENT_PATH);
      const rowIds = new Set(rows.map((r) => r.id));
      const cbIds = new Set<number>();
      let cbWrong = 0;
      let cbBadSig = 0;
      for (const x of ccb) {
        const e = JSON.parse(x.body.toString('utf8')) as ChainEventPayload;
        const w = wantByKey.get(`${e.txHash.toLowerCase()}:${e.directionMatched}`);
        if (signatureProblem(x, app)) cbBadSig++;
        const ok = w !== undefined && !cbIds.has(e.id) && rowIds.has(String(e.id)) && e.event === 'chain_event' && e.applicationId === appId && e.chainId === chainId
          && e.subscriptionId === subOfAddress.get(w.monitored) && e.chainTokenId === (w.native ? nativeTokenId : TOKEN_ID)
          && e.contractAddress.toLowerCase() === (w.native ? '' : token.toLowerCase()) && e.fromAddress === getAddress(w.from) && e.toAddress === getAddress(w.to)
          && e.amount === units18(w.amount) && e.blockHeight === w.blockHeight && e.addressNature === 'EOA';
        if (!ok) cbWrong++;
        cbIds.add(e.id);
      }
      if (ccb.length !== wantEvents || cbWrong || cbBadSig) failures.push(`${label}: ${ccb.length} chain_event callbacks for ${wantEvents} expected, ${cbWrong} wrong or duplicated, ${cbBadSig} bad signatures`);
      // the chain_event callback tasks: one per event (undelivered without a URL: FAILED at once)
      const tasks = Number((await q<{ n: string }>(`SELECT count(*) AS n FROM callback_tasks WHERE application_id = $1 AND biz_type = 'CHAIN_EVENT'`, [appId]))[0]!.n);
      if (tasks !== want.length) failures.push(`${label}: ${tasks} chain_event callback tasks for ${want.length} events`);
      // no unexpected outflow: the deposit addresses never send
      const outflows = Number((await q<{ n: string }>('SELECT count(*) AS n FROM custody_outflows WHERE chain_id = $1', [chainId]))[0]!.n);
      if (outflows !== 0) failures.push(`${label}: ${outflows} custody outflows recorded, expected none`);

      const blocks = to - h0;
      return {
        round, target: VARIANT_NAME[variant], variant, blocks, seconds, blocksPerS: blocks / seconds, deposits: recs.length, chainEvents: rows.length,
        callbacks: rcb.length + ccb.length, callbacksDoneS,
        cpuPercent: c.cpu, scannerUsPerBlock: perBlock(c.cpu.target, c.wallS, blocks), postgresUsPerBlock: perBlock(c.cpu.postgres, c.wallS, blocks),
        anvilUsPerBlock: perBlock(c.cpu.anvil, c.wallS, blocks), windowUs: [w0, w1],
      };
    };

    const show = (r: Run) => progress(`  ${r.target}: ${fmtInt(r.blocksPerS)} blocks/s (${fmtInt(r.blocks)} blocks in ${r.seconds.toFixed(2)} s, ${r.deposits} deposits, ${r.chainEvents} chain events)`);
    if (st.bare) {
      progress('warm-up: one bare pass');
      await bareRun(0);
    }
    for (let round = 1; round <= st.rounds; round++) {
      progress(`round ${round}/${st.rounds}`);
      const order: Variant[] = round % 2 === 1 ? ['A', 'B'] : ['B', 'A'];
      if (st.bare) {
        const r = await bareRun(round);
        show(r);
        runs.push(r);
      }
      for (const v of order) {
        const r = await serviceRun(round, v);
        show(r);
        runs.push(r);
      }
    }

    // 6. Report.
    const rate = (v: Variant | null) => runs.filter((r) => r.variant === v && (v !== null || r.target === 'bare loop')).map((r) => r.blocksPerS);
    const aRates = rate('A');
    const bRates = rate('B');
    const bareRates = st.bare ? rate(null) : [];
    const perRound = Array.from({ length: st.rounds }, (_, i) => {
      const a = runs.find((r) => r.round === i + 1 && r.variant === 'A')!;
      const b = runs.find((r) => r.round === i + 1 && r.variant === 'B')!;
      return Math.round((b.blocksPerS / a.blocksPerS) * 1000) / 10;
    });
    // the figure: each round's B over its A (run back to back, in alternating order), median over rounds
    const ratio = median(perRound);
    const bareMedian = bareRates.length ? median(bareRates) : null;
    const medianOf = (v: Variant, f: (r: Run) => number | null) => {
      const xs = runs.filter((r) => r.variant === v).map(f);
      return xs.every((x) => x !== null) ? median(xs as number[]) : null;
    };
    const cpuPerBlock = (r: Run) => (r.scannerUsPerBlock === null || r.postgresUsPerBlock === null ? null : r.scannerUsPerBlock + r.postgresUsPerBlock);
    const cpuA = medianOf('A', cpuPerBlock);
    const cpuB = medianOf('B', cpuPerBlock);
    const summary = {
      aMedianBlocksPerS: median(aRates),
      bMedianBlocksPerS: median(bRates),
      bareMedianBlocksPerS: bareMedian,
      ratioPercent: Math.round(ratio * 10) / 10,
      perRoundRatioPercent: perRound,
      ratioOfMediansPercent: Math.round((median(bRates) / median(aRates)) * 1000) / 10,
      /** Blocks per CPU second of the workers and Postgres together, B over A (medians): the figure less exposed to the rest of the host. */
      cpuRatioPercent: cpuA !== null && cpuB !== null ? Math.round((cpuA / cpuB) * 1000) / 10 : null,
      workersPlusPgUsPerBlock: { A: cpuA, B: cpuB },
      aVsBarePercent: bareMedian ? Math.round((median(aRates) / bareMedian) * 1000) / 10 : null,
      bVsBarePercent: bareMedian ? Math.round((median(bRates) / bareMedian) * 1000) / 10 : null,
      goalRatioPercent: GOAL_RATIO_PERCENT,
      goalMet: ratio >= GOAL_RATIO_PERCENT,
    };

    out('');
    out(`chain: blocks ${from}..${to}, ${sent.size} deposits to ${fmtInt(st.watched)} deposit addresses; ${expected.length} transfers of ${fmtInt(expected.length)} monitored addresses ` +
      `(${expected.filter((x) => x.direction === 'IN').length} in, ${expected.filter((x) => x.direction === 'OUT').length} out; native and ERC-20 alike) among ${fmtInt(st.monitored)} monitored in B`);
    out(
      table(
        ['round', 'target', 'blocks', 's', 'blocks/s', 'vs A', 'vs bare loop', 'deposits', 'chain events', 'callbacks', 'callbacks done s', 'cpu bench', 'cpu workers', 'cpu pg', 'cpu anvil', 'cpu other', 'scanner µs/block', 'pg µs/block', 'anvil µs/block'],
        runs.map((r) => [
          String(r.round),
          r.target,
          fmtInt(r.blocks),
          r.seconds.toFixed(2),
          fmtInt(r.blocksPerS),
          r.variant ? `${((r.blocksPerS / summary.aMedianBlocksPerS) * 100).toFixed(1)} %` : '-',
          bareMedian ? `${((r.blocksPerS / bareMedian) * 100).toFixed(1)} %` : '-',
          fmtInt(r.deposits),
          fmtInt(r.chainEvents),
          r.callbacks === null ? '-' : fmtInt(r.callbacks),
          r.callbacksDoneS === null ? '-' : r.callbacksDoneS.toFixed(2),
          fmtPct(r.cpuPercent.client),
          fmtPct(r.cpuPercent.target),
          fmtPct(r.cpuPercent.postgres),
          fmtPct(r.cpuPercent.anvil),
          fmtPct(r.cpuPercent.other),
          fmtUs(r.scannerUsPerBlock),
          fmtUs(r.postgresUsPerBlock),
          fmtUs(r.anvilUsPerBlock),
        ]),
        [false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
      ),
    );
    out('  (vs A: against the median of the A runs; vs bare loop: against the median of the bare loops; chain events: transfers of monitored addresses found (bare) or chain_events rows (service);');
    out('   scanner µs/block: CPU of the workers process, or of this process for the bare loop)');
    out('');
    out(
      table(
        ['target', 'median blocks/s', 'per round', 'vs A (rounds)', 'vs bare loop', 'workers µs/block', 'pg µs/block', 'goal', 'result'],
        [
          ...(bareMedian ? [['bare loop (sequential)', fmtInt(bareMedian), bareRates.map(fmtInt).join(', '), '-', '100 %', '-', '-', '-', '-']] : []),
          [VARIANT_NAME.A, fmtInt(summary.aMedianBlocksPerS), aRates.map(fmtInt).join(', '), '100 %', summary.aVsBarePercent === null ? '-' : `${summary.aVsBarePercent.toFixed(1)} %`, fmtUs(medianOf('A', (r) => r.scannerUsPerBlock)), fmtUs(medianOf('A', (r) => r.postgresUsPerBlock)), '-', '-'],
          [VARIANT_NAME.B, fmtInt(summary.bMedianBlocksPerS), bRates.map(fmtInt).join(', '), `${summary.ratioPercent.toFixed(1)} %`, summary.bVsBarePercent === null ? '-' : `${summary.bVsBarePercent.toFixed(1)} %`, fmtUs(medianOf('B', (r) => r.scannerUsPerBlock)), fmtUs(medianOf('B', (r) => r.postgresUsPerBlock)), `>= ${GOAL_RATIO_PERCENT} % of A`, summary.goalMet ? 'met' : 'NOT MET'],
        ],
        [false, true, false, true, true, true, true, false, false],
      ),
    );
    out(`ratio B/A (blocks/s, median of the rounds): ${summary.ratioPercent.toFixed(1)} %  (per round: ${perRound.map((p) => p.toFixed(1) + ' %').join(', ')}; median B / median A: ${summary.ratioOfMediansPercent.toFixed(1)} %)`);
    if (summary.cpuRatioPercent !== null) {
      out(`CPU per block, workers + Postgres (medians): A ${fmtUs(cpuA)} µs, B ${fmtUs(cpuB)} µs: B catches up ${summary.cpuRatioPercent.toFixed(1)} % as many blocks per CPU second as A`);
    }
    out('');
    for (const [part, lines] of Object.entries(statements)) {
      out(`Postgres statements by total execution time, ${part} (BENCH_PGSS):`);
      for (const l of lines) out(`  ${l}`);
      out('');
    }
    out(`goal catch-up blocks/s with ${fmtInt(st.monitored)} monitored addresses >= ${GOAL_RATIO_PERCENT} % of without (median of the rounds' B/A): ${summary.ratioPercent.toFixed(1)} %, ${summary.goalMet ? 'met' : 'not met'}`);
    const noisy = noiseWarning(runs, NOISE_WARN_PERCENT);
    if (noisy) out(noisy.line);
    printFailures(out, failures);
    const resultsFile = writeResults('chain-events.json', {
      benchmark: 'chain-events',
      description: 'chain event subscriptions in the deposit scanner on anvil: catch-up blocks/s with 10,000 more monitored addresses (B) vs without subscriptions (A)',
      date: new Date().toISOString(),
      machine,
      settings: { ...st, scanDefaults: { batchBlocks: scanDefaults.batchBlocks, concurrency: scanDefaults.concurrency }, anvilArgs, database: dbMode },
      chain: { from, to, deposits: sent.size, monitoredTransfers: expected.length, subscriptions: subIds },
      runs,
      summary,
      ...(pgss ? { topStatements: statements } : {}),
      correctness: { ok: failures.length === 0, failures },
      ...(st.cpuProf ? { cpuProfileDir: path.relative(process.cwd(), profileDir) } : {}),
    });
    out(`results: ${resultsFile}`);
    if (failures.length) return 1;
    if (st.enforceGoal && !summary.goalMet) return 1;
    return 0;
  } finally {
    await cleanup.run();
    if (st.cpuProf) printProfiles(profileDir, startedAt);
  }
}

runMain(main);
