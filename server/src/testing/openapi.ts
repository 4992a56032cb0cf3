/**
 * Test support for server/openapi.json (needs the server's devDependencies ajv and ajv-formats;
 * not exported by @wcs/server/testing): the document's operations, its examples, and a JSON
 * Schema 2020-12 validator (ajv, strict) that resolves the document's #/components/schemas refs.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import type { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

export const OPENAPI_FILE = path.resolve(__dirname, '../../openapi.json');
export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

// The document is plain JSON; these types name only what the checks read.
export type JsonObject = Record<string, unknown>;
export interface ExampleObject { summary?: string; value: unknown }
export interface MediaType { schema?: JsonObject; example?: unknown; examples?: Record<string, ExampleObject> }
export interface HeaderObject { required?: boolean; schema: JsonObject; example?: unknown }
export interface ResponseObject { description: string; headers?: Record<string, HeaderObject | Ref>; content?: Record<string, MediaType> }
export interface Parameter { name: string; in: string; required?: boolean; schema: JsonObject; example?: unknown }
export interface Operation {
  operationId: string;
  security?: unknown[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, MediaType> };
  responses: Record<string, ResponseObject | Ref>;
}
export interface Ref { $ref: string }
export interface OpenApiDocument {
  openapi: string;
  security?: unknown[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, JsonObject>; responses: Record<string, ResponseObject>; headers?: Record<string, HeaderObject> } & JsonObject;
}
export interface DocumentedOperation { method: string; path: string; op: Operation; signed: boolean }

export function loadOpenApi(): OpenApiDocument {
  return JSON.parse(fs.readFileSync(OPENAPI_FILE, 'utf8')) as OpenApiDocument;
}

/** Every operation of the document; signed = it has a non-empty security requirement. */
export function documentedOperations(doc: OpenApiDocument): DocumentedOperation[] {
  const out: DocumentedOperation[] = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const m of HTTP_METHODS) {
      const op = item[m];
      if (op) out.push({ method: m.toUpperCase(), path: p, op, signed: (op.security ?? doc.security ?? []).length > 0 });
    }
  }
  return out;
}

function isRef(x: unknown): x is Ref {
  return typeof x === 'object' && x !== null && typeof (x as Ref).$ref === 'string';
}

/** Follows a local reference (#/components/...) to a response, header or other non-schema object. */
export function deref<T>(doc: OpenApiDocument, x: T | Ref): T {
  let cur: unknown = x;
  for (let hops = 0; isRef(cur); hops++) {
    if (hops > 8 || !cur.$ref.startsWith('#/')) throw new Error(`unresolvable reference ${cur.$ref}`);
    cur = cur.$ref.slice(2).split('/').reduce<unknown>((o, k) => (o as JsonObject | undefined)?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    if (cur === undefined) throw new Error(`dangling reference ${(x as Ref).$ref}`);
  }
  return cur as T;
}

/** The documented response of an operation for an HTTP status: the exact status, else default. */
export function documentedResponse(doc: OpenApiDocument, op: Operation, status: number): ResponseObject | undefined {
  const r = op.responses[String(status)] ?? op.responses.default;
  return r === undefined ? undefined : deref(doc, r);
}

const BASE = 'https://wcs.invalid/openapi.json';

function rewriteRefs(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(rewriteRefs);
  if (x === null || typeof x !== 'object') return x;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(x)) {
    if (k === '$ref' && typeof v === 'string') {
      if (!v.startsWith('#/components/schemas/')) throw new Error(`schema reference outside components.schemas: ${v}`);
      out[k] = `${BASE}#/$defs/${v.slice('#/components/schemas/'.length)}`;
    } else {
      out[k] = rewriteRefs(v);
    }
  }
  return out;
}

/**
 * JSON Schema 2020-12 validation of values against the document's schemas. Strict: an unknown
 * keyword or format, or a reference to a missing schema, is an error when a schema compiles.
 */
export class SchemaChecker {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<unknown, ValidateFunction>();

  constructor(doc: OpenApiDocument) {
    // strictTypes off: allOf branches that add properties without repeating type are the document's style
    this.ajv = new Ajv2020({ strict: true, strictTypes: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addKeyword('example'); // OpenAPI's annotation keyword
    this.ajv.addSchema({ $id: BASE, $defs: rewriteRefs(doc.components.schemas) as JsonObject });
  }

  compile(schema: unknown): ValidateFunction {
    let v = this.compiled.get(schema);
    if (!v) {
      v = this.ajv.compile(rewriteRefs(schema) as JsonObject);
      this.compiled.set(schema, v);
    }
    return v;
  }

  /** The validation errors of value against schema, as readable lines; empty when valid. */
  errors(schema: unknown, value: unknown): string[] {
    const v = this.compile(schema);
    if (v(value)) return [];
    return (v.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`);
  }
}

export interface DocumentedExample {
  /** Where the example is, e.g. "POST /api/v1/wallet/address/create request ethUser". */
  readonly where: string;
  readonly kind: 'parameter' | 'request' | 'response' | 'header';
  readonly schema: JsonObject;
  readonly value: unknown;
  readonly method?: string;
  readonly path?: string;
  readonly name?: string;
  readonly status?: string;
}

function mediaExamples(m: MediaType): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = Object.entries(m.examples ?? {}).map(([k, e]) => [k, e.value]);
  if (m.example !== undefined) out.push(['example', m.example]);
  return out;
}

/** Every example of the document (operations, shared responses and headers), with the schema it must satisfy. */
export function documentExamples(doc: OpenApiDocument): DocumentedExample[] {
  const out: DocumentedExample[] = [];
  const headerExamples = (where: string, headers: ResponseObject['headers']) => {
    for (const [name, h] of Object.entries(headers ?? {})) {
      const header = deref(doc, h);
      if (header.example !== undefined) out.push({ where: `${where} header ${name}`, kind: 'header', schema: header.schema, value: header.example, name });
    }
  };
  for (const { method, path: p, op } of documentedOperations(doc)) {
    const at = `${method} ${p}`;
    for (const prm of op.parameters ?? []) {
      if (prm.example !== undefined) out.push({ where: `${at} parameter ${prm.name}`, kind: 'parameter', schema: prm.schema, value: prm.example, method, path: p, name: prm.name });
    }
    for (const m of Object.values(op.requestBody?.content ?? {})) {
      for (const [name, value] of mediaExamples(m)) out.push({ where: `${at} request ${name}`, kind: 'request', schema: m.schema!, value, method, path: p, name });
    }
    for (const [status, r] of Object.entries(op.responses)) {
      if (isRef(r)) continue; // shared responses are listed once, below
      headerExamples(`${at} ${status}`, r.headers);
      for (const m of Object.values(r.content ?? {})) {
        for (const [name, value] of mediaExamples(m)) out.push({ where: `${at} ${status} ${name}`, kind: 'response', schema: m.schema!, value, method, path: p, name, status });
      }
    }
  }
  for (const [rname, r] of Object.entries(doc.components.responses)) {
    headerExamples(`components.responses.${rname}`, r.headers);
    for (const m of Object.values(r.content ?? {})) {
      for (const [name, value] of mediaExamples(m)) out.push({ where: `components.responses.${rname} ${name}`, kind: 'response', schema: m.schema!, value, name });
    }
  }
  for (const [hname, h] of Object.entries(doc.components.headers ?? {})) {
    if (h.example !== undefined) out.push({ where: `components.headers.${hname}`, kind: 'header', schema: h.schema, value: h.example, name: hname });
  }
  return out;
}

/**
 * The structure of a JSON value as a comparable string: object keys (sorted) with the structure
 * of their values, arrays by their first element; scalars and null are not told apart, so a
 * nullable field may be null in one value and set in the other.
 */
export function jsonShape(x: unknown): string {
  if (Array.isArray(x)) return x.length === 0 ? '[]' : `[${jsonShape(x[0])}]`;
  if (x !== null && typeof x === 'object') {
    const o = x as JsonObject;
    return `{${Object.keys(o).sort().map((k) => `${k}:${jsonShape(o[k])}`).join(',')}}`;
  }
  return '_';
}

interface ExpressLayer { route?: { path: unknown; methods: Record<string, boolean> }; handle?: { stack?: unknown }; name?: string }

/**
 * "METHOD /path" of every route an express 5 app mounts, from its router stack (app.get(),
 * app.post(), app.route()). A mounted sub-router is refused rather than skipped, so a route
 * added through one cannot go unnoticed.
 */
export function expressRoutes(app: { router: { stack: unknown[] } }): string[] {
  const out: string[] = [];
  for (const l of app.router.stack as ExpressLayer[]) {
    if (l.route) {
      if (typeof l.route.path !== 'string') throw new Error(`route with a non-string path: ${String(l.route.path)}`);
      for (const [m, on] of Object.entries(l.route.methods)) if (on) out.push(`${m === '_all' ? 'ALL' : m.toUpperCase()} ${l.route.path}`);
    } else if (l.handle && Array.isArray(l.handle.stack)) {
      throw new Error(`a router is mounted (layer ${l.name ?? '?'}): extend expressRoutes to walk it`);
    }
  }
  return out.sort();
}
