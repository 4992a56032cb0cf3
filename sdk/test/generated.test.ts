/**
 * src/generated/openapi.ts is what openapi-typescript (scripts/generate-types.mjs) makes of
 * server/openapi.json today; the runtime tables of src/api.ts (OPERATIONS, WEBHOOK_EVENTS) say
 * what the document says; the client covers every operation of the document with a retry class.
 * (The types' precision is checked when compiling: test/types.test.ts.)
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROUTES } from '../src/client';
import { OPERATIONS, WEBHOOK_EVENTS } from '../src/api';
import { ErrorCode } from '../src/errors';
import { REPO_ROOT, SDK_ROOT } from './helpers';

const GENERATOR = path.join(SDK_ROOT, 'scripts', 'generate-types.mjs');
const GENERATED = path.join(SDK_ROOT, 'src', 'generated', 'openapi.ts');
const OPENAPI = path.join(REPO_ROOT, 'server', 'openapi.json');

const generator = (...args: string[]) => spawnSync(process.execPath, [GENERATOR, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });

type Json = Record<string, any>;
const readDocument = () => JSON.parse(fs.readFileSync(OPENAPI, 'utf8')) as Json;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function deref(doc: Json, x: Json | undefined): Json | undefined {
  let cur = x;
  for (let i = 0; cur && typeof cur.$ref === 'string' && i < 10; i++) cur = cur.$ref.replace(/^#\//, '').split('/').reduce((o: Json | undefined, k: string) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  return cur;
}

describe('generated types and operation coverage', () => {
  it('src/generated/openapi.ts is up to date with server/openapi.json', function () {
    this.timeout(60_000);
    const r = generator('--stdout');
    expect(r.status, r.stderr).to.equal(0);
    const committed = fs.readFileSync(GENERATED, 'utf8');
    if (r.stdout !== committed) {
      const a = r.stdout.split('\n');
      const b = committed.split('\n');
      const line = a.findIndex((l, i) => l !== b[i]);
      expect.fail(`sdk/src/generated/openapi.ts is out of date with server/openapi.json (first difference at line ${line + 1}): run \`npm run generate -w @wcs/sdk\` and commit the result`);
    }
    expect(committed).to.match(/^export interface paths \{$/m).and.to.match(/^export interface webhooks \{$/m).and.to.match(/^export interface operations \{$/m);
  });

  it('--check passes on the committed file and fails for another document; the output is deterministic', function () {
    this.timeout(90_000);
    expect(generator('--check').status).to.equal(0);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-sdk-gen-'));
    try {
      const doc = readDocument();
      doc.components.schemas.Address.properties.address = { type: 'integer' };
      const other = path.join(dir, 'openapi.json');
      fs.writeFileSync(other, JSON.stringify(doc));
      const r = generator('--check', '--openapi', other);
      expect(r.status).to.equal(1);
      expect(r.stderr).to.contain('out of date');
      // same document, same text (no dates, no paths)
      fs.writeFileSync(path.join(dir, 'same.json'), fs.readFileSync(OPENAPI));
      expect(generator('--stdout', '--openapi', path.join(dir, 'same.json')).stdout).to.equal(fs.readFileSync(GENERATED, 'utf8'));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('OPERATIONS is the document: method, path, signed, query parameters in order, body', () => {
    const doc = readDocument();
    const expected: Record<string, unknown> = {};
    for (const [p, item] of Object.entries(doc.paths as Json)) {
      for (const m of METHODS) {
        const op = item[m];
        if (!op) continue;
        const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((x: Json) => deref(doc, x)!);
        expected[op.operationId] = {
          method: m.toUpperCase(),
          path: p,
          // no `security: []` of its own: the document's global security (the four signature headers)
          signed: !(Array.isArray(op.security) && op.security.length === 0),
          query: params.filter((x) => x.in === 'query').map((x) => x.name),
          hasBody: Boolean(deref(doc, op.requestBody)?.content?.['application/json']),
        };
      }
    }
    const actual = Object.fromEntries(Object.entries(OPERATIONS).map(([id, o]) => [id, { method: o.method, path: o.path, signed: o.signed, query: [...o.query], hasBody: o.hasBody }]));
    expect(actual).to.deep.equal(expected);
    expect(Object.values(OPERATIONS).filter((o) => !o.signed).map((o) => o.path).sort()).to.deep.equal(['/healthz', '/openapi.json', '/readyz']);
    expect(Object.values(OPERATIONS).filter((o) => !o.envelope).map((o) => o.path)).to.deep.equal(['/openapi.json']);
  });

  it('WEBHOOK_EVENTS is the `event` of every webhook of the document, in its order', () => {
    const doc = readDocument();
    const events = Object.entries(doc.webhooks as Json).map(([name, item]) => {
      const schema = deref(doc, item.post?.requestBody?.content?.['application/json']?.schema);
      const e = deref(doc, schema?.properties?.event);
      const value = e && 'const' in e ? e.const : e?.enum?.length === 1 ? e.enum[0] : undefined;
      expect(value, `webhook ${name}: its body's event`).to.be.a('string');
      return value as string;
    });
    expect([...WEBHOOK_EVENTS]).to.deep.equal(events);
  });

  it('the client has a method for every operation of the document (method and path), each with a retry class', () => {
    const doc = readDocument() as { paths: Record<string, Record<string, { operationId: string }>> };
    const documented = Object.entries(doc.paths).flatMap(([p, item]) => Object.keys(item).filter((m) => METHODS.includes(m)).map((m) => `${m.toUpperCase()} ${p}`)).sort();
    const routes = Object.values(ROUTES).map((r) => `${r.method} ${r.path}`).sort();
    expect(routes).to.deep.equal(documented);
    expect(documented.length).to.be.at.least(27);
    for (const [name, r] of Object.entries(ROUTES)) {
      expect(['read', 'idempotent', 'unsafe'], name).to.include(r.retry);
      const op = (OPERATIONS as Record<string, { method: string; path: string; signed: boolean; envelope: boolean }>)[name];
      expect(op, `${name} is an operationId of the document`).to.not.equal(undefined);
      expect({ method: r.method, path: r.path, signed: r.signed, envelope: r.envelope }).to.deep.equal({ method: op!.method, path: op!.path, signed: op!.signed, envelope: op!.envelope });
      if (r.method === 'GET') expect(r.retry, name).to.equal('read');
    }
    // exactly the writes the docs make idempotent by a key are retried
    const idempotent = Object.values(ROUTES).filter((r) => r.retry === 'idempotent').map((r) => r.operation).sort();
    expect(idempotent).to.deep.equal(['batchCreateAddresses', 'batchCreateWithdraw', 'createAddress', 'createChainSubscription', 'createWithdraw']);
    expect(Object.values(ROUTES).filter((r) => r.retry === 'unsafe').map((r) => r.operation).sort()).to.deep.equal(['deleteChainSubscription', 'resendCallback', 'updateChainSubscription']);
  });

  it('ErrorCode holds every code of docs/errors.md with the same name', () => {
    const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'errors.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| (\d{10}) \| ([A-Z0-9_]+) \|/gm)].map((m) => [m[2]!, Number(m[1])] as const);
    expect(rows.length).to.be.greaterThan(40);
    for (const [name, code] of rows) expect((ErrorCode as Record<string, number>)[name], name).to.equal(code);
  });
});
