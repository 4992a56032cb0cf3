/**
 * A strict reader of the Prometheus text exposition format 0.0.4 (what a Prometheus server scrapes
 * from /metrics), for asserting on a real scrape. It refuses what Prometheus would refuse, plus what
 * a well-formed exposition never does: a sample outside its declared family, a family split in two,
 * HELP or TYPE twice or TYPE after samples, a malformed name, label or value, a label twice, a
 * histogram whose buckets are not cumulative or whose +Inf bucket differs from _count.
 *
 * Written here because the npm parsers tried do not read prom-client's output faithfully:
 * parse-prometheus-text-format 1.1.1 merges a histogram's label sets into one (labels, sum and
 * count lost), prom2javascript 0.2.0 throws on NaN (which prom-client's event-loop gauges emit).
 */

export type FamilyType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Family {
  readonly name: string;
  type: FamilyType;
  help: string | null;
  readonly samples: Sample[];
}

export class ExpositionError extends Error {}

const NAME_RE = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME_RE = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const TYPES: readonly FamilyType[] = ['counter', 'gauge', 'histogram', 'summary', 'untyped'];

/** Go's strconv.ParseFloat as Prometheus uses it: decimal/exponent floats, NaN and ±Inf in any case. */
function parseValue(s: string, line: number): number {
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return Number(s);
  if (/^nan$/i.test(s)) return NaN;
  const inf = /^([+-]?)inf(inity)?$/i.exec(s);
  if (inf) return inf[1] === '-' ? -Infinity : Infinity;
  throw new ExpositionError(`line ${line}: bad value "${s}"`);
}

function unescape(s: string, quotes: boolean, line: number): string {
  return s.replace(/\\(.)/g, (_, c: string) => {
    if (c === '\\') return '\\';
    if (c === 'n') return '\n';
    if (c === '"' && quotes) return '"';
    throw new ExpositionError(`line ${line}: bad escape \\${c}`);
  });
}

/** name{labels} value [timestamp] */
function parseSample(text: string, line: number): Sample {
  const nm = NAME_RE.exec(text);
  if (!nm) throw new ExpositionError(`line ${line}: bad metric name in "${text}"`);
  const name = nm[0];
  let rest = text.slice(name.length);
  const labels: Record<string, string> = {};
  if (rest.startsWith('{')) {
    rest = rest.slice(1);
    for (;;) {
      rest = rest.replace(/^[ \t]*/, '');
      if (rest.startsWith('}')) break;
      const ln = LABEL_NAME_RE.exec(rest);
      if (!ln) throw new ExpositionError(`line ${line}: bad label name in "${text}"`);
      rest = rest.slice(ln[0].length).replace(/^[ \t]*/, '');
      const lv = /^="((?:[^"\\\n]|\\.)*)"/.exec(rest);
      if (!lv) throw new ExpositionError(`line ${line}: bad value of label ${ln[0]} in "${text}"`);
      if (ln[0] in labels) throw new ExpositionError(`line ${line}: label ${ln[0]} twice`);
      labels[ln[0]] = unescape(lv[1]!, true, line);
      rest = rest.slice(lv[0].length).replace(/^[ \t]*/, '');
      if (rest.startsWith(',')) rest = rest.slice(1);
      else if (!rest.startsWith('}')) throw new ExpositionError(`line ${line}: expected , or } in "${text}"`);
    }
    rest = rest.slice(1);
  }
  const parts = rest.trim().split(/[ \t]+/);
  if (!/^[ \t]/.test(rest) || parts.length < 1 || parts.length > 2 || parts[0] === '') throw new ExpositionError(`line ${line}: expected a value in "${text}"`);
  if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1])) throw new ExpositionError(`line ${line}: bad timestamp in "${text}"`);
  return { name, labels, value: parseValue(parts[0]!, line) };
}

/** The family a sample name belongs to, given the declared types. */
function familyOf(name: string, families: Map<string, Family>): Family | undefined {
  const own = families.get(name);
  if (own) return own;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const f = families.get(name.slice(0, -suffix.length));
    if (f && (f.type === 'histogram' || (f.type === 'summary' && suffix !== '_bucket'))) return f;
  }
  return undefined;
}

const labelKey = (labels: Readonly<Record<string, string>>, without: string) =>
  JSON.stringify(Object.entries(labels).filter(([k]) => k !== without).sort(([a], [b]) => (a < b ? -1 : 1)));

function checkHistogram(f: Family): void {
  const groups = new Map<string, { buckets: Array<[number, number]>; count?: number; sum?: number }>();
  const group = (labels: Readonly<Record<string, string>>) => {
    const k = labelKey(labels, 'le');
    let g = groups.get(k);
    if (!g) groups.set(k, (g = { buckets: [] }));
    return g;
  };
  for (const s of f.samples) {
    if (s.name === `${f.name}_bucket`) {
      if (s.labels.le === undefined) throw new ExpositionError(`${f.name}: bucket without le`);
      group(s.labels).buckets.push([parseValue(s.labels.le, 0), s.value]);
    } else if (s.name === `${f.name}_count`) group(s.labels).count = s.value;
    else if (s.name === `${f.name}_sum`) group(s.labels).sum = s.value;
    else throw new ExpositionError(`${f.name}: histogram sample ${s.name}`);
  }
  for (const [k, g] of groups) {
    const sorted = [...g.buckets].sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < sorted.length; i++) if (sorted[i]![1] < sorted[i - 1]![1]) throw new ExpositionError(`${f.name}${k}: buckets not cumulative`);
    const inf = sorted.at(-1);
    if (!inf || inf[0] !== Infinity) throw new ExpositionError(`${f.name}${k}: no +Inf bucket`);
    if (g.count === undefined || g.sum === undefined) throw new ExpositionError(`${f.name}${k}: _count or _sum missing`);
    if (inf[1] !== g.count) throw new ExpositionError(`${f.name}${k}: +Inf bucket ${inf[1]} but _count ${g.count}`);
  }
}

/** Parses a whole exposition; throws ExpositionError on anything malformed. */
export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const done = new Set<string>();
  let current: Family | null = null;
  const declare = (name: string) => {
    if (!NAME_RE.test(name) || NAME_RE.exec(name)![0] !== name) throw new ExpositionError(`bad family name ${name}`);
    let f = families.get(name);
    if (!f) {
      if (done.has(name)) throw new ExpositionError(`${name}: family split`);
      families.set(name, (f = { name, type: 'untyped', help: null, samples: [] }));
    }
    if (current && current !== f) done.add(current.name);
    current = f;
    return f;
  };
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  lines.forEach((raw, i) => {
    const n = i + 1;
    if (raw.trim() === '') return;
    if (raw.startsWith('#')) {
      const m = /^#[ \t]+(HELP|TYPE)[ \t]+(\S+)(?:[ \t]+(.*))?$/.exec(raw);
      if (!m) return; // a plain comment
      const f = declare(m[2]!);
      if (m[1] === 'HELP') {
        if (f.help !== null) throw new ExpositionError(`line ${n}: HELP of ${f.name} twice`);
        f.help = unescape(m[3] ?? '', false, n);
      } else {
        if (f.samples.length > 0) throw new ExpositionError(`line ${n}: TYPE of ${f.name} after its samples`);
        const type = (m[3] ?? '').trim() as FamilyType;
        if (!TYPES.includes(type)) throw new ExpositionError(`line ${n}: unknown type "${m[3]}"`);
        f.type = type;
      }
      return;
    }
    const s = parseSample(raw, n);
    let f = familyOf(s.name, families);
    if (!f) f = declare(s.name);
    else if (f !== current) {
      if (done.has(f.name) || current) throw new ExpositionError(`line ${n}: ${s.name} outside its family ${f.name}`);
    }
    if ((f.type === 'histogram' && s.name === f.name) || (f.type === 'summary' && s.name === f.name && s.labels.quantile === undefined)) {
      throw new ExpositionError(`line ${n}: ${s.name} in ${f.type} ${f.name}`);
    }
    f.samples.push(s);
  });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

/** Whether a sample's labels are exactly `labels` (le aside when asked). */
const matches = (s: Sample, labels: Record<string, string>, ignore: string[] = []) => {
  const keys = Object.keys(s.labels).filter((k) => !ignore.includes(k));
  return keys.length === Object.keys(labels).length && keys.every((k) => s.labels[k] === labels[k]);
};

/** A scrape, read: families by name and lookups of single values. */
export class Scrape {
  constructor(readonly families: Map<string, Family>, readonly text: string) {}

  static parse(text: string): Scrape {
    return new Scrape(parseExposition(text), text);
  }

  family(name: string): Family {
    const f = this.families.get(name);
    if (!f) throw new Error(`no metric family ${name} in the scrape`);
    return f;
  }

  /** The value of the sample with exactly these labels, or undefined. */
  value(name: string, labels: Record<string, string> = {}, sample = name): number | undefined {
    return this.family(name).samples.find((s) => s.name === sample && matches(s, labels))?.value;
  }

  /** A histogram's _count and _sum for these labels (0 when the series does not exist yet). */
  histogram(name: string, labels: Record<string, string>): { count: number; sum: number } {
    return { count: this.value(name, labels, `${name}_count`) ?? 0, sum: this.value(name, labels, `${name}_sum`) ?? 0 };
  }

  /** The sum of a family's samples (of its own name) whose labels include these. */
  total(name: string, labels: Record<string, string> = {}): number {
    return this.family(name).samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);
  }
}
