/**
 * The client against a scripted loopback server: signing of every attempt, typed answers and
 * errors, the retry policy (what is retried, with a new nonce each time, how long it waits), the
 * withdrawal duplicate after an unknown outcome, pagination and the events feed.
 */
import { expect } from 'chai';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WcsClient, ROUTES, sameWithdrawOrder, type WcsClientOptions } from '../src/client';
import { ErrorCode, WcsApiError, WcsHttpError, WcsNetworkError, WcsTimeoutError, errorClassOf } from '../src/errors';
import { Transport, DEFAULT_RETRY, buildQuery, type AttemptInfo } from '../src/http';
import type { Withdraw, WithdrawItem } from '../src/api';
import { API_KEY, SECRET, ScriptedServer, err, ok, type Recorded } from './helpers';

const CHAINS = [{ chainId: 102, chainCode: 'ETH' }];

describe('client (scripted loopback server)', () => {
  const server = new ScriptedServer();
  let delays: number[];
  let attempts: AttemptInfo[];
  before(() => server.start());
  after(() => server.stop());
  beforeEach(() => {
    server.requests.length = 0;
    server.reply = () => ok(null);
    delays = [];
    attempts = [];
  });

  const client = (o: Partial<WcsClientOptions> = {}) =>
    new WcsClient({
      baseUrl: server.url,
      apiKey: API_KEY,
      apiSecret: SECRET,
      sleep: async (ms) => void delays.push(ms),
      onAttempt: (a) => void attempts.push(a),
      ...o,
    });
  const nonces = (rs: Recorded[] = server.requests) => rs.map((r) => String(r.headers['x-nonce']));

  it('signs each request per the spec: GET without a body, POST with the exact JSON bytes; answers the envelope data', async () => {
    server.reply = (r) => (r.url.startsWith('/api/v1/wallet/support/chains') ? ok(CHAINS) : ok({ id: 1, chainCode: 'ETH', address: '0xabc', memo: null, addressType: 'USER', externalUserId: 'u1', status: 'ACTIVE' }));
    const c = client();
    expect(await c.support.chains()).to.deep.equal(CHAINS);
    const a = await c.addresses.create({ chainCode: 'ETH', externalUserId: 'u1' });
    expect(a.address).to.equal('0xabc');
    const [get, post] = server.requests;
    expect(get!.method).to.equal('GET');
    expect(get!.body.length).to.equal(0);
    expect(get!.headers['content-type']).to.equal(undefined);
    expect(post!.method).to.equal('POST');
    expect(post!.body.toString()).to.equal('{"chainCode":"ETH","externalUserId":"u1"}');
    expect(post!.headers['content-type']).to.equal('application/json');
    for (let i = 0; i < 2; i++) {
      expect(server.verify(i), `request ${i} signature`).to.equal(true);
      expect(server.requests[i]!.headers['x-api-key']).to.equal(API_KEY);
      expect(server.requests[i]!.headers['x-timestamp']).to.match(/^\d{13}$/);
      expect(server.requests[i]!.headers['x-nonce']).to.match(/^[0-9a-f]{32}$/);
    }
  });

  it('query parameters: only the given ones, values as strings; the query is not signed', async () => {
    server.reply = () => ok({ list: [], total: 0 });
    await client().callbacks.tasks({ bizType: 'WITHDRAW', bizId: 0, pageSize: 50 });
    expect(server.requests[0]!.url).to.equal('/api/v1/wallet/callback/tasks?bizType=WITHDRAW&bizId=0&pageSize=50');
    expect(server.verify(0)).to.equal(true);
    expect(buildQuery({ a: undefined, b: null, c: 'x y', d: [1, 2] })).to.equal('?c=x+y&d=1&d=2');
    expect(buildQuery({})).to.equal('');
  });

  it('a base URL with a path prefix is kept and signed (behind a reverse proxy)', async () => {
    server.reply = () => ok(CHAINS);
    await client({ baseUrl: `${server.url}/wcs/` }).support.chains();
    expect(server.requests[0]!.url).to.equal('/wcs/api/v1/wallet/support/chains');
    expect(server.verify(0)).to.equal(true);
  });

  it('business errors: WcsApiError with the envelope code, msg, data, HTTP status and request id; never retried', async () => {
    server.reply = () => err(ErrorCode.CHAIN_NOT_ENABLED, 'Chain SOL is not enabled for this application');
    let e: unknown;
    await client().addresses.create({ chainCode: 'SOL', externalUserId: 'u1' }).catch((x: unknown) => (e = x));
    expect(e).to.be.instanceOf(WcsApiError);
    const a = e as WcsApiError;
    expect(a).to.include({ code: 1003001002, msg: 'Chain SOL is not enabled for this application', httpStatus: 200, requestId: 'req-0', attempts: 1, data: null });
    expect(a.envelope).to.deep.equal({ code: 1003001002, data: null, msg: 'Chain SOL is not enabled for this application' });
    expect(a.codeName).to.equal('CHAIN_NOT_ENABLED');
    expect(a.isBusinessError).to.equal(true);
    expect(a.request).to.deep.equal({ operation: 'createAddress', method: 'POST', path: '/api/v1/wallet/address/create' });
    expect(a.message).to.match(/^1003001002 CHAIN_NOT_ENABLED: Chain SOL/);
    expect(server.requests).to.have.length(1);
  });

  it('never retries 4xx (other than 429) or HTTP 500', async () => {
    for (const [status, code] of [[400, ErrorCode.INVALID_PARAMETER], [401, ErrorCode.AUTH_SIGNATURE_INVALID], [403, ErrorCode.AUTH_APPLICATION_DISABLED], [404, ErrorCode.NOT_FOUND], [500, ErrorCode.INTERNAL_ERROR]] as const) {
      server.requests.length = 0;
      server.reply = () => err(code, 'no', status);
      let e: unknown;
      await client().support.chains().catch((x: unknown) => (e = x));
      expect((e as WcsApiError).httpStatus).to.equal(status);
      expect((e as WcsApiError).code).to.equal(code);
      expect(server.requests, `HTTP ${status}`).to.have.length(1);
    }
    expect(errorClassOf(ErrorCode.AUTH_SIGNATURE_INVALID)).to.equal('AUTH');
    expect(errorClassOf(ErrorCode.INVALID_PARAMETER)).to.equal('REQUEST');
    expect(errorClassOf(ErrorCode.NOT_FOUND)).to.equal('ROUTING');
    expect(errorClassOf(ErrorCode.KEYSTORE_UNAVAILABLE)).to.equal('INTERNAL');
  });

  it('reads are retried on 502/503/504, each attempt signed anew (new nonce, valid signature), with growing jittered delays', async () => {
    server.reply = (_r, i) => (i === 0 ? err(ErrorCode.SERVICE_UNAVAILABLE, 'x', 503) : i === 1 ? { status: 502, body: '<html>bad gateway</html>' } : i === 2 ? { status: 504, body: '' } : ok(CHAINS));
    const c = client({ random: () => 0.5 });
    expect(await c.support.chains()).to.deep.equal(CHAINS);
    expect(server.requests).to.have.length(4);
    expect(new Set(nonces()).size).to.equal(4);
    for (let i = 0; i < 4; i++) expect(server.verify(i)).to.equal(true);
    // 250 ms base, doubling, half fixed and half random (random = 0.5: three quarters)
    expect(delays).to.deep.equal([188, 375, 750]);
    expect(attempts.map((a) => [a.attempt, a.status, a.retryInMs])).to.deep.equal([[1, 503, 188], [2, 502, 375], [3, 504, 750], [4, 200, null]]);
  });

  it('a 503 with Retry-After (the service\'s database unreachable) is retried no sooner than it says; one longer than maxRetryAfterMs ends the retries', async () => {
    server.reply = (_r, i) => (i === 0 ? err(ErrorCode.SERVICE_UNAVAILABLE, 'database unavailable', 503, { 'retry-after': '2' }) : ok(CHAINS));
    expect(await client({ random: () => 0.5 }).support.chains()).to.deep.equal(CHAINS);
    expect(delays).to.deep.equal([2000]);
    server.requests.length = 0;
    delays.length = 0;
    server.reply = () => err(ErrorCode.SERVICE_UNAVAILABLE, 'database unavailable', 503, { 'retry-after': '120' });
    let e: unknown;
    await client().support.chains().catch((x: unknown) => (e = x));
    expect(e).to.be.instanceOf(WcsApiError);
    expect(e).to.include({ httpStatus: 503, attempts: 1, retryAfterSeconds: 120 });
    expect(server.requests).to.have.length(1);
    // an unsafe write is still never retried on a 503, whatever it says
    server.requests.length = 0;
    server.reply = () => err(ErrorCode.SERVICE_UNAVAILABLE, 'database unavailable', 503, { 'retry-after': '1' });
    await client().callbacks.resend({ callbackTaskId: 7 }).catch(() => undefined);
    expect(server.requests).to.have.length(1);
  });

  it('backoff: bounded by maxDelayMs, at least half of the step, at most the step', () => {
    const lo = new Transport({ baseUrl: 'http://x', signer: null, random: () => 0 });
    const hi = new Transport({ baseUrl: 'http://x', signer: null, random: () => 0.999999 });
    const r = { ...DEFAULT_RETRY, maxRetries: 20 };
    for (let n = 1; n <= 20; n++) {
      const step = Math.min(r.maxDelayMs, r.baseDelayMs * 2 ** (n - 1));
      expect(lo.backoff(n, r)).to.equal(Math.round(step / 2));
      expect(hi.backoff(n, r)).to.be.at.most(step).and.at.least(step / 2);
    }
    expect(hi.backoff(20, r)).to.be.at.most(5000);
  });

  it('gives up after maxRetries and throws the last error', async () => {
    server.reply = () => ({ status: 503, body: '<html>down</html>' });
    let e: unknown;
    await client({ retry: { maxRetries: 2 } }).support.chains().catch((x: unknown) => (e = x));
    expect(e).to.be.instanceOf(WcsHttpError);
    expect(e).to.include({ httpStatus: 503, attempts: 3 });
    expect(server.requests).to.have.length(3);
    // retry: false per call
    server.requests.length = 0;
    await client().support.chains({ retry: false }).catch(() => undefined);
    expect(server.requests).to.have.length(1);
  });

  it('429: retried for every operation (nothing was done), waiting Retry-After; a longer Retry-After than allowed is not waited for', async () => {
    server.reply = (_r, i) => (i === 0 ? err(ErrorCode.RATE_LIMITED, 'slow down', 429, { 'Retry-After': '2' }) : ok({ id: 7, status: 'WAITING' }));
    // resend is not safe to repeat after an unknown outcome, but a 429 is a known "not done"
    const t = await client().callbacks.resend({ callbackTaskId: 7 });
    expect(t).to.deep.equal({ id: 7, status: 'WAITING' });
    expect(server.requests).to.have.length(2);
    expect(delays).to.deep.equal([2000]);
    expect(nonces()[0]).to.not.equal(nonces()[1]);

    server.requests.length = 0;
    server.reply = () => err(ErrorCode.RATE_LIMITED, 'slow down', 429, { 'Retry-After': '120' });
    let e: unknown;
    await client().support.chains().catch((x: unknown) => (e = x));
    expect(e).to.be.instanceOf(WcsApiError);
    expect(e).to.include({ code: ErrorCode.RATE_LIMITED, httpStatus: 429, retryAfterSeconds: 120 });
    expect(server.requests).to.have.length(1);
  });

  it('unsafe writes (resend, subscription update and delete) are not retried on 502/503/504, timeouts or network errors', async () => {
    expect(ROUTES.resendCallback.retry).to.equal('unsafe');
    server.reply = () => ({ status: 502, body: 'bad gateway' });
    let e: unknown;
    await client().callbacks.resend({ callbackTaskId: 1 }).catch((x: unknown) => (e = x));
    expect(e).to.be.instanceOf(WcsHttpError);
    expect(server.requests).to.have.length(1);
    server.requests.length = 0;
    server.reply = () => ({ delayMs: 500, ...ok(null) });
    e = undefined;
    await client({ timeoutMs: 100 }).chainEvents.subscriptions.delete({ id: 1 }).catch((x: unknown) => (e = x));
    expect(e).to.be.instanceOf(WcsTimeoutError);
    expect(server.requests).to.have.length(1);
  });

  it('timeouts: an attempt is aborted after timeoutMs (WcsTimeoutError); reads and idempotent writes are retried', async () => {
    server.reply = (_r, i) => (i < 2 ? { delayMs: 400, ...ok(CHAINS) } : ok(CHAINS));
    const started = Date.now();
    expect(await client({ timeoutMs: 100 }).support.chains()).to.deep.equal(CHAINS);
    expect(Date.now() - started).to.be.below(380 * 2);
    expect(attempts.map((a) => a.error?.name ?? 'ok')).to.deep.equal(['WcsTimeoutError', 'WcsTimeoutError', 'ok']);
    expect(new Set(nonces()).size).to.equal(3);
    // an idempotent write too (address create)
    server.requests.length = 0;
    server.reply = (_r, i) => (i === 0 ? { delayMs: 400, ...ok({ id: 1 }) } : ok({ id: 1 }));
    expect(await client({ timeoutMs: 100 }).addresses.create({ chainCode: 'ETH', externalUserId: 'u' })).to.deep.equal({ id: 1 });
    expect(server.requests.map((r) => r.body.toString())).to.deep.equal(Array(2).fill('{"chainCode":"ETH","externalUserId":"u"}'));
  });

  it('network errors: WcsNetworkError, retried for reads; a closed connection too', async () => {
    const dead = http.createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const port = (dead.address() as AddressInfo).port;
    await new Promise((r) => dead.close(r));
    let e: unknown;
    await client({ baseUrl: `http://127.0.0.1:${port}`, retry: { maxRetries: 2 } }).support.chains().catch((x: unknown) => (e = x));
    expect(e).to.be.instanceOf(WcsNetworkError);
    expect((e as WcsNetworkError).attempts).to.equal(3);
    expect((e as Error).message).to.match(/ECONNREFUSED/);
    server.reply = (_r, i) => (i === 0 ? { destroy: true } : ok(CHAINS));
    expect(await client().support.chains()).to.deep.equal(CHAINS);
    expect(server.requests).to.have.length(2);
  });

  it('a caller AbortSignal stops the call, also during a retry wait', async () => {
    server.reply = () => ({ status: 503, body: 'x' });
    const ctrl = new AbortController();
    const c = client({ sleep: undefined, retry: { baseDelayMs: 10_000, maxDelayMs: 10_000 } });
    setTimeout(() => ctrl.abort(), 100);
    const started = Date.now();
    let e: unknown;
    await c.support.chains({ signal: ctrl.signal }).catch((x: unknown) => (e = x));
    expect(e).to.be.instanceOf(WcsNetworkError);
    expect((e as Error).message).to.match(/aborted/);
    expect(Date.now() - started).to.be.below(2000);
  });

  it('ready(): ready, or not_ready with the checks (HTTP 503, not thrown, not retried); health(); openapi() is not an envelope', async () => {
    server.reply = (r) =>
      r.url === '/readyz'
        ? { status: 503, body: { code: ErrorCode.SERVICE_UNAVAILABLE, msg: 'Service is not ready', data: { status: 'not_ready', checks: { database: 'ok', keystore: 'locked' } } } }
        : r.url === '/healthz'
          ? ok({ status: 'ok' })
          : { body: { openapi: '3.1.0', info: { title: 't' }, paths: {} } };
    const c = new WcsClient({ baseUrl: server.url });
    expect(await c.ready()).to.deep.equal({ status: 'not_ready', checks: { database: 'ok', keystore: 'locked' } });
    expect(server.requests).to.have.length(1);
    expect(server.requests[0]!.headers['x-signature']).to.equal(undefined);
    expect(await c.health()).to.deep.equal({ status: 'ok' });
    expect((await c.openapi()).openapi).to.equal('3.1.0');
    let e: unknown;
    await c.support.chains().catch((x: unknown) => (e = x));
    expect(String(e)).to.match(/no apiKey\/apiSecret/);
  });

  it('amounts stay strings end to end', async () => {
    server.reply = () => ok({ appOrderNo: 'o1', amount: '0.000000000000000001', fee: '123456789012345678901234567890.5' });
    const w = await client().withdrawals.get({ appOrderNo: 'o1' });
    expect(w.amount).to.equal('0.000000000000000001');
    expect(w.fee).to.equal('123456789012345678901234567890.5');
  });

  describe('withdrawals after an unknown outcome', () => {
    const item: WithdrawItem = { appOrderNo: 'ord-1', chainCode: 'ETH', chainTokenId: 10200, toAddress: '0x9858effd232b4033e47d90003d41ec34ecaeda94', amount: '1.50' };
    const existing = { id: 9, appOrderNo: 'ord-1', chainCode: 'ETH', chainTokenId: 10200, toAddress: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', amount: '1.5', memo: null, status: 'PROCESSING' } as unknown as Withdraw;
    const dup = err(ErrorCode.WITHDRAW_ORDER_DUPLICATE, 'appOrderNo was already used by this application; the existing order is unchanged');

    it('create: the first attempt was accepted but its answer lost (502); the retry meets the duplicate; the existing (same) order is returned', async () => {
      server.reply = (r, i) => (r.url.startsWith('/api/v1/wallet/withdraw/get') ? ok(existing) : i === 0 ? { status: 502, body: 'bad gateway' } : dup);
      const w = await client().withdrawals.create(item);
      expect(w).to.deep.equal(existing);
      expect(server.requests.map((r) => `${r.method} ${r.url}`)).to.deep.equal([
        'POST /api/v1/wallet/withdraw/create', 'POST /api/v1/wallet/withdraw/create', 'GET /api/v1/wallet/withdraw/get?appOrderNo=ord-1',
      ]);
      expect(server.requests[0]!.body.equals(server.requests[1]!.body)).to.equal(true);
      expect(nonces()[0]).to.not.equal(nonces()[1]);
    });

    it('create: a duplicate with another order under the number, or with no unknown outcome before, is thrown', async () => {
      server.reply = (r, i) => (r.url.startsWith('/api/v1/wallet/withdraw/get') ? ok({ ...existing, amount: '2' }) : i === 0 ? { status: 503, body: '' } : dup);
      let e: unknown;
      await client().withdrawals.create(item).catch((x: unknown) => (e = x));
      expect((e as WcsApiError).code).to.equal(ErrorCode.WITHDRAW_ORDER_DUPLICATE);
      server.requests.length = 0;
      server.reply = (r) => (r.url.startsWith('/api/v1/wallet/withdraw/get') ? ok(existing) : dup);
      e = undefined;
      await client().withdrawals.create(item).catch((x: unknown) => (e = x));
      expect((e as WcsApiError).code).to.equal(ErrorCode.WITHDRAW_ORDER_DUPLICATE);
      expect(server.requests).to.have.length(1);
      // a 429 first is a known "not done": a duplicate after it is genuine
      server.requests.length = 0;
      server.reply = (r, i) => (r.url.startsWith('/api/v1/wallet/withdraw/get') ? ok(existing) : i === 0 ? err(ErrorCode.RATE_LIMITED, 'x', 429, { 'Retry-After': '1' }) : dup);
      e = undefined;
      await client().withdrawals.create(item).catch((x: unknown) => (e = x));
      expect((e as WcsApiError).code).to.equal(ErrorCode.WITHDRAW_ORDER_DUPLICATE);
    });

    it('sameWithdrawOrder: chain, token, address (EVM in any case), amount as a decimal; the memo when one is given (null is none)', () => {
      expect(sameWithdrawOrder(item, existing)).to.equal(true);
      expect(sameWithdrawOrder({ ...item, toMemo: null }, existing)).to.equal(true);
      expect(sameWithdrawOrder({ ...item, toMemo: '' }, existing)).to.equal(true);
      expect(sameWithdrawOrder({ ...item, toMemo: '7' }, existing)).to.equal(false);
      expect(sameWithdrawOrder({ ...item, toMemo: '7' }, { ...existing, memo: '7' })).to.equal(true);
      expect(sameWithdrawOrder({ ...item, amount: '1.51' }, existing)).to.equal(false);
      expect(sameWithdrawOrder({ ...item, chainTokenId: 10201 }, existing)).to.equal(false);
    });

    it('batch-create: items an earlier attempt accepted come back as successes with their order; counts follow', async () => {
      const other: WithdrawItem = { ...item, appOrderNo: 'ord-2', amount: '3' };
      const third: WithdrawItem = { ...item, appOrderNo: 'ord-3' };
      server.reply = (r, i) => {
        if (r.url.startsWith('/api/v1/wallet/withdraw/get')) return r.url.endsWith('ord-1') ? ok(existing) : ok({ ...existing, appOrderNo: 'ord-3', amount: '99' });
        if (i === 0) return { destroy: true };
        return ok({ total: 3, successCount: 1, failedCount: 2, items: [
          { appOrderNo: 'ord-1', success: false, withdraw: null, errorCode: ErrorCode.WITHDRAW_ORDER_DUPLICATE, errorMessage: 'dup' },
          { appOrderNo: 'ord-2', success: true, withdraw: { ...existing, appOrderNo: 'ord-2', amount: '3' }, errorCode: null, errorMessage: null },
          { appOrderNo: 'ord-3', success: false, withdraw: null, errorCode: ErrorCode.WITHDRAW_ORDER_DUPLICATE, errorMessage: 'dup' },
        ] });
      };
      const res = await client().withdrawals.batchCreate({ items: [item, other, third] });
      expect(res.successCount).to.equal(2);
      expect(res.failedCount).to.equal(1);
      expect(res.items[0]).to.deep.equal({ appOrderNo: 'ord-1', success: true, withdraw: existing, errorCode: null, errorMessage: null });
      expect(res.items[1]!.success).to.equal(true);
      expect(res.items[2]).to.include({ success: false, errorCode: ErrorCode.WITHDRAW_ORDER_DUPLICATE });
    });
  });

  describe('pagination and the events feed', () => {
    it('iterate(): every record once, pages of 200 until ceil(total / pageSize), repeated ids skipped', async () => {
      const ids = Array.from({ length: 450 }, (_, i) => i + 1);
      server.reply = (r) => {
        const q = new URL(r.url, 'http://x').searchParams;
        const pageNo = Number(q.get('pageNo'));
        const size = Number(q.get('pageSize'));
        // a record created during the walk pushes the later pages down by one: page 2 starts with the last id of page 1
        const start = (pageNo - 1) * size - (pageNo > 1 ? 1 : 0);
        return ok({ list: ids.slice(start, start + size).map((id) => ({ id })), total: ids.length });
      };
      const got: number[] = [];
      for await (const r of client().recharges.iterate({ txStatus: 'SETTLED' })) got.push(r.id);
      expect(got).to.deep.equal(ids);
      expect(server.requests.map((r) => r.url)).to.deep.equal([1, 2, 3].map((n) => `/api/v1/wallet/recharge/list?txStatus=SETTLED&pageNo=${n}&pageSize=200`));
    });

    const item = (n: number) => ({ id: n, cursor: `c${n}`, bizType: 'RECHARGE', bizId: n, createTime: '2026-11-22T06:45:52', payload: { event: 'test', applicationId: 1, bizType: 'RECHARGE', message: 'm', createTime: '2026-11-22T06:45:52' } });

    it('events.page(): the feed page, after and limit passed through', async () => {
      server.reply = () => ok({ list: [item(1)], nextCursor: 'c1', hasMore: false });
      const p = await client().events.page({ after: 'c0', limit: 1 });
      expect(p.list[0]!.payload.event).to.equal('test');
      expect(server.requests[0]!.url).to.equal('/api/v1/wallet/events?after=c0&limit=1');
      expect(server.verify(0)).to.equal(true);
    });

    it('events.iterate(): follows nextCursor until hasMore is false; cursor is the position after the last event handed out', async () => {
      const pages: Record<string, { list: unknown[]; nextCursor: string; hasMore: boolean }> = {
        '': { list: [item(1), item(2)], nextCursor: 'c2', hasMore: true },
        c2: { list: [item(3), item(4)], nextCursor: 'c4', hasMore: true },
        c4: { list: [item(5)], nextCursor: 'c5', hasMore: false },
      };
      server.reply = (r) => ok(pages[new URL(r.url, 'http://x').searchParams.get('after') ?? '']);
      const it = client().events.iterate({ limit: 2 });
      expect(it.cursor).to.equal(undefined);
      const seen: Array<[number, string | undefined]> = [];
      for await (const ev of it) seen.push([ev.id, it.cursor]);
      expect(seen).to.deep.equal([[1, 'c1'], [2, 'c2'], [3, 'c3'], [4, 'c4'], [5, 'c5']]);
      expect(it.cursor).to.equal('c5');
      expect(it.pagesRead).to.equal(3);
      expect(server.requests.map((r) => r.url)).to.deep.equal(['/api/v1/wallet/events?limit=2', '/api/v1/wallet/events?limit=2&after=c2', '/api/v1/wallet/events?limit=2&after=c4']);
      // resuming from a saved cursor with nothing new: one page, the cursor stays
      server.requests.length = 0;
      server.reply = () => ok({ list: [], nextCursor: 'c5', hasMore: false });
      const again = client().events.iterate({ after: 'c5' });
      for await (const ev of again) throw new Error(`unexpected ${ev.id}`);
      expect(again.cursor).to.equal('c5');
      // pages()
      server.reply = (r) => ok(pages[new URL(r.url, 'http://x').searchParams.get('after') ?? '']);
      const sizes: number[] = [];
      for await (const p of client().events.pages({ limit: 2 })) sizes.push(p.list.length);
      expect(sizes).to.deep.equal([2, 2, 1]);
    });

    it('events: a cursor error is a typed WcsApiError', async () => {
      server.reply = () => err(ErrorCode.EVENT_CURSOR_EXPIRED, 'The cursor points before the retention window');
      let e: unknown;
      try {
        for await (const ev of client().events.iterate({ after: 'old' })) throw new Error(`unexpected ${ev.id}`);
      } catch (x) {
        e = x;
      }
      expect(e).to.be.instanceOf(WcsApiError);
      expect((e as WcsApiError).codeName).to.equal('EVENT_CURSOR_EXPIRED');
      expect(server.requests).to.have.length(1);
    });
  });
});
