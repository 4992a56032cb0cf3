import { expect } from 'chai';
import * as sinon from 'sinon';
import { WebhookVerifier, WebhookVerificationError, callbackPath, parseWebhookEvent, type VerifyResult, type WebhookRequest } from '../src/webhooks/verifier';
import { InMemoryReplayStore } from '../src/webhooks/stores';
import { registerNodeCrypto, type NodeCryptoLike } from '../src/crypto';
import { API_KEY, SECRET, callbackHeaders, specSignature, webhookExamples } from './helpers';

// the module object itself (not an import-star copy), so that sinon can spy on its timingSafeEqual
// eslint-disable-next-line @typescript-eslint/no-require-imports
const nodeCrypto = require('node:crypto') as typeof import('node:crypto');
registerNodeCrypto(nodeCrypto as unknown as NodeCryptoLike);

const PATH = '/wcs/callbacks';
const T0 = 1_736_929_800_123;
const NONCE = '9b4f0c2e7a1d4e58b3c6f9a0d2e5b7c1';
const BODY = Buffer.from(JSON.stringify(webhookExamples().find((e) => e.event === 'recharge')!.body), 'utf8');

function request(o: { body?: Buffer | string; path?: string; timestamp?: number | string; nonce?: string; secret?: string; signPath?: string } = {}): WebhookRequest {
  const body = o.body ?? BODY;
  return { body, path: o.path ?? PATH, headers: callbackHeaders(body, { path: o.signPath ?? o.path ?? PATH, timestamp: o.timestamp ?? T0, nonce: o.nonce ?? NONCE, secret: o.secret }) };
}

const reasonOf = (r: VerifyResult) => (r.ok ? 'OK' : r.reason);

for (const backend of ['node', 'webcrypto'] as const) {
  describe(`webhook verifier (${backend})`, () => {
    const make = (o: Partial<ConstructorParameters<typeof WebhookVerifier>[0]> = {}) => new WebhookVerifier({ apiSecret: SECRET, now: () => T0, crypto: backend, ...o });

    it(`uses the ${backend} backend`, () => {
      expect(make().cryptoBackend).to.equal(backend);
    });

    it('accepts every event type of the service, signed by the spec, and types it', async () => {
      const v = make({ apiKey: API_KEY });
      for (const ex of webhookExamples()) {
        const body = Buffer.from(JSON.stringify(ex.body), 'utf8');
        const r = await v.verify(request({ body }));
        expect(r.ok, `${ex.event}: ${JSON.stringify(r)}`).to.equal(true);
        if (!r.ok) continue;
        expect(r.event).to.deep.equal(ex.body);
        expect(r.event.event).to.equal(ex.event);
        expect(r).to.include({ apiKey: API_KEY, timestamp: T0, nonce: NONCE });
      }
    });

    it('accepts the body as Buffer, Uint8Array, a sliced view, or a string; headers as an object in any case or as fetch Headers', async () => {
      const v = make();
      const base = request();
      const big = Buffer.concat([Buffer.from('xx'), BODY, Buffer.from('yy')]);
      const slice = new Uint8Array(big.buffer, big.byteOffset + 2, BODY.length);
      for (const body of [BODY, new Uint8Array(BODY), slice, BODY.toString('utf8')]) {
        expect(reasonOf(await v.verify({ ...base, body }))).to.equal('OK');
      }
      const upper = Object.fromEntries(Object.entries(base.headers).map(([k, x]) => [k.toUpperCase(), x]));
      expect(reasonOf(await v.verify({ ...base, headers: upper }))).to.equal('OK');
      expect(reasonOf(await v.verify({ ...base, headers: new Headers(base.headers as Record<string, string>) }))).to.equal('OK');
    });

    it('the path: the query is not signed; a full URL is reduced to its path; another path fails', async () => {
      const v = make();
      expect(reasonOf(await v.verify({ ...request(), path: `${PATH}?a=1&b=2` }))).to.equal('OK');
      expect(reasonOf(await v.verify({ ...request(), path: `https://merchant.example.com${PATH}?a=1` }))).to.equal('OK');
      expect(reasonOf(await v.verify({ ...request(), path: `${PATH}/` }))).to.equal('BAD_SIGNATURE');
      expect(callbackPath('https://x.example/a/b?c#d')).to.equal('/a/b');
    });

    it('every mutated byte of the body, the path, the timestamp, the nonce or the signature fails with BAD_SIGNATURE', async () => {
      const v = make();
      const good = request();
      let checked = 0;
      // body: flip the low bit of each byte in turn
      for (let i = 0; i < BODY.length; i++) {
        const b = Buffer.from(BODY);
        b[i] = b[i]! ^ 1;
        expect(reasonOf(await v.verify({ ...good, body: b })), `body byte ${i}`).to.equal('BAD_SIGNATURE');
        checked++;
      }
      // path: each character changed (to another path character)
      for (let i = 0; i < PATH.length; i++) {
        const p = PATH.slice(0, i) + (PATH[i] === 'a' ? 'b' : 'a') + PATH.slice(i + 1);
        expect(reasonOf(await v.verify({ ...good, path: p })), `path char ${i}`).to.equal('BAD_SIGNATURE');
        checked++;
      }
      // timestamp: each digit changed so that it stays 13 digits (and, for the last digits, inside the tolerance)
      const ts = String(T0);
      for (let i = 0; i < ts.length; i++) {
        const d = ts[i] === '9' ? '8' : String(Number(ts[i]) + 1);
        const h = { ...good.headers, 'x-timestamp': ts.slice(0, i) + d + ts.slice(i + 1) };
        const r = await make({ toleranceMs: Number.MAX_SAFE_INTEGER }).verify({ ...good, headers: h });
        expect(reasonOf(r), `timestamp digit ${i}`).to.equal('BAD_SIGNATURE');
        checked++;
      }
      // nonce: each character changed
      for (let i = 0; i < NONCE.length; i++) {
        const n = NONCE.slice(0, i) + (NONCE[i] === 'f' ? 'e' : 'f') + NONCE.slice(i + 1);
        expect(reasonOf(await v.verify({ ...good, headers: { ...good.headers, 'x-nonce': n } })), `nonce char ${i}`).to.equal('BAD_SIGNATURE');
        checked++;
      }
      // signature: each hex digit changed
      const sig = String((good.headers as Record<string, string>)['x-signature']);
      for (let i = 0; i < sig.length; i++) {
        const s = sig.slice(0, i) + (sig[i] === '0' ? '1' : '0') + sig.slice(i + 1);
        expect(reasonOf(await v.verify({ ...good, headers: { ...good.headers, 'x-signature': s } })), `signature char ${i}`).to.equal('BAD_SIGNATURE');
        checked++;
      }
      // a body with one byte more or less, and the other secret
      expect(reasonOf(await v.verify({ ...good, body: Buffer.concat([BODY, Buffer.from(' ')]) }))).to.equal('BAD_SIGNATURE');
      expect(reasonOf(await v.verify({ ...good, body: BODY.subarray(0, BODY.length - 1) }))).to.equal('BAD_SIGNATURE');
      expect(reasonOf(await v.verify(request({ secret: SECRET.replace(/.$/, '0') })))).to.equal('BAD_SIGNATURE');
      // re-serialised JSON (what express.json() + JSON.stringify would give) is not the signed bytes
      const pretty = JSON.stringify(JSON.parse(BODY.toString('utf8')), null, 1);
      expect(reasonOf(await v.verify({ ...good, body: pretty }))).to.equal('BAD_SIGNATURE');
      expect(checked).to.equal(BODY.length + PATH.length + 13 + 32 + 64);
    });

    it('timestamps: exactly the tolerance each way is accepted, one ms more is STALE_TIMESTAMP / FUTURE_TIMESTAMP', async () => {
      for (const tol of [300_000, 1_000]) {
        const v = make({ toleranceMs: tol });
        expect(reasonOf(await v.verify(request({ timestamp: T0 - tol })))).to.equal('OK');
        expect(reasonOf(await v.verify(request({ timestamp: T0 + tol })))).to.equal('OK');
        expect(reasonOf(await v.verify(request({ timestamp: T0 - tol - 1 })))).to.equal('STALE_TIMESTAMP');
        expect(reasonOf(await v.verify(request({ timestamp: T0 + tol + 1 })))).to.equal('FUTURE_TIMESTAMP');
      }
      // the default is the spec's 5 minutes
      const v = make();
      expect(reasonOf(await v.verify(request({ timestamp: T0 - 300_001 })))).to.equal('STALE_TIMESTAMP');
      expect(reasonOf(await v.verify(request({ timestamp: T0 - 299_999 })))).to.equal('OK');
      // the time check comes before the signature check: a stale request is STALE even if forged
      const forged = request({ timestamp: T0 - 400_000 });
      (forged.headers as Record<string, string>)['x-signature'] = '0'.repeat(64);
      expect(reasonOf(await v.verify(forged))).to.equal('STALE_TIMESTAMP');
    });

    it('replays: a replay store refuses a nonce seen before (REPLAYED) and only after the signature verified', async () => {
      let now = T0;
      const store = new InMemoryReplayStore({ now: () => now });
      const v = make({ replayStore: store, now: () => now });
      const r = request();
      expect(reasonOf(await v.verify(r))).to.equal('OK');
      expect(reasonOf(await v.verify(r))).to.equal('REPLAYED');
      // a new nonce (the service's retry) is fine
      expect(reasonOf(await v.verify(request({ nonce: 'ffffffffffffffffffffffffffffffff' })))).to.equal('OK');
      // a forged request with a fresh nonce does not poison the store
      const forged = request({ nonce: '11111111111111111111111111111111', secret: 'wrong' });
      expect(reasonOf(await v.verify(forged))).to.equal('BAD_SIGNATURE');
      expect(reasonOf(await v.verify(request({ nonce: '11111111111111111111111111111111' })))).to.equal('OK');
      // a nonce is remembered until its timestamp leaves the tolerance; then the timestamp refuses it anyway
      now = T0 + 300_000;
      expect(reasonOf(await v.verify(r))).to.equal('REPLAYED');
      now = T0 + 300_001;
      expect(reasonOf(await v.verify(r))).to.equal('STALE_TIMESTAMP');
      expect(store.size).to.be.at.most(3);
    });

    it('missing, repeated and malformed headers', async () => {
      const v = make();
      const good = request();
      for (const [name, display] of [['x-api-key', 'X-Api-Key'], ['x-timestamp', 'X-Timestamp'], ['x-nonce', 'X-Nonce'], ['x-signature', 'X-Signature']] as const) {
        const h = { ...good.headers } as Record<string, string>;
        delete h[name];
        const r = await v.verify({ ...good, headers: h });
        expect(r).to.deep.include({ ok: false, reason: 'MISSING_HEADER', header: display });
        expect(await v.verify({ ...good, headers: { ...h, [name]: '' } })).to.deep.include({ reason: 'MISSING_HEADER', header: display });
        const rep = await v.verify({ ...good, headers: { ...good.headers, [name]: [String((good.headers as Record<string, string>)[name]), 'x'] } });
        expect(rep).to.deep.include({ reason: 'MALFORMED_HEADER', header: display });
      }
      const sig = String((good.headers as Record<string, string>)['x-signature']);
      const malformed: Array<[string, string]> = [
        ['x-timestamp', String(Math.floor(T0 / 1000))], // seconds
        ['x-timestamp', `${T0}.5`],
        ['x-signature', sig.toUpperCase()], // the spec fixes lowercase
        ['x-signature', sig.slice(1)],
        ['x-nonce', 'n'.repeat(129)],
      ];
      for (const [name, value] of malformed) {
        expect(reasonOf(await v.verify({ ...good, headers: { ...good.headers, [name]: value } })), `${name}=${value}`).to.equal('MALFORMED_HEADER');
      }
    });

    it('API key: refused when it is not the expected one', async () => {
      expect(reasonOf(await make({ apiKey: API_KEY }).verify(request()))).to.equal('OK');
      expect(await make({ apiKey: 'pk_test_ffffffffffffffffffffffffffffffff' }).verify(request())).to.deep.include({ reason: 'API_KEY_MISMATCH', header: 'X-Api-Key' });
    });

    it('several secrets (a rotation): either verifies', async () => {
      const next = 'b'.repeat(64);
      const v = make({ apiSecret: [next, SECRET] });
      expect(reasonOf(await v.verify(request()))).to.equal('OK');
      expect(reasonOf(await v.verify(request({ secret: next })))).to.equal('OK');
      expect(reasonOf(await v.verify(request({ secret: 'c'.repeat(64) })))).to.equal('BAD_SIGNATURE');
    });

    it('bodies: MALFORMED_BODY when not a JSON object with a string event, UNKNOWN_EVENT for an event this SDK does not know', async () => {
      const v = make();
      for (const body of ['not json', '[1,2]', '"x"', 'null', '{"id":1}', '{"event":7}', Buffer.from([0xff, 0xfe, 0x7b, 0x7d])]) {
        const b = typeof body === 'string' ? Buffer.from(body) : body;
        const r = await v.verify(request({ body: b }));
        expect(reasonOf(r), String(body)).to.equal('MALFORMED_BODY');
        // authenticate() does not read the body
        expect((await v.authenticate(request({ body: b }))).ok).to.equal(true);
      }
      expect(reasonOf(await v.verify(request({ body: Buffer.from('{"event":"refund","id":1}') })))).to.equal('UNKNOWN_EVENT');
      expect(parseWebhookEvent('{"event":"test","applicationId":1}').ok).to.equal(true);
    });

    it('a parsed object is refused loudly (the raw bytes are needed)', async () => {
      let e: unknown;
      await make().verify({ ...request(), body: JSON.parse(BODY.toString()) as never }).catch((x: unknown) => (e = x));
      expect(String(e)).to.match(/raw bytes/);
    });

    it('verifyOrThrow throws a WebhookVerificationError with the reason', async () => {
      const v = make();
      expect((await v.verifyOrThrow(request())).event.event).to.equal('recharge');
      let e: unknown;
      await v.verifyOrThrow(request({ secret: 'x' })).catch((x: unknown) => (e = x));
      expect(e).to.be.instanceOf(WebhookVerificationError);
      expect((e as WebhookVerificationError).reason).to.equal('BAD_SIGNATURE');
    });

    if (backend === 'node') {
      it('compares the signature with crypto.timingSafeEqual (constant time), once per secret, even after a match', async () => {
        const spy = sinon.spy(nodeCrypto, 'timingSafeEqual');
        try {
          const v = make({ apiSecret: [SECRET, 'b'.repeat(64)] });
          expect(reasonOf(await v.verify(request()))).to.equal('OK');
          expect(spy.callCount).to.equal(2);
          for (const call of spy.getCalls()) {
            expect(call.args[0]).to.have.length(32);
            expect(call.args[1]).to.have.length(32);
          }
          spy.resetHistory();
          expect(reasonOf(await v.verify(request({ secret: 'x' })))).to.equal('BAD_SIGNATURE');
          expect(spy.callCount).to.equal(2);
        } finally {
          spy.restore();
        }
      });
    } else {
      it('compares the signature with WebCrypto verify (constant time), once per secret', async () => {
        const subtle = globalThis.crypto.subtle;
        const spy = sinon.spy(subtle, 'verify');
        try {
          const v = make({ apiSecret: [SECRET, 'b'.repeat(64)] });
          expect(reasonOf(await v.verify(request()))).to.equal('OK');
          expect(spy.callCount).to.equal(2);
          expect(spy.firstCall.args[0]).to.equal('HMAC');
          expect(Buffer.from(spy.firstCall.args[2] as Uint8Array).toString('hex')).to.equal((request().headers as Record<string, string>)['x-signature']);
        } finally {
          spy.restore();
        }
      });
    }
  });
}

describe('webhook verifier: node and webcrypto agree', () => {
  it('on good and bad callbacks alike', async () => {
    const n = new WebhookVerifier({ apiSecret: SECRET, now: () => T0, crypto: 'node' });
    const w = new WebhookVerifier({ apiSecret: SECRET, now: () => T0, crypto: 'webcrypto' });
    for (const ex of webhookExamples()) {
      const body = Buffer.from(JSON.stringify(ex.body));
      for (const r of [request({ body }), request({ body, secret: 'nope' }), request({ body, timestamp: T0 - 10 ** 6 })]) {
        expect(reasonOf(await n.verify(r))).to.equal(reasonOf(await w.verify(r)));
      }
    }
    expect(specSignature(SECRET, 'POST', PATH, String(T0), NONCE, BODY)).to.equal((request().headers as Record<string, string>)['x-signature']);
  });
});
