/**
 * The collection-delegated benchmark's figures and printed report: per round the ratios
 * DELEGATED / TOPUP (gas per swept ERC-20 address, total fees, trigger-to-all-SUCCESS time) and
 * the service's speed as a share of the bare script's; the tables of absolute numbers; and the
 * first sweep's gas per ERC-20 address against the 0.5x goal, from the receipts and the EVM's gas
 * schedule.
 */
import { fmtInt, median, out, table } from './report';
import type { BareRun } from './sweep-bare';
import type { ModeRun, SweepMode, SweepRun } from './sweep-service';

export const GOAL = { gasPerTokenAddress: 0.5, fees: 0.6, time: 0.5, bareSpeedPercent: 50 } as const;

/**
 * The EVM gas schedule behind the floor of a first delegated sweep of an ERC-20 address (Prague):
 * EIP-7702 PER_EMPTY_ACCOUNT_COST per authorization, refunded down to 12,500 only for an account
 * that exists (one holding only tokens is empty: nonce 0, no ether, no code); a LOG3 with one word
 * of data; the deposit's balance slot read cold (EIP-2929), written to zero (warm SSTORE_RESET
 * 5,000 - 2,100) and that write's refund (EIP-3529 SSTORE_CLEARS_SCHEDULE); an entry's calldata
 * (account and token, two ABI words: 40 address bytes at 16, 24 zero bytes at 4).
 */
export const GAS = { authorization: 25_000, log3Word: 375 + 3 * 375 + 8 * 32, coldSload: 2_100, sstoreReset: 2_900, clearRefund: 4_800, entryCalldata: 40 * 16 + 24 * 4 } as const;

export interface Round { round: number; order: SweepMode[]; topup: ModeRun; delegated: ModeRun; bare: BareRun | null; bareEstimated: BareRun | null }

const gwei = (wei: bigint | number) => Number(wei) / 1e9;
const fmtGas = (g: number | null | undefined) => (g === null || g === undefined ? '-' : fmtInt(g));
export const fmtX = (x: number | null) => (x === null || !Number.isFinite(x) ? '-' : `${x.toFixed(3)}x`);
const ratio = (a: number | bigint | null | undefined, b: number | bigint | null | undefined) => (a === null || a === undefined || b === null || b === undefined || Number(b) === 0 ? null : Number(a) / Number(b));
export const sweepOf = (m: ModeRun, label: 'first' | 'second'): SweepRun | undefined => m.sweeps.find((s) => s.label === label);

/** The round's figures: DELEGATED over TOPUP for gas, fees and time; bare over service for speed. */
export function roundFigures(r: Round) {
  const per = (label: 'first' | 'second') => {
    const d = sweepOf(r.delegated, label);
    const t = sweepOf(r.topup, label);
    const ok = !!d && !!t && !d.stuck && !t.stuck && !!d.costs && !!t.costs;
    return {
      gasPerTokenAddress: ok ? ratio(d!.costs!.perAddress.token, t!.costs!.perAddress.token) : null,
      gasPerNativeAddress: ok ? ratio(d!.costs!.perAddress.native, t!.costs!.perAddress.native) : null,
      totalGas: ok ? ratio(d!.costs!.sweep.gas, t!.costs!.sweep.gas) : null,
      fees: ok ? ratio(d!.costs!.sweep.fee, t!.costs!.sweep.fee) : null,
      feesWithDeployment: ok ? ratio(d!.costs!.sweep.fee + r.delegated.deploy.fee, t!.costs!.sweep.fee) : null,
      time: ok ? d!.seconds / t!.seconds : null,
    };
  };
  const d1 = sweepOf(r.delegated, 'first');
  const speed = (b: BareRun | null) => (b && d1 && !d1.stuck && b.failures.length === 0 ? (b.seconds / d1.seconds) * 100 : null);
  return { first: per('first'), second: per('second'), bareSpeedPercent: speed(r.bare), bareEstimatedSpeedPercent: speed(r.bareEstimated) };
}
export type RoundFigures = ReturnType<typeof roundFigures>;

const med = (xs: Array<number | null>) => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length ? median(v) : null;
};

export function medians(figs: RoundFigures[]) {
  return {
    gasFirst: med(figs.map((f) => f.first.gasPerTokenAddress)), gasSecond: med(figs.map((f) => f.second.gasPerTokenAddress)),
    fees: med(figs.map((f) => f.first.fees)), feesDeploy: med(figs.map((f) => f.first.feesWithDeployment)), feesSecond: med(figs.map((f) => f.second.fees)),
    time: med(figs.map((f) => f.first.time)), timeSecond: med(figs.map((f) => f.second.time)),
    speed: med(figs.map((f) => f.bareSpeedPercent)), speedEstimated: med(figs.map((f) => f.bareEstimatedSpeedPercent)),
  };
}

function sweepRows(rounds: Round[]): string[][] {
  const rows: string[][] = [];
  for (const r of rounds) {
    for (const m of [r.topup, r.delegated]) {
      for (const s of m.sweeps) {
        const c = s.costs;
        rows.push([
          String(r.round), m.mode, s.label, s.stuck ? `${s.seconds.toFixed(2)} (stopped)` : s.seconds.toFixed(2), `${fmtInt(s.blocks)} (${s.blockClock.meanMs?.toFixed(0) ?? '-'} / ${s.blockClock.longestGapMs ?? '-'} ms)`,
          c ? fmtInt(c.sweep.transactions) : '-', c ? fmtInt(Number(c.sweep.gas)) : '-', c ? fmtInt(gwei(c.sweep.fee)) : '-',
          c?.sweep.meanPrice ? gwei(c.sweep.meanPrice).toFixed(4) : '-',
          fmtGas(c?.perAddress.token), fmtGas(c?.perAddress.native), c ? `${c.perAddress.method}${c.perAddress.maxMiss !== null ? ` (fit miss ≤ ${fmtInt(c.perAddress.maxMiss)})` : ''}` : '-',
          c && c.batchSizes.length ? `${c.batchSizes.length}: ${c.batchSizes.join(' ')}` : '-', c ? fmtInt(c.authorizations) : '-',
        ]);
      }
    }
    for (const [name, b] of [['bare, bounds', r.bare], ['bare, estimates', r.bareEstimated]] as const) {
      if (!b) continue;
      rows.push([String(r.round), name, 'first', b.seconds.toFixed(2), fmtInt(b.blocks), fmtInt(b.totals.transactions), fmtInt(Number(b.totals.gas)), fmtInt(gwei(b.totals.fee)),
        b.totals.meanPrice ? gwei(b.totals.meanPrice).toFixed(4) : '-', fmtGas(b.perAddress.token), fmtGas(b.perAddress.native), b.perAddress.method,
        `${b.batches.length}: ${b.batches.map((x) => x.tok + x.nat).join(' ')}`, fmtInt(b.batches.reduce((s, x) => s + x.tok + x.nat, 0))]);
    }
  }
  return rows;
}

export function printReport(done: Round[], failures: readonly string[]): ReturnType<typeof medians> {
  const figs = done.map(roundFigures);
  out('');
  out('sweeps (gas and fees from the receipts of the service\'s transactions, DEPLOY excluded; gas per address: exact from the transactions or batches of one kind, else a least-squares split of the batches)');
  out(table(['round', 'target', 'sweep', 's', 'blocks (mean / longest gap)', 'txs', 'gas', 'fee gwei', 'price gwei', 'gas/ERC-20 addr', 'gas/native addr', 'per address', 'batches: entries', 'auths'], sweepRows(done),
    [true, false, false, true, true, true, true, true, true, true, true, false, false, true]));
  for (const r of done) {
    const d = r.delegated.deploy;
    const ph = (b: BareRun | null) => (b ? Object.entries(b.phases).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ') : '-');
    out(`round ${r.round}: DEPLOY (the DELEGATED warm-up): ${d.transactions} transactions, ${fmtInt(Number(d.gas))} gas, ${fmtInt(gwei(d.fee))} gwei; bare phases (s): bounds ${ph(r.bare)}; estimates ${ph(r.bareEstimated)}`);
  }
  for (const r of done) {
    for (const m of [r.topup, r.delegated]) {
      for (const s of m.sweeps) {
        if (!s.timeline.length) continue;
        out(`round ${r.round} ${m.mode} ${s.label} sweep, timeline (database clock, s after the trigger; first / last); blocks every ${s.blockClock.meanMs?.toFixed(0) ?? '-'} ms on average, longest gap ${s.blockClock.longestGapMs ?? '-'} ms:`);
        out(table(['transfers', 'n', 'created', 'signed', 'broadcast', 'finished'], s.timeline.map((x) => [x.what, fmtInt(x.n), x.created, x.signed, x.broadcast, x.finished]), [false, true, false, false, false, false]));
        if (s.batches.length) {
          const f = (x: number | null) => (x === null ? '-' : x.toFixed(2));
          out(table(['batch', 'items', 'auths', 'created', 'signed', 'broadcast', 'block', 'block seen', 'finished', 'attempts'],
            s.batches.map((b) => [b.id, String(b.items), String(b.auths), f(b.created), f(b.signed), f(b.broadcast), b.block === null ? '-' : String(b.block), f(b.seen ?? null), f(b.finished), String(b.attempts)]),
            [true, true, true, true, true, true, true, true, true, true]));
        }
      }
    }
  }
  out('');
  out('ratios per round (DELEGATED / TOPUP; speed: bare seconds / service DELEGATED first-sweep seconds)');
  out(table(['round', 'order', 'gas/ERC-20 1st', 'gas/ERC-20 2nd', 'gas/native 1st', 'total gas 1st', 'fees 1st', 'fees 1st + deploy', 'fees 2nd', 'time 1st', 'time 2nd', 'vs bare (bounds)', 'vs bare (estimates)'],
    done.map((r, i) => {
      const f = figs[i]!;
      const pct = (x: number | null) => (x === null ? '-' : `${x.toFixed(1)} %`);
      return [String(r.round), r.order.join(' → '), fmtX(f.first.gasPerTokenAddress), fmtX(f.second.gasPerTokenAddress), fmtX(f.first.gasPerNativeAddress), fmtX(f.first.totalGas), fmtX(f.first.fees),
        fmtX(f.first.feesWithDeployment), fmtX(f.second.fees), fmtX(f.first.time), fmtX(f.second.time), pct(f.bareSpeedPercent), pct(f.bareEstimatedSpeedPercent)];
    }),
    [true, false, true, true, true, true, true, true, true, true, true, true, true]));
  const m = medians(figs);
  const verdict = (v: number | null, ok: (x: number) => boolean) => (v === null || failures.length ? 'INVALID' : ok(v) ? 'met' : 'NOT MET');
  const pct = (x: number | null) => (x === null ? '-' : `${x.toFixed(1)} %`);
  out('');
  out(`goals (median over ${done.length} round(s)):`);
  out(table(['goal', 'figure', 'target', 'result'], [
    ['(a) gas per swept ERC-20 address, first sweep (with authorization)', fmtX(m.gasFirst), `<= ${GOAL.gasPerTokenAddress}x`, verdict(m.gasFirst, (x) => x <= GOAL.gasPerTokenAddress)],
    ['    the same, second sweep (already delegated)', fmtX(m.gasSecond), `<= ${GOAL.gasPerTokenAddress}x`, verdict(m.gasSecond, (x) => x <= GOAL.gasPerTokenAddress)],
    ['(b) total fees, first sweep', fmtX(m.fees), `<= ${GOAL.fees}x`, verdict(m.fees, (x) => x <= GOAL.fees)],
    ['    with deployment (the warm-up\'s DEPLOY added)', fmtX(m.feesDeploy), `<= ${GOAL.fees}x`, verdict(m.feesDeploy, (x) => x <= GOAL.fees)],
    ['    second sweep', fmtX(m.feesSecond), `<= ${GOAL.fees}x`, verdict(m.feesSecond, (x) => x <= GOAL.fees)],
    ['(c) trigger to all SUCCESS, first sweep', fmtX(m.time), `<= ${GOAL.time}x`, verdict(m.time, (x) => x <= GOAL.time)],
    ['    second sweep', fmtX(m.timeSecond), `<= ${GOAL.time}x`, verdict(m.timeSecond, (x) => x <= GOAL.time)],
    ['service DELEGATED speed vs the bare script (gas limits from the bounds)', pct(m.speed), `>= ${GOAL.bareSpeedPercent} %`, verdict(m.speed, (x) => x >= GOAL.bareSpeedPercent)],
    ['    vs the bare script estimating each batch, as the service does', pct(m.speedEstimated), `>= ${GOAL.bareSpeedPercent} %`, verdict(m.speedEstimated, (x) => x >= GOAL.bareSpeedPercent)],
  ], [false, true, false, false]));
  arithmetic(done);
  return m;
}

/** The first sweep's gas per ERC-20 address against the 0.5x goal: the receipts, and the floor the gas schedule sets. */
function arithmetic(done: Round[]): void {
  const r = done[done.length - 1];
  if (!r) return;
  const t = sweepOf(r.topup, 'first')?.costs;
  const d1 = sweepOf(r.delegated, 'first')?.costs;
  const d2 = sweepOf(r.delegated, 'second')?.costs;
  if (!t || !d1 || t.perAddress.token === null || d1.perAddress.token === null) return;
  const topup = t.byKind.TOP_UP ? Number(t.byKind.TOP_UP.gas) / t.byKind.TOP_UP.transactions : null;
  const goal = t.perAddress.token * GOAL.gasPerTokenAddress;
  const slot = GAS.coldSload + GAS.sstoreReset - GAS.clearRefund;
  const floor = GAS.authorization + 2 * GAS.log3Word + slot + GAS.entryCalldata;
  out('');
  out(`first-sweep gas per ERC-20 address (round ${r.round}), from the receipts:`);
  out(`  TOPUP ${fmtGas(t.perAddress.token)} = top-up ${fmtGas(topup)} + the address's ERC-20 transfer ${fmtGas(topup === null ? null : t.perAddress.token - topup)}; 0.5x of it: ${fmtGas(goal)}`);
  out(`  DELEGATED ${fmtGas(d1.perAddress.token)} per ERC-20 entry (${d1.perAddress.method}) = ${fmtX(d1.perAddress.token / t.perAddress.token)}; of it ${fmtInt(GAS.authorization)} is the authorization (intrinsic, not refunded: the account is empty), leaving ${fmtGas(d1.perAddress.token - GAS.authorization)} for the sweep itself: under ${fmtGas(goal - GAS.authorization)} would be needed`);
  out(`  floor with every call, code and collector write free: authorization ${fmtInt(GAS.authorization)} + two LOG3 (BatchSweeper's Swept, the token's Transfer) 2 x ${fmtInt(GAS.log3Word)} + the deposit's balance slot (cold read ${fmtInt(GAS.coldSload)} + reset ${fmtInt(GAS.sstoreReset)} - refund ${fmtInt(GAS.clearRefund)}) ${fmtInt(slot)} + the entry's calldata ${fmtInt(GAS.entryCalldata)} = ${fmtInt(floor)} gas = ${fmtX(floor / t.perAddress.token)} of TOPUP: the 0.5x goal is out of reach for a first sweep`);
  if (d2 && d2.perAddress.token !== null) {
    out(`  DELEGATED second sweep (delegated already, no authorization): ${fmtGas(d2.perAddress.token)} per ERC-20 entry = ${fmtX(d2.perAddress.token / t.perAddress.token)} of TOPUP's first (${fmtX(d2.perAddress.token / (sweepOf(r.topup, 'second')?.costs?.perAddress.token ?? NaN))} of its second); first - second = ${fmtGas(d1.perAddress.token - d2.perAddress.token)}`);
  }
}
