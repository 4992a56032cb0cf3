/**
 * CPU accounting from Linux /proc (best effort; null elsewhere): this process (the load
 * generator), the target server process, the Postgres cluster under test (its postmaster
 * and every process it forked) and the whole host, so that "other" shows noise.
 */
import * as fs from 'node:fs';

export const CLK_TCK = 100; // USER_HZ: 100 on every mainstream Linux

function procStat(pid: number): string[] | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** utime + stime of one process, in ticks. */
export function procTicks(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  const f = procStat(pid);
  return f ? Number(f[11]) + Number(f[12]) : null; // utime + stime (fields 14 and 15)
}

/** The postmaster of the cluster under test (found from one of its backends), when it runs on this host. */
let postmasterPid: number | null = null;

export function getPostmasterPid(): number | null {
  return postmasterPid;
}

/** Finds the postmaster from a backend's pid (pg_backend_pid() of a connection) and remembers it. */
export function trackPostmasterOf(backendPid: number): number | null {
  postmasterPid = findPostmaster(backendPid);
  return postmasterPid;
}

function findPostmaster(backendPid: number): number | null {
  try {
    if (fs.readFileSync(`/proc/${backendPid}/comm`, 'utf8').trim() !== 'postgres') return null;
    const ppid = Number(procStat(backendPid)?.[1]);
    return fs.readFileSync(`/proc/${ppid}/comm`, 'utf8').trim() === 'postgres' ? ppid : null;
  } catch {
    return null;
  }
}

/**
 * CPU ticks per pid of the cluster under test: its postmaster and every process it forked
 * (backends, WAL writer, checkpointer...). Other Postgres clusters on the host are ignored.
 */
function postgresTicks(): Map<number, number> | null {
  if (postmasterPid === null) return null;
  const out = new Map<number, number>();
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return null;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    const pid = Number(e);
    const f = procStat(pid);
    if (!f) continue;
    if (pid !== postmasterPid && Number(f[1]) !== postmasterPid) continue;
    out.set(pid, Number(f[11]) + Number(f[12]));
  }
  return out;
}

/**
 * Ticks used between two postgresTicks() snapshots: backends that started in between
 * count in full; backends that exited in between are lost (so this is a lower bound).
 */
function postgresDelta(a: Map<number, number> | null, b: Map<number, number> | null): number | null {
  if (a === null || b === null) return null;
  let d = 0;
  for (const [pid, t] of b) d += t - (a.get(pid) ?? 0);
  return Math.max(0, d);
}

/** Busy ticks of the whole host (all CPUs): everything but idle and iowait. */
function hostBusyTicks(): number | null {
  try {
    const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    return f.slice(0, 8).reduce((a, b) => a + b, 0) - f[3]! - f[4]!;
  } catch {
    return null;
  }
}

export interface CpuSnapshot {
  at: bigint;
  client: NodeJS.CpuUsage;
  target: number | null;
  postgres: Map<number, number> | null;
  host: number | null;
}

export function cpuSnapshot(targetPid: number | undefined): CpuSnapshot {
  return {
    at: process.hrtime.bigint(),
    client: process.cpuUsage(),
    target: procTicks(targetPid),
    postgres: postgresTicks(),
    host: hostBusyTicks(),
  };
}

/** Percent of ONE CPU (so up to 100 x CPU count). */
export interface CpuPercent {
  client: number;
  target: number | null;
  postgres: number | null;
  /** Everything else on the host during the run (other processes, kernel): noise. */
  other: number | null;
  /** The whole host (all processes and the kernel). */
  host: number | null;
}

export function cpuPercent(a: CpuSnapshot, b: CpuSnapshot): CpuPercent {
  const wallS = Number(b.at - a.at) / 1e9;
  const c = process.cpuUsage(a.client);
  const pct = (ticks: number | null) => (ticks === null ? null : (ticks / CLK_TCK / wallS) * 100);
  const client = ((c.user + c.system) / 1e6 / wallS) * 100;
  const target = pct(a.target === null || b.target === null ? null : b.target - a.target);
  const postgres = pct(postgresDelta(a.postgres, b.postgres));
  const host = pct(a.host === null || b.host === null ? null : b.host - a.host);
  const other = host === null || target === null ? null : Math.max(0, host - client - target - (postgres ?? 0));
  return { client, target, postgres, other, host };
}

/** CPU time (µs) per completed request, for the target process and for Postgres; null where /proc is unavailable. */
export function cpuPerRequest(a: CpuSnapshot, b: CpuSnapshot, requests: number): { target: number | null; postgres: number | null } {
  const per = (ticks: number | null) => (ticks === null || requests === 0 ? null : (ticks / CLK_TCK / requests) * 1e6);
  return {
    target: per(a.target === null || b.target === null ? null : b.target - a.target),
    postgres: per(postgresDelta(a.postgres, b.postgres)),
  };
}
