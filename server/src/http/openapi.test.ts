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
import { chainEventRoutes } from './chain-event-routes';
import { reconciliationRoutes } from './reconciliation-routes';
import { totalsView } from '../reconciliation/totals';
import type { SubscriptionService } from '../chain-events/subscription-service';
import type { ChainEventService } from '../chain-events/event-service';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createHttpApp } from './app';
import type { Authenticator } from '../auth/authenticate';
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Sequelize } from 'sequelize';
import { testLogger, TEST_ACTOR } from '../testing';
import { deref, documentedOperations, documentExamples, expressRoutes, SchemaChecker, type JsonObject, type OpenApiDocument, type Operation, type Parameter, type Ref, type ResponseObject } from '../testing/openapi';
import { rechargeCreditedEvent, rechargeEvent, TX_STATUSES, type RechargeRow } from '../deposits/recharges';
import { withdrawEvent, type OrderRow } from '../withdrawals/withdraw-events';
import { collectEvent, collectRecord, type ItemRow } from '../collection/collect-events';
import { chainEventPayload, outflowPayload } from '../chain-events/events';
import { delegationPayload } from '../collection/delegated';
import { CallbackService } from '../callbacks/callback-service';
import { EventFeed } from '../callbacks/event-feed';
import { deliver, judgeAck, signCallback } from '../callbacks/delivery';
import { BIZ_TYPES, type BizType } from '../apps/applications';

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
    const routes = [...supportRoutes({} as Catalogue, () => 'NO_RPC'), ...addressRoutes({} as AddressService), ...callbackRoutes({} as CallbackService, {} as EventFeed), ...rechargeRoutes({} as RechargeService), ...withdrawRoutes({} as WithdrawService),
      ...chainEventRoutes({} as SubscriptionService, {} as ChainEventService), ...reconciliationRoutes({} as Sequelize)];
    const app = createHttpApp({ authenticator: {} as Authenticator, logger: testLogger(), bodyLimitBytes: 1024, routes, readiness: async () => ({ ready: true, checks: {} }) });
    const mounted = expressRoutes(app as unknown as { router: { stack: unknown[] } });
    const documented = documentedOperations(doc as OpenApiDocument).map((o) => `${o.method} ${o.path}`).sort();
    expect(documented).to.deep.equal(mounted);
    // the signed ones are exactly the route arrays, under the API prefix
    expect(documentedOperations(doc as OpenApiDocument).filter((o) => o.signed).map((o) => `${o.method} ${o.path}`).sort())
      .to.deep.equal(routes.map((r) => `${r.method} ${API_PREFIX}${r.path}`).sort());
    for (const p of ['/healthz', '/readyz', '/openapi.json']) expect(doc.paths[p].get.security, p).to.deep.equal([]);
  });

  it('the ReconciliationBalance schema lists exactly the fields reconciliation/balances returns', () => {
    const view = totalsView({
      applicationId: 1, chainId: 102, chainCode: 'ETH', chainTokenId: 10202, symbol: 'USDC', contract: null, decimals: 6, addresses: 2, ledger: 5n, onChain: 3n,
      difference: -2n, explained: -2n, unexplained: 0n, minHeight: 10n, maxHeight: 12n, blockHash: null, oldestReconciledAt: new Date(0), latestReconciledAt: new Date(0),
      openDiscrepancies: 0,
    });
    const schema = doc.components.schemas.ReconciliationBalance;
    expect(Object.keys(schema.properties).sort()).to.deep.equal(Object.keys(view).sort());
    expect([...schema.required].sort()).to.deep.equal(Object.keys(view).sort());
    expect(view.difference).to.equal('-0.000002');
    expect(view.contractAddress).to.equal('');
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

describe('openapi.json webhooks: the callbacks the service sends, built by its own code', () => {
  const doc = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../openapi.json'), 'utf8')) as OpenApiDocument & { webhooks: Record<string, Record<string, Operation>> };
  const checker = new SchemaChecker(doc);
  const EVENTS = ['recharge', 'recharge_credited', 'withdraw', 'collect', 'chain_event', 'transfer', 'delegation', 'test'];
  const SCHEMA_OF: Record<string, string> = {
    recharge: 'RechargeEvent', recharge_credited: 'RechargeCreditedEvent', withdraw: 'WithdrawEvent', collect: 'CollectEvent',
    chain_event: 'ChainEventEvent', transfer: 'TransferEvent', delegation: 'DelegationEvent', test: 'TestEvent',
  };
  const HEADERS = ['X-Api-Key', 'X-Timestamp', 'X-Nonce', 'X-Signature', 'User-Agent'];
  const bodySchema = (event: string): JsonObject => doc.webhooks[event]!.post!.requestBody!.content['application/json']!.schema!;
  const headerParams = (event: string): Parameter[] => (doc.webhooks[event]!.post!.parameters ?? []).map((p) => deref<Parameter>(doc, p as Parameter | Ref));

  /** The payload valid against its webhook's schema, with exactly the schema's properties, all required. */
  function expectDocumented(event: string, payload: Record<string, unknown>, label: string): void {
    const schema = deref<JsonObject>(doc, bodySchema(event) as unknown as Ref);
    expect(checker.errors(bodySchema(event), payload), `${label}: ${JSON.stringify(payload)}`).to.deep.equal([]);
    expect(Object.keys(schema.properties as JsonObject).sort(), label).to.deep.equal(Object.keys(payload).sort());
    expect([...(schema.required as string[])].sort(), label).to.deep.equal(Object.keys(payload).sort());
    expect(schema.additionalProperties, label).to.equal(false);
  }

  const usdc = { decimals: 6, contract: '0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238' };
  const rechargeRow = (over: Partial<RechargeRow> = {}): RechargeRow => ({
    id: '41', application_id: 3, chain_id: 102, chain_token_id: 10200, address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94',
    tx_hash: '0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060', amount: '250000000000000000', block_height: '7412345',
    block_hash: '0x8e38b4dbf6b11fcc3b9dee84fb7986e29ca0a02cecd8977c161ff7333329681e', orphaned_at_height: null, tx_status: 'PENDING',
    confirmations: 1, min_confirmations: 3, settlement_mode: 'ON_CONFIRM', decimals: 18, recharge_credited: true, external_user_id: 'user-42', memo: null, ...over,
  });
  const orderRow = (over: Partial<OrderRow> = {}): OrderRow => ({
    id: '17', application_id: 3, app_order_no: 'order-1001', chain_id: 102, chain_token_id: 10202, hot_wallet_id: 1,
    from_address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', to_address: '0x742d35Cc6634C0532925a3b844Bc454e4438f44e', memo: null,
    amount: '1500000', status: 'PROCESSING', callback_url: null, tx_hash: null, sequence: null, decimals: usdc.decimals, contract: usdc.contract, ...over,
  });
  const itemRow = (over: Partial<ItemRow> = {}): ItemRow => ({
    id: '5', request_id: '2', application_id: 3, chain_id: 102, chain_token_id: 10202, stage: 'HOT_GATHER', from_address_id: 9,
    from_address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', to_address: '0x742d35Cc6634C0532925a3b844Bc454e4438f44e', amount: '1250000000',
    status: 'SUCCESS', waiting_reason: null, failure_code: null, failure_message: null, retry_times: 0,
    tx_hash: '0x7a9c1e3b5d7f9a2c4e6b8d0f2a4c6e8b0d2f4a6c8e0b2d4f6a8c0e2b4d6f8a0c', gas_fee: '52341000000000', decimals: usdc.decimals, symbol: 'USDC',
    native_symbol: 'ETH', native_decimals: 18, created_at: new Date(Date.UTC(2025, 0, 15, 9, 0, 0)), finished_at: new Date(Date.UTC(2025, 0, 15, 9, 2, 41, 512)),
    related: ['7', '9'],
    funding: { id: '11', status: 'SUCCESS', tx_hash: '0x2c4e6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a4c6e8b0d2f4a6c8e0b2d4f', from_address: '0x28C6c06298d514Db089934071355E5743bf21d60',
      to_address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', amount: '60000000000000', fail_reason: null },
    ...over,
  });
  const chainEventRow = (over: Partial<Parameters<typeof chainEventPayload>[0]> = {}): Parameters<typeof chainEventPayload>[0] => ({
    id: '7', application_id: 3, subscription_id: '1', chain_id: 102, chain_token_id: 10202, contract: usdc.contract, decimals: usdc.decimals, direction: 'IN',
    from_address: '0x28C6c06298d514Db089934071355E5743bf21d60', to_address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', amount: '1250000000',
    tx_hash: '0x3b1f8e2a9c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7', block_height: '7412345', address_nature: 'EOA', sub_status: 'ACTIVE', ...over,
  });
  const outflowRow = (over: Partial<Parameters<typeof outflowPayload>[0]> = {}): Parameters<typeof outflowPayload>[0] => ({
    id: '3', application_id: 3, chain_id: 102, chain_token_id: 10202, address_kind: 'DEPOSIT', from_address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94',
    external_user_id: 'user-42', to_address: '0x28C6c06298d514Db089934071355E5743bf21d60', amount: '500000000',
    tx_hash: '0x9f4e2d1c0b1a29384756a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0', position: 12, block_height: '7412400', ...over,
  });

  /**
   * The test event as CallbackService.sendTest queues it (its payload is built inline there, not by
   * an exported function): sendTest run against a stand-in database that keeps the body it is given.
   */
  async function sentTestEvent(bizType: BizType): Promise<Record<string, unknown>> {
    const bodies: Array<Record<string, unknown>> = [];
    // the outbox runs its statement as a named one on the transaction's connection
    const connection = {
      query: async (q: { text: string; values: unknown[] }) => ({ rows: await sequelize.query(q.text, { bind: q.values }) }),
    };
    const sequelize = {
      transaction: async (fn: (t: unknown) => Promise<unknown>) => fn({ connection }),
      query: async (sql: string, opts?: { bind?: unknown[] }) => {
        if (/FROM applications/.test(sql)) return [{ id: 1 }];
        if (/INSERT INTO callback_tasks/.test(sql)) {
          for (const b of opts?.bind ?? []) {
            if (!Array.isArray(b)) continue;
            for (const s of b) {
              try {
                const v = JSON.parse(String(s)) as unknown;
                if (v && typeof v === 'object' && 'event' in v) bodies.push(v as Record<string, unknown>);
              } catch { /* not the body */ }
            }
          }
          return [{ id: '1', url: '', status: 'FAILED' }];
        }
        return [];
      },
    };
    await new CallbackService(sequelize as unknown as Sequelize).sendTest(TEST_ACTOR, 1, bizType);
    expect(bodies).to.have.length(1);
    return bodies[0]!;
  }

  it('webhooks lists exactly the seven events the service sends, each a POST of its own schema, signed headers, ACK and no-ACK responses', () => {
    expect(Object.keys(doc.webhooks).sort()).to.deep.equal([...EVENTS].sort());
    for (const event of EVENTS) {
      const item = doc.webhooks[event]!;
      expect(Object.keys(item), event).to.deep.equal(['post']);
      const op = item.post!;
      expect(op.requestBody?.required, event).to.equal(true);
      expect(Object.keys(op.requestBody!.content), event).to.deep.equal(['application/json']);
      expect(bodySchema(event), event).to.deep.equal({ $ref: `#/components/schemas/${SCHEMA_OF[event]}` });
      const schema = doc.components.schemas[SCHEMA_OF[event]!]!;
      expect((schema.properties as Record<string, JsonObject>).event, event).to.deep.include({ const: event });
      expect(op.responses, event).to.deep.equal({ 200: { $ref: '#/components/responses/CallbackAck' }, default: { $ref: '#/components/responses/CallbackNotAcknowledged' } });
      const params = headerParams(event);
      expect(params.map((p) => p.name), event).to.deep.equal(HEADERS);
      for (const p of params) expect([p.in, p.required], `${event} ${p.name}`).to.deep.equal(['header', true]);
    }
    const operationIds = EVENTS.map((e) => doc.webhooks[e]!.post!.operationId);
    const pathIds = documentedOperations(doc).map((o) => o.op.operationId);
    expect(new Set([...operationIds, ...pathIds]).size).to.equal(operationIds.length + pathIds.length);
  });

  it('recharge: rechargeEvent in every state (SETTLED -1/-1, FAILED off chain blockHeight 0) matches RechargeEvent', () => {
    for (const status of TX_STATUSES) expectDocumented('recharge', rechargeEvent(rechargeRow({ tx_status: status, confirmations: 3 }), status), status);
    expectDocumented('recharge', rechargeEvent(rechargeRow({ block_height: null, block_hash: null, orphaned_at_height: '7412346', confirmations: 0 }), 'FAILED'), 'FAILED off chain');
    expectDocumented('recharge', rechargeEvent(rechargeRow({ chain_id: 201, chain_token_id: 20101, amount: '1', decimals: 6 }), 'PENDING'), 'smallest unit');
    // the check can fail: a wrong value, a missing or an extra field, SETTLED without -1
    const ok = rechargeEvent(rechargeRow(), 'CONFIRMED');
    const schema = bodySchema('recharge');
    expect(checker.errors(schema, { ...ok, amount: 0.25 })).not.to.deep.equal([]);
    expect(checker.errors(schema, { ...ok, amount: '0.250' })).not.to.deep.equal([]);
    expect(checker.errors(schema, { ...ok, event: 'recharge_credited' })).not.to.deep.equal([]);
    expect(checker.errors(schema, { ...ok, txStatus: 'SETTLED' })).not.to.deep.equal([]);
    expect(checker.errors(schema, { ...ok, chainCode: 'ETH' })).not.to.deep.equal([]);
    const { txHash: _dropped, ...missing } = ok;
    expect(checker.errors(schema, missing)).not.to.deep.equal([]);
  });

  it('recharge_credited: rechargeCreditedEvent (with and without a memo) matches RechargeCreditedEvent', () => {
    expectDocumented('recharge_credited', rechargeCreditedEvent(rechargeRow({ tx_status: 'SETTLED' })), 'HD chain');
    expectDocumented('recharge_credited', rechargeCreditedEvent(rechargeRow({ chain_id: 501, chain_token_id: 50100, address: 'rPEPPER7kfTD9w2To4CQk6UCfuHM9c6GDY', memo: '1001', decimals: 6 })), 'memo chain');
    const ok = rechargeCreditedEvent(rechargeRow());
    expect(checker.errors(bodySchema('recharge_credited'), { ...ok, externalUserId: null })).not.to.deep.equal([]);
    expect(checker.errors(bodySchema('recharge_credited'), rechargeEvent(rechargeRow(), 'SETTLED'))).not.to.deep.equal([]);
  });

  it('withdraw: withdrawEvent in every state sent (txHash "" before signing) matches WithdrawEvent', () => {
    const hash = '0x1f3b5d7f9a2c4e6a8b0d2f4a6c8e0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e';
    expectDocumented('withdraw', withdrawEvent(orderRow(), 'FAILED', null), 'refused before signing');
    for (const status of ['BROADCASTED', 'CONFIRMING', 'SUCCESS', 'FAILED'] as const) expectDocumented('withdraw', withdrawEvent(orderRow({ tx_hash: hash, status }), status, hash), status);
    // PROCESSING is never sent (payout-owner drops READY and SIGNED, intake sends FAILED only)
    // @ts-expect-error PROCESSING is not a status of the event's type either
    expect(checker.errors(bodySchema('withdraw'), withdrawEvent(orderRow(), 'PROCESSING', null))).not.to.deep.equal([]);
  });

  it('collect: collectEvent at SUCCESS and FAILED (with and without gas funding) matches CollectEvent', () => {
    expectDocumented('collect', collectEvent(itemRow()), 'SUCCESS after a top-up');
    expectDocumented('collect', collectEvent(itemRow({ stage: 'COLD_TRANSFER', from_address_id: 0, funding: null, related: [] })), 'SUCCESS cold transfer');
    expectDocumented('collect', collectEvent(itemRow({ status: 'FAILED', tx_hash: null, gas_fee: null, failure_code: 'GAS_TOPUP_FAILED', failure_message: 'the gas top-up failed: reverted',
      funding: { id: '11', status: 'FAILED', tx_hash: null, from_address: '0x28C6c06298d514Db089934071355E5743bf21d60', to_address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', amount: '60000000000000', fail_reason: 'reverted' } })), 'FAILED top-up');
    // only the terminal states are sent
    expect(checker.errors(bodySchema('collect'), collectRecord(itemRow({ status: 'SWEEPING', finished_at: null })))).not.to.deep.equal([]);
    expect(() => collectEvent(itemRow({ status: 'SWEEPING', finished_at: null }))).to.throw(/a collect event is sent only when an item ends/);
    expect(checker.errors(bodySchema('collect'), { ...collectEvent(itemRow()), failureReasonCode: 'SWEEP_FAILED' })).not.to.deep.equal([]);
  });

  it('chain_event: chainEventPayload (IN and OUT, token and native coin, BTC sender unknown) matches ChainEventEvent', () => {
    expectDocumented('chain_event', chainEventPayload(chainEventRow()), 'IN token');
    expectDocumented('chain_event', chainEventPayload(chainEventRow({ direction: 'OUT', contract: null, decimals: 18, amount: '10000000000000000', address_nature: 'CONTRACT' })), 'OUT native');
    expectDocumented('chain_event', chainEventPayload(chainEventRow({ chain_id: 301, chain_token_id: 30100, contract: null, decimals: 8, from_address: '', to_address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', amount: '150000' })), 'BTC IN');
    expect(checker.errors(bodySchema('chain_event'), { ...chainEventPayload(chainEventRow()), directionMatched: 'BOTH' })).not.to.deep.equal([]);
  });

  it('delegation: delegationPayload (DELEGATED with its delegate, CONTRACT without) matches DelegationEvent', () => {
    const d = { id: '7', applicationId: 1, chainId: 102, address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', externalUserId: 'user-42', found: 'DELEGATED' as const, delegate: '0x63c0c19a282a1B52b07dD5a65b58948A07DAE32B', at: new Date(Date.UTC(2026, 10, 29, 12, 30, 5)) };
    expectDocumented('delegation', delegationPayload(d), 'DELEGATED');
    expectDocumented('delegation', delegationPayload({ ...d, found: 'CONTRACT', delegate: null, externalUserId: null }), 'CONTRACT');
    expect(delegationPayload(d).detectedTime).to.equal('2026-11-29T12:30:05');
  });

  it('transfer: outflowPayload (DEPOSIT with its user, HOT and FEE without) matches TransferEvent', () => {
    expectDocumented('transfer', outflowPayload(outflowRow(), usdc.contract, usdc.decimals), 'DEPOSIT token');
    expectDocumented('transfer', outflowPayload(outflowRow({ address_kind: 'HOT', external_user_id: null }), null, 18), 'HOT native');
    expectDocumented('transfer', outflowPayload(outflowRow({ address_kind: 'FEE', external_user_id: null }), null, 18), 'FEE native');
    expect(checker.errors(bodySchema('transfer'), outflowPayload(outflowRow({ address_kind: 'HOT' }), null, 18))).not.to.deep.equal([]);
    // @ts-expect-error COLD is not an address kind of the event's type either
    expect(checker.errors(bodySchema('transfer'), outflowPayload(outflowRow({ address_kind: 'COLD', external_user_id: null }), null, 18))).not.to.deep.equal([]);
  });

  it('test: the body CallbackService.sendTest queues, for every bizType, matches TestEvent', async () => {
    for (const bizType of BIZ_TYPES) expectDocumented('test', await sentTestEvent(bizType), bizType);
    expect(checker.errors(bodySchema('test'), { ...(await sentTestEvent('RECHARGE')), bizType: 'OTHER' })).not.to.deep.equal([]);
  });

  it('every webhook example validates against its schema and has exactly its fields', () => {
    for (const event of EVENTS) {
      const examples = Object.entries(doc.webhooks[event]!.post!.requestBody!.content['application/json']!.examples ?? {});
      expect(examples.length, event).to.be.greaterThan(0);
      for (const [name, e] of examples) expectDocumented(event, e.value as Record<string, unknown>, `${event} example ${name}`);
    }
  });

  it('the documented headers are those deliver() sends: a real signed attempt, checked against each header schema and the signature', async () => {
    let seen: { headers: http.IncomingHttpHeaders; url: string; body: Buffer } | undefined;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen = { headers: req.headers, url: req.url ?? '', body: Buffer.concat(chunks) };
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"code":0}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const secret = crypto.randomBytes(32);
      const body = Buffer.from(JSON.stringify(rechargeEvent(rechargeRow(), 'PENDING')));
      const r = await deliver({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/wcs?tenant=1`, apiKey: `pk_live_${crypto.randomBytes(16).toString('hex')}`,
        secret, body, timeoutMs: 5000, maxResponseBytes: 65536, guardTargets: false });
      expect(r.accepted).to.equal(true);
      expect(seen!.body.equals(body)).to.equal(true);
      for (const p of headerParams('recharge')) {
        const value = seen!.headers[p.name.toLowerCase()];
        expect(value, p.name).to.be.a('string');
        expect(checker.errors(p.schema, value), p.name).to.deep.equal([]);
        expect(checker.errors(p.schema, p.example), `${p.name} example`).to.deep.equal([]);
      }
      const h = (n: string) => String(seen!.headers[n.toLowerCase()]);
      expect(h('X-Signature')).to.equal(signCallback(secret, '/hooks/wcs', h('X-Timestamp'), h('X-Nonce'), body));
      // the header schemas can refuse
      const byName = Object.fromEntries(headerParams('recharge').map((p) => [p.name, p.schema]));
      expect(checker.errors(byName['X-Nonce'], 'not-hex-not-32')).not.to.deep.equal([]);
      expect(checker.errors(byName['X-Timestamp'], '1736929800')).not.to.deep.equal([]);
      expect(checker.errors(byName['X-Signature'], h('X-Signature').toUpperCase())).not.to.deep.equal([]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('the ACK response agrees with the dispatcher (judgeAck): its examples are ACKs, non-ACK bodies fail the schema and the dispatcher alike', () => {
    const ack = doc.components.responses.CallbackAck!;
    expect(ack.content).to.have.all.keys('application/json', 'text/plain');
    let n = 0;
    for (const [type, m] of Object.entries(ack.content!)) {
      for (const [name, e] of Object.entries(m.examples ?? {})) {
        const bytes = Buffer.from(type === 'text/plain' ? String(e.value) : JSON.stringify(e.value));
        expect(judgeAck(200, bytes), `${type} ${name}`).to.equal(null);
        expect(checker.errors(m.schema, e.value), `${type} ${name}`).to.deep.equal([]);
        n++;
      }
    }
    expect(n).to.be.greaterThan(3);
    for (const text of [' success ', 'Success', 'OK\n', '"ok"', '" Success "']) {
      expect(judgeAck(200, Buffer.from(text)), text).to.equal(null);
      expect(checker.errors(ack.content!['text/plain']!.schema, text), text).to.deep.equal([]);
    }
    for (const [text, value] of [['not ok', 'not ok'], ['{"code":1,"msg":"ok"}', { code: 1, msg: 'ok' }], ['{"msg":"success"}', { msg: 'success' }], ['okay', 'okay'], ['<html>ok</html>', '<html>ok</html>']] as const) {
      expect(judgeAck(200, Buffer.from(text)), text).not.to.equal(null);
      expect(checker.errors(ack.content!['application/json']!.schema, value), text).not.to.deep.equal([]);
    }
    expect(judgeAck(201, Buffer.from('{"code":0}'))).not.to.equal(null);
  });
});
