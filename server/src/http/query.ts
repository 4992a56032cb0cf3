import { invalidParameter, parseLocalDateTime } from '@wcs/core';

/** Typed, strict access to query parameters: repeated or unknown keys are errors. */
export class QueryReader {
  private readonly used = new Set<string>();

  constructor(private readonly raw: Record<string, unknown>) {}

  string(name: string, opts: { max?: number; pattern?: RegExp; patternText?: string } = {}): string | undefined {
    this.used.add(name);
    const v = this.raw[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') throw invalidParameter(name, 'must be given once');
    if (v === '') throw invalidParameter(name, 'must not be empty');
    if (opts.max !== undefined && v.length > opts.max) throw invalidParameter(name, `must be at most ${opts.max} characters`);
    if (opts.pattern && !opts.pattern.test(v)) throw invalidParameter(name, opts.patternText ?? 'has an invalid format');
    return v;
  }

  int(name: string, opts: { min?: number; max?: number } = {}): number | undefined {
    const v = this.string(name);
    if (v === undefined) return undefined;
    if (!/^-?\d{1,15}$/.test(v)) throw invalidParameter(name, 'must be an integer');
    const n = Number(v);
    if (opts.min !== undefined && n < opts.min) throw invalidParameter(name, `must be at least ${opts.min}`);
    if (opts.max !== undefined && n > opts.max) throw invalidParameter(name, `must be at most ${opts.max}`);
    return n;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const v = this.string(name);
    if (v === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(v)) throw invalidParameter(name, `must be one of ${allowed.join(', ')}`);
    return v as T;
  }

  /** Call after reading every accepted parameter. */
  noOthers(): void {
    for (const k of Object.keys(this.raw)) {
      if (!this.used.has(k)) throw invalidParameter(k, 'is not a parameter of this operation');
    }
  }
}

/** An optional time parameter in the spec's YYYY-MM-DDThh:mm:ss form (UTC). */
export function localTimeParam(query: QueryReader, name: string): Date | undefined {
  const raw = query.string(name, { max: 19 });
  if (raw === undefined) return undefined;
  const d = parseLocalDateTime(raw);
  if (!d) throw invalidParameter(name, 'must be an ISO 8601 local date-time YYYY-MM-DDThh:mm:ss (UTC)');
  return d;
}
