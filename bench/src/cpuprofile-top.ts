/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`, e.g. BENCH_CPU_PROF=1 npm run bench):
 * self time by area (package / repository module / Node internals) and the top functions.
 * Idle time is excluded from the percentages.
 *
 *   node bench/dist/cpuprofile-top.js bench/results/profiles/<file>.cpuprofile [topN]
 *        [--results bench/results/<scenario>.json --target "<target name>"] [--window <fromUs>,<toUs>]
 *
 * --results/--target keeps only the samples taken while that target was under load (the
 * runs' windowUs in the results file, warm-up included); --window keeps one time window
 * (µs of the monotonic clock, as in the profile). Both leave out the rest of the server's life.
 */
import * as fs from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

function area(f: CallFrame): string {
  const u = f.url;
  if (u === '') {
    if (f.functionName.startsWith('(')) return f.functionName; // (program) (garbage collector) (idle)
    return '(native)';
  }
  const nm = u.lastIndexOf('/node_modules/');
  if (nm !== -1) {
    const rest = u.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (u.startsWith('node:')) return `node:${u.slice(5).split('/')[0] === 'internal' ? 'internal/' + u.slice(5).split('/')[1] : u.slice(5)}`;
  const m = /\/(server|core|bench|custody\/[^/]+|adapters\/[^/]+)\/dist\/(.*)$/.exec(u);
  if (m) return `${m[1]}/${m[2]}`;
  return u;
}

function parseArgs(argv: string[]): { file?: string; topN: number; results?: string; target?: string; window?: [number, number] } {
  const positional: string[] = [];
  const o: { results?: string; target?: string; window?: [number, number] } = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--results') o.results = argv[++i];
    else if (a === '--target') o.target = argv[++i];
    else if (a === '--window') {
      const [from, to] = (argv[++i] ?? '').split(',').map(Number);
      if (!Number.isFinite(from) || !Number.isFinite(to)) throw new Error('--window takes <fromUs>,<toUs>');
      o.window = [from!, to!];
    } else positional.push(a);
  }
  return { file: positional[0], topN: Number(positional[1] ?? 30), ...o };
}

/** The load windows (µs) of one target in a results file. */
function targetWindows(resultsFile: string, target: string): Array<[number, number]> {
  const r = JSON.parse(fs.readFileSync(resultsFile, 'utf8')) as { warmups?: Array<{ target: string; windowUs?: [number, number] }>; runs?: Array<{ target: string; windowUs?: [number, number] }> };
  const all = [...(r.warmups ?? []), ...(r.runs ?? [])];
  const w = all.filter((x) => x.target === target && x.windowUs).map((x) => x.windowUs!);
  if (!w.length) throw new Error(`no runs of target "${target}" with windowUs in ${resultsFile} (targets: ${[...new Set(all.map((x) => x.target))].join(', ')})`);
  return w;
}

function main(): void {
  const args = parseArgs(process.argv.slice(2));
  const file = args.file;
  const topN = args.topN;
  if (!file || (args.results === undefined) !== (args.target === undefined)) {
    process.stderr.write('usage: node bench/dist/cpuprofile-top.js <file.cpuprofile> [topN] [--results <results.json> --target <name>] [--window <fromUs>,<toUs>]\n');
    process.exitCode = 2;
    return;
  }
  const windows: Array<[number, number]> = [];
  if (args.results && args.target) windows.push(...targetWindows(args.results, args.target));
  if (args.window) windows.push(args.window);
  const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  let t = prof.startTime;
  let kept = 0;
  for (let i = 0; i < prof.samples.length; i++) {
    const id = prof.samples[i]!;
    const d = prof.timeDeltas[i] ?? 0;
    t += d;
    if (windows.length && !windows.some(([a, b]) => t >= a && t <= b)) continue;
    kept++;
    selfUs.set(id, (selfUs.get(id) ?? 0) + d);
  }
  if (windows.length) {
    const span = windows.reduce((a, [x, y]) => a + (y - x), 0);
    process.stdout.write(`windows: ${windows.length} (${(span / 1e6).toFixed(1)} s${args.target ? `, target "${args.target}"` : ''}); ${kept} of ${prof.samples.length} samples kept\n`);
    if (kept === 0) process.stdout.write(`(no samples in the windows: profile spans ${prof.startTime}..${prof.endTime} µs)\n`);
  }
  let total = 0;
  let idle = 0;
  const areas = new Map<string, number>();
  const fns = new Map<string, { us: number; area: string }>();
  for (const [id, us] of selfUs) {
    const n = byId.get(id)!;
    total += us;
    if (n.callFrame.functionName === '(idle)') {
      idle += us;
      continue;
    }
    const a = area(n.callFrame);
    areas.set(a, (areas.get(a) ?? 0) + us);
    const key = `${n.callFrame.functionName || '(anonymous)'}  ${a}:${n.callFrame.lineNumber + 1}`;
    const e = fns.get(key) ?? { us: 0, area: a };
    e.us += us;
    fns.set(key, e);
  }
  const busy = total - idle;
  const pct = (us: number) => ((us / busy) * 100).toFixed(1).padStart(5) + ' %';
  const ms = (us: number) => (us / 1000).toFixed(0).padStart(7) + ' ms';
  process.stdout.write(`${file}\nwall ${ms(windows.length ? windows.reduce((a, [x, y]) => a + (y - x), 0) : prof.endTime - prof.startTime)}, busy ${ms(busy)}, idle ${ms(idle)}\n\nself time by area (of busy):\n`);
  for (const [a, us] of [...areas].sort((x, y) => y[1] - x[1]).slice(0, 25)) process.stdout.write(`${pct(us)} ${ms(us)}  ${a}\n`);
  process.stdout.write(`\ntop ${topN} functions by self time (of busy):\n`);
  for (const [k, e] of [...fns].sort((x, y) => y[1].us - x[1].us).slice(0, topN)) process.stdout.write(`${pct(e.us)} ${ms(e.us)}  ${k}\n`);

  // Inclusive (total) time: each sample counts once for every distinct function on its stack.
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const incl = new Map<string, number>();
  const inclArea = new Map<string, number>();
  for (const [id, us] of selfUs) {
    if (byId.get(id)!.callFrame.functionName === '(idle)') continue;
    const seen = new Set<string>();
    const seenArea = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      if (f.functionName === '(root)') continue;
      const a = area(f);
      if (!seenArea.has(a)) {
        seenArea.add(a);
        inclArea.set(a, (inclArea.get(a) ?? 0) + us);
      }
      const key = `${f.functionName || '(anonymous)'}  ${a}:${f.lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      incl.set(key, (incl.get(key) ?? 0) + us);
    }
  }
  process.stdout.write(`\ninclusive time by area (samples with the area anywhere on the synchronous stack, of busy):\n`);
  for (const [a, us] of [...inclArea].sort((x, y) => y[1] - x[1]).slice(0, topN)) process.stdout.write(`${pct(us)} ${ms(us)}  ${a}\n`);
  process.stdout.write(`\ntop ${topN} functions by inclusive time (synchronous stacks only, of busy):\n`);
  for (const [k, us] of [...incl].sort((x, y) => y[1] - x[1]).slice(0, topN)) process.stdout.write(`${pct(us)} ${ms(us)}  ${k}\n`);
}

main();
