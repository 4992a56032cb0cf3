import { AmountFormatError, formatUnits, parseUnits } from '@wcs/core';

/**
 * `wcs collect policy set`: the operator's options (strings as typed) checked and turned into a
 * collection_policies row, as a pure function (tested beside this file). Amounts are decimal
 * strings of the token, kept as base units (bigint); nothing is rounded.
 */

/** A collection_policies row in its in-memory form (amounts in the token's base units). */
export interface PolicyValues {
  readonly enabled: boolean;
  /** The least worth collecting from one address. */
  readonly threshold: bigint;
  /** Cost guard: the fee may be at most this many basis points of the amount (1000 = 10 %). */
  readonly maxFeeBps: number;
  /** Tokens: what one whole native coin is worth, in the token's base units; null: not set. */
  readonly nativeValue: bigint | null;
  /** Plan at once when a deposit reaches CONFIRMED. */
  readonly onConfirmed: boolean;
  /** Plan every N seconds (null: off). */
  readonly scheduleSeconds: number | null;
  /** Pass-through: a deposit below the threshold is swept alone after this long (null: off). */
  readonly maxWaitSeconds: number | null;
  readonly hotLow: bigint | null;
  readonly hotTarget: bigint | null;
  readonly hotHigh: bigint | null;
  /** EVM: a gas top-up then the address's own sweep (TOPUP), or EIP-7702 delegated batches (DELEGATED). */
  readonly sweepMode: SweepMode;
}

/** How an EVM policy's deposit addresses are swept (docs/collection.md, "Sweep modes"). */
export type SweepMode = 'TOPUP' | 'DELEGATED';

/** What a new policy holds for every option not given (docs/collection.md, "Policies"). */
export const POLICY_DEFAULTS: PolicyValues = Object.freeze({
  enabled: true,
  threshold: 0n,
  maxFeeBps: 1000,
  nativeValue: null,
  onConfirmed: true,
  scheduleSeconds: 300,
  maxWaitSeconds: null,
  hotLow: null,
  hotTarget: null,
  hotHigh: null,
  sweepMode: 'TOPUP',
});

/** The shortest schedule (collection_policies CHECK schedule_seconds >= 10). */
export const MIN_SCHEDULE_SECONDS = 10;
/** The largest number of seconds a policy holds (an INTEGER column). */
export const MAX_SECONDS = 2_147_483_647;
/** NUMERIC(78,0): base units must stay below 10^78. */
const MAX_UNITS = 10n ** 78n - 1n;

/** The options as given on the command line; undefined: not given (kept, or the default for a new policy). */
export interface PolicyInput {
  readonly threshold?: string;
  readonly maxFeePercent?: string;
  readonly nativeValue?: string;
  readonly onConfirmed?: string;
  readonly scheduleSeconds?: string;
  readonly maxWaitSeconds?: string;
  readonly hotLow?: string;
  readonly hotTarget?: string;
  readonly hotHigh?: string;
  /** "topup" or "delegated". */
  readonly sweepMode?: string;
  readonly enable?: boolean;
  readonly disable?: boolean;
}

/** The token the policy is for. */
export interface PolicyToken {
  readonly symbol: string;
  readonly decimals: number;
  /** The chain's native coin (its fee needs no conversion: --native-value does not apply). */
  readonly native: boolean;
  /** The chain's native coin symbol (for messages). */
  readonly nativeSymbol: string;
  /** Whether the token's chain can sweep by delegation (EVM): --sweep-mode delegated is refused elsewhere. */
  readonly delegable?: boolean;
  /** The chain's code (for messages). */
  readonly chainCode?: string;
}

export interface PolicyProblem {
  /** The command-line option at fault, e.g. "--threshold". */
  readonly option: string;
  readonly message: string;
}

/** Every problem found in one `policy set`, each naming its option; nothing is written. */
export class PolicyInputError extends Error {
  constructor(readonly problems: readonly PolicyProblem[]) {
    super(problems.map((p) => `${p.option}: ${p.message}`).join('; '));
    this.name = 'PolicyInputError';
  }
}

const OPTION_NAMES: Record<keyof PolicyValues, string> = {
  enabled: '--enable/--disable',
  threshold: '--threshold',
  maxFeeBps: '--max-fee-percent',
  nativeValue: '--native-value',
  onConfirmed: '--on-confirmed',
  scheduleSeconds: '--schedule-seconds',
  maxWaitSeconds: '--max-wait-seconds',
  hotLow: '--hot-low',
  hotTarget: '--hot-target',
  hotHigh: '--hot-high',
  sweepMode: '--sweep-mode',
};

/**
 * Checks the options against the token and merges them over the existing policy (or the
 * defaults for a new one). Returns the row to write and which fields changed; throws
 * PolicyInputError naming every option at fault.
 */
export function resolvePolicy(input: PolicyInput, token: PolicyToken, existing: PolicyValues | null): { values: PolicyValues; changed: Array<keyof PolicyValues> } {
  const problems: PolicyProblem[] = [];
  const bad = (option: string, message: string) => problems.push({ option, message });
  const base = existing ?? POLICY_DEFAULTS;

  /** A decimal amount of the token in base units; `positive`: 0 refused. */
  const amount = (option: string, v: string, positive: boolean): bigint | undefined => {
    if (/^\s*-/.test(v)) return void bad(option, `must not be negative, got "${v}"`);
    try {
      const units = parseUnits(v, token.decimals);
      if (positive && units === 0n) return void bad(option, `must be greater than 0, got "${v}"`);
      if (units > MAX_UNITS) return void bad(option, `too large, got "${v}"`);
      return units;
    } catch (e) {
      if (!(e instanceof AmountFormatError)) throw e;
      if (/more than \d+ decimal places/.test(e.message)) return void bad(option, `"${v}" has more decimal places than ${token.symbol} has (${token.decimals})`);
      return void bad(option, `must be a plain decimal amount of ${token.symbol} such as "12.5", got "${v}"`);
    }
  };
  /** An amount, or "off" (null). */
  const amountOrOff = (option: string, v: string | undefined, current: bigint | null, positive: boolean): bigint | null | undefined => {
    if (v === undefined) return current;
    if (v === 'off') return null;
    return amount(option, v, positive);
  };
  /** Whole seconds in [min, MAX_SECONDS], or "off" (null). */
  const seconds = (option: string, v: string | undefined, current: number | null, min: number): number | null | undefined => {
    if (v === undefined) return current;
    if (v === 'off') return null;
    if (/^\s*-/.test(v)) return void bad(option, `must not be negative, got "${v}" (or off)`);
    if (!/^[0-9]{1,10}$/.test(v)) return void bad(option, `must be a whole number of seconds or off, got "${v}"`);
    const n = Number(v);
    if (n < min) return void bad(option, `must be at least ${min} seconds (or off), got ${n}`);
    if (n > MAX_SECONDS) return void bad(option, `must be at most ${MAX_SECONDS} seconds, got ${n}`);
    return n;
  };

  const threshold = input.threshold === undefined ? base.threshold : amount('--threshold', input.threshold, false);

  let maxFeeBps: number | undefined = base.maxFeeBps;
  if (input.maxFeePercent !== undefined) {
    const v = input.maxFeePercent;
    maxFeeBps = undefined;
    if (/^\s*-/.test(v)) bad('--max-fee-percent', `the fee share must not be negative, got "${v}"`);
    else if (!/^(0|[1-9][0-9]{0,9})(\.[0-9]+)?$/.test(v)) bad('--max-fee-percent', `must be a percentage from 0 to 100 such as 10 or 2.5, got "${v}"`);
    else {
      let bps: bigint | null = null;
      try {
        bps = parseUnits(v, 2);
      } catch (e) {
        if (!(e instanceof AmountFormatError)) throw e;
        bad('--max-fee-percent', `at most 2 decimal places (basis points), got "${v}"`);
      }
      if (bps !== null && bps > 10_000n) bad('--max-fee-percent', `the fee share cannot be over 100 %, got ${v}`);
      else if (bps !== null) maxFeeBps = Number(bps);
    }
  }

  let nativeValue: bigint | null | undefined = base.nativeValue;
  if (input.nativeValue !== undefined) {
    if (token.native && input.nativeValue !== 'off') {
      nativeValue = undefined;
      bad('--native-value', `${token.symbol} is the native coin of its chain: its fees are compared with the amount directly, there is nothing to convert`);
    } else {
      nativeValue = amountOrOff('--native-value', input.nativeValue, base.nativeValue, true);
    }
  }

  let onConfirmed: boolean | undefined = base.onConfirmed;
  if (input.onConfirmed !== undefined) {
    if (input.onConfirmed === 'true') onConfirmed = true;
    else if (input.onConfirmed === 'false') onConfirmed = false;
    else {
      onConfirmed = undefined;
      bad('--on-confirmed', `say true or false, got "${input.onConfirmed}"`);
    }
  }

  let enabled = base.enabled;
  if (input.enable && input.disable) bad('--enable/--disable', 'give one of them, not both');
  else if (input.enable) enabled = true;
  else if (input.disable) enabled = false;

  let sweepMode: SweepMode | undefined = base.sweepMode;
  if (input.sweepMode !== undefined) {
    const m = input.sweepMode.toLowerCase();
    if (m === 'topup') sweepMode = 'TOPUP';
    else if (m === 'delegated') {
      if (token.delegable) sweepMode = 'DELEGATED';
      else {
        sweepMode = undefined;
        bad('--sweep-mode', `delegated sweeps (EIP-7702) are for EVM chains; ${token.chainCode ?? 'this chain'} sweeps its own way: say topup or leave it out`);
      }
    } else {
      sweepMode = undefined;
      bad('--sweep-mode', `say topup or delegated, got "${input.sweepMode}"`);
    }
  }

  const scheduleSeconds = seconds('--schedule-seconds', input.scheduleSeconds, base.scheduleSeconds, MIN_SCHEDULE_SECONDS);
  const maxWaitSeconds = seconds('--max-wait-seconds', input.maxWaitSeconds, base.maxWaitSeconds, 0);
  const hotLow = amountOrOff('--hot-low', input.hotLow, base.hotLow, false);
  const hotTarget = amountOrOff('--hot-target', input.hotTarget, base.hotTarget, false);
  const hotHigh = amountOrOff('--hot-high', input.hotHigh, base.hotHigh, false);

  // the watermarks' order, on the values the policy will hold (an option given now against one kept)
  if (hotLow !== undefined && hotTarget !== undefined && hotHigh !== undefined) {
    const fmt = (u: bigint) => formatUnits(u, token.decimals);
    const given = (k: 'hotLow' | 'hotTarget' | 'hotHigh', opt: keyof PolicyInput) => (input[opt] === undefined ? `${OPTION_NAMES[k]} (kept)` : OPTION_NAMES[k]);
    if (hotLow !== null && hotTarget !== null && hotLow > hotTarget) {
      bad('--hot-low', `the low watermark ${fmt(hotLow)} is above the target ${fmt(hotTarget)} (${given('hotTarget', 'hotTarget')}): low <= target <= high`);
    }
    if (hotTarget !== null && hotHigh !== null && hotTarget > hotHigh) {
      bad('--hot-target', `the target ${fmt(hotTarget)} is above the high watermark ${fmt(hotHigh)} (${given('hotHigh', 'hotHigh')}): low <= target <= high`);
    }
    // (with a target set, low > high already broke one of the two above)
    if (hotTarget === null && hotLow !== null && hotHigh !== null && hotLow > hotHigh) {
      bad('--hot-low', `the low watermark ${fmt(hotLow)} is above the high watermark ${fmt(hotHigh)} (${given('hotHigh', 'hotHigh')}): low <= target <= high`);
    }
  }

  if (problems.length > 0 || threshold === undefined || maxFeeBps === undefined || nativeValue === undefined || onConfirmed === undefined
      || scheduleSeconds === undefined || maxWaitSeconds === undefined || hotLow === undefined || hotTarget === undefined || hotHigh === undefined || sweepMode === undefined) {
    throw new PolicyInputError(problems);
  }
  const values: PolicyValues = { enabled, threshold, maxFeeBps, nativeValue, onConfirmed, scheduleSeconds, maxWaitSeconds, hotLow, hotTarget, hotHigh, sweepMode };
  const changed = (Object.keys(values) as Array<keyof PolicyValues>).filter((k) => existing === null || values[k] !== existing[k]);
  return { values, changed };
}

/** A policy as `wcs collect policy show` prints it: amounts as the token's decimal strings, the fee share in percent. */
export interface PolicyView {
  readonly enabled: boolean;
  readonly threshold: string;
  readonly maxFeePercent: string;
  readonly nativeValue: string | null;
  readonly onConfirmed: boolean;
  readonly scheduleSeconds: number | null;
  readonly maxWaitSeconds: number | null;
  readonly hotLow: string | null;
  readonly hotTarget: string | null;
  readonly hotHigh: string | null;
  readonly sweepMode: 'topup' | 'delegated';
}

export function policyView(v: PolicyValues, decimals: number): PolicyView {
  const fmt = (u: bigint | null) => (u === null ? null : formatUnits(u, decimals));
  return {
    enabled: v.enabled,
    threshold: formatUnits(v.threshold, decimals),
    maxFeePercent: formatUnits(BigInt(v.maxFeeBps), 2),
    nativeValue: fmt(v.nativeValue),
    onConfirmed: v.onConfirmed,
    scheduleSeconds: v.scheduleSeconds,
    maxWaitSeconds: v.maxWaitSeconds,
    hotLow: fmt(v.hotLow),
    hotTarget: fmt(v.hotTarget),
    hotHigh: fmt(v.hotHigh),
    sweepMode: v.sweepMode === 'DELEGATED' ? 'delegated' : 'topup',
  };
}

/** A collection_policies row as read with its NUMERIC columns as text. */
export interface PolicyRow {
  enabled: boolean;
  threshold: string;
  max_fee_bps: number;
  native_value: string | null;
  on_confirmed: boolean;
  schedule_seconds: number | null;
  max_wait_seconds: number | null;
  hot_low: string | null;
  hot_target: string | null;
  hot_high: string | null;
  sweep_mode?: string;
}

export function policyFromRow(r: PolicyRow): PolicyValues {
  const big = (v: string | null) => (v === null ? null : BigInt(v));
  return {
    enabled: r.enabled,
    threshold: BigInt(r.threshold),
    maxFeeBps: Number(r.max_fee_bps),
    nativeValue: big(r.native_value),
    onConfirmed: r.on_confirmed,
    scheduleSeconds: r.schedule_seconds === null ? null : Number(r.schedule_seconds),
    maxWaitSeconds: r.max_wait_seconds === null ? null : Number(r.max_wait_seconds),
    hotLow: big(r.hot_low),
    hotTarget: big(r.hot_target),
    hotHigh: big(r.hot_high),
    sweepMode: r.sweep_mode === 'DELEGATED' ? 'DELEGATED' : 'TOPUP',
  };
}
