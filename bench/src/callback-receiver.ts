/**
 * The merchant's side of the callback-delivery benchmark: a minimal node:http server that
 * ACKs every POST with HTTP 200 {"code":0} and records its arrival time. It verifies nothing
 * while it is being loaded (the same cheap work for every request, whoever sends it); the
 * checks (request line, body bytes, API key and, on request, the signatures) run when the
 * benchmark takes the records, between runs.
 *
 * Usage: PORT=<port> API_KEY=<key> API_SECRET=<secret> node bench/dist/callback-receiver.js
 */
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import { ACK_BODY, bodyId, callbackBody, CALLBACK_PATH, CONTROL, type ReceiverChecks, type ReceiverCount, type ReceiverTake } from './lib/callbacks';
import { closeOnSignals } from './lib/serve';

const port = Number(process.env.PORT ?? '0');
const apiKey = process.env.API_KEY ?? '';
const apiSecret = process.env.API_SECRET ?? '';

// The records since the last take (parallel arrays; references only, nothing parsed).
let at: number[] = [];
let method: string[] = [];
let url: string[] = [];
let rawHeaders: string[][] = [];
let bodies: Buffer[] = [];

const ACK = Buffer.from(ACK_BODY);
const ACK_HEADERS = { 'Content-Type': 'application/json', 'Content-Length': String(ACK.length) };

function header(raw: string[], name: string): string | undefined {
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) return raw[i + 1];
  return undefined;
}

function take(verify: boolean): ReceiverTake {
  const n = at.length;
  const checks: ReceiverChecks = {
    wrongRequest: 0, badBody: 0, wrongApiKey: 0, signatureOk: 0, signatureBad: 0, duplicateNonces: 0, maxSignToArrivalMs: null, samples: [],
  };
  const bad = (why: string) => {
    if (checks.samples.length < 5) checks.samples.push(why);
  };
  const ids: number[] = new Array<number>(n);
  const nonces: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < n; i++) {
    const raw = rawHeaders[i]!;
    const text = bodies[i]!.toString('utf8');
    const id = bodyId(text);
    ids[i] = id ?? -1;
    if (method[i] !== 'POST' || url[i] !== CALLBACK_PATH || header(raw, 'content-type') !== 'application/json') {
      checks.wrongRequest++;
      bad(`request ${method[i]} ${url[i]} (content-type ${header(raw, 'content-type')})`);
    }
    if (id === null || text !== callbackBody(id)) {
      checks.badBody++;
      bad(`body ${JSON.stringify(text.slice(0, 120))}`);
    }
    if (header(raw, 'x-api-key') !== apiKey) {
      checks.wrongApiKey++;
      bad(`X-Api-Key ${header(raw, 'x-api-key')}`);
    }
    if (!verify) continue;
    const ts = header(raw, 'x-timestamp') ?? '';
    const nonce = header(raw, 'x-nonce') ?? '';
    const sig = header(raw, 'x-signature') ?? '';
    nonces.push(nonce);
    const bodyHash = crypto.createHash('sha256').update(bodies[i]!).digest('hex');
    const want = crypto.createHmac('sha256', apiSecret).update(`POST\n${CALLBACK_PATH}\n${ts}\n${nonce}\n${bodyHash}`).digest('hex');
    if (sig.length === want.length && crypto.timingSafeEqual(Buffer.from(sig), Buffer.from(want)) && /^\d{13}$/.test(ts) && /^[0-9a-f]{32}$/.test(nonce)) {
      checks.signatureOk++;
    } else {
      checks.signatureBad++;
      bad(`signature ${sig} over ts ${ts} nonce ${nonce} does not verify`);
    }
    if (seen.has(nonce)) {
      checks.duplicateNonces++;
      bad(`nonce ${nonce} seen twice`);
    }
    seen.add(nonce);
    const d = at[i]! - Number(ts);
    if (Number.isFinite(d)) checks.maxSignToArrivalMs = Math.max(checks.maxSignToArrivalMs ?? d, d);
  }
  const result: ReceiverTake = { count: n, at, id: ids, nonce: nonces, checks };
  at = [];
  method = [];
  url = [];
  rawHeaders = [];
  bodies = [];
  return result;
}

function control(req: http.IncomingMessage, res: http.ServerResponse): void {
  const u = new URL(req.url!, 'http://x');
  let body: unknown;
  if (u.pathname === CONTROL.count) {
    const c: ReceiverCount = { count: at.length, first: at.length ? at[0]! : null, last: at.length ? at[at.length - 1]! : null };
    body = c;
  } else if (u.pathname === CONTROL.take && req.method === 'POST') {
    body = take(u.searchParams.get('verify') === '1');
  } else {
    res.writeHead(404).end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)) });
  res.end(text);
}

const server = http.createServer((req, res) => {
  const t = Date.now();
  if (req.url!.startsWith('/_bench/')) {
    req.resume();
    req.on('end', () => control(req, res));
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    at.push(t);
    method.push(req.method!);
    url.push(req.url!);
    rawHeaders.push(req.rawHeaders);
    bodies.push(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    res.writeHead(200, ACK_HEADERS);
    res.end(ACK);
  });
});
// Longer than any pause between runs: an idle keep-alive connection is never closed under a sender.
server.keepAliveTimeout = 120_000;
server.headersTimeout = 121_000;
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`callback receiver listening on http://127.0.0.1:${port}${CALLBACK_PATH}\n`);
});

closeOnSignals(server);
