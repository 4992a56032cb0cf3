import { expect } from 'chai';
import * as crypto from 'node:crypto';
import { testLogger } from '../testing';
import { bearerMatches, MetricsServer } from './server';
import { ServiceMetrics } from './service-metrics';

describe('metrics: the /metrics server (own port, optional bearer token)', () => {
  const token = crypto.randomBytes(24).toString('base64url');
  let renders = 0;
  let failRender = false;
  const render = async () => {
    renders++;
    if (failRender) throw new Error('boom: internal detail');
    return { contentType: 'text/plain; version=0.0.4; charset=utf-8', body: '# HELP wcs_x x\n# TYPE wcs_x gauge\nwcs_x 1\n' };
  };
  const withToken = new MetricsServer({ host: '127.0.0.1', port: 0, token, render, logger: testLogger() });
  const open = new MetricsServer({ host: '127.0.0.1', port: 0, token: null, render, logger: testLogger() });

  before(async () => {
    await withToken.start();
    await open.start();
  });
  after(async () => {
    await withToken.stop();
    await open.stop();
  });

  it('port 0 takes a free port; each server its own', () => {
    expect(withToken.url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(withToken.url).not.to.equal(open.url);
  });

  it('with a token: 401 without it, with a wrong one or another scheme, before anything is rendered; 200 with it', async () => {
    const n = renders;
    for (const auth of [undefined, 'Bearer wrong-token-wrong-token', `Basic ${token}`, `Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, 'Bearer ', `${token}`]) {
      const r = await fetch(withToken.url, auth === undefined ? {} : { headers: { authorization: auth } });
      expect(r.status, String(auth)).to.equal(401);
      expect(r.headers.get('www-authenticate')).to.match(/^Bearer /);
      expect(await r.text()).not.to.include('wcs_x');
    }
    expect((await fetch(withToken.url.replace('/metrics', '/other'))).status).to.equal(401);
    expect(renders).to.equal(n);
    const ok = await fetch(withToken.url, { headers: { authorization: `Bearer ${token}` } });
    expect(ok.status).to.equal(200);
    expect(ok.headers.get('content-type')).to.equal('text/plain; version=0.0.4; charset=utf-8');
    expect(await ok.text()).to.include('wcs_x 1');
    expect((await fetch(withToken.url, { headers: { authorization: `bearer   ${token}` } })).status).to.equal(200);
  });

  it('without a token: open; only GET/HEAD /metrics', async () => {
    expect((await fetch(open.url)).status).to.equal(200);
    expect((await fetch(`${open.url}?x=1`)).status).to.equal(200);
    expect((await fetch(open.url, { method: 'HEAD' })).status).to.equal(200);
    expect((await fetch(open.url.replace('/metrics', '/'))).status).to.equal(404);
    expect((await fetch(open.url.replace('/metrics', '/api/v1/wallet/support/chains'))).status).to.equal(404);
    const post = await fetch(open.url, { method: 'POST' });
    expect(post.status).to.equal(405);
    expect(post.headers.get('allow')).to.equal('GET, HEAD');
  });

  it('a failed render is a plain 500 that reveals nothing', async () => {
    failRender = true;
    try {
      const r = await fetch(open.url);
      expect(r.status).to.equal(500);
      expect(await r.text()).to.equal('metrics collection failed\n');
    } finally {
      failRender = false;
    }
  });

  it('bearerMatches compares the whole token (hashed: length and content in constant time)', () => {
    const expected = crypto.createHash('sha256').update('s3cret-token-value').digest();
    expect(bearerMatches('Bearer s3cret-token-value', expected)).to.equal(true);
    expect(bearerMatches('Bearer s3cret-token-valu', expected)).to.equal(false);
    expect(bearerMatches('Bearer s3cret-token-value2', expected)).to.equal(false);
    expect(bearerMatches(undefined, expected)).to.equal(false);
    expect(bearerMatches('s3cret-token-value', expected)).to.equal(false);
    expect(bearerMatches('Bearer', crypto.createHash('sha256').update('').digest())).to.equal(false);
  });

  it('a busy port fails the start with the listen error', async () => {
    const port = Number(new URL(open.url).port);
    const clash = new MetricsServer({ host: '127.0.0.1', port, token: null, render, logger: testLogger() });
    let err: unknown;
    try {
      await clash.start();
    } catch (e) {
      err = e;
    }
    expect((err as NodeJS.ErrnoException)?.code).to.equal('EADDRINUSE');
    // the service names the settings
    const metrics = new ServiceMetrics({ host: '127.0.0.1', port, token }, testLogger());
    let svcErr: unknown;
    try {
      await metrics.start();
    } catch (e) {
      svcErr = e;
    } finally {
      await metrics.stop();
    }
    expect((svcErr as Error)?.message).to.match(new RegExp(`^WCS_METRICS_PORT / WCS_METRICS_HOST: cannot serve metrics on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`));
    expect((svcErr as Error).message).not.to.include(token);
  });
});
