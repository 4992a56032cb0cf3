/** Statistics, number formats, plain-text tables and the results files. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RunRecord } from './load';

/** bench/results (next to bench/dist). */
export const RESULTS_DIR = path.resolve(__dirname, '..', '..', 'results');

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
/** Nearest-rank percentile (p in 0..100) of values sorted ascending; null when empty. */
export function percentile(sortedAsc: number[], p: number): number | null {
  if (sortedAsc.length === 0) return null;
  const rank = Math.ceil((p / 100) * sortedAsc.length);
  return sortedAsc[Math.min(sortedAsc.length, Math.max(1, rank)) - 1]!;
}
export const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
export const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
export const fmtMs = (n: number) => n.toFixed(2);
export const fmtPct = (n: number | null) => (n === null ? '-' : `${Math.round(n)}%`);
export const fmtUs = (n: number | null | undefined) => (n === null || n === undefined ? '-' : String(Math.round(n)));
export const out = (x: string) => process.stdout.write(x + '\n');
export const progress = (x: string) => process.stderr.write(`[bench] ${x}\n`);

export function table(head: string[], rows: string[][], rightAlign: boolean[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (rightAlign[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

export interface TargetSummary {
  runs: number;
  rpsMedian: number;
  rpsMean: number;
  latencyP50MsMedian: number;
  latencyP99MsMedian: number;
  /** Median target-process CPU time per request (null where /proc is unavailable). */
  targetCpuUsPerRequestMedian: number | null;
}

export function summarise(runs: RunRecord[]): TargetSummary {
  return {
    runs: runs.length,
    rpsMedian: median(runs.map((r) => r.rps)),
    rpsMean: mean(runs.map((r) => r.rps)),
    latencyP50MsMedian: median(runs.map((r) => r.latencyMs.p50)),
    latencyP99MsMedian: median(runs.map((r) => r.latencyMs.p99)),
    targetCpuUsPerRequestMedian: runs.every((r) => r.targetCpuUsPerRequest !== null)
      ? median(runs.map((r) => r.targetCpuUsPerRequest!))
      : null,
  };
}

/** Median of a per-run figure that may be unavailable (null when any run lacks it). */
export function medianOrNull(xs: Array<number | null | undefined>): number | null {
  return xs.length > 0 && xs.every((x) => x !== null && x !== undefined) ? median(xs as number[]) : null;
}

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  node: string;
  platform: string;
  totalMemGiB: number;
}

export function machineInfo(): MachineInfo {
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    totalMemGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
  };
}

export function machineLine(m: MachineInfo): string {
  return `machine: ${m.cpus} CPUs (${m.cpuModel}), node ${m.node}, ${m.platform}`;
}

/** "other processes were busy" warning for measured runs, or null. */
export function noiseWarning<R extends { target: string; round: number | string; cpuPercent: { other: number | null } }>(runs: R[], limitPercent: number): { line: string; runs: R[] } | null {
  const noisy = runs.filter((r) => (r.cpuPercent.other ?? 0) > limitPercent);
  if (!noisy.length) return null;
  return {
    runs: noisy,
    line:
      `warning: other processes used more than ${limitPercent}% of a CPU during ` +
      noisy.map((r) => `${r.target} round ${r.round} (${fmtPct(r.cpuPercent.other)})`).join(', ') +
      '; the figures are noisy, run again on a quiet machine',
  };
}

/** Writes bench/results/<file> (pretty JSON) and returns its path relative to the working directory. */
/** The correctness failures of a run, under the heading every scenario prints (nothing when there are none). */
export function printFailures(out: (line: string) => void, failures: readonly string[]): void {
  if (failures.length === 0) return;
  out('');
  out('CORRECTNESS FAILURES (figures are not valid):');
  for (const f of failures) out(`  ${f}`);
}

export function writeResults(file: string, report: unknown): string {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const p = path.join(RESULTS_DIR, file);
  fs.writeFileSync(p, JSON.stringify(report, null, 2) + '\n');
  return path.relative(process.cwd(), p);
}
