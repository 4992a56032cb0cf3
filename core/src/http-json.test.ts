import { expect } from 'chai';
import { ErrorCodes, WcsError } from './errors';
import { HttpJsonClient, HttpJsonError, readJson, type Verdict } from './http-json';
import { jsonBigInt, parseJsonExact } from './json-exact';
import { rejected } from './testing/rejected';
import { startReplayServer, type ReplayServer } from './testing/replay-server';

const failure = (p: Promise<unknown>): Promise<HttpJsonError> => rejected(p, HttpJsonError);

describe('http-json: JSON over HTTP with bounded retry', () => {
  let server: ReplayServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('retries HTTP 503 and returns the answer that follows', async () => {
    server = await startReplayServer((_req, n) => (n < 3 ? { status: 503, body: 'busy' } : { body: { result: 7 } }));
    const http = new HttpJsonClient({ url: server.url }, { attempts: 3, retryDelayMs: 1 });
    expect(await http.request({ body: '{"method":"x"}' })).to.deep.equal({ result: 7 });
    expect(server.requests.map((r) => r.method)).to.deep.equal(['POST', 'POST', 'POST']);
    expect(server.requests[0]!.headers['content-type']).to.equal('application/json');
    expect(server.requests[0]!.body).to.equal('{"method":"x"}');
  });

  it('gives up after the attempt bound with a coded UNAVAILABLE error', async () => {
    server = await startReplayServer(() => ({ status: 503, body: 'busy' }));
    const e = await failure(new HttpJsonClient({ url: server.url }, { attempts: 3, retryDelayMs: 1 }).request({}));
    expect(e).to.be.instanceOf(WcsError);
    expect(e.code).to.equal(ErrorCodes.SERVICE_UNAVAILABLE.code);
    expect(e).to.include({ failure: 'UNAVAILABLE', reason: 'HTTP 503', responseStatus: 503, attempts: 3 });
    expect(e.message).to.equal('no usable answer after 3 attempt(s) (last: HTTP 503)');
    expect(server.requests).to.have.length(3);
  });

  it('times out a server that never answers, on every attempt', async () => {
    server = await startReplayServer(() => 'hang');
    const started = Date.now();
    const e = await failure(new HttpJsonClient({ url: server.url, timeoutMs: 100 }, { attempts: 2, retryDelayMs: 1 }).request({}));
    expect(e).to.include({ failure: 'UNAVAILABLE', responseStatus: null, attempts: 2 });
    expect(e.reason).to.equal('no answer within 100 ms');
    expect(Date.now() - started).to.be.below(2000);
    expect(server.requests).to.have.length(2);
  });

  it('does not retry a 4xx: REFUSED at once, with the refusal the rules word', async () => {
    server = await startReplayServer(() => ({ status: 400, body: { message: 'bad range' } }));
    const http = new HttpJsonClient({ url: server.url }, { attempts: 3, retryDelayMs: 1 });
    const e = await failure(http.request({}, readJson(undefined, { refusal: (a) => `HTTP ${a.status}: ${(a.json as { message: string }).message}` })));
    expect(e.code).to.equal(ErrorCodes.INTERNAL_ERROR.code);
    expect(e).to.include({ failure: 'REFUSED', reason: 'HTTP 400: bad range', responseStatus: 400, attempts: 1 });
    expect(server.requests).to.have.length(1);
  });

  it('never shows URL credentials, path, query or header values, even when the server echoes them', async () => {
    server = await startReplayServer((req) => ({ status: 401, body: `no access for ${req.url} with ${req.headers['x-api-key']} (http://alice:s3cr3t-pass@node)` }));
    const url = server.url.replace('http://', 'http://alice:s3cr3t-pass@') + 'KEY-IN-PATH/?api_key=QUERY-KEY-1';
    const http = new HttpJsonClient({ url, headers: { 'X-Api-Key': 'HEADER-KEY-2' } }, { attempts: 2, retryDelayMs: 1 });
    const e = await failure(http.request({ path: '/v1/info', query: { n: '1' } }, readJson(undefined, { refusal: (a) => a.text })));
    const seen = server.requests[0]!;
    expect(seen.url).to.equal('/KEY-IN-PATH/v1/info?api_key=QUERY-KEY-1&n=1');
    expect(seen.headers.authorization).to.equal(`Basic ${Buffer.from('alice:s3cr3t-pass').toString('base64')}`);
    expect(seen.headers['x-api-key']).to.equal('HEADER-KEY-2');
    expect(e.failure).to.equal('REFUSED');
    const shown = [e.message, e.reason, e.stack ?? '', JSON.stringify(e)].join('\n');
    for (const secret of ['alice', 's3cr3t-pass', 'KEY-IN-PATH', 'QUERY-KEY-1', 'HEADER-KEY-2', '127.0.0.1']) {
      expect(shown, secret).to.not.include(secret);
    }
    expect(e.reason).to.equal('no access for ***v1/info?***&n=1 with *** (http://***@node)');
    expect(http.origin).to.equal(new URL(server.url).origin);
  });

  it('retries what the adapter reads as transient (a node busy code) and stops on what it reads as wrong', async () => {
    const answers = [{ error: { code: -32005, message: 'behind' } }, { result: 1 }, { error: { code: -32602, message: 'bad param' } }];
    server = await startReplayServer((_req, n) => ({ body: answers[n - 1] }));
    const judge = (json: unknown): Verdict => {
      const error = (json as { error?: { code: number; message: string } }).error;
      if (!error) return { ok: true };
      return { ok: false, retry: error.code === -32005, message: `node error ${error.code}: ${error.message}`, rpcCode: error.code };
    };
    const http = new HttpJsonClient({ url: server.url }, { attempts: 3, retryDelayMs: 1 });
    expect(await http.request({ body: '{}' }, readJson(judge))).to.deep.equal({ result: 1 });
    const e = await failure(http.request({ body: '{}' }, readJson(judge)));
    expect(e).to.include({ failure: 'BAD_ANSWER', rpcCode: -32602, responseStatus: 200, attempts: 1 });
    expect(server.requests).to.have.length(3);
  });

  it('a body that is not JSON is a BAD_ANSWER; a refused connection is UNAVAILABLE with its code', async () => {
    server = await startReplayServer(() => ({ body: '<html>' }));
    const url = server.url;
    expect(await failure(new HttpJsonClient({ url }).request({}))).to.include({ failure: 'BAD_ANSWER', reason: 'the answer is not JSON' });
    await server.close();
    server = undefined;
    const e = await failure(new HttpJsonClient({ url }, { attempts: 2, retryDelayMs: 1 }).request({}));
    expect(e).to.include({ failure: 'UNAVAILABLE', reason: 'network error (ECONNREFUSED)', attempts: 2 });
    expect(e.cause).to.be.instanceOf(Error);
  });

  it('honours Retry-After when asked to, within the delay cap', async () => {
    server = await startReplayServer((_req, n) => (n === 1 ? { status: 429, body: '', headers: { 'retry-after': '1' } } : { body: {} }));
    const http = new HttpJsonClient({ url: server.url }, { retryDelayMs: 1, honourRetryAfter: true, maxRetryDelayMs: 300 });
    const started = Date.now();
    await http.request({});
    expect(Date.now() - started).to.be.within(250, 2000);
  });

  it('refuses an unusable endpoint or options (TypeError) without repeating the URL', () => {
    for (const url of ['ftp://user:s3cr3t@host/x', 'not a url s3cr3t']) {
      expect(() => new HttpJsonClient({ url })).to.throw(TypeError).that.satisfies((e: Error) => !e.message.includes('s3cr3t'));
    }
    expect(() => new HttpJsonClient({ url: 'http://h/', timeoutMs: 0 })).to.throw(TypeError, /timeoutMs/);
    expect(() => new HttpJsonClient({ url: 'http://h/' }, { attempts: 11 })).to.throw(TypeError, /attempts/);
  });
});

describe('json-exact: integers beyond 2^53', () => {
  it('keeps them exact as decimal strings, leaves strings, floats and safe integers alone', () => {
    const v = parseJsonExact('{"a":18446744073709551615,"b":9007199254740991,"s":"12345678901234567890 \\"x\\"","f":1.5e20,"n":-9007199254740993}') as Record<string, unknown>;
    expect(v).to.deep.equal({ a: '18446744073709551615', b: 9007199254740991, s: '12345678901234567890 "x"', f: 1.5e20, n: '-9007199254740993' });
    expect([jsonBigInt(v.a), jsonBigInt(v.b), jsonBigInt(v.f), jsonBigInt('1.5')]).to.deep.equal([18446744073709551615n, 9007199254740991n, null, null]);
  });
});
