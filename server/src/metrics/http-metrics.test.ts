import { expect } from 'chai';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WcsError } from '@wcs/core';
import type { Authenticator } from '../auth/authenticate';
import type { AppCredentials } from '../auth/credentials';
import { createHttpApp } from '../http/app';
import type { ApiRoute } from '../http/routes';
import { testLogger } from '../testing';
import { AUTH_FAILURE_REASONS, HttpMetrics } from './http-metrics';
import { createRegistry } from './registry';
import type { Registry } from 'prom-client';

/** The value of one sample of the registry (undefined when the series does not exist). */
async function sample(registry: Registry, name: string, labels: Record<string, string>, suffix = ''): Promise<number | undefined> {
  const all = await registry.getMetricsAsJSON();
  const family = all.find((m) => m.name === name);
  const values = (family?.values ?? []) as Array<{ metricName?: string; labels: Record<string, string | number>; value: number }>;
  const hit = values.find((v) => (v.metricName ?? name) === name + suffix && Object.entries(labels).every(([k, x]) => String(v.labels[k]) === x) && Object.keys(v.labels).filter((k) => k !== 'le').length === Object.keys(labels).filter((k) => k !== 'le').length);
  return hit?.value;
}

describe('metrics: HTTP requests and authentication failures (createHttpApp with the metrics middleware)', () => {
  let server: Server;
  let base: string;
  let registry: Registry;
  let authMode: 'ok' | 'forged' | 'replayed' = 'ok';
  const routes: ApiRoute[] = [
    { method: 'GET', path: '/wallet/ping', body: 'none', handler: () => ({ pong: true }) },
    { method: 'POST', path: '/wallet/fail', body: 'json', handler: () => { throw new WcsError('CHAIN_UNKNOWN'); } },
  ];
  const authenticator = {
    authenticate: async (): Promise<AppCredentials> => {
      if (authMode === 'forged') throw new WcsError('AUTH_SIGNATURE_INVALID');
      if (authMode === 'replayed') throw new WcsError('AUTH_NONCE_REPLAYED');
      return { applicationId: 1 } as AppCredentials;
    },
  } as unknown as Authenticator;

  before(async () => {
    registry = createRegistry();
    const metrics = new HttpMetrics(registry, routes);
    const app = createHttpApp({ authenticator, logger: testLogger(), bodyLimitBytes: 1024, routes, readiness: async () => ({ ready: true, checks: {} }), metrics });
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((r) => server.close(r)));
  beforeEach(() => {
    authMode = 'ok';
  });

  it('counts by route template, method, status and envelope code, and times every request', async () => {
    for (let i = 0; i < 3; i++) expect((await fetch(`${base}/api/v1/wallet/ping`)).status).to.equal(200);
    const r = await fetch(`${base}/api/v1/wallet/fail`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(((await r.json()) as { code: number }).code).to.equal(1003001001);
    await fetch(`${base}/healthz`);
    await fetch(`${base}/openapi.json`);
    expect(await sample(registry, 'wcs_http_requests_total', { route: '/api/v1/wallet/ping', method: 'GET', status: '200', code: '0' })).to.equal(3);
    expect(await sample(registry, 'wcs_http_requests_total', { route: '/api/v1/wallet/fail', method: 'POST', status: '200', code: '1003001001' })).to.equal(1);
    expect(await sample(registry, 'wcs_http_requests_total', { route: '/healthz', method: 'GET', status: '200', code: '0' })).to.equal(1);
    expect(await sample(registry, 'wcs_http_requests_total', { route: '/openapi.json', method: 'GET', status: '200', code: 'none' })).to.equal(1);
    expect(await sample(registry, 'wcs_http_request_duration_seconds', { route: '/api/v1/wallet/ping', method: 'GET' }, '_count')).to.equal(3);
    const sum = await sample(registry, 'wcs_http_request_duration_seconds', { route: '/api/v1/wallet/ping', method: 'GET' }, '_sum');
    expect(sum).to.be.greaterThan(0).and.lessThan(5);
  });

  it('never turns a raw path or an unknown method into a label: unknown paths are `other`, 404 and 405 included', async () => {
    const secretish = '/api/v1/wallet/pk_test_abcdef0123456789?apiKey=zzz';
    expect((await fetch(base + secretish)).status).to.equal(404);
    expect((await fetch(`${base}/api/v1/wallet/ping/`)).status).to.equal(404); // strict routing: not the route
    expect((await fetch(`${base}/api/v1/wallet/ping`, { method: 'DELETE' })).status).to.equal(405);
    expect((await fetch(`${base}/api/v1/wallet/ping`, { method: 'PROPFIND' })).status).to.equal(405);
    expect(await sample(registry, 'wcs_http_requests_total', { route: 'other', method: 'GET', status: '404', code: '1000002001' })).to.equal(2);
    expect(await sample(registry, 'wcs_http_requests_total', { route: '/api/v1/wallet/ping', method: 'DELETE', status: '405', code: '1000002002' })).to.equal(1);
    expect(await sample(registry, 'wcs_http_requests_total', { route: '/api/v1/wallet/ping', method: 'other', status: '405', code: '1000002002' })).to.equal(1);
    const text = await registry.metrics();
    expect(text).not.to.include('pk_test_');
    expect(text).not.to.include('PROPFIND');
    expect(text).not.to.include('ping/');
  });

  it('counts authentication failures by reason; every reason is exported from the start at 0', async () => {
    for (const reason of AUTH_FAILURE_REASONS) expect(await sample(registry, 'wcs_auth_failures_total', { reason }), reason).to.be.a('number');
    const before = (await sample(registry, 'wcs_auth_failures_total', { reason: 'AUTH_SIGNATURE_INVALID' }))!;
    authMode = 'forged';
    expect((await fetch(`${base}/api/v1/wallet/ping`)).status).to.equal(401);
    expect((await fetch(`${base}/api/v1/wallet/ping`)).status).to.equal(401);
    authMode = 'replayed';
    expect((await fetch(`${base}/api/v1/wallet/ping`)).status).to.equal(401);
    expect(await sample(registry, 'wcs_auth_failures_total', { reason: 'AUTH_SIGNATURE_INVALID' })).to.equal(before + 2);
    expect(await sample(registry, 'wcs_auth_failures_total', { reason: 'AUTH_NONCE_REPLAYED' })).to.equal(1);
    expect(await sample(registry, 'wcs_http_requests_total', { route: '/api/v1/wallet/ping', method: 'GET', status: '401', code: '1001001007' })).to.equal(2);
    // a business error is not an authentication failure
    const total = async () => (await registry.getSingleMetric('wcs_auth_failures_total')!.get()).values.reduce((a, v) => a + v.value, 0);
    const t0 = await total();
    authMode = 'ok';
    await fetch(`${base}/api/v1/wallet/fail`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(await total()).to.equal(t0);
  });

  it('the default process metrics are in the same registry, under wcs_', async () => {
    const names = (await registry.getMetricsAsJSON()).map((m) => m.name);
    expect(names).to.include.members(['wcs_process_cpu_user_seconds_total', 'wcs_process_resident_memory_bytes', 'wcs_nodejs_eventloop_lag_seconds']);
    expect(names.filter((n) => !n.startsWith('wcs_'))).to.deep.equal([]);
  });
});
