import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'chai';
import * as pg from 'pg';
import { createTestDatabase, freePort, testEnv, type TestDatabase } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { Codes, expectOk } from './support/expect';
import { cleanEnv, cliJson, describeCli, killAllChildren, portOpen, runCli, stopLeftoverEmbeddedCluster, WcsProcess } from './support/processes';


const CHAINS = '/api/v1/wallet/support/chains';
type Env = Record<string, string | undefined>;

function embeddedEnv(dataDir: string, pgPort: number): Env {
  const env = cleanEnv({ WCS_DATA_DIR: dataDir, WCS_EMBEDDED_PG_PORT: String(pgPort) });
  expect(env.DATABASE_URL).to.equal(undefined);
  expect(env.WCS_MASTER_KEY).to.equal(undefined);
  return env;
}

/** Runs the command and asserts its exit code; returns the result. */
async function wcs(env: Env, args: string[], expectedExit: number) {
  const r = await runCli(args, env);
  expect(r.code, describeCli(args, r)).to.equal(expectedExit);
  return r;
}

describe('wcs CLI with no DATABASE_URL (embedded Postgres under WCS_DATA_DIR)', function () {
  let dataDir: string;
  let pgPort: number;
  let env: Env;
  let app: { id: number; apiKey: string; apiSecret: string };

  before(async function () {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-e2e-cli-'));
    pgPort = await freePort();
    env = embeddedEnv(dataDir, pgPort);
  });

  after(async function () {
    await killAllChildren();
    if (dataDir) {
      await stopLeftoverEmbeddedCluster(dataDir);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('`wcs app create --json` initialises the cluster, creates the application and stops the cluster again', async function () {
    const args = ['app', 'create', '--name', 'Embedded', '--env', 'test', '--chains', 'ETH,BTC', '--json'];
    const r = await wcs(env, args, 0);
    const created = cliJson(args, r);
    expect(created).to.include({ name: 'Embedded', environment: 'test', status: 'ACTIVE' });
    expect(created.chains).to.deep.equal(['ETH', 'BTC']);
    expect(created.apiKey).to.match(/^pk_test_[A-Za-z0-9]+$/);
    expect(created.apiSecret).to.match(/^[0-9a-f]{64}$/);
    app = { id: created.id, apiKey: created.apiKey, apiSecret: created.apiSecret };
    expect(fs.existsSync(path.join(dataDir, 'pg', 'PG_VERSION')), 'cluster initialised under WCS_DATA_DIR').to.equal(true);
    const keyFile = path.join(dataDir, 'master.key');
    expect(fs.existsSync(keyFile), 'dev master key written under WCS_DATA_DIR').to.equal(true);
    expect(fs.statSync(keyFile).mode & 0o077, 'master key file readable by others').to.equal(0);
    expect(await portOpen(pgPort), 'the command must stop the cluster it started').to.equal(false);
  });

  describe('while `wcs start` runs on the same data directory', function () {
    let server: WcsProcess;

    before(async function () {
      expect(app, 'application created by the previous test').to.not.equal(undefined);
      server = WcsProcess.spawn(['start'], env, await freePort());
      await server.waitHealthy(60_000);
    });

    after(async function () {
      if (server) await server.stop('SIGTERM');
    });

    it('serves a signed support/chains request for the application', async function () {
      const c = new SigningClient(server.url, app);
      const chains = expectOk(await c.get(CHAINS));
      expect(chains.map((x: { chainId: number; chainCode: string }) => [x.chainId, x.chainCode])).to.deep.equal([
        [101, 'BTC'],
        [102, 'ETH'],
      ]);
    });

    it('`wcs app list --json` works against the same data, lists the application and never prints its secret', async function () {
      const args = ['app', 'list', '--json'];
      const r = await wcs(env, args, 0);
      const list = cliJson(args, r) as Array<{ id: number; apiKey: string; status: string }>;
      const mine = list.find((a) => a.id === app.id);
      expect(mine, r.stdout).to.include({ apiKey: app.apiKey, status: 'ACTIVE' });
      expect(r.stdout).to.not.include(app.apiSecret);
      expect(r.stdout).to.not.match(/apiSecret/);
    });

    it('`wcs app set-callback` with an http URL works for a test application', async function () {
      const args = ['app', 'set-callback', '--app', String(app.id), '--biz-type', 'RECHARGE', '--url', 'http://localhost:9/cb', '--json'];
      const r = await wcs(env, args, 0);
      expect(cliJson(args, r).callbacks).to.deep.equal({ RECHARGE: 'http://localhost:9/cb' });
      const showArgs = ['app', 'show', '--app', String(app.id), '--json'];
      expect(cliJson(showArgs, await wcs(env, showArgs, 0)).callbacks).to.deep.equal({ RECHARGE: 'http://localhost:9/cb' });
    });

    it('the server keeps serving after the CLI commands connected to and left its cluster', async function () {
      expectOk(await new SigningClient(server.url, app).get(CHAINS));
      expect(await portOpen(pgPort)).to.equal(true);
    });

    it('does not store the API secret in plaintext anywhere in the database', async function () {
      const password = fs.readFileSync(path.join(dataDir, 'pg-password'), 'utf8').trim();
      const client = new pg.Client({ connectionString: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${pgPort}/wcs` });
      await client.connect();
      try {
        const secrets = await client.query('SELECT ciphertext FROM application_secrets WHERE application_id = $1', [app.id]);
        expect(secrets.rowCount, 'the secret is stored (sealed) for the application').to.equal(1);
        const sealed: Buffer = secrets.rows[0].ciphertext;
        expect(sealed.includes(Buffer.from(app.apiSecret, 'utf8'))).to.equal(false);
        expect(sealed.includes(Buffer.from(app.apiSecret, 'hex'))).to.equal(false);

        const needles = [
          app.apiSecret,
          Buffer.from(app.apiSecret, 'utf8').toString('hex'), // bytea text form of the secret's characters
          Buffer.from(app.apiSecret, 'utf8').toString('base64'),
          Buffer.from(app.apiSecret, 'hex').toString('base64'),
        ];
        const tables = await client.query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`);
        const names = tables.rows.map((t: { tablename: string }) => t.tablename);
        expect(names).to.include.members(['applications', 'application_secrets']);
        for (const name of names) {
          const rows = await client.query(`SELECT row_to_json(t)::text AS j FROM "${name}" t`);
          for (const row of rows.rows as Array<{ j: string }>) {
            for (const needle of needles) expect(row.j.toLowerCase().includes(needle.toLowerCase()), `secret found in table ${name}`).to.equal(false);
          }
        }
      } finally {
        await client.end();
      }
    });

    it('exits 0 on SIGTERM and stops the embedded cluster it started', async function () {
      const stopped = await server.stop('SIGTERM');
      expect(stopped.killed, `did not exit within 15 s of SIGTERM: ${server.describe()}`).to.equal(false);
      expect(await portOpen(pgPort), 'embedded cluster still running after the server exited').to.equal(false);
      expect(await portOpen(server.port), 'API port still open after the server exited').to.equal(false);
      expect({ code: stopped.code, signal: stopped.signal }, server.describe()).to.deep.equal({ code: 0, signal: null });
    });
  });
});

/**
 * Operator mistakes: each must fail with the documented exit code (2 usage, 1 refused)
 * and, with --json, the stable error code. Run on both database modes, because the
 * embedded mode has its own process lifecycle (it starts and stops a cluster).
 */
for (const mode of ['embedded', 'DATABASE_URL'] as const) {
  describe(`wcs CLI rejects bad input (${mode === 'embedded' ? 'embedded Postgres, no DATABASE_URL' : 'DATABASE_URL'})`, function () {
    let env: Env;
    let dataDir: string | null = null;
    let pgPort = 0;
    let db: TestDatabase | null = null;

    before(async function () {
      if (mode === 'embedded') {
        dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-e2e-cli-bad-'));
        pgPort = await freePort();
        env = embeddedEnv(dataDir, pgPort);
      } else {
        db = await createTestDatabase();
        env = { ...process.env, ...testEnv(db.url) };
      }
    });

    after(async function () {
      await killAllChildren();
      if (dataDir) {
        await stopLeftoverEmbeddedCluster(dataDir);
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
      if (db) await db.drop();
    });

    afterEach(async function () {
      if (mode === 'embedded') expect(await portOpen(pgPort), 'a failed command left the embedded cluster running').to.equal(false);
    });

    it('`app create --env prod` is a usage error: exit 2', async function () {
      const r = await wcs(env, ['app', 'create', '--name', 'X', '--env', 'prod'], 2);
      expect(r.stderr).to.include('--env');
      expect(r.stderr).to.include('prod');
    });

    it('`app create --chains NOPE --json` exits 1 with code 1003001001', async function () {
      const args = ['app', 'create', '--name', 'X', '--env', 'test', '--chains', 'NOPE', '--json'];
      const out = cliJson(args, await wcs(env, args, 1));
      expect(out.error.code, JSON.stringify(out)).to.equal(Codes.CHAIN_UNKNOWN);
      expect(out.error.msg).to.include('NOPE');
    });

    it('a live application refuses an http callback URL: exit 1 with code 1002001003 (https accepted)', async function () {
      const createArgs = ['app', 'create', '--name', 'Live', '--env', 'live', '--chains', 'ETH', '--json'];
      const live = cliJson(createArgs, await wcs(env, createArgs, 0));
      expect(live.apiKey).to.match(/^pk_live_/);
      const args = ['app', 'set-callback', '--app', String(live.id), '--biz-type', 'WITHDRAW', '--url', 'http://merchant.example/cb', '--json'];
      const out = cliJson(args, await wcs(env, args, 1));
      expect(out.error.code, JSON.stringify(out)).to.equal(Codes.CALLBACK_URL_INVALID);
      const okArgs = ['app', 'set-callback', '--app', String(live.id), '--biz-type', 'WITHDRAW', '--url', 'https://merchant.example/cb', '--json'];
      expect(cliJson(okArgs, await wcs(env, okArgs, 0)).callbacks).to.deep.equal({ WITHDRAW: 'https://merchant.example/cb' });
    });

    it('`PORT=abc wcs config-check` exits 1 and names PORT on stderr', async function () {
      const r = await wcs({ ...env, PORT: 'abc' }, ['config-check'], 1);
      expect(r.stderr).to.include('PORT');
    });

    it('`app show --app 999 --json` exits 1 with code 1002001001', async function () {
      const args = ['app', 'show', '--app', '999', '--json'];
      const out = cliJson(args, await wcs(env, args, 1));
      expect(out.error.code, JSON.stringify(out)).to.equal(Codes.APPLICATION_NOT_FOUND);
    });
  });
}
