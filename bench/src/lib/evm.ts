/**
 * What the anvil benchmarks (deposits, withdrawals) share: bare JSON-RPC over global fetch
 * (keep-alive, no retries: the baselines' client) and the merchant's callback receiver in the
 * benchmark process (one clock with the observers), with the spec's signature check.
 */
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import { freePort } from '@wcs/server/testing';
import type { Credentials } from './signing';

let rpcId = 1;

export async function rpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: rpcId++, method, params }) });
  const body = (await res.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

/** Several calls as JSON-RPC batches of at most 100 (set-up, checks, receipt polling); results in call order. */
export async function rpcBatch<T = unknown>(url: string, calls: Array<{ method: string; params: unknown[] }>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < calls.length; i += 100) {
    const part = calls.slice(i, i + 100);
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(part.map((c, j) => ({ jsonrpc: '2.0', id: j, method: c.method, params: c.params }))),
    });
    const body = (await res.json()) as Array<{ id: number; result?: T; error?: { message: string } }>;
    const byId = new Map(body.map((b) => [b.id, b]));
    part.forEach((c, j) => {
      const b = byId.get(j);
      if (!b || b.error) throw new Error(`${c.method}: ${b?.error?.message ?? 'no answer'}`);
      out.push(b.result as T);
    });
  }
  return out;
}

export interface Arrival {
  /** performance.now() when the request's headers were parsed; wall: Date.now() then. */
  at: number;
  wall: number;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** The merchant's callback receiver: ACKs every POST with {"code":0} and records it. */
export class Receiver {
  readonly arrivals: Arrival[] = [];
  private server: http.Server | null = null;
  port = 0;

  async start(): Promise<void> {
    this.port = await freePort();
    const ack = Buffer.from('{"code":0}');
    this.server = http.createServer((req, res) => {
      const at = performance.now();
      const wall = Date.now();
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.arrivals.push({ at, wall, path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(ack.length) });
        res.end(ack);
      });
    });
    this.server.keepAliveTimeout = 120_000;
    this.server.headersTimeout = 121_000;
    await new Promise<void>((resolve, reject) => this.server!.once('error', reject).listen(this.port, '127.0.0.1', resolve));
  }

  count(p: string, since = 0): number {
    let n = 0;
    for (let i = since; i < this.arrivals.length; i++) if (this.arrivals[i]!.path === p) n++;
    return n;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    const s = this.server;
    this.server = null;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}

/** Null when the callback is signed as docs/callbacks.md says (HMAC-SHA256 over the spec's string to sign), else why not. */
export function signatureProblem(a: Arrival, creds: Credentials): string | null {
  const h = (n: string) => {
    const v = a.headers[n];
    return typeof v === 'string' ? v : '';
  };
  if (h('x-api-key') !== creds.apiKey) return `X-Api-Key ${h('x-api-key')}`;
  if (!/^\d{13}$/.test(h('x-timestamp')) || !/^[0-9a-f]{32}$/.test(h('x-nonce'))) return `timestamp/nonce ${h('x-timestamp')}/${h('x-nonce')}`;
  const bodyHash = crypto.createHash('sha256').update(a.body).digest('hex');
  const want = crypto.createHmac('sha256', creds.apiSecret).update(`POST\n${a.path}\n${h('x-timestamp')}\n${h('x-nonce')}\n${bodyHash}`).digest('hex');
  const got = h('x-signature');
  return got.length === want.length && crypto.timingSafeEqual(Buffer.from(got), Buffer.from(want)) ? null : 'signature does not verify';
}
