import { expect } from 'chai';
import { HttpJsonError } from './http-json';
import { ChainRpcError } from './chain-errors';
import { ScannerHttp } from './scanner-http';
import { rejected } from './testing/rejected';
import { startReplayServer, type ReplayServer } from './testing/replay-server';

const scannerError = (p: Promise<unknown>): Promise<ChainRpcError> => rejected(p, ChainRpcError);

describe('scanner-http: ChainRpcErrors over the JSON client', () => {
  let server: ReplayServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('an unusable endpoint or policy fails the first call, not the creation', async () => {
    const bad = new ScannerHttp({ url: 'ftp://u:s3cr3t@host/' });
    const e = await scannerError(bad.request('X tip', {}));
    expect(e).to.include({ errorName: 'RPC_CONFIG' });
    expect(e.message).to.not.include('s3cr3t');
    const policy = new ScannerHttp({ url: 'http://127.0.0.1:1/' }, { attempts: 0, backoffMs: 1 });
    await rejected(policy.request('X tip', {}), RangeError);
  });

  it('words failures with the host: unavailable after the retries (429 / 5xx), refused at once (408 too)', async () => {
    server = await startReplayServer((req) => (req.path === '/busy' ? { status: 503, body: '' } : { status: 408, body: '' }));
    const http = new ScannerHttp({ url: server.url }, { attempts: 2, backoffMs: 1 });
    const host = new URL(server.url).host;
    const busy = await scannerError(http.request('X tip', { path: '/busy' }));
    expect(busy).to.include({ errorName: 'RPC_UNAVAILABLE', message: `X tip: ${host} unavailable after 2 attempt(s): HTTP 503` });
    expect(busy.cause).to.be.instanceOf(HttpJsonError);
    const refused = await scannerError(http.request('X page', { path: '/slow' }));
    expect(refused).to.include({ errorName: 'RPC_ERROR', message: `X page: ${host} answered HTTP 408` });
    expect(server.requests.map((r) => r.path)).to.deep.equal(['/busy', '/busy', '/slow']);
  });
});
