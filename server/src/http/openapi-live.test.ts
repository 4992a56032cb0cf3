import { expect } from 'chai';
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ErrorCodes } from '@wcs/core';
import { startTestService, testLogger, type TestService, TEST_ACTOR } from '../testing';
import { deref, documentedOperations, documentedResponse, expressRoutes, jsonShape, loadOpenApi, SchemaChecker, type DocumentedOperation, type ExampleObject } from '../testing/openapi';
import type { CreatedApplication } from '../apps/applications';
import { TOKENS } from '../container';
import type { CallbackService } from '../callbacks/callback-service';
import { encodeFeedCursor } from '../callbacks/feed-cursor';
import type { ApiRoute } from './routes';
import { API_PREFIX } from './routes';
import { createHttpApp } from './app';
import { hmacHex, sha256Hex, stringToSign } from '../auth/signature';

/**
 * server/openapi.json against a live service on real Postgres: the routes it mounts, an answer
 * other than 404 for every documented operation, and every request example sent (signed) with
 * its answer checked against the operation's documented response schema.
 */

/** Codes that mean "your request is wrong": an example must never get one of these. */
const INPUT_REFUSALS = new Set<number>([
  ...Object.values(ErrorCodes).filter((e) => e.errorClass === 'REQUEST' || e.errorClass === 'AUTH' || e.errorClass === 'ROUTING').map((e) => e.code),
  ErrorCodes.CHAIN_UNKNOWN.code, ErrorCodes.CHAIN_NOT_ENABLED.code, ErrorCodes.TOKEN_UNKNOWN.code, ErrorCodes.CALLBACK_URL_INVALID.code,
  ErrorCodes.WITHDRAW_ADDRESS_INVALID.code, ErrorCodes.WITHDRAW_MEMO_INVALID.code, ErrorCodes.WITHDRAW_AMOUNT_INVALID.code, ErrorCodes.WITHDRAW_TOKEN_MISMATCH.code,
]);
/** Without an RPC endpoint no hot wallet balance or fee is read: these business answers are the expected ones. */
const NO_NODE = { create: ErrorCodes.WITHDRAW_CHAIN_UNAVAILABLE.code, get: ErrorCodes.WITHDRAW_NOT_FOUND.code };

interface Answer { status: number; headers: Headers; json: { code: number; data: unknown; msg: string } & Record<string, unknown> }

describe('openapi.json against the live service (real Postgres)', function () {
  this.timeout(120_000);
  const doc = loadOpenApi();
  const checker = new SchemaChecker(doc);
  const ops = documentedOperations(doc);
  let svc: TestService;
  let app: CreatedApplication;
  let receiver: http.Server;
  /** Ids this test created, substituted into the examples before sending. */
  const live = { address: '', addressId: 0, callbackTaskId: 0, rechargeId: 0, subscriptionId: 0, spareSubscriptionId: 0, chainEventId: 0, outflowId: 0 };

  async function send(method: string, target: string, opts: { body?: unknown; signed: boolean; as?: CreatedApplication }): Promise<Answer> {
    const signer = opts.as ?? app;
    const body = opts.body === undefined ? '' : JSON.stringify(opts.body);
    const headers: Record<string, string> = body ? { 'Content-Type': 'application/json' } : {};
    if (opts.signed) {
      const ts = String(Date.now());
      const nonce = crypto.randomUUID();
      const p = target.split('?')[0]!;
      Object.assign(headers, { 'X-Api-Key': signer.apiKey, 'X-Timestamp': ts, 'X-Nonce': nonce, 'X-Signature': hmacHex(signer.apiSecret, stringToSign(method, p, ts, nonce, sha256Hex(body))) });
    }
    const res = await fetch(svc.url + target, { method, headers, ...(body ? { body } : {}) });
    return { status: res.status, headers: res.headers, json: (await res.json()) as Answer['json'] };
  }

  const opKey = (o: DocumentedOperation) => o.path.slice(`${API_PREFIX}/wallet/`.length);

  /** Replaces the example's placeholder ids by ones that exist in this database. */
  function substitute(o: DocumentedOperation, name: string, value: unknown): unknown {
    const k = `${opKey(o)} ${name}`;
    if (k === 'callback/attempts callbackTaskId') return live.callbackTaskId;
    if (k === 'recharge/get id') return live.rechargeId;
    if (k === 'recharge/list address') return live.address;
    if (opKey(o) === 'callback/resend' && value && typeof value === 'object') return { ...value, callbackTaskId: live.callbackTaskId };
    if (k === 'chain-event/subscription/get id' || k === 'chain-event/list subscriptionId') return live.subscriptionId;
    if (k === 'chain-event/get id') return live.chainEventId;
    if (k === 'outflow/get id') return live.outflowId;
    if (k === 'events after') return encodeFeedCursor({ applicationId: app.id, txId: 0n, taskId: 0n }); // from this application's first event
    // update works on one subscription, delete on another, whatever order the operations come in
    if (opKey(o) === 'chain-event/subscription/update' && value && typeof value === 'object') return { ...value, id: live.subscriptionId };
    if (opKey(o) === 'chain-event/subscription/delete' && value && typeof value === 'object') return { ...value, id: live.spareSubscriptionId };
    return value;
  }

  /** The requests built from an operation's examples: each parameter example (with the required ones), each request body example. */
  function exampleRequests(o: DocumentedOperation): Array<{ label: string; target: string; body?: unknown }> {
    if (o.op.requestBody) {
      return Object.entries(o.op.requestBody.content['application/json']!.examples ?? {}).map(([name, e]: [string, ExampleObject]) => ({ label: `request ${name}`, target: o.path, body: substitute(o, 'body', e.value) }));
    }
    const params = o.op.parameters ?? [];
    if (params.length === 0) return [{ label: 'no parameters', target: o.path }];
    const required = params.filter((p) => p.required);
    const out = new Map<string, { label: string; target: string }>();
    for (const p of params) {
      const q = new URLSearchParams();
      for (const r of new Set([...required, p])) q.set(r.name, String(substitute(o, r.name, r.example)));
      const target = `${o.path}?${q}`;
      out.set(target, { label: `parameter ${p.name}`, target });
    }
    return [...out.values()];
  }

  /** The answer is a documented response of the operation and satisfies its schema and required headers. */
  function expectDocumented(o: DocumentedOperation, a: Answer, label: string): void {
    const at = `${o.method} ${o.path} (${label}): HTTP ${a.status} ${JSON.stringify(a.json).slice(0, 300)}`;
    const r = documentedResponse(doc, o.op, a.status);
    expect(r, `${at}: status not documented`).not.to.equal(undefined);
    const schema = r!.content?.['application/json']?.schema;
    expect(schema, `${at}: no JSON schema`).not.to.equal(undefined);
    expect(checker.errors(schema, a.json), at).to.deep.equal([]);
    for (const [name, ref] of Object.entries(r!.headers ?? {})) {
      const h = deref(doc, ref) as { required?: boolean; schema?: { type?: string } };
      const value = a.headers.get(name);
      if (h.required) expect(value, `${at}: header ${name}`).to.be.a('string');
      // a header that is sent satisfies its documented schema (Retry-After an integer, RateLimit its pattern)
      if (value !== null && h.schema) expect(checker.errors(h.schema, h.schema.type === 'integer' ? Number(value) : value), `${at}: header ${name}: ${value}`).to.deep.equal([]);
    }
  }

  before(async () => {
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('success'));
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    // subscriptions need a chain this service scans: an RPC endpoint for ETH (nothing listens there; nothing is read from it)
    svc = await startTestService({ env: { WCS_RPC_TEST_ETH: 'http://127.0.0.1:1' } });
    app = await svc.createApp({ chains: ['ETH', 'BTC'] });
    await svc.service.storage.applications.setCallback(TEST_ACTOR, app.id, 'WITHDRAW', `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/wcs/callbacks`);

    // the address of the create example's user, through the API
    const create = ops.find((o) => o.path === `${API_PREFIX}/wallet/address/create`)!;
    const a = await send('POST', create.path, { body: Object.values(create.op.requestBody!.content['application/json']!.examples!)[0]!.value, signed: true });
    expect(a.json.code, JSON.stringify(a.json)).to.equal(0);
    const addr = a.json.data as { id: number; address: string; chainCode: string; externalUserId: string };
    live.address = addr.address;
    live.addressId = addr.id;

    // a callback task delivered once (the test event of `wcs callback test`)
    const task = await svc.service.storage.container.resolve<CallbackService>(TOKENS.CallbackService).sendTest(TEST_ACTOR, app.id, 'WITHDRAW');
    live.callbackTaskId = Number(task.id);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const t = await send('GET', `${API_PREFIX}/wallet/callback/tasks?bizType=WITHDRAW`, { signed: true });
      const found = (t.json.data as { list: Array<{ id: number; status: string }> }).list.find((x) => x.id === live.callbackTaskId);
      if (found?.status === 'SUCCESS') break;
      if (Date.now() > deadline) throw new Error(`callback task ${live.callbackTaskId} not delivered: ${JSON.stringify(found)}`);
      await new Promise((r) => setTimeout(r, 100));
    }

    // a confirmed deposit to that address, as the deposit scanner records one (no chain node here)
    const [rows] = await svc.service.storage.database.sequelize.query(
      `INSERT INTO recharges (application_id, chain_id, chain_token_id, address_id, external_user_id, address, from_address, tx_hash, position, amount,
                              block_height, block_hash, tx_status, confirmations, min_confirmations, confirmed_at)
       SELECT $1, c.id, t.id, $2, $3, $4, '0x742d35Cc6634C0532925a3b844Bc454e4438f44e', '0x' || repeat('ab', 32), -1, 250000000000000000,
              7412345, '0x' || repeat('cd', 32), 'CONFIRMED', c.confirmations, c.confirmations, now()
         FROM chains c JOIN chain_tokens t ON t.chain_id = c.id AND t.contract IS NULL
        WHERE c.code = 'ETH' AND c.environment = 'test'
       RETURNING id`,
      { bind: [app.id, live.addressId, addr.externalUserId, addr.address] },
    );
    live.rechargeId = Number((rows as Array<{ id: string }>)[0]!.id);

    // two subscriptions made from the create example (one to read and update, one to delete), through the API
    const subCreate = ops.find((o) => o.path === `${API_PREFIX}/wallet/chain-event/subscription/create`)!;
    const subBody = Object.values(subCreate.op.requestBody!.content['application/json']!.examples!)[0]!.value as Record<string, unknown>;
    for (const key of ['subscriptionId', 'spareSubscriptionId'] as const) {
      const s = await send('POST', subCreate.path, { body: { ...subBody, appSubscriptionNo: `live-${key}` }, signed: true });
      expect(s.json.code, JSON.stringify(s.json)).to.equal(0);
      live[key] = (s.json.data as { id: number }).id;
    }

    // a confirmed chain event of that subscription and a custody outflow of the deposit address, as the scanner records them,
    // matching every filter example of chain-event/list and outflow/list
    const example = (path: string, name: string) => ops.find((o) => o.path === `${API_PREFIX}/wallet/${path}`)!.op.parameters!.find((p) => p.name === name)!.example;
    const [events] = await svc.service.storage.database.sequelize.query(
      `INSERT INTO chain_events (application_id, subscription_id, chain_id, chain_token_id, direction, monitored_address, from_address, to_address, amount,
                                 tx_hash, position, block_height, block_hash, address_nature, status, min_confirmations, confirmed_at)
       SELECT $1, $2, c.id, t.id, $3, $4, '0x742d35Cc6634C0532925a3b844Bc454e4438f44e', $4, 1250000000, $5, 41, 7412345, '0x' || repeat('cd', 32), 'EOA', $6,
              c.confirmations, now()
         FROM chains c JOIN chain_tokens t ON t.chain_id = c.id AND t.contract IS NULL
        WHERE c.code = $7 AND c.environment = 'test'
       RETURNING id`,
      { bind: [app.id, live.subscriptionId, example('chain-event/list', 'direction'), example('chain-event/list', 'address'), example('chain-event/list', 'txHash'),
        example('chain-event/list', 'status'), example('chain-event/list', 'chainCode')] },
    );
    live.chainEventId = Number((events as Array<{ id: string }>)[0]!.id);
    const [outflows] = await svc.service.storage.database.sequelize.query(
      `INSERT INTO custody_outflows (application_id, chain_id, chain_token_id, address_kind, from_address, external_user_id, to_address, amount, tx_hash, position,
                                     block_height, block_hash)
       SELECT $1, c.id, t.id, $2, $3, $4, '0x742d35Cc6634C0532925a3b844Bc454e4438f44e', 500000000000000000, '0x' || repeat('ef', 32), -1, 7412400, '0x' || repeat('cd', 32)
         FROM chains c JOIN chain_tokens t ON t.chain_id = c.id AND t.contract IS NULL
        WHERE c.code = $5 AND c.environment = 'test'
       RETURNING id`,
      { bind: [app.id, example('outflow/list', 'addressKind'), addr.address, addr.externalUserId, example('outflow/list', 'chainCode')] },
    );
    live.outflowId = Number((outflows as Array<{ id: string }>)[0]!.id);

    // the deposit address's latest reconciliation, as the reconciliation worker records one, matching reconciliation/balances' filter examples
    await svc.service.storage.database.sequelize.query(
      `INSERT INTO reconcile_balances (chain_id, chain_token_id, address, application_id, address_kind, external_user_id, ledger, on_chain, difference, height, block_hash)
       SELECT c.id, t.id, $2, $1, $3, $4, 250000000000000000, 250000000000000000, 0, 7412400, '0x' || repeat('cd', 32)
         FROM chains c JOIN chain_tokens t ON t.chain_id = c.id AND t.contract IS NULL
        WHERE c.code = $5 AND c.environment = 'test'`,
      { bind: [app.id, addr.address, example('reconciliation/balances', 'addressKind'), addr.externalUserId, example('reconciliation/balances', 'chainCode')] },
    );
  });

  after(async () => {
    await svc?.stop();
    await new Promise((r) => receiver?.close(r));
  });

  it('the routes the live service registers (its route arrays, mounted by createHttpApp) are exactly the documented operations', () => {
    const routes = svc.service.storage.container.resolve<ApiRoute[]>(TOKENS.ApiRoutes);
    const httpApp = createHttpApp({ authenticator: svc.service.storage.container.resolve(TOKENS.Authenticator), logger: testLogger(), bodyLimitBytes: 1024, routes, readiness: async () => ({ ready: true, checks: {} }) });
    expect(expressRoutes(httpApp as unknown as { router: { stack: unknown[] } })).to.deep.equal(ops.map((o) => `${o.method} ${o.path}`).sort());
  });

  it('every documented operation answers, never the 404 NOT_FOUND envelope; an undocumented path does', async () => {
    for (const o of ops) {
      const a = await send(o.method, o.path, { signed: o.signed, ...(o.op.requestBody ? { body: {} } : {}) });
      expect(a.status, `${o.method} ${o.path}`).not.to.equal(404);
      expect(a.json.code, `${o.method} ${o.path}`).not.to.equal(ErrorCodes.NOT_FOUND.code);
      expectDocumented(o, a, 'bare request');
    }
    const miss = await send('GET', `${API_PREFIX}/wallet/nothing`, { signed: true });
    expect([miss.status, miss.json.code]).to.deep.equal([404, ErrorCodes.NOT_FOUND.code]);
  });

  it('rate limits as documented: 200 answers carry RateLimit and RateLimit-Policy, an empty bucket answers the documented 429', async () => {
    const chains = ops.find((o) => o.path === `${API_PREFIX}/wallet/support/chains`)!;
    // an application of its own, so the other checks never meet its empty bucket
    const limitedApp = await svc.createApp({ name: 'rate limited', chains: ['ETH'] });
    await svc.service.storage.applications.setRateLimit(TEST_ACTOR, limitedApp.id, { ratePerSecond: 1, burst: 3 });
    const answers: Answer[] = [];
    for (let i = 0; i < 6; i++) answers.push(await send('GET', chains.path, { signed: true, as: limitedApp }));
    const ok = answers.filter((a) => a.status === 200);
    const limited = answers.filter((a) => a.status === 429);
    expect(ok.length + limited.length).to.equal(6);
    expect(limited.length, 'some requests over a bucket of 3').to.be.at.least(2);
    for (const a of ok) {
      expectDocumented(chains, a, 'within the limit');
      expect(a.headers.get('RateLimit-Policy')).to.equal('"api-key";q=3;w=3');
    }
    for (const a of limited) {
      expectDocumented(chains, a, 'over the limit');
      expect(a.json.code).to.equal(ErrorCodes.RATE_LIMITED.code);
      expect(a.headers.get('RateLimit')).to.match(/^"api-key";r=0;t=[1-3]$/);
    }
  });

  it('GET /openapi.json serves exactly this document', async () => {
    const a = await send('GET', '/openapi.json', { signed: false });
    expect(a.json).to.deep.equal(doc);
  });

  it('every request example is accepted, and every answer is a documented response of its operation', async () => {
    const seen: string[] = [];
    for (const o of ops) {
      for (const req of exampleRequests(o)) {
        const a = await send(o.method, req.target, { signed: o.signed, ...(req.body !== undefined ? { body: req.body } : {}) });
        const at = `${o.method} ${req.target} (${req.label}): HTTP ${a.status} ${JSON.stringify(a.json).slice(0, 400)}`;
        expect(INPUT_REFUSALS.has(a.json.code), `${at}: refused as invalid input`).to.equal(false);
        expectDocumented(o, a, req.label);
        expect(a.status, at).to.equal(200);
        const key = opKey(o);
        if (key === 'withdraw/create') {
          expect(a.json.code, at).to.be.oneOf([0, NO_NODE.create]);
        } else if (key === 'withdraw/batch-create') {
          expect(a.json.code, at).to.equal(0);
          for (const item of (a.json.data as { items: Array<{ errorCode: number | null }> }).items) expect(item.errorCode, at).to.be.oneOf([null, NO_NODE.create]);
        } else if (key === 'withdraw/get') {
          expect(a.json.code, at).to.be.oneOf([0, NO_NODE.get]);
        } else if (o.path !== '/openapi.json') { // the one answer that is not an envelope (checked above against its schema)
          expect(a.json.code, at).to.equal(0);
          // a full success has the shape of the operation's 200 example
          const examples = Object.values(documentedResponse(doc, o.op, 200)!.content!['application/json']!.examples ?? {});
          const success = examples.map((e) => e.value as { code?: number }).filter((v) => v.code === 0);
          expect(success.length, `${at}: no success example`).to.be.greaterThan(0);
          expect(jsonShape(a.json), `${at}: shape of the 200 example`).to.equal(jsonShape(success[0]));
        }
        seen.push(`${o.method} ${o.path}`);
      }
    }
    expect([...new Set(seen)].sort()).to.deep.equal(ops.map((o) => `${o.method} ${o.path}`).sort());
  });
});
