/**
 * A merchant callback receiver over HTTPS on loopback, for live applications (their callback
 * URLs must be https). Its certificate is self-signed for IP 127.0.0.1, made with the openssl
 * command at start; a service process trusts it through NODE_EXTRA_CA_CERTS=<certFile>, as an
 * on-premise deployment trusts a private CA. Records what it receives in the same shape as
 * CallbackReceiver, so verifyCallback applies unchanged.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ReceivedCallback } from './callback-receiver';

export class HttpsCallbackReceiver {
  readonly received: ReceivedCallback[] = [];
  private server: https.Server | null = null;
  private readonly sockets = new Set<Socket>();
  private dir: string | null = null;
  /** The PEM certificate to trust (NODE_EXTRA_CA_CERTS). */
  certFile = '';

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  url(p = '/callback'): string {
    return `https://127.0.0.1:${this.port}${p}`;
  }

  async start(): Promise<this> {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-e2e-tls-'));
    const keyFile = path.join(this.dir, 'key.pem');
    this.certFile = path.join(this.dir, 'cert.pem');
    try {
      execFileSync('openssl', [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', this.certFile,
        '-days', '2', '-subj', '/CN=wcs-e2e-merchant', '-addext', 'subjectAltName=IP:127.0.0.1',
      ], { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (e) {
      throw new Error(`the HTTPS callback receiver needs the openssl command (OpenSSL 1.1.1 or later) to make its certificate: ${(e as Error).message}`);
    }
    this.server = https.createServer({ key: fs.readFileSync(keyFile), cert: fs.readFileSync(this.certFile) }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.received.push({ method: req.method ?? '', target: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks), at: Date.now(), seq: this.received.length + 1 });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"code":0}');
      });
    });
    this.server.on('secureConnection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    if (this.server) await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = null;
    if (this.dir) fs.rmSync(this.dir, { recursive: true, force: true });
    this.dir = null;
  }
}
