/**
 * Webhook callbacks end to end: real Postgres, real HTTP on loopback, a merchant receiver and
 * a signature verifier written from the spec (/work/shared/spec/wallet-custody-api.md:
 * "Callback task", "Callback attempt", "Events", "ACK rule", "Retry", "Errors", "Limits").
 *
 * Deliveries are driven by dispatchers constructed here and run with runOnce() (the services
 * are started without workers, so nothing races them); the retry schedule runs on a fake
 * Date (sinon, toFake: ['Date']) while real timers and I/O keep working.
 */
import { expect } from 'chai';
import * as sinon from 'sinon';
import type { Sequelize } from 'sequelize';
import { CallbackDispatcher, enqueueCallback, TOKENS, type BizType, type CallbackAttemptView, type CallbackConfig, type CallbackService, type CallbackTaskView, type CreatedApplication } from '@wcs/server';
import { freePort, startTestService, type TestService, TEST_ACTOR } from '@wcs/server/testing';
import { buildStringToSign, hmacSha256Hex, sha256Hex, SigningClient, stripQuery, type PreparedRequest, type RequestSpec } from './client/signing-client';
import { CallbackReceiver, verifyCallback, type ReceivedCallback, type Reply } from './support/callback-receiver';
import { expectError, expectOk } from './support/expect';

const TASKS = '/api/v1/wallet/callback/tasks';
const ATTEMPTS = '/api/v1/wallet/callback/attempts';
const RESEND = '/api/v1/wallet/callback/resend';

const Code = {
  INVALID_PARAMETER: 1000001003,
  CALLBACK_URL_INVALID: 1002001003,
  CALLBACK_TASK_NOT_FOUND: 1005001001,
  CALLBACK_TASK_BUSY: 1005001002,
} as const;

const TASK_FIELDS = ['bizId', 'bizType', 'createTime', 'id', 'lastError', 'lastResponseSummary', 'maxRetryTimes', 'nextRetryTime', 'retryTimes', 'status', 'updateTime', 'url'];
const ATTEMPT_FIELDS = [
  'accepted', 'attemptNo', 'callbackTaskId', 'createTime', 'errorReason', 'id', 'latencyMs', 'nextRetryTime', 'requestBodyLength', 'requestBodySha256',
  'requestBodySummary', 'requestHeadersSummary', 'responseBodyLength', 'responseBodySha256', 'responseBodySummary', 'responseContentType', 'responseStatus',
];
const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;
const MARKER = '...[truncated]';

/** The spec's timestamp form (UTC, per docs/api.md): YYYY-MM-DDThh:mm:ss. */
const fmt = (ms: number) => new Date(ms).toISOString().slice(0, 19);
const parseLocal = (s: string) => Date.parse(s + 'Z');

/** The real clock, whatever sinon does to Date: the API checks X-Timestamp against it. */
const realNow: () => number = Date.now;

/** A merchant client whose X-Timestamp always comes from the real clock (the fake-clock test moves Date by years). */
class MerchantClient extends SigningClient {
  override prepare(spec: RequestSpec): PreparedRequest {
    return super.prepare({ timestamp: realNow(), ...spec });
  }
}

function clientFor(svc: TestService, app: CreatedApplication): SigningClient {
  return new MerchantClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
}

function dispatcherFor(svc: TestService, overrides: Partial<CallbackConfig>): CallbackDispatcher {
  const c = svc.service.storage.container;
  const config: CallbackConfig = { ...svc.service.config.callbacks, ...overrides };
  type Args = ConstructorParameters<typeof CallbackDispatcher>;
  return new CallbackDispatcher(c.resolve<Args[0]>(TOKENS.Database), c.resolve<Args[1]>(TOKENS.CredentialStore), config, svc.service.logger);
}

/** runOnce until nothing more is due; returns how many deliveries ran. */
async function drain(d: CallbackDispatcher): Promise<number> {
  let total = 0;
  for (let i = 0; i < 50; i++) {
    const n = await d.runOnce();
    if (n === 0) return total;
    total += n;
  }
  throw new Error('dispatcher never drained');
}

async function listTasks(c: SigningClient, query: Record<string, string | number> = {}): Promise<{ list: CallbackTaskView[]; total: number }> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
  return expectOk(await c.get(qs ? `${TASKS}?${qs}` : TASKS));
}

async function taskOf(c: SigningClient, id: number): Promise<CallbackTaskView> {
  const { list } = await listTasks(c, { pageSize: 200 });
  const t = list.find((x) => x.id === id);
  if (!t) throw new Error(`task ${id} not in the application's listing`);
  expect(Object.keys(t).sort()).to.deep.equal(TASK_FIELDS);
  return t;
}

async function attemptsOf(c: SigningClient, id: number): Promise<CallbackAttemptView[]> {
  const list: CallbackAttemptView[] = expectOk(await c.get(`${ATTEMPTS}?callbackTaskId=${id}`));
  for (const a of list) expect(Object.keys(a).sort()).to.deep.equal(ATTEMPT_FIELDS);
  return list;
}

async function enqueue(sequelize: Sequelize, e: { applicationId: number; bizType: BizType; bizId: number; payload: Record<string, unknown>; callbackUrl?: string | null }, now?: Date) {
  return sequelize.transaction((t) => enqueueCallback(sequelize, t, e, now));
}

function header(r: ReceivedCallback, name: string): string {
  const v = r.headers[name.toLowerCase()];
  if (typeof v !== 'string') throw new Error(`header ${name} missing`);
  return v;
}

/** The attempt's header summary: pseudo-entries, the headers as sent, key and signature masked. */
function checkHeaderSummary(a: CallbackAttemptView, url: string, app: CreatedApplication, sent: ReceivedCallback | null): void {
  const h = a.requestHeadersSummary;
  expect(h[':method']).to.equal('POST');
  expect(h[':url']).to.equal(url);
  expect(h['Content-Type']).to.match(/^application\/json\b/);
  const key = h['X-Api-Key']!;
  expect(key, 'X-Api-Key masked').to.be.a('string').and.not.equal(app.apiKey);
  expect(key).to.not.include(app.apiKey.slice(12, 28)); // the middle of the key never appears
  expect(h['X-Timestamp']).to.match(/^\d{13}$/);
  expect(h['X-Nonce']).to.be.a('string').and.not.equal('');
  const sig = h['X-Signature']!;
  expect(sig, 'X-Signature present').to.be.a('string').and.not.equal('');
  if (sent) {
    expect(h['X-Timestamp']).to.equal(header(sent, 'X-Timestamp'));
    expect(h['X-Nonce']).to.equal(header(sent, 'X-Nonce'));
    const real = header(sent, 'X-Signature');
    expect(sig, 'X-Signature masked').to.not.equal(real);
    expect(sig).to.not.include(real.slice(8, 56));
  }
}

function route(receiver: CallbackReceiver, replies: Map<string, Reply | ((r: ReceivedCallback) => Reply)>): void {
  receiver.reply = (r) => {
    const x = replies.get(stripQuery(r.target));
    if (x === undefined) return { status: 404, body: 'no route' };
    return typeof x === 'function' ? x(r) : x;
  };
}

describe('callbacks: delivery, signatures, ACK rule, outbox, resend (real Postgres, loopback receiver)', function () {
  let svc: TestService;
  let receiver: CallbackReceiver;
  let dispatcher: CallbackDispatcher;
  let sequelize: Sequelize;
  const replies = new Map<string, Reply | ((r: ReceivedCallback) => Reply)>();
  const at = (path: string) => receiver.received.filter((r) => stripQuery(r.target) === path);

  before(async function () {
    svc = await startTestService({ workers: false });
    sequelize = svc.service.storage.database.sequelize;
    receiver = await new CallbackReceiver().start();
    route(receiver, replies);
    // a failed task is not due again during this block (retries are the fake-clock block's business)
    dispatcher = dispatcherFor(svc, { timeoutMs: 300, retryBaseSeconds: 3600 });
  });
  after(async function () {
    if (dispatcher) await dispatcher.stop();
    if (receiver) await receiver.stop();
    if (svc) await svc.stop();
  });

  it('signs every attempt for the URL path without the query, a fresh nonce each time, the same body bytes every time', async function () {
    const app = await svc.createApp();
    const c = clientFor(svc, app);
    const url = receiver.url('/cb/recharge?x=1&y=a%20b');
    await svc.service.storage.applications.setCallback(TEST_ACTOR, app.id, 'RECHARGE', url);
    let n = 0;
    replies.set('/cb/recharge', () => (++n < 3 ? { status: 500, body: 'try again' } : { status: 200, body: 'ok' }));
    const payload = { event: 'recharge', id: 7, applicationId: app.id, chainId: 1, chainTokenId: 2, address: '0xabc', amount: '1.50', txHash: '0xdef', blockHeight: 12, txStatus: 'SETTLED', confirmations: -1, minConfirmations: -1, note: 'héllo — ✓ "quoted" / \\ 😀' };
    const task = await enqueue(sequelize, { applicationId: app.id, bizType: 'RECHARGE', bizId: 7, payload });
    expect(task.status).to.equal('WAITING');

    expect(await dispatcher.runOnce()).to.equal(1);
    expect((await taskOf(c, task.id)).status).to.equal('FAILED');
    for (let i = 0; i < 2; i++) {
      const resent: CallbackTaskView = expectOk(await c.post(RESEND, { callbackTaskId: task.id }));
      expect(resent).to.include({ id: task.id, status: 'WAITING', retryTimes: 0, nextRetryTime: null });
      expect(await dispatcher.runOnce()).to.equal(1);
    }
    const final = await taskOf(c, task.id);
    expect(final).to.include({ status: 'SUCCESS', bizType: 'RECHARGE', bizId: 7, url, retryTimes: 0, nextRetryTime: null, lastError: null, lastResponseSummary: 'ok' });

    const got = at('/cb/recharge');
    expect(got).to.have.length(3);
    const expectedBody = Buffer.from(JSON.stringify(payload), 'utf8');
    for (const r of got) {
      expect(r.method).to.equal('POST');
      expect(r.target).to.equal('/cb/recharge?x=1&y=a%20b');
      expect(verifyCallback(r, app.apiKey, app.apiSecret), 'verifies with the app secret').to.equal(null);
      expect(verifyCallback(r, app.apiKey, app.apiSecret + 'x'), 'a wrong secret must not verify').to.equal('signature does not match');
      const signedWithQuery = hmacSha256Hex(app.apiSecret, buildStringToSign('POST', r.target, header(r, 'X-Timestamp'), header(r, 'X-Nonce'), sha256Hex(r.body)));
      expect(header(r, 'X-Signature'), 'the query is not part of the signed path').to.not.equal(signedWithQuery);
      expect(header(r, 'Content-Type')).to.match(/^application\/json\b/);
      expect(r.body.equals(got[0]!.body), 'identical body bytes on every attempt').to.equal(true);
      expect(r.body.equals(expectedBody)).to.equal(true);
    }
    expect(JSON.parse(got[0]!.body.toString('utf8'))).to.deep.equal(payload);
    expect(new Set(got.map((r) => header(r, 'X-Nonce'))).size, 'a fresh nonce per attempt').to.equal(3);
    const stamps = got.map((r) => Number(header(r, 'X-Timestamp')));
    expect([...stamps].sort((a, b) => a - b)).to.deep.equal(stamps);

    const attempts = await attemptsOf(c, task.id);
    expect(attempts.map((a) => a.attemptNo)).to.deep.equal([1, 2, 3]);
    expect(attempts.map((a) => a.accepted)).to.deep.equal([false, false, true]);
    expect(attempts.map((a) => a.errorReason)).to.deep.equal(['HTTP 500', 'HTTP 500', null]);
    attempts.forEach((a, i) => {
      expect(a.callbackTaskId).to.equal(task.id);
      expect(a.requestBodyLength).to.equal(expectedBody.length).and.not.equal(JSON.stringify(payload).length); // bytes, not characters
      expect(a.requestBodySha256).to.equal(sha256Hex(got[i]!.body));
      expect(a.requestBodySummary).to.equal(JSON.stringify(payload));
      checkHeaderSummary(a, url, app, got[i]!);
    });
  });

  it('applies the ACK rule and records each attempt (status, content type, summaries, hashes, latency, error)', async function () {
    const app = await svc.createApp();
    const c = clientFor(svc, app);
    const closedPort = await freePort();
    const long = 'é'.repeat(1200); // 1200 characters, 2400 bytes, no ACK marker
    const big = Buffer.alloc(2 * 1024 * 1024, 'a');
    interface Case { name: string; reply?: Reply; url?: string; accepted: boolean; error?: string | RegExp; status: number | null; contentType?: string | null; body?: string }
    const cases: Case[] = [
      { name: 'ok', reply: { status: 200, body: 'ok', headers: { 'Content-Type': 'text/plain; charset=utf-8' } }, accepted: true, status: 200, contentType: 'text/plain; charset=utf-8', body: 'ok' },
      { name: 'success', reply: { status: 200, body: 'success' }, accepted: true, status: 200, contentType: null, body: 'success' },
      { name: 'code0', reply: { status: 200, body: '{"code":0}', headers: { 'Content-Type': 'application/json' } }, accepted: true, status: 200, contentType: 'application/json', body: '{"code":0}' },
      { name: 'code1', reply: { status: 200, body: '{"code":1,"msg":"ok"}', headers: { 'Content-Type': 'application/json' } }, accepted: false, error: /reject/i, status: 200, contentType: 'application/json', body: '{"code":1,"msg":"ok"}' },
      { name: 'created', reply: { status: 201, body: 'ok' }, accepted: false, error: 'HTTP 201', status: 201, body: 'ok' },
      { name: 'error500', reply: { status: 500, body: 'internal error' }, accepted: false, error: 'HTTP 500', status: 500, body: 'internal error' },
      { name: 'empty', reply: { status: 200, body: '' }, accepted: false, error: /ACK/, status: 200, body: '' },
      { name: 'long', reply: { status: 200, body: long, headers: { 'Content-Type': 'text/plain; charset=utf-8' } }, accepted: false, error: /ACK/, status: 200, body: long },
      { name: 'exact1000', reply: { status: 200, body: 'x'.repeat(1000) }, accepted: false, error: /ACK/, status: 200, body: 'x'.repeat(1000) },
      // 600 characters outside the BMP: 1200 UTF-16 units, 2400 bytes, still within the 1000-character summary
      { name: 'emoji', reply: { status: 200, body: '😀'.repeat(600) }, accepted: false, error: /ACK/, status: 200, body: '😀'.repeat(600) },
      { name: 'redirect', reply: { status: 302, body: '', headers: { Location: receiver.url('/ack/redirected') } }, accepted: false, error: /302/, status: 302, body: '' },
      { name: 'hang', reply: 'hang', accepted: false, error: 'timeout after 300 ms', status: null },
      { name: 'reset', reply: 'reset', accepted: false, error: /reset/i, status: null },
      { name: 'big', reply: { status: 200, body: big }, accepted: false, error: /larger than 65536/, status: 200 },
      { name: 'refused', url: `http://127.0.0.1:${closedPort}/ack/refused`, accepted: false, error: 'connection refused', status: null },
    ];
    replies.set('/ack/redirected', { status: 200, body: 'ok' });
    const tasks = new Map<string, { id: number; url: string }>();
    for (const [i, k] of cases.entries()) {
      const url = k.url ?? receiver.url(`/ack/${k.name}`);
      if (k.reply) replies.set(`/ack/${k.name}`, k.reply);
      const t = await enqueue(sequelize, { applicationId: app.id, bizType: 'WITHDRAW', bizId: 1000 + i, payload: { event: 'withdraw', id: 1000 + i, case: k.name }, callbackUrl: url });
      tasks.set(k.name, { id: t.id, url });
    }
    expect(await drain(dispatcher)).to.equal(cases.length);

    expect(at('/ack/redirected'), 'a redirect is not followed').to.have.length(0);
    for (const k of cases) {
      const { id, url } = tasks.get(k.name)!;
      const msg = `case ${k.name}`;
      const task = await taskOf(c, id);
      const attempts = await attemptsOf(c, id);
      expect(attempts, msg).to.have.length(1);
      const a = attempts[0]!;
      const sent = at(`/ack/${k.name}`);
      expect(sent, msg).to.have.length(k.name === 'refused' ? 0 : 1);
      if (sent[0]) expect(verifyCallback(sent[0], app.apiKey, app.apiSecret), msg).to.equal(null);
      expect(a.attemptNo, msg).to.equal(1);
      expect(a.accepted, msg).to.equal(k.accepted);
      expect(a.responseStatus, msg).to.equal(k.status);
      if (k.contentType !== undefined) expect(a.responseContentType, msg).to.equal(k.contentType);
      if (k.accepted) expect(a.errorReason, msg).to.equal(null);
      else if (typeof k.error === 'string') expect(a.errorReason, msg).to.equal(k.error);
      else expect(a.errorReason, msg).to.match(k.error!);
      expect(a.latencyMs, msg).to.be.a('number').and.satisfy(Number.isInteger).and.at.least(0).and.below(10_000);
      if (k.status === null) {
        expect([a.responseContentType, a.responseBodySummary, a.responseBodyLength, a.responseBodySha256], msg).to.deep.equal([null, null, null, null]);
      } else if (k.body !== undefined) {
        const bytes = Buffer.from(k.body, 'utf8');
        expect(a.responseBodyLength, msg).to.equal(bytes.length);
        expect(a.responseBodySha256, msg).to.equal(sha256Hex(bytes));
        expect(a.responseBodySummary, msg).to.equal(Array.from(k.body).length > 1000 ? Array.from(k.body).slice(0, 1000).join('') + MARKER : k.body);
      }
      checkHeaderSummary(a, url, app, sent[0] ?? null);
      expect(a.requestBodyLength, msg).to.equal(Buffer.byteLength(JSON.stringify({ event: 'withdraw', id: task.bizId, case: k.name })));
      // the task carries the latest outcome
      expect(task.status, msg).to.equal(k.accepted ? 'SUCCESS' : 'FAILED');
      expect(task.url, msg).to.equal(url);
      expect(task.retryTimes, msg).to.equal(0);
      expect(task.maxRetryTimes, msg).to.equal(10);
      expect(task.lastError, msg).to.equal(a.errorReason);
      expect(task.lastResponseSummary, msg).to.equal(a.responseBodySummary);
      expect(a.nextRetryTime, msg).to.equal(task.nextRetryTime);
      if (k.accepted) expect(task.nextRetryTime, msg).to.equal(null);
      else {
        // retry base 3600 s in this dispatcher: next = attempt time + 3600 x 2^0
        const delta = parseLocal(task.nextRetryTime!) - parseLocal(a.createTime);
        expect(delta, msg).to.be.within(3600_000, 3603_000);
      }
    }
    // the specific summaries
    const longAttempt = (await attemptsOf(c, tasks.get('long')!.id))[0]!;
    expect(longAttempt.responseBodySummary).to.equal('é'.repeat(1000) + MARKER);
    expect(longAttempt.responseBodyLength).to.equal(2400);
    expect((await attemptsOf(c, tasks.get('exact1000')!.id))[0]!.responseBodySummary).to.equal('x'.repeat(1000));
    expect((await attemptsOf(c, tasks.get('emoji')!.id))[0]!).to.include({ responseBodySummary: '😀'.repeat(600), responseBodyLength: 2400 });
    const hang = (await attemptsOf(c, tasks.get('hang')!.id))[0]!;
    expect(hang.latencyMs).to.be.within(250, 5000);
    const bigAttempt = (await attemptsOf(c, tasks.get('big')!.id))[0]!;
    expect(bigAttempt.responseBodyLength).to.be.a('number').and.at.most(65536).and.above(0);
    expect(bigAttempt.responseBodySha256).to.equal(sha256Hex(big.subarray(0, bigAttempt.responseBodyLength!)));
    expect(bigAttempt.responseBodySummary).to.equal('a'.repeat(1000) + MARKER);
    expect((await taskOf(c, tasks.get('big')!.id)).lastResponseSummary).to.equal('a'.repeat(1000) + MARKER);
  });

  it('summarises a request body longer than 1000 characters with the marker, and signs and sends it whole', async function () {
    const app = await svc.createApp();
    const c = clientFor(svc, app);
    const url = receiver.url('/cb/long-request');
    replies.set('/cb/long-request', { status: 200, body: '{"code":0}' });
    const payload = { event: 'collect', id: 5, text: 'ü'.repeat(1500) };
    const t = await enqueue(sequelize, { applicationId: app.id, bizType: 'COLLECT', bizId: 5, payload, callbackUrl: url });
    expect(await dispatcher.runOnce()).to.equal(1);
    const [r] = at('/cb/long-request');
    const json = JSON.stringify(payload);
    expect(r!.body.toString('utf8')).to.equal(json);
    expect(verifyCallback(r!, app.apiKey, app.apiSecret)).to.equal(null);
    const [a] = await attemptsOf(c, t.id);
    expect(a!.accepted).to.equal(true);
    expect(a!.requestBodySummary).to.equal(json.slice(0, 1000) + MARKER);
    expect(a!.requestBodyLength).to.equal(Buffer.byteLength(json));
    expect(a!.requestBodySha256).to.equal(sha256Hex(r!.body));
  });

  it('outbox: a task enqueued in a rolled-back transaction does not exist; a committed one exists once, visible only at commit', async function () {
    const app = await svc.createApp();
    const c = clientFor(svc, app);
    await svc.service.storage.applications.setCallback(TEST_ACTOR, app.id, 'RECHARGE', receiver.url('/cb/outbox'));
    replies.set('/cb/outbox', { status: 200, body: 'success' });
    const count = async () => {
      const [rows] = await sequelize.query(`SELECT count(*) AS n FROM callback_tasks WHERE application_id = $1`, { bind: [app.id] });
      return Number((rows as Array<{ n: string }>)[0]!.n);
    };

    let enqueuedId = 0;
    const failing = sequelize.transaction(async (t) => {
      enqueuedId = (await enqueueCallback(sequelize, t, { applicationId: app.id, bizType: 'RECHARGE', bizId: 41, payload: { event: 'recharge', id: 41 } })).id;
      throw new Error('business change failed');
    });
    await failing.then(() => expect.fail('the transaction should have rolled back'), (e: Error) => expect(e.message).to.equal('business change failed'));
    expect(enqueuedId).to.be.above(0);
    expect(await count()).to.equal(0);
    expect(await listTasks(c)).to.deep.equal({ list: [], total: 0 });
    expectError(await c.get(`${ATTEMPTS}?callbackTaskId=${enqueuedId}`), 200, Code.CALLBACK_TASK_NOT_FOUND);
    await dispatcher.runOnce();
    expect(at('/cb/outbox')).to.have.length(0);

    const payload = { event: 'recharge', id: 42, txStatus: 'CONFIRMED' };
    let insideId = 0;
    await sequelize.transaction(async (t) => {
      const r = await enqueueCallback(sequelize, t, { applicationId: app.id, bizType: 'RECHARGE', bizId: 42, payload });
      insideId = r.id;
      expect(r.status).to.equal('WAITING');
      // not committed yet: other connections (the API, the dispatcher) do not see it
      expect((await listTasks(c)).total).to.equal(0);
      await dispatcher.runOnce();
      expect(at('/cb/outbox')).to.have.length(0);
    });
    expect(await count()).to.equal(1);
    const { list, total } = await listTasks(c);
    expect(total).to.equal(1);
    expect(list[0]).to.include({ id: insideId, bizType: 'RECHARGE', bizId: 42, status: 'WAITING', retryTimes: 0, maxRetryTimes: 10, nextRetryTime: null, lastError: null });
    expect(await dispatcher.runOnce()).to.equal(1);
    const got = at('/cb/outbox');
    expect(got).to.have.length(1);
    expect(got[0]!.body.toString('utf8')).to.equal(JSON.stringify(payload));
    expect((await taskOf(c, insideId)).status).to.equal('SUCCESS');
    expect(await count()).to.equal(1);
  });

  it('no URL configured: FAILED at once naming the bizType, no attempt; resend is CALLBACK_URL_INVALID until a URL is set', async function () {
    const app = await svc.createApp();
    const c = clientFor(svc, app);
    const service = svc.service.storage.container.resolve<CallbackService>(TOKENS.CallbackService);
    const t = await service.sendTest(TEST_ACTOR, app.id, 'WITHDRAW');
    expect(t).to.deep.equal({ id: t.id, url: '', status: 'FAILED' });
    const task = await taskOf(c, t.id);
    expect(task).to.include({ status: 'FAILED', bizType: 'WITHDRAW', bizId: 0, retryTimes: 0, nextRetryTime: null, lastResponseSummary: null });
    expect(task.lastError).to.be.a('string').and.include('WITHDRAW');
    await dispatcher.runOnce();
    expect(await attemptsOf(c, t.id)).to.deep.equal([]);
    expect(at('/cb/late-url')).to.have.length(0);

    expectError(await c.post(RESEND, { callbackTaskId: t.id }), 200, Code.CALLBACK_URL_INVALID, 'WITHDRAW');
    expect((await taskOf(c, t.id)).status).to.equal('FAILED');

    const url = receiver.url('/cb/late-url');
    replies.set('/cb/late-url', { status: 200, body: 'ok' });
    await svc.service.storage.applications.setCallback(TEST_ACTOR, app.id, 'WITHDRAW', url);
    const resent: CallbackTaskView = expectOk(await c.post(RESEND, { callbackTaskId: t.id }));
    expect(resent).to.include({ status: 'WAITING', url, retryTimes: 0 });
    expect(await dispatcher.runOnce()).to.equal(1);
    const got = at('/cb/late-url');
    expect(got).to.have.length(1);
    expect(verifyCallback(got[0]!, app.apiKey, app.apiSecret)).to.equal(null);
    expect(JSON.parse(got[0]!.body.toString('utf8'))).to.include({ event: 'test', applicationId: app.id, bizType: 'WITHDRAW' });
    expect(await taskOf(c, t.id)).to.include({ status: 'SUCCESS', url, lastError: null, lastResponseSummary: 'ok' });
    const attempts = await attemptsOf(c, t.id);
    expect(attempts.map((a) => [a.attemptNo, a.accepted])).to.deep.equal([[1, true]]);
  });
});

describe('callbacks: retry schedule on a fake clock, then manual resend', function () {
  let svc: TestService;
  let receiver: CallbackReceiver;
  let dispatcher: CallbackDispatcher;
  let clock: sinon.SinonFakeTimers | null = null;

  before(async function () {
    svc = await startTestService({ workers: false });
    receiver = await new CallbackReceiver().start();
    dispatcher = dispatcherFor(svc, { retryBaseSeconds: 60, timeoutMs: 5000 });
  });
  afterEach(function () {
    clock?.restore();
    clock = null;
  });
  after(async function () {
    if (dispatcher) await dispatcher.stop();
    if (receiver) await receiver.stop();
    if (svc) await svc.stop();
  });

  it('retries at now + 60 x 2^retryTimes s, 10 times, then stays FAILED; resend re-queues it with a fresh budget', async function () {
    const T0 = Date.UTC(2031, 0, 15, 8, 0, 0);
    clock = sinon.useFakeTimers({ now: T0, toFake: ['Date'] });
    const app = await svc.createApp();
    const other = await svc.createApp();
    const c = clientFor(svc, app);
    const url = receiver.url('/cb/retry?attempt=any');
    await svc.service.storage.applications.setCallback(TEST_ACTOR, app.id, 'RECHARGE', url);
    let ack = false;
    let gate: Promise<Reply> | null = null;
    receiver.reply = () => gate ?? (ack ? { status: 200, body: '{"code":0}' } : { status: 500, body: 'down for maintenance' });
    const sequelize = svc.service.storage.database.sequelize;
    const t = await enqueue(sequelize, { applicationId: app.id, bizType: 'RECHARGE', bizId: 77, payload: { event: 'recharge', id: 77, amount: '0.001', txStatus: 'SETTLED' } });
    const otherTask = await enqueue(sequelize, { applicationId: other.id, bizType: 'RECHARGE', bizId: 1, payload: { event: 'recharge', id: 1 } }); // FAILED: no URL

    const sentAt: number[] = [];
    expect(await dispatcher.runOnce()).to.equal(1);
    sentAt.push(Date.now());
    let task = await taskOf(c, t.id);
    expect(task).to.include({ status: 'FAILED', retryTimes: 0, maxRetryTimes: 10, nextRetryTime: fmt(T0 + 60_000), lastError: 'HTTP 500', lastResponseSummary: 'down for maintenance' });
    expect(task.createTime).to.equal(fmt(T0));
    expect(await dispatcher.runOnce(), 'nothing is due before nextRetryTime').to.equal(0);

    for (let k = 1; k <= 10; k++) {
      const due = parseLocal(task.nextRetryTime!);
      clock.setSystemTime(due - 1000);
      expect(await dispatcher.runOnce(), `retry ${k} one second early`).to.equal(0);
      clock.setSystemTime(due);
      if (k === 3) {
        // while an attempt is in flight: PROCESSING, nothing planned, and resend is refused as busy
        let release!: (r: Reply) => void;
        gate = new Promise<Reply>((resolve) => (release = resolve));
        const run = dispatcher.runOnce();
        await receiver.waitFor(k + 1);
        const inFlight = await taskOf(c, t.id);
        expect(inFlight).to.include({ status: 'PROCESSING', retryTimes: 2, nextRetryTime: null });
        expectError(await c.post(RESEND, { callbackTaskId: t.id }), 200, Code.CALLBACK_TASK_BUSY, 'PROCESSING');
        expect(await attemptsOf(c, t.id)).to.have.length(3);
        gate = null;
        release({ status: 500, body: 'down for maintenance' });
        expect(await run, `retry ${k} when due`).to.equal(1);
      } else {
        expect(await dispatcher.runOnce(), `retry ${k} when due`).to.equal(1);
      }
      sentAt.push(due);
      task = await taskOf(c, t.id);
      expect(task.status, `after retry ${k}`).to.equal('FAILED');
      expect(task.retryTimes, `after retry ${k}`).to.equal(k);
      expect(task.nextRetryTime, `after retry ${k}`).to.equal(k < 10 ? fmt(due + 60_000 * 2 ** k) : null);
      expect(task.updateTime).to.equal(fmt(due));
    }
    // the whole schedule: 60 x (2^0 + ... + 2^9) s after the first delivery
    expect(sentAt[10]! - T0).to.equal(60_000 * (2 ** 10 - 1));
    clock.setSystemTime(T0 + 366 * 86400_000);
    expect(await dispatcher.runOnce(), 'nothing after the 10th retry').to.equal(0);
    expect(receiver.received).to.have.length(11);

    let attempts = await attemptsOf(c, t.id);
    expect(attempts.map((a) => a.attemptNo)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    attempts.forEach((a, i) => {
      expect(a.accepted).to.equal(false);
      expect(a.responseStatus).to.equal(500);
      expect(a.errorReason).to.equal('HTTP 500');
      expect(a.createTime).to.equal(fmt(sentAt[i]!));
      expect(a.nextRetryTime).to.equal(i < 10 ? fmt(sentAt[i]! + 60_000 * 2 ** i) : null);
    });
    // signatures on every attempt; same bytes, fresh nonce and the attempt's own timestamp
    const got = receiver.received;
    got.forEach((r, i) => {
      expect(verifyCallback(r, app.apiKey, app.apiSecret, sentAt[i]), `attempt ${i + 1}`).to.equal(null);
      expect(header(r, 'X-Timestamp')).to.equal(String(sentAt[i]));
      expect(r.body.equals(got[0]!.body)).to.equal(true);
      expect(sha256Hex(r.body)).to.equal(attempts[i]!.requestBodySha256);
      expect(r.body.length).to.equal(attempts[i]!.requestBodyLength);
      expect(r.target).to.equal('/cb/retry?attempt=any');
      checkHeaderSummary(attempts[i]!, url, app, r);
    });
    expect(new Set(got.map((r) => header(r, 'X-Nonce'))).size).to.equal(11);

    // manual resend through the signed API
    const resent: CallbackTaskView = expectOk(await c.post(RESEND, { callbackTaskId: t.id }));
    expect(resent).to.include({ id: t.id, status: 'WAITING', retryTimes: 0, nextRetryTime: null });
    expectError(await c.post(RESEND, { callbackTaskId: t.id }), 200, Code.CALLBACK_TASK_BUSY);
    expectError(await c.post(RESEND, { callbackTaskId: 987654321 }), 200, Code.CALLBACK_TASK_NOT_FOUND);
    expectError(await c.post(RESEND, { callbackTaskId: otherTask.id }), 200, Code.CALLBACK_TASK_NOT_FOUND);
    expectError(await clientFor(svc, other).post(RESEND, { callbackTaskId: t.id }), 200, Code.CALLBACK_TASK_NOT_FOUND);
    expect((await taskOf(c, t.id)).status).to.equal('WAITING');
    ack = true;
    expect(await dispatcher.runOnce()).to.equal(1);
    task = await taskOf(c, t.id);
    expect(task).to.include({ status: 'SUCCESS', retryTimes: 0, nextRetryTime: null, lastError: null, lastResponseSummary: '{"code":0}' });
    attempts = await attemptsOf(c, t.id);
    expect(attempts).to.have.length(12);
    expect(attempts[11]).to.include({ attemptNo: 12, accepted: true, responseStatus: 200, errorReason: null, nextRetryTime: null });
    expect(receiver.received).to.have.length(12);
    expect(receiver.received[11]!.body.equals(receiver.received[0]!.body)).to.equal(true);
    expect(verifyCallback(receiver.received[11]!, app.apiKey, app.apiSecret)).to.equal(null);

    // a SUCCESS task may be resent on purpose: one more delivery, same bytes
    expect(expectOk(await c.post(RESEND, { callbackTaskId: t.id }))).to.include({ status: 'WAITING', retryTimes: 0 });
    expect(await dispatcher.runOnce()).to.equal(1);
    expect((await attemptsOf(c, t.id)).map((a) => a.attemptNo)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    expect(receiver.received[12]!.body.equals(receiver.received[0]!.body)).to.equal(true);
    expect(await dispatcher.runOnce()).to.equal(0);
    // the other application's task was never touched
    const otherView = await taskOf(clientFor(svc, other), otherTask.id);
    expect(otherView).to.include({ status: 'FAILED', retryTimes: 0 });
  });
});

describe('callbacks: GET callback/tasks and callback/attempts (filters, paging, validation, isolation)', function () {
  let svc: TestService;
  let receiver: CallbackReceiver;
  let appA: CreatedApplication;
  let appB: CreatedApplication;
  let a: SigningClient;
  let b: SigningClient;
  interface Model { id: number; bizType: BizType; bizId: number; status: string; createdAt: number }
  const model: Model[] = [];
  let bTaskId = 0;
  const T = Date.UTC(2024, 4, 1, 0, 0, 0);
  const order = (x: Model[]) => [...x].sort((p, q) => q.createdAt - p.createdAt || q.id - p.id).map((m) => m.id);
  const ids = (r: { list: CallbackTaskView[] }) => r.list.map((t) => t.id);

  before(async function () {
    svc = await startTestService({ workers: false });
    receiver = await new CallbackReceiver().start();
    receiver.reply = (r) => (r.target.startsWith('/ok') ? { status: 200, body: 'ok' } : { status: 500, body: 'no' });
    appA = await svc.createApp();
    appB = await svc.createApp();
    a = clientFor(svc, appA);
    b = clientFor(svc, appB);
    const apps = svc.service.storage.applications;
    await apps.setCallback(TEST_ACTOR, appA.id, 'RECHARGE', receiver.url('/ok/recharge'));
    await apps.setCallback(TEST_ACTOR, appA.id, 'WITHDRAW', receiver.url('/fail/withdraw'));
    const sequelize = svc.service.storage.database.sequelize;
    // 45 tasks, one a minute, every other one half a second past the minute; no URL for COLLECT -> FAILED at once
    const phase1: BizType[] = ['RECHARGE', 'WITHDRAW', 'COLLECT'];
    const phase2: BizType[] = ['TRANSFER', 'CHAIN_EVENT'];
    const plan = Array.from({ length: 45 }, (_, i) => ({ i, bizType: [...phase1, ...phase2][i % 5]!, bizId: 100 + (i % 7), createdAt: T + i * 60_000 + (i % 2) * 500 }));
    const add = async (p: (typeof plan)[number]) => {
      const r = await enqueue(sequelize, { applicationId: appA.id, bizType: p.bizType, bizId: p.bizId, payload: { event: p.bizType.toLowerCase(), id: p.bizId } }, new Date(p.createdAt));
      model.push({ id: r.id, bizType: p.bizType, bizId: p.bizId, status: r.status, createdAt: p.createdAt });
    };
    // insertion order differs from creation-time order on purpose
    for (const p of plan.filter((x) => phase1.includes(x.bizType)).reverse()) await add(p);
    const d = dispatcherFor(svc, { retryBaseSeconds: 3600 });
    try {
      expect(await drain(d)).to.equal(model.filter((m) => m.status === 'WAITING').length);
    } finally {
      await d.stop();
    }
    for (const m of model) if (m.bizType === 'RECHARGE') m.status = 'SUCCESS';
    for (const m of model) if (m.bizType === 'WITHDRAW') m.status = 'FAILED';
    await apps.setCallback(TEST_ACTOR, appA.id, 'TRANSFER', receiver.url('/ok/transfer'));
    await apps.setCallback(TEST_ACTOR, appA.id, 'CHAIN_EVENT', receiver.url('/ok/chain'));
    for (const p of plan.filter((x) => phase2.includes(x.bizType))) await add(p); // stay WAITING: no dispatcher runs from here on
    bTaskId = (await enqueue(sequelize, { applicationId: appB.id, bizType: 'RECHARGE', bizId: 100, payload: { event: 'recharge', id: 100 } }, new Date(T))).id;
  });
  after(async function () {
    if (receiver) await receiver.stop();
    if (svc) await svc.stop();
  });

  it('pages newest first with a correct total; pageSize defaults to 20 and goes up to 200', async function () {
    expect(model).to.have.length(45);
    expect(new Set(model.map((m) => m.status))).to.deep.equal(new Set(['SUCCESS', 'FAILED', 'WAITING']));
    const all = order(model);
    const p1 = await listTasks(a);
    const p2 = await listTasks(a, { pageNo: 2 });
    const p3 = await listTasks(a, { pageNo: 3, pageSize: 20 });
    const p4 = await listTasks(a, { pageNo: 4 });
    expect([p1.list.length, p2.list.length, p3.list.length, p4.list.length]).to.deep.equal([20, 20, 5, 0]);
    for (const p of [p1, p2, p3, p4]) expect(p.total).to.equal(45);
    expect([...ids(p1), ...ids(p2), ...ids(p3)]).to.deep.equal(all);
    expect(ids(await listTasks(a, { pageSize: 200 }))).to.deep.equal(all);
    expect(ids(await listTasks(a, { pageNo: 7, pageSize: 7 }))).to.deep.equal(all.slice(42));
    expect(ids(await listTasks(a, { pageNo: 1, pageSize: 1 }))).to.deep.equal(all.slice(0, 1));
    // deep pages are read from the older end (docs/callbacks.md, "Listing"): every page size still walks the same order
    for (const pageSize of [2, 7, 11, 22, 44]) {
      const walked: number[] = [];
      for (let pageNo = 1; pageNo <= Math.ceil(45 / pageSize); pageNo++) walked.push(...ids(await listTasks(a, { pageNo, pageSize })));
      expect(walked, `pageSize ${pageSize}`).to.deep.equal(all);
    }
    const first = p1.list[0]!;
    const m = model.find((x) => x.id === first.id)!;
    expect(first.createTime).to.equal(fmt(m.createdAt)).and.match(LOCAL_TIME);
    expect(first.updateTime).to.match(LOCAL_TIME);
    expect(Object.keys(first).sort()).to.deep.equal(TASK_FIELDS);
    const sample = (await listTasks(a, { pageSize: 200 })).list;
    for (const t of sample) {
      const mm = model.find((x) => x.id === t.id)!;
      expect({ bizType: t.bizType, bizId: t.bizId, status: t.status }).to.deep.equal({ bizType: mm.bizType, bizId: mm.bizId, status: mm.status });
    }
  });

  it('filters by bizType, bizId, status and creation time (inclusive, to the second), alone and combined', async function () {
    const check = async (q: Record<string, string | number>, pred: (m: Model) => boolean) => {
      const expected = order(model.filter(pred));
      const r = await listTasks(a, { ...q, pageSize: 200 });
      expect(ids(r), JSON.stringify(q)).to.deep.equal(expected);
      expect(r.total, JSON.stringify(q)).to.equal(expected.length);
      return expected.length;
    };
    const sec = (m: Model) => Math.floor(m.createdAt / 1000) * 1000;
    expect(await check({ bizType: 'WITHDRAW' }, (m) => m.bizType === 'WITHDRAW')).to.equal(9);
    expect(await check({ bizId: 103 }, (m) => m.bizId === 103)).to.be.above(0);
    expect(await check({ status: 'SUCCESS' }, (m) => m.status === 'SUCCESS')).to.equal(9);
    expect(await check({ status: 'FAILED' }, (m) => m.status === 'FAILED')).to.equal(18);
    expect(await check({ status: 'WAITING' }, (m) => m.status === 'WAITING')).to.equal(18);
    expect(await check({ status: 'PROCESSING' }, () => false)).to.equal(0);
    expect(await check({ bizType: 'CHAIN_EVENT', bizId: 104 }, (m) => m.bizType === 'CHAIN_EVENT' && m.bizId === 104)).to.be.above(0);
    const start = T + 10 * 60_000;
    const end = T + 21 * 60_000; // task 21 was created at 00:21:00.500 and is listed as 00:21:00
    expect(await check({ createTimeStart: fmt(start) }, (m) => sec(m) >= start)).to.equal(35);
    expect(await check({ createTimeEnd: fmt(end) }, (m) => sec(m) <= end)).to.equal(22);
    expect(await check({ createTimeStart: fmt(start), createTimeEnd: fmt(end) }, (m) => sec(m) >= start && sec(m) <= end)).to.equal(12);
    expect(await check({ createTimeStart: fmt(end), createTimeEnd: fmt(end) }, (m) => sec(m) === end)).to.equal(1);
    expect(await check({ createTimeStart: fmt(start), createTimeEnd: fmt(end), status: 'FAILED', bizType: 'COLLECT' }, (m) => sec(m) >= start && sec(m) <= end && m.status === 'FAILED' && m.bizType === 'COLLECT')).to.be.above(0);
    expect(await check({ createTimeStart: fmt(T + 86400_000) }, () => false)).to.equal(0);
    // paging within a filter
    const failed = order(model.filter((m) => m.status === 'FAILED'));
    const fp2 = await listTasks(a, { status: 'FAILED', pageSize: 5, pageNo: 2 });
    expect(ids(fp2)).to.deep.equal(failed.slice(5, 10));
    expect(fp2.total).to.equal(18);
  });

  it('refuses bad parameters with HTTP 400 and code 1000001003 naming the parameter', async function () {
    const bad: Array<[string, string]> = [
      ['pageSize=0', 'pageSize'],
      ['pageSize=201', 'pageSize'],
      ['pageSize=abc', 'pageSize'],
      ['pageSize=1.5', 'pageSize'],
      ['pageNo=0', 'pageNo'],
      ['pageNo=-1', 'pageNo'],
      ['bizType=NOPE', 'bizType'],
      ['bizType=recharge', 'bizType'],
      ['status=DONE', 'status'],
      ['bizId=abc', 'bizId'],
      ['createTimeStart=2026-13-01T00:00:00', 'createTimeStart'],
      ['createTimeStart=2026-02-30T00:00:00', 'createTimeStart'],
      ['createTimeEnd=2026-01-01', 'createTimeEnd'],
      ['createTimeEnd=2026-01-01T00:00:00Z', 'createTimeEnd'],
      ['createTimeStart=2026-01-02T00:00:00&createTimeEnd=2026-01-01T00:00:00', 'createTime'],
      ['foo=1', 'foo'],
      ['pageSize=10&pageSize=20', 'pageSize'],
    ];
    for (const [q, name] of bad) {
      const res = await a.get(`${TASKS}?${q}`);
      const msg = expectError(res, 400, Code.INVALID_PARAMETER);
      expect(msg, q).to.include(name);
    }
    for (const [q, name] of [['', 'callbackTaskId'], ['callbackTaskId=abc', 'callbackTaskId'], ['callbackTaskId=0', 'callbackTaskId'], [`callbackTaskId=${model[0]!.id}&x=1`, 'x']] as const) {
      const res = await a.get(q ? `${ATTEMPTS}?${q}` : ATTEMPTS);
      expect(expectError(res, 400, Code.INVALID_PARAMETER), q).to.include(name);
    }
    // the limits themselves are accepted
    expect((await listTasks(a, { pageSize: 200, pageNo: 1 })).list).to.have.length(45);
    expect((await listTasks(a, { pageSize: 1 })).list).to.have.length(1);
  });

  it('isolates applications: tasks and attempts of another application are never visible', async function () {
    const mine = await listTasks(b, { pageSize: 200 });
    expect(ids(mine)).to.deep.equal([bTaskId]);
    expect(mine.total).to.equal(1);
    expect(await listTasks(b, { bizType: 'RECHARGE', bizId: 100, createTimeStart: fmt(T - 1000), pageSize: 200 })).to.include({ total: 1 });
    expect(ids(await listTasks(a, { pageSize: 200 }))).to.not.include(bTaskId);
    expect((await listTasks(a, { bizId: 100, bizType: 'RECHARGE', pageSize: 200 })).list.every((t) => t.id !== bTaskId)).to.equal(true);

    const delivered = model.find((m) => m.status === 'SUCCESS')!;
    const own = await attemptsOf(a, delivered.id);
    expect(own.map((x) => [x.attemptNo, x.accepted, x.callbackTaskId])).to.deep.equal([[1, true, delivered.id]]);
    expectError(await b.get(`${ATTEMPTS}?callbackTaskId=${delivered.id}`), 200, Code.CALLBACK_TASK_NOT_FOUND);
    expectError(await a.get(`${ATTEMPTS}?callbackTaskId=${bTaskId}`), 200, Code.CALLBACK_TASK_NOT_FOUND);
    expectError(await a.get(`${ATTEMPTS}?callbackTaskId=999999999`), 200, Code.CALLBACK_TASK_NOT_FOUND);
    expectError(await b.post(RESEND, { callbackTaskId: delivered.id }), 200, Code.CALLBACK_TASK_NOT_FOUND);
    expect((await taskOf(a, delivered.id)).status).to.equal('SUCCESS');
    expect(await attemptsOf(b, bTaskId)).to.deep.equal([]);
  });
});
