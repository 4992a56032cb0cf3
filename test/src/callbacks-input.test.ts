/**
 * Bad input to the callback operations: malformed, wrong-typed, oversized and other-application
 * input gets a clear code, and nothing changes (signed API and `wcs callback test`).
 */
import { expect } from 'chai';
import { TOKENS, type CallbackService, type CallbackTaskView } from '@wcs/server';
import { startTestService, testEnv, type TestService, TEST_ACTOR } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { Codes, expectError, expectOk } from './support/expect';
import { describeCli, runCli } from './support/processes';

const RESEND = '/api/v1/wallet/callback/resend';
const TASKS = '/api/v1/wallet/callback/tasks';

describe('callback operations: bad input persists nothing', function () {
  let svc: TestService;
  let c: SigningClient;
  let appId: number;
  let task: CallbackTaskView;

  const tasks = async (): Promise<CallbackTaskView[]> => (expectOk(await c.get(`${TASKS}?pageSize=200`)) as { list: CallbackTaskView[] }).list;

  before(async function () {
    svc = await startTestService({ workers: false });
    const app = await svc.createApp({ chains: ['ETH'] });
    appId = app.id;
    c = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    // no callback URL is configured: the test event is recorded FAILED, ready to be resent
    await svc.service.storage.container.resolve<CallbackService>(TOKENS.CallbackService).sendTest(TEST_ACTOR, app.id, 'RECHARGE');
    [task] = await tasks();
    expect(task).to.include({ status: 'FAILED', bizId: 0 });
  });
  after(async function () {
    await svc?.stop();
  });

  it('resend: wrong types, missing, extra or out-of-range fields answer 400 1000001003 naming the field; the task is unchanged', async function () {
    const cases: Array<[unknown, string]> = [
      [{}, 'callbackTaskId'],
      [{ callbackTaskId: null }, 'callbackTaskId'],
      [{ callbackTaskId: String(task.id) }, 'callbackTaskId'],
      [{ callbackTaskId: task.id + 0.5 }, 'callbackTaskId'],
      [{ callbackTaskId: 0 }, 'callbackTaskId'],
      [{ callbackTaskId: -task.id }, 'callbackTaskId'],
      [{ callbackTaskId: 2 ** 60 }, 'callbackTaskId'],
      [{ callbackTaskId: [task.id] }, 'callbackTaskId'],
      [{ callbackTaskId: task.id, force: true }, 'force'],
      [[{ callbackTaskId: task.id }], 'body'],
    ];
    for (const [body, field] of cases) {
      expectError(await c.post(RESEND, body), 400, Codes.INVALID_PARAMETER, field);
    }
    expect(await tasks()).to.deep.equal([task]);
  });

  it('resend: malformed JSON and an oversized body are refused before anything runs', async function () {
    expectError(await c.post(RESEND, `{"callbackTaskId": ${task.id}`), 400, Codes.INVALID_JSON);
    expectError(await c.post(RESEND, JSON.stringify({ callbackTaskId: task.id, pad: 'x'.repeat(1_100_000) })), 413, Codes.BODY_TOO_LARGE);
    expect(await tasks()).to.deep.equal([task]);
  });

  it('wcs callback test: a malformed application id, an unknown business type or a missing option exit non-zero and queue nothing', async function () {
    const env = { ...process.env, ...testEnv(svc.db.url) };
    for (const args of [
      ['callback', 'test', '--app', 'abc', '--biz-type', 'RECHARGE'],
      ['callback', 'test', '--app', String(appId), '--biz-type', 'NOPE'],
      ['callback', 'test', '--biz-type', 'RECHARGE'],
      ['callback', 'test', '--app', String(appId)],
    ]) {
      const r = await runCli(args, env);
      expect(r.code, describeCli(args, r)).to.not.equal(0);
      expect(r.stderr, describeCli(args, r)).to.match(/app|biz-type/i);
    }
    expect(await tasks()).to.deep.equal([task]);
  });
});
