import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

/**
 * Test support for scanners: a local HTTP server answering with recorded node responses (no node
 * is reachable from the test environment), and a reader of the recorded fixture files.
 */

export interface SeenRequest {
  readonly method: string;
  /** Path and query as sent. */
  readonly url: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * What the server answers: a status (default 200), headers and a body (text as is, anything else
 * as JSON), after delayMs if given; or 'hang' (never answer).
 */
export type Reply =
  | { readonly status?: number; readonly body: unknown; readonly delayMs?: number; readonly contentType?: string; readonly headers?: Readonly<Record<string, string>> }
  | 'hang';

export interface ReplayServer {
  /** http://127.0.0.1:<port>/ */
  readonly url: string;
  readonly requests: SeenRequest[];
  close(): Promise<void>;
}

/** Starts a server on a free local port; `handler` gets each request and how many came so far (this one included). */
export async function startReplayServer(handler: (req: SeenRequest, n: number) => Reply | Promise<Reply>): Promise<ReplayServer> {
  const requests: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://localhost');
      const seen: SeenRequest = {
        method: req.method ?? '', url: req.url ?? '', path: u.pathname, query: u.searchParams, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(seen);
      Promise.resolve()
        .then(() => handler(seen, requests.length))
        .then((reply) => {
          if (reply === 'hang') return;
          const send = () => {
            res.writeHead(reply.status ?? 200, { 'content-type': reply.contentType ?? 'application/json', ...reply.headers });
            res.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
          };
          if (reply.delayMs) setTimeout(send, reply.delayMs);
          else send();
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

/** Reads recorded responses from `dir` (adapters: path.join(__dirname, '../src/fixtures'), read from dist). */
export function fixtureReader(dir: string): { json<T = unknown>(name: string): T; text(name: string): string } {
  const text = (name: string): string => readFileSync(path.join(dir, name), 'utf8');
  return { text, json: <T = unknown>(name: string): T => JSON.parse(text(name)) as T };
}
