import { expect } from 'chai';
import { createTestDatabase, freePort, testEnv, type TestDatabase } from '@wcs/server/testing';
import { SigningClient, type MerchantCredentials } from './client/signing-client';
import { Codes, expectError, expectOk, isCode, pollUntil } from './support/expect';
import { cliJson, describeCli, killAllChildren, portOpen, runCli, WcsProcess } from './support/processes';

const CHAINS = '/api/v1/wallet/support/chains';

/**
 * Real OS processes on one Postgres database: two `wcs start --api-only` servers and
 * `wcs app ...` operator commands run as separate processes while the servers run.
 */
describe('several wcs processes on one database', function () {
  let db: TestDatabase;
  let env: Record<string, string | undefined>;
  let appId: number;
  let creds: MerchantCredentials;
  let A: WcsProcess;
  let B: WcsProcess;

  /** Runs a CLI command and asserts it exited 0; returns the parsed --json output. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function wcsJson(args: string[]): Promise<any> {
    const r = await runCli(args, env);
    expect(r.code, describeCli(args, r)).to.equal(0);
    return cliJson(args, r);
  }

  async function startApi(): Promise<WcsProcess> {
    const p = WcsProcess.spawn(['start', '--api-only'], env, await freePort());
    await p.waitHealthy();
    return p;
  }

  const client = (p: WcsProcess, c: MerchantCredentials = creds) => new SigningClient(p.url, c);

  before(async function () {
    db = await createTestDatabase();
    env = { ...process.env, ...testEnv(db.url) };
    const created = await wcsJson(['app', 'create', '--name', 'X', '--env', 'test', '--chains', 'ETH,BTC', '--json']);
    expect(created.id).to.be.a('number');
    expect(created.apiKey).to.match(/^pk_test_/);
    expect(created.apiSecret).to.match(/^[0-9a-f]{64}$/);
    appId = created.id;
    creds = { apiKey: created.apiKey, apiSecret: created.apiSecret };
    [A, B] = await Promise.all([startApi(), startApi()]);
  });

  after(async function () {
    await killAllChildren();
    if (db) await db.drop();
  });

  it('both servers answer signed requests for an application created by the CLI', async function () {
    expect(expectOk(await client(A).get(CHAINS)).map((c: { chainId: number }) => c.chainId)).to.deep.equal([101, 102]);
    expect(expectOk(await client(B).get(CHAINS)).map((c: { chainId: number }) => c.chainId)).to.deep.equal([101, 102]);
  });

  it('the same new user created at once through A and B: one key, one address, one id per chain; indices never reused', async function () {
    const CREATE = '/api/v1/wallet/address/create';
    const users = Array.from({ length: 12 }, (_, i) => `xp-user-${i}`);
    // every user: 6 creates split over both processes, ETH and BTC interleaved
    const calls = users.flatMap((u) => [A, B, A, B, A, B].map((p, i) => ({ p, u, chainCode: i % 2 ? 'BTC' : 'ETH' })));
    const answers = await Promise.all(calls.map(async ({ p, u, chainCode }) => ({ u, chainCode, r: expectOk(await client(p).post(CREATE, { chainCode, externalUserId: u })) })));
    for (const u of users) {
      for (const chainCode of ['ETH', 'BTC']) {
        const rs = answers.filter((a) => a.u === u && a.chainCode === chainCode).map((a) => a.r);
        expect(new Set(rs.map((r) => r.id)).size, `${u} ${chainCode}`).to.equal(1);
        expect(new Set(rs.map((r) => r.address)).size, `${u} ${chainCode}`).to.equal(1);
      }
    }
    const { Client } = await import('pg');
    const c = new Client({ connectionString: db.url });
    await c.connect();
    try {
      const keys = await c.query(`SELECT namespace, count(*)::int AS n, count(DISTINCT key_index)::int AS idx, count(DISTINCT external_user_id)::int AS users
                                    FROM user_keys WHERE application_id = $1 AND external_user_id LIKE 'xp-user-%' GROUP BY namespace ORDER BY namespace`, [appId]);
      expect(keys.rows.map((r) => [r.n, r.idx, r.users])).to.deep.equal([[12, 12, 12], [12, 12, 12]]);
      const addr = await c.query(`SELECT count(*)::int AS n FROM addresses WHERE application_id = $1 AND external_user_id LIKE 'xp-user-%'`, [appId]);
      expect(addr.rows[0].n).to.equal(24);
    } finally {
      await c.end();
    }
  });

  it('a nonce accepted by process A is rejected by process B (1001001005)', async function () {
    const ca = client(A);
    const p = ca.prepare({ method: 'GET', path: CHAINS });
    expectOk(await ca.send(p, A.url));
    expectError(await ca.send(p, B.url), 401, Codes.AUTH_NONCE_REPLAYED);
    expectError(await ca.send(p, A.url), 401, Codes.AUTH_NONCE_REPLAYED);
  });

  it('simultaneous copies of one request to A and B: exactly one is accepted', async function () {
    const ca = client(A);
    const p = ca.prepare({ method: 'GET', path: CHAINS });
    const results = await Promise.all([A, B, A, B].map((s) => ca.send(p, s.url)));
    const codes = results.map((r) => r.json?.code);
    expect(codes.filter((c) => c === 0), JSON.stringify(codes)).to.have.length(1);
    expect(codes.filter((c) => c === Codes.AUTH_NONCE_REPLAYED), JSON.stringify(codes)).to.have.length(3);
  });

  it('a used nonce stays used after the server restarts', async function () {
    const ca = client(A);
    const p = ca.prepare({ method: 'GET', path: CHAINS });
    expectOk(await ca.send(p, A.url));
    const stopped = await A.stop('SIGTERM');
    expect(stopped, A.describe()).to.deep.equal({ code: 0, signal: null, killed: false });
    A = await startApi();
    expectError(await client(A).send(p, A.url), 401, Codes.AUTH_NONCE_REPLAYED);
    expectOk(await client(A).get(CHAINS));
  });

  it('`wcs app disable` in another process is seen by both running servers within about a second; `enable` restores', async function () {
    // warm both servers' credential caches first, so this checks invalidation, not a cold load
    expectOk(await client(A).get(CHAINS));
    expectOk(await client(B).get(CHAINS));

    const disabled = await wcsJson(['app', 'disable', '--app', String(appId), '--json']);
    expect(disabled.status).to.equal('DISABLED');
    for (const s of [A, B]) {
      const r = await pollUntil(() => client(s).get(CHAINS), isCode(Codes.AUTH_APPLICATION_DISABLED), 1500);
      expect(r.ok, `server on port ${s.port} still accepted the disabled application after ${r.elapsedMs} ms`).to.equal(true);
      expectError(r.result, 403, Codes.AUTH_APPLICATION_DISABLED);
    }

    const enabled = await wcsJson(['app', 'enable', '--app', String(appId), '--json']);
    expect(enabled.status).to.equal('ACTIVE');
    for (const s of [A, B]) {
      const r = await pollUntil(() => client(s).get(CHAINS), isCode(Codes.OK), 1500);
      expect(r.ok, `server on port ${s.port} still refused the re-enabled application after ${r.elapsedMs} ms`).to.equal(true);
      expectOk(r.result);
    }
  });

  it('`wcs app rotate-secret --grace 0` in another process: old secret rejected by the running servers, new one accepted', async function () {
    expectOk(await client(A).get(CHAINS));
    expectOk(await client(B).get(CHAINS));

    const rotated = await wcsJson(['app', 'rotate-secret', '--app', String(appId), '--grace', '0', '--json']);
    expect(rotated.apiKey).to.equal(creds.apiKey);
    expect(rotated.apiSecret).to.match(/^[0-9a-f]{64}$/).and.not.equal(creds.apiSecret);
    const fresh: MerchantCredentials = { apiKey: creds.apiKey, apiSecret: rotated.apiSecret };

    for (const s of [A, B]) {
      const r = await pollUntil(() => client(s).get(CHAINS), isCode(Codes.AUTH_SIGNATURE_INVALID), 1500);
      expect(r.ok, `server on port ${s.port} still accepted the old secret after ${r.elapsedMs} ms`).to.equal(true);
      expectError(r.result, 401, Codes.AUTH_SIGNATURE_INVALID);
      expectOk(await client(s, fresh).get(CHAINS));
    }
    creds = fresh;
  });

  it('`wcs start --workers-only` starts without an HTTP listener and exits 0 on SIGTERM', async function () {
    const port = await freePort();
    const w = WcsProcess.spawn(['start', '--workers-only'], { ...env, WCS_LOG_LEVEL: 'info', WCS_LOG_FORMAT: 'json' }, port);
    await w.waitForOutput('workers started');
    expect(await portOpen(port), 'workers-only process must not serve HTTP').to.equal(false);
    const stopped = await w.stop('SIGTERM');
    expect(stopped, w.describe()).to.deep.equal({ code: 0, signal: null, killed: false });
    const lines = w.stderr
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => {
        try {
          return JSON.parse(l) as { level?: string; message?: string };
        } catch {
          return { level: 'unparsed', message: l };
        }
      });
    expect(lines.filter((l) => l.level === 'error' || l.level === 'unparsed'), w.describe()).to.deep.equal([]);
    expect(lines.map((l) => l.message)).to.include.members(['workers started', 'shutting down', 'stopped']);
  });

  it('the API servers also exit 0 on SIGTERM', async function () {
    for (const s of [A, B]) {
      const stopped = await s.stop('SIGTERM');
      expect(stopped, s.describe()).to.deep.equal({ code: 0, signal: null, killed: false });
      expect(await portOpen(s.port)).to.equal(false);
    }
  });
});
