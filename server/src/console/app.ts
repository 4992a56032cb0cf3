import express, { type NextFunction, type Request, type Response } from 'express';
import { CONSOLE_CSS, html, page, type Html } from './html';
import { CSRF_COOKIE, ConsoleKit, SESSION_COOKIE, type ConsoleDeps, type Signed } from './kit';
import { PAGE_MODULES } from './pages';
import { passwordFirstGate } from './password-first';
import { ErrorCodes } from '@wcs/core';
import { DATABASE_RETRY_AFTER_SECONDS, databaseUnavailable } from '../db/unavailable';

export { CSRF_COOKIE, SESSION_COOKIE } from './kit';

/** A lockout's end as the login page states it: the database's time in UTC, rounded up to the second (never before it ends). */
export function lockedUntil(until: Date): string {
  return `${new Date(Math.ceil(until.getTime() / 1000) * 1000).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/**
 * The operator console (docs/console.md): server-rendered pages on their own port. Every page
 * needs a session (cookie `wcs_session`: HttpOnly, SameSite=Strict, Secure behind TLS); every
 * change needs the session's CSRF token in the form and the role's permission, checked here on
 * the server whatever the page showed. No inline script or style: the Content-Security-Policy
 * allows scripts from nowhere and styles only from the console itself.
 */
export function createConsoleApp(o: ConsoleDeps): express.Express {
  const kit = new ConsoleKit(o);
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  app.use((_req, res, next) => {
    res.setHeader('Content-Security-Policy', "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  app.use(express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 100 }));
  app.get('/assets/console.css', (_req, res) => {
    res.type('text/css').setHeader('Cache-Control', 'public, max-age=3600');
    res.send(CONSOLE_CSS);
  });

  const cookie = (name: string, value: string, maxAgeS: number | null) =>
    `${name}=${encodeURIComponent(value)}; Path=/; HttpOnly; SameSite=Strict${o.config.console.secureCookies ? '; Secure' : ''}${maxAgeS === null ? '' : `; Max-Age=${maxAgeS}`}`;
  const source = (req: Request) => kit.source(req);
  const send = (res: Response, status: number, body: string) => kit.send(res, status, body);
  const signedIn = (req: Request, res: Response) => kit.signedIn(req, res);
  const change = kit.change.bind(kit);
  const wrap = kit.wrap.bind(kit);
  // ahead of every route: a session whose password must be changed reaches only the password page and logout
  app.use(passwordFirstGate(kit));

  const loginPage = (message: Html | null) => page('Log in', null, html`<form method="post" action="/login" class="card">
    ${message ?? ''}
    <label for="username">Username</label><input id="username" name="username" autocomplete="username" required>
    <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
    <label for="totp">Authenticator code (if you have one)</label><input id="totp" name="totp" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}">
    <button type="submit">Log in</button></form>`);

  app.get('/login', (_req, res) => send(res, 200, loginPage(null)));
  app.post('/login', wrap(async (req, res) => {
    const b = req.body as Record<string, unknown>;
    const r = await o.auth.login({ username: String(b.username ?? ''), password: String(b.password ?? ''), totp: typeof b.totp === 'string' && b.totp !== '' ? b.totp : null, source: source(req) });
    if (!r.ok) {
      const why = r.reason === 'LOCKED'
        ? `This account is locked after repeated failures until ${lockedUntil(r.until)}: try again then, or ask an admin to reset it (wcs operator reset-password).`
        : {
          RATE_LIMITED: 'Too many failed attempts from your address: wait a minute and try again.',
          INVALID_CREDENTIALS: 'Wrong username or password.',
          TOTP_INVALID: 'The authenticator code is missing, wrong or already used.',
          DISABLED: 'This account is disabled.',
        }[r.reason];
      if (r.reason === 'RATE_LIMITED') res.setHeader('Retry-After', String(Math.ceil(r.retryAfterMs / 1000)));
      o.logger.info('console login refused', { reason: r.reason, source: source(req) });
      send(res, r.reason === 'RATE_LIMITED' ? 429 : 401, loginPage(html`<p class="error" role="alert">${why}</p>`));
      return;
    }
    res.setHeader('Set-Cookie', [cookie(SESSION_COOKIE, r.token, null), cookie(CSRF_COOKIE, r.csrf, null)]);
    res.redirect(303, r.mustChangePassword ? '/password' : '/');
  }));

  app.post('/logout', wrap(async (req, res) => {
    const s = await signedIn(req, res);
    if (!s) return;
    if (!o.auth.checkCsrf(s.session, (req.body as Record<string, unknown>)?._csrf)) {
      send(res, 403, page('Refused', kit.pageOperator(s), html`<p class="error">The form's security token is missing or wrong (CSRF).</p>`, s.csrf));
      return;
    }
    await o.auth.logout(s.session);
    res.setHeader('Set-Cookie', [cookie(SESSION_COOKIE, '', 0), cookie(CSRF_COOKIE, '', 0)]);
    res.redirect(303, '/login');
  }));

  for (const register of PAGE_MODULES) register(app, kit);

  const passwordPage = (s: Signed, message: Html | null) => page('Change your password', kit.pageOperator(s), html`<form method="post" action="/password" class="card">
    ${message ?? ''}<input type="hidden" name="_csrf" value="${s.csrf}">
    <label for="current">Current password</label><input id="current" name="current" type="password" autocomplete="current-password" required>
    <label for="next">New password (12 to 256 characters)</label><input id="next" name="next" type="password" autocomplete="new-password" minlength="12" required>
    <button type="submit">Change password</button></form>`, s.csrf);
  app.get('/password', wrap(async (req, res) => {
    const s = await signedIn(req, res);
    if (s) send(res, 200, passwordPage(s, null));
  }));
  app.post('/password', wrap(async (req, res) => {
    const s = await change(req, res, 'read', 'change your password');
    if (!s) return;
    const b = req.body as Record<string, unknown>;
    const r = await o.auth.changePassword(s.session, String(b.current ?? ''), String(b.next ?? ''), source(req));
    const messages = { OK: null, WRONG_PASSWORD: 'The current password is wrong.', WEAK_PASSWORD: 'The new password must be 12 to 256 characters.', SAME_PASSWORD: 'The new password must differ from the current one.' };
    if (r !== 'OK') {
      send(res, 400, passwordPage(s, html`<p class="error" role="alert">${messages[r]}</p>`));
      return;
    }
    // changed: this session may now do what its role allows (the next request reads the cleared flag)
    const changed: Signed = { ...s, session: { ...s.session, mustChangePassword: false } };
    send(res, 200, passwordPage(changed, html`<p class="ok" role="status">Password changed; your other sessions are logged out.</p>`));
  }));

  app.use((_req: Request, res: Response) => send(res, 404, page('Not found', null, html`<p>No such page. <a href="/">Overview</a></p>`)));
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  app.use((e: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if ((e as { type?: string }).type === 'entity.too.large' || (e as { type?: string }).type === 'parameters.too.many') {
      send(res, 413, page('Refused', null, html`<p class="error">The form is too large.</p>`));
      return;
    }
    const db = databaseUnavailable(e);
    if (db) {
      // the database is down or restarting: an expected condition, one line without a stack; the page says to retry
      o.logger.error('console request failed: database unavailable', { databaseCode: db.code, reason: db.reason });
      res.setHeader('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
      send(res, 503, page('Unavailable', null, html`<p class="error" role="alert">The database is unavailable (${String(ErrorCodes.SERVICE_UNAVAILABLE.code)} SERVICE_UNAVAILABLE): try again in a few seconds.</p>`));
      return;
    }
    o.logger.error('console request failed', { error: e });
    send(res, 500, page('Error', null, html`<p class="error">Something went wrong; it is in the service's log.</p>`));
  });
  return app;
}
