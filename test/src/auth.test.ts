import * as crypto from 'node:crypto';
import { expect } from 'chai';
import type { ApiRoute, CreatedApplication } from '@wcs/server';
import { startTestService, type TestService, TEST_ACTOR } from '@wcs/server/testing';
import { SigningClient, newNonce, type MerchantCredentials } from './client/signing-client';
import { Codes, expectError, expectOk, isCode, pollUntil } from './support/expect';

const CHAINS = '/api/v1/wallet/support/chains';
const TOKENS = '/api/v1/wallet/support/tokens';
const ECHO = '/api/v1/test/echo';

const echoRoute: ApiRoute = {
  method: 'POST',
  path: '/test/echo',
  body: 'json',
  handler: ({ body, app }) => ({ echo: body, applicationId: app.applicationId }),
};

const creds = (a: { apiKey: string; apiSecret: string }): MerchantCredentials => ({ apiKey: a.apiKey, apiSecret: a.apiSecret });

describe('signed API authentication (in-process service, real Postgres)', function () {
  let svc: TestService;
  let appA: CreatedApplication;
  let appB: CreatedApplication;
  let a: SigningClient;
  let b: SigningClient;

  before(async function () {
    svc = await startTestService({ extraRoutes: [echoRoute] });
    appA = await svc.createApp({ name: 'auth A', environment: 'test', chains: ['ETH', 'BTC'] });
    appB = await svc.createApp({ name: 'auth B', environment: 'test', chains: ['ETH'] });
    a = new SigningClient(svc.url, creds(appA));
    b = new SigningClient(svc.url, creds(appB));
  });

  after(async function () {
    if (svc) await svc.stop();
  });

  describe('accepted requests', function () {
    it('accepts a correctly signed GET support/chains and returns the envelope', async function () {
      const data = expectOk(await a.get(CHAINS));
      expect(data.map((c: { chainCode: string }) => c.chainCode)).to.deep.equal(['BTC', 'ETH']);
    });

    it('accepts a correctly signed POST and the route sees the parsed body and the calling application', async function () {
      const data = expectOk(await a.post(ECHO, { hello: 'world', n: 1 }));
      expect(data).to.deep.equal({ echo: { hello: 'world', n: 1 }, applicationId: appA.id });
      const dataB = expectOk(await b.post(ECHO, { x: true }));
      expect(dataB.applicationId).to.equal(appB.id);
    });

    it('signs over the raw bytes: JSON with unusual whitespace, tabs, CRLF and non-ASCII text is accepted as sent', async function () {
      const raw = '{\n\t"a" :\t[ 1 ,\r\n 2 ],\n   "b":{"c" : "d e",\t"city":"Zürich ✓"}  \n}\n\n';
      const res = await a.post(ECHO, raw);
      expect(expectOk(res).echo).to.deep.equal({ a: [1, 2], b: { c: 'd e', city: 'Zürich ✓' } });
      // and the same object re-serialised differently would have a different hash: the server did not normalise.
      const reserialised = JSON.stringify(JSON.parse(raw));
      expectError(await a.post(ECHO, reserialised, { sign: { body: raw } }), 401, Codes.AUTH_SIGNATURE_INVALID);
    });

    it('accepts a timestamp 290 s old and 290 s ahead (inside the 300000 ms window)', async function () {
      expectOk(await a.get(CHAINS, { timestamp: Date.now() - 290_000 }));
      expectOk(await a.get(CHAINS, { timestamp: Date.now() + 290_000 }));
    });
  });

  describe('signature checks', function () {
    it('rejects a signature made with the wrong secret (1001001007)', async function () {
      const wrong = crypto.randomBytes(32).toString('hex');
      expectError(await a.get(CHAINS, { sign: { secret: wrong } }), 401, Codes.AUTH_SIGNATURE_INVALID);
      // another application's (valid) secret is wrong too
      expectError(await a.get(CHAINS, { sign: { secret: appB.apiSecret } }), 401, Codes.AUTH_SIGNATURE_INVALID);
    });

    it('rejects a body with one byte changed after signing (1001001007)', async function () {
      const signed = '{"amount":"10.5","to":"abc"}';
      const sent = '{"amount":"18.5","to":"abc"}';
      expect(sent.length).to.equal(signed.length);
      expectError(await a.post(ECHO, sent, { sign: { body: signed } }), 401, Codes.AUTH_SIGNATURE_INVALID);
      // control: the same bytes, signed as sent, are accepted
      expect(expectOk(await a.post(ECHO, sent)).echo).to.deep.equal({ amount: '18.5', to: 'abc' });
    });

    it('rejects a request sent to another path than the one signed (1001001007)', async function () {
      expectError(await a.get(TOKENS, { sign: { path: CHAINS } }), 401, Codes.AUTH_SIGNATURE_INVALID);
      expectError(await a.get(CHAINS, { sign: { path: '/api/v1/wallet/support/chains/' } }), 401, Codes.AUTH_SIGNATURE_INVALID);
    });

    it('rejects a request sent with another method than the one signed (1001001007)', async function () {
      expectError(await a.post(ECHO, '{}', { sign: { method: 'PUT' } }), 401, Codes.AUTH_SIGNATURE_INVALID);
    });

    it('does not sign the query: the same signature is accepted with a query added, and a query inside the signed path is rejected', async function () {
      // The spec: the path is signed "without the query string". The query is therefore not protected.
      const res = await a.get(`${TOKENS}?chainCode=ETH`, { sign: { path: TOKENS } });
      const tokens = expectOk(res);
      expect(tokens.length).to.be.greaterThan(0);
      expect(new Set(tokens.map((t: { chainCode: string }) => t.chainCode))).to.deep.equal(new Set(['ETH']));
      expectError(await a.get(`${TOKENS}?chainCode=ETH`, { sign: { path: `${TOKENS}?chainCode=ETH` } }), 401, Codes.AUTH_SIGNATURE_INVALID);
    });

    it('rejects an upper-case hex signature (1001001008)', async function () {
      const p = a.prepare({ method: 'GET', path: CHAINS });
      expect(p.signature).to.match(/^[0-9a-f]{64}$/);
      expect(p.signature.toUpperCase()).to.not.equal(p.signature);
      expectError(await a.get(CHAINS, { timestamp: p.timestamp, nonce: p.nonce, signature: p.signature.toUpperCase() }), 401, Codes.AUTH_SIGNATURE_MALFORMED);
    });

    it('rejects a signature of the wrong length (1001001008)', async function () {
      const p = a.prepare({ method: 'GET', path: CHAINS });
      expectError(await a.get(CHAINS, { signature: p.signature.slice(0, 63) }), 401, Codes.AUTH_SIGNATURE_MALFORMED);
      expectError(await a.get(CHAINS, { signature: p.signature + '00' }), 401, Codes.AUTH_SIGNATURE_MALFORMED);
      expectError(await a.get(CHAINS, { signature: crypto.createHmac('sha256', appA.apiSecret).update('x').digest('base64') }), 401, Codes.AUTH_SIGNATURE_MALFORMED);
    });

    it('rejects an unknown API key (1001001006)', async function () {
      const unknown = { apiKey: `pk_test_${crypto.randomBytes(16).toString('hex')}`, apiSecret: appA.apiSecret };
      expectError(await a.get(CHAINS, { credentials: unknown }), 401, Codes.AUTH_API_KEY_UNKNOWN);
      expectError(await a.get(CHAINS, { credentials: { apiKey: 'not-a-key', apiSecret: appA.apiSecret } }), 401, Codes.AUTH_API_KEY_UNKNOWN);
    });
  });

  describe('timestamp checks', function () {
    it('rejects a timestamp 301 s old and 301 s ahead (1001001003)', async function () {
      expectError(await a.get(CHAINS, { timestamp: Date.now() - 301_000 }), 401, Codes.AUTH_TIMESTAMP_EXPIRED);
      expectError(await a.get(CHAINS, { timestamp: Date.now() + 301_000 }), 401, Codes.AUTH_TIMESTAMP_EXPIRED);
    });

    it('rejects a non-numeric timestamp and 10-digit seconds (1001001002)', async function () {
      expectError(await a.get(CHAINS, { timestamp: 'now' }), 401, Codes.AUTH_TIMESTAMP_INVALID);
      expectError(await a.get(CHAINS, { timestamp: String(Math.floor(Date.now() / 1000)) }), 401, Codes.AUTH_TIMESTAMP_INVALID);
      expectError(await a.get(CHAINS, { timestamp: `${Date.now()}.0` }), 401, Codes.AUTH_TIMESTAMP_INVALID);
    });
  });

  describe('headers', function () {
    for (const name of ['X-Api-Key', 'X-Timestamp', 'X-Nonce', 'X-Signature']) {
      it(`rejects a request without ${name} (1001001001) and names the header`, async function () {
        expectError(await a.get(CHAINS, { headers: { [name]: null } }), 401, Codes.AUTH_HEADER_MISSING, name);
      });
    }
  });

  describe('nonces', function () {
    it('rejects a malformed nonce (1001001004)', async function () {
      for (const nonce of ['short', 'has space in it', 'x'.repeat(129), 'nonce?abcdef', 'nonce,abcdef']) {
        expectError(await a.get(CHAINS, { nonce }), 401, Codes.AUTH_NONCE_INVALID);
      }
      // the spec's recommended forms (UUID v4 is the client default) and the documented character set
      expectOk(await a.get(CHAINS, { nonce: crypto.randomBytes(16).toString('hex') }));
      expectOk(await a.get(CHAINS, { nonce: `abc.-_~+/=${Date.now()}` }));
    });

    it('rejects a replayed nonce with the same key (1001001005)', async function () {
      const p = a.prepare({ method: 'GET', path: CHAINS });
      expectOk(await a.send(p));
      expectError(await a.send(p), 401, Codes.AUTH_NONCE_REPLAYED);
      // a fresh timestamp and signature do not make the nonce usable again
      expectError(await a.get(CHAINS, { nonce: p.nonce }), 401, Codes.AUTH_NONCE_REPLAYED);
    });

    it('accepts the same nonce with another application\'s key', async function () {
      const nonce = newNonce();
      expectOk(await a.get(CHAINS, { nonce }));
      expectOk(await b.get(CHAINS, { nonce }));
      expectError(await b.get(CHAINS, { nonce }), 401, Codes.AUTH_NONCE_REPLAYED);
    });

    it('concurrent requests with one nonce: exactly one is accepted', async function () {
      const nonce = newNonce();
      const results = await Promise.all(Array.from({ length: 8 }, () => a.get(CHAINS, { nonce })));
      const codes = results.map((r) => r.json?.code);
      expect(codes.filter((c) => c === 0), JSON.stringify(codes)).to.have.length(1);
      expect(codes.filter((c) => c === Codes.AUTH_NONCE_REPLAYED), JSON.stringify(codes)).to.have.length(7);
    });
  });

  describe('rejected requests persist nothing', function () {
    it('a bad-signature request does not consume its nonce', async function () {
      const nonce = newNonce();
      expectError(await a.get(CHAINS, { nonce, sign: { secret: 'wrong' } }), 401, Codes.AUTH_SIGNATURE_INVALID);
      expectOk(await a.get(CHAINS, { nonce }));
    });

    it('an expired-timestamp request does not consume its nonce', async function () {
      const nonce = newNonce();
      expectError(await a.get(CHAINS, { nonce, timestamp: Date.now() - 400_000 }), 401, Codes.AUTH_TIMESTAMP_EXPIRED);
      expectOk(await a.get(CHAINS, { nonce }));
    });

    it('a request with a missing header does not consume its nonce', async function () {
      const nonce = newNonce();
      expectError(await a.get(CHAINS, { nonce, headers: { 'X-Signature': null } }), 401, Codes.AUTH_HEADER_MISSING);
      expectOk(await a.get(CHAINS, { nonce }));
    });

    it('a replay rejection does not disturb the stored nonce of the other key', async function () {
      const nonce = newNonce();
      expectOk(await a.get(CHAINS, { nonce }));
      expectError(await a.get(CHAINS, { nonce }), 401, Codes.AUTH_NONCE_REPLAYED);
      expectOk(await b.get(CHAINS, { nonce }));
    });
  });

  describe('application status', function () {
    it('rejects a disabled application with HTTP 403 (1001001009), does not consume the nonce, and accepts again once enabled', async function () {
      const app = await svc.createApp({ name: 'to disable', environment: 'test', chains: ['ETH'] });
      const c = new SigningClient(svc.url, creds(app));
      expectOk(await c.get(CHAINS)); // credentials now cached by the server
      await svc.service.storage.applications.setStatus(TEST_ACTOR, app.id, 'DISABLED');
      // change notifications reach the server's credential cache asynchronously: poll briefly with fresh nonces
      const disabled = await pollUntil(() => c.get(CHAINS), isCode(Codes.AUTH_APPLICATION_DISABLED), 1000);
      expectError(disabled.result, 403, Codes.AUTH_APPLICATION_DISABLED);
      const nonce = newNonce();
      expectError(await c.get(CHAINS, { nonce }), 403, Codes.AUTH_APPLICATION_DISABLED);
      expectError(await c.post(ECHO, { a: 1 }), 403, Codes.AUTH_APPLICATION_DISABLED);
      await svc.service.storage.applications.setStatus(TEST_ACTOR, app.id, 'ACTIVE');
      const enabled = await pollUntil(() => c.get(CHAINS), isCode(Codes.OK), 1000);
      expectOk(enabled.result);
      // the nonce used while disabled was not consumed
      expectOk(await c.get(CHAINS, { nonce }));
    });
  });

  describe('secret rotation', function () {
    it('keeps the old secret valid within the grace period and accepts the new one', async function () {
      const app = await svc.createApp({ name: 'rotate grace', environment: 'test', chains: ['ETH'] });
      const oldC = new SigningClient(svc.url, creds(app));
      expectOk(await oldC.get(CHAINS));
      const r = await svc.service.storage.applications.rotateSecret(TEST_ACTOR, app.id, 3600);
      expect(r.apiSecret).to.match(/^[0-9a-f]{64}$/).and.not.equal(app.apiSecret);
      const newC = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: r.apiSecret });
      const fresh = await pollUntil(() => newC.get(CHAINS), isCode(Codes.OK), 1000);
      expectOk(fresh.result);
      expectOk(await oldC.get(CHAINS));
      expectOk(await oldC.post(ECHO, { still: 'valid' }));
    });

    it('with grace 0 the old secret is rejected at once (1001001007) and the new one accepted', async function () {
      const app = await svc.createApp({ name: 'rotate now', environment: 'test', chains: ['ETH'] });
      const oldC = new SigningClient(svc.url, creds(app));
      expectOk(await oldC.get(CHAINS)); // cached by the server
      const r = await svc.service.storage.applications.rotateSecret(TEST_ACTOR, app.id, 0);
      const newC = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: r.apiSecret });
      const rejected = await pollUntil(() => oldC.get(CHAINS), isCode(Codes.AUTH_SIGNATURE_INVALID), 1000);
      expectError(rejected.result, 401, Codes.AUTH_SIGNATURE_INVALID);
      expectOk(await newC.get(CHAINS));
      expectError(await oldC.get(CHAINS), 401, Codes.AUTH_SIGNATURE_INVALID);
    });

    it('an old secret stops working when its grace period runs out, with no further change', async function () {
      const app = await svc.createApp({ name: 'rotate short', environment: 'test', chains: ['ETH'] });
      const oldC = new SigningClient(svc.url, creds(app));
      const t0 = Date.now();
      const r = await svc.service.storage.applications.rotateSecret(TEST_ACTOR, app.id, 2);
      const newC = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: r.apiSecret });
      expectOk(await oldC.get(CHAINS)); // within grace: accepted (and cached with its expiry)
      expectOk(await newC.get(CHAINS));
      const expired = await pollUntil(() => oldC.get(CHAINS), isCode(Codes.AUTH_SIGNATURE_INVALID), 5000, 100);
      expect(Date.now() - t0, 'old secret rejected before its 2 s grace ran out').to.be.at.least(1900);
      expectError(expired.result, 401, Codes.AUTH_SIGNATURE_INVALID);
      expectOk(await newC.get(CHAINS));
    });
  });

  describe('the spec-only signing client', function () {
    it('builds stringToSign and the signature exactly as the spec describes (vectors computed independently)', function () {
      const creds0 = { apiKey: 'pk_test_vector', apiSecret: 'secret' };
      const g = a.prepare({ method: 'get', path: `${CHAINS}?x=1`, timestamp: '1700000000000', nonce: 'nonce-0001', credentials: creds0 });
      expect(g.stringToSign).to.equal(`GET\n${CHAINS}\n1700000000000\nnonce-0001\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855`);
      expect(g.signature).to.equal('4dd859339783905899e10b084e1c17031225fdc514fe26cce1539b8ca04ddc7b');
      expect(g.headers).to.include({ 'X-Api-Key': 'pk_test_vector', 'X-Timestamp': '1700000000000', 'X-Nonce': 'nonce-0001', 'X-Signature': g.signature });
      const p = a.prepare({ method: 'POST', path: ECHO, body: '{"a": "\u00e9"}', timestamp: '1700000000000', nonce: 'nonce-0002', credentials: creds0 });
      expect(p.stringToSign.split('\n')[4]).to.equal('c6c0a269c3d5a55e9c687d138cc1fcd13962dc2d96c1b9ff1ea01ff4ad4047d3');
      expect(p.signature).to.equal('a76ca8f6baeff93b046fb8fabaad694dc8cfb10da8bde942082fc944f811cd96');
      expect(p.headers['Content-Type']).to.equal('application/json');
      expect(p.headers['Content-Length']).to.equal(String(Buffer.byteLength('{"a": "\u00e9"}')));
    });
  });
});
