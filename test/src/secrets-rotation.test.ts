/**
 * Master key rotation without downtime (docs/deployment.md, "Rotating the master key"), across
 * real OS processes on one database: an API process and a workers process holding
 * WCS_MASTER_KEY and WCS_MASTER_KEY_NEXT serve signed requests and deliver signed callbacks
 * while `wcs secrets rotate-master-key` re-seals every secret; the command is SIGKILLed part way
 * and run again; then the old key is removed and the service runs on the new key alone.
 *
 * The sealed values are checked by an opener written here from the documented format (AES-256-GCM,
 * key id = first 16 hex of SHA-256("wcs-master-key-id" || key), bound to its row), not the server's.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import * as crypto from 'node:crypto';
import { Client } from 'pg';
import { enqueueCallback, openStorage, type StorageHandle } from '@wcs/server';
import { createTestDatabase, freePort, testConfig, testEnv, testLogger, TEST_ACTOR, TEST_MASTER_KEY, type TestDatabase } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver, verifyCallback, type ReceivedCallback } from './support/callback-receiver';
import { Codes, expectError, sleep } from './support/expect';
import { cliJson, describeCli, killAllChildren, runCli, WCS_BIN, WcsProcess } from './support/processes';

const SUPPORT_CHAINS = '/api/v1/wallet/support/chains';

function keyIdOf(keyHex: string): string {
  return crypto.createHash('sha256').update('wcs-master-key-id').update(Buffer.from(keyHex, 'hex')).digest('hex').slice(0, 16);
}

interface SealedRow { id: number; bind: number; ct: Buffer; iv: Buffer; tag: Buffer; key_id: string }

/** Opens a sealed value with the one key whose id it records; null when none of `keysHex` is that key. */
function openSealed(keysHex: readonly string[], r: SealedRow, binding: string): Buffer | null {
  const key = keysHex.find((k) => keyIdOf(k) === r.key_id);
  if (!key) return null;
  const d = crypto.createDecipheriv('aes-256-gcm', Buffer.from(key, 'hex'), r.iv);
  d.setAAD(Buffer.from(binding));
  d.setAuthTag(r.tag);
  return Buffer.concat([d.update(r.ct), d.final()]);
}

function base32Decode(s: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const ch of s.replace(/=+$/, '')) {
    value = (value << 5) | alphabet.indexOf(ch);
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

interface LoadApp {
  id: number;
  apiKey: string;
  /** Every API secret that must authenticate (the current one, and those in a rotation's grace period). */
  secrets: string[];
  /** The secrets a callback may be signed with (the current one; during an API-secret rotation, the one before it too). */
  signers: string[];
}

describe('secrets rotation: the master key rotated under load, the command killed and resumed, the old key removed', function () {
  this.timeout(300_000);
  const OLD_KEY = TEST_MASTER_KEY;
  const NEW_KEY = crypto.randomBytes(32).toString('hex');
  const OLD = keyIdOf(OLD_KEY);
  const NEW = keyIdOf(NEW_KEY);
  let db: TestDatabase;
  let sql: Client;
  let receiver: CallbackReceiver;
  /** In-process storage holding the old key only (sets the scene before the rotation). */
  let storage: StorageHandle;
  let baseEnv: Record<string, string | undefined>;
  const apps: LoadApp[] = [];
  /** Every API secret issued, by application id (fillers too). */
  const issued = new Map<number, string[]>();
  const totps = new Map<number, Buffer>();
  const processes: WcsProcess[] = [];

  const envWith = (keys: { current: string; next?: string }, extra: Record<string, string> = {}) => {
    const env: Record<string, string | undefined> = { ...baseEnv, WCS_MASTER_KEY: keys.current, ...extra };
    if (keys.next) env.WCS_MASTER_KEY_NEXT = keys.next;
    else delete env.WCS_MASTER_KEY_NEXT;
    return env;
  };

  async function startProcess(args: string[], env: Record<string, string | undefined>): Promise<WcsProcess> {
    const p = WcsProcess.spawn(args, env, await freePort());
    processes.push(p);
    if (args.includes('--workers-only')) await p.waitForOutput('workers started');
    else await p.waitHealthy();
    return p;
  }

  async function sealedRows(table: 'application_secrets' | 'operators'): Promise<SealedRow[]> {
    const q = table === 'application_secrets'
      ? 'SELECT id, application_id AS bind, ciphertext AS ct, iv, auth_tag AS tag, key_id FROM application_secrets ORDER BY id'
      : 'SELECT id, id AS bind, totp_ciphertext AS ct, totp_iv AS iv, totp_auth_tag AS tag, totp_key_id AS key_id FROM operators WHERE totp_key_id IS NOT NULL ORDER BY id';
    return (await sql.query(q)).rows as SealedRow[];
  }

  /** Every API and TOTP secret opens with `keysHex` to exactly what was issued; returns how many rows each key seals. */
  async function everySecretOpens(keysHex: readonly string[]): Promise<Record<string, number>> {
    const byKey: Record<string, number> = {};
    const opened = new Map<number, string[]>();
    for (const r of await sealedRows('application_secrets')) {
      const plain = openSealed(keysHex, r, `wcs-app-secret:${r.bind}`);
      expect(plain, `application_secrets row ${r.id} (key ${r.key_id}) opens`).to.not.equal(null);
      opened.set(r.bind, [...(opened.get(r.bind) ?? []), plain!.toString()]);
      byKey[r.key_id] = (byKey[r.key_id] ?? 0) + 1;
    }
    expect(opened.size).to.equal(issued.size);
    for (const [id, secrets] of issued) expect(opened.get(id), `secrets of application ${id}`).to.deep.equal(secrets);
    const ops = await sealedRows('operators');
    expect(ops).to.have.length(totps.size);
    for (const r of ops) {
      const plain = openSealed(keysHex, r, `wcs-operator-totp:${r.id}`);
      expect(plain, `operator ${r.id} TOTP (key ${r.key_id}) opens`).to.not.equal(null);
      expect(plain!.equals(totps.get(r.id)!), `operator ${r.id} TOTP`).to.equal(true);
      byKey[r.key_id] = (byKey[r.key_id] ?? 0) + 1;
    }
    return byKey;
  }

  /**
   * The merchants' load: signed requests with every valid secret of every load application,
   * and callbacks queued for them, until stop(). Collects every failure.
   */
  function runLoad(apiUrl: () => string, concurrency = 3) {
    const state = { running: true, ok: 0, failures: [] as string[], queued: [] as number[] };
    const requests = Array.from({ length: concurrency }, async (_, w) => {
      for (let i = w; state.running; i += concurrency) {
        const app = apps[i % apps.length]!;
        const secret = app.secrets[Math.floor(i / apps.length) % app.secrets.length]!;
        try {
          const r = await new SigningClient(apiUrl(), { apiKey: app.apiKey, apiSecret: secret }).get(SUPPORT_CHAINS);
          if (r.status === 200 && r.json?.code === 0) state.ok++;
          else state.failures.push(`app ${app.id}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
        } catch (e) {
          state.failures.push(`app ${app.id}: ${(e as Error).message}`);
        }
      }
    });
    const callbacks = (async () => {
      for (let n = 0; state.running; n++) {
        const app = apps[n % apps.length]!;
        const seq = storage.database.sequelize;
        const task = await seq.transaction((t) => enqueueCallback(seq, t, { applicationId: app.id, bizType: 'RECHARGE', bizId: 1_000_000 + state.queued.length, payload: { probe: state.queued.length } }));
        state.queued.push(task.id);
        await sleep(40);
      }
    })();
    return {
      state,
      stop: async () => {
        state.running = false;
        await Promise.all([...requests, callbacks]);
        return state;
      },
    };
  }

  /** Every queued task delivered once, accepted, and every callback received verifies with a secret the application signs with. */
  async function checkCallbacks(taskIds: readonly number[], received: readonly ReceivedCallback[]): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const r = await sql.query(`SELECT count(*)::int AS n FROM callback_task_states WHERE id = ANY($1::bigint[]) AND status <> 'SUCCESS'`, [taskIds]);
      if (r.rows[0].n === 0) break;
      if (Date.now() > deadline) throw new Error(`${r.rows[0].n} of ${taskIds.length} callbacks not delivered`);
      await sleep(100);
    }
    const attempts = await sql.query(`SELECT accepted, error_reason FROM callback_attempts WHERE callback_task_id = ANY($1::bigint[])`, [taskIds]);
    expect(attempts.rows.filter((a) => !a.accepted), 'no failed delivery attempt').to.deep.equal([]);
    expect(attempts.rows).to.have.length(taskIds.length);
    const mine = received.filter((c) => {
      const body = JSON.parse(c.body.toString('utf8')) as { probe?: number };
      return body.probe !== undefined;
    });
    expect(mine.length).to.be.at.least(taskIds.length);
    const wrong: string[] = [];
    for (const c of mine) {
      const app = apps.find((a) => a.apiKey === c.headers['x-api-key']);
      if (!app) {
        wrong.push(`unknown X-Api-Key ${String(c.headers['x-api-key'])}`);
        continue;
      }
      const why = app.signers.map((s) => verifyCallback(c, app.apiKey, s));
      if (!why.includes(null)) wrong.push(`app ${app.id}: ${why.join('; ')}`);
    }
    expect(wrong, 'callbacks signed with a wrong secret').to.deep.equal([]);
  }

  before(async function () {
    db = await createTestDatabase();
    baseEnv = { ...process.env, ...testEnv(db.url), WCS_RATE_LIMIT_RPS: '0', WCS_CALLBACK_POLL_MS: '100', WCS_LOG_LEVEL: 'info', WCS_LOG_FORMAT: 'json' };
    sql = new Client({ connectionString: db.url });
    await sql.connect();
    receiver = await new CallbackReceiver().start();
    storage = await openStorage(testConfig(db.url), testLogger());
    // the load's applications; the second is in an API-secret rotation's grace period (two secrets)
    for (let i = 0; i < 4; i++) {
      const a = await storage.applications.create(TEST_ACTOR, { name: `load-${i}`, environment: 'test', chains: [] });
      await storage.applications.setCallback(TEST_ACTOR, a.id, 'RECHARGE', receiver.url(`/hooks/${a.id}`));
      apps.push({ id: a.id, apiKey: a.apiKey, secrets: [a.apiSecret], signers: [a.apiSecret] });
      issued.set(a.id, [a.apiSecret]);
    }
    const rotated = await storage.applications.rotateSecret(TEST_ACTOR, apps[1]!.id, 3600);
    apps[1]!.secrets.push(rotated.apiSecret);
    apps[1]!.signers = [rotated.apiSecret];
    issued.get(apps[1]!.id)!.push(rotated.apiSecret);
    // enough other secrets (each with a grace-period predecessor) that the rotation takes a while
    for (let i = 0; i < 250; i++) {
      const a = await storage.applications.create(TEST_ACTOR, { name: `filler-${i}`, environment: 'test', chains: [] });
      const r = await storage.applications.rotateSecret(TEST_ACTOR, a.id, 3600);
      issued.set(a.id, [a.apiSecret, r.apiSecret]);
    }
    // console operators with TOTP secrets, made by the CLI
    for (const [username, role] of [['rot-admin', 'admin'], ['rot-approver', 'approver']]) {
      const args = ['operator', 'create', '--username', username!, '--role', role!, '--json'];
      const r = await runCli(args, envWith({ current: OLD_KEY }));
      expect(r.code, describeCli(args, r)).to.equal(0);
      const out = cliJson(args, r);
      totps.set(out.operator.id, base32Decode(new URL(out.totpUri).searchParams.get('secret')!));
    }
    expect(await everySecretOpens([OLD_KEY])).to.deep.equal({ [OLD]: 4 + 1 + 500 + 2 });
  });

  after(async function () {
    await killAllChildren();
    await storage?.close();
    await sql?.end();
    await receiver?.stop();
    await db?.drop();
  });

  it('rotates under load (killed part way, resumed): no failed request, no callback signed wrong, every secret under the new key', async function () {
    // step 1 of the procedure done: every process holds both keys
    const both = envWith({ current: OLD_KEY, next: NEW_KEY });
    const api = await startProcess(['start', '--api-only'], both);
    const workers = await startProcess(['start', '--workers-only'], both);
    const load = runLoad(() => api.url);
    await sleep(1500);
    expect(load.state.ok, 'the load runs').to.be.greaterThan(20);

    // step 2: the command, SIGKILLed after some rows
    const child = spawn(process.execPath, [WCS_BIN, 'secrets', 'rotate-master-key', '--batch', '1', '--pause-ms', '10', '--json'], { env: both as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let childErr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (childErr += d));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    const killAt = 60;
    for (;;) {
      const r = await sql.query('SELECT count(*)::int AS n FROM application_secrets WHERE key_id = $1', [NEW]);
      if (r.rows[0].n >= killAt) break;
      const early = await Promise.race([exited, sleep(10).then(() => null)]);
      if (early) throw new Error(`the rotation ended before it was killed: ${JSON.stringify(early)} ${childErr}`);
    }
    child.kill('SIGKILL');
    expect(await exited).to.deep.equal({ code: null, signal: 'SIGKILL' });

    // nothing lost: every secret opens, under the one key or the other
    const mid = await everySecretOpens([OLD_KEY, NEW_KEY]);
    expect(mid[NEW], 'part re-sealed').to.be.at.least(killAt);
    expect(mid[OLD], 'part not yet').to.be.greaterThan(100);
    const state = await sql.query('SELECT sealing_key_id, rotation_finished_at FROM master_key_state');
    expect(state.rows[0]).to.deep.equal({ sealing_key_id: NEW, rotation_finished_at: null });

    // an API-secret rotation meanwhile, by a process holding both keys: sealed under the new key
    const withBoth = await openStorage(testConfig(db.url, { WCS_MASTER_KEY_NEXT: NEW_KEY }), testLogger());
    try {
      const app = apps[2]!;
      const r = await withBoth.applications.rotateSecret(TEST_ACTOR, app.id, 3600);
      issued.get(app.id)!.push(r.apiSecret);
      app.signers = [app.secrets[0]!, r.apiSecret]; // deliveries in flight may carry the secret before
      app.secrets.push(r.apiSecret);
      const last = (await sealedRows('application_secrets')).at(-1)!;
      expect([last.bind, last.key_id]).to.deep.equal([app.id, NEW]);
    } finally {
      await withBoth.close();
    }
    await sleep(1000);

    // run it again: it resumes and finishes
    const args = ['secrets', 'rotate-master-key', '--batch', '20', '--json'];
    const resumed = await runCli(args, both);
    expect(resumed.code, describeCli(args, resumed)).to.equal(0);
    const out = cliJson(args, resumed);
    const totalSecrets = [...issued.values()].flat().length;
    expect(out).to.deep.include({ targetKeyId: NEW, resumed: true });
    expect(out.verified).to.deep.equal({ applicationSecrets: totalSecrets, operatorTotp: 2 });
    expect(out.resealed.applicationSecrets).to.equal(mid[OLD]! - 2); // the rest of the secrets; the TOTP ones come last
    expect(out.resealed.operatorTotp).to.equal(2);
    await sleep(1500);

    const result = await load.stop();
    expect(result.failures, 'failed requests').to.deep.equal([]);
    expect(result.ok).to.be.greaterThan(100);
    await checkCallbacks(result.queued, receiver.received);
    expect(result.queued.length).to.be.greaterThan(50);

    // every secret under the new key, opening under it alone
    expect(await everySecretOpens([NEW_KEY])).to.deep.equal({ [NEW]: totalSecrets + 2 });
    expect(api.stderr + workers.stderr, 'no process logged an error').to.not.match(/"level":"error"/);

    // audited: the start of each run and the end of the one that finished
    const auditArgs = ['audit', '--limit', '10', '--json'];
    const audit = cliJson(auditArgs, await runCli(auditArgs, both));
    const entries = (audit.entries as Array<{ action: string; target: string; after: { resumed?: boolean } }>).filter((e) => e.action.startsWith('secrets.'));
    expect(entries.map((e) => [e.action, e.target, e.after.resumed])).to.deep.equal([
      ['secrets.master-key.rotate', `master-key:${NEW}`, true],
      ['secrets.master-key.rotate-start', `master-key:${NEW}`, true],
      ['secrets.master-key.rotate-start', `master-key:${NEW}`, false],
    ]);

    // step 3: the old key removed; processes on the new key alone, the old ones stopped
    const newOnly = envWith({ current: NEW_KEY });
    const api2 = await startProcess(['start', '--api-only'], newOnly);
    const workers2 = await startProcess(['start', '--workers-only'], newOnly);
    for (const p of [api, workers]) expect(await p.stop('SIGTERM'), p.describe()).to.deep.equal({ code: 0, signal: null, killed: false });
    const received = receiver.received.length;
    const after = runLoad(() => api2.url);
    await sleep(3000);
    const r2 = await after.stop();
    expect(r2.failures, 'failed requests on the new key alone').to.deep.equal([]);
    expect(r2.ok).to.be.greaterThan(20);
    await checkCallbacks(r2.queued, receiver.received.slice(received));
    expect(api2.stderr + workers2.stderr).to.not.match(/"level":"error"/);
    const statusArgs = ['secrets', 'status', '--json'];
    const status = cliJson(statusArgs, await runCli(statusArgs, newOnly));
    expect(status).to.deep.include({ sealingKeyId: NEW, keys: { current: NEW, next: null } });
    expect(status.sealed).to.deep.equal([
      { kind: 'applicationSecrets', keyId: NEW, rows: totalSecrets, held: true },
      { kind: 'operatorTotp', keyId: NEW, rows: 2, held: true },
    ]);
  });

  it('a process left with the old key only says so at start and cannot authenticate the re-sealed applications', async function () {
    const stale = await startProcess(['start', '--api-only'], envWith({ current: OLD_KEY }));
    await stale.waitForOutput('secrets are sealed under a master key this process does not hold');
    const app = apps[0]!;
    const res = await new SigningClient(stale.url, { apiKey: app.apiKey, apiSecret: app.secrets[0]! }).get(SUPPORT_CHAINS);
    expectError(res, 500, Codes.INTERNAL_ERROR);
    // and it refuses to seal: an application created with the old key only is refused, nothing written
    const args = ['app', 'create', '--name', 'stale', '--env', 'test', '--json'];
    const r = await runCli(args, envWith({ current: OLD_KEY }));
    expect(r.code, describeCli(args, r)).to.equal(1);
    expect(cliJson(args, r).error.msg).to.match(new RegExp(`^new secrets are sealed with master key ${NEW} since a master key rotation began, and this process holds only ${OLD}`));
    expect((await sql.query(`SELECT count(*)::int AS n FROM applications WHERE name = 'stale'`)).rows[0].n).to.equal(0);
    expect(await stale.stop('SIGTERM')).to.deep.include({ code: 0 });
  });
});
