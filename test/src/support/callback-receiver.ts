/**
 * A merchant's callback receiver on loopback, for tests, and a signature verifier written
 * from the spec alone ("Events": request headers and verification), not from the server:
 *
 *   stringToSign = "POST" \n merchant callback path \n X-Timestamp \n X-Nonce \n sha256hex(raw body)
 *   X-Signature  = lowercase hex HMAC-SHA256(key = API secret, message = stringToSign)
 *   receiver rules: verify the raw bytes, refuse timestamps more than 5 minutes off,
 *   compare in constant time.
 */
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildStringToSign, hmacSha256Hex, sha256Hex, stripQuery } from '../client/signing-client';

export interface ReceivedCallback {
  readonly method: string;
  /** Path and query as requested. */
  readonly target: string;
  readonly headers: http.IncomingHttpHeaders;
  /** The raw body bytes. */
  readonly body: Buffer;
  /** Arrival time (ms since epoch, real clock). */
  readonly at: number;
  readonly seq: number;
}

/** What the receiver answers: status, body and headers; or 'hang' (never answers) / 'reset' (drops the connection). */
export type Reply = { status: number; body?: string | Buffer; headers?: Record<string, string> } | 'hang' | 'reset';

export class CallbackReceiver {
  readonly received: ReceivedCallback[] = [];
  private server: http.Server | null = null;
  private readonly sockets = new Set<import('node:net').Socket>();
  private waiters: Array<{ n: number; resolve: () => void }> = [];
  /** Decides each answer; the default ACKs with {"code":0}. */
  reply: (req: ReceivedCallback) => Reply | Promise<Reply> = () => ({ status: 200, body: '{"code":0}' });

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  url(path = '/callback'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r: ReceivedCallback = { method: req.method ?? '', target: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks), at: Date.now(), seq: this.received.length + 1 };
        this.received.push(r);
        for (const w of this.waiters.filter((x) => this.received.length >= x.n)) w.resolve();
        this.waiters = this.waiters.filter((x) => this.received.length < x.n);
        void Promise.resolve(this.reply(r)).then((reply) => {
          if (reply === 'hang') return;
          if (reply === 'reset') {
            req.socket.destroy();
            return;
          }
          res.writeHead(reply.status, reply.headers ?? {});
          res.end(reply.body ?? '');
        });
      });
    });
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  /** Resolves once n callbacks in total have arrived, or rejects after timeoutMs. */
  waitFor(n: number, timeoutMs = 10_000): Promise<void> {
    if (this.received.length >= n) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`receiver: ${this.received.length} of ${n} callbacks after ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({ n, resolve: () => (clearTimeout(t), resolve()) });
    });
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    if (this.server) await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = null;
  }
}

/** Why a received callback does not verify under the spec's rules, or null when it does. */
export function verifyCallback(r: ReceivedCallback, apiKey: string, apiSecret: string, nowMs = Date.now()): string | null {
  const h = (name: string) => {
    const v = r.headers[name];
    return typeof v === 'string' ? v : null;
  };
  if (r.method !== 'POST') return `method ${r.method}`;
  if (h('x-api-key') !== apiKey) return `X-Api-Key ${h('x-api-key')}`;
  const ts = h('x-timestamp');
  const nonce = h('x-nonce');
  const sig = h('x-signature');
  if (!ts || !/^\d{13}$/.test(ts)) return `X-Timestamp ${ts}`;
  if (Math.abs(nowMs - Number(ts)) > 300_000) return 'X-Timestamp more than 5 minutes off';
  if (!nonce) return 'X-Nonce missing';
  if (!sig || !/^[0-9a-f]{64}$/.test(sig)) return `X-Signature ${sig}`;
  const expected = hmacSha256Hex(apiSecret, buildStringToSign('POST', stripQuery(r.target), ts, nonce, sha256Hex(r.body)));
  if (!crypto.timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(sig, 'hex'))) return 'signature does not match';
  return null;
}
