/**
 * The callback-delivery benchmark's records and helpers (bench/src/callback-delivery.ts): what a
 * run records, the CPU window over the sender and the receiver, the receiver's control calls, and
 * the latency distributions.
 */
import type { PgActivity } from './postgres';
import { cpuPercent, cpuSnapshot, CLK_TCK, procTicks, type CpuPercent, type CpuSnapshot } from './cpu';
import { CALLBACK_PATH, CONTROL, type ReceiverChecks, type ReceiverCount, type ReceiverTake } from './callbacks';
import type { Child } from './processes';
import { httpGet, httpRequest } from './processes';
import { percentile } from './report';
import type { Transaction } from 'sequelize';

export type QueueTargetName = 'dispatcher' | 'graphile-worker' | 'graphile batched';
export type TargetName = 'bare POST' | QueueTargetName;
export const QUEUE_TARGETS: QueueTargetName[] = ['dispatcher', 'graphile-worker', 'graphile batched'];

/** CPU of one measured window (percent of one CPU): this process ("bench"), sender, receiver, Postgres, the rest of the host. */
export interface CpuRecord extends CpuPercent {
  receiver: number | null;
}

export interface Run {
  target: TargetName;
  round: number | 'warm-up';
  /** Receiver arrivals per second over the window. */
  rate: number;
  /** The window: from the first arrival, `seconds` long (shorter if a backlog ran out). */
  windowS: number;
  inWindow: number;
  /** Requests the receiver got in the whole run (queue runs: the whole backlog). */
  received: number;
  /** Queue runs (dispatcher, graphile): tasks or jobs queued before the start; whether they ran out before the window ended; seconds to write them (not measured). */
  backlog: number | null;
  /** Queue runs: tasks or jobs of the backlog still queued after the window and a grace period, then cancelled (not delivered). */
  cancelled: number | null;
  backlogRanOut: boolean;
  prefillS: number | null;
  /** Bare POST runs: requests that failed or were not ACKed, as the loop saw them. */
  senderErrors: number;
  cpuPercent: CpuRecord;
  /** CPU time of the sender process (post loop, workers or graphile worker) and of Postgres per delivery in the CPU window. */
  senderUsPerDelivery: number | null;
  postgresUsPerDelivery: number | null;
  pgActivity: PgActivity | null;
  checks: ReceiverChecks;
}

export interface Dist {
  n: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
  max: number | null;
}

export type LatencyBasis = 'end-to-end capacity' | 'dispatch-only rate';

export interface LatencyRun {
  target: 'dispatcher';
  round: 'latency';
  /** What the offered rate is a share of: the end-to-end capacity (the goal) or the dispatch-only throughput. */
  basis: LatencyBasis;
  offeredPerS: number;
  achievedPerS: number;
  tasks: number;
  transactions: number;
  tasksPerTransaction: number;
  /** Tasks not delivered within the grace period after the run (cancelled): they count against the goal. */
  notDelivered: number;
  /** Largest delay of a producer transaction behind its schedule (ms). */
  producerMaxLateMs: number;
  cpuPercent: CpuRecord;
  senderUsPerDelivery: number | null;
  postgresUsPerDelivery: number | null;
  pgActivity: PgActivity | null;
  checks: ReceiverChecks;
  /** ms: receiver arrival - task created_at (the goal); its two parts; the producer's own transaction. */
  dueToSent: Dist;
  dueToClaimed: Dist;
  claimedToArrival: Dist;
  producerTx: Dist;
}

/** An open-loop run before its latencies are read from the database. */
export interface OpenLoopRun {
  basis: LatencyBasis;
  ids: number[];
  /** Event id -> when its producer transaction's COMMIT was acknowledged. */
  txDone: Map<number, number>;
  graceS: number;
  base: Omit<LatencyRun, 'basis' | 'dueToSent' | 'dueToClaimed' | 'claimedToArrival' | 'producerTx'>;
}

export interface TaskRow {
  biz_id: string;
  status: string;
  attempts: number;
  retry_times: number;
  /** No callback_queue row left for the task (not queued, not leased). */
  unqueued: boolean;
  created_ms: number;
  body_sha: string;
  n_attempts: number;
  accepted: boolean | null;
  attempt_no: number | null;
  response_status: number | null;
  body_logged: boolean | null;
  response_logged: boolean | null;
  nonce: string | null;
  attempt_ms: number | null;
}

/** The attempt rows of one graphile job (bench_graphile_attempts, grouped by callback_task_id = the job id). */
export interface GraphileAttemptRow {
  job_id: string;
  n_attempts: number;
  accepted: boolean;
  attempt_no: number;
  response_status: number | null;
  target_logged: boolean;
  response_logged: boolean;
  body_sha: string;
  body_length: number;
  body_summary: string | null;
  nonce: string | null;
}

/** A target fed from a queue in Postgres: the dispatcher (callback tasks) or a graphile-worker variant (jobs). */
export interface QueueTarget {
  name: QueueTargetName;
  /** The sending process (its CPU is the run's "sender"). */
  child: Child;
  /** Tasks or jobs of this target still queued, being delivered or waiting for a retry. */
  pending(): Promise<number>;
  /** Removes what is still queued and not claimed (claimed ones are delivered); the event ids removed. */
  cancel(): Promise<number[]>;
  /** Writes the events as tasks or jobs in one transaction of `t`. */
  writePart(t: Transaction, ids: number[]): Promise<void>;
  /** Event ids written. */
  enqueued: number[];
  /** Event ids cancelled after their run (never delivered: not counted, checked for no attempt). */
  cancelled: Set<number>;
  /** Every arrival of this target's events: event id -> arrivals. */
  arrivals: Map<number, Array<{ at: number; nonce: string }>>;
  /** graphile targets: event id -> job id. */
  jobOf: Map<number, string> | null;
  /** graphile targets: resume the runner before the target's run, pause it after (a paused runner does not poll). */
  resume(): Promise<void>;
  pause(): Promise<void>;
}

export function dist(xs: number[]): Dist {
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, p50: percentile(s, 50), p95: percentile(s, 95), p99: percentile(s, 99), max: s.length ? s[s.length - 1]! : null };
}

// ---------------------------------------------------------------- CPU window over sender + receiver

export interface CpuMark {
  s: CpuSnapshot;
  receiver: number | null;
}

export const cpuMark = (senderPid: number | undefined, receiverPid: number | undefined): CpuMark => ({ s: cpuSnapshot(senderPid), receiver: procTicks(receiverPid) });

export function cpuBetween(a: CpuMark, b: CpuMark): { cpu: CpuRecord; wallS: number } {
  const base = cpuPercent(a.s, b.s);
  const wallS = Number(b.s.at - a.s.at) / 1e9;
  const receiver = a.receiver === null || b.receiver === null ? null : ((b.receiver - a.receiver) / CLK_TCK / wallS) * 100;
  // lib/cpu's "other" is everything but this process, the sender and Postgres: take the receiver out too
  const other = base.other === null ? null : Math.max(0, base.other - (receiver ?? 0));
  return { cpu: { ...base, receiver, other }, wallS };
}

/** CPU µs per delivery from a percent-of-one-CPU figure over wallS. */
export const perDelivery = (pct: number | null, wallS: number, n: number) => (pct === null || n === 0 ? null : ((pct / 100) * wallS * 1e6) / n);

// ---------------------------------------------------------------- receiver

export async function receiverCount(port: number): Promise<ReceiverCount> {
  const r = await httpGet(port, CONTROL.count);
  if (r.status !== 200) throw new Error(`receiver count: HTTP ${r.status}`);
  return JSON.parse(r.body) as ReceiverCount;
}

export async function receiverTake(port: number, verify: boolean): Promise<ReceiverTake> {
  const r = await httpRequest(port, 'POST', `${CONTROL.take}?verify=${verify ? 1 : 0}`);
  if (r.status !== 200) throw new Error(`receiver take: HTTP ${r.status}`);
  return JSON.parse(r.body) as ReceiverTake;
}

/** Arrivals per second from the first arrival over `seconds`, or up to the last arrival when that is earlier. */
export function windowRate(at: number[], seconds: number): { rate: number; windowS: number; inWindow: number; ranOut: boolean } {
  if (at.length === 0) return { rate: 0, windowS: 0, inWindow: 0, ranOut: true };
  let first = Infinity;
  let last = -Infinity;
  for (const t of at) {
    if (t < first) first = t;
    if (t > last) last = t;
  }
  const ranOut = last < first + seconds * 1000;
  const end = Math.min(first + seconds * 1000, last);
  let inWindow = 0;
  for (const t of at) if (t <= end) inWindow++;
  const windowS = Math.max(0.001, (end - first) / 1000);
  return { rate: inWindow / windowS, windowS, inWindow, ranOut };
}

export function receiverProblems(what: string, c: ReceiverChecks, signed: boolean, count: number): string[] {
  const p: string[] = [];
  if (c.wrongRequest) p.push(`${c.wrongRequest} requests that were not POST ${CALLBACK_PATH} application/json`);
  if (c.badBody) p.push(`${c.badBody} bodies that were not the event's exact bytes`);
  if (c.wrongApiKey) p.push(`${c.wrongApiKey} requests with a wrong X-Api-Key`);
  if (signed && c.signatureOk !== count) p.push(`${count - c.signatureOk} of ${count} signatures did not verify`);
  if (c.duplicateNonces) p.push(`${c.duplicateNonces} repeated nonces`);
  if (p.length && c.samples.length) p.push(`e.g. ${c.samples.join(' | ')}`);
  return p.map((x) => `${what}: ${x}`);
}

export const runLabel = (r: { target: string; round: number | string }) => `${r.target} ${typeof r.round === 'number' ? 'round ' + r.round : r.round}`;

/** Counted problems with a few examples each. */
export class Tally {
  private readonly m = new Map<string, { n: number; samples: string[] }>();
  add(kind: string, sample: string): void {
    const e = this.m.get(kind) ?? { n: 0, samples: [] };
    e.n++;
    if (e.samples.length < 3) e.samples.push(sample);
    this.m.set(kind, e);
  }
  lines(): string[] {
    return [...this.m].map(([k, e]) => `${e.n} ${k} (e.g. ${e.samples.join(', ')})`);
  }
}

// ---------------------------------------------------------------- main

