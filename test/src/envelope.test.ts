import { expect } from 'chai';
import type { ApiRoute, CreatedApplication } from '@wcs/server';
import { startTestService, type TestService } from '@wcs/server/testing';
import { SigningClient, rawRequest } from './client/signing-client';
import { Codes, expectEnvelope, expectError, expectOk } from './support/expect';

const CHAINS = '/api/v1/wallet/support/chains';
const TOKENS = '/api/v1/wallet/support/tokens';
const ECHO = '/api/v1/test/echo';
const THROW = '/api/v1/test/throw';
const MiB = 1024 * 1024;

const routes: ApiRoute[] = [
  { method: 'POST', path: '/test/echo', body: 'json', handler: ({ body, app }) => ({ echo: body, applicationId: app.applicationId }) },
  {
    method: 'GET',
    path: '/test/throw',
    body: 'none',
    handler: () => {
      throw new Error('secret detail');
    },
  },
];

/** Runs fn while swallowing the service's own stderr log lines (the 500 test logs a fault on purpose). */
async function quietStderr<T>(fn: () => Promise<T>): Promise<T> {
  const original = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (String(chunk).includes('request failed')) return true;
    return (original as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
  try {
    return await fn();
  } finally {
    process.stderr.write = original;
  }
}

/** A JSON document of exactly n bytes: {"p":"xxxx..."} */
function jsonOfSize(n: number): string {
  const s = `{"p":"${'x'.repeat(n - 8)}"}`;
  expect(Buffer.byteLength(s)).to.equal(n);
  return s;
}

describe('response envelope and request-format errors', function () {
  let svc: TestService;
  let testApp: CreatedApplication;
  let c: SigningClient;

  before(async function () {
    svc = await startTestService({ extraRoutes: routes });
    testApp = await svc.createApp({ name: 'envelope', environment: 'test', chains: ['ETH', 'BTC'] });
    c = new SigningClient(svc.url, { apiKey: testApp.apiKey, apiSecret: testApp.apiSecret });
  });

  after(async function () {
    if (svc) await svc.stop();
  });

  describe('routing', function () {
    it('answers an unknown path with 404, code 1000002001, a JSON envelope and no HTML', async function () {
      for (const path of ['/api/v1/wallet/nope', '/nope', '/api/v2/wallet/support/chains', '/api/v1/wallet/support/chains/']) {
        const res = await c.get(path);
        expectError(res, 404, Codes.NOT_FOUND);
        expect(res.text, path).to.not.match(/<html|<!doctype|<pre>/i);
      }
      const unsigned = await rawRequest(svc.url, { method: 'GET', path: '/definitely/not/here' });
      expectError(unsigned, 404, Codes.NOT_FOUND);
      expect(unsigned.text).to.not.match(/<html|<!doctype|<pre>/i);
    });

    it('answers POST on support/chains with 405, code 1000002002 and an Allow header', async function () {
      const res = await c.post(CHAINS, { a: 1 });
      expectError(res, 405, Codes.METHOD_NOT_ALLOWED);
      expect(res.headers['allow']).to.equal('GET');
      expect(res.text).to.not.match(/<html|<!doctype/i);
      const del = await c.request({ method: 'DELETE', path: CHAINS });
      expectError(del, 405, Codes.METHOD_NOT_ALLOWED);
      expect(del.headers['allow']).to.equal('GET');
      const get = await c.get(ECHO);
      expectError(get, 405, Codes.METHOD_NOT_ALLOWED);
      expect(get.headers['allow']).to.equal('POST');
    });
  });

  describe('request bodies', function () {
    it('rejects correctly signed malformed JSON with 400, code 1000001001', async function () {
      for (const raw of ['{"a":', '{a:1}', "{'a':1}", '{"a":1}}', 'nul']) {
        expectError(await c.post(ECHO, raw), 400, Codes.INVALID_JSON);
      }
    });

    it('rejects a POST with an empty body on a JSON route with 400, code 1000001001', async function () {
      expectError(await c.request({ method: 'POST', path: ECHO, body: '', contentType: 'application/json' }), 400, Codes.INVALID_JSON);
    });

    it('rejects a body larger than 1 MiB with 413, code 1000001002, and accepts exactly 1 MiB', async function () {
      const big = jsonOfSize(MiB + 1);
      expectError(await c.post(ECHO, big), 413, Codes.BODY_TOO_LARGE);
      const exact = jsonOfSize(MiB);
      const data = expectOk(await c.post(ECHO, exact));
      expect(data.echo.p).to.have.length(MiB - 8);
    });

    it('rejects a POST whose content type is not JSON with 415, code 1000001004', async function () {
      for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonp', null]) {
        const res = await c.post(ECHO, '{"a":1}', { contentType });
        expectError(res, 415, Codes.UNSUPPORTED_MEDIA_TYPE);
      }
      // parameters on the JSON media type are fine
      expectOk(await c.post(ECHO, '{"a":1}', { contentType: 'application/json; charset=utf-8' }));
    });

    it('rejects a correctly signed GET that carries a body with 400, code 1000001005', async function () {
      expectError(await c.request({ method: 'GET', path: CHAINS, body: '{"a":1}' }), 400, Codes.BODY_NOT_ALLOWED);
    });
  });

  describe('internal errors', function () {
    it('maps an unexpected exception to 500, code 1000009001, without its message or stack', async function () {
      const res = await quietStderr(() => c.get(THROW));
      const msg = expectError(res, 500, Codes.INTERNAL_ERROR);
      expect(res.text).to.not.include('secret detail');
      expect(msg).to.not.include('secret detail');
      expect(res.text).to.not.match(/\bat .+:\d+:\d+|Error:|\.js\b|\.ts\b|node_modules/);
    });
  });

  describe('query parameters and business errors', function () {
    it('rejects an unknown query parameter on support/chains with 400, code 1000001003 naming it', async function () {
      expectError(await c.get(`${CHAINS}?foo=1`), 400, Codes.INVALID_PARAMETER, 'foo');
    });

    it('rejects a query parameter given twice with 400, code 1000001003 naming it', async function () {
      expectError(await c.get(`${TOKENS}?chainCode=ETH&chainCode=BTC`), 400, Codes.INVALID_PARAMETER, 'chainCode');
    });

    it('support/tokens?chainCode=SOL for an application without SOL: code 1003001002', async function () {
      const res = await c.get(`${TOKENS}?chainCode=SOL`);
      expectEnvelope(res);
      expect(res.json.code).to.equal(Codes.CHAIN_NOT_ENABLED);
      expect(res.json.data).to.equal(null);
    });

    it('support/tokens?chainCode=NOPE: code 1003001001', async function () {
      const res = await c.get(`${TOKENS}?chainCode=NOPE`);
      expectEnvelope(res);
      expect(res.json.code).to.equal(Codes.CHAIN_UNKNOWN);
      expect(res.json.data).to.equal(null);
    });

    it('support/tokens lists only tokens of the enabled chains, with chainTokenId', async function () {
      const tokens = expectOk(await c.get(TOKENS));
      expect(new Set(tokens.map((t: { chainCode: string }) => t.chainCode))).to.deep.equal(new Set(['ETH', 'BTC']));
      for (const t of tokens) expect(t.chainTokenId).to.be.a('number');
      expect(tokens.map((t: { chainId: number }) => t.chainId).every((id: number) => id > 100)).to.equal(true);
    });
  });

  describe('support/chains per environment', function () {
    it('a test application sees exactly its enabled chains on the test networks (chainId 101..)', async function () {
      const app = await svc.createApp({ name: 'test env', environment: 'test', chains: ['SOL', 'ETH', 'BTC'] });
      const tc = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
      const chains = expectOk(await tc.get(CHAINS));
      expect(chains.map((x: { chainId: number; chainCode: string }) => [x.chainId, x.chainCode])).to.deep.equal([
        [101, 'BTC'],
        [102, 'ETH'],
        [105, 'SOL'],
      ]);
      expect(chains.find((x: { chainCode: string }) => x.chainCode === 'ETH').network).to.equal('sepolia');
    });

    it('a live application sees exactly its enabled chains on the live networks', async function () {
      const app = await svc.createApp({ name: 'live env', environment: 'live', chains: ['ETH', 'XRP'] });
      expect(app.apiKey).to.match(/^pk_live_/);
      const lc = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
      const chains = expectOk(await lc.get(CHAINS));
      expect(chains.map((x: { chainId: number; chainCode: string }) => [x.chainId, x.chainCode])).to.deep.equal([
        [2, 'ETH'],
        [6, 'XRP'],
      ]);
      expect(chains.find((x: { chainCode: string }) => x.chainCode === 'ETH').network).to.equal('mainnet');
      expect(chains.find((x: { chainCode: string }) => x.chainCode === 'XRP').memoRequired).to.equal(true);
    });

    it('an application with no chains sees an empty list', async function () {
      const app = await svc.createApp({ name: 'no chains', environment: 'test', chains: [] });
      const nc = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
      expect(expectOk(await nc.get(CHAINS))).to.deep.equal([]);
    });
  });

  describe('health endpoints', function () {
    it('/healthz and /readyz answer unauthenticated with code 0', async function () {
      for (const path of ['/healthz', '/readyz']) {
        const res = await rawRequest(svc.url, { method: 'GET', path });
        const data = expectOk(res);
        expect(data, path).to.be.an('object');
      }
    });
  });
});
