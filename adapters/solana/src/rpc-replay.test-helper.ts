import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

/**
 * Test support: a local HTTP server that answers the scanner's requests with recorded RPC
 * responses (no node is reachable from the test environment). Fixtures live in src/fixtures and
 * are read from dist through ../src/fixtures; see src/fixtures/SOURCE.md for where each came from.
 */
export const FIXTURES = path.join(__dirname, '../src/fixtures');

export function fixture<T = unknown>(name: string): T {
  return JSON.parse(readFileSync(path.join(FIXTURES, name), 'utf8')) as T;
}

export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** What the server answers: a status and a body, or 'hang' (never answer). */
export type Reply = { readonly status: number; readonly body: string } | 'hang';

export interface ReplayServer {
  readonly url: string;
  readonly requests: SeenRequest[];
  close(): Promise<void>;
}

export async function startReplayServer(handler: (req: SeenRequest) => Reply | Promise<Reply>): Promise<ReplayServer> {
  const requests: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen: SeenRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(seen);
      Promise.resolve(handler(seen)).then((reply) => {
        if (reply === 'hang') return;
        res.writeHead(reply.status, { 'content-type': 'application/json' });
        res.end(reply.body);
      }, (e: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(e));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
