import * as crypto from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../config/logger';

export interface Exposition {
  readonly contentType: string;
  readonly body: string;
}

export interface MetricsServerOptions {
  readonly host: string;
  /** 0: a free port. */
  readonly port: number;
  /** When set, `Authorization: Bearer <token>` is required. */
  readonly token: string | null;
  /** The tokens accepted (current and, during a rotation, previous), read at each request; replaces `token` when given. */
  readonly tokens?: { readonly required: boolean; digests(): Promise<readonly Buffer[]> } | null;
  readonly render: () => Promise<Exposition>;
  readonly logger: Logger;
}

const BEARER_RE = /^Bearer[ \t]+(\S+)[ \t]*$/i;

function digest(s: string): Buffer {
  return crypto.createHash('sha256').update(s, 'utf8').digest();
}

/**
 * Whether an Authorization header carries the token (or one of the tokens: during a rotation the
 * current and the previous), in constant time: both sides are hashed first, so neither a token's
 * content nor its length shows in the time taken, and every token is compared, whichever matches.
 */
export function bearerMatches(header: string | undefined, expected: Buffer | readonly Buffer[]): boolean {
  const m = typeof header === 'string' ? BEARER_RE.exec(header) : null;
  const given = digest(m ? m[1]! : '');
  let match = false;
  for (const e of Buffer.isBuffer(expected) ? [expected] : expected) match = crypto.timingSafeEqual(given, e) || match;
  return match && m !== null;
}

/**
 * GET /metrics in the Prometheus text format on a port of its own (never the API's): nothing
 * else is served there. With a token, every request without the right bearer token is 401.
 */
export class MetricsServer {
  private server: http.Server | null = null;
  private readonly expected: Buffer | null;

  constructor(private readonly o: MetricsServerOptions) {
    this.expected = o.token === null ? null : digest(o.token);
  }

  get url(): string {
    const a = this.server?.address() as AddressInfo | null | undefined;
    if (!a) throw new Error('metrics server not started');
    const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
    return `http://${host}:${a.port}/metrics`;
  }

  async start(): Promise<void> {
    const server = http.createServer((req, res) => void this.handle(req, res));
    server.requestTimeout = 30_000;
    server.headersTimeout = 10_000;
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.port, this.o.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (e: Error) => this.o.logger.error('metrics server error', { reason: e.message }));
    this.server = server;
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return;
    await new Promise<void>((resolve) => {
      s.close(() => resolve());
      s.closeAllConnections();
    });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    res.setHeader('Cache-Control', 'no-store');
    const text = (status: number, body: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', ...headers });
      res.end(req.method === 'HEAD' ? undefined : body + '\n');
    };
    const expected = this.o.tokens ? (this.o.tokens.required ? await this.o.tokens.digests() : null) : this.expected;
    if (expected && !bearerMatches(req.headers.authorization, expected)) {
      text(401, 'unauthorized', { 'WWW-Authenticate': 'Bearer realm="wcs-metrics"' });
      return;
    }
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics') {
      text(404, 'not found: metrics are served at /metrics');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      text(405, 'method not allowed', { Allow: 'GET, HEAD' });
      return;
    }
    try {
      const { contentType, body } = await this.o.render();
      res.writeHead(200, { 'Content-Type': contentType });
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch (e) {
      this.o.logger.error('metrics scrape failed', { error: e });
      text(500, 'metrics collection failed');
    }
  }
}
