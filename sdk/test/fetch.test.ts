/** The fetch handler with real Web-standard Request objects, as Next.js route handlers get them. */
import { expect } from 'chai';
import { fetchWebhookHandler } from '../src/webhooks/fetch';
import { InMemorySeenSet } from '../src/webhooks/stores';
import type { WebhookEvent } from '../src/api';
import { SECRET, callbackHeaders, webhookExamples } from './helpers';

const ORIGIN = 'https://merchant.example.com';

function signedRequest(body: Buffer, path: string, o: { secret?: string; url?: string } = {}): Request {
  return new Request(o.url ?? ORIGIN + path, { method: 'POST', headers: callbackHeaders(body, { path, secret: o.secret }), body });
}

describe('fetch / Next.js handler (Request → Response)', () => {
  it('verifies, hands every event type over typed, answers 200 {"code":0}', async () => {
    const got: WebhookEvent[] = [];
    const POST = fetchWebhookHandler({ apiSecret: SECRET, onEvent: (e) => void got.push(e) });
    for (const ex of webhookExamples()) {
      const res = await POST(signedRequest(Buffer.from(JSON.stringify(ex.body)), '/api/wcs/callbacks'));
      expect(res.status).to.equal(200);
      expect(await res.text()).to.equal('{"code":0}');
      expect(res.headers.get('content-type')).to.match(/^application\/json/);
    }
    expect(got.map((e) => e.event)).to.deep.equal(webhookExamples().map((e) => e.event));
  });

  it('the signed path is the URL path without its query; a path option for proxies and basePaths', async () => {
    const body = Buffer.from('{"event":"test","applicationId":1,"bizType":"RECHARGE","message":"m","createTime":"2026-11-22T06:45:52"}');
    const POST = fetchWebhookHandler({ apiSecret: SECRET, onEvent: () => undefined });
    expect((await POST(signedRequest(body, '/cb', { url: `${ORIGIN}/cb?source=wcs` }))).status).to.equal(200);
    const proxied = fetchWebhookHandler({ apiSecret: SECRET, path: (r) => '/public' + new URL(r.url).pathname, onEvent: () => undefined });
    expect((await proxied(signedRequest(body, '/public/cb', { url: `${ORIGIN}/cb` }))).status).to.equal(200);
  });

  it('refuses a bad signature (401, handler not run), a GET (405); a throwing handler gets 500', async () => {
    let runs = 0;
    const body = Buffer.from(JSON.stringify(webhookExamples()[0]!.body));
    const POST = fetchWebhookHandler({ apiSecret: SECRET, onError: () => undefined, onEvent: () => {
      runs++;
      throw new Error('boom');
    } });
    const bad = await POST(signedRequest(body, '/cb', { secret: 'nope' }));
    expect(bad.status).to.equal(401);
    expect(await bad.json()).to.deep.equal({ code: 1, msg: 'BAD_SIGNATURE' });
    expect(runs).to.equal(0);
    expect((await POST(new Request(`${ORIGIN}/cb`))).status).to.equal(405);
    const failed = await POST(signedRequest(body, '/cb'));
    expect(failed.status).to.equal(500);
    expect(runs).to.equal(1);
  });

  it('with a SeenStore a redelivered event is ACKed without being handled again', async () => {
    let runs = 0;
    const POST = fetchWebhookHandler({ apiSecret: SECRET, seen: new InMemorySeenSet(), onEvent: () => void runs++ });
    const body = Buffer.from(JSON.stringify(webhookExamples().find((e) => e.event === 'chain_event')!.body));
    for (let i = 0; i < 3; i++) expect((await POST(signedRequest(body, '/cb'))).status).to.equal(200);
    expect(runs).to.equal(1);
  });
});
