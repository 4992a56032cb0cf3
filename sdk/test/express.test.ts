/**
 * The express middleware in a real express 5 app over real HTTP on loopback, with express.json()
 * in every order: the middleware before a global express.json(); express.json() first with the
 * captureRawBody hook; express.json() first without it (a loud configuration error); express.raw().
 */
import { expect } from 'chai';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expressWebhook, captureRawBody, WebhookConfigurationError } from '../src/webhooks/express';
import { InMemoryReplayStore, InMemorySeenSet } from '../src/webhooks/stores';
import type { WebhookEvent } from '../src/api';
import { SECRET, callbackHeaders, webhookExamples } from './helpers';

interface Posted {
  status: number;
  text: string;
}

async function post(base: string, path: string, body: Buffer, headers: Record<string, string>): Promise<Posted> {
  const res = await fetch(base + path, { method: 'POST', headers, body });
  return { status: res.status, text: await res.text() };
}

function listen(app: express.Express): Promise<{ server: Server; url: string }> {
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
  });
}

const EXAMPLES = webhookExamples();
const bodyOf = (event: string) => Buffer.from(JSON.stringify(EXAMPLES.find((e) => e.event === event)!.body), 'utf8');
/** A body whose bytes differ from its re-serialisation: a re-serialising middleware could never verify it. */
const SPACED = Buffer.from('{ "event" : "test", "applicationId": 1, "bizType": "RECHARGE", "message": "héllo ✓", "createTime": "2026-11-22T06:45:52" }\n', 'utf8');

describe('express middleware (real express app, real HTTP)', () => {
  const servers: Server[] = [];
  after(async () => {
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });

  async function app(setup: (app: express.Express, got: WebhookEvent[], errors: unknown[]) => void): Promise<{ url: string; got: WebhookEvent[]; errors: unknown[] }> {
    const a = express();
    const got: WebhookEvent[] = [];
    const errors: unknown[] = [];
    setup(a, got, errors);
    a.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      errors.push(err);
      res.status(500).json({ code: 1, msg: 'error handler' });
    });
    const { server, url } = await listen(a);
    servers.push(server);
    return { url, got, errors };
  }

  it('mounted before a global express.json(): reads the raw body itself; later parsers leave it alone; ACKs with {"code":0}', async () => {
    let laterBody: unknown = 'unset';
    const { url, got } = await app((a, got) => {
      a.use('/hooks/wcs', expressWebhook({ apiSecret: SECRET, onEvent: (e) => void got.push(e) }));
      a.use(express.json());
      a.post('/other', (req, res) => {
        laterBody = req.body;
        res.json({ ok: true });
      });
    });
    for (const body of [bodyOf('recharge'), bodyOf('withdraw'), SPACED]) {
      const r = await post(url, '/hooks/wcs', body, callbackHeaders(body, { path: '/hooks/wcs' }));
      expect(r, r.text).to.deep.equal({ status: 200, text: '{"code":0}' });
    }
    expect(got.map((e) => e.event)).to.deep.equal(['recharge', 'withdraw', 'test']);
    expect(got[2]).to.include({ message: 'héllo ✓' });
    // the global express.json() still works for the app's other routes
    const o = await fetch(`${url}/other`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"a":1}' });
    expect(o.status).to.equal(200);
    expect(laterBody).to.deep.equal({ a: 1 });
  });

  it('route-level after express.json({ verify: captureRawBody }): verifies req.rawBody, every event type', async () => {
    let seenBody: unknown;
    const { url, got } = await app((a, got) => {
      a.use(express.json({ verify: captureRawBody }));
      a.post('/cb', expressWebhook({ apiSecret: SECRET, onEvent: (e, ctx) => {
        got.push(e);
        seenBody = (ctx.request as unknown as { body: unknown }).body;
      } }));
    });
    for (const ex of EXAMPLES) {
      const body = Buffer.from(JSON.stringify(ex.body));
      const r = await post(url, '/cb', body, callbackHeaders(body, { path: '/cb' }));
      expect(r.status, `${ex.event}: ${r.text}`).to.equal(200);
    }
    expect(got.map((e) => e.event)).to.deep.equal(EXAMPLES.map((e) => e.event));
    // bytes that differ from their re-serialisation verify too: the raw bytes are used, not req.body
    const r = await post(url, '/cb', SPACED, callbackHeaders(SPACED, { path: '/cb' }));
    expect(r.status, r.text).to.equal(200);
    expect(seenBody).to.deep.equal(JSON.parse(SPACED.toString()));
  });

  it('after express.json() WITHOUT the hook: a loud WebhookConfigurationError to next(), HTTP 500, the handler never runs', async () => {
    const { url, got, errors } = await app((a, got) => {
      a.use(express.json());
      a.post('/cb', expressWebhook({ apiSecret: SECRET, onEvent: (e) => void got.push(e) }));
    });
    const body = bodyOf('recharge');
    const r = await post(url, '/cb', body, callbackHeaders(body, { path: '/cb' }));
    expect(r.status).to.equal(500);
    expect(got).to.have.length(0);
    expect(errors).to.have.length(1);
    expect(errors[0]).to.be.instanceOf(WebhookConfigurationError);
    expect(String((errors[0] as Error).message)).to.match(/captureRawBody/).and.match(/before express\.json\(\)/);
  });

  it('after express.raw({ type: "application/json" }): req.body is the bytes', async () => {
    const { url, got } = await app((a, got) => {
      a.post('/raw', express.raw({ type: 'application/json' }), expressWebhook({ apiSecret: SECRET, onEvent: (e) => void got.push(e) }));
    });
    const r = await post(url, '/raw', SPACED, callbackHeaders(SPACED, { path: '/raw' }));
    expect(r.status, r.text).to.equal(200);
    expect(got).to.have.length(1);
  });

  it('refuses (non-ACK) a bad signature, a stale timestamp, a replay, a missing header; the handler never runs', async () => {
    const { url, got } = await app((a, got) => {
      a.use(express.json({ verify: captureRawBody }));
      a.post('/cb', expressWebhook({ apiSecret: SECRET, replayStore: new InMemoryReplayStore(), onEvent: (e) => void got.push(e) }));
    });
    const body = bodyOf('recharge');
    const bad = await post(url, '/cb', body, callbackHeaders(body, { path: '/cb', secret: 'wrong' }));
    expect(bad.status).to.equal(401);
    expect(JSON.parse(bad.text)).to.deep.equal({ code: 1, msg: 'BAD_SIGNATURE' });
    expect((await post(url, '/cb', body, callbackHeaders(body, { path: '/cb', timestamp: Date.now() - 400_000 }))).status).to.equal(401);
    const h = callbackHeaders(body, { path: '/cb' });
    expect((await post(url, '/cb', body, h)).status).to.equal(200);
    const replay = await post(url, '/cb', body, h);
    expect(replay.status).to.equal(401);
    expect(JSON.parse(replay.text).msg).to.equal('REPLAYED');
    const noSig = { ...callbackHeaders(body, { path: '/cb' }) } as Record<string, string>;
    delete noSig['x-signature'];
    expect(JSON.parse((await post(url, '/cb', body, noSig)).text).msg).to.equal('MISSING_HEADER');
    // the signed path is the one the app was called on, mount path included, query excluded
    expect((await post(url, '/cb?x=1', body, callbackHeaders(body, { path: '/cb' }))).status).to.equal(200);
    expect((await post(url, '/cb', body, callbackHeaders(body, { path: '/elsewhere' }))).status).to.equal(401);
    expect(got).to.have.length(2);
  });

  it('a handler that throws gets a 500 (the service retries); a SeenStore ACKs a repeated event without running the handler again', async () => {
    let fail = true;
    const handled: string[] = [];
    const errors: unknown[] = [];
    const { url } = await app((a) => {
      a.post('/cb', expressWebhook({
        apiSecret: SECRET,
        seen: new InMemorySeenSet(),
        onError: (e) => void errors.push(e),
        onEvent: (_e, ctx) => {
          if (fail) throw new Error('database down');
          handled.push(ctx.dedupeKey ?? 'null');
        },
      }));
    });
    const body = bodyOf('withdraw');
    const first = await post(url, '/cb', body, callbackHeaders(body, { path: '/cb' }));
    expect(first.status).to.equal(500);
    expect(JSON.parse(first.text)).to.deep.equal({ code: 1, msg: 'handler failed' });
    expect(String(errors[0])).to.match(/database down/);
    fail = false;
    // the service's retry: a new nonce and timestamp, the same bytes
    for (let i = 0; i < 3; i++) expect((await post(url, '/cb', body, callbackHeaders(body, { path: '/cb' }))).status).to.equal(200);
    const w = EXAMPLES.find((e) => e.event === 'withdraw')!.body;
    expect(handled).to.deep.equal([`withdraw:${String(w.appOrderNo)}:${String(w.status)}`]);
    // a test event has no key: always handled
    const t = bodyOf('test');
    for (let i = 0; i < 2; i++) expect((await post(url, '/cb', t, callbackHeaders(t, { path: '/cb' }))).status).to.equal(200);
    expect(handled).to.have.length(3);
  });

  it('a path option for proxies that rewrite the path', async () => {
    const { url, got } = await app((a, got) => {
      a.post('/internal/cb', expressWebhook({ apiSecret: SECRET, path: '/public/wcs', onEvent: (e) => void got.push(e) }));
    });
    const body = bodyOf('test');
    expect((await post(url, '/internal/cb', body, callbackHeaders(body, { path: '/public/wcs' }))).status).to.equal(200);
    expect((await post(url, '/internal/cb', body, callbackHeaders(body, { path: '/internal/cb' }))).status).to.equal(401);
    expect(got).to.have.length(1);
  });

  it('a body above limitBytes is refused with 413 without being kept', async () => {
    const { url, got } = await app((a, got) => {
      a.post('/cb', expressWebhook({ apiSecret: SECRET, limitBytes: 64, onEvent: (e) => void got.push(e) }));
    });
    const body = bodyOf('collect');
    expect((await post(url, '/cb', body, callbackHeaders(body, { path: '/cb' }))).status).to.equal(413);
    expect(got).to.have.length(0);
  });
});
