/**
 * The running dispatcher loop (not runOnce): new tasks wake it through NOTIFY long before its
 * poll, and the per-endpoint cap keeps a hanging merchant from taking the slots of the others.
 */
import { expect } from 'chai';
import type { Sequelize } from 'sequelize';
import { CallbackDispatcher, enqueueCallback, PREFETCH, TOKENS, type CallbackConfig } from '@wcs/server';
import { startTestService, type TestService, TEST_ACTOR } from '@wcs/server/testing';
import { CallbackReceiver } from './support/callback-receiver';

describe('callback dispatcher loop: wake-up and per-endpoint fairness (real Postgres, loopback receivers)', function () {
  let svc: TestService;
  let slow: CallbackReceiver;
  let fast: CallbackReceiver;
  let dispatcher: CallbackDispatcher | null = null;
  let sequelize: Sequelize;
  /** Requests the slow receiver holds open, and the most it ever held at once. */
  let open = 0;
  let maxOpen = 0;
  const release: Array<() => void> = [];

  before(async function () {
    svc = await startTestService({ workers: false });
    sequelize = svc.service.storage.database.sequelize;
    slow = await new CallbackReceiver().start();
    fast = await new CallbackReceiver().start();
    slow.reply = () =>
      new Promise((resolve) => {
        open++;
        maxOpen = Math.max(maxOpen, open);
        release.push(() => {
          open--;
          resolve({ status: 200, body: 'ok' });
        });
      });
  });
  after(async function () {
    for (const r of release.splice(0)) r();
    if (dispatcher) await dispatcher.stop();
    await slow?.stop();
    await fast?.stop();
    await svc?.stop();
  });

  function start(overrides: Partial<CallbackConfig>): CallbackDispatcher {
    const c = svc.service.storage.container;
    type Args = ConstructorParameters<typeof CallbackDispatcher>;
    const config: CallbackConfig = { ...svc.service.config.callbacks, ...overrides };
    return new CallbackDispatcher(c.resolve<Args[0]>(TOKENS.Database), c.resolve<Args[1]>(TOKENS.CredentialStore), config, svc.service.logger);
  }

  async function enqueue(applicationId: number, bizType: 'RECHARGE' | 'WITHDRAW', n: number): Promise<void> {
    await sequelize.transaction(async (t) => {
      for (let i = 0; i < n; i++) await enqueueCallback(sequelize, t, { applicationId, bizType, bizId: i + 1, payload: { event: 'fair', i } });
    });
  }

  /** Waits (bounded) until n tasks of the bizType are SUCCESS; the attempt is recorded just after the answer. */
  async function successCount(applicationId: number, bizType: string, n: number): Promise<void> {
    const deadline = Date.now() + 5000;
    for (;;) {
      const [[row]] = (await sequelize.query(`SELECT count(*)::int AS n FROM callback_tasks WHERE application_id = $1 AND biz_type = $2 AND status = 'SUCCESS'`, {
        bind: [applicationId, bizType],
      })) as [Array<{ n: number }>, unknown];
      if (row!.n === n || Date.now() > deadline) {
        expect(row!.n, `${bizType} tasks SUCCESS`).to.equal(n);
        return;
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  it('a hanging endpoint holds at most its cap; another endpoint is served meanwhile, and new tasks are picked up at once', async function () {
    const app = await svc.createApp({ chains: ['ETH'] });
    await svc.service.storage.applications.setCallback(TEST_ACTOR, app.id, 'RECHARGE', slow.url('/slow'));
    await svc.service.storage.applications.setCallback(TEST_ACTOR, app.id, 'WITHDRAW', fast.url('/fast'));
    // poll far longer than the test: only NOTIFY can wake it
    dispatcher = start({ concurrency: 6, perEndpoint: 2, pollMs: 60_000, timeoutMs: 30_000 });
    await dispatcher.start();

    await enqueue(app.id, 'RECHARGE', 10);
    await slow.waitFor(2, 5000);
    const t0 = Date.now();
    await enqueue(app.id, 'WITHDRAW', 8);
    await fast.waitFor(8, 5000);
    const fastDone = Date.now() - t0;
    await successCount(app.id, 'WITHDRAW', 8);
    // the slow endpoint never had more than its cap in flight; this process holds at most
    // PREFETCH x cap of its tasks (2 running, 6 queued behind them), the rest stay WAITING
    expect(maxOpen).to.equal(2);
    expect(slow.received).to.have.length(2);
    expect(fastDone, 'fast endpoint served through NOTIFY wake-up, not the 60 s poll').to.be.below(3000);
    const [counts] = await sequelize.query(
      `SELECT biz_type, status, count(*)::int AS n FROM callback_task_states WHERE application_id = $1 GROUP BY 1, 2 ORDER BY 1, 2`,
      { bind: [app.id] },
    );
    expect(counts).to.deep.equal([
      { biz_type: 'RECHARGE', status: 'PROCESSING', n: 2 * PREFETCH },
      { biz_type: 'RECHARGE', status: 'WAITING', n: 10 - 2 * PREFETCH },
      { biz_type: 'WITHDRAW', status: 'SUCCESS', n: 8 },
    ]);

    // the slow merchant answers: its queue drains, two at a time
    const drain = setInterval(() => release.splice(0).forEach((r) => r()), 20);
    try {
      await slow.waitFor(10, 10_000);
      await successCount(app.id, 'RECHARGE', 10);
    } finally {
      clearInterval(drain);
    }
    expect(maxOpen).to.equal(2);
    await dispatcher.stop();
    dispatcher = null;
  });
});
