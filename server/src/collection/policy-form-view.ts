import { PolicyInputError, type PolicyInput, type PolicyView } from './policy-input';

/**
 * The console's policy form (docs/console.md) as `wcs collect policy set` options: every field
 * is sent, each as the option's string (an empty optional field is `off`), and goes through the
 * same resolvePolicy() as the CLI. Pure functions, tested beside this file.
 */

/** The form's fields, in order, with their labels and the CLI option each stands for. */
export const POLICY_FIELDS = [
  { name: 'enabled', label: 'Collect this token', option: '--enable/--disable' },
  { name: 'threshold', label: 'Threshold (least worth collecting from one address)', option: '--threshold' },
  { name: 'maxFeePercent', label: 'Max fee, % of the amount (cost guard, 0-100, 2 decimals)', option: '--max-fee-percent' },
  { name: 'nativeValue', label: 'Native value (what one native coin is worth in this token; empty: off)', option: '--native-value' },
  { name: 'onConfirmed', label: 'Plan as soon as a deposit is CONFIRMED', option: '--on-confirmed' },
  { name: 'scheduleSeconds', label: 'Schedule, seconds (at least 10; empty: off)', option: '--schedule-seconds' },
  { name: 'maxWaitSeconds', label: 'Max wait, seconds (pass-through; empty: off)', option: '--max-wait-seconds' },
  { name: 'hotLow', label: 'Hot wallet low watermark (empty: off)', option: '--hot-low' },
  { name: 'hotTarget', label: 'Hot wallet target (empty: off)', option: '--hot-target' },
  { name: 'hotHigh', label: 'Hot wallet high watermark (empty: off)', option: '--hot-high' },
  { name: 'sweepMode', label: 'Sweep mode (EVM: topup or delegated; empty: kept)', option: '--sweep-mode' },
] as const;

export type PolicyFieldName = (typeof POLICY_FIELDS)[number]['name'];
export type PolicyForm = Partial<Record<PolicyFieldName, string>>;

/** The label of the form field a CLI option stands for (the option itself when none). */
export function fieldLabel(option: string): string {
  return POLICY_FIELDS.find((f) => f.option === option)?.label.replace(/ \(.*$/, '') ?? option;
}

/** A message of the CLI's (a problem, a note) in the form's words: each option named by its field's label. */
export function formWords(message: string): string {
  let out = message;
  for (const f of POLICY_FIELDS) out = out.split(f.option).join(`"${fieldLabel(f.option)}"`);
  return out;
}

/** A PolicyInputError's problems in the form's words. */
export function formProblems(e: PolicyInputError): string[] {
  return e.problems.map((p) => `${fieldLabel(p.option)}: ${formWords(p.message)}`);
}

/**
 * The form's fields as the CLI's options. `native`: the token is its chain's native coin (the
 * form has no native value field). Throws PolicyInputError for a field no option can say.
 */
export function policyInputFromForm(f: PolicyForm, native: boolean): PolicyInput {
  const text = (v: string | undefined) => (v ?? '').trim();
  const offWhenEmpty = (v: string | undefined) => (text(v) === '' ? 'off' : text(v));
  const problems: Array<{ option: string; message: string }> = [];
  const enabled = text(f.enabled);
  if (enabled !== 'true' && enabled !== 'false') problems.push({ option: '--enable/--disable', message: `say true or false, got "${enabled}"` });
  if (problems.length > 0) throw new PolicyInputError(problems);
  return {
    ...(enabled === 'true' ? { enable: true } : { disable: true }),
    threshold: text(f.threshold),
    maxFeePercent: text(f.maxFeePercent),
    ...(native ? {} : { nativeValue: offWhenEmpty(f.nativeValue) }),
    onConfirmed: text(f.onConfirmed),
    scheduleSeconds: offWhenEmpty(f.scheduleSeconds),
    maxWaitSeconds: offWhenEmpty(f.maxWaitSeconds),
    hotLow: offWhenEmpty(f.hotLow),
    hotTarget: offWhenEmpty(f.hotTarget),
    hotHigh: offWhenEmpty(f.hotHigh),
    ...(text(f.sweepMode) === '' ? {} : { sweepMode: text(f.sweepMode) }),
  };
}

/** A policy as the form's initial values (off: empty). */
export function formFromPolicy(p: PolicyView): Record<PolicyFieldName, string> {
  const v = (x: string | number | null) => (x === null ? '' : String(x));
  return {
    enabled: String(p.enabled),
    threshold: p.threshold,
    maxFeePercent: p.maxFeePercent,
    nativeValue: v(p.nativeValue),
    onConfirmed: String(p.onConfirmed),
    scheduleSeconds: v(p.scheduleSeconds),
    maxWaitSeconds: v(p.maxWaitSeconds),
    hotLow: v(p.hotLow),
    hotTarget: v(p.hotTarget),
    hotHigh: v(p.hotHigh),
    sweepMode: p.sweepMode,
  };
}
