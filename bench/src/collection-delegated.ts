/**
 * Benchmark: delegated sweeps (EIP-7702) vs today's top-up sweeps, measured in one run on the
 * same anvil build and settings (Prague, a block every BENCH_COLLECT_BLOCK_MS by startBlockClock),
 * and the service's delegated mode vs a bare ethers script doing the same delegated batches.
 *
 * Per round, each mode on an anvil and a database of its own (lib/sweep-service.ts): 1,000
 * (BENCH_COLLECT_N) funded deposit addresses, half an ERC-20 with no gas, half native, made
 * through the signed API and CONFIRMED as deposits; the sweep is timed from the trigger (the two
 * collection policies enabled, sweep_mode TOPUP or DELEGATED) until every item is SUCCESS (3
 * confirmations); then the same addresses funded and swept again (second sweep: in DELEGATED mode
 * already delegated, no authorization). Gas and fees come from the receipts of the service's
 * transactions (the transfers table's hashes: TOP_UP + SWEEP, or SWEEP_BATCH; DEPLOY apart, made
 * at the warm-up). On the DELEGATED chain, after the service, the bare script (lib/sweep-bare.ts)
 * sweeps 1,000 fresh keys funded the same way to the same contracts in batches of 100, twice: with
 * each batch's gas limit from the service's own per-entry bounds (no node call: the physical-limit
 * baseline the goal is against) and with one eth_estimateGas per batch (as the service's pipeline
 * does). The test ETH chain's `traces` option is "off" (BENCH_COLLECT_TRACES): see sweep-service.ts.
 *
 * Goals (issue): DELEGATED vs TOPUP (a) gas per swept ERC-20 address <= 0.5x, (b) total fees <=
 * 0.6x, (c) trigger-to-all-SUCCESS time <= 0.5x; the service's DELEGATED sweep >= 50 % of the bare
 * script's speed. Each figure is the median over the rounds of the round's ratio; rounds
 * alternate which mode runs first.
 *
 *   npm run bench:collection-delegated          (from the repository root)
 *   BENCH_ROUNDS=1 BENCH_COLLECT_N=200 node bench/dist/collection-delegated.js
 */
import { prepareTestKeystore } from '@wcs/server/testing';
import { stopCluster } from './lib/postgres';
import { CleanupStack, runMain } from './lib/processes';
import { fmtInt, machineInfo, machineLine, out, printFailures, progress, writeResults } from './lib/report';
import { boolEnv, intEnv } from './lib/settings';
import { runBareDelegated, type BareRun } from './lib/sweep-bare';
import { totalsJson } from './lib/sweep-gas';
import { GOAL, printReport, roundFigures, type Round } from './lib/sweep-report';
import { ANVIL_ARGS, CONFIRMATIONS, runServiceMode, type ModeRun, type ServiceSettings, type SweepMode, type SweepRun } from './lib/sweep-service';
import { removeTestKeystore } from './lib/wcs';

function sweepJson(s: SweepRun) {
  const c = s.costs;
  return {
    label: s.label, seconds: s.seconds, blocks: s.blocks, blockClock: s.blockClock, stuck: s.stuck, timeline: s.timeline, batchTimeline: s.batches,
    costs: c && {
      sweep: totalsJson(c.sweep), deploy: totalsJson(c.deploy), byKind: Object.fromEntries(Object.entries(c.byKind).map(([k, v]) => [k, totalsJson(v)])),
      perAddress: c.perAddress, batchSizes: c.batchSizes, authorizations: c.authorizations,
      batches: c.txs.filter((t) => t.kind === 'SWEEP_BATCH').map((t) => ({ hash: t.hash, gasUsed: t.gasUsed.toString(), priceWei: t.price.toString(), tok: t.tok, nat: t.nat, authorizations: t.authorizations })),
    },
  };
}

function bareJson(b: BareRun | null) {
  return b && {
    seconds: b.seconds, blocks: b.blocks, estimated: b.estimated, phases: b.phases, perAddress: b.perAddress, totals: totalsJson(b.totals),
    batches: b.batches.map((x) => ({ hash: x.hash, gasUsed: x.gasUsed.toString(), gasLimit: x.gasLimit.toString(), priceWei: x.price.toString(), tok: x.tok, nat: x.nat })),
  };
}

/** BENCH_COLLECT_TRACES: the test ETH chain's `traces` option, "off" (default) or "auto". */
function tracesEnv(): 'off' | 'auto' {
  const v = (process.env.BENCH_COLLECT_TRACES ?? 'off').trim();
  if (v !== 'off' && v !== 'auto') throw new Error(`BENCH_COLLECT_TRACES: "off" or "auto", got "${v}"`);
  return v;
}

async function main(): Promise<number> {
  const settings: ServiceSettings = {
    n: intEnv('BENCH_COLLECT_N', 1000, 4, 20_000),
    blockMs: intEnv('BENCH_COLLECT_BLOCK_MS', 100, 10, 10_000),
    pollMs: intEnv('BENCH_COLLECT_POLL_MS', 50, 10, 60_000),
    planMs: intEnv('BENCH_COLLECT_PLAN_MS', 200, 100, 60_000),
    stallMs: intEnv('BENCH_COLLECT_STALL_S', 60, 5, 3600) * 1000,
    secondSweep: process.env.BENCH_COLLECT_SECOND === undefined ? true : boolEnv('BENCH_COLLECT_SECOND'),
    traces: tracesEnv(),
  };
  const rounds = intEnv('BENCH_ROUNDS', 3, 1, 20);
  const batchSize = intEnv('BENCH_BARE_BATCH', 100, 1, 1000);
  const enforce = boolEnv('BENCH_ENFORCE_GOAL');
  const nTok = Math.floor(settings.n / 2);
  const machine = machineInfo();
  const cleanup = new CleanupStack();
  const failures: string[] = [];
  const done: Round[] = [];
  try {
    out(`collection, delegated (EIP-7702) vs top-up sweeps: ${fmtInt(settings.n)} deposit addresses (${nTok} ERC-20, ${settings.n - nTok} native) per sweep, ${rounds} round(s), each mode on its own anvil (${ANVIL_ARGS.join(' ')}) and database; the bare delegated script on the DELEGATED chain, ${batchSize} entries per batch`);
    out(machineLine(machine));
    out(`blocks every ${settings.blockMs} ms (startBlockClock); done = every item SUCCESS (${CONFIRMATIONS} confirmations), the bare script: every receipt at ${CONFIRMATIONS}; WCS_WITHDRAW_POLL_MS=${settings.pollMs}, WCS_COLLECT_PLAN_MS=${settings.planMs}; second sweep ${settings.secondSweep ? 'on' : 'off'}; the chain option traces "${settings.traces}"`);
    cleanup.push('stop test cluster', () => stopCluster());
    const ks = await prepareTestKeystore();
    cleanup.push('remove test key store', async () => removeTestKeystore(ks));
    const t0 = performance.now();
    for (let round = 1; round <= rounds; round++) {
      const order: SweepMode[] = round % 2 === 1 ? ['TOPUP', 'DELEGATED'] : ['DELEGATED', 'TOPUP'];
      const got: Partial<Record<SweepMode, ModeRun>> = {};
      const bare: Record<'bounds' | 'estimates', BareRun | null> = { bounds: null, estimates: null };
      for (const mode of order) {
        const chain = new CleanupStack();
        cleanup.push(`stop the ${mode} chain`, () => chain.run());
        try {
          progress(`round ${round}: ${mode}`);
          const run = await runServiceMode(mode, settings, chain);
          got[mode] = run;
          failures.push(...run.failures.map((f) => `round ${round}: ${f}`));
          if (mode !== 'DELEGATED') continue;
          // the two bare variants in turn, the order swapped every round
          for (const v of round % 2 === 1 ? (['bounds', 'estimates'] as const) : (['estimates', 'bounds'] as const)) {
            progress(`round ${round}: bare delegated script (gas limits from ${v}) on the same chain`);
            const b = await runBareDelegated(run.url, run.token, { clock: run.clock, collector: run.hot, nTok, nNat: settings.n - nTok, batchSize, conf: CONFIRMATIONS, estimate: v === 'estimates' });
            bare[v] = b;
            failures.push(...b.failures.map((f) => `round ${round} (bare, ${v}): ${f}`));
            progress(`  bare (${v}): ${b.seconds.toFixed(2)} s (${b.blocks} blocks)`);
          }
        } finally {
          await chain.run();
        }
      }
      done.push({ round, order, topup: got.TOPUP!, delegated: got.DELEGATED!, bare: bare.bounds, bareEstimated: bare.estimates });
    }
    const totalS = (performance.now() - t0) / 1000;
    const m = printReport(done, failures);
    out(`whole run ${totalS.toFixed(0)} s`);
    printFailures(out, failures);
    const resultsFile = writeResults('collection-delegated.json', {
      benchmark: 'collection-delegated', date: new Date().toISOString(), machine,
      settings: { ...settings, rounds, bareBatch: batchSize, confirmations: CONFIRMATIONS, anvilArgs: ANVIL_ARGS },
      goals: GOAL, medians: m,
      rounds: done.map((r) => ({
        round: r.round, order: r.order, figures: roundFigures(r),
        modes: [r.topup, r.delegated].map((x) => ({ mode: x.mode, hot: x.hot, feeWallet: x.feeWallet, deploy: totalsJson(x.deploy), sweeps: x.sweeps.map(sweepJson) })),
        bare: bareJson(r.bare), bareEstimated: bareJson(r.bareEstimated),
      })),
      correctness: { ok: failures.length === 0, failures },
    });
    out(`results: ${resultsFile}`);
    if (failures.length) return 1;
    const met = m.gasFirst !== null && m.gasFirst <= GOAL.gasPerTokenAddress && m.fees !== null && m.fees <= GOAL.fees && m.time !== null && m.time <= GOAL.time && m.speed !== null && m.speed >= GOAL.bareSpeedPercent;
    return enforce && !met ? 1 : 0;
  } finally {
    await cleanup.run();
  }
}

runMain(main);
