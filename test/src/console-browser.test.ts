/**
 * The operator console in a real browser (Debian's Chromium driven by playwright-core, headless):
 * login with TOTP, the forced password change, the pages, a viewer's change refused by the
 * server, a change without the CSRF token refused, text injected into the audit log shown as
 * text with no script run, lockout after repeated wrong passwords. Every page's screenshot is
 * written to test/screenshots/ (look at them when changing a page).
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { createTestDatabase, testConfig, testEnv, testLogger, type TestDatabase } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { pastFirstLogin } from './support/first-login';
import { cliJson, runCli } from './support/processes';
import { totp } from './support/totp';

const CHROMIUM = process.env.WCS_TEST_CHROMIUM ?? '/usr/bin/chromium';
const SHOTS = path.resolve(__dirname, '..', 'screenshots');

describe('operator console in Chromium (login, pages, refusals, safe display, screenshots)', function () {
  let db: TestDatabase;
  let svc: WcsService;
  let base: string;
  let profile: string;
  let ctx: BrowserContext;
  const dialogs: string[] = [];
  const accounts: Record<string, { password: string; secret: string | null }> = {};

  async function wcs(args: string[]) {
    const r = await runCli([...args, '--json'], { ...process.env, ...testEnv(db.url) });
    expect(r.code, r.stdout + r.stderr).to.equal(0);
    return cliJson(args, r);
  }
  async function shot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  }
  async function fillLogin(page: Page, username: string, password: string, code: string) {
    await page.goto(`${base}/login`);
    await page.fill('#username', username);
    await page.fill('#password', password);
    await page.fill('#totp', code);
    await Promise.all([page.waitForLoadState('load'), page.click('button[type=submit]')]);
  }

  before(async function () {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM}: the README's test line installs it (scripts/test-prereqs.js)`);
    fs.mkdirSync(SHOTS, { recursive: true });
    db = await createTestDatabase();
    for (const [username, role] of [['ada', 'admin'], ['vic', 'viewer'], ['lou', 'viewer'], ['olga', 'operator']] as const) {
      const made = await wcs(['operator', 'create', '--username', username, '--role', role]);
      accounts[username] = { password: made.password, secret: made.totpUri ? new URL(made.totpUri).searchParams.get('secret') : null };
    }
    // ada makes the forced change below; the others stand for operators past it (the rule itself: console-first-login-browser.test.ts)
    await pastFirstLogin(db.url, ['vic', 'lou', 'olga']);
    const c = new Client({ connectionString: db.url });
    await c.connect();
    await c.query(`INSERT INTO operator_alerts (kind, message, details) VALUES ('COLLECTION_FAILED', 'collection item 7 failed: <b>SWEEP_REVERTED</b>', '{"item": "7"}')`);
    await c.query(`INSERT INTO audit_log (actor, actor_role, channel, source, action, target, after) VALUES ('<script>alert("actor")</script>', 'shell', 'cli', '<img src=x onerror=alert("source")>', 'test.xss', '"><svg onload=alert("target")>', '{"html": "<script>alert(1)</script>"}')`);
    await c.end();
    svc = await WcsService.start(testConfig(db.url, { WCS_CONSOLE_PORT: '0' }), testLogger(), { api: false, workers: false, console: true });
    base = svc.consoleUrl;
    profile = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-chromium-'));
    ctx = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM, headless: true, viewport: { width: 1280, height: 800 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    });
    ctx.on('page', (p) => p.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    }));
  });
  after(async function () {
    await ctx?.close();
    if (profile) fs.rmSync(profile, { recursive: true, force: true });
    await svc?.stop();
    await db?.drop();
  });

  it('the admin logs in with password and TOTP, must change the password first, then sees the overview, operators and audit pages', async () => {
    const page = await ctx.newPage();
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(base);
    expect(page.url()).to.equal(`${base}/login`);
    await shot(page, 'login');
    await fillLogin(page, 'ada', accounts.ada!.password, '000000');
    expect(await page.textContent('[role=alert]')).to.include('authenticator code is missing, wrong or already used');
    await shot(page, 'login-refused');
    await fillLogin(page, 'ada', accounts.ada!.password, totp(accounts.ada!.secret!));
    expect(page.url()).to.equal(`${base}/password`);
    await page.fill('#current', accounts.ada!.password);
    await page.fill('#next', 'the admin has a new passphrase');
    await Promise.all([page.waitForLoadState('load'), page.click('form.card button[type=submit]')]);
    expect(await page.textContent('[role=status]')).to.include('Password changed');
    await shot(page, 'password');
    await page.goto(base);
    expect(await page.textContent('h1')).to.equal('Overview');
    expect(await page.textContent('nav .who')).to.equal('ada (admin)');
    await shot(page, 'overview');
    await page.goto(`${base}/operators`);
    expect(await page.locator('tbody tr').count()).to.equal(4);
    await shot(page, 'operators');
    await page.goto(`${base}/audit`);
    await shot(page, 'audit');
    // what was written into the log is on the page as text; nothing of it ran
    const text = (await page.textContent('table'))!;
    expect(text).to.include('<script>alert("actor")</script>');
    expect(text).to.include('<img src=x onerror=alert("source")>');
    expect(text).to.include('operator.change-password');
    expect(await page.locator('table script, table img, table svg').count()).to.equal(0);
    expect(dialogs, 'no script ran').to.deep.equal([]);
    // alerts: the admin reads them but may not acknowledge (operators and approvers do)
    await page.goto(`${base}/alerts`);
    expect(await page.locator('tbody tr').count()).to.equal(1);
    expect(await page.locator('button', { hasText: 'Acknowledge' }).count()).to.equal(0);
    await shot(page, 'alerts');
    // the admin disables lou through the page
    await page.goto(`${base}/operators`);
    await Promise.all([page.waitForLoadState('load'), page.locator('tr', { hasText: 'lou' }).locator('button').click()]);
    expect(await page.locator('tr', { hasText: 'lou' }).locator('td').nth(2).textContent()).to.equal('DISABLED');
    // a change without the form's CSRF token, with the admin's cookies: refused by the server
    const forged = await page.request.post(`${base}/operators/vic/disable`, { form: { nothing: 'here' }, maxRedirects: 0 });
    expect(forged.status()).to.equal(403);
    expect(await forged.text()).to.include('CSRF');
    await page.close();
  });

  it('a viewer sees no change buttons, and the server refuses the change even with a valid CSRF token', async () => {
    await ctx.clearCookies();
    const page = await ctx.newPage();
    await fillLogin(page, 'vic', accounts.vic!.password, '');
    await page.goto(`${base}/operators`);
    expect(await page.locator('button', { hasText: 'Disable' }).count()).to.equal(0);
    await shot(page, 'operators-viewer');
    const csrf = (await ctx.cookies()).find((c) => c.name === 'wcs_csrf')!;
    expect(csrf.httpOnly).to.equal(true);
    expect(csrf.sameSite).to.equal('Strict');
    const refused = await page.request.post(`${base}/operators/ada/disable`, { form: { _csrf: csrf.value }, maxRedirects: 0 });
    expect(refused.status()).to.equal(403);
    expect(await refused.text()).to.include('Your role (viewer) may not disable operators');
    const list = await wcs(['operator', 'list']);
    expect(list.operators.find((o: { username: string }) => o.username === 'ada').status).to.equal('ACTIVE');
    await page.close();
  });

  it('an operator acknowledges an alert on the alerts page; it leaves the open list and the audit log names them', async () => {
    await ctx.clearCookies();
    const page = await ctx.newPage();
    await fillLogin(page, 'olga', accounts.olga!.password, '');
    await page.goto(`${base}/alerts`);
    expect(await page.textContent('tbody')).to.include('collection item 7 failed: <b>SWEEP_REVERTED</b>');
    await Promise.all([page.waitForLoadState('load'), page.locator('button', { hasText: 'Acknowledge' }).first().click()]);
    expect(await page.textContent('tbody')).to.include('No open alerts.');
    await page.goto(`${base}/alerts?all=1`);
    expect(await page.textContent('tbody')).to.match(/by olga/);
    await shot(page, 'alerts-all');
    const log = await wcs(['audit', '--action', 'alert.acknowledge']);
    expect(log.entries[0]).to.include({ actor: 'olga', role: 'operator', channel: 'console' });
    await page.close();
  });

  it('a session ends after 15 idle minutes and after 8 hours whatever the activity: the next page is the login page', async () => {
    const c = new Client({ connectionString: db.url });
    await c.connect();
    try {
      for (const [what, shift] of [['idle', `last_seen_at = now() - interval '16 minutes'`], ['absolute', `expires_at = now() - interval '1 second'`]] as const) {
        await ctx.clearCookies();
        const page = await ctx.newPage();
        await fillLogin(page, 'olga', accounts.olga!.password, '');
        await page.goto(`${base}/alerts`);
        expect(await page.textContent('h1'), what).to.equal('Alerts');
        // the operator's session, as the database clock sees it, is past its limit
        const r = await c.query(`UPDATE operator_sessions SET ${shift} WHERE ended_at IS NULL AND operator_id = (SELECT id FROM operators WHERE username = 'olga')`);
        expect(r.rowCount, what).to.be.at.least(1);
        await page.goto(`${base}/alerts`);
        expect(page.url(), what).to.equal(`${base}/login`);
        if (what === 'idle') await shot(page, 'login-after-expiry');
        // the old cookie opens nothing, even for a change with its CSRF token
        const csrf = (await ctx.cookies()).find((k) => k.name === 'wcs_csrf')!;
        const post = await page.request.post(`${base}/alerts/1/acknowledge`, { form: { _csrf: csrf.value }, maxRedirects: 0 });
        expect(post.status(), what).to.equal(303);
        expect(post.headers().location, what).to.equal('/login');
        await page.close();
      }
    } finally {
      await c.end();
    }
  });

  it('five wrong passwords lock the account: the right password is then refused with the lockout message', async () => {
    await ctx.clearCookies();
    const page = await ctx.newPage();
    for (let i = 0; i < 5; i++) await fillLogin(page, 'vic', `wrong password ${i}!`, '');
    await fillLogin(page, 'vic', accounts.vic!.password, '');
    expect(await page.textContent('[role=alert]')).to.include('locked after repeated failures');
    await shot(page, 'login-locked');
    await page.close();
  });
});
