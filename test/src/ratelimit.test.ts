import { expect } from 'chai';
import { createTestDatabase, freePort, testEnv, type TestDatabase } from '@wcs/server/testing';
import { SigningClient, type ClientResponse, type MerchantCredentials } from './client/signing-client';
import { expectOk } from './support/expect';
import { cliJson, describeCli, killAllChildren, runCli, WcsProcess } from './support/processes';

const CHAINS = '/api/v1/wallet/support/chains';
const RATE_LIMITED = 1000003001;
const AUTH_RATE_LIMITED = 1000003002;
const AUTH_SIGNATURE_INVALID = 1001001007;

/** The IETF RateLimit fields as sent, parsed. */
function rateHeaders(res: ClientResponse): { policy: { q: number; w: number }; limit: { r: number; t: number } } {
  const policy = /^"api-key";q=(\d+);w=(\d+)$/.exec(String(res.headers['ratelimit-policy']));
  const limit = /^"api-key";r=(\d+);t=(\d+)$/.exec(String(res.headers['ratelimit']));
  expect(policy, `RateLimit-Policy: ${res.headers['ratelimit-policy']}`).to.not.equal(null);
  expect(limit, `RateLimit: ${res.headers['ratelimit']}`).to.not.equal(null);
  return { policy: { q: Number(policy![1]), w: Number(policy![2]) }, limit: { r: Number(limit![1]), t: Number(limit![2]) } };
}

/**
 * Rate limits across real OS processes: two `wcs start --api-only` servers on one Postgres
 * share each API key's bucket (WCS_RATE_LIMIT_RPS=2, WCS_RATE_LIMIT_BURST=40 here), kept in
 * Postgres or, with WCS_RATE_LIMIT_REDIS_URL, in Redis.
 */
for (const store of ['postgres', 'redis'] as const) describe(`rate limits across two API processes (buckets in ${store})`, function () {
  const RPS = 2;
  const BURST = 40;
  let db: TestDatabase;
  let env: Record<string, string | undefined>;
  let A: WcsProcess;
  let B: WcsProcess;

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function wcsJson(args: string[]): Promise<any> {
    const r = await runCli([...args, '--json'], env);
    expect(r.code, describeCli(args, r)).to.equal(0);
    return cliJson(args, r);
  }

  async function newApp(name: string): Promise<{ id: number; creds: MerchantCredentials }> {
    const created = await wcsJson(['app', 'create', '--name', name, '--env', 'test', '--chains', 'ETH']);
    return { id: created.id, creds: { apiKey: created.apiKey, apiSecret: created.apiSecret } };
  }

  async function startApi(extra: Record<string, string> = {}): Promise<WcsProcess> {
    const p = WcsProcess.spawn(['start', '--api-only'], { ...env, ...extra }, await freePort());
    await p.waitHealthy();
    return p;
  }

  /** n signed GETs alternating between A and B, all at once; returns the answers. */
  function burst(creds: MerchantCredentials, n: number): Promise<ClientResponse[]> {
    return Promise.all(Array.from({ length: n }, (_, i) => new SigningClient((i % 2 ? A : B).url, creds).get(CHAINS)));
  }

  before(async function () {
    db = await createTestDatabase();
    env = {
      ...process.env,
      ...testEnv(db.url, {
        WCS_RATE_LIMIT_RPS: String(RPS), WCS_RATE_LIMIT_BURST: String(BURST), WCS_AUTH_FAILURE_BURST: '5', WCS_AUTH_FAILURE_PER_MINUTE: '6',
        // this machine's Redis (and CI's); the keys are the applications' fresh API keys, so runs never share a bucket
        ...(store === 'redis' ? { WCS_RATE_LIMIT_REDIS_URL: process.env.WCS_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15' } : {}),
      }),
    };
    [A, B] = await Promise.all([startApi(), startApi()]);
  });

  after(async function () {
    await killAllChildren();
    if (db) await db.drop();
  });

  it('the two processes together accept no more than the bucket gives; the rest get 429 with Retry-After and the RateLimit fields', async function () {
    const { creds } = await newApp('limited');
    const started = Date.now();
    const answers = [...(await burst(creds, 150)), ...(await burst(creds, 150))];
    const elapsed = (Date.now() - started) / 1000;
    const ok = answers.filter((r) => r.status === 200 && r.json?.code === 0);
    const limited = answers.filter((r) => r.status === 429);
    expect(ok.length + limited.length, 'every answer is a success or a 429').to.equal(answers.length);
    // the bucket gives BURST at once and RPS per second after; leased tokens live at most 1 s
    expect(ok.length).to.be.at.most(Math.floor(BURST + RPS * (elapsed + 1)));
    expect(ok.length).to.be.at.least(BURST - 2); // at most one unused token in hand per process
    expect(limited.length).to.be.at.least(answers.length - BURST - Math.ceil(RPS * (elapsed + 1)));
    for (const r of limited) {
      expect(r.json).to.deep.equal({ code: RATE_LIMITED, data: null, msg: 'Too many requests for this API key; retry after the Retry-After seconds' });
      expect(String(r.headers['content-type'])).to.match(/^application\/json/);
      expect(Number(r.headers['retry-after'])).to.be.within(1, 1);
      const h = rateHeaders(r);
      expect(h.policy).to.deep.equal({ q: BURST, w: BURST / RPS });
      expect(h.limit.r).to.equal(0);
      expect(h.limit.t).to.be.within(1, BURST / RPS);
    }
    for (const r of ok) expect(rateHeaders(r).policy).to.deep.equal({ q: BURST, w: BURST / RPS });
  });

  it('a refused request keeps its nonce: the same signed request is accepted once a token is back', async function () {
    const { creds } = await newApp('nonce kept');
    const client = new SigningClient(A.url, creds);
    // empty the bucket, then the request: on a loaded machine a token may come back in between (one
    // every 1/RPS s), and that request is accepted; empty it again and try with a new nonce
    let refused: { nonce: string; timestamp: string; retryAfter: number } | null = null;
    for (let attempt = 0; attempt < 5 && refused === null; attempt++) {
      await burst(creds, 100);
      const nonce = `keep-${Date.now()}-${attempt}`;
      const timestamp = String(Date.now());
      const first = await client.get(CHAINS, { nonce, timestamp });
      if (first.status === 429) refused = { nonce, timestamp, retryAfter: Number(first.headers['retry-after']) };
      else expectOk(first);
    }
    expect(refused, 'a request refused once the bucket was empty').to.not.equal(null);
    const { nonce, timestamp, retryAfter } = refused!;
    await new Promise((r) => setTimeout(r, retryAfter * 1000 + 100));
    const again = await client.get(CHAINS, { nonce, timestamp });
    expectOk(again);
  });

  it('an application\'s own limit (wcs app set-rate-limit) replaces the default in every process at once; --default restores it', async function () {
    const { id, creds } = await newApp('override');
    const shown = await wcsJson(['app', 'set-rate-limit', '--app', String(id), '--rps', '1000', '--burst', '500']);
    expect(shown.rateLimit).to.deep.equal({ ratePerSecond: 1000, burst: 500 });
    const answers = await burst(creds, 300);
    expect(answers.filter((r) => r.status === 200).length, 'all 300 within a bucket of 500').to.equal(300);
    expect(rateHeaders(answers[0]!).policy).to.deep.equal({ q: 500, w: 1 });

    const back = await wcsJson(['app', 'set-rate-limit', '--app', String(id), '--default']);
    expect(back.rateLimit).to.equal(null);
    const after = await burst(creds, 120);
    expect(rateHeaders(after[0]!).policy).to.deep.equal({ q: BURST, w: BURST / RPS });
    expect(after.filter((r) => r.status === 429).length).to.be.at.least(120 - BURST - 10);
  });

  it('bad set-rate-limit input changes nothing', async function () {
    const { id } = await newApp('bad input');
    for (const args of [['--rps', '0', '--burst', '5'], ['--rps', '-1', '--burst', '5'], ['--rps', '5'], ['--rps', '5', '--burst', '5', '--default'], ['--rps', '1.5', '--burst', '5']]) {
      const r = await runCli(['app', 'set-rate-limit', '--app', String(id), ...args, '--json'], env);
      expect(r.code, describeCli(args, r)).to.be.oneOf([1, 2]);
      expect(JSON.parse(r.stdout).error.msg, describeCli(args, r)).to.be.a('string').and.not.equal('');
    }
    expect((await wcsJson(['app', 'show', '--app', String(id)])).rateLimit).to.equal(null);
  });

  it('failed authentications are limited per source address before the key is even looked up; other addresses go on (WCS_TRUST_PROXY)', async function () {
    const C = await startApi({ WCS_TRUST_PROXY: 'loopback' });
    const { creds } = await newApp('auth victim');
    const forged = { apiKey: creds.apiKey, apiSecret: '0'.repeat(64) };
    const from = (ip: string) => ({ headers: { 'X-Forwarded-For': ip } });
    for (let i = 0; i < 5; i++) {
      const r = await new SigningClient(C.url, forged).get(CHAINS, from('203.0.113.7'));
      expect(r.json?.code, r.text).to.equal(AUTH_SIGNATURE_INVALID);
    }
    const refused = await new SigningClient(C.url, forged).get(CHAINS, from('203.0.113.7'));
    expect(refused.status).to.equal(429);
    expect(refused.json).to.deep.equal({ code: AUTH_RATE_LIMITED, data: null, msg: 'Too many failed authentications from this address; retry after the Retry-After seconds' });
    expect(Number(refused.headers['retry-after'])).to.be.within(1, 10);
    // even a correctly signed request from that address waits: nothing of it is read
    const good = await new SigningClient(C.url, creds).get(CHAINS, from('203.0.113.7'));
    expect(good.json?.code).to.equal(AUTH_RATE_LIMITED);
    // the merchant's real address is not affected, and the application's own bucket was not touched
    expectOk(await new SigningClient(C.url, creds).get(CHAINS, from('198.51.100.20')));
    // without WCS_TRUST_PROXY the header is ignored: A judges the socket's address
    expectOk(await new SigningClient(A.url, creds).get(CHAINS, from('203.0.113.7')));
  });
});
