import { invalidParameter } from '@wcs/core';

/** Typed, strict reading of a JSON object body: wrong types and unknown fields are errors naming the field. */
export class BodyReader {
  private readonly used = new Set<string>();
  private readonly obj: Record<string, unknown>;

  constructor(body: unknown, private readonly prefix = '') {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw invalidParameter(prefix || 'body', 'must be a JSON object');
    }
    this.obj = body as Record<string, unknown>;
  }

  private name(field: string): string {
    return this.prefix ? `${this.prefix}.${field}` : field;
  }

  string(field: string, opts: { required: true; max?: number; pattern?: RegExp; patternText?: string }): string;
  string(field: string, opts?: { required?: false; max?: number; pattern?: RegExp; patternText?: string }): string | undefined;
  string(field: string, opts: { required?: boolean; max?: number; pattern?: RegExp; patternText?: string } = {}): string | undefined {
    this.used.add(field);
    const v = this.obj[field];
    if (v === undefined || v === null) {
      if (opts.required) throw invalidParameter(this.name(field), 'is required');
      return undefined;
    }
    if (typeof v !== 'string') throw invalidParameter(this.name(field), 'must be a string');
    if (opts.required && v.length === 0) throw invalidParameter(this.name(field), 'must not be empty');
    if (opts.max !== undefined && v.length > opts.max) throw invalidParameter(this.name(field), `must be at most ${opts.max} characters`);
    if (opts.pattern && !opts.pattern.test(v)) throw invalidParameter(this.name(field), opts.patternText ?? 'has an invalid format');
    return v;
  }

  /** A JSON integer (not a string, not a fraction) within [min, max]. */
  int(field: string, opts: { required: true; min?: number; max?: number }): number;
  int(field: string, opts?: { required?: false; min?: number; max?: number }): number | undefined;
  int(field: string, opts: { required?: boolean; min?: number; max?: number } = {}): number | undefined {
    this.used.add(field);
    const v = this.obj[field];
    if (v === undefined || v === null) {
      if (opts.required) throw invalidParameter(this.name(field), 'is required');
      return undefined;
    }
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw invalidParameter(this.name(field), 'must be an integer');
    if (opts.min !== undefined && v < opts.min) throw invalidParameter(this.name(field), `must be at least ${opts.min}`);
    if (opts.max !== undefined && v > opts.max) throw invalidParameter(this.name(field), `must be at most ${opts.max}`);
    return v;
  }

  array(field: string, opts: { min: number; max: number }): unknown[] {
    this.used.add(field);
    const v = this.obj[field];
    if (v === undefined || v === null) throw invalidParameter(this.name(field), 'is required');
    if (!Array.isArray(v)) throw invalidParameter(this.name(field), 'must be an array');
    if (v.length < opts.min) throw invalidParameter(this.name(field), `must have at least ${opts.min} entries`);
    if (v.length > opts.max) throw invalidParameter(this.name(field), `must have at most ${opts.max} entries`);
    return v;
  }

  /** Call after reading every accepted field. */
  noOthers(): void {
    for (const k of Object.keys(this.obj)) {
      if (!this.used.has(k)) throw invalidParameter(this.name(k), 'is not a field of this operation');
    }
  }
}
