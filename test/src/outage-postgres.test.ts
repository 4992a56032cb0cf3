/**
 * A Postgres outage under load (docs/operations.md "Database outages"): the service runs (API,
 * console and every worker) on a private embedded cluster of this file, which the test stops and
 * starts again while a dozen and more clients send signed requests, console pages and /readyz.
 * Twice: a fast shutdown (SIGINT: sessions get 57P01) and an immediate one (SIGQUIT: crash
 * recovery at the next start, 57P03 while it runs). Every answer must be a success or HTTP 503
 * with the envelope, code 1000009002 and Retry-After (the console: 503 with Retry-After), never a
 * 500, never a dropped connection. Afterwards requests succeed again, both LISTEN connections
 * (credential cache, callback wake-up) are back, and a deposit sent after the restarts is scanned
 * and its callback delivered: the scanner and the dispatcher resumed on their own, in the same
 * process. No unhandled rejection, and no connectivity failure logged with a stack.
 *
 * The shared test cluster is never touched: other files run against it in parallel.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import { Client } from 'pg';
import { sendNative, startAnvil, type AnvilDevnet } from '@wcs/adapter-evm/devnet';
import type { CreatedApplication } from '@wcs/server';
import { createLogger, WcsService } from '@wcs/server';
import type { EmbeddedPostgres } from '@wcs/server/dist/db/embedded';
import { freePort, prepareTestKeystore, testConfig, testEnv, TEST_ACTOR } from '@wcs/server/testing';
import { rawRequest, SigningClient, type ClientResponse } from './client/signing-client';
import { CallbackReceiver } from './support/callback-receiver';
import { Codes, expectOk, pollUntil, sleep } from './support/expect';
import { pastFirstLogin } from './support/first-login';
import { cliJson, isPostgres, runCli } from './support/processes';
import { ADDRESS_CREATE, RECHARGE_LIST, type RechargeEvent } from './support/recharge-types';
import { tempDir } from './support/temp';

/** The test-network ETH chain of the built-in catalogue (Sepolia definition), scanned on anvil. */
const ETH_TEST_CHAIN_ID = 102;
const ETHER = 10n ** 18n;
const DATABASE = 'wcs_outage';

/** The server's embedded cluster class (not a public export; the e2e fixtures load it the same way). */
function embeddedPostgres(): typeof EmbeddedPostgres {
  const dist = path.join(path.dirname(require.resolve('@wcs/server/package.json')), 'dist');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require(path.join(dist, 'db', 'embedded.js')) as typeof import('@wcs/server/dist/db/embedded')).EmbeddedPostgres;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A cluster of this file only (own data directory and port), stopped and started at will. */
class PrivateCluster {
  private current: EmbeddedPostgres | null = null;
  readonly dir = tempDir('wcs-outage-pg-');
  port = 0;

  async start(): Promise<void> {
    if (!this.port) this.port = await freePort();
    const Ctor = embeddedPostgres();
    const pg = new Ctor(this.dir, this.port);
    expect(await pg.ensureRunning(), 'this file started its own cluster').to.equal(true);
    this.current = pg;
  }

  url(database: string): string {
    return this.current!.url(database);
  }

  async ensureDatabase(name: string): Promise<void> {
    await this.current!.ensureDatabase(name);
  }

  /** Stops the postmaster with a signal (SIGINT fast, SIGQUIT immediate shutdown) and waits until it is gone. */
  async kill(signal: 'SIGINT' | 'SIGQUIT'): Promise<void> {
    const pid = Number(fs.readFileSync(path.join(this.dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
    expect(Number.isInteger(pid) && pid > 0 && alive(pid) && isPostgres(pid), `postmaster ${pid}`).to.equal(true);
    process.kill(pid, signal);
    const r = await pollUntil(async () => alive(pid), (a) => !a, 20_000, 20);
    expect(r.ok, `postmaster ${pid} still running after ${signal}`).to.equal(true);
    this.current = null; // its process is gone: a stop() would wait for an exit that has happened
  }

  async stop(): Promise<void> {
    await this.current?.stop();
    this.current = null;
  }
}

type Verdict = 'ok' | 'unavailable' | 'bad';

interface Tally {
  ok: number;
  unavailable: number;
  bad: string[];
  /** When the last success of each kind arrived (ms since epoch). */
  lastOk: Map<string, number>;
}

/** The API's answers: a success, or the documented outage answer (503, envelope, 1000009002, Retry-After). */
function judgeApi(res: ClientResponse): Verdict {
  const envelope = /^application\/json\b/.test(String(res.headers['content-type'])) && res.json && typeof res.json === 'object' &&
    Object.keys(res.json).sort().join(',') === 'code,data,msg';
  if (!envelope) return 'bad';
  if (res.status === 200 && res.json.code === Codes.OK) return 'ok';
  if (res.status === 503 && res.json.code === Codes.SERVICE_UNAVAILABLE && res.json.msg === 'Service temporarily unavailable' && /^[1-9]\d*$/.test(String(res.headers['retry-after']))) {
    return 'unavailable';
  }
  return 'bad';
}

/** /readyz: ready, or not ready with the envelope's unavailable code. */
function judgeReady(res: ClientResponse): Verdict {
  if (!/^application\/json\b/.test(String(res.headers['content-type'])) || !res.json) return 'bad';
  if (res.status === 200 && res.json.code === Codes.OK && res.json.data?.status === 'ready') return 'ok';
  if (res.status === 503 && res.json.code === Codes.SERVICE_UNAVAILABLE && res.json.data?.status === 'not_ready') return 'unavailable';
  return 'bad';
}

/** A console page for a signed-in operator: the page, or 503 with Retry-After naming the unavailable code. */
function judgeConsole(res: ClientResponse): Verdict {
  if (res.status === 200 && /<h1|<main/i.test(res.text)) return 'ok';
  if (res.status === 503 && /^[1-9]\d*$/.test(String(res.headers['retry-after'])) && res.text.includes(String(Codes.SERVICE_UNAVAILABLE))) return 'unavailable';
  return 'bad';
}

/** Every "stack" anywhere in a log record. */
function stacks(v: unknown, out: string[] = []): string[] {
  if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (k === 'stack' && typeof x === 'string') out.push(x);
      else stacks(x, out);
    }
  }
  return out;
}

describe('Postgres outage under load: 503 SERVICE_UNAVAILABLE, never 500; workers resume on their own', function () {
  this.timeout(300_000);
  const cluster = new PrivateCluster();
  const receiver = new CallbackReceiver();
  const logLines: Array<Record<string, unknown>> = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);
  let anvil: AnvilDevnet;
  let svc: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  let consoleCookie = '';

  /** One query on a connection of its own (the cluster goes away in between: no pool to break). */
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => {
    const c = new Client({ connectionString: cluster.url(DATABASE) });
    await c.connect();
    try {
      return (await c.query(text, params)).rows as T[];
    } finally {
      await c.end();
    }
  };

  before(async () => {
    process.on('unhandledRejection', onUnhandled);
    anvil = await startAnvil({ chainId: 11155111 }); // the catalogue's test ETH (Sepolia) id
    await cluster.start();
    await cluster.ensureDatabase(DATABASE);
    await prepareTestKeystore();
    await receiver.start();
    const env = {
      WCS_RPC_TEST_ETH: anvil.url,
      WCS_SCAN_POLL_MS: '100',
      WCS_CALLBACK_POLL_MS: '100',
      WCS_CALLBACK_ALLOW_PRIVATE: '1',
      WCS_CONSOLE_PORT: '0',
    };
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logLines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    svc = await WcsService.start(testConfig(cluster.url(DATABASE), env), createLogger({ level: 'warn', format: 'json', stream }), { api: true, workers: true, console: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'outage', environment: 'test', chains: ['ETH'] });
    await svc.storage.applications.setCallback(TEST_ACTOR, app.id, 'RECHARGE', receiver.url('/merchant/recharge'));
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    // a console operator (viewer: no TOTP) and its session
    const made = await runCli(['operator', 'create', '--username', 'olive', '--role', 'viewer', '--json'], { ...process.env, ...testEnv(cluster.url(DATABASE)) });
    expect(made.code, made.stdout + made.stderr).to.equal(0);
    const password = cliJson(['operator', 'create'], made).password as string;
    await pastFirstLogin(cluster.url(DATABASE), ['olive']); // its pages are served only once past the first login
    const login = await fetch(`${svc.consoleUrl}/login`, {
      method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: 'olive', password, totp: '' }).toString(),
    });
    expect(login.status).to.equal(303);
    consoleCookie = login.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  });

  after(async () => {
    process.removeListener('unhandledRejection', onUnhandled);
    await svc?.stop();
    await receiver.stop();
    await anvil?.stop();
    await cluster.stop();
  });

  it('answers 503 1000009002 (never 500) while Postgres restarts, then succeeds again; the workers resume', async () => {
    const tally: Tally = { ok: 0, unavailable: 0, bad: [], lastOk: new Map() };
    let running = true;
    let user = 0;
    const record = (kind: string, verdict: Verdict, detail: () => string) => {
      if (verdict === 'ok') {
        tally.ok++;
        tally.lastOk.set(kind, Date.now());
      } else if (verdict === 'unavailable') tally.unavailable++;
      else tally.bad.push(`${kind}: ${detail()}`);
    };
    const signed: Array<[string, () => Promise<ClientResponse>]> = [
      ['address/create', () => client.post(ADDRESS_CREATE, { chainCode: 'ETH', externalUserId: `u${++user}` })],
      ['address/list-by-user', () => client.get(`/api/v1/wallet/address/list-by-user?externalUserId=u${Math.max(1, user)}`)],
      ['recharge/list', () => client.get(`${RECHARGE_LIST}?pageSize=10`)],
      ['support/chains', () => client.get('/api/v1/wallet/support/chains')],
      ['support/tokens', () => client.get('/api/v1/wallet/support/tokens?chainCode=ETH')],
    ];
    const loop = async (i: number) => {
      while (running) {
        const [kind, send] = signed[i % signed.length]!;
        try {
          const res = await send();
          record(kind, judgeApi(res), () => `HTTP ${res.status} ${res.headers['content-type']} ${res.text.slice(0, 300)}`);
        } catch (e) {
          record(kind, 'bad', () => `no answer: ${(e as Error).message}`);
        }
        await sleep(5);
      }
    };
    const readyLoop = async () => {
      while (running) {
        try {
          const res = await rawRequest(svc.url, { method: 'GET', path: '/readyz' });
          record('readyz', judgeReady(res), () => `HTTP ${res.status} ${res.text.slice(0, 300)}`);
        } catch (e) {
          record('readyz', 'bad', () => `no answer: ${(e as Error).message}`);
        }
        await sleep(50);
      }
    };
    const consoleLoop = async () => {
      while (running) {
        try {
          const res = await rawRequest(svc.consoleUrl, { method: 'GET', path: '/', headers: { cookie: consoleCookie } });
          record('console', judgeConsole(res), () => `HTTP ${res.status} ${res.text.slice(0, 300)}`);
        } catch (e) {
          record('console', 'bad', () => `no answer: ${(e as Error).message}`);
        }
        await sleep(20);
      }
    };
    const loops = [...Array.from({ length: 15 }, (_, i) => loop(i)), readyLoop(), consoleLoop(), consoleLoop()];

    /** Waits until every kind of request has succeeded after `since`. */
    const allSucceedSince = async (since: number, what: string) => {
      const kinds = [...signed.map(([k]) => k), 'readyz', 'console'];
      const r = await pollUntil(async () => kinds.filter((k) => (tally.lastOk.get(k) ?? 0) <= since), (left) => left.length === 0, 60_000, 100);
      expect(r.ok, `${what}: no success since for ${r.result.join(', ')}; bad so far: ${tally.bad.slice(0, 5).join(' | ')}`).to.equal(true);
    };

    let heightBefore: string | null | undefined;
    try {
      await allSucceedSince(0, 'before the outage');
      const okBefore = tally.ok;
      heightBefore = (await q<{ height: string | null }>('SELECT height::text AS height FROM scan_cursors WHERE chain_id = $1', [ETH_TEST_CHAIN_ID]))[0]?.height;
      expect(heightBefore, 'the scanner ran before the outage').to.be.a('string');

      for (const signal of ['SIGINT', 'SIGQUIT'] as const) {
        const unavailableBefore = tally.unavailable;
        await sleep(300); // load on a running database first
        await cluster.kill(signal);
        await sleep(1500); // down: connections refused
        await cluster.start(); // starting up (and recovering after SIGQUIT): 57P03
        const back = Date.now();
        await allSucceedSince(back, `after the ${signal} restart`);
        expect(tally.unavailable, `503s answered during the ${signal} outage`).to.be.greaterThan(unavailableBefore);
      }
      expect(tally.ok).to.be.greaterThan(okBefore);
    } finally {
      running = false;
      await Promise.all(loops);
    }
    expect(tally.bad, `answers that were neither a success nor the 503 outage answer (of ${tally.ok} ok, ${tally.unavailable} unavailable)`).to.deep.equal([]);

    // the LISTEN connections are back: the credential cache is used again and callbacks wake at once
    const listening = await pollUntil(async () => (await q<{ query: string }>(`SELECT query FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN %' ORDER BY query`, [DATABASE])).map((r) => r.query), (l) => l.length >= 2, 20_000, 100);
    expect(listening.result, 'LISTEN connections after the restarts').to.have.length(2);
    expect((await svc.readiness()).checks.credentialCache).to.equal('listening');

    // the scanner and the dispatcher resumed without a restart: a deposit made now is scanned and called back
    const to = (expectOk(await client.post(ADDRESS_CREATE, { chainCode: 'ETH', externalUserId: 'after-outage' })) as { address: string }).address;
    const txHash = await sendNative(anvil.url, to, ETHER / 4n);
    const called = await pollUntil(async () => receiver.received.map((r) => JSON.parse(r.body.toString('utf8')) as RechargeEvent).filter((e) => e.txHash === txHash), (ev) => ev.length > 0, 60_000, 100);
    expect(called.ok, `recharge callback of ${txHash}`).to.equal(true);
    expect(called.result[0]!.address.toLowerCase()).to.equal(to.toLowerCase());
    const cursor = (await q<{ height: string; last_error: string | null }>('SELECT height::text AS height, last_error FROM scan_cursors WHERE chain_id = $1', [ETH_TEST_CHAIN_ID]))[0]!;
    expect(BigInt(cursor.height) > BigInt(heightBefore!), `scan cursor ${cursor.height} after ${heightBefore}`).to.equal(true);

    // the outage was logged as such, one line per failure and no stack; nothing else failed
    const messages = logLines.map((l) => String(l.message));
    expect(messages, 'API requests logged as database unavailable').to.include('request failed: database unavailable');
    expect(messages, 'an API request failed otherwise').to.not.include('request failed');
    expect(messages, 'a console request failed otherwise').to.not.include('console request failed');
    // the workers met the outage (and, as shown above, resumed): the scanner's failed steps name the database's code
    const scanFailures = logLines.filter((l) => l.message === 'deposit scan step failed').map((l) => (l.error as { code?: unknown } | undefined)?.code);
    expect(scanFailures.length, 'failed scan steps logged during the outage').to.be.greaterThan(0);
    expect(scanFailures.filter((c) => typeof c !== 'string'), 'failed scan steps without a code').to.deep.equal([]);
    expect(messages, 'the LISTEN connections were lost and reconnected').to.include.members([
      'credential change listener lost; cache bypassed until it reconnects', 'callback wake-up listener lost; polling until it reconnects',
    ]);
    const withStacks = logLines.filter((l) => stacks(l).length > 0).map((l) => `${String(l.message)}: ${stacks(l)[0]!.split('\n')[0]}`);
    expect(withStacks, 'log lines with a stack during the outage').to.deep.equal([]);
    expect(unhandled.map(String), 'unhandled rejections').to.deep.equal([]);
  });
});
