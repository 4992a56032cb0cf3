/**
 * Test helpers written from the spec, independently of the SDK's code: the signature
 * (node:crypto directly), a loopback HTTP server that records requests and answers what a
 * test scripts, and the webhook examples of server/openapi.json (one per event type).
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';

export const SDK_ROOT = path.resolve(__dirname, '..', '..', '..');
export const REPO_ROOT = path.resolve(SDK_ROOT, '..');

export const SECRET = 'a3f1c9e07b5d42869e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f';
export const API_KEY = 'pk_test_0123456789abcdef0123456789abcdef';

export const sha256Hex = (b: Buffer | string) => crypto.createHash('sha256').update(b).digest('hex');
export const hmacHex = (secret: string, msg: string) => crypto.createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.from(msg, 'utf8')).digest('hex');

/** The spec's signature of a request or callback. */
export function specSignature(secret: string, method: string, pathNoQuery: string, timestamp: string, nonce: string, body: Buffer | string): string {
  return hmacHex(secret, [method, pathNoQuery, timestamp, nonce, sha256Hex(body)].join('\n'));
}

/** Signed callback headers as the service sends them (lower-case names, as node delivers them). */
export function callbackHeaders(body: Buffer | string, o: { path?: string; secret?: string; timestamp?: number | string; nonce?: string; apiKey?: string } = {}): Record<string, string> {
  const timestamp = String(o.timestamp ?? Date.now());
  const nonce = o.nonce ?? crypto.randomBytes(16).toString('hex');
  return {
    'content-type': 'application/json',
    'user-agent': 'wcs-callback/1',
    'x-api-key': o.apiKey ?? API_KEY,
    'x-timestamp': timestamp,
    'x-nonce': nonce,
    'x-signature': specSignature(o.secret ?? SECRET, 'POST', o.path ?? '/wcs/callbacks', timestamp, nonce, body),
  };
}

/** The webhook examples of server/openapi.json: one body per event type, as the service's builders make them. */
export function webhookExamples(): Array<{ event: string; body: Record<string, unknown> }> {
  const doc = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'server', 'openapi.json'), 'utf8')) as {
    webhooks: Record<string, { post: { requestBody: { content: { 'application/json': { examples: Record<string, { value: Record<string, unknown> }> } } } } }>;
  };
  const out: Array<{ event: string; body: Record<string, unknown> }> = [];
  for (const w of Object.values(doc.webhooks)) {
    for (const ex of Object.values(w.post.requestBody.content['application/json'].examples)) out.push({ event: String(ex.value.event), body: ex.value });
  }
  return out;
}

export interface Recorded {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export type Reply = { status?: number; headers?: Record<string, string>; body?: string | object; delayMs?: number; destroy?: boolean };

/** A loopback server: records every request and answers with `reply(request, index)`. */
export class ScriptedServer {
  readonly requests: Recorded[] = [];
  reply: (r: Recorded, i: number) => Reply = () => ({ body: { code: 0, data: null, msg: '' } });
  private server: http.Server | null = null;
  url = '';

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r: Recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
        const i = this.requests.push(r) - 1;
        const a = this.reply(r, i);
        const go = () => {
          if (a.destroy) return req.socket.destroy();
          const body = a.body === undefined ? '' : typeof a.body === 'string' ? a.body : JSON.stringify(a.body);
          res.writeHead(a.status ?? 200, { 'Content-Type': 'application/json', 'X-Request-Id': `req-${i}`, ...(a.headers ?? {}) });
          res.end(body);
        };
        if (a.delayMs) setTimeout(go, a.delayMs);
        else go();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise((r) => this.server!.close(r));
    this.server = null;
  }

  /** Whether the i-th request carries a valid spec signature for this secret. */
  verify(i: number, secret = SECRET): boolean {
    const r = this.requests[i]!;
    const h = (n: string) => String(r.headers[n]);
    return h('x-signature') === specSignature(secret, r.method, r.url.split('?')[0]!, h('x-timestamp'), h('x-nonce'), r.body);
  }
}

export const ok = (data: unknown) => ({ body: { code: 0, data, msg: '' } });
export const err = (code: number, msg: string, status = 200, headers?: Record<string, string>) => ({ status, body: { code, data: null, msg }, ...(headers ? { headers } : {}) });
