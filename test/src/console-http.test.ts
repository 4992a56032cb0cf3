/**
 * The operator console over HTTP (docs/console.md), against a running service and a real
 * database: login with password and TOTP, the session and CSRF cookies, role checks on the
 * server, CSRF refusals, security headers, escaping of what operators and others wrote, and the
 * audit log page. (The pages in a real browser follow in the console's Chromium tests.)
 */
import { expect } from 'chai';
import { createTestDatabase, testConfig, testEnv, testLogger, type TestDatabase } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { pastFirstLogin } from './support/first-login';
import { cliJson, runCli } from './support/processes';
import { totp } from './support/totp';

interface Browser {
  cookies: Map<string, string>;
}

describe('operator console over HTTP (login, sessions, CSRF, roles, safe display)', function () {
  let db: TestDatabase;
  let svc: WcsService;
  let base: string;
  const accounts: Record<string, { password: string; secret: string | null }> = {};

  async function wcs(args: string[]) {
    const r = await runCli([...args, '--json'], { ...process.env, ...testEnv(db.url) });
    expect(r.code, r.stdout + r.stderr).to.equal(0);
    return cliJson(args, r);
  }
  async function request(b: Browser, method: 'GET' | 'POST', path: string, form?: Record<string, string>) {
    const res = await fetch(base + path, {
      method, redirect: 'manual',
      headers: { cookie: [...b.cookies].map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('; '), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      const v = decodeURIComponent(pair!.slice(i + 1));
      if (v === '') b.cookies.delete(pair!.slice(0, i));
      else b.cookies.set(pair!.slice(0, i), v);
    }
    return { status: res.status, location: res.headers.get('location'), headers: res.headers, text: await res.text(), setCookies: res.headers.getSetCookie() };
  }
  /** Signed-in browsers by operator: a TOTP code is good for one login only, so an operator with one logs in once and keeps the session. */
  const sessions = new Map<string, Browser>();
  async function login(username: string): Promise<Browser> {
    const a = accounts[username]!;
    if (a.secret && sessions.has(username)) return sessions.get(username)!;
    const b: Browser = { cookies: new Map() };
    const r = await request(b, 'POST', '/login', { username, password: a.password, totp: a.secret ? totp(a.secret) : '' });
    expect(r.status, r.text).to.equal(303);
    sessions.set(username, b);
    return b;
  }

  before(async function () {
    db = await createTestDatabase();
    for (const [username, role] of [['ada', 'admin'], ['olga', 'operator'], ['vic', 'viewer'], ['<b>x</b>', 'viewer']] as const) {
      if (username.startsWith('<')) continue;
      const made = await wcs(['operator', 'create', '--username', username, '--role', role]);
      accounts[username] = { password: made.password, secret: made.totpUri ? new URL(made.totpUri).searchParams.get('secret') : null };
    }
    // ada makes the forced change in the login test; vic stands for an operator past it
    await pastFirstLogin(db.url, ['vic']);
    svc = await WcsService.start(testConfig(db.url, { WCS_CONSOLE_PORT: '0' }), testLogger(), { api: false, workers: false, console: true });
    base = svc.consoleUrl;
    expect(base).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
  });
  after(async function () {
    await svc?.stop();
    await db?.drop();
  });

  it('pages need a session: the login page, strict security headers, no inline script', async () => {
    const b: Browser = { cookies: new Map() };
    const home = await request(b, 'GET', '/');
    expect(home.status).to.equal(303);
    expect(home.location).to.equal('/login');
    const page = await request(b, 'GET', '/login');
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-security-policy')).to.equal("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
    expect(page.headers.get('x-frame-options')).to.equal('DENY');
    expect(page.headers.get('x-powered-by')).to.equal(null);
    expect(page.text).to.not.match(/<script|style=/i);
    expect(page.text).to.include('name="password"');
  });

  it('login: the admin needs the TOTP code; cookies are HttpOnly and SameSite=Strict; the first login must change the password before anything else', async () => {
    const b: Browser = { cookies: new Map() };
    const noCode = await request(b, 'POST', '/login', { username: 'ada', password: accounts.ada!.password, totp: '' });
    expect(noCode.status).to.equal(401);
    expect(noCode.text).to.include('authenticator code is missing, wrong or already used');
    const wrong = await request(b, 'POST', '/login', { username: 'ada', password: 'not the password', totp: '' });
    expect(wrong.status).to.equal(401);
    expect(wrong.text).to.include('Wrong username or password');
    const code = totp(accounts.ada!.secret!);
    const ok = await request(b, 'POST', '/login', { username: 'ada', password: accounts.ada!.password, totp: code });
    expect(ok.status).to.equal(303);
    expect(ok.location).to.equal('/password');
    expect(ok.setCookies).to.have.length(2);
    for (const c of ok.setCookies) expect(c).to.match(/; Path=\/; HttpOnly; SameSite=Strict$/);
    // until the generated password is changed, every other page is refused (docs/console.md, "The first login")
    const home = await request(b, 'GET', '/');
    expect(home.status).to.equal(403);
    expect(home.text).to.include('ada (admin)');
    expect(home.text).to.include('must be changed before anything else');
    const next = 'the admin chose this passphrase';
    const changed = await request(b, 'POST', '/password', { _csrf: b.cookies.get('wcs_csrf')!, current: accounts.ada!.password, next });
    expect(changed.status, changed.text).to.equal(200);
    accounts.ada!.password = next;
    expect((await request(b, 'GET', '/')).status).to.equal(200);
    // the code of the first login, whatever time it is now (the password change between may cross into the next 30 s step)
    const again = await request({ cookies: new Map() }, 'POST', '/login', { username: 'ada', password: accounts.ada!.password, totp: code });
    expect(again.status, 'the same code a second time').to.equal(401);
    sessions.set('ada', b);
  });

  it('changes need the CSRF token and the role, checked on the server: a viewer cannot disable an operator even with a valid token', async () => {
    const viewer = await login('vic');
    const refused = await request(viewer, 'POST', '/operators/olga/disable', { _csrf: viewer.cookies.get('wcs_csrf')! });
    expect(refused.status).to.equal(403);
    expect(refused.text).to.include('Your role (viewer) may not disable operators');
    const admin = await login('ada');
    const noToken = await request(admin, 'POST', '/operators/olga/disable', {});
    expect(noToken.status).to.equal(403);
    expect(noToken.text).to.include('CSRF');
    const badToken = await request(admin, 'POST', '/operators/olga/disable', { _csrf: 'x'.repeat(43) });
    expect(badToken.status).to.equal(403);
    const list0 = await wcs(['operator', 'list']);
    expect(list0.operators.find((o: { username: string }) => o.username === 'olga').status).to.equal('ACTIVE');
    const done = await request(admin, 'POST', '/operators/olga/disable', { _csrf: admin.cookies.get('wcs_csrf')! });
    expect(done.status).to.equal(303);
    const list1 = await wcs(['operator', 'list']);
    expect(list1.operators.find((o: { username: string }) => o.username === 'olga').status).to.equal('DISABLED');
    const audit = await wcs(['audit', '--action', 'operator.disable']);
    expect(audit.entries[0]).to.include({ actor: 'ada', role: 'admin', channel: 'console', target: 'operator:olga' });
    expect(audit.entries[0].source).to.match(/127\.0\.0\.1/);
  });

  it('the audit log page shows every entry escaped: markup written into the log is text, never markup', async () => {
    // a value no operator could type through the rules, written as an attacker with database access would
    const { Client } = await import('pg');
    const c = new Client({ connectionString: db.url });
    await c.connect();
    await c.query(`INSERT INTO audit_log (actor, actor_role, channel, source, action, target, before, after) VALUES ('<script>alert(1)</script>', 'shell', 'cli', '<img src=x onerror=alert(2)>', 'test.xss', '"><svg onload=alert(3)>', NULL, '{"note": "</pre><script>alert(4)</script>"}')`);
    await c.end();
    const admin = await login('ada');
    const page = await request(admin, 'GET', '/audit');
    expect(page.status).to.equal(200);
    expect(page.text).to.not.match(/<script|<img|<svg/i);
    expect(page.text).to.include('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page.text).to.include('&lt;img src=x onerror=alert(2)&gt;');
    expect(page.text).to.include('&quot;&gt;&lt;svg onload=alert(3)&gt;');
    expect(page.text).to.include('operator.disable');
  });

  it('logout ends the session (POST with the token); the old cookie opens nothing', async () => {
    const b = await login('vic');
    const token = b.cookies.get('wcs_session')!;
    expect((await request(b, 'GET', '/')).status).to.equal(200);
    const out = await request(b, 'POST', '/logout', { _csrf: b.cookies.get('wcs_csrf')! });
    expect(out.status).to.equal(303);
    expect(out.location).to.equal('/login');
    const replay: Browser = { cookies: new Map([['wcs_session', token]]) };
    expect((await request(replay, 'GET', '/')).status).to.equal(303);
  });

  it('the own-password form: wrong current password refused; a new one accepted and audited', async () => {
    const b = await login('vic');
    const csrf = b.cookies.get('wcs_csrf')!;
    const bad = await request(b, 'POST', '/password', { _csrf: csrf, current: 'nope nope nope', next: 'a long new passphrase' });
    expect(bad.status).to.equal(400);
    expect(bad.text).to.include('The current password is wrong');
    const good = await request(b, 'POST', '/password', { _csrf: csrf, current: accounts.vic!.password, next: 'a long new passphrase' });
    expect(good.status).to.equal(200);
    expect(good.text).to.include('Password changed');
    const audit = await wcs(['audit', '--action', 'operator.change-password']);
    expect(audit.entries[0]).to.include({ actor: 'vic', channel: 'console' });
  });
});
