/** Environment knobs shared by the benchmarks (BENCH_*). */

export function intEnv(name: string, dflt: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return dflt;
  if (!/^\d+$/.test(raw.trim())) throw new Error(`${name}: must be a whole number, got "${raw}"`);
  const n = Number(raw.trim());
  if (n < min || n > max) throw new Error(`${name}: must be between ${min} and ${max}, got ${n}`);
  return n;
}

export function boolEnv(name: string): boolean {
  const raw = (process.env[name] ?? '').trim().toLowerCase();
  return raw !== '' && raw !== '0' && raw !== 'false' && raw !== 'no';
}

/** Whitespace-separated list (e.g. extra node arguments). */
export function listEnv(name: string): string[] {
  return (process.env[name] ?? '').split(/\s+/).filter((a) => a !== '');
}

/** The settings every HTTP load benchmark shares. */
export interface LoadSettings {
  seconds: number;
  warmupSeconds: number;
  connections: number;
  pipelining: number;
  rounds: number;
  cpuProf: boolean;
  enforceGoal: boolean;
  /** Extra node arguments for the API server process (e.g. GC flags), whitespace-separated. */
  serverNodeArgs: string[];
}

export function readLoadSettings(): LoadSettings {
  return {
    seconds: intEnv('BENCH_SECONDS', 10, 1, 3600),
    warmupSeconds: intEnv('BENCH_WARMUP_SECONDS', 2, 0, 600),
    connections: intEnv('BENCH_CONNECTIONS', 50, 1, 10000),
    pipelining: intEnv('BENCH_PIPELINING', 1, 1, 100),
    rounds: intEnv('BENCH_ROUNDS', 2, 1, 100),
    cpuProf: boolEnv('BENCH_CPU_PROF'),
    enforceGoal: boolEnv('BENCH_ENFORCE_GOAL'),
    serverNodeArgs: listEnv('BENCH_SERVER_NODE_ARGS'),
  };
}
