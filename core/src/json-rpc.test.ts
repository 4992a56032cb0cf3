import { expect } from 'chai';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ChainErrorCodes, ChainRpcError, ChainTransferError, chainErrorName, isChainError } from './chain-errors';
import { chunk, concurrencyLimit, mapLimit, settleLimit } from './concurrency';
import { allErrorSpecs, WcsError } from './errors';
import { JsonRpcClient } from './json-rpc';

interface Req { id: unknown; method: string; params: unknown; jsonrpc: string }
type Handler = (body: Req | Req[], req: IncomingMessage, n: number) => { status?: number; body: unknown; headers?: Record<string, string> };

/** A real HTTP server answering with `handler`; records every request body and URL. */
async function rpcServer(handler: Handler): Promise<{ url: string; port: number; bodies: Array<Req | Req[]>; urls: string[]; headers: IncomingMessage['headers'][]; close(): Promise<void> }> {
  const bodies: Array<Req | Req[]> = [];
  const urls: string[] = [];
  const headers: IncomingMessage['headers'][] = [];
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => { text += c.toString('utf8'); });
    req.on('end', () => {
      const body = JSON.parse(text) as Req | Req[];
      bodies.push(body);
      urls.push(req.url ?? '');
      headers.push(req.headers);
      const a = handler(body, req, bodies.length);
      res.writeHead(a.status ?? 200, { 'content-type': 'application/json', ...(a.headers ?? {}) });
      res.end(typeof a.body === 'string' ? a.body : JSON.stringify(a.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, port, bodies, urls, headers, close: () => new Promise((r) => server.close(() => r())) };
}

const echo = (r: Req) => ({ jsonrpc: '2.0', id: r.id, result: `${r.method}:${JSON.stringify(r.params)}` });
/** f over a batch's requests, or over a lone request's (answered alone). */
const each = (b: Req | Req[], f: (r: Req) => unknown): unknown => (Array.isArray(b) ? b.map(f) : f(b));

async function rejected<T extends Error>(p: Promise<unknown>, cls: new (...a: never[]) => T): Promise<T> {
  try {
    await p;
  } catch (e) {
    expect(e).to.be.instanceOf(cls);
    return e as T;
  }
  throw new Error('expected a rejection');
}

/** Every message and name in an error's cause chain, with its own properties. */
function everything(e: unknown): string {
  const out: string[] = [];
  for (let cur = e as { message?: string; stack?: string; cause?: unknown } | undefined, n = 0; cur && n < 10; cur = cur.cause as never, n++) {
    out.push(String(cur.message), String(cur.stack), JSON.stringify(cur, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
  }
  return out.join('\n');
}

describe('json-rpc: JsonRpcClient over a real HTTP server', () => {
  it('sends single calls as one request object and returns the result', async () => {
    const s = await rpcServer((b) => ({ body: echo(b as Req) }));
    try {
      const rpc = new JsonRpcClient({ url: s.url }, { label: 'ETH' });
      expect(await rpc.call('eth_blockNumber')).to.equal('eth_blockNumber:[]');
      expect(await rpc.call('eth_getBalance', ['0xab', 'latest'])).to.equal('eth_getBalance:["0xab","latest"]');
      expect(s.bodies[0]).to.include({ jsonrpc: '2.0', method: 'eth_blockNumber' });
      expect(Array.isArray(s.bodies[0])).to.equal(false);
      expect(rpc.endpointName).to.equal(`ETH RPC ${s.url}`);
    } finally {
      await s.close();
    }
  });

  it('batches calls in one request and matches answers by id whatever their order', async () => {
    const s = await rpcServer((b) => ({ body: (b as Req[]).map(echo).reverse() }));
    try {
      const rpc = new JsonRpcClient({ url: s.url });
      const out = await rpc.batchResults([{ method: 'a', params: [1] }, { method: 'b', params: [2] }, { method: 'c', params: [3] }]);
      expect(out).to.deep.equal(['a:[1]', 'b:[2]', 'c:[3]']);
      expect(s.bodies).to.have.length(1);
      const ids = (s.bodies[0] as Req[]).map((r) => r.id);
      expect(new Set(ids).size).to.equal(3);
    } finally {
      await s.close();
    }
  });

  it('splits batches above maxBatch into even chunks, at most `concurrency` in flight', async () => {
    let inFlight = 0;
    let most = 0;
    const s = await rpcServer((b) => ({ body: (b as Req[]).map(echo) }));
    try {
      const rpc = new JsonRpcClient({ url: s.url }, { maxBatch: 10, concurrency: 2 });
      const calls = Array.from({ length: 45 }, (_, i) => ({ method: 'm', params: [i] }));
      const original = rpc.http.request.bind(rpc.http);
      rpc.http.request = async (...a: Parameters<typeof original>) => {
        most = Math.max(most, ++inFlight);
        try {
          return await original(...a);
        } finally {
          inFlight--;
        }
      };
      const out = await rpc.batchResults(calls);
      expect(out).to.deep.equal(calls.map((_, i) => `m:[${i}]`));
      expect(s.bodies.map((b) => (b as Req[]).length)).to.deep.equal([9, 9, 9, 9, 9]);
      expect(most).to.equal(2);
    } finally {
      await s.close();
    }
  });

  it('gives each batch item its result or its own error (RPC_ERROR with the JSON-RPC code)', async () => {
    const s = await rpcServer((b) => ({
      body: each(b, (r) => (r.method === 'bad' ? { jsonrpc: '2.0', id: r.id, error: { code: -32000, message: 'execution reverted' } } : echo(r))),
    }));
    try {
      const rpc = new JsonRpcClient({ url: s.url }, { label: 'ETH' });
      const out = await rpc.batch([{ method: 'good', params: [] }, { method: 'bad', params: [] }, { method: 'good', params: [1] }]);
      expect(out.map((o) => o.ok)).to.deep.equal([true, false, true]);
      const failed = out[1]!;
      if (failed.ok) throw new Error('unreachable');
      expect(failed.rpc).to.deep.equal({ code: -32000, message: 'execution reverted' });
      expect(failed.error).to.be.instanceOf(ChainRpcError).and.instanceOf(WcsError);
      expect(failed.error.errorName).to.equal('RPC_ERROR');
      expect(failed.error.code).to.equal(ChainErrorCodes.RPC_ERROR.code);
      expect(failed.error.rpcCode).to.equal(-32000);
      expect(failed.error.method).to.equal('bad');
      expect(failed.error.message).to.include('bad failed: execution reverted');
      await rejected(rpc.batchResults([{ method: 'good' }, { method: 'bad' }]), ChainRpcError);
      const single = await rejected(rpc.call('bad'), ChainRpcError);
      expect(single.rpcCode).to.equal(-32000);
    } finally {
      await s.close();
    }
  });

  it('refuses answers whose ids do not match the requests (RPC_BAD_RESPONSE)', async () => {
    let mode = 'wrong-id';
    const s = await rpcServer((b) => {
      if (mode === 'wrong-id') return { body: Array.isArray(b) ? b.map((r) => ({ jsonrpc: '2.0', id: Number(r.id) + 1000, result: 1 })) : { jsonrpc: '2.0', id: 'other', result: 1 } };
      if (mode === 'missing') return { body: (b as Req[]).slice(1).map(echo) };
      if (mode === 'object-for-batch') return { body: { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batches are not allowed' } } };
      return { body: { jsonrpc: '2.0', id: (b as Req).id } };
    });
    try {
      const rpc = new JsonRpcClient({ url: s.url });
      expect((await rejected(rpc.call('x'), ChainRpcError)).errorName).to.equal('RPC_BAD_RESPONSE');
      expect((await rejected(rpc.batch([{ method: 'x' }, { method: 'y' }]), ChainRpcError)).errorName).to.equal('RPC_BAD_RESPONSE');
      mode = 'missing';
      const missing = await rejected(rpc.batch([{ method: 'x' }, { method: 'y' }]), ChainRpcError);
      expect(missing.message).to.match(/no answer for request/);
      mode = 'object-for-batch';
      const refused = await rejected(rpc.batch([{ method: 'x' }, { method: 'y' }]), ChainRpcError);
      expect([refused.errorName, refused.rpcCode]).to.deep.equal(['RPC_ERROR', -32600]);
      mode = 'neither';
      expect((await rejected(rpc.call('x'), ChainRpcError)).message).to.match(/neither result nor error/);
    } finally {
      await s.close();
    }
  });

  it('retries transient failures a bounded number of times, then RPC_UNAVAILABLE', async () => {
    const s = await rpcServer(() => ({ status: 503, body: 'busy' }));
    try {
      const rpc = new JsonRpcClient({ url: s.url }, { attempts: 3, backoffMs: 1 });
      const e = await rejected(rpc.call('x'), ChainRpcError);
      expect([e.errorName, e.responseStatus, e.attempts, e.httpStatus]).to.deep.equal(['RPC_UNAVAILABLE', 503, 3, 503]);
      expect(s.bodies).to.have.length(3);
      const once = new JsonRpcClient({ url: s.url }, { attempts: 1 });
      await rejected(once.call('x'), ChainRpcError);
      expect(s.bodies).to.have.length(4);
      expect(() => new JsonRpcClient({ url: s.url }, { attempts: 11 })).to.throw(ChainRpcError, /attempts/);
    } finally {
      await s.close();
    }
  });

  it('recovers when a retry succeeds, and asks again only for rate-limited batch items', async () => {
    const s = await rpcServer((b, _req, n) => {
      if (n === 1) return { status: 502, body: 'gateway' };
      const items = (Array.isArray(b) ? b : [b]).map((r) => (r.method === 'limited' && n < 4 ? { jsonrpc: '2.0', id: r.id, error: { code: -32005, message: 'rate limit exceeded' } } : echo(r)));
      return { body: Array.isArray(b) ? items : items[0] };
    });
    try {
      const rpc = new JsonRpcClient({ url: s.url }, { attempts: 4, backoffMs: 1 });
      const out = await rpc.batchResults([{ method: 'fine' }, { method: 'limited' }]);
      expect(out).to.deep.equal(['fine:[]', 'limited:[]']);
      // 1: 502; 2: both, one limited; 3: the limited one alone, limited again; 4: answered.
      expect(s.bodies.map((b) => (Array.isArray(b) ? b.map((r) => r.method) : [b.method]))).to.deep.equal([['fine', 'limited'], ['fine', 'limited'], ['limited'], ['limited']]);
    } finally {
      await s.close();
    }
  });

  it('refuses non-transient statuses at once, with a credentials hint on 401 / 403', async () => {
    const s = await rpcServer(() => ({ status: 401, body: { error: 'no' } }));
    try {
      const e = await rejected(new JsonRpcClient({ url: s.url }, { backoffMs: 1 }).call('x'), ChainRpcError);
      expect([e.errorName, e.responseStatus]).to.deep.equal(['RPC_ERROR', 401]);
      expect(e.message).to.match(/credentials/);
      expect(s.bodies).to.have.length(1);
    } finally {
      await s.close();
    }
  });

  it('takes a JSON-RPC body over an error status when asked to (bitcoind answers errors with HTTP 500)', async () => {
    const s = await rpcServer((b) => ({ status: 500, body: { result: null, id: (b as Req).id, error: { code: -5, message: 'No such mempool transaction' } } }));
    try {
      const rpc = new JsonRpcClient({ url: s.url }, { version: '1.0', bodyOverStatus: true, backoffMs: 1 });
      const e = await rejected(rpc.call('getrawtransaction', ['00']), ChainRpcError);
      expect([e.errorName, e.rpcCode, e.nodeMessage]).to.deep.equal(['RPC_ERROR', -5, 'No such mempool transaction']);
      expect((s.bodies[0] as Req).jsonrpc).to.equal('1.0');
      expect(s.bodies).to.have.length(1);
    } finally {
      await s.close();
    }
  });

  it('falls back to single calls for good when the node refuses batches (batchFallback), asking in arrays once', async () => {
    const s = await rpcServer((b) => (Array.isArray(b)
      ? { status: 400, body: { result: null, id: null, error: { code: -32600, message: 'batches not supported' } } }
      : { body: echo(b) }));
    try {
      const rpc = new JsonRpcClient({ url: s.url }, { version: '1.0', bodyOverStatus: true, batchFallback: true, backoffMs: 1 });
      const calls = Array.from({ length: 30 }, (_, i) => ({ method: 'm', params: [i] }));
      expect(await rpc.batchResults(calls)).to.deep.equal(calls.map((c) => `m:${JSON.stringify(c.params)}`));
      expect(s.bodies.filter((b) => Array.isArray(b))).to.have.length(1);
      expect(await rpc.batchResults(calls.slice(0, 5))).to.have.length(5);
      expect(s.bodies.filter((b) => Array.isArray(b))).to.have.length(1);
      expect(s.bodies).to.have.length(1 + 35);
      // Without the option the refusal is the caller's.
      const plain = new JsonRpcClient({ url: s.url }, { version: '1.0', bodyOverStatus: true, backoffMs: 1 });
      expect((await rejected(plain.batch(calls.slice(0, 2)), ChainRpcError)).errorName).to.equal('RPC_ERROR');
    } finally {
      await s.close();
    }
  });

  it('itemRetriesUnavailable: an item still "not now" after the attempts is RPC_UNAVAILABLE; retryItems: false asks once', async () => {
    const s = await rpcServer((b) => ({ body: each(b, (r) => (r.method === 'behind' ? { jsonrpc: '2.0', id: r.id, error: { code: -32005, message: 'Node is behind' } } : echo(r))) }));
    try {
      const rpc = new JsonRpcClient({ url: s.url }, { backoffMs: 1, retryItem: (e) => e.code === -32005, itemRetriesUnavailable: true });
      const [ok, behind] = await rpc.batch([{ method: 'm' }, { method: 'behind' }]);
      expect(ok!.ok).to.equal(true);
      expect(behind!.ok).to.equal(false);
      const e = (behind as { error: ChainRpcError }).error;
      expect([e.errorName, e.rpcCode, e.attempts]).to.deep.equal(['RPC_UNAVAILABLE', -32005, 3]);
      expect(s.bodies).to.have.length(3);
      const [once] = await rpc.batch([{ method: 'behind' }], { retryItems: false });
      expect((once as { error: ChainRpcError }).error.errorName).to.equal('RPC_ERROR');
      expect(s.bodies).to.have.length(4);
    } finally {
      await s.close();
    }
  });

  it('sizes one batch by its own maxBatch', async () => {
    const s = await rpcServer((b) => ({ body: each(b, echo) }));
    try {
      const rpc = new JsonRpcClient({ url: s.url }, { maxBatch: 50, concurrency: 4 });
      await rpc.batch(Array.from({ length: 16 }, (_, i) => ({ method: 'm', params: [i] })), { maxBatch: 4 });
      expect(s.bodies.map((b) => (Array.isArray(b) ? b.length : 1))).to.deep.equal([4, 4, 4, 4]);
    } finally {
      await s.close();
    }
  });

  it('makes REST GETs on the same endpoint with the same errors (rest)', async () => {
    const { createServer: create } = await import('node:http');
    const server = create((req, res) => {
      res.writeHead(req.url === '/base/ok' ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(req.url === '/base/ok' ? [1, 2] : { error: { message: 'no such thing' } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const rpc = new JsonRpcClient({ url: `http://u:s3cr3t@127.0.0.1:${(server.address() as AddressInfo).port}/base` }, { label: 'bcoin' });
      expect(await rpc.rest('/ok')).to.deep.equal([1, 2]);
      const e = await rejected(rpc.rest('/missing?key=s3cr3t'), ChainRpcError);
      expect([e.errorName, e.responseStatus, e.method]).to.deep.equal(['RPC_ERROR', 404, 'GET /missing']);
      expect(e.message).to.include('no such thing');
      expect(everything(e)).to.not.include('s3cr3t');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('never shows URL credentials, path keys or header values, in messages or causes', async () => {
    const s = await rpcServer((b, req) => ({ status: req.url?.includes('fail') ? 503 : 200, body: { jsonrpc: '2.0', id: (b as Req).id, error: { code: -32000, message: `bad request to ${req.url} with headerkey789 and sekrit` } } }));
    try {
      const secrets = ['sekrit', 'pathkey123', 'headerkey789', 'querykey456'];
      const endpoint = { url: `http://alice:sekrit@127.0.0.1:${s.port}/v2/pathkey123?key=querykey456`, headers: { 'x-api-key': 'headerkey789' } };
      const rpc = new JsonRpcClient(endpoint, { label: 'ETH', backoffMs: 1 });
      const e = await rejected(rpc.call('eth_chainId'), ChainRpcError);
      expect(s.headers[0]!.authorization).to.equal(`Basic ${Buffer.from('alice:sekrit').toString('base64')}`);
      expect(s.headers[0]!['x-api-key']).to.equal('headerkey789');
      for (const x of secrets) expect(everything(e)).not.to.include(x);
      expect(e.message).to.include(`ETH RPC http://127.0.0.1:${s.port}`);

      const down = new JsonRpcClient({ ...endpoint, url: `http://alice:sekrit@127.0.0.1:${s.port}/fail/pathkey123?key=querykey456` }, { attempts: 2, backoffMs: 1 });
      const u = await rejected(down.call('x'), ChainRpcError);
      expect(u.errorName).to.equal('RPC_UNAVAILABLE');
      for (const x of secrets) expect(everything(u)).not.to.include(x);

      await s.close();
      const refused = await rejected(new JsonRpcClient(endpoint, { attempts: 2, backoffMs: 1 }).call('x'), ChainRpcError);
      expect(refused.message).to.match(/ECONNREFUSED/);
      for (const x of secrets) expect(everything(refused)).not.to.include(x);

      const config = (() => { try { new JsonRpcClient({ url: 'ftp://alice:sekrit@host/pathkey123' }); } catch (x) { return x; } return null; })();
      expect(config).to.be.instanceOf(ChainRpcError);
      expect((config as ChainRpcError).errorName).to.equal('RPC_CONFIG');
      for (const x of secrets) expect(everything(config)).not.to.include(x);
    } finally {
      await s.close().catch(() => undefined);
    }
  });

  it('times out a silent node per request (timeoutMs) and counts it as unavailable', async () => {
    const server = createServer(() => undefined);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const rpc = new JsonRpcClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }, { attempts: 2, backoffMs: 1, timeoutMs: 100 });
      const e = await rejected(rpc.call('x'), ChainRpcError);
      expect(e.errorName).to.equal('RPC_UNAVAILABLE');
      expect(e.message).to.match(/no answer within 100 ms/);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

describe('chain errors', () => {
  it('are coded WcsErrors whose errorName is the stable name adapters use', () => {
    const root = new Error('boom');
    const e = new ChainTransferError('DUST_AFTER_FEE', '500 sat left after the fee', { fee: 5n, cause: root });
    expect(e).to.be.instanceOf(WcsError);
    expect([e.code, e.errorName, e.fee, e.cause]).to.deep.equal([ChainErrorCodes.DUST_AFTER_FEE.code, 'DUST_AFTER_FEE', 5n, root]);
    expect(isChainError(e)).to.equal(true);
    expect(chainErrorName(e)).to.equal('DUST_AFTER_FEE');
    expect(chainErrorName(Object.assign(new Error('x'), { code: 'DUST_AFTER_FEE' }))).to.equal('DUST_AFTER_FEE');
    expect(chainErrorName(new WcsError('INTERNAL_ERROR'))).to.equal(undefined);
    expect(new ChainRpcError('RPC_TRY_LATER', 'later').httpStatus).to.equal(503);
  });

  it('have codes in the scheme (module 1009), distinct from the API catalogue and each other', () => {
    const api = allErrorSpecs();
    const chain = Object.values(ChainErrorCodes);
    for (const s of chain) {
      expect(String(s.code)).to.match(/^1009\d{6}$/);
      expect(api.some((a) => a.code === s.code || a.name === s.name), s.name).to.equal(false);
    }
    expect(new Set(chain.map((s) => s.code)).size).to.equal(chain.length);
    for (const [k, s] of Object.entries(ChainErrorCodes)) expect(s.name).to.equal(k);
  });
});

describe('concurrency', () => {
  const tick = () => new Promise((r) => setTimeout(r, 2));

  it('mapLimit keeps order, bounds the items in flight and stops at the first failure', async () => {
    let inFlight = 0;
    let most = 0;
    const out = await mapLimit([5, 1, 4, 2, 3], 2, async (x, i) => {
      most = Math.max(most, ++inFlight);
      await tick();
      inFlight--;
      return x * 10 + i;
    });
    expect(out).to.deep.equal([50, 11, 42, 23, 34]);
    expect(most).to.equal(2);
    const started: number[] = [];
    const err = await mapLimit([1, 2, 3, 4, 5], 1, async (x) => {
      started.push(x);
      if (x === 2) throw new Error('two');
      return x;
    }).catch((e: Error) => e);
    expect((err as Error).message).to.equal('two');
    expect(started).to.deep.equal([1, 2]);
    expect(() => mapLimit([1], 0, async (x) => x)).to.throw(RangeError);
  });

  it('settleLimit answers each item or its Error; concurrencyLimit gates calls; chunk cuts runs', async () => {
    const out = await settleLimit([1, 2, 3], 2, async (x) => {
      if (x === 2) throw new Error('two');
      return x;
    });
    expect(out[0]).to.equal(1);
    expect((out[1] as Error).message).to.equal('two');
    expect(out[2]).to.equal(3);
    const gate = concurrencyLimit(1);
    let inFlight = 0;
    let most = 0;
    await Promise.all([1, 2, 3].map(() => gate(async () => { most = Math.max(most, ++inFlight); await tick(); inFlight--; })));
    expect(most).to.equal(1);
    expect(chunk([1, 2, 3, 4, 5], 2)).to.deep.equal([[1, 2], [3, 4], [5]]);
  });
});
