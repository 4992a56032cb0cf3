import { expect } from 'chai';
import { ErrorCodes } from '@wcs/core';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { supportRoutes } from './support-routes';
import { API_PREFIX } from './routes';
import { addressRoutes } from './address-routes';
import type { AddressService } from '../addresses/address-service';
import { chainJson } from './support-routes';
import type { Catalogue } from '../catalogue/catalogue';
import { resolveCatalogue } from '../catalogue/catalogue';
import { callbackRoutes } from './callback-routes';
import { rechargeRoutes } from './recharge-routes';
import { withdrawRoutes } from './withdraw-routes';
import type { WithdrawService } from '../withdrawals/withdraw-service';
import type { RechargeService } from '../deposits/recharge-service';
import type { CallbackService } from '../callbacks/callback-service';
import { chainEventRoutes } from './chain-event-routes';
import type { SubscriptionService } from '../chain-events/subscription-service';
import type { ChainEventService } from '../chain-events/event-service';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createHttpApp } from './app';
import type { Authenticator } from '../auth/authenticate';
import { testLogger } from '../testing';
import { deref, documentedOperations, documentExamples, expressRoutes, SchemaChecker, type OpenApiDocument, type ResponseObject } from '../testing/openapi';

describe('docs/openapi.json matches the server', () => {
  const doc = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../openapi.json'), 'utf8'));

  it('is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator, the official 3.1 schema)', async () => {
    expect(doc.openapi).to.match(/^3\.1\.\d+$/);
    const validator = new Validator();
    const res = await validator.validate(doc);
    expect(res.errors ?? [], JSON.stringify(res.errors, null, 1)).to.deep.equal([]);
    expect(res.valid).to.equal(true);
    expect(validator.version).to.equal('3.1');
  });

  it('the validator refuses a broken copy (the check can fail)', async () => {
    const broken = JSON.parse(JSON.stringify(doc));
    delete broken.paths['/healthz'].get.responses['200'].description;
    expect((await new Validator().validate(broken)).valid).to.equal(false);
  });

  it('documents exactly the routes the server mounts (route arrays and the express stack), both directions', () => {
    const routes = [...supportRoutes({} as Catalogue, () => 'NO_RPC'), ...addressRoutes({} as AddressService), ...callbackRoutes({} as CallbackService), ...rechargeRoutes({} as RechargeService), ...withdrawRoutes({} as WithdrawService),
      ...chainEventRoutes({} as SubscriptionService, {} as ChainEventService)];
    const app = createHttpApp({ authenticator: {} as Authenticator, logger: testLogger(), bodyLimitBytes: 1024, routes, readiness: async () => ({ ready: true, checks: {} }) });
    const mounted = expressRoutes(app as unknown as { router: { stack: unknown[] } });
    const documented = documentedOperations(doc as OpenApiDocument).map((o) => `${o.method} ${o.path}`).sort();
    expect(documented).to.deep.equal(mounted);
    // the signed ones are exactly the route arrays, under the API prefix
    expect(documentedOperations(doc as OpenApiDocument).filter((o) => o.signed).map((o) => `${o.method} ${o.path}`).sort())
      .to.deep.equal(routes.map((r) => `${r.method} ${API_PREFIX}${r.path}`).sort());
    for (const p of ['/healthz', '/readyz', '/openapi.json']) expect(doc.paths[p].get.security, p).to.deep.equal([]);
  });

  it('the Chain schema lists exactly the fields the server returns', () => {
    const chain = resolveCatalogue({}).chains[0]!;
    const fields = Object.keys(chainJson({ ...chain, tokens: [] }, 'NO_RPC')).sort();
    expect(Object.keys(doc.components.schemas.Chain.properties).sort()).to.deep.equal(fields);
    expect([...doc.components.schemas.Chain.required].sort()).to.deep.equal(fields);
  });

  it('operations that need a key document 503 KEYSTORE_UNAVAILABLE with the catalogue\'s code and message; /readyz its keystore check', () => {
    const schema = doc.components.responses.KeyStoreUnavailable.content['application/json'].schema;
    expect(schema.allOf[0]).to.deep.equal({ $ref: '#/components/schemas/ErrorEnvelope' });
    expect(schema.allOf[1].properties).to.deep.equal({
      code: { const: ErrorCodes.KEYSTORE_UNAVAILABLE.code },
      msg: { const: ErrorCodes.KEYSTORE_UNAVAILABLE.message },
    });
    expect(ErrorCodes.KEYSTORE_UNAVAILABLE.httpStatus).to.equal(503);
    for (const p of ['/wallet/address/create', '/wallet/address/batch-create']) {
      expect(doc.paths[API_PREFIX + p].post.responses['503'], p).to.deep.equal({ $ref: '#/components/responses/KeyStoreUnavailable' });
    }
    expect(doc.components.schemas.ReadyChecks.properties.keystore.description).to.match(/unavailable: <reason>/);
  });

  it('the callback task and attempt schemas list exactly the fields of the spec, all required', () => {
    const task = ['id', 'bizType', 'bizId', 'url', 'status', 'retryTimes', 'maxRetryTimes', 'nextRetryTime', 'lastResponseSummary', 'lastError', 'createTime', 'updateTime'];
    const attempt = ['id', 'callbackTaskId', 'attemptNo', 'requestHeadersSummary', 'requestBodySummary', 'requestBodyLength', 'requestBodySha256', 'responseStatus',
      'responseContentType', 'responseBodySummary', 'responseBodyLength', 'responseBodySha256', 'accepted', 'latencyMs', 'errorReason', 'nextRetryTime', 'createTime'];
    for (const [name, fields] of [['CallbackTask', task], ['CallbackAttempt', attempt]] as const) {
      expect(Object.keys(doc.components.schemas[name].properties).sort(), name).to.deep.equal([...fields].sort());
      expect([...doc.components.schemas[name].required].sort(), name).to.deep.equal([...fields].sort());
    }
  });
});

describe('openapi.json: schemas, examples and rate-limit responses', () => {
  const doc = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../openapi.json'), 'utf8')) as OpenApiDocument;
  const checker = new SchemaChecker(doc);
  const ops = documentedOperations(doc);

  it('every schema compiles as JSON Schema 2020-12 (ajv strict: unknown keywords, formats and references fail)', () => {
    for (const [name, s] of Object.entries(doc.components.schemas)) expect(() => checker.compile(s), name).not.to.throw();
    for (const e of documentExamples(doc)) expect(() => checker.compile(e.schema), e.where).not.to.throw();
    expect(() => checker.compile({ type: 'integr' })).to.throw(); // strict indeed
    expect(() => checker.compile({ $ref: '#/components/schemas/Nope' })).to.throw();
  });

  it('every example (parameters, request bodies, responses, headers) validates against its schema', () => {
    const examples = documentExamples(doc);
    const failures = examples.flatMap((e) => checker.errors(e.schema, e.value).map((m) => `${e.where}: ${m}`));
    expect(failures).to.deep.equal([]);
    // and a wrong value is refused (the check can fail)
    const created = examples.find((e) => e.kind === 'response' && e.path === '/api/v1/wallet/address/create' && e.status === '200' && e.name === 'created')!;
    expect(checker.errors(created.schema, { ...(created.value as object), data: { id: '1' } })).not.to.deep.equal([]);
  });

  it('every operation has a 200 response example, every request body an example, every parameter an example', () => {
    const examples = documentExamples(doc);
    for (const { method, path: p, op } of ops) {
      const at = `${method} ${p}`;
      expect(examples.some((e) => e.method === method && e.path === p && e.kind === 'response' && e.status === '200'), `${at} 200 example`).to.equal(true);
      if (op.requestBody) expect(examples.some((e) => e.method === method && e.path === p && e.kind === 'request'), `${at} request example`).to.equal(true);
      for (const prm of op.parameters ?? []) expect(prm.example, `${at} ${prm.name}`).not.to.equal(undefined);
    }
  });

  it('money in examples is decimal strings, never JSON numbers', () => {
    const numbersAt: string[] = [];
    const walk = (x: unknown, where: string): void => {
      if (Array.isArray(x)) x.forEach((v, i) => walk(v, `${where}[${i}]`));
      else if (x && typeof x === 'object') for (const [k, v] of Object.entries(x)) {
        if (['amount', 'fee'].includes(k) && typeof v !== 'string') numbersAt.push(`${where}.${k}`);
        walk(v, `${where}.${k}`);
      }
    };
    for (const e of documentExamples(doc)) walk(e.value, e.where);
    expect(numbersAt).to.deep.equal([]);
    expect(doc.components.schemas.WithdrawItem!.properties).to.have.nested.property('amount.type', 'string');
  });

  it('RateLimited is HTTP 429 with the catalogue codes and messages, Retry-After, RateLimit and RateLimit-Policy', () => {
    expect(ErrorCodes.RATE_LIMITED.httpStatus).to.equal(429);
    expect(ErrorCodes.AUTH_RATE_LIMITED.httpStatus).to.equal(429);
    const r = doc.components.responses.RateLimited!;
    expect(Object.keys(r.headers!).sort()).to.deep.equal(['RateLimit', 'RateLimit-Policy', 'Retry-After', 'X-Request-Id']);
    expect(deref(doc, r.headers!['Retry-After']!).schema).to.deep.include({ type: 'integer' });
    const schema = r.content!['application/json']!.schema!;
    for (const e of [ErrorCodes.RATE_LIMITED, ErrorCodes.AUTH_RATE_LIMITED]) {
      expect(checker.errors(schema, { code: e.code, data: null, msg: e.message }), e.name).to.deep.equal([]);
    }
    expect(checker.errors(schema, { code: ErrorCodes.RATE_LIMITED.code, data: null, msg: 'other' })).not.to.deep.equal([]);
    expect(checker.errors(schema, { code: ErrorCodes.INVALID_PARAMETER.code, data: null, msg: ErrorCodes.INVALID_PARAMETER.message })).not.to.deep.equal([]);
    expect(deref(doc, r.headers!.RateLimit!).example).to.match(/^"api-key";r=\d+;t=\d+$/);
    expect(deref(doc, r.headers!['RateLimit-Policy']!).example).to.match(/^"api-key";q=\d+;w=\d+$/);
  });

  it('every signed operation answers 429 RateLimited and sends RateLimit and RateLimit-Policy with its 200; unauthenticated ones do not', () => {
    for (const { method, path: p, op, signed } of ops) {
      const at = `${method} ${p}`;
      const ok = deref<ResponseObject>(doc, op.responses['200']!);
      if (signed) {
        expect(op.responses['429'], at).to.deep.equal({ $ref: '#/components/responses/RateLimited' });
        expect(ok.headers, at).to.deep.include({ RateLimit: { $ref: '#/components/headers/RateLimit' }, 'RateLimit-Policy': { $ref: '#/components/headers/RateLimitPolicy' } });
      } else {
        expect(op.responses['429'], at).to.equal(undefined);
        expect(Object.keys(ok.headers ?? {}), at).to.deep.equal(['X-Request-Id']);
      }
    }
  });
});
