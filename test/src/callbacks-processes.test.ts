import { expect } from 'chai';
import * as net from 'node:net';
import { Client, Pool } from 'pg';
import { enqueueCallback, openStorage } from '@wcs/server';
import { createTestDatabase, freePort, testConfig, testEnv, testLogger, type TestDatabase } from '@wcs/server/testing';
import { sha256Hex } from './client/signing-client';
import { CallbackReceiver, verifyCallback, type ReceivedCallback } from './support/callback-receiver';
import { sleep } from './support/expect';
import { cliJson, describeCli, killAllChildren, runCli, WcsProcess, type CliResult } from './support/processes';

const ACK = { status: 200, body: '{"code":0}' } as const;
const CALLBACK_URL_INVALID = 1002001003;
const CALLBACK_URL_FORBIDDEN = 1002001004;
const APPLICATION_NOT_FOUND = 1002001001;

interface TaskRow {
  id: number;
  status: string;
  retry_times: number;
  attempts: number;
  url: string;
  lease_owner: string | null;
  lease_left_s: number | null;
  last_error: string | null;
  due_at: Date | null;
}

interface AttemptRow {
  callback_task_id: number;
  attempt_no: number;
  accepted: boolean;
  response_status: number | null;
  error_reason: string | null;
  request_body_sha256: string;
  request_headers_summary: Record<string, string>;
  latency_ms: number;
}

/**
 * The callback pipeline across real OS processes on one database: `wcs callback test`
 * and `wcs app set-callback` as CLI processes, delivery by `wcs start --workers-only`
 * processes, a merchant receiver on loopback.
 */
describe('callbacks across wcs processes (CLI, workers, one database)', function () {
  let db: TestDatabase;
  let env: Record<string, string | undefined>;
  let sql: Client;
  let receiver: CallbackReceiver;
  let app: { id: number; apiKey: string; apiSecret: string };
  const workers: WcsProcess[] = [];

  async function cli(args: string[], extraEnv: Record<string, string> = {}): Promise<CliResult> {
    return runCli(args, { ...env, ...extraEnv });
  }

  /** Runs a CLI command, asserts exit 0 and returns its --json output. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function cliOk(args: string[], extraEnv: Record<string, string> = {}): Promise<any> {
    const r = await cli(args, extraEnv);
    expect(r.code, describeCli(args, r)).to.equal(0);
    return cliJson(args, r);
  }

  async function startWorker(extra: Record<string, string> = {}): Promise<WcsProcess> {
    const w = WcsProcess.spawn(
      ['start', '--workers-only'],
      { ...env, WCS_LOG_LEVEL: 'info', WCS_LOG_FORMAT: 'json', WCS_CALLBACK_POLL_MS: '100', ...extra },
      await freePort(),
    );
    workers.push(w);
    await w.waitForOutput('workers started');
    return w;
  }

  async function stopWorkers(): Promise<void> {
    for (const w of workers.splice(0)) {
      if (!w.running) continue;
      const r = await w.stop('SIGTERM');
      expect(r, w.describe()).to.deep.equal({ code: 0, signal: null, killed: false });
    }
  }

  /** Lines a worker logged at level error (json log format). */
  function errorLines(w: WcsProcess): string[] {
    return w.stderr
      .split('\n')
      .concat(w.stdout.split('\n'))
      .filter((l) => l.trim() !== '')
      .filter((l) => {
        try {
          return (JSON.parse(l) as { level?: string }).level === 'error';
        } catch {
          return true;
        }
      });
  }

  async function task(id: number): Promise<TaskRow> {
    const r = await sql.query(
      `SELECT id::int, status, retry_times, attempts, url, lease_owner, last_error, due_at,
              EXTRACT(EPOCH FROM lease_until - now())::float AS lease_left_s
         FROM callback_task_states WHERE id = $1`,
      [id],
    );
    expect(r.rows, `task ${id}`).to.have.length(1);
    return r.rows[0] as TaskRow;
  }

  async function attempts(taskId: number): Promise<AttemptRow[]> {
    const r = await sql.query(
      `SELECT callback_task_id::int, attempt_no, accepted, response_status, error_reason, request_body_sha256, request_headers_summary, latency_ms
         FROM callback_attempts WHERE callback_task_id = $1 ORDER BY attempt_no`,
      [taskId],
    );
    return r.rows as AttemptRow[];
  }

  async function waitForTask(id: number, accept: (t: TaskRow) => boolean, timeoutMs = 15_000): Promise<TaskRow> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const t = await task(id);
      if (accept(t)) return t;
      if (Date.now() > deadline) throw new Error(`task ${id} not in the expected state after ${timeoutMs} ms: ${JSON.stringify(t)}`);
      await sleep(50);
    }
  }

  const receivedAt = (prefix: string): ReceivedCallback[] => receiver.received.filter((r) => r.target.startsWith(prefix));

  async function waitReceived(prefix: string, n: number, timeoutMs = 15_000): Promise<ReceivedCallback[]> {
    const deadline = Date.now() + timeoutMs;
    while (receivedAt(prefix).length < n) {
      if (Date.now() > deadline) throw new Error(`receiver: ${receivedAt(prefix).length} of ${n} callbacks to ${prefix} after ${timeoutMs} ms`);
      await sleep(20);
    }
    return receivedAt(prefix);
  }

  async function setCallback(appId: number, bizType: string, url: string): Promise<void> {
    const a = await cliOk(['app', 'set-callback', '--app', String(appId), '--biz-type', bizType, '--url', url, '--json']);
    expect(a.callbacks[bizType]).to.equal(url);
  }

  before(async function () {
    db = await createTestDatabase();
    env = { ...process.env, ...testEnv(db.url) };
    receiver = await new CallbackReceiver().start();
    const created = await cliOk(['app', 'create', '--name', 'callbacks-xp', '--env', 'test', '--chains', 'ETH', '--json']);
    expect(created.apiKey).to.match(/^pk_test_/);
    expect(created.apiSecret).to.match(/^[0-9a-f]{64}$/);
    app = { id: created.id, apiKey: created.apiKey, apiSecret: created.apiSecret };
    sql = new Client({ connectionString: db.url });
    await sql.connect();
  });

  after(async function () {
    await killAllChildren();
    if (sql) await sql.end();
    if (receiver) await receiver.stop();
    if (db) await db.drop();
  });

  it('`wcs callback test` is delivered, signed, by a worker process; no URL -> FAILED (exit 0); unknown app -> error', async function () {
    const url = receiver.url('/hooks/recharge?src=wcs');
    await Promise.all([setCallback(app.id, 'RECHARGE', url), startWorker()]);
    receiver.reply = () => ACK;

    const args = ['callback', 'test', '--app', String(app.id), '--biz-type', 'RECHARGE', '--json'];
    const queued = await cliOk(args);
    expect(queued).to.deep.include({ status: 'WAITING', url });
    expect(queued.callbackTaskId).to.be.a('number');

    const [got] = await waitReceived('/hooks/recharge', 1);
    expect(verifyCallback(got!, app.apiKey, app.apiSecret), 'signature of the test event').to.equal(null);
    expect(got!.target).to.equal('/hooks/recharge?src=wcs');
    expect(got!.headers['content-type']).to.equal('application/json');
    const event = JSON.parse(got!.body.toString('utf8'));
    expect(event).to.deep.include({ event: 'test', applicationId: app.id, bizType: 'RECHARGE' });

    const done = await waitForTask(queued.callbackTaskId, (t) => t.status === 'SUCCESS');
    expect(done).to.deep.include({ retry_times: 0, attempts: 1, lease_owner: null, last_error: null });
    const atts = await attempts(queued.callbackTaskId);
    expect(atts).to.have.length(1);
    expect(atts[0]).to.deep.include({ attempt_no: 1, accepted: true, response_status: 200, error_reason: null });
    expect(atts[0]!.request_body_sha256).to.equal(sha256Hex(got!.body));
    expect(atts[0]!.request_headers_summary['X-Nonce']).to.equal(got!.headers['x-nonce']);
    expect(atts[0]!.request_headers_summary['X-Api-Key']).to.not.equal(app.apiKey);

    // no URL configured for WITHDRAW: recorded FAILED at once, exit 0, both output forms
    const noUrlJson = ['callback', 'test', '--app', String(app.id), '--biz-type', 'WITHDRAW', '--json'];
    const noUrlHuman = ['callback', 'test', '--app', String(app.id), '--biz-type', 'WITHDRAW'];
    const [rj, rh] = await Promise.all([cli(noUrlJson), cli(noUrlHuman)]);
    expect(rj.code, describeCli(noUrlJson, rj)).to.equal(0);
    expect(rh.code, describeCli(noUrlHuman, rh)).to.equal(0);
    const failed = cliJson(noUrlJson, rj);
    expect(failed).to.deep.include({ status: 'FAILED', url: '' });
    expect(rh.stdout).to.match(/recorded test callback task \d+ as FAILED: no callback URL is configured for WITHDRAW/);
    const ft = await task(failed.callbackTaskId);
    expect(ft).to.deep.include({ status: 'FAILED', attempts: 0, due_at: null });
    expect(ft.last_error).to.match(/no callback URL is configured for bizType WITHDRAW/);

    // unknown application: non-zero exit, clear message, nothing written
    const before = Number((await sql.query('SELECT count(*)::int AS n FROM callback_tasks')).rows[0].n);
    const unknownHuman = ['callback', 'test', '--app', '999999', '--biz-type', 'RECHARGE'];
    const unknownJson = [...unknownHuman, '--json'];
    const [uh, uj] = await Promise.all([cli(unknownHuman), cli(unknownJson)]);
    expect(uh.code, describeCli(unknownHuman, uh)).to.equal(1);
    expect(uh.stderr).to.include('Application 999999 not found');
    expect(uj.code, describeCli(unknownJson, uj)).to.equal(1);
    expect(cliJson(unknownJson, uj).error).to.deep.include({ code: APPLICATION_NOT_FOUND, msg: 'Application 999999 not found' });
    expect(Number((await sql.query('SELECT count(*)::int AS n FROM callback_tasks')).rows[0].n)).to.equal(before);

    // the worker had every chance to pick the FAILED-without-URL tasks up (poll 100 ms): it did not
    await sleep(1000);
    expect(receiver.received.length).to.equal(1);
    expect(await attempts(failed.callbackTaskId)).to.deep.equal([]);
    expect(errorLines(workers[0]!), workers[0]!.describe()).to.deep.equal([]);
    await stopWorkers();
  });

  it('kill -9 mid-delivery: the task stays PROCESSING under its lease; once the lease expires another worker delivers it', async function () {
    await stopWorkers();
    const path = '/hooks/transfer';
    await setCallback(app.id, 'TRANSFER', receiver.url(path));
    let transfers = 0;
    receiver.reply = (r) => (r.target.startsWith(path) && transfers++ === 0 ? 'hang' : ACK);

    // timeout 30 s: the killed attempt must still be in flight when the kill comes; lease = 30 s + 60 s
    const w1 = await startWorker({ WCS_CALLBACK_TIMEOUT_MS: '30000' });
    const queued = await cliOk(['callback', 'test', '--app', String(app.id), '--biz-type', 'TRANSFER', '--json']);
    const [first] = await waitReceived(path, 1);
    const inFlight = await task(queued.callbackTaskId);
    expect(inFlight.status).to.equal('PROCESSING');
    expect(inFlight.lease_owner).to.match(new RegExp(`:${w1.child.pid}:[0-9a-f]{8}$`));
    expect(inFlight.lease_left_s).to.be.within(80, 90.5);

    const killed = await w1.stop('SIGKILL');
    expect(killed).to.deep.include({ code: null, signal: 'SIGKILL' });

    // nothing was recorded: the attempt and the task's new state are written together, after the answer
    const orphan = await task(queued.callbackTaskId);
    expect(orphan).to.deep.include({ status: 'PROCESSING', attempts: 0, retry_times: 0, lease_owner: inFlight.lease_owner });
    expect(await attempts(queued.callbackTaskId)).to.deep.equal([]);

    // a new worker respects the dead worker's lease while it lasts
    await startWorker({ WCS_CALLBACK_TIMEOUT_MS: '30000' });
    await sleep(1500); // 15 polls
    expect(receivedAt(path)).to.have.length(1);
    expect((await task(queued.callbackTaskId)).lease_owner).to.equal(inFlight.lease_owner);

    // what the passing of 90 s would do: the lease runs out
    await sql.query(`UPDATE callback_queue SET lease_until = now() - interval '1 second' WHERE task_id = $1 AND lease_owner IS NOT NULL`, [queued.callbackTaskId]);
    const both = await waitReceived(path, 2);
    const second = both[1]!;
    const done = await waitForTask(queued.callbackTaskId, (t) => t.status === 'SUCCESS');
    expect(done).to.deep.include({ attempts: 1, retry_times: 0, lease_owner: null, last_error: null });

    // the receiver saw the event twice (at-least-once): same bytes, each signed afresh
    expect(second.body.equals(first!.body)).to.equal(true);
    expect(second.headers['x-nonce']).to.not.equal(first!.headers['x-nonce']);
    expect(verifyCallback(first!, app.apiKey, app.apiSecret)).to.equal(null);
    expect(verifyCallback(second, app.apiKey, app.apiSecret)).to.equal(null);

    // ...but the history holds only the attempt that completed: attemptNo 1, the killed one was never recorded
    const atts = await attempts(queued.callbackTaskId);
    expect(atts).to.have.length(1);
    expect(atts[0]).to.deep.include({ attempt_no: 1, accepted: true, response_status: 200, error_reason: null });
    expect(atts[0]!.request_headers_summary['X-Nonce']).to.equal(second.headers['x-nonce']);

    await sleep(500);
    expect(receivedAt(path)).to.have.length(2);
  });

  it('two worker processes, 200 queued tasks: each delivered exactly once, one attempt each, both workers share the work', async function () {
    const path = '/hooks/collect';
    const N = 200;
    await setCallback(app.id, 'COLLECT', receiver.url(path));
    while (workers.filter((w) => w.running).length < 2) await startWorker();
    const pair = workers.filter((w) => w.running);
    expect(pair).to.have.length(2);
    const pids = pair.map((w) => w.child.pid!);

    // which process holds the lease of the task being delivered, asked while its request is in flight
    const lookup = new Pool({ connectionString: db.url, max: 4 });
    const ownerByBizId = new Map<number, string[]>();
    receiver.reply = async (r) => {
      if (!r.target.startsWith(path)) return ACK;
      const bizId = Number(JSON.parse(r.body.toString('utf8')).bizId);
      const q = await lookup.query(`SELECT lease_owner, status FROM callback_task_states WHERE application_id = $1 AND biz_type = 'COLLECT' AND biz_id = $2`, [app.id, bizId]);
      const list = ownerByBizId.get(bizId) ?? [];
      list.push(q.rows.map((row) => `${row.status}/${row.lease_owner}`).join(','));
      ownerByBizId.set(bizId, list);
      await sleep(15);
      return ACK;
    };

    // enqueue through the outbox function, in one transaction (one commit wakes both workers)
    const storage = await openStorage(testConfig(db.url), testLogger());
    let taskIds: number[];
    try {
      const sequelize = storage.database.sequelize;
      taskIds = await sequelize.transaction(async (transaction) => {
        const ids: number[] = [];
        for (let i = 1; i <= N; i++) {
          const t = await enqueueCallback(sequelize, transaction, { applicationId: app.id, bizType: 'COLLECT', bizId: 10_000 + i, payload: { event: 'collect', bizId: 10_000 + i, seq: i } });
          expect(t.status).to.equal('WAITING');
          ids.push(t.id);
        }
        return ids;
      });
    } finally {
      await storage.close();
    }

    try {
      const got = await waitReceived(path, N, 40_000);
      const deadline = Date.now() + 15_000;
      for (;;) {
        const r = await sql.query(`SELECT count(*)::int AS n FROM callback_tasks WHERE id = ANY($1::bigint[]) AND status = 'SUCCESS'`, [taskIds]);
        if (r.rows[0].n === N) break;
        if (Date.now() > deadline) throw new Error(`${r.rows[0].n} of ${N} tasks SUCCESS`);
        await sleep(50);
      }
      await sleep(500); // room for any duplicate delivery to show
      const all = receivedAt(path);
      expect(all.length, 'deliveries received').to.equal(N);
      expect(got.length).to.equal(N);

      // every task exactly once, signed, no nonce repeated
      const bizIds = all.map((r) => Number(JSON.parse(r.body.toString('utf8')).bizId));
      expect(new Set(bizIds).size).to.equal(N);
      expect([...bizIds].sort((a, b) => a - b)).to.deep.equal(Array.from({ length: N }, (_, i) => 10_001 + i));
      expect(new Set(all.map((r) => r.headers['x-nonce'])).size).to.equal(N);
      for (const r of all) expect(verifyCallback(r, app.apiKey, app.apiSecret)).to.equal(null);

      // one attempt per task, attempt 1, accepted; no (task, attemptNo) twice
      const t = await sql.query(`SELECT status, attempts, retry_times, count(*)::int AS n FROM callback_tasks WHERE id = ANY($1::bigint[]) GROUP BY 1, 2, 3`, [taskIds]);
      expect(t.rows).to.deep.equal([{ status: 'SUCCESS', attempts: 1, retry_times: 0, n: N }]);
      const a = await sql.query(
        `SELECT count(*)::int AS n, count(DISTINCT callback_task_id)::int AS tasks, min(attempt_no) AS lo, max(attempt_no) AS hi, bool_and(accepted) AS ok
           FROM callback_attempts WHERE callback_task_id = ANY($1::bigint[])`,
        [taskIds],
      );
      expect(a.rows[0]).to.deep.equal({ n: N, tasks: N, lo: 1, hi: 1, ok: true });
      const dup = await sql.query(`SELECT callback_task_id, attempt_no FROM callback_attempts GROUP BY 1, 2 HAVING count(*) > 1`);
      expect(dup.rows).to.deep.equal([]);

      // both processes delivered: each request arrived while one of the two held the task's lease
      const perPid = new Map<number, number>(pids.map((p) => [p, 0]));
      for (const [bizId, seen] of ownerByBizId) {
        expect(seen, `bizId ${bizId}`).to.have.length(1);
        const m = /^PROCESSING\/.*:(\d+):[0-9a-f]{8}$/.exec(seen[0]!);
        expect(m, `bizId ${bizId}: ${seen[0]}`).to.not.equal(null);
        const pid = Number(m![1]);
        expect(pids, `bizId ${bizId} delivered by pid ${pid}`).to.include(pid);
        perPid.set(pid, perPid.get(pid)! + 1);
      }
      expect(ownerByBizId.size).to.equal(N);
      const shares = [...perPid.values()];
      expect(shares.reduce((x, y) => x + y, 0)).to.equal(N);
      expect(Math.min(...shares), `deliveries per worker process: ${JSON.stringify([...perPid])}`).to.be.greaterThan(0);
      for (const w of pair) expect(errorLines(w), w.describe()).to.deep.equal([]);
    } finally {
      await lookup.end();
    }
  });

  it('live application: set-callback refuses http and loopback/private/metadata targets (1002001004) unless WCS_CALLBACK_ALLOW_PRIVATE=1; a worker without it refuses them at connect time', async function () {
    const live = await cliOk(['app', 'create', '--name', 'callbacks-live', '--env', 'live', '--json']);
    expect(live.apiKey).to.match(/^pk_live_/);
    const setArgs = (bizType: string, url: string) => ['app', 'set-callback', '--app', String(live.id), '--biz-type', bizType, '--url', url, '--json'];

    const refused: Array<[string, number, RegExp]> = [
      ['http://example.com/cb', CALLBACK_URL_INVALID, /must use https for live applications/],
      ['https://127.0.0.1/cb', CALLBACK_URL_FORBIDDEN, /127\.0\.0\.1 is a loopback, private, link-local or metadata address/],
      ['https://localhost/cb', CALLBACK_URL_FORBIDDEN, /localhost is a loopback name/],
      ['https://[::1]:8443/cb', CALLBACK_URL_FORBIDDEN, /::1 is a loopback/],
      ['https://169.254.169.254/latest/meta-data/', CALLBACK_URL_FORBIDDEN, /169\.254\.169\.254/],
      ['https://10.0.0.8/cb', CALLBACK_URL_FORBIDDEN, /10\.0\.0\.8/],
    ];
    const results = await Promise.all(refused.map(([url]) => cli(setArgs('RECHARGE', url))));
    refused.forEach(([url, code, msg], i) => {
      const r = results[i]!;
      expect(r.code, describeCli(setArgs('RECHARGE', url), r)).to.equal(1);
      const err = cliJson(setArgs('RECHARGE', url), r).error;
      expect(err.code, url).to.equal(code);
      expect(err.msg, url).to.match(msg);
      if (code === CALLBACK_URL_FORBIDDEN) expect(err.msg).to.include('WCS_CALLBACK_ALLOW_PRIVATE=1');
    });
    const human = ['app', 'set-callback', '--app', String(live.id), '--biz-type', 'RECHARGE', '--url', 'https://127.0.0.1/cb'];
    const rh = await cli(human);
    expect(rh.code, describeCli(human, rh)).to.equal(1);
    expect(rh.stderr).to.match(/^wcs: Callback URL refused for a live application: 127\.0\.0\.1 is a loopback/);
    expect((await cliOk(['app', 'show', '--app', String(live.id), '--json'])).callbacks).to.deep.equal({});

    // a public address is accepted; on-premise opt-in accepts loopback, but never plain http
    const sink = net.createServer((s) => {
      connections++;
      s.destroy();
    });
    let connections = 0;
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
    const port = (sink.address() as net.AddressInfo).port;
    try {
      const privateUrl = `https://127.0.0.1:${port}/hooks/live`;
      const [pub, priv, plain] = await Promise.all([
        cli(setArgs('COLLECT', 'https://8.8.8.8/cb')),
        cli(setArgs('WITHDRAW', privateUrl), { WCS_CALLBACK_ALLOW_PRIVATE: '1' }),
        cli(setArgs('TRANSFER', 'http://127.0.0.1/cb'), { WCS_CALLBACK_ALLOW_PRIVATE: '1' }),
      ]);
      expect(pub.code, describeCli(setArgs('COLLECT', 'https://8.8.8.8/cb'), pub)).to.equal(0);
      expect(priv.code, describeCli(setArgs('WITHDRAW', privateUrl), priv)).to.equal(0);
      expect(plain.code, describeCli(setArgs('TRANSFER', 'http://127.0.0.1/cb'), plain)).to.equal(1);
      expect(cliJson([], plain).error.code).to.equal(CALLBACK_URL_INVALID);
      expect((await cliOk(['app', 'show', '--app', String(live.id), '--json'])).callbacks).to.deep.equal({ COLLECT: 'https://8.8.8.8/cb', WITHDRAW: privateUrl });

      // the opt-in was the CLI's; a worker without it still refuses to connect at delivery time
      if (!workers.some((w) => w.running)) await startWorker();
      const queued = await cliOk(['callback', 'test', '--app', String(live.id), '--biz-type', 'WITHDRAW', '--json']);
      expect(queued).to.deep.include({ status: 'WAITING', url: privateUrl });
      const t = await waitForTask(queued.callbackTaskId, (x) => x.status === 'FAILED');
      expect(t.last_error).to.equal('target refused: 127.0.0.1 is a loopback, private, link-local or metadata address');
      const atts = await attempts(queued.callbackTaskId);
      expect(atts).to.have.length(1);
      expect(atts[0]).to.deep.include({ attempt_no: 1, accepted: false, response_status: null, latency_ms: 0 });
      expect(connections, 'connections reaching the private target').to.equal(0);

      // the same guard at connect time for the other forms: a trailing-dot loopback name (it
      // resolves to the sink), a metadata name, 6to4 of 127.0.0.1 and local-use NAT64
      const atConnect: Array<[string, string, string]> = [
        ['RECHARGE', `https://localhost.:${port}/hooks/live`, 'target refused: localhost. is a loopback name'],
        ['COLLECT', 'https://metadata.google.internal./computeMetadata/v1/', 'target refused: metadata.google.internal. is a cloud metadata or private-use name'],
        ['TRANSFER', `https://[2002:7f00:1::]:${port}/hooks/live`, 'target refused: 2002:7f00:1:: is a loopback, private, link-local or metadata address'],
        ['CHAIN_EVENT', 'https://[64:ff9b:1::a00:1]/hooks/live', 'target refused: 64:ff9b:1::a00:1 is a loopback, private, link-local or metadata address'],
      ];
      const set = await Promise.all(atConnect.map(([bizType, url]) => cli(setArgs(bizType, url), { WCS_CALLBACK_ALLOW_PRIVATE: '1' })));
      set.forEach((r, i) => expect(r.code, describeCli(setArgs(atConnect[i]![0], atConnect[i]![1]), r)).to.equal(0));
      const tests = await Promise.all(atConnect.map(([bizType]) => cliOk(['callback', 'test', '--app', String(live.id), '--biz-type', bizType, '--json'])));
      for (const [i, [, url, reason]] of atConnect.entries()) {
        expect(tests[i]).to.deep.include({ status: 'WAITING', url });
        const failed = await waitForTask(tests[i].callbackTaskId, (x) => x.status === 'FAILED');
        expect(failed.last_error, url).to.equal(reason);
        const a = await attempts(tests[i].callbackTaskId);
        expect(a.map((x) => [x.accepted, x.response_status, x.error_reason]), url).to.deep.equal([[false, null, reason]]);
      }
      expect(connections, 'connections reaching the private target').to.equal(0);
    } finally {
      await new Promise<void>((resolve) => sink.close(() => resolve()));
    }
  });
});
