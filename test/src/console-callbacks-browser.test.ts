/**
 * The console's Applications and Callbacks pages in a real browser (Debian's Chromium driven by
 * playwright-core, headless) against a service running the API, the workers and the console,
 * with a local callback receiver: an operator creates an application (its secret shown once,
 * on that page only), sets callback URLs, sends test events and sees their attempts; a receiver
 * answering HTML with a script is shown as text and nothing runs; failed tasks are resent one,
 * several and all at a time; a viewer's resend is refused by the server; every change is in the
 * audit log; the task listing pages by keyset over 120 tasks both ways. Every page's screenshot
 * is written to test/screenshots/apps-*.png and callbacks-*.png.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { QueryTypes, type Sequelize } from 'sequelize';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { createTestDatabase, testConfig, testEnv, testLogger, TEST_ACTOR, type TestDatabase } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { CallbackReceiver, verifyCallback } from './support/callback-receiver';
import { pastFirstLogin } from './support/first-login';
import { cliJson, runCli } from './support/processes';
import { SigningClient } from './client/signing-client';

const CHROMIUM = process.env.WCS_TEST_CHROMIUM ?? '/usr/bin/chromium';
const SHOTS = path.resolve(__dirname, '..', 'screenshots');
const EVIL = `<script>document.title='pwned'</script><b>bold</b>`;

describe('console: applications, callback URLs and callback tasks in Chromium', function () {
  let db: TestDatabase;
  let svc: WcsService;
  let base: string;
  let profile: string;
  let ctx: BrowserContext;
  let receiver: CallbackReceiver;
  let evil = false;
  const dialogs: string[] = [];
  const accounts: Record<string, { password: string }> = {};
  // what the first test made, for the ones after it
  let appId = 0;
  let apiKey = '';
  const secrets: string[] = [];

  const sequelize = (): Sequelize => svc.storage.database.sequelize;
  async function wcs(args: string[]) {
    const r = await runCli([...args, '--json'], { ...process.env, ...testEnv(db.url) });
    expect(r.code, r.stdout + r.stderr).to.equal(0);
    return cliJson(args, r);
  }
  async function shot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  }
  async function login(username: string): Promise<Page> {
    await ctx.clearCookies();
    const page = await ctx.newPage();
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(`${base}/login`);
    await page.fill('#username', username);
    await page.fill('#password', accounts[username]!.password);
    await Promise.all([page.waitForLoadState('load'), page.click('form.card button[type=submit]')]);
    return page;
  }
  async function submit(page: Page, button: ReturnType<Page['locator']>): Promise<void> {
    await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), button.click()]);
  }
  async function task(id: number) {
    const [t] = await sequelize().query<{ status: string; attempts: number; updated_at: Date; retry_times: number }>(
      'SELECT status, attempts, updated_at, retry_times FROM callback_tasks WHERE id = $1', { bind: [id], type: QueryTypes.SELECT });
    return t!;
  }
  async function until(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
    const end = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  }
  const settled = (id: number, status: string) => until(`task ${id} ${status}`, async () => {
    const t = await task(id);
    return t.status === status && t.attempts > 0;
  });
  async function audit(where = 'TRUE', bind: unknown[] = []) {
    return sequelize().query<{ actor: string; actor_role: string; channel: string; action: string; target: string; before: unknown; after: unknown }>(
      `SELECT actor, actor_role, channel, action, target, before, after FROM audit_log WHERE ${where} ORDER BY id`, { bind, type: QueryTypes.SELECT });
  }
  async function auditDump(): Promise<string> {
    return JSON.stringify(await sequelize().query('SELECT row_to_json(a)::text AS j FROM audit_log a', { type: QueryTypes.SELECT }));
  }
  const taskIdOf = (page: Page) => Number(/\/callbacks\/(\d+)/.exec(page.url())![1]);
  const csrfOf = async () => (await ctx.cookies()).find((c) => c.name === 'wcs_csrf')!.value;

  before(async function () {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM}: the README's test line installs it (scripts/test-prereqs.js)`);
    fs.mkdirSync(SHOTS, { recursive: true });
    db = await createTestDatabase();
    for (const [username, role] of [['olga', 'operator'], ['vic', 'viewer']] as const) {
      const made = await wcs(['operator', 'create', '--username', username, '--role', role]);
      accounts[username] = { password: made.password };
    }
    // past the first login: this file is about other pages (the first-login rule: console-first-login-browser.test.ts)
    await pastFirstLogin(db.url, ['olga', 'vic']);
    receiver = await new CallbackReceiver().start();
    receiver.reply = (r) => (evil && r.target.startsWith('/evil')
      ? { status: 500, body: EVIL, headers: { 'content-type': 'text/html; charset=utf-8' } }
      : { status: 200, body: '{"code":0}', headers: { 'content-type': 'application/json' } });
    svc = await WcsService.start(testConfig(db.url, { WCS_CONSOLE_PORT: '0' }), testLogger(), { api: true, workers: true, console: true });
    base = svc.consoleUrl;
    profile = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-chromium-'));
    ctx = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM, headless: true, viewport: { width: 1280, height: 800 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    });
  });
  after(async function () {
    await ctx?.close();
    if (profile) fs.rmSync(profile, { recursive: true, force: true });
    await svc?.stop();
    await receiver?.stop();
    await db?.drop();
  });

  it('an operator creates an application: the secret is on the result page once, and on no other page nor in the audit log', async () => {
    const page = await login('olga');
    await page.goto(`${base}/applications`);
    expect(await page.textContent('tbody')).to.include('No applications yet.');
    await submit(page, page.locator('main a', { hasText: 'Create an application' }));
    expect(page.url()).to.equal(`${base}/applications/new`);
    await shot(page, 'apps-new');
    await page.fill('#name', 'Shop <i>one</i>');
    await page.selectOption('#environment', 'test');
    await page.check('input[name=chains][value=ETH]');
    await submit(page, page.locator('main button', { hasText: 'Create' }));
    expect(await page.textContent('h1')).to.equal('Application created');
    const secret = (await page.textContent('#api-secret'))!.trim();
    expect(secret).to.match(/^[0-9a-f]{64}$/);
    secrets.push(secret);
    await shot(page, 'apps-created');
    const [row] = await sequelize().query<{ id: number; api_key: string; name: string; enabled_chains: string[] }>(
      'SELECT id, api_key, name, enabled_chains FROM applications', { type: QueryTypes.SELECT });
    expect(row).to.deep.include({ name: 'Shop <i>one</i>', enabled_chains: ['ETH'] });
    appId = row!.id;
    apiKey = row!.api_key;
    expect(await page.textContent('main')).to.include(apiKey);

    await submit(page, page.locator('main a', { hasText: 'Go to the application' }));
    expect(page.url()).to.equal(`${base}/applications/${appId}`);
    expect(await page.textContent('h1')).to.equal(`Application ${appId}: Shop <i>one</i>`);
    expect(await page.locator('main i').count(), 'the name is text').to.equal(0);
    expect(await page.content()).not.to.contain(secret);
    await page.goto(`${base}/applications`);
    expect(await page.locator('tbody tr').count()).to.equal(1);
    expect(await page.textContent('tbody tr')).to.match(/Shop <i>one<\/i>\s*test\s*ACTIVE\s*ETH\s*ON_CONFIRM/);
    expect(await page.content()).not.to.contain(secret);
    await shot(page, 'apps-list');
    await page.goto(`${base}/audit`);
    expect(await page.content()).not.to.contain(secret);
    expect(await auditDump()).not.to.contain(secret);
    const created = await audit(`action = 'app.create'`);
    expect(created).to.have.length(1);
    expect(created[0]).to.deep.include({ actor: 'olga', actor_role: 'operator', channel: 'console', target: `app:${appId}` });
    await page.close();
  });

  it('sets a callback URL (an invalid one is refused and nothing written), sends a test event and sees the delivered attempt', async () => {
    const page = await login('olga');
    await page.goto(`${base}/applications/${appId}`);
    // refused: ftp is no callback URL; nothing is written
    const withdraw = page.locator('tr', { hasText: 'WITHDRAW' });
    await withdraw.locator('input[name=url]').fill('ftp://merchant.example/cb');
    await submit(page, withdraw.locator('button', { hasText: 'Save' }));
    expect(await page.textContent('h1')).to.equal('Refused');
    expect(await page.textContent('[role=alert]')).to.match(/^CALLBACK_URL_INVALID: /);
    await shot(page, 'apps-refused');
    expect(await sequelize().query('SELECT * FROM application_callbacks', { type: QueryTypes.SELECT })).to.deep.equal([]);
    expect(await audit(`action = 'app.callback.set'`)).to.deep.equal([]);

    await page.goto(`${base}/applications/${appId}`);
    const recharge = page.locator('tr', { hasText: 'RECHARGE' });
    await recharge.locator('input[name=url]').fill(receiver.url('/ok/recharge'));
    await submit(page, recharge.locator('button', { hasText: 'Save' }));
    expect(page.url()).to.equal(`${base}/applications/${appId}`);
    expect(await page.locator('tr', { hasText: 'RECHARGE' }).locator('input[name=url]').inputValue()).to.equal(receiver.url('/ok/recharge'));
    await shot(page, 'apps-detail');

    await submit(page, page.locator('tr', { hasText: 'RECHARGE' }).locator('button', { hasText: 'Send test event' }));
    const id = taskIdOf(page);
    expect(page.url()).to.equal(`${base}/callbacks/${id}`);
    await settled(id, 'SUCCESS');
    await receiver.waitFor(1);
    // the secret shown once is the one the callbacks are signed with
    expect(verifyCallback(receiver.received[0]!, apiKey, secrets[0]!)).to.equal(null);
    await page.reload();
    const main = (await page.textContent('main'))!;
    expect(main).to.include('Attempt 1 accepted');
    expect(main).to.match(/status\s*SUCCESS/);
    expect(main).to.match(/responseStatus\s*200/);
    expect(main).to.match(/responseContentType\s*application\/json/);
    expect(main).to.include('{"code":0}');
    expect(main).to.match(/latencyMs\s*\d+/);
    expect(main).to.include('"event":"test"');
    expect(main).to.match(/X-Signature/i);
    expect(await page.content()).not.to.contain(secrets[0]);
    expect(await page.content()).not.to.contain(receiver.received[0]!.headers['x-signature'] as string);
    await shot(page, 'callbacks-task');

    const changes = await audit(`action IN ('app.callback.set', 'callback.test')`);
    expect(changes.map((c) => [c.actor, c.action, c.target])).to.deep.equal([
      ['olga', 'app.callback.set', `app:${appId}`],
      ['olga', 'callback.test', `app:${appId}/bizType:RECHARGE`],
    ]);
    expect(changes[0]!.after).to.deep.equal({ bizType: 'RECHARGE', url: receiver.url('/ok/recharge') });

    // the merchant's own resend through the signed API works as before and is no operator's change: not audited
    const n = (await audit()).length;
    const api = await new SigningClient(svc.url, { apiKey, apiSecret: secrets[0]! }).post('/api/v1/wallet/callback/resend', { callbackTaskId: id });
    expect(api.status, api.text).to.equal(200);
    expect(api.json).to.deep.include({ code: 0 });
    expect(api.json.data).to.deep.include({ id, status: 'WAITING', retryTimes: 0 });
    await receiver.waitFor(2);
    await until(`task ${id} delivered twice`, async () => (await task(id)).status === 'SUCCESS' && (await task(id)).attempts === 2);
    expect((await audit()).length).to.equal(n);
    await page.close();
  });

  it('a receiver answering a script in HTML: the attempt shows it as text and nothing runs; fixed, the resent task reaches SUCCESS', async () => {
    evil = true;
    const page = await login('olga');
    await page.goto(`${base}/applications/${appId}`);
    const withdraw = page.locator('tr', { hasText: 'WITHDRAW' });
    await withdraw.locator('input[name=url]').fill(receiver.url('/evil/withdraw'));
    await submit(page, withdraw.locator('button', { hasText: 'Save' }));
    await submit(page, page.locator('tr', { hasText: 'WITHDRAW' }).locator('button', { hasText: 'Send test event' }));
    const id = taskIdOf(page);
    await settled(id, 'FAILED');
    await page.reload();
    const title = `Callback task ${id} · Wallet Custody Service`;
    expect(await page.title()).to.equal(title);
    const main = (await page.textContent('main'))!;
    expect(main).to.include(EVIL);
    expect(main).to.include('Attempt 1 not accepted');
    expect(main).to.match(/responseStatus\s*500/);
    expect(main).to.match(/responseContentType\s*text\/html; charset=utf-8/);
    expect(await page.locator('main b').count(), 'no <b> from the receiver').to.equal(0);
    expect(await page.locator('script').count()).to.equal(0);
    expect(dialogs).to.deep.equal([]);
    await shot(page, 'callbacks-task-xss');

    evil = false;
    const before = (await audit(`action = 'callback.resend'`)).length;
    await submit(page, page.locator('main button', { hasText: /^Resend$/ }));
    expect(page.url()).to.equal(`${base}/callbacks/${id}?resent=1`);
    await until(`task ${id} delivered again`, async () => (await task(id)).status === 'SUCCESS');
    await page.reload();
    expect(await page.textContent('main')).to.include('Attempt 2 accepted');
    expect(await page.title()).to.equal(title);
    await shot(page, 'callbacks-task-resent');
    const resends = await audit(`action = 'callback.resend'`);
    expect(resends.length).to.equal(before + 1);
    expect(resends[resends.length - 1]).to.deep.include({ actor: 'olga', channel: 'console', target: `callback-task:${id}` });
    await page.close();
  });

  it('resends several FAILED tasks (selected on the list), then every FAILED task of the application and bizType; a busy task is refused with CALLBACK_TASK_BUSY', async () => {
    evil = true;
    const page = await login('olga');
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      await page.goto(`${base}/applications/${appId}`);
      await submit(page, page.locator('tr', { hasText: 'WITHDRAW' }).locator('button', { hasText: 'Send test event' }));
      ids.push(taskIdOf(page));
    }
    for (const id of ids) await settled(id, 'FAILED');
    // hold the automatic retries off, so only the operator's resends deliver them
    await sequelize().query(`UPDATE callback_queue SET due_at = now() + interval '1 hour' WHERE task_id = ANY($1::bigint[])`, { bind: [ids] });
    await sequelize().query(`UPDATE callback_tasks SET next_retry_time = now() + interval '1 hour' WHERE id = ANY($1::bigint[])`, { bind: [ids] });
    evil = false;

    await page.goto(`${base}/callbacks?app=${appId}&status=FAILED`);
    expect(await page.locator('tbody tr').count()).to.equal(3);
    await page.check(`input[name=task][value="${ids[0]}"]`);
    await page.check(`input[name=task][value="${ids[1]}"]`);
    await shot(page, 'callbacks-list-failed');
    await submit(page, page.locator('main button', { hasText: 'Resend selected' }));
    expect(await page.textContent('[role=status]')).to.include('2 of 2 tasks queued again');
    await shot(page, 'callbacks-resend-selected');
    await until('the two selected delivered', async () => (await task(ids[0]!)).status === 'SUCCESS' && (await task(ids[1]!)).status === 'SUCCESS');
    expect((await task(ids[2]!)).status).to.equal('FAILED');

    await page.goto(`${base}/callbacks?app=${appId}&bizType=WITHDRAW`);
    expect(await page.locator('form.bulk input[name=app]').inputValue()).to.equal(String(appId));
    expect(await page.locator('form.bulk select[name=bizType]').inputValue()).to.equal('WITHDRAW');
    await submit(page, page.locator('main button', { hasText: 'Resend every FAILED task' }));
    expect(await page.textContent('[role=status]')).to.include(`1 FAILED WITHDRAW tasks of application ${appId} queued again`);
    expect(await page.textContent('main table')).to.include(String(ids[2]));
    await shot(page, 'callbacks-resend-failed');
    await until('the last one delivered', async () => (await task(ids[2]!)).status === 'SUCCESS');
    const resent = await audit(`action = 'callback.resend' AND target = ANY($1::text[])`, [ids.map((id) => `callback-task:${id}`)]);
    expect(resent.map((r) => r.target).sort()).to.deep.equal(ids.map((id) => `callback-task:${id}`).sort());
    expect(resent.every((r) => r.actor === 'olga')).to.equal(true);

    // nothing FAILED any more: the bulk resend says so and writes nothing
    const n = (await audit()).length;
    const none = await page.request.post(`${base}/callbacks/resend-failed`, { form: { _csrf: await csrfOf(), app: String(appId), bizType: 'WITHDRAW' } });
    expect(none.status()).to.equal(200);
    expect(await none.text()).to.include(`No FAILED WITHDRAW callback tasks for application ${appId}.`);
    // a queued task is busy: refused, unchanged, nothing audited
    await sequelize().query(`UPDATE callback_tasks SET status = 'WAITING' WHERE id = $1`, { bind: [ids[0]] });
    await sequelize().query(`INSERT INTO callback_queue (task_id, application_id, endpoint, due_at) SELECT id, application_id, '', now() + interval '1 hour' FROM callback_tasks WHERE id = $1
      ON CONFLICT (task_id) DO UPDATE SET due_at = excluded.due_at`, { bind: [ids[0]] });
    const busy = await page.request.post(`${base}/callbacks/${ids[0]}/resend`, { form: { _csrf: await csrfOf() }, maxRedirects: 0 });
    expect(busy.status()).to.equal(409);
    expect(await busy.text()).to.include('CALLBACK_TASK_BUSY');
    const selected = await page.request.post(`${base}/callbacks/resend`, { form: { _csrf: await csrfOf(), task: String(ids[0]) }, maxRedirects: 0 });
    expect(selected.status()).to.equal(409);
    expect(await selected.text()).to.include('refused: CALLBACK_TASK_BUSY');
    const nothing = await page.request.post(`${base}/callbacks/resend`, { form: { _csrf: await csrfOf() }, maxRedirects: 0 });
    expect(nothing.status()).to.equal(400);
    expect(await nothing.text()).to.include('Select at least one FAILED task');
    expect((await audit()).length).to.equal(n);
    await page.goto(`${base}/callbacks/${ids[0]}`);
    expect(await page.locator('main button', { hasText: 'Resend' }).count()).to.equal(0);
    await sequelize().query(`UPDATE callback_tasks SET status = 'SUCCESS' WHERE id = $1`, { bind: [ids[0]] });
    await sequelize().query(`DELETE FROM callback_queue WHERE task_id = $1`, { bind: [ids[0]] });
    await page.close();
  });

  it('the other changes on the application page: status, chains, secret rotation (new secret once), rate limit, settlement mode, all audited', async () => {
    const page = await login('olga');
    await page.goto(`${base}/applications/${appId}`);
    await submit(page, page.locator('main button', { hasText: 'Disable' }));
    expect(await page.textContent('dl.kv')).to.match(/status\s*DISABLED/);
    await submit(page, page.locator('main button', { hasText: 'Enable' }));
    expect(await page.textContent('dl.kv')).to.match(/status\s*ACTIVE/);

    await page.check('input[name=chains][value=BTC]');
    await submit(page, page.locator('main button', { hasText: 'Save chains' }));
    expect(await page.textContent('dl.kv')).to.match(/chains\s*BTC, ETH/);

    await page.fill('#grace', 'soon');
    await submit(page, page.locator('main button', { hasText: 'Rotate the secret' }));
    expect(page.url()).to.equal(`${base}/applications/${appId}/rotate-secret`);
    expect(await page.textContent('[role=alert]')).to.include('Grace period: a whole number of seconds');
    await page.goto(`${base}/applications/${appId}`);
    await page.fill('#grace', '600');
    await submit(page, page.locator('main button', { hasText: 'Rotate the secret' }));
    expect(await page.textContent('h1')).to.equal('API secret rotated');
    const fresh = (await page.textContent('#api-secret'))!.trim();
    expect(fresh).to.match(/^[0-9a-f]{64}$/);
    expect(fresh).not.to.equal(secrets[0]);
    secrets.push(fresh);
    expect(await page.textContent('main')).to.match(/previous secrets valid until\s*\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d \(UTC\)/);
    await shot(page, 'apps-rotated');

    await page.goto(`${base}/applications/${appId}`);
    await page.selectOption('#limit', 'own');
    await page.fill('#rps', '5');
    await page.fill('#burst', '10');
    await submit(page, page.locator('main button', { hasText: 'Save rate limit' }));
    expect(await page.textContent('dl.kv')).to.match(/rate limit\s*5 requests\/s, burst 10/);

    await page.selectOption('#mode', 'PASS_THROUGH');
    await submit(page, page.locator('main button', { hasText: 'Save settlement mode' }));
    expect(await page.textContent('[role=status]')).to.include(`Application ${appId}: settlement PASS_THROUGH (was ON_CONFIRM)`);
    expect(await page.textContent('main ul')).to.include('no MERCHANT address on BTC, ETH');
    await shot(page, 'apps-settlement');
    await page.goto(`${base}/applications/${appId}`);
    expect(await page.textContent('dl.kv')).to.match(/settlement mode\s*PASS_THROUGH/);
    expect(await page.textContent('dl.kv')).to.match(/RECHARGE_CREDITED\s*off/);
    await submit(page, page.locator('main button', { hasText: 'Turn on' }));
    expect(await page.textContent('dl.kv')).to.match(/RECHARGE_CREDITED\s*on/);
    expect(await page.textContent('dl.kv')).to.match(/callback delivery rate\s*no limit/);
    await page.fill('#perSecond', '0');
    await submit(page, page.locator('main button', { hasText: 'Save rate' }).last());
    expect(await page.textContent('main')).to.match(/1 to 10000/);
    await page.goto(`${base}/applications/${appId}`);
    await page.fill('#perSecond', '3');
    await submit(page, page.locator('main button', { hasText: 'Save rate' }).last());
    expect(await page.textContent('dl.kv')).to.match(/callback delivery rate\s*3\/s per endpoint/);
    for (const s of secrets) expect(await page.content()).not.to.contain(s);
    await shot(page, 'apps-detail-changed');

    const [app] = await sequelize().query<{ status: string; enabled_chains: string[]; rate_limit_rps: number; rate_limit_burst: number; settlement_mode: string; recharge_credited: boolean; callback_rate_limit: number }>(
      'SELECT status, enabled_chains, rate_limit_rps, rate_limit_burst, settlement_mode, recharge_credited, callback_rate_limit FROM applications WHERE id = $1', { bind: [appId], type: QueryTypes.SELECT });
    expect(app).to.deep.equal({ status: 'ACTIVE', enabled_chains: ['BTC', 'ETH'], rate_limit_rps: 5, rate_limit_burst: 10, settlement_mode: 'PASS_THROUGH', recharge_credited: true, callback_rate_limit: 3 });
    const entries = await audit(`target = $1`, [`app:${appId}`]);
    expect(entries.map((e) => e.action)).to.deep.equal([
      'app.create', 'app.callback.set', 'app.callback.set', 'app.status.set', 'app.status.set', 'app.chains.set', 'app.secret.rotate', 'app.rate-limit.set', 'app.settlement.set',
      'app.recharge-credited.set', 'app.callback-rate.set',
    ]);
    expect(entries.every((e) => e.actor === 'olga' && e.channel === 'console')).to.equal(true);
    expect(entries.find((e) => e.action === 'app.secret.rotate')!.after).to.deep.include({ graceSeconds: 600 });
    const dump = await auditDump();
    for (const s of secrets) expect(dump).not.to.contain(s);
    await page.goto(`${base}/audit?actor=olga`);
    const auditText = (await page.textContent('main table'))!;
    for (const a of ['app.create', 'app.callback.set', 'app.status.set', 'app.chains.set', 'app.secret.rotate', 'app.rate-limit.set', 'app.settlement.set', 'callback.test', 'callback.resend']) {
      expect(auditText, a).to.include(a);
    }
    for (const s of secrets) expect(await page.content()).not.to.contain(s);
    await page.close();
  });

  it('a viewer sees no change buttons; the server refuses a viewer\'s resend and URL change (403) and nothing changes', async () => {
    const [t] = await sequelize().query<{ id: string }>(`SELECT id FROM callback_tasks WHERE application_id = $1 AND biz_type = 'WITHDRAW' ORDER BY id DESC LIMIT 1`, { bind: [appId], type: QueryTypes.SELECT });
    const id = Number(t!.id);
    await sequelize().query(`UPDATE callback_tasks SET status = 'FAILED' WHERE id = $1`, { bind: [id] });
    const before = await task(id);
    const n = (await audit()).length;
    const page = await login('vic');
    await page.goto(`${base}/callbacks/${id}`);
    expect(await page.locator('main button').count()).to.equal(0);
    await page.goto(`${base}/callbacks?app=${appId}`);
    expect(await page.locator('input[name=task]').count()).to.equal(0);
    expect(await page.locator('main button', { hasText: 'Resend' }).count()).to.equal(0);
    await shot(page, 'callbacks-list-viewer');
    await page.goto(`${base}/applications/${appId}`);
    expect(await page.locator('main form[method=post]').count()).to.equal(0);
    expect(await page.textContent('main')).to.include('Your role (viewer) may not change applications');
    await shot(page, 'apps-detail-viewer');
    const newPage = await page.goto(`${base}/applications/new`);
    expect(newPage!.status()).to.equal(403);

    const csrf = await csrfOf();
    const resend = await page.request.post(`${base}/callbacks/${id}/resend`, { form: { _csrf: csrf }, maxRedirects: 0 });
    expect(resend.status()).to.equal(403);
    expect(await resend.text()).to.include('Your role (viewer) may not resend callbacks');
    for (const [p, form] of [
      ['/callbacks/resend', { task: String(id) }],
      ['/callbacks/resend-failed', { app: String(appId), bizType: 'WITHDRAW' }],
      [`/applications/${appId}/callbacks`, { bizType: 'RECHARGE', url: 'http://127.0.0.1:9/viewer' }],
      [`/applications/${appId}/callbacks/RECHARGE/test`, {}],
      [`/applications/${appId}/status`, { status: 'DISABLED' }],
      ['/applications', { name: 'viewer app', environment: 'test' }],
    ] as const) {
      const r = await page.request.post(base + p, { form: { _csrf: csrf, ...form }, maxRedirects: 0 });
      expect(r.status(), p).to.equal(403);
    }
    expect(await task(id)).to.deep.equal(before);
    expect((await audit()).length).to.equal(n);
    const [cb] = await sequelize().query<{ url: string }>(`SELECT url FROM application_callbacks WHERE application_id = $1 AND biz_type = 'RECHARGE'`, { bind: [appId], type: QueryTypes.SELECT });
    expect(cb!.url).to.equal(receiver.url('/ok/recharge'));
    expect(await sequelize().query('SELECT id FROM applications', { type: QueryTypes.SELECT })).to.have.length(1);
    await page.close();
  });

  it('in a process that runs the API, the overview and key store pages report the key store open and ready (as /readyz does)', async () => {
    const page = await login('olga');
    await page.goto(`${base}/keystore`);
    const ks = (await page.textContent('main'))!;
    expect(ks).to.include('Open and ready');
    expect(ks).to.not.include('has not opened the key store');
    expect(ks).to.not.match(/mnemonic|passphrase:/i);
    await shot(page, 'keystore-open');
    await page.goto(base);
    const overview = (await page.textContent('main'))!;
    expect(overview).to.match(/This process is\s*ready/);
    expect(await page.locator('dl.kv dt', { hasText: 'keystore' }).count()).to.equal(1);
    expect(await page.locator('dl.kv dt', { hasText: 'database' }).locator('xpath=following-sibling::dd[1]').textContent()).to.equal('ok');
    await shot(page, 'overview-ready');
    await page.close();
  });

  it('the task listing pages by keyset: 120 tasks, 50 a page, every task exactly once going older and the same pages back newer; filters; bad cursors and filters are refused', async () => {
    const other = await svc.storage.applications.create(TEST_ACTOR, { name: 'paging', environment: 'test', chains: [] });
    // three tasks per second of creation time: ties broken by id
    await sequelize().query(
      `INSERT INTO callback_tasks (application_id, biz_type, biz_id, url, url_source, body, status, created_at, updated_at)
       SELECT $1, CASE WHEN i % 2 = 0 THEN 'RECHARGE' ELSE 'WITHDRAW' END, i, 'http://127.0.0.1:9/paging', 'APPLICATION', convert_to('{}', 'UTF8'), 'SUCCESS',
              timestamptz '2025-01-01 00:00:00+00' + (i / 3) * interval '1 second', timestamptz '2025-01-01 00:00:00+00' + (i / 3) * interval '1 second'
         FROM generate_series(1, 120) AS i`,
      { bind: [other.id] },
    );
    const expected = (await sequelize().query<{ id: string }>('SELECT id FROM callback_tasks WHERE application_id = $1 ORDER BY created_at DESC, id DESC', { bind: [other.id], type: QueryTypes.SELECT })).map((r) => Number(r.id));
    expect(expected).to.have.length(120);

    const page = await login('olga');
    const idsOnPage = async () => (await page.locator('tbody tr td:nth-child(2) a').allTextContents()).map(Number);
    await page.goto(`${base}/callbacks?app=${other.id}`);
    await shot(page, 'callbacks-list');
    const older: number[][] = [await idsOnPage()];
    expect(await page.locator('a[rel=prev]').count()).to.equal(0);
    while (await page.locator('a[rel=next]').count() > 0) {
      const href = (await page.locator('a[rel=next]').first().getAttribute('href'))!;
      expect(href).to.match(new RegExp(`^/callbacks\\?app=${other.id}&older=\\d+\\.\\d+$`));
      await submit(page, page.locator('a[rel=next]').first());
      older.push(await idsOnPage());
    }
    expect(older.map((p) => p.length)).to.deep.equal([50, 50, 20]);
    expect(older.flat()).to.deep.equal(expected);
    await shot(page, 'callbacks-list-oldest');
    const newer: number[][] = [await idsOnPage()];
    while (await page.locator('a[rel=prev]').count() > 0) {
      await submit(page, page.locator('a[rel=prev]').first());
      newer.unshift(await idsOnPage());
    }
    expect(newer).to.deep.equal(older);

    // the spec's filters, carried by the paging links
    await page.goto(`${base}/callbacks?app=${other.id}&bizType=RECHARGE`);
    expect(await idsOnPage()).to.deep.equal(expected.slice(0, 100).filter((_, i) => i % 2 === 0).slice(0, 50));
    expect(await page.locator('a[rel=next]').first().getAttribute('href')).to.match(/bizType=RECHARGE&older=/);
    await page.goto(`${base}/callbacks?app=${other.id}&bizId=7`);
    expect(await page.locator('tbody tr').count()).to.equal(1);
    await page.goto(`${base}/callbacks?app=${other.id}&createTimeStart=2025-01-01T00:00:10&createTimeEnd=2025-01-01T00:00:11`);
    expect((await idsOnPage()).length).to.equal(6); // i = 30..35
    await page.goto(`${base}/callbacks?app=${other.id}&status=FAILED`);
    expect(await page.textContent('tbody')).to.include('No callback tasks.');
    await page.goto(`${base}/callbacks?app=${other.id}&status=SUCCESS&bizType=WITHDRAW&bizId=9`);
    expect(await idsOnPage()).to.have.length(1);
    await shot(page, 'callbacks-list-filtered');

    for (const [query, message] of [
      ['older=garbage', 'not one this listing wrote'],
      ['newer=1.0', 'not one this listing wrote'],
      ['older=1.1&newer=1.1', 'not both'],
      ['bizType=DEPOSIT', 'bizType: one of RECHARGE'],
      ['status=DONE', 'status: one of WAITING'],
      ['bizId=-1', 'bizId: a whole number'],
      ['app=abc', 'Application id'],
      ['createTimeStart=2025-13-01T00:00:00', 'createTimeStart: an ISO 8601 local date-time'],
      ['createTimeStart=2025-01-02T00:00:00&createTimeEnd=2025-01-01T00:00:00', 'createTimeEnd must not be before createTimeStart'],
    ] as const) {
      const r = await page.goto(`${base}/callbacks?${query}`);
      expect(r!.status(), query).to.equal(400);
      expect(await page.textContent('[role=alert]'), query).to.include(message);
    }
    await shot(page, 'callbacks-refused');
    const missing = await page.goto(`${base}/callbacks/999999`);
    expect(missing!.status()).to.equal(404);
    expect(await page.textContent('[role=alert]')).to.include('CALLBACK_TASK_NOT_FOUND');
    const noApp = await page.goto(`${base}/applications/999999`);
    expect(noApp!.status()).to.equal(404);
    expect(await page.textContent('[role=alert]')).to.include('APPLICATION_NOT_FOUND');
    await page.close();
  });
});
