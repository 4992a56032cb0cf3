/**
 * @wcs/sdk end to end against the real service (real Postgres, real HTTP on loopback):
 *
 *   - every operation of server/openapi.json through the SDK's client, typed answers and typed
 *     business errors (withdrawals need a chain node: without one, the documented 1007004001);
 *   - retries: answers lost behind a proxy (502, a timeout) make the SDK send again, each attempt
 *     signed anew (the service refuses a reused nonce, so a retry that reused one would fail),
 *     429 with Retry-After from the service's own rate limit, unsafe writes not repeated;
 *   - the webhook middleware on callbacks the service really delivers (its workers: outbox,
 *     signing, ACK judging), in an express app that also uses express.json() in both orders;
 *   - the events feed: the same events as the webhooks, iterated with a persisted cursor.
 *
 * Chain records the scanner would write (a deposit, a chain event, an outflow) are inserted as in
 * server/src/http/openapi-live.test.ts; ETH gets an RPC endpoint where nothing listens so that
 * chain event subscriptions can be created.
 */
import { expect } from 'chai';
import express from 'express';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { ErrorCodes } from '@wcs/core';
import { enqueueCallback, TOKENS, type BizType, type CallbackService, type CreatedApplication } from '@wcs/server';
import { startTestService, type TestService, TEST_ACTOR } from '@wcs/server/testing';
import {
  WcsClient, WcsApiError, WcsHttpError, WcsTimeoutError, ErrorCode, ROUTES, dedupeKey, expressWebhook, captureRawBody, InMemorySeenSet, signRequest,
  type AttemptInfo, type WebhookEvent, type WcsClientOptions,
} from '@wcs/sdk';
import { pollUntil } from './support/expect';

const ROOT = path.resolve(__dirname, '../..');
const ADDR = '0x742d35Cc6634C0532925a3b844Bc454e4438f44e';
const ADDR2 = '0x9858EfFD232B4033E47d90003D41EC34EcaEda94';

/** A proxy in front of the service that can lose answers: it records what passes and acts per request. */
class FaultyProxy {
  readonly seen: Array<{ method: string; url: string; nonce: string; forwarded: boolean }> = [];
  /** What to do with request i: forward and pass the answer, forward and answer 502 instead, answer late, or not forward at all (503). */
  plan: (i: number, url: string) => 'pass' | 'lose-502' | 'late' | 'refuse-503' = () => 'pass';
  lateMs = 1500;
  private server: http.Server | null = null;
  url = '';
  constructor(private readonly target: string) {}

  async start(): Promise<this> {
    const t = new URL(this.target);
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const i = this.seen.length;
        const action = this.plan(i, req.url ?? '');
        this.seen.push({ method: req.method ?? '', url: req.url ?? '', nonce: String(req.headers['x-nonce']), forwarded: action !== 'refuse-503' });
        if (action === 'refuse-503') {
          res.writeHead(503, { 'Content-Type': 'text/html' }).end('<html>503 Service Unavailable</html>');
          return;
        }
        const headers = { ...req.headers, host: t.host };
        const up = http.request({ hostname: t.hostname, port: t.port, method: req.method, path: req.url, headers }, (ur) => {
          const out: Buffer[] = [];
          ur.on('data', (c: Buffer) => out.push(c));
          ur.on('end', () => {
            if (action === 'lose-502') {
              res.writeHead(502, { 'Content-Type': 'text/html' }).end('<html>502 Bad Gateway</html>');
            } else {
              const send = () => {
                if (res.destroyed) return;
                res.writeHead(ur.statusCode ?? 502, ur.headers).end(Buffer.concat(out));
              };
              if (action === 'late') setTimeout(send, this.lateMs);
              else send();
            }
          });
        });
        up.on('error', () => res.writeHead(502).end());
        up.end(Buffer.concat(chunks));
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise((r) => this.server!.close(r));
  }
}

interface Delivery {
  route: string;
  nonce: string;
}

interface Handled extends Delivery {
  event: WebhookEvent;
}

describe('@wcs/sdk against the real service', function () {
  this.timeout(120_000);
  let svc: TestService;
  let app: CreatedApplication;
  let other: CreatedApplication;
  let wcs: WcsClient;
  let receiver: http.Server;
  let receiverUrl: string;
  let proxy: FaultyProxy;
  const deliveries: Delivery[] = [];
  /** Events handed to the handlers (after the seen-set), by route. */
  const handled: Handled[] = [];
  const attempts: AttemptInfo[] = [];
  const seen = new InMemorySeenSet();
  const live = { addressId: 0, address: '', rechargeId: 0, subscriptionId: 0, chainEventId: 0, outflowId: 0 };

  const clientFor = (a: CreatedApplication, o: Partial<WcsClientOptions> = {}) =>
    new WcsClient({ baseUrl: svc.url, apiKey: a.apiKey, apiSecret: a.apiSecret, onAttempt: (x) => void attempts.push(x), ...o });
  const sql = async <T>(text: string, bind: unknown[]): Promise<T[]> => (await svc.service.storage.database.sequelize.query(text, { bind }))[0] as T[];
  const enqueue = (bizType: BizType, bizId: number, payload: Record<string, unknown>) => {
    const s = svc.service.storage.database.sequelize;
    return s.transaction((t) => enqueueCallback(s, t, { applicationId: app.id, bizType, bizId, payload }));
  };
  const expectApiError = async (p: Promise<unknown>, code: number): Promise<WcsApiError> => {
    let e: unknown;
    await p.then(
      (v) => expect.fail(`expected ${code}, got ${JSON.stringify(v).slice(0, 300)}`),
      (x: unknown) => (e = x),
    );
    expect(e, String(e)).to.be.instanceOf(WcsApiError);
    expect((e as WcsApiError).code, String(e)).to.equal(code);
    return e as WcsApiError;
  };

  before(async () => {
    svc = await startTestService({ env: { WCS_RPC_TEST_ETH: 'http://127.0.0.1:1', WCS_CALLBACK_POLL_MS: '50' } });
    app = await svc.createApp({ name: 'sdk merchant', chains: ['ETH', 'BTC'] });
    other = await svc.createApp({ name: 'sdk other', chains: ['ETH'] });
    wcs = clientFor(app);
    proxy = await new FaultyProxy(svc.url).start();

    // the merchant's receiver: one express app, express.json() global, the SDK middleware before it and after it
    const onEvent = (routeName: string) => (event: WebhookEvent, ctx: { nonce: string }) => void handled.push({ route: routeName, nonce: ctx.nonce, event });
    const record = (routeName: string): express.RequestHandler => (req, _res, next) => {
      deliveries.push({ route: routeName, nonce: String(req.headers['x-nonce']) });
      next();
    };
    const a = express();
    a.use('/wcs/before', record('before'), expressWebhook({ apiSecret: app.apiSecret, apiKey: app.apiKey, seen, onEvent: onEvent('before') }));
    a.use(express.json({ verify: captureRawBody }));
    a.post('/wcs/after', record('after'), expressWebhook({ apiSecret: app.apiSecret, apiKey: app.apiKey, seen, onEvent: onEvent('after') }));
    a.post('/wcs/wrong', record('wrong'), expressWebhook({ apiSecret: 'f'.repeat(64), onVerificationFailure: () => undefined, onEvent: onEvent('wrong') }));
    await new Promise<void>((r) => {
      receiver = a.listen(0, '127.0.0.1', () => r());
    });
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const apps = svc.service.storage.applications;
    await apps.setCallback(TEST_ACTOR, app.id, 'RECHARGE', `${receiverUrl}/wcs/after`);
    await apps.setCallback(TEST_ACTOR, app.id, 'WITHDRAW', `${receiverUrl}/wcs/before?source=wcs`);
    await apps.setCallback(TEST_ACTOR, app.id, 'COLLECT', `${receiverUrl}/wcs/after`);
    await apps.setCallback(TEST_ACTOR, app.id, 'CHAIN_EVENT', `${receiverUrl}/wcs/before`);
    await apps.setCallback(TEST_ACTOR, app.id, 'TRANSFER', `${receiverUrl}/wcs/wrong`);
  });

  after(async () => {
    await proxy?.stop();
    if (receiver) {
      receiver.closeAllConnections();
      await new Promise((r) => receiver.close(r));
    }
    await svc?.stop();
  });

  it('unauthenticated operations: health, ready, openapi (the document the SDK was generated from)', async () => {
    expect(await wcs.health()).to.deep.equal({ status: 'ok' });
    const r = await wcs.ready();
    expect(r.status).to.equal('ready');
    const doc = await wcs.openapi();
    const file = JSON.parse(fs.readFileSync(path.join(ROOT, 'server', 'openapi.json'), 'utf8')) as { paths: object };
    expect(Object.keys(doc.paths)).to.deep.equal(Object.keys(file.paths));
    // the SDK's routes are exactly the document's operations
    const ops = Object.entries(doc.paths as Record<string, object>).flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`)).sort();
    expect(Object.values(ROUTES).map((x) => `${x.method} ${x.path}`).sort()).to.deep.equal(ops);
  });

  it('the SDK knows every error code of the service, by the same name (core/src/errors.ts; add new ones to sdk/src/errors.ts)', () => {
    const core = Object.fromEntries(Object.entries(ErrorCodes).map(([k, v]) => [k, (v as { code: number }).code]));
    expect(ErrorCode, 'sdk/src/errors.ts ErrorCode differs from core/src/errors.ts ErrorCodes: update the SDK').to.deep.equal(core);
  });

  it('support: chains and tokens; a typed business error for an unknown chain', async () => {
    const chains = await wcs.support.chains();
    expect(chains.map((c) => c.chainCode)).to.have.members(['ETH', 'BTC']);
    const eth = chains.find((c) => c.chainCode === 'ETH')!;
    expect(eth).to.include({ family: 'evm', depositDetection: 'ENABLED' });
    const tokens = await wcs.support.tokens({ chainCode: 'ETH' });
    expect(tokens.length).to.be.greaterThan(0);
    expect(tokens.every((t) => t.chainCode === 'ETH' && typeof t.chainTokenId === 'number')).to.equal(true);
    const e = await expectApiError(wcs.support.tokens({ chainCode: 'DOGE' }), ErrorCode.CHAIN_UNKNOWN);
    expect(e).to.include({ httpStatus: 200, isBusinessError: true, codeName: 'CHAIN_UNKNOWN', attempts: 1 });
    expect(e.requestId).to.be.a('string');
  });

  it('addresses: create (idempotent), batch-create with a failing item, list-by-user, validate', async () => {
    const a = await wcs.addresses.create({ chainCode: 'ETH', externalUserId: 'sdk-user-1' });
    expect(a).to.include({ chainCode: 'ETH', externalUserId: 'sdk-user-1', addressType: 'USER', status: 'ACTIVE', memo: null });
    expect(a.address).to.match(/^0x[0-9a-fA-F]{40}$/);
    expect(await wcs.addresses.create({ chainCode: 'ETH', externalUserId: 'sdk-user-1' })).to.deep.equal(a);
    live.addressId = a.id;
    live.address = a.address;
    const b = await wcs.addresses.batchCreate({ items: [{ chainCode: 'BTC', externalUserId: 'sdk-user-1' }, { chainCode: 'DOGE', externalUserId: 'sdk-user-1' }] });
    expect(b).to.include({ total: 2, successCount: 1, failedCount: 1 });
    expect(b.items[0]!.address!.chainCode).to.equal('BTC');
    expect(b.items[1]).to.include({ success: false, address: null, errorCode: ErrorCode.CHAIN_UNKNOWN });
    const list = await wcs.addresses.listByUser({ externalUserId: 'sdk-user-1' });
    expect(list.map((x) => x.chainCode)).to.include.members(['ETH', 'BTC']);
    expect(await wcs.addresses.listByUser({ externalUserId: 'nobody' })).to.deep.equal([]);
    const v = await wcs.addresses.validate({ chainCode: 'ETH', address: a.address.toLowerCase() });
    expect(v).to.include({ valid: true, normalizedAddress: a.address });
    expect(await wcs.addresses.validate({ chainCode: 'ETH', address: '0x123' })).to.include({ valid: false, normalizedAddress: null });
    // a request error (HTTP 400) is typed too, and not retried
    const e = await expectApiError(wcs.addresses.create({ chainCode: 'ETH', externalUserId: 'bad user id!' }), ErrorCode.INVALID_PARAMETER);
    expect(e).to.include({ httpStatus: 400, attempts: 1 });
  });

  it('recharges: get and list (a confirmed deposit as the scanner records it), iterate', async () => {
    const [row] = await sql<{ id: string }>(
      `INSERT INTO recharges (application_id, chain_id, chain_token_id, address_id, external_user_id, address, from_address, tx_hash, position, amount,
                              block_height, block_hash, tx_status, confirmations, min_confirmations, confirmed_at)
       SELECT $1, c.id, t.id, $2, 'sdk-user-1', $3, $4, '0x' || repeat('ab', 32), -1, 250000000000000000,
              7412345, '0x' || repeat('cd', 32), 'CONFIRMED', c.confirmations, c.confirmations, now()
         FROM chains c JOIN chain_tokens t ON t.chain_id = c.id AND t.contract IS NULL
        WHERE c.code = 'ETH' AND c.environment = 'test'
       RETURNING id`,
      [app.id, live.addressId, live.address, ADDR],
    );
    live.rechargeId = Number(row!.id);
    const r = await wcs.recharges.get({ id: live.rechargeId });
    expect(r).to.include({ id: live.rechargeId, chainCode: 'ETH', txStatus: 'CONFIRMED', amount: '0.25', externalUserId: 'sdk-user-1' });
    expect(typeof r.amount).to.equal('string');
    const page = await wcs.recharges.list({ externalUserId: 'sdk-user-1', pageSize: 10 });
    expect(page.total).to.equal(1);
    const all: number[] = [];
    for await (const x of wcs.recharges.iterate({ chainCode: 'ETH' })) all.push(x.id);
    expect(all).to.deep.equal([live.rechargeId]);
    await expectApiError(wcs.recharges.get({ id: 999_999 }), ErrorCode.RECHARGE_NOT_FOUND);
  });

  it('withdrawals: create and batch-create answer the typed "no node" error; get a typed not-found', async () => {
    const item = { appOrderNo: 'sdk-ord-1', chainCode: 'ETH', chainTokenId: 10200, toAddress: ADDR, amount: '0.01' };
    const tokens = await wcs.support.tokens({ chainCode: 'ETH' });
    item.chainTokenId = tokens.find((t) => t.native)!.chainTokenId;
    const e = await expectApiError(wcs.withdrawals.create(item), ErrorCode.WITHDRAW_CHAIN_UNAVAILABLE);
    expect(e.isBusinessError).to.equal(true);
    const b = await wcs.withdrawals.batchCreate({ items: [{ ...item, appOrderNo: 'sdk-ord-2' }, { ...item, appOrderNo: 'sdk-ord-3', amount: '-1' }] });
    expect(b).to.include({ total: 2, successCount: 0, failedCount: 2 });
    expect(b.items.map((i) => i.errorCode)).to.deep.equal([ErrorCode.WITHDRAW_CHAIN_UNAVAILABLE, ErrorCode.WITHDRAW_AMOUNT_INVALID]);
    await expectApiError(wcs.withdrawals.get({ appOrderNo: 'sdk-ord-1' }), ErrorCode.WITHDRAW_NOT_FOUND);
    await expectApiError(wcs.withdrawals.get({ id: 1 }), ErrorCode.WITHDRAW_NOT_FOUND);
  });

  it('chain events: subscription create (idempotent), get, list, iterate, update, delete; records get and list; outflows get and list', async () => {
    const body = { appSubscriptionNo: 'sdk-sub-1', chainCode: 'ETH', addresses: [ADDR], direction: 'BOTH' as const, minAmount: '0.5' };
    const s = await wcs.chainEvents.subscriptions.create(body);
    expect(s).to.include({ created: true, appSubscriptionNo: 'sdk-sub-1', status: 'ACTIVE', addressCount: 1, minAmount: '0.5' });
    const again = await wcs.chainEvents.subscriptions.create(body);
    expect(again).to.include({ created: false, id: s.id });
    await expectApiError(wcs.chainEvents.subscriptions.create({ ...body, direction: 'IN' }), ErrorCode.CHAIN_SUBSCRIPTION_CONFLICT);
    live.subscriptionId = s.id;
    expect((await wcs.chainEvents.subscriptions.get({ id: s.id })).addresses).to.deep.equal([ADDR]);
    expect((await wcs.chainEvents.subscriptions.list({ chainCode: 'ETH' })).total).to.equal(1);
    const subs: number[] = [];
    for await (const x of wcs.chainEvents.subscriptions.iterate({})) subs.push(x.id);
    expect(subs).to.deep.equal([s.id]);
    const u = await wcs.chainEvents.subscriptions.update({ id: s.id, addAddresses: [ADDR2], status: 'PAUSED' });
    expect(u).to.include({ addressCount: 2, status: 'PAUSED' });
    await expectApiError(wcs.chainEvents.subscriptions.create({ ...body, chainCode: 'SOL' }), ErrorCode.CHAIN_NOT_ENABLED);

    const [ev] = await sql<{ id: string }>(
      `INSERT INTO chain_events (application_id, subscription_id, chain_id, chain_token_id, direction, monitored_address, from_address, to_address, amount,
                                 tx_hash, position, block_height, block_hash, address_nature, status, min_confirmations, confirmed_at)
       SELECT $1, $2, c.id, t.id, 'IN', $3, $4, $3, 1250000000000000000, '0x' || repeat('12', 32), 41, 7412345, '0x' || repeat('cd', 32), 'EOA', 'CONFIRMED',
              c.confirmations, now()
         FROM chains c JOIN chain_tokens t ON t.chain_id = c.id AND t.contract IS NULL
        WHERE c.code = 'ETH' AND c.environment = 'test'
       RETURNING id`,
      [app.id, s.id, ADDR, ADDR2],
    );
    live.chainEventId = Number(ev!.id);
    expect(await wcs.chainEvents.get({ id: live.chainEventId })).to.include({ id: live.chainEventId, amount: '1.25', directionMatched: 'IN', status: 'CONFIRMED' });
    expect((await wcs.chainEvents.list({ subscriptionId: s.id, direction: 'IN' })).list.map((x) => x.id)).to.deep.equal([live.chainEventId]);
    const evs: number[] = [];
    for await (const x of wcs.chainEvents.iterate({ chainCode: 'ETH' })) evs.push(x.id);
    expect(evs).to.deep.equal([live.chainEventId]);
    await expectApiError(wcs.chainEvents.get({ id: 999_999 }), ErrorCode.CHAIN_EVENT_NOT_FOUND);

    const [of] = await sql<{ id: string }>(
      `INSERT INTO custody_outflows (application_id, chain_id, chain_token_id, address_kind, from_address, external_user_id, to_address, amount, tx_hash, position,
                                     block_height, block_hash)
       SELECT $1, c.id, t.id, 'DEPOSIT', $2, 'sdk-user-1', $3, 500000000000000000, '0x' || repeat('ef', 32), -1, 7412400, '0x' || repeat('cd', 32)
         FROM chains c JOIN chain_tokens t ON t.chain_id = c.id AND t.contract IS NULL
        WHERE c.code = 'ETH' AND c.environment = 'test'
       RETURNING id`,
      [app.id, live.address, ADDR],
    );
    live.outflowId = Number(of!.id);
    expect(await wcs.outflows.get({ id: live.outflowId })).to.include({ id: live.outflowId, addressKind: 'DEPOSIT', amount: '0.5', externalUserId: 'sdk-user-1' });
    expect((await wcs.outflows.list({ addressKind: 'DEPOSIT' })).total).to.equal(1);
    const outs: number[] = [];
    for await (const x of wcs.outflows.iterate({})) outs.push(x.id);
    expect(outs).to.deep.equal([live.outflowId]);
    await expectApiError(wcs.outflows.get({ id: 999_999 }), ErrorCode.OUTFLOW_NOT_FOUND);

    expect(await wcs.chainEvents.subscriptions.delete({ id: s.id })).to.deep.equal({ id: s.id, status: 'DELETED' });
    await expectApiError(wcs.chainEvents.subscriptions.get({ id: s.id }), ErrorCode.CHAIN_SUBSCRIPTION_NOT_FOUND);
    // another application sees none of it
    await expectApiError(clientFor(other).chainEvents.get({ id: live.chainEventId }), ErrorCode.CHAIN_EVENT_NOT_FOUND);
  });

  it('webhooks: every event type, delivered by the service, verified by the SDK middleware before and after express.json(), ACKed', async () => {
    const examples = webhookExamples();
    const payload = (event: string) => ({ ...examples.find((e) => e.event === event)!.body, applicationId: app.id });
    const tasks = [
      await enqueue('RECHARGE', live.rechargeId, { ...payload('recharge'), id: live.rechargeId }),
      await enqueue('RECHARGE', live.rechargeId, { ...payload('recharge_credited'), id: live.rechargeId }),
      await enqueue('WITHDRAW', 41, { ...payload('withdraw'), id: 41 }),
      await enqueue('COLLECT', 42, { ...payload('collect') }),
      await enqueue('CHAIN_EVENT', live.chainEventId, { ...payload('chain_event'), id: live.chainEventId }),
      await enqueue('TRANSFER', live.outflowId, { ...payload('transfer'), id: live.outflowId }),
      await svc.service.storage.container.resolve<CallbackService>(TOKENS.CallbackService).sendTest(TEST_ACTOR, app.id, 'WITHDRAW'),
    ];
    const ids = tasks.map((t) => Number(t.id));
    const settled = await pollUntil(
      async () => (await wcs.callbacks.tasks({ pageSize: 200 })).list.filter((t) => ids.includes(t.id)),
      (l) => l.length === ids.length && l.every((t) => t.status === 'SUCCESS' || (t.status === 'FAILED' && t.retryTimes === 0 && t.lastError !== null)),
      30_000,
      50,
    );
    expect(settled.ok, JSON.stringify(settled.result)).to.equal(true);
    const byId = new Map(settled.result.map((t) => [t.id, t]));
    // the wrong-secret receiver refused the TRANSFER callback: the service saw no ACK
    const transferTask = byId.get(ids[5]!)!;
    expect(transferTask).to.include({ status: 'FAILED', lastError: 'HTTP 401' });
    for (const id of ids.filter((x) => x !== ids[5])) expect(byId.get(id)!.status, `task ${id}`).to.equal('SUCCESS');
    const [attempt] = await wcs.callbacks.attempts({ callbackTaskId: ids[0]! });
    expect(attempt).to.include({ accepted: true, responseStatus: 200, responseBodySummary: '{"code":0}' });

    // fix the URL and resend: now it is verified and ACKed
    await svc.service.storage.applications.setCallback(TEST_ACTOR, app.id, 'TRANSFER', `${receiverUrl}/wcs/after`);
    expect(await wcs.callbacks.resend({ callbackTaskId: ids[5]! })).to.include({ id: ids[5], status: 'WAITING' });
    const resent = await pollUntil(async () => (await wcs.callbacks.tasks({ bizType: 'TRANSFER' })).list.find((t) => t.id === ids[5]), (t) => t?.status === 'SUCCESS', 30_000, 50);
    expect(resent.ok, JSON.stringify(resent.result)).to.equal(true);

    const byEvent = (e: string) => handled.filter((h) => h.event.event === e);
    for (const e of ['recharge', 'recharge_credited', 'withdraw', 'collect', 'chain_event', 'transfer', 'test']) expect(byEvent(e), e).to.have.length(1);
    expect(byEvent('recharge')[0]!.event).to.deep.equal({ ...payload('recharge'), id: live.rechargeId });
    expect(byEvent('withdraw')[0]!.route).to.equal('before'); // mounted before express.json(), URL with a query
    expect(byEvent('recharge')[0]!.route).to.equal('after'); // after express.json({ verify: captureRawBody })
    expect(byEvent('chain_event')[0]!.route).to.equal('before');
    expect(handled.filter((h) => h.route === 'wrong')).to.have.length(0);

    // a redelivery of a handled event (resend of a SUCCESS task): ACKed, not handled twice (seen-set keyed by dedupeKey)
    const before = deliveries.length;
    await wcs.callbacks.resend({ callbackTaskId: ids[0]! });
    const again = await pollUntil(async () => (await wcs.callbacks.attempts({ callbackTaskId: ids[0]! })).length, (n) => n === 2, 30_000, 50);
    expect(again.ok).to.equal(true);
    const last = (await wcs.callbacks.attempts({ callbackTaskId: ids[0]! }))[1]!;
    expect(last).to.include({ accepted: true, responseStatus: 200 });
    expect(deliveries.length).to.be.greaterThan(before);
    expect(byEvent('recharge')).to.have.length(1);
    expect(seen.has(dedupeKey(byEvent('recharge')[0]!.event)!)).to.equal(true);
    // every delivery had its own nonce
    expect(new Set(deliveries.map((d) => d.nonce)).size).to.equal(deliveries.length);
  });

  it('events feed: the same events as the webhooks, in order, with a cursor to resume from; typed cursor errors', async () => {
    // an event is listed once every transaction older than its own has ended: wait until all seven are listable
    const ready = await pollUntil(async () => (await wcs.events.page({ limit: 500 })).list.map((e) => e.payload.event), (l) => l.length >= 7, 10_000, 50);
    expect(ready.result).to.include.members(['recharge', 'recharge_credited', 'withdraw', 'collect', 'chain_event', 'transfer', 'test']);
    const all: Array<{ id: number; cursor: string; payload: WebhookEvent }> = [];
    const it = wcs.events.iterate({ limit: 3 });
    for await (const ev of it) all.push(ev);
    expect(it.pagesRead).to.be.at.least(3);
    expect(all.map((e) => e.payload.event)).to.deep.equal(ready.result);
    // feed payloads are the webhook bodies: the same dedupe keys
    for (const h of handled) expect(all.some((e) => dedupeKey(e.payload) === dedupeKey(h.event) && JSON.stringify(e.payload) === JSON.stringify(h.event)), h.event.event).to.equal(true);
    expect(it.cursor).to.equal(all[all.length - 1]!.cursor);
    // resume from a cursor: only what came after it
    const mid = all[2]!;
    const rest: number[] = [];
    for await (const ev of wcs.events.iterate({ after: mid.cursor })) rest.push(ev.id);
    expect(rest).to.deep.equal(all.slice(3).map((e) => e.id));
    // caught up: an empty page, the cursor stays
    const end = await wcs.events.page({ after: it.cursor! });
    expect(end).to.deep.equal({ list: [], nextCursor: it.cursor, hasMore: false });
    // a new event shows up after the saved cursor
    await svc.service.storage.container.resolve<CallbackService>(TOKENS.CallbackService).sendTest(TEST_ACTOR, app.id, 'RECHARGE');
    const next = await pollUntil(() => wcs.events.page({ after: it.cursor! }), (p) => p.list.length === 1, 10_000, 50);
    expect(next.result.list[0]!.payload.event).to.equal('test');
    // typed errors
    await expectApiError(wcs.events.page({ after: 'not-a-cursor' }), ErrorCode.EVENT_CURSOR_INVALID);
    await expectApiError(clientFor(other).events.page({ after: it.cursor! }), ErrorCode.EVENT_CURSOR_FOREIGN);
    const bad = await expectApiError(wcs.events.page({ limit: 501 }), ErrorCode.INVALID_PARAMETER);
    expect(bad).to.include({ httpStatus: 400, attempts: 1 });
  });

  it('retries: answers lost behind a proxy are retried with a new nonce each time (the service would refuse a reused one)', async () => {
    const via = clientFor(app, { baseUrl: proxy.url, retry: { baseDelayMs: 20, maxDelayMs: 100 }, timeoutMs: 500 });
    // a read: the first answer lost (502 after the service answered), the second late (timeout), the third passes
    proxy.seen.length = 0;
    proxy.plan = (i) => (i === 0 ? 'lose-502' : i === 1 ? 'late' : 'pass');
    expect((await via.support.chains()).map((c) => c.chainCode)).to.have.members(['ETH', 'BTC']);
    expect(proxy.seen.map((s) => s.forwarded)).to.deep.equal([true, true, true]);
    expect(new Set(proxy.seen.map((s) => s.nonce)).size).to.equal(3);

    // an idempotent write whose first attempt the service carried out: the retry gets the same address
    proxy.seen.length = 0;
    proxy.plan = (i) => (i === 0 ? 'lose-502' : 'pass');
    const a = await via.addresses.create({ chainCode: 'ETH', externalUserId: 'sdk-retry-user' });
    expect(proxy.seen).to.have.length(2);
    expect(proxy.seen[0]!.nonce).to.not.equal(proxy.seen[1]!.nonce);
    expect(await wcs.addresses.create({ chainCode: 'ETH', externalUserId: 'sdk-retry-user' })).to.deep.equal(a);
    expect(await wcs.addresses.listByUser({ externalUserId: 'sdk-retry-user', chainCode: 'ETH' })).to.have.length(1);

    // why a fresh nonce matters: the first attempt's exact request again is refused by the service
    const replay = await fetch(svc.url + '/api/v1/wallet/support/chains', { headers: await signedHeadersOf(app, '/api/v1/wallet/support/chains', 'e'.repeat(32)) });
    expect(replay.status).to.equal(200);
    const replayed = await fetch(svc.url + '/api/v1/wallet/support/chains', { headers: await signedHeadersOf(app, '/api/v1/wallet/support/chains', 'e'.repeat(32)) });
    expect(replayed.status).to.equal(401);
    expect(((await replayed.json()) as { code: number }).code).to.equal(ErrorCode.AUTH_NONCE_REPLAYED);

    // a subscription create (idempotent by appSubscriptionNo) carried out but answered 503 by the proxy: the retry answers it
    proxy.seen.length = 0;
    proxy.plan = (i) => (i === 0 ? 'lose-502' : 'pass');
    const sub = await via.chainEvents.subscriptions.create({ appSubscriptionNo: 'sdk-retry-sub', chainCode: 'ETH', addresses: [ADDR2] });
    expect(sub.created).to.equal(false); // the first attempt created it
    expect(proxy.seen).to.have.length(2);

    // an unsafe write is not repeated: the resend was carried out, its answer lost, the SDK reports the 502
    proxy.seen.length = 0;
    proxy.plan = () => 'lose-502';
    const task = await svc.service.storage.container.resolve<CallbackService>(TOKENS.CallbackService).sendTest(TEST_ACTOR, app.id, 'COLLECT');
    await pollUntil(async () => (await wcs.callbacks.tasks({ bizType: 'COLLECT' })).list.find((t) => t.id === Number(task.id))?.status, (s) => s === 'SUCCESS', 30_000, 50);
    let e: unknown;
    await via.callbacks.resend({ callbackTaskId: Number(task.id) }).catch((x: unknown) => (e = x));
    expect(e).to.be.instanceOf(WcsHttpError);
    expect(proxy.seen).to.have.length(1);
    const attemptsAfter = await pollUntil(async () => (await wcs.callbacks.attempts({ callbackTaskId: Number(task.id) })).length, (n) => n === 2, 30_000, 50);
    expect(attemptsAfter.ok, 'the lost resend was carried out').to.equal(true);

    // a timeout on an unsafe write: one attempt, WcsTimeoutError
    proxy.seen.length = 0;
    proxy.plan = () => 'late';
    e = undefined;
    await via.chainEvents.subscriptions.delete({ id: sub.id }).catch((x: unknown) => (e = x));
    expect(e).to.be.instanceOf(WcsTimeoutError);
    expect(proxy.seen).to.have.length(1);
    proxy.plan = () => 'pass';
  });

  it('429 from the service\'s rate limit: the SDK waits Retry-After and succeeds, signing the retry anew', async () => {
    const limited = await svc.createApp({ name: 'sdk limited', chains: ['ETH'] });
    await svc.service.storage.applications.setRateLimit(TEST_ACTOR, limited.id, { ratePerSecond: 1, burst: 1 });
    const mine: AttemptInfo[] = [];
    const c = new WcsClient({ baseUrl: svc.url, apiKey: limited.apiKey, apiSecret: limited.apiSecret, onAttempt: (x) => void mine.push(x) });
    const started = Date.now();
    const results = await Promise.all([c.support.chains(), c.support.chains(), c.support.chains()]);
    expect(results.every((r) => r.length === 1)).to.equal(true);
    const limitedAttempts = mine.filter((m) => m.status === 429);
    expect(limitedAttempts.length).to.be.at.least(1);
    for (const m of limitedAttempts) expect(m.retryInMs).to.be.at.least(1000);
    expect(Date.now() - started).to.be.at.least(1000);
    expect(new Set(mine.map((m) => m.nonce)).size).to.equal(mine.length);
    // with retries off the 429 is a typed error with Retry-After
    const off = new WcsClient({ baseUrl: svc.url, apiKey: limited.apiKey, apiSecret: limited.apiSecret, retry: false });
    const r1 = await Promise.allSettled([off.support.chains(), off.support.chains()]);
    const rejected = r1.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as WcsApiError);
    expect(rejected.length).to.be.at.least(1);
    expect(rejected[0]).to.include({ code: ErrorCode.RATE_LIMITED, httpStatus: 429 });
    expect(rejected[0]!.retryAfterSeconds).to.be.at.least(1);
  });

  it('authentication errors are typed and never retried', async () => {
    const wrong = new WcsClient({ baseUrl: svc.url, apiKey: app.apiKey, apiSecret: 'f'.repeat(64) });
    const e = await expectApiError(wrong.support.chains(), ErrorCode.AUTH_SIGNATURE_INVALID);
    expect(e).to.include({ httpStatus: 401, attempts: 1 });
    const unknown = new WcsClient({ baseUrl: svc.url, apiKey: 'pk_test_' + '0'.repeat(32), apiSecret: app.apiSecret });
    await expectApiError(unknown.support.chains(), ErrorCode.AUTH_API_KEY_UNKNOWN);
  });
});

/** Headers signed by the spec's scheme with a chosen nonce (through the SDK's signer). */
async function signedHeadersOf(a: CreatedApplication, p: string, nonce: string): Promise<Record<string, string>> {
  const s = await signRequest({ apiKey: a.apiKey, apiSecret: a.apiSecret }, { method: 'GET', path: p, nonce });
  return { ...s.headers };
}

function webhookExamples(): Array<{ event: string; body: Record<string, unknown> }> {
  const doc = JSON.parse(fs.readFileSync(path.join(ROOT, 'server', 'openapi.json'), 'utf8')) as {
    webhooks: Record<string, { post: { requestBody: { content: { 'application/json': { examples: Record<string, { value: Record<string, unknown> }> } } } } }>;
  };
  return Object.values(doc.webhooks).flatMap((w) => Object.values(w.post.requestBody.content['application/json'].examples).map((ex) => ({ event: String(ex.value.event), body: ex.value })));
}
