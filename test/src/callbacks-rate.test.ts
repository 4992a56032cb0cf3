/**
 * The per-endpoint callback delivery rate limit (docs/callbacks.md, "Rate limit"): an application
 * with `wcs app set-callback-rate --per-second N` gets at most N deliveries per second at each of
 * its endpoints, shared by every dispatcher (two here, on one database); lifting it lets the
 * backlog go at full speed. Real Postgres, a real receiver on loopback, the CLI as a process.
 */
import { expect } from 'chai';
import * as os from 'node:os';
import type { Sequelize } from 'sequelize';
import { CallbackDispatcher, enqueueCallback, TOKENS, type CallbackConfig, type CreatedApplication } from '@wcs/server';
import { startTestService, testEnv, TEST_ACTOR, type TestService } from '@wcs/server/testing';
import { CallbackReceiver } from './support/callback-receiver';
import { pollUntil } from './support/expect';
import { cliJson, describeCli, runCli } from './support/processes';

describe('callback delivery rate limit per endpoint (two dispatchers, one database)', function () {
  let svc: TestService;
  let sequelize: Sequelize;
  let receiver: CallbackReceiver;
  const dispatchers: CallbackDispatcher[] = [];

  before(async function () {
    svc = await startTestService({ workers: false });
    sequelize = svc.service.storage.database.sequelize;
    receiver = await new CallbackReceiver().start();
  });

  after(async function () {
    for (const d of dispatchers.splice(0)) await d.stop();
    await receiver?.stop();
    await svc?.stop();
  });

  function dispatcher(): CallbackDispatcher {
    const c = svc.service.storage.container;
    type Args = ConstructorParameters<typeof CallbackDispatcher>;
    const config: CallbackConfig = { ...svc.service.config.callbacks, pollMs: 100, concurrency: 16, perEndpoint: 8 };
    const d = new CallbackDispatcher(c.resolve<Args[0]>(TOKENS.Database), c.resolve<Args[1]>(TOKENS.CredentialStore), config, svc.service.logger);
    dispatchers.push(d);
    return d;
  }

  async function enqueue(app: CreatedApplication, from: number, n: number): Promise<void> {
    await sequelize.transaction(async (t) => {
      for (let i = from; i < from + n; i++) await enqueueCallback(sequelize, t, { applicationId: app.id, bizType: 'RECHARGE', bizId: i, payload: { event: 'rate', i } });
    });
  }

  it('N per second across two dispatchers, then at full speed once lifted; set and lifted with the CLI (audited), bad values refused', async function () {
    this.timeout(60_000);
    const app = await svc.createApp({ chains: ['ETH'] });
    await svc.service.storage.applications.setCallback(TEST_ACTOR, app.id, 'RECHARGE', receiver.url('/paced'));
    const env = { ...process.env, ...testEnv(svc.db.url) };
    const cli = async (args: string[], code: number) => {
      const r = await runCli([...args, '--json'], env);
      expect(r.code, describeCli(args, r)).to.equal(code);
      return r;
    };
    const set = cliJson(['app'], await cli(['app', 'set-callback-rate', '--app', String(app.id), '--per-second', '4'], 0));
    expect(set).to.include({ id: app.id, callbackRateLimit: 4 });
    for (const bad of [['--per-second', '0'], ['--per-second', '10001'], ['--per-second', '2.5'], ['--per-second', '3', '--off'], []]) {
      const r = await cli(['app', 'set-callback-rate', '--app', String(app.id), ...bad], 2);
      expect(cliJson(bad, r).error.msg, bad.join(' ')).to.match(/per-second|--off/);
    }
    expect((await svc.service.storage.applications.get(app.id)).callbackRateLimit, 'refusals change nothing').to.equal(4);

    const a = dispatcher();
    const b = dispatcher();
    await a.start();
    await b.start();
    const t0 = Date.now();
    await enqueue(app, 1, 14);
    await receiver.waitFor(14, 20_000);
    const at = receiver.received.filter((r) => r.target === '/paced').map((r) => r.at).sort((x, y) => x - y);
    expect(at).to.have.length(14);
    // slots are 250 ms apart: six arrivals never fit in one second (one send delayed on a loaded
    // machine may arrive close to the next, so five are allowed), and 14 take 13 slots, 3.25 s (the
    // first one delayed the same way shortens the span by up to a slot: at least 12 slots, 3 s)
    for (let i = 0; i + 5 < at.length; i++) expect(at[i + 5]! - at[i]!, `arrivals ${i}..${i + 5}`).to.be.at.least(900);
    expect(at[13]! - at[0]!, '14 deliveries at 4/s span at least 12 slots of 250 ms').to.be.at.least(3_000);
    expect(Date.now() - t0, 'but not much longer').to.be.below(8_000);
    // each attempt is recorded just after its answer
    const succeeded = async () => ((await sequelize.query(`SELECT count(*)::int AS n FROM callback_task_states WHERE application_id = $1 AND status = 'SUCCESS'`, { bind: [app.id] }))[0] as Array<{ n: number }>)[0]!.n;
    expect((await pollUntil(succeeded, (n) => n === 14, 5_000)).result).to.equal(14);

    // lifted: 40 more go at full speed
    expect(cliJson(['app'], await cli(['app', 'set-callback-rate', '--app', String(app.id), '--off'], 0))).to.include({ callbackRateLimit: null });
    const t1 = Date.now();
    await enqueue(app, 100, 40);
    await receiver.waitFor(54, 20_000);
    expect(Date.now() - t1, '40 deliveries unpaced').to.be.below(2_500);

    const audit = (await sequelize.query(`SELECT actor, before, after FROM audit_log WHERE action = 'app.callback-rate.set' AND target = $1 ORDER BY id`, { bind: [`app:${app.id}`] }))[0];
    const me = `cli:${os.userInfo().username}`;
    expect(audit).to.deep.equal([
      { actor: me, before: { callbackRateLimit: null }, after: { callbackRateLimit: 4 } },
      { actor: me, before: { callbackRateLimit: 4 }, after: { callbackRateLimit: null } },
    ]);
  });
});
