/**
 * Credentials that must change, change first (docs/console.md, "The first login"), in Chromium:
 * an operator logged in with the password `wcs operator create` generated sees only the password
 * page; every other page and every change (any method, a form with its valid CSRF token, a JSON
 * body) is answered 403 with nothing stored and nothing audited, one log line per refusal without a
 * stack. After the change the same callback URL form saves and is audited. Logging out works before
 * the change; a locked account's answer states until when it is locked. Screenshots go to
 * test/screenshots/first-login-*.png.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import { Client } from 'pg';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { createTestDatabase, testConfig, testEnv, type TestDatabase } from '@wcs/server/testing';
import { createLogger, WcsService } from '@wcs/server';
import { cliJson, runCli } from './support/processes';

const CHROMIUM = process.env.WCS_TEST_CHROMIUM ?? '/usr/bin/chromium';
const SHOTS = path.resolve(__dirname, '..', 'screenshots');
const REFUSED_LINE = 'console request refused: the password must be changed first';

describe('console: a generated password must be changed before anything else (Chromium)', function () {
  let db: TestDatabase;
  let pg: Client;
  let svc: WcsService;
  let base: string;
  let profile: string;
  let ctx: BrowserContext;
  let appId: number;
  const logLines: Record<string, unknown>[] = [];
  const accounts: Record<string, string> = {};

  async function wcs(args: string[]) {
    const r = await runCli([...args, '--json'], { ...process.env, ...testEnv(db.url) });
    expect(r.code, r.stdout + r.stderr).to.equal(0);
    return cliJson(args, r);
  }
  async function shot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  }
  async function login(page: Page, username: string, password: string): Promise<void> {
    await page.goto(`${base}/login`);
    await page.fill('#username', username);
    await page.fill('#password', password);
    await Promise.all([page.waitForLoadState('load'), page.click('form.card button[type=submit]')]);
  }
  const callbackUrls = async () => (await pg.query<{ biz_type: string; url: string }>('SELECT biz_type, url FROM application_callbacks WHERE application_id = $1', [appId])).rows;
  const auditRows = async () => (await pg.query<{ id: string; actor: string; action: string; channel: string; target: string; after: unknown }>(
    'SELECT id::text, actor, action, channel, target, after FROM audit_log ORDER BY id')).rows;
  const refusals = () => logLines.filter((l) => l.message === REFUSED_LINE);

  before(async function () {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM}: the README's test line installs it (scripts/test-prereqs.js)`);
    fs.mkdirSync(SHOTS, { recursive: true });
    db = await createTestDatabase();
    pg = new Client({ connectionString: db.url });
    await pg.connect();
    for (const [username, role] of [['olga', 'operator'], ['lou', 'viewer']] as const) {
      accounts[username] = (await wcs(['operator', 'create', '--username', username, '--role', role])).password;
    }
    appId = (await wcs(['app', 'create', '--name', 'first login shop', '--env', 'test', '--chains', 'ETH'])).id;
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logLines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    svc = await WcsService.start(testConfig(db.url, { WCS_CONSOLE_PORT: '0' }), createLogger({ level: 'info', format: 'json', stream }), { api: false, workers: false, console: true });
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
    await pg?.end();
    await db?.drop();
  });

  it('until the generated password is changed every page and change is refused (403, nothing stored or audited); after it the same change saves and is audited', async () => {
    await ctx.clearCookies();
    const page = await ctx.newPage();
    await login(page, 'olga', accounts.olga!);
    expect(page.url()).to.equal(`${base}/password`);
    expect(await page.textContent('#must-change')).to.include('must be changed before anything else');
    // the navigation offers the password page and logout, nothing else
    expect(await page.$$eval('nav a', (as) => as.map((a) => a.getAttribute('href')))).to.deep.equal(['/password']);
    expect(await page.locator('form').evaluateAll((forms) => forms.map((f) => f.getAttribute('action')))).to.deep.equal(['/logout', '/password']);
    await shot(page, 'first-login-password');

    // a page: refused with the banner, no form of the application's
    const read = await page.goto(`${base}/applications/${appId}`);
    expect(read!.status()).to.equal(403);
    expect(await page.textContent('#must-change')).to.include('must be changed before anything else');
    expect(await page.textContent('h1')).to.equal('Change your password first');
    expect(await page.locator(`form[action^="/applications"]`).count()).to.equal(0);
    await shot(page, 'first-login-refused');
    expect((await page.goto(`${base}/`))!.status()).to.equal(403);

    // changes, with the session's valid CSRF token: the callback URL form's POST, other methods, a JSON body, other forms
    const csrf = (await ctx.cookies()).find((c) => c.name === 'wcs_csrf')!.value;
    const auditBefore = await auditRows();
    const refusedBefore = refusals().length;
    const url = 'http://127.0.0.1:9/first-login';
    const form = { _csrf: csrf, bizType: 'RECHARGE', url };
    const attempts: Array<[string, string, 'form' | 'json']> = [
      ['POST', `/applications/${appId}/callbacks`, 'form'],
      ['PUT', `/applications/${appId}/callbacks`, 'form'],
      ['PATCH', `/applications/${appId}/callbacks`, 'form'],
      ['DELETE', `/applications/${appId}/callbacks`, 'form'],
      ['POST', `/applications/${appId}/callbacks`, 'json'],
      ['POST', `/APPLICATIONS/${appId}/callbacks/`, 'form'],
      ['POST', `/applications/${appId}/callbacks/RECHARGE/test`, 'form'],
      ['POST', `/applications/${appId}/status`, 'form'],
      ['POST', '/applications', 'form'],
    ];
    for (const [method, p, body] of attempts) {
      const r = await page.request.fetch(`${base}${p}`, { method, maxRedirects: 0, ...(body === 'form' ? { form: { ...form, name: 'x', environment: 'test', status: 'DISABLED' } } : { data: form }) });
      expect(r.status(), `${method} ${p} ${body}`).to.equal(403);
      expect(await r.text(), `${method} ${p}`).to.include('Refused: nothing was changed.');
    }
    expect(await callbackUrls(), 'nothing stored').to.deep.equal([]);
    expect((await pg.query('SELECT status FROM applications WHERE id = $1', [appId])).rows[0].status).to.equal('ACTIVE');
    expect((await pg.query('SELECT count(*)::int AS n FROM applications')).rows[0].n).to.equal(1);
    expect(await auditRows(), 'nothing audited').to.deep.equal(auditBefore);
    // one log line per refusal (two page reads, then the changes), naming the operator, without a stack
    const lines = refusals().slice(refusedBefore);
    expect(lines).to.have.length(attempts.length);
    expect(refusedBefore).to.equal(2);
    for (const l of [...refusals()]) {
      expect(l).to.include({ level: 'warn', operator: 'olga' });
      expect(JSON.stringify(l)).to.not.match(/stack|password"|_csrf|at .*\.js:\d+/);
    }
    expect(lines.map((l) => `${String(l.method)} ${String(l.path)}`)).to.deep.equal(attempts.map(([m, p]) => `${m} ${p}`));

    // the change itself is allowed: a wrong current password is answered by the form, then the change
    await page.goto(`${base}/password`);
    await page.fill('#current', 'not the generated one');
    await page.fill('#next', 'olga chose a long passphrase');
    await Promise.all([page.waitForLoadState('load'), page.click('form.card button[type=submit]')]);
    expect(await page.textContent('[role=alert]')).to.include('The current password is wrong');
    expect((await pg.query(`SELECT must_change_password FROM operators WHERE username = 'olga'`)).rows[0].must_change_password).to.equal(true);
    await page.fill('#current', accounts.olga!);
    await page.fill('#next', 'olga chose a long passphrase');
    await Promise.all([page.waitForLoadState('load'), page.click('form.card button[type=submit]')]);
    expect(await page.textContent('[role=status]')).to.include('Password changed');
    expect(await page.locator('#must-change').count(), 'the banner is gone').to.equal(0);
    expect(await page.locator('nav a[href="/applications"]').count()).to.equal(1);
    expect((await pg.query(`SELECT must_change_password FROM operators WHERE username = 'olga'`)).rows[0].must_change_password).to.equal(false);

    // the same change through the application's page now saves, audited once as olga's
    await page.goto(`${base}/applications/${appId}`);
    expect(await page.textContent('h1')).to.include('first login shop');
    await page.fill('input[aria-label="RECHARGE callback URL"]', url);
    await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.locator('tr', { hasText: 'RECHARGE' }).locator('button', { hasText: 'Save' }).click()]);
    expect(page.url()).to.equal(`${base}/applications/${appId}`);
    expect(await page.inputValue('input[aria-label="RECHARGE callback URL"]')).to.equal(url);
    await shot(page, 'first-login-after-change');
    expect(await callbackUrls()).to.deep.equal([{ biz_type: 'RECHARGE', url }]);
    const added = (await auditRows()).slice(auditBefore.length);
    expect(added.map((a) => [a.actor, a.action, a.channel])).to.deep.equal([['olga', 'operator.change-password', 'console'], ['olga', 'app.callback.set', 'console']]);
    expect(added[1]).to.include({ target: `app:${appId}` });
    expect(added[1]!.after).to.deep.equal({ bizType: 'RECHARGE', url });
    expect(refusals()).to.have.length(refusedBefore + attempts.length, 'no refusal after the change');
    await page.close();
  });

  it('logging out works before the change; a locked account is told until when', async () => {
    await ctx.clearCookies();
    const page = await ctx.newPage();
    await login(page, 'lou', accounts.lou!);
    expect(page.url()).to.equal(`${base}/password`);
    await Promise.all([page.waitForLoadState('load'), page.click('nav button[type=submit]')]);
    expect(page.url()).to.equal(`${base}/login`);
    expect((await pg.query(`SELECT count(*)::int AS n FROM operator_sessions s JOIN operators o ON o.id = s.operator_id WHERE o.username = 'lou' AND s.ended_at IS NULL`)).rows[0].n).to.equal(0);

    for (let i = 0; i < 5; i++) await login(page, 'lou', `wrong password ${i}!`);
    const { rows: [locked] } = await pg.query<{ locked_until: Date }>(`SELECT locked_until FROM operators WHERE username = 'lou'`);
    expect(locked!.locked_until).to.be.an.instanceOf(Date);
    const until = new Date(Math.ceil(locked!.locked_until.getTime() / 1000) * 1000).toISOString().slice(0, 19).replace('T', ' ');
    const refused = page.waitForResponse((r) => r.url() === `${base}/login` && r.request().method() === 'POST');
    await login(page, 'lou', accounts.lou!);
    expect((await refused).status()).to.equal(401);
    const message = (await page.textContent('[role=alert]'))!;
    expect(message).to.include(`locked after repeated failures until ${until} UTC`);
    // about 15 minutes from now (the database's clock and this host's agree here)
    const stated = Date.parse(`${until}Z`);
    expect(stated - Date.now()).to.be.within(14 * 60_000, 15 * 60_000 + 2_000);
    await shot(page, 'first-login-locked');
    await page.close();
  });
});
