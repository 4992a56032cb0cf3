/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`, e.g. BENCH_CPU_PROF=1 npm run bench):
 * self time by area (package / repository module / Node internals) and the top functions.
 * Idle time is excluded from the percentages.
 *
 *   node bench/dist/cpuprofile-top.js bench/results/profiles/<file>.cpuprofile [topN]
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
  const m = /\/(server|core|bench)\/dist\/(.*)$/.exec(u);
  if (m) return `${m[1]}/${m[2]}`;
  return u;
}

function main(): void {
  const file = process.argv[2];
  const topN = Number(process.argv[3] ?? 30);
  if (!file) {
    process.stderr.write('usage: node bench/dist/cpuprofile-top.js <file.cpuprofile> [topN]\n');
    process.exitCode = 2;
    return;
  }
  const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  for (let i = 0; i < prof.samples.length; i++) {
    const id = prof.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0));
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
  process.stdout.write(`${file}\nwall ${ms(prof.endTime - prof.startTime)}, busy ${ms(busy)}, idle ${ms(idle)}\n\nself time by area (of busy):\n`);
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
