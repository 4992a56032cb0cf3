import { expect } from 'chai';
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { freePort } from '../testing';
import { deliver, DeliveryAgents, judgeAck, mask, summarize, SUMMARY_MAX_CHARS, TRUNCATION_MARKER, type DeliveryRequest } from './delivery';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A loopback HTTP server: records every connection and request, answers with handler. */
class Loopback {
  readonly requests: Seen[] = [];
  connections = 0;
  private readonly sockets = new Set<Socket>();
  private readonly server: http.Server;
  handler: (req: http.IncomingMessage, res: http.ServerResponse, seen: Seen) => void = (_q, res) => res.end('{"code":0}');

  constructor() {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
        this.requests.push(seen);
        this.handler(req, res, seen);
      });
    });
    this.server.on('connection', (s: Socket) => {
      this.connections++;
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(path: string, host = '127.0.0.1'): string {
    return `http://${host}:${this.port}${path}`;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const API_KEY = 'pk_test_0123456789abcdef0123456789abcdef';
const SECRET = crypto.randomBytes(32);

function request(url: string, over: Partial<DeliveryRequest> = {}): DeliveryRequest {
  return {
    url,
    apiKey: API_KEY,
    secret: SECRET,
    body: Buffer.from(JSON.stringify({ event: 'recharge', id: 42, amount: '1.5', memo: 'héllo €' })),
    timeoutMs: 5000,
    maxResponseBytes: 65536,
    guardTargets: false,
    ...over,
  };
}

describe('callbacks: delivery', () => {
  describe('judgeAck (the ACK rule)', () => {
    const acks: Array<[number, string]> = [
      [200, 'ok'],
      [200, 'OK'],
      [200, 'Ok'],
      [200, 'success'],
      [200, 'SUCCESS'],
      [200, ' success '],
      [200, '\r\nok\n'],
      [200, '"ok"'],
      [200, '"Success"'],
      [200, '{"code":0}'],
      [200, '{"code":"0"}'],
      [200, '{ "code" : 0, "msg": "", "data": null }\n'],
      [200, '{"code":0,"msg":"anything"}'],
    ];
    for (const [status, body] of acks) {
      it(`${status} ${JSON.stringify(body)} -> ACK`, () => {
        expect(judgeAck(status, Buffer.from(body))).to.equal(null);
      });
    }

    const noAcks: Array<[number, string, string]> = [
      [200, '{"code":1,"msg":"ok"}', 'receiver rejected the callback: code 1'],
      [200, '{"code":"1"}', 'receiver rejected the callback: code "1"'],
      [200, '{"code":500,"msg":"success"}', 'receiver rejected the callback: code 500'],
      [200, '{"code":null}', 'receiver rejected the callback: code null'],
      [200, '{"code":false}', 'receiver rejected the callback: code false'],
      [200, '{"msg":"ok"}', 'no ACK marker in the response body'],
      [200, '["ok"]', 'no ACK marker in the response body'],
      [200, 'okay', 'no ACK marker in the response body'],
      [200, 'not ok', 'no ACK marker in the response body'],
      [200, 'ok!', 'no ACK marker in the response body'],
      [200, 'success\nok', 'no ACK marker in the response body'],
      [200, '', 'no ACK marker in the response body'],
      [200, 'null', 'no ACK marker in the response body'],
      [201, 'ok', 'HTTP 201'],
      [204, '', 'HTTP 204'],
      [302, 'ok', 'HTTP 302 (redirects are not followed)'],
      [500, '{"code":0}', 'HTTP 500'],
      [503, 'ok', 'HTTP 503'],
    ];
    for (const [status, body, reason] of noAcks) {
      it(`${status} ${JSON.stringify(body)} -> ${reason}`, () => {
        expect(judgeAck(status, Buffer.from(body))).to.equal(reason);
      });
    }
  });

  describe('summarize and mask', () => {
    it('keeps text of at most 1000 characters unchanged', () => {
      const t = 'a'.repeat(SUMMARY_MAX_CHARS);
      expect(summarize(t)).to.equal(t);
      expect(summarize('')).to.equal('');
    });

    it('cuts longer text to 1000 characters plus the marker', () => {
      const t = 'x'.repeat(SUMMARY_MAX_CHARS) + 'y'.repeat(500);
      const s = summarize(t);
      expect(s).to.equal('x'.repeat(SUMMARY_MAX_CHARS) + TRUNCATION_MARKER);
      expect(TRUNCATION_MARKER).to.equal('...[truncated]');
    });

    it('counts multi-byte and astral characters as one each and never splits one', () => {
      for (const ch of ['é', '€', '中', '😀']) {
        const t = ch.repeat(SUMMARY_MAX_CHARS + 1);
        const s = summarize(t);
        expect(s.endsWith(TRUNCATION_MARKER), ch).to.equal(true);
        const kept = s.slice(0, -TRUNCATION_MARKER.length);
        expect(Array.from(kept), ch).to.have.length(SUMMARY_MAX_CHARS);
        expect(kept).to.equal(ch.repeat(SUMMARY_MAX_CHARS));
        // well-formed UTF-16: survives a UTF-8 round trip unchanged (no lone surrogate)
        expect(Buffer.from(s, 'utf8').toString('utf8')).to.equal(s);
        expect(summarize(ch.repeat(SUMMARY_MAX_CHARS)), ch).to.equal(ch.repeat(SUMMARY_MAX_CHARS));
      }
    });

    it('mask keeps only a recognisable prefix and suffix', () => {
      expect(mask(API_KEY, 10)).to.equal('pk_test_01****cdef');
      expect(mask('abcdefgh', 4)).to.equal('********');
      expect(mask('', 4)).to.equal('');
    });
  });

  describe('deliver() against a loopback HTTP server', () => {
    let srv: Loopback;
    beforeEach(async () => {
      srv = await new Loopback().start();
    });
    afterEach(async () => {
      await srv.stop();
    });

    it('POSTs the exact body, signed over POST\\npath-without-query\\nts\\nnonce\\nsha256(body); ACK on {"code":0}', async () => {
      const req = request(srv.url('/hooks/recharge?token=abc&x=1'));
      const before = Date.now();
      const r = await deliver(req);
      expect(r.errorReason).to.equal(null);
      expect(r.accepted).to.equal(true);
      expect(r.responseStatus).to.equal(200);
      expect(r.responseBody!.toString()).to.equal('{"code":0}');
      expect(srv.requests).to.have.length(1);
      const seen = srv.requests[0]!;
      expect(seen.method).to.equal('POST');
      expect(seen.url).to.equal('/hooks/recharge?token=abc&x=1');
      expect(seen.body.equals(req.body)).to.equal(true);
      expect(seen.headers['content-type']).to.equal('application/json');
      expect(seen.headers['content-length']).to.equal(String(req.body.length));
      expect(seen.headers['x-api-key']).to.equal(API_KEY);
      const ts = seen.headers['x-timestamp'] as string;
      const nonce = seen.headers['x-nonce'] as string;
      const sig = seen.headers['x-signature'] as string;
      expect(ts).to.match(/^\d{13}$/);
      expect(Number(ts)).to.be.within(before - 1000, Date.now() + 1000);
      expect(nonce).to.be.a('string').and.have.length.greaterThan(15);
      expect(sig).to.match(/^[0-9a-f]{64}$/);
      // independent verification, written from the spec
      const bodyHash = crypto.createHash('sha256').update(seen.body).digest('hex');
      const expected = crypto.createHmac('sha256', SECRET).update(`POST\n/hooks/recharge\n${ts}\n${nonce}\n${bodyHash}`).digest('hex');
      expect(sig).to.equal(expected);
      // the query string is not part of the signed path
      const withQuery = crypto.createHmac('sha256', SECRET).update(`POST\n/hooks/recharge?token=abc&x=1\n${ts}\n${nonce}\n${bodyHash}`).digest('hex');
      expect(sig).to.not.equal(withQuery);
    });

    it('a fresh timestamp/nonce (and so signature) on every attempt; same body bytes', async () => {
      const req = request(srv.url('/cb'));
      for (let i = 0; i < 3; i++) expect((await deliver(req)).accepted).to.equal(true);
      expect(srv.requests).to.have.length(3);
      expect(new Set(srv.requests.map((s) => s.headers['x-nonce'])).size).to.equal(3);
      expect(new Set(srv.requests.map((s) => s.headers['x-signature'])).size).to.equal(3);
      for (const s of srv.requests) expect(s.body.equals(req.body)).to.equal(true);
    });

    it('the headers summary has the pseudo-entries and masks API key and signature', async () => {
      const url = srv.url('/cb?q=1');
      const r = await deliver(request(url));
      const seen = srv.requests[0]!;
      const h = r.requestHeadersSummary;
      expect(Object.keys(h).sort()).to.deep.equal([':method', ':url', 'Content-Type', 'X-Api-Key', 'X-Nonce', 'X-Signature', 'X-Timestamp'].sort());
      expect(h[':method']).to.equal('POST');
      expect(h[':url']).to.equal(url);
      expect(h['Content-Type']).to.equal('application/json');
      expect(h['X-Timestamp']).to.equal(seen.headers['x-timestamp']);
      expect(h['X-Nonce']).to.equal(seen.headers['x-nonce']);
      const sig = seen.headers['x-signature'] as string;
      expect(h['X-Api-Key']).to.equal('pk_test_01****cdef');
      expect(h['X-Signature']).to.equal(`${sig.slice(0, 4)}****${sig.slice(-4)}`);
      const all = JSON.stringify(h);
      expect(all).to.not.include(API_KEY);
      expect(all).to.not.include(sig);
      expect(all).to.not.include(SECRET.toString('hex'));
    });

    it('a non-ACK answer is recorded with status, content type, body and the reason', async () => {
      srv.handler = (_q, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });
        res.end('{"code":7,"msg":"bad signature"}');
      };
      const r = await deliver(request(srv.url('/cb')));
      expect(r.accepted).to.equal(false);
      expect(r.responseStatus).to.equal(200);
      expect(r.responseContentType).to.equal('application/json; charset=utf-8');
      expect(r.responseBody!.toString()).to.equal('{"code":7,"msg":"bad signature"}');
      expect(r.errorReason).to.equal('receiver rejected the callback: code 7');
    });

    it('timeout: a server that never answers -> "timeout after N ms" close to N', async () => {
      srv.handler = () => undefined; // never answers
      const N = 400;
      const started = Date.now();
      const r = await deliver(request(srv.url('/slow'), { timeoutMs: N }));
      const took = Date.now() - started;
      expect(r.errorReason).to.equal(`timeout after ${N} ms`);
      expect(r.accepted).to.equal(false);
      expect(r.responseStatus).to.equal(null);
      expect(r.responseBody).to.equal(null);
      expect(took).to.be.within(N - 5, N + 600);
      expect(r.latencyMs).to.be.within(N - 5, N + 600);
      expect(srv.requests).to.have.length(1);
    });

    it('timeout also covers a response whose body never finishes', async () => {
      srv.handler = (_q, res) => {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.write('o'); // ... and never the rest
      };
      const r = await deliver(request(srv.url('/trickle'), { timeoutMs: 400 }));
      expect(r.errorReason).to.equal('timeout after 400 ms');
      expect(r.accepted).to.equal(false);
      expect(r.responseStatus).to.equal(200);
      expect(r.latencyMs).to.be.within(395, 1000);
    });

    it('a response larger than the cap is refused; at most cap bytes are kept', async () => {
      const cap = 1024;
      srv.handler = (_q, res) => {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        // many chunks, far past the cap
        for (let i = 0; i < 64; i++) res.write('ok'.padEnd(512, ' '));
        res.end();
      };
      const r = await deliver(request(srv.url('/big'), { maxResponseBytes: cap }));
      expect(r.accepted).to.equal(false);
      expect(r.errorReason).to.equal(`response body larger than ${cap} bytes (not read further)`);
      expect(r.responseStatus).to.equal(200);
      expect(r.responseBody).to.be.instanceOf(Buffer);
      expect(r.responseBody!.length).to.be.at.most(cap);
      expect(r.responseBody!.length).to.be.greaterThan(0);
    });

    it('a single chunk past the cap is cut at the cap', async () => {
      srv.handler = (_q, res) => res.end('ok' + ' '.repeat(5000));
      const r = await deliver(request(srv.url('/big1'), { maxResponseBytes: 1024 }));
      expect(r.errorReason).to.match(/larger than 1024 bytes/);
      expect(r.responseBody!.length).to.be.at.most(1024);
    });

    it('a response of exactly the cap is read whole and judged', async () => {
      const body = 'ok' + ' '.repeat(1022);
      srv.handler = (_q, res) => res.end(body);
      const r = await deliver(request(srv.url('/exact'), { maxResponseBytes: 1024 }));
      expect(r.errorReason).to.equal(null);
      expect(r.accepted).to.equal(true);
      expect(r.responseBody!.toString()).to.equal(body);
    });

    it('connection refused', async () => {
      const port = await freePort(); // nothing listens there
      const r = await deliver(request(`http://127.0.0.1:${port}/cb`));
      expect(r.accepted).to.equal(false);
      expect(r.errorReason).to.equal('connection refused');
      expect(r.responseStatus).to.equal(null);
      expect(r.responseBody).to.equal(null);
    });

    it('connection reset by the receiver', async () => {
      srv.handler = (req) => req.socket.destroy();
      const r = await deliver(request(srv.url('/reset')));
      expect(r.accepted).to.equal(false);
      expect(r.errorReason).to.equal('connection reset by the receiver');
    });

    it('a redirect is not followed: the Location target gets no request', async () => {
      srv.handler = (req, res) => {
        if (req.url === '/moved') {
          res.writeHead(302, { Location: `http://127.0.0.1:${srv.port}/target` });
          res.end('ok');
        } else {
          res.end('ok');
        }
      };
      const r = await deliver(request(srv.url('/moved')));
      expect(r.accepted).to.equal(false);
      expect(r.responseStatus).to.equal(302);
      expect(r.errorReason).to.equal('HTTP 302 (redirects are not followed)');
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(srv.requests.map((s) => s.url)).to.deep.equal(['/moved']);
    });

    it('guardTargets: a loopback literal is refused before any connection is made', async () => {
      for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]']) {
        const r = await deliver(request(srv.url('/cb', host), { guardTargets: true }));
        expect(r.accepted, host).to.equal(false);
        expect(r.responseStatus).to.equal(null);
        expect(r.errorReason).to.match(/^target refused: (127\.0\.0\.1|::ffff:7f00:1) is a loopback, private, link-local or metadata address$/);
        expect(r.latencyMs).to.equal(0);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(srv.connections).to.equal(0);
      expect(srv.requests).to.have.length(0);
    });

    it('guardTargets: a loopback name is refused at connect time (guarded lookup), no connection made', async () => {
      const r = await deliver(request(srv.url('/cb', 'localhost'), { guardTargets: true }));
      expect(r.accepted).to.equal(false);
      expect(r.responseStatus).to.equal(null);
      expect(r.errorReason).to.equal('target refused: localhost is a loopback name');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(srv.connections).to.equal(0);
    });

    it('guardTargets false (test apps, WCS_CALLBACK_ALLOW_PRIVATE) reaches loopback', async () => {
      const r = await deliver(request(srv.url('/cb', 'localhost'), { guardTargets: false }));
      expect(r.errorReason).to.equal(null);
      expect(r.accepted).to.equal(true);
      expect(srv.requests).to.have.length(1);
    });

    it('keep-alive pools: a connection opened unguarded is never reused for a guarded delivery', async () => {
      const agents = new DeliveryAgents(4);
      try {
        const open = await deliver(request(srv.url('/a', 'localhost')), agents);
        expect(open.accepted).to.equal(true);
        const open2 = await deliver(request(srv.url('/b', 'localhost')), agents);
        expect(open2.accepted).to.equal(true);
        expect(srv.connections, 'the open pool reuses its connection').to.equal(1);
        const guarded = await deliver(request(srv.url('/c', 'localhost'), { guardTargets: true }), agents);
        expect(guarded.accepted).to.equal(false);
        expect(guarded.errorReason).to.equal('target refused: localhost is a loopback name');
        expect(srv.requests.map((s) => s.url)).to.deep.equal(['/a', '/b']);
        expect(srv.connections).to.equal(1);
      } finally {
        agents.destroy();
      }
    });
  });
});
