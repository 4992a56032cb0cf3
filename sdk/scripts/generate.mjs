#!/usr/bin/env node
/**
 * Generates src/generated/api.ts from the service's OpenAPI document (server/openapi.json):
 *
 *   - one TypeScript type per component schema (request bodies, records, webhook events);
 *   - per operation: <Op>Query (query parameters), <Op>Body (request body), <Op>Data (the `data`
 *     of the {code, data, msg} envelope of a success) and an entry of OPERATIONS (method, path,
 *     whether it is signed, its query parameter names);
 *   - the webhook events: WebhookEvent (the union, discriminated on `event`), WebhookEventMap and
 *     WEBHOOK_EVENTS, from the document's `webhooks`.
 *
 *   node scripts/generate.mjs               writes src/generated/api.ts
 *   node scripts/generate.mjs --stdout      prints what it would write (the sync test compares it)
 *   node scripts/generate.mjs --check       exits 1 when the committed file differs
 *   node scripts/generate.mjs --openapi F   reads F instead of ../server/openapi.json
 *
 * Only the JSON Schema keywords that carry type information are translated (type, enum, const,
 * properties, required, additionalProperties, items, $ref, oneOf, anyOf, allOf); constraints
 * (pattern, minimum, if/then/else, ...) are left to the service. The output is deterministic:
 * document order, no dates.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
export const SDK_ROOT = resolve(HERE, '..');
export const DEFAULT_OPENAPI = resolve(SDK_ROOT, '..', 'server', 'openapi.json');
export const OUTPUT = join(SDK_ROOT, 'src', 'generated', 'api.ts');

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

const pascal = (s) => s.replace(/(^|[^A-Za-z0-9]+)([A-Za-z0-9])/g, (_, __, c) => c.toUpperCase());
const propName = (n) => (IDENT.test(n) ? n : JSON.stringify(n));
const refName = (ref) => {
  const m = /^#\/components\/schemas\/(.+)$/.exec(ref);
  if (!m) throw new Error(`unsupported $ref ${ref}`);
  return pascal(m[1]);
};

function doc(lines, indent) {
  const text = lines.filter((l) => l !== undefined && l !== null && String(l).trim() !== '').join('\n').replace(/\*\//g, '*\\/');
  if (!text) return '';
  const pad = ' '.repeat(indent);
  const body = text.split('\n');
  if (body.length === 1) return `${pad}/** ${body[0]} */\n`;
  return `${pad}/**\n${body.map((l) => `${pad} * ${l}`.trimEnd()).join('\n')}\n${pad} */\n`;
}

function literal(v) {
  return JSON.stringify(v);
}

/** Does the schema say anything about the shape of a value (not just constraints)? */
function hasTypeInfo(s) {
  if (s === true || s === undefined) return false;
  if (s === false) return true;
  return ['type', 'enum', 'const', 'properties', 'items', '$ref', 'oneOf', 'anyOf', 'allOf', 'additionalProperties'].some((k) => k in s);
}

/** Wraps a type in parentheses when it has a top-level | or & (so it can be combined with others). */
function paren(t) {
  let depth = 0;
  for (let i = 0; i < t.length; i++) {
    const c = t[i];
    if (c === '"') {
      for (i++; i < t.length && t[i] !== '"'; i++) if (t[i] === '\\') i++;
    } else if ('{<(['.includes(c)) depth++;
    else if ('}>)]'.includes(c)) depth--;
    else if (depth === 0 && (c === '|' || c === '&')) return `(${t})`;
  }
  return t;
}

/** A single object literal type (not a union or intersection starting with one). */
const isObjectLiteral = (t) => t.startsWith('{\n') && t.endsWith('}') && paren(t) === t;

function union(types) {
  const seen = [];
  for (const t of types) if (!seen.includes(t)) seen.push(t);
  if (seen.includes('unknown')) return 'unknown';
  return seen.join(' | ');
}

/** The TypeScript type of a JSON Schema; `indent` is the indentation of the line it starts on. */
export function tsType(s, indent = 0) {
  if (s === undefined || s === true) return 'unknown';
  if (s === false) return 'never';
  if (s.$ref) return refName(s.$ref);
  if ('const' in s) return literal(s.const);
  if (s.enum) {
    const t = s.enum.map(literal);
    if (Array.isArray(s.type) && s.type.includes('null') && !s.enum.includes(null)) t.push('null');
    return union(t);
  }
  if (s.oneOf || s.anyOf) {
    const base = { ...s };
    delete base.oneOf;
    delete base.anyOf;
    const parts = (s.oneOf ?? s.anyOf).map((x) => paren(tsType(x, indent)));
    const u = union(parts);
    return hasTypeInfo(base) ? `${paren(tsType(base, indent))} & (${u})` : u;
  }
  if (s.allOf) {
    const base = { ...s };
    delete base.allOf;
    const parts = s.allOf.filter(hasTypeInfo).map((x) => paren(tsType(x, indent)));
    if (hasTypeInfo(base)) parts.unshift(paren(tsType(base, indent)));
    const kept = parts.filter((p) => p !== 'unknown');
    if (kept.length === 1) return tsType(hasTypeInfo(base) ? base : s.allOf.find(hasTypeInfo), indent);
    return kept.length === 0 ? 'unknown' : kept.join(' & ');
  }
  if (Array.isArray(s.type)) return union(s.type.map((t) => paren(tsType({ ...s, type: t }, indent))));
  const type = s.type ?? (s.properties || s.additionalProperties !== undefined ? 'object' : s.items ? 'array' : undefined);
  switch (type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `Array<${tsType(s.items, indent)}>`;
    case 'object':
      return objectType(s, indent);
    default:
      return 'unknown';
  }
}

function objectType(s, indent) {
  const props = s.properties ?? {};
  const names = Object.keys(props);
  const extra = s.additionalProperties;
  if (names.length === 0) {
    if (extra && extra !== true) return `Record<string, ${tsType(extra, indent)}>`;
    return extra === false ? 'Record<string, never>' : 'Record<string, unknown>';
  }
  const required = new Set(s.required ?? []);
  const pad = ' '.repeat(indent + 2);
  let out = '{\n';
  for (const n of names) {
    const p = props[n];
    out += doc([p && p.description], indent + 2);
    out += `${pad}${propName(n)}${required.has(n) ? '' : '?'}: ${tsType(p, indent + 2)};\n`;
  }
  if (extra && extra !== true) out += `${pad}[key: string]: ${tsType(extra, indent + 2)} | undefined;\n`;
  return out + ' '.repeat(indent) + '}';
}

function declare(name, schema, description) {
  const t = tsType(schema, 0);
  const head = doc([description], 0);
  if (isObjectLiteral(t)) return `${head}export interface ${name} ${t}\n`;
  return `${head}export type ${name} = ${t};\n`;
}

function deref(document, x) {
  let cur = x;
  for (let i = 0; cur && cur.$ref && i < 10; i++) {
    const parts = cur.$ref.replace(/^#\//, '').split('/');
    cur = parts.reduce((o, k) => o?.[k], document);
  }
  return cur;
}

/** The schema of `data` in the success envelope of a 200 answer, or null when the answer is not an envelope. */
function successData(document, schema) {
  const s = schema.$ref ? deref(document, schema) : schema;
  if (!s) return null;
  if (s.oneOf) {
    for (const branch of s.oneOf) {
      if (branch.$ref && /ErrorEnvelope$/.test(branch.$ref)) continue;
      const d = successData(document, branch);
      if (d) return d;
    }
    return null;
  }
  if (s.properties && 'data' in s.properties && s.properties.code && 'const' in s.properties.code && s.properties.code.const === 0) return s.properties.data;
  if (s.allOf) {
    // allOf [Envelope, {code: {const: 0}, data: X}]: X (the Envelope member itself says data is anything)
    const envelope = s.allOf.some((m) => m.$ref === '#/components/schemas/Envelope');
    for (const m of s.allOf) {
      if (m.$ref === '#/components/schemas/Envelope') continue;
      const mm = m.$ref ? deref(document, m) : m;
      if (mm?.properties?.data && (envelope || mm.properties.code)) return mm.properties.data;
    }
  }
  return null;
}

export function operationsOf(document) {
  const ops = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      if (!op.operationId) throw new Error(`${method.toUpperCase()} ${path}: no operationId`);
      ops.push({ path, method: method.toUpperCase(), op, params: [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p) => deref(document, p)) });
    }
  }
  return ops;
}

export function generate(document) {
  const out = [];
  out.push(
    '/* eslint-disable */',
    '/**',
    ` * Types of the wallet custody service API (${document.info?.title ?? 'OpenAPI'}, OpenAPI ${document.openapi}, info.version ${document.info?.version ?? '?'}).`,
    ' *',
    ' * GENERATED from server/openapi.json by sdk/scripts/generate.mjs: do not edit by hand.',
    ' * After the OpenAPI document changes, run `npm run generate` in sdk/ and commit the result',
    ' * (a unit test fails while this file and the document differ).',
    ' */',
    '',
  );

  out.push('// ---------------------------------------------------------------- component schemas', '');
  for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) {
    out.push(declare(pascal(name), schema, schema.description));
  }

  out.push('// ---------------------------------------------------------------- operations', '');
  const ops = operationsOf(document);
  const table = [];
  for (const { path, method, op, params } of ops) {
    const Name = pascal(op.operationId);
    const query = params.filter((p) => p.in === 'query');
    const lines = [`${method} ${path}`, op.summary, op.description];
    out.push(doc(lines, 0).trimEnd());
    // query
    if (query.length === 0) out.push(`export type ${Name}Query = Record<string, never>;`);
    else {
      const schema = { type: 'object', properties: {}, required: [] };
      for (const p of query) {
        schema.properties[p.name] = { ...p.schema, description: p.description || p.schema?.description };
        if (p.required) schema.required.push(p.name);
      }
      out.push(`export interface ${Name}Query ${tsType(schema, 0)}`);
    }
    // body
    const bodySchema = op.requestBody?.content?.['application/json']?.schema;
    out.push(bodySchema ? `export type ${Name}Body = ${tsType(bodySchema, 0)};` : `export type ${Name}Body = undefined;`);
    // data
    const ok = op.responses?.['200'];
    const okResp = ok?.$ref ? deref(document, ok) : ok;
    const okSchema = okResp?.content?.['application/json']?.schema;
    const data = okSchema ? successData(document, okSchema) : null;
    const envelope = data !== null;
    const dataType = envelope ? tsType(data, 0) : okSchema ? tsType(okSchema, 0) : 'unknown';
    out.push(isObjectLiteral(dataType) ? `export interface ${Name}Data ${dataType}` : `export type ${Name}Data = ${dataType};`);
    out.push('');
    const signed = !(Array.isArray(op.security) && op.security.length === 0);
    table.push({ id: op.operationId, Name, method, path, signed, envelope, query: query.map((p) => p.name), hasBody: Boolean(bodySchema) });
  }

  out.push('/** Every operation of the document: method, path, whether it is signed and answers the {code, data, msg} envelope, its query parameters. */');
  out.push('export const OPERATIONS = {');
  for (const t of table) {
    out.push(
      `  ${propName(t.id)}: { method: ${literal(t.method)}, path: ${literal(t.path)}, signed: ${t.signed}, envelope: ${t.envelope}, query: ${literal(t.query)}, hasBody: ${t.hasBody} },`,
    );
  }
  out.push('} as const;', '');
  out.push('export type OperationId = keyof typeof OPERATIONS;', '');
  out.push('/** The request and answer types of every operation, by operationId. */');
  out.push('export interface OperationTypes {');
  for (const t of table) out.push(`  ${propName(t.id)}: { query: ${t.Name}Query; body: ${t.Name}Body; data: ${t.Name}Data };`);
  out.push('}', '');

  out.push('// ---------------------------------------------------------------- webhooks (callbacks the service sends)', '');
  const events = [];
  for (const [name, item] of Object.entries(document.webhooks ?? {})) {
    const op = item.post;
    const schema = op?.requestBody?.content?.['application/json']?.schema;
    if (!schema?.$ref) throw new Error(`webhook ${name}: request body is not a $ref`);
    const target = deref(document, schema);
    const event = target?.properties?.event?.const;
    if (typeof event !== 'string') throw new Error(`webhook ${name}: its schema has no const event`);
    events.push({ event, type: refName(schema.$ref), summary: op.summary });
  }
  out.push('/** Every event the service sends to a callback URL, discriminated on `event`. */');
  out.push(`export type WebhookEvent = ${events.map((e) => e.type).join(' | ')};`, '');
  out.push('/** The event type of each `event` value. */');
  out.push('export interface WebhookEventMap {');
  for (const e of events) out.push(doc([e.summary], 2).trimEnd(), `  ${propName(e.event)}: ${e.type};`);
  out.push('}', '');
  out.push('/** The `event` values the service sends, in the order of the document. */');
  out.push(`export const WEBHOOK_EVENTS = ${literal(events.map((e) => e.event))} as const;`, '');
  out.push('export type WebhookEventName = (typeof WEBHOOK_EVENTS)[number];', '');
  return out.join('\n');
}

function main(argv) {
  const i = argv.indexOf('--openapi');
  const file = i >= 0 ? resolve(argv[i + 1]) : DEFAULT_OPENAPI;
  const text = generate(JSON.parse(readFileSync(file, 'utf8')));
  if (argv.includes('--stdout')) {
    process.stdout.write(text);
    return 0;
  }
  if (argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(OUTPUT, 'utf8');
    } catch {
      /* missing */
    }
    if (current === text) return 0;
    process.stderr.write(`sdk/src/generated/api.ts is out of date with ${file}: run \`npm run generate\` in sdk/ and commit it\n`);
    return 1;
  }
  mkdirSync(dirname(OUTPUT), { recursive: true });
  writeFileSync(OUTPUT, text);
  process.stdout.write(`wrote ${OUTPUT} from ${file}\n`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exit(main(process.argv.slice(2)));
