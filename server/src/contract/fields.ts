import { z } from 'zod';
import { CHAIN_CODE_RE, parseLocalDateTime } from '@wcs/core';

/**
 * The building blocks of the request schemas: every field of a body or a query is one of these,
 * and each carries the exact message the API has always answered with (docs/errors.md, e2e tests).
 * parse.ts turns a schema's first issue into invalidParameter(field, message).
 *
 * Bodies: a JSON null is an absent field (a required one "is required", an optional one is left
 * out). Queries: a parameter given twice arrives as an array ("must be given once"), and an empty
 * one is refused.
 */

export const REQUIRED = 'is required';
export const NOT_EMPTY = 'must not be empty';
export const NOT_A_FIELD = 'is not a field of this operation';
export const NOT_A_PARAMETER = 'is not a parameter of this operation';
export const CHAIN_CODE_TEXT = 'must be an upper-case chain code such as ETH';
export const LOCAL_TIME_TEXT = 'must be an ISO 8601 local date-time YYYY-MM-DDThh:mm:ss (UTC)';
/** A JSON number where an amount's decimal string belongs: WITHDRAW_AMOUNT_INVALID, not INVALID_PARAMETER (parse.ts). */
export const AMOUNT_IS_A_NUMBER = 'must be a decimal string such as "12.5", not a JSON number';
export const atMostChars = (max: number) => `must be at most ${max} characters`;
export const oneOfText = (values: readonly string[]) => `must be one of ${values.join(', ')}`;

const isAbsent = (v: unknown) => v === undefined || v === null;

export interface StringRule {
  readonly max?: number;
  readonly pattern?: RegExp;
  /** The message when the pattern does not match (default: "has an invalid format"). */
  readonly patternText?: string;
}

export const CHAIN_CODE: StringRule = { pattern: CHAIN_CODE_RE, patternText: CHAIN_CODE_TEXT };

/**
 * At most `max` UTF-16 units, as the API has always measured (zod's own max() counts code points,
 * so a string of emoji twice over the limit in units would pass it).
 */
export function maxUnits(s: z.ZodString, max: number, error = atMostChars(max)): z.ZodString {
  return s.check(z.refine((v: string) => v.length <= max, { error })).meta({ maxLength: max });
}

function withRule(s: z.ZodString, rule: StringRule): z.ZodString {
  if (rule.max !== undefined) s = maxUnits(s, rule.max);
  if (rule.pattern) s = s.regex(rule.pattern, { error: rule.patternText ?? 'has an invalid format' });
  return s;
}

/** A JSON object body: unknown fields are refused by name. */
export function body<S extends z.core.$ZodLooseShape>(shape: S) {
  return z.strictObject(shape, { error: (iss) => (iss.code === 'unrecognized_keys' ? NOT_A_FIELD : 'must be a JSON object') });
}

/** A required body string: absent or null "is required", "" "must not be empty". */
export function requiredString(rule: StringRule = {}): z.ZodString {
  return withRule(z.string({ error: (iss) => (isAbsent(iss.input) ? REQUIRED : 'must be a string') }).min(1, { error: NOT_EMPTY }), rule);
}

/** An optional body string (null is absent; "" is a value). */
export function optionalString(rule: StringRule = {}) {
  return withRule(z.string({ error: 'must be a string' }), rule).nullish();
}

export interface IntRule {
  readonly min?: number;
  readonly max?: number;
}

function intChecks(n: z.ZodNumber, rule: IntRule): z.ZodNumber {
  if (rule.min !== undefined) n = n.min(rule.min, { error: `must be at least ${rule.min}` });
  if (rule.max !== undefined && rule.max < Number.MAX_SAFE_INTEGER) n = n.max(rule.max, { error: `must be at most ${rule.max}` });
  return n;
}

/** A required JSON integer (a number, not a string or a fraction; within the safe range) within [min, max]. */
export function requiredInt(rule: IntRule = {}): z.ZodNumber {
  return intChecks(z.int({ error: (iss) => (isAbsent(iss.input) ? REQUIRED : 'must be an integer') }), rule);
}

/** A body array of min..max entries of `entry`. */
export function requiredArray<T extends z.ZodType>(entry: T, min: number, max: number) {
  return z
    .array(entry, { error: (iss) => (isAbsent(iss.input) ? REQUIRED : 'must be an array') })
    .min(min, { error: `must have at least ${min} entries` })
    .max(max, { error: `must have at most ${max} entries` });
}

/** A query object: unknown parameters are refused by name. */
export function query<S extends z.core.$ZodLooseShape>(shape: S) {
  return z.strictObject(shape, { error: (iss) => (iss.code === 'unrecognized_keys' ? NOT_A_PARAMETER : 'must be a query') });
}

/** A query parameter's text: given once, not empty. Required unless made optional. */
export function queryString(rule: StringRule = {}): z.ZodString {
  return withRule(z.string({ error: (iss) => (iss.input === undefined ? REQUIRED : 'must be given once') }).min(1, { error: NOT_EMPTY }), rule);
}

/** A query parameter holding an integer (up to 15 digits) within [min, max]. */
export function queryInt(rule: IntRule = {}) {
  return queryString()
    .regex(/^-?\d{1,15}$/, { error: 'must be an integer' })
    .transform(Number)
    .pipe(intChecks(z.int(), rule));
}

/** A query parameter naming one of `values`. */
export function queryEnum<const T extends readonly [string, ...string[]]>(values: T) {
  return queryString().pipe(z.enum(values, { error: oneOfText(values) }));
}

/** A query time in the spec's YYYY-MM-DDThh:mm:ss form (UTC), read as a Date. */
export function queryLocalTime() {
  return queryString({ max: 19 }).transform((s, ctx) => {
    const d = parseLocalDateTime(s);
    if (d) return d;
    ctx.issues.push({ code: 'custom', message: LOCAL_TIME_TEXT, input: s });
    return z.NEVER;
  }).meta({ type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}$' }); // documented as the text it is read from
}

/** pageNo and pageSize of a listing (defaults 1 and `size.default`). */
export function paging(size: { readonly default: number; readonly max: number }) {
  return {
    pageNo: queryInt({ min: 1, max: 1_000_000 }).default(1).meta({ description: 'From 1.', example: 1 }),
    pageSize: queryInt({ min: 1, max: size.max }).default(size.default).meta({ description: `At most ${size.max}.`, example: size.default }),
  };
}
