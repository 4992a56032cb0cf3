/**
 * Baseline of the callback-delivery benchmark: a bare HTTP POST loop, in its own process.
 * CONCURRENCY loops share one keep-alive agent (maxSockets = CONCURRENCY, like the
 * dispatcher's per-endpoint pool); each POSTs the next event body (the same template and
 * size as the dispatcher's tasks, with the same header names and value lengths but no
 * signature computed) and waits for the answer, from START_AT for SECONDS. No database, no
 * signing, no attempt log. Prints one line, RESULT {...}, then waits to be stopped.
 *
 * Usage: PORT=<port> API_KEY=<key> CONCURRENCY=8 SECONDS=10 START_AT=<ms> node bench/dist/callback-post-loop.js
 */
import * as http from 'node:http';
import { ACK_BODY, callbackBody, CALLBACK_PATH } from './lib/callbacks';

const port = Number(process.env.PORT);
const apiKey = process.env.API_KEY ?? '';
const concurrency = Number(process.env.CONCURRENCY ?? '8');
const seconds = Number(process.env.SECONDS ?? '10');
const startAt = Number(process.env.START_AT ?? Date.now());
const firstId = Number(process.env.FIRST_ID ?? '1');

const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
// Placeholders of the real lengths: 32 hex nonce, 64 hex signature (the receiver does not verify during the load).
const NONCE = '0'.repeat(32);
const SIGNATURE = '0'.repeat(64);

let nextId = firstId;
const tally = { requests: 0, ok: 0, badAck: 0, errors: 0, errorSamples: [] as string[] };

function post(): Promise<void> {
  const body = Buffer.from(callbackBody(nextId++), 'utf8');
  return new Promise<void>((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: CALLBACK_PATH,
        agent,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': String(body.length),
          'User-Agent': 'wcs-callback/1',
          'X-Api-Key': apiKey,
          'X-Timestamp': String(Date.now()),
          'X-Nonce': NONCE,
          'X-Signature': SIGNATURE,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          tally.requests++;
          if (res.statusCode === 200 && Buffer.concat(chunks).toString('utf8') === ACK_BODY) tally.ok++;
          else tally.badAck++;
          resolve();
        });
        res.on('error', (e) => fail(e));
      },
    );
    const fail = (e: Error) => {
      tally.requests++;
      tally.errors++;
      if (tally.errorSamples.length < 5) tally.errorSamples.push(e.message);
      resolve();
    };
    req.on('error', fail);
    req.end(body);
  });
}

async function main(): Promise<void> {
  const wait = startAt - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  const t0 = Date.now();
  const endAt = t0 + seconds * 1000;
  const cpu0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < endAt) await post();
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  const elapsed = (Date.now() - t0) / 1000;
  agent.destroy();
  process.stdout.write(`RESULT ${JSON.stringify({ ...tally, seconds: elapsed, startedLateMs: Math.max(0, -wait), cpuUs: cpu.user + cpu.system })}\n`);
}

// After RESULT the process stays until it is stopped (SIGTERM), so the benchmark can still read its CPU time.
main().then(
  () => void setInterval(() => undefined, 60_000),
  (e: unknown) => {
    process.stderr.write(`post loop failed: ${(e as Error)?.stack ?? e}\n`);
    process.exit(1);
  },
);
