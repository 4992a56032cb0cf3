import { z } from 'zod';
import { BusinessErrorEnvelope, Envelope } from '../responses/common';
import { HEADERS, INFO, PARAMETERS, RESPONSES, SECURITY, SECURITY_SCHEMES, SERVERS } from './frame';

/**
 * The OpenAPI 3.1 document, built from the zod schemas: components.schemas from every schema with
 * an id (`.meta({ id })`: requests, records, events), each operation's parameters from the query
 * schema its route parses with, its request body from the body schema, its success envelope from
 * the schema of its `data`, and the webhooks from the event schemas. `npm run openapi -w @wcs/server`
 * writes it to server/openapi.json (committed, served at /openapi.json; a test fails when the file
 * is not what this builds).
 */

type Json = Record<string, unknown>;
export interface Example { readonly summary?: string; readonly value: unknown }

export interface OperationDoc {
  readonly method: 'get' | 'post';
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  /** Signed with the application's key (the default security), rate limited, answering the error envelope. */
  readonly signed: boolean;
  /** Needs the key store: may answer 503 KEYSTORE_UNAVAILABLE. */
  readonly keystore?: boolean;
  /** The query schema the route parses with; each field is a parameter (its `.meta()` description and example). */
  readonly query?: z.ZodType;
  /** A parameter's description and example for this operation, where they differ from its query schema's (a schema shared by several routes). */
  readonly params?: Readonly<Record<string, { readonly description?: string; readonly example?: unknown }>>;
  readonly body?: z.ZodType;
  readonly bodyDescription?: string;
  readonly bodyExamples?: Readonly<Record<string, Example>>;
  /** The `data` of the success envelope {code: 0, data, msg}. */
  readonly data?: z.ZodType;
  /** The whole 200 answer when it is not an envelope (the document itself). */
  readonly document?: z.ZodType;
  /** HTTP 200 may also carry a business error (BusinessErrorEnvelope). */
  readonly business?: boolean;
  readonly description200: string;
  readonly examples: Readonly<Record<string, Example>>;
  /** Further responses of this operation alone (e.g. /readyz's 503), as OpenAPI response objects. */
  readonly responses?: Readonly<Record<string, unknown>>;
}

export interface WebhookDoc {
  readonly event: string;
  readonly operationId: string;
  readonly summary: string;
  readonly description: string;
  readonly schema: z.ZodType;
  readonly examples: Readonly<Record<string, Example>>;
}

const REF = '#/components/schemas/';
const SAFE = Number.MAX_SAFE_INTEGER;

/** zod's JSON Schema, as the document writes it: no $schema/$id, no safe-integer bounds, no empty additionalProperties. */
function tidy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidy);
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    if (k === '$schema' || k === '$id') continue;
    if ((k === 'minimum' && v === -SAFE) || (k === 'maximum' && v === SAFE)) continue;
    if ((k === 'additionalProperties' || k === 'properties') && v !== null && typeof v === 'object' && Object.keys(v as Json).length === 0) continue;
    out[k] = tidy(v);
  }
  return out;
}

/** One schema as JSON Schema, its named parts (schemas with an id) as component references. */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'input'): Json {
  const all = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any', metadata: z.globalRegistry, cycles: 'ref', reused: 'inline' }) as Json;
  const defs = (all.$defs ?? {}) as Json;
  delete all.$defs;
  const text = JSON.stringify(all).replace(/"#\/\$defs\/([^"]+)"/g, (_, id: string) => {
    if (!(id in defs) || id.startsWith('__')) throw new Error(`a schema has a definition without an id (${id})`);
    return JSON.stringify(`${REF}${id}`);
  });
  return tidy(JSON.parse(text)) as Json;
}

/** components.schemas: every schema registered with an id. */
export function componentSchemas(): Record<string, Json> {
  const out = z.toJSONSchema(z.globalRegistry, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any', uri: (id) => `${REF}${id}` }) as { schemas: Record<string, Json> };
  return Object.fromEntries(Object.entries(out.schemas).sort(([a], [b]) => a.localeCompare(b)).map(([id, s]) => [id, tidy(s) as Json]));
}

function ref(schema: z.ZodType): Json {
  const id = z.globalRegistry.get(schema)?.id;
  return id ? { $ref: `${REF}${id}` } : jsonSchema(schema);
}

function parameters(query: z.ZodType, own: OperationDoc['params'] = {}): Json[] {
  for (const name of Object.keys(own)) if (!(name in shapeOf(query))) throw new Error(`params names ${name}, not a field of the query schema`);
  return Object.entries(shapeOf(query)).map(([name, field]) => {
    const { description, example, ...schema } = jsonSchema(field, 'output');
    const required = !field.safeParse(undefined).success;
    if (schema.default !== undefined && required) throw new Error(`${name}: a default on a required parameter`);
    const p: Json = { name, in: 'query', required, schema };
    const d = own[name]?.description ?? description;
    const e = own[name]?.example ?? example;
    if (d !== undefined) p.description = d;
    if (e !== undefined) p.example = e;
    return p;
  });
}

/** The fields of an object schema (also under a refinement). */
function shapeOf(query: z.ZodType): Record<string, z.ZodType> {
  const shape = (query as unknown as { shape?: Record<string, z.ZodType> }).shape;
  if (!shape) throw new Error('a query schema is an object');
  return shape;
}

const header = (name: string) => ({ $ref: `#/components/headers/${name}` });

function operation(op: OperationDoc): Json {
  const o: Json = { operationId: op.operationId, summary: op.summary };
  if (op.description) o.description = op.description;
  if (!op.signed) o.security = [];
  if (op.query) {
    const ps = parameters(op.query, op.params);
    if (ps.length > 0) o.parameters = ps;
  }
  if (op.body) {
    const body: Json = { required: true, content: { 'application/json': { schema: ref(op.body), ...(op.bodyExamples ? { examples: op.bodyExamples } : {}) } } };
    if (op.bodyDescription) body.description = op.bodyDescription;
    o.requestBody = body;
  }
  let schema: Json;
  if (op.document) schema = jsonSchema(op.document);
  else {
    if (!op.data) throw new Error(`${op.operationId}: no data schema`);
    const success = { allOf: [ref(Envelope), { properties: { code: { const: 0 }, data: ref(op.data) } }] };
    schema = op.business ? { oneOf: [success, ref(BusinessErrorEnvelope)] } : success;
  }
  const headers: Json = { 'X-Request-Id': header('XRequestId') };
  if (op.signed) Object.assign(headers, { RateLimit: header('RateLimit'), 'RateLimit-Policy': header('RateLimitPolicy') });
  const responses: Json = { 200: { description: op.description200, content: { 'application/json': { schema, examples: op.examples } }, headers } };
  if (op.signed) responses['429'] = { $ref: '#/components/responses/RateLimited' };
  if (op.keystore) responses['503'] = { $ref: '#/components/responses/KeyStoreUnavailable' };
  Object.assign(responses, op.responses ?? {});
  if (op.signed) responses.default = { $ref: '#/components/responses/Error' };
  o.responses = responses;
  return o;
}

const CALLBACK_PARAMETERS = ['CallbackApiKey', 'CallbackTimestamp', 'CallbackNonce', 'CallbackSignature', 'CallbackUserAgent'].map((p) => ({ $ref: `#/components/parameters/${p}` }));

function webhook(w: WebhookDoc): Json {
  return {
    post: {
      operationId: w.operationId,
      summary: w.summary,
      description: w.description,
      parameters: CALLBACK_PARAMETERS,
      requestBody: { required: true, description: "The task's body: the same bytes on every attempt of the task.", content: { 'application/json': { schema: ref(w.schema), examples: w.examples } } },
      responses: { 200: { $ref: '#/components/responses/CallbackAck' }, default: { $ref: '#/components/responses/CallbackNotAcknowledged' } },
    },
  };
}

/** The whole document for these operations and webhooks. */
export function buildDocument(operations: readonly OperationDoc[], webhooks: readonly WebhookDoc[]): Json {
  const paths: Record<string, Json> = {};
  for (const op of operations) {
    const item = (paths[op.path] ??= {});
    if (item[op.method]) throw new Error(`${op.method.toUpperCase()} ${op.path} is listed twice`);
    item[op.method] = operation(op);
  }
  const ids = new Set<string>();
  for (const op of operations) {
    if (ids.has(op.operationId)) throw new Error(`operationId ${op.operationId} is used twice`);
    ids.add(op.operationId);
  }
  return {
    openapi: '3.1.0',
    info: INFO,
    servers: SERVERS,
    security: SECURITY,
    paths,
    webhooks: Object.fromEntries(webhooks.map((w) => [w.event, webhook(w)])),
    components: {
      securitySchemes: SECURITY_SCHEMES,
      responses: RESPONSES,
      schemas: componentSchemas(),
      headers: HEADERS,
      parameters: PARAMETERS,
    },
  };
}
