import type { z } from 'zod';
import { invalidParameter, WcsError, type ErrorName } from '@wcs/core';
import { AMOUNT_IS_A_NUMBER, REQUIRED } from './fields';

/**
 * The one adapter from the request schemas to the API's errors: the first zod issue becomes
 * invalidParameter(field, message) (INVALID_PARAMETER, "items[3].externalUserId: is required"),
 * the field named from the issue's path (`items[3].amount`, `addresses[2]`; the body itself is
 * `body`).
 *
 * Which issue is first: zod reports the fields in schema order (each field's own checks in the
 * order they are declared, an array's size before its entries), then the unknown fields, then the
 * checks across fields; the schemas list their fields in the order the API has always checked
 * them. A query's missing required parameter is reported after every other problem (the API
 * checked presence after unknown parameters).
 */

/** Problems answered with their own code instead of INVALID_PARAMETER, as `<field> <problem>`. */
export const CODED_PROBLEMS: ReadonlyMap<string, ErrorName> = new Map<string, ErrorName>([
  [AMOUNT_IS_A_NUMBER, 'WITHDRAW_AMOUNT_INVALID'],
]);

/** A request read: its value, or the WcsError that refuses it. */
export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: WcsError };

/** `items[3].amount` from prefix "items[3]" and path ["amount"]; "body" for the whole body. */
export function fieldName(prefix: string, path: readonly PropertyKey[]): string {
  let s = prefix;
  for (const k of path) s = typeof k === 'number' ? `${s}[${k}]` : s === '' ? String(k) : `${s}.${String(k)}`;
  return s === '' ? 'body' : s;
}

/** The WcsError for one issue; `prefix` names where the parsed value sits in the request (e.g. "items[3]"). */
export function issueError(issue: z.core.$ZodIssue, prefix = ''): WcsError {
  if (issue.code === 'unrecognized_keys') return invalidParameter(fieldName(prefix, [...issue.path, issue.keys[0]!]), issue.message);
  const field = fieldName(prefix, issue.path);
  const coded = CODED_PROBLEMS.get(issue.message);
  if (coded) return new WcsError(coded, { message: `${field} ${issue.message}`, details: { field: String(issue.path[issue.path.length - 1] ?? field) } });
  return invalidParameter(field, issue.message);
}

function firstIssue(issues: readonly z.core.$ZodIssue[], missingLast: boolean): z.core.$ZodIssue {
  if (missingLast) for (const i of issues) if (i.message !== REQUIRED) return i;
  return issues[0]!;
}

/** Reads a JSON body (or a part of one, named by `prefix`) with its schema. */
export function readBody<S extends z.ZodType>(schema: S, input: unknown, prefix = ''): Parsed<z.output<S>> {
  const r = schema.safeParse(input);
  return r.success ? { ok: true, value: r.data } : { ok: false, error: issueError(firstIssue(r.error.issues, false), prefix) };
}

/** A JSON body read with its schema; its first problem is thrown as a WcsError (the route's answer). */
export function parseBody<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const r = readBody(schema, input);
  if (!r.ok) throw r.error;
  return r.value;
}

/** The query parameters read with their schema; the first problem is thrown as a WcsError. */
export function parseQuery<S extends z.ZodType>(schema: S, input: Readonly<Record<string, unknown>>): z.output<S> {
  const r = schema.safeParse(input);
  if (!r.success) throw issueError(firstIssue(r.error.issues, true));
  return r.data;
}

const isItemIssue = (i: z.core.$ZodIssue) => i.path.length >= 2 && i.path[0] === 'items' && typeof i.path[1] === 'number';

/**
 * A batch body `{ items: [...] }`: a problem of the body itself (not an object, items missing, too
 * few or too many, an unknown field) is thrown; each entry is read on its own, so one bad entry
 * is that entry's error (named `items[i].<field>`) and the others are still read.
 */
export function parseBatch<I extends z.ZodType>(schema: z.ZodType<{ items: Array<z.output<I>> }>, item: I, input: unknown): Array<Parsed<z.output<I>>> {
  const r = schema.safeParse(input);
  if (r.success) return r.data.items.map((value) => ({ ok: true, value }));
  const whole = r.error.issues.find((i) => !isItemIssue(i));
  if (whole) throw issueError(whole);
  return ((input as { items: unknown[] }).items).map((raw, i) => readBody(item, raw, `items[${i}]`));
}
