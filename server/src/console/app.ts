import express, { type NextFunction, type Request, type Response } from 'express';
import { QueryTypes, type Sequelize } from 'sequelize';
import { formatLocalDateTime } from '@wcs/core';
import type { Logger } from '../config/logger';
import { Alerts } from '../operators/alerts';
import { AuditLog, type AuditActor } from '../operators/audit';
import { OperatorAuth, type Session } from '../operators/operator-auth';
import { OperatorError, Operators } from '../operators/operators';
import { may, type Action } from '../operators/permissions';
import { CONSOLE_CSS, html, page, type Html } from './html';

export const SESSION_COOKIE = 'wcs_session';
export const CSRF_COOKIE = 'wcs_csrf';
const AUDIT_PAGE = 50;

export interface ConsoleAppOptions {
  readonly sequelize: Sequelize;
  readonly operators: Operators;
  readonly auth: OperatorAuth;
  readonly logger: Logger;
  readonly secureCookies: boolean;
}

interface Signed {
  readonly session: Session;
  readonly csrf: string;
}

function cookies(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0) out[part.slice(0, i).trim()] = decodeURIComponent(part.slice(i + 1).trim());
  }
  return out;
}

/**
 * The operator console (docs/console.md): server-rendered pages on their own port. Every page
 * needs a session (cookie `wcs_session`: HttpOnly, SameSite=Strict, Secure behind TLS); every
 * change needs the session's CSRF token in the form and the role's permission, checked here on
 * the server whatever the page showed. No inline script or style: the Content-Security-Policy
 * allows scripts from nowhere and styles only from the console itself.
 */
export function createConsoleApp(o: ConsoleAppOptions): express.Express {
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
  app.use(express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 }));
  app.get('/assets/console.css', (_req, res) => {
    res.type('text/css').setHeader('Cache-Control', 'public, max-age=3600');
    res.send(CONSOLE_CSS);
  });

  const cookie = (name: string, value: string, maxAgeS: number | null) =>
    `${name}=${encodeURIComponent(value)}; Path=/; HttpOnly; SameSite=Strict${o.secureCookies ? '; Secure' : ''}${maxAgeS === null ? '' : `; Max-Age=${maxAgeS}`}`;
  const source = (req: Request) => req.socket.remoteAddress ?? 'unknown';
  const send = (res: Response, status: number, body: string) => res.status(status).type('html').send(body);
  const actor = (s: Signed, req: Request): AuditActor => ({ name: s.session.operator.username, role: s.session.operator.role, channel: 'console', source: source(req) });

  /** The request's session, or a redirect to the login page. */
  const signedIn = async (req: Request, res: Response): Promise<Signed | null> => {
    const c = cookies(req);
    const session = c[SESSION_COOKIE] ? await o.auth.authenticate(c[SESSION_COOKIE]) : null;
    if (!session) {
      res.redirect(303, '/login');
      return null;
    }
    return { session, csrf: c[CSRF_COOKIE] ?? '' };
  };
  const forbidden = (res: Response, s: Signed, what: string) =>
    send(res, 403, page('Not allowed', s.session.operator, html`<p class="error">Your role (${s.session.operator.role}) may not ${what}.</p>`, s.csrf));
  /** A change: the session, the CSRF token from the form, and the role's permission. */
  const change = async (req: Request, res: Response, action: Action, what: string): Promise<Signed | null> => {
    const s = await signedIn(req, res);
    if (!s) return null;
    if (!o.auth.checkCsrf(s.session, (req.body as Record<string, unknown>)?._csrf)) {
      send(res, 403, page('Refused', s.session.operator, html`<p class="error">The form's security token is missing or wrong (CSRF): reload the page and try again.</p>`, s.csrf));
      return null;
    }
    if (!may(s.session.operator.role, action)) {
      forbidden(res, s, what);
      return null;
    }
    return s;
  };
  const wrap = (fn: (req: Request, res: Response) => Promise<unknown>) => (req: Request, res: Response, next: NextFunction) => {
    fn(req, res).catch(next);
  };

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
      const why = {
        RATE_LIMITED: 'Too many failed attempts from your address: wait a minute and try again.',
        INVALID_CREDENTIALS: 'Wrong username or password.',
        TOTP_INVALID: 'The authenticator code is missing, wrong or already used.',
        LOCKED: 'This account is locked after repeated failures: try again later or ask an admin to reset it.',
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
      send(res, 403, page('Refused', s.session.operator, html`<p class="error">The form's security token is missing or wrong (CSRF).</p>`, s.csrf));
      return;
    }
    await o.auth.logout(s.session);
    res.setHeader('Set-Cookie', [cookie(SESSION_COOKIE, '', 0), cookie(CSRF_COOKIE, '', 0)]);
    res.redirect(303, '/login');
  }));

  app.get('/', wrap(async (req, res) => {
    const s = await signedIn(req, res);
    if (!s) return;
    const [stats] = await o.sequelize.query<{ alerts: number; backlog: number; operators: number }>(
      `SELECT (SELECT count(*)::int FROM operator_alerts WHERE acknowledged_at IS NULL) AS alerts,
              (SELECT count(*)::int FROM callback_tasks WHERE status = 'WAITING') AS backlog,
              (SELECT count(*)::int FROM operators WHERE status = 'ACTIVE') AS operators`,
      { type: QueryTypes.SELECT },
    );
    const chains = await o.sequelize.query<{ code: string; environment: string; height: string | null; tip: string | null; last_error: string | null; updated_at: Date | null }>(
      `SELECT c.code, c.environment, s.height::text AS height, s.tip_height::text AS tip, s.last_error, s.updated_at
         FROM scan_cursors s JOIN chains c ON c.id = s.chain_id ORDER BY c.environment, c.code`,
      { type: QueryTypes.SELECT },
    );
    const must = s.session.mustChangePassword ? html`<p class="error">Your password must be changed: <a href="/password">change it now</a>.</p>` : '';
    send(res, 200, page('Overview', s.session.operator, html`${must}<div class="grid">
      <div class="stat">Open alerts<b>${stats!.alerts}</b></div>
      <div class="stat">Callback backlog<b>${stats!.backlog}</b></div>
      <div class="stat">Active operators<b>${stats!.operators}</b></div></div>
      <h2>Deposit scanning</h2>
      <table><thead><tr><th>Chain</th><th>Scanned height</th><th>Node tip</th><th>Lag</th><th>Last error</th><th>Updated</th></tr></thead><tbody>
      ${chains.length === 0 ? html`<tr><td colspan="6">No chain is scanned (no RPC endpoint configured).</td></tr>` : chains.map((c) => html`<tr><td>${c.code} (${c.environment})</td><td>${c.height ?? '-'}</td><td>${c.tip ?? '-'}</td>
        <td>${c.height !== null && c.tip !== null ? (BigInt(c.tip) - BigInt(c.height)).toString() : '-'}</td><td>${c.last_error ?? ''}</td><td>${c.updated_at ? formatLocalDateTime(c.updated_at) : ''}</td></tr>`)}
      </tbody></table>`, s.csrf));
  }));

  app.get('/audit', wrap(async (req, res) => {
    const s = await signedIn(req, res);
    if (!s) return;
    const before = typeof req.query.before === 'string' && /^\d{1,19}$/.test(req.query.before) ? req.query.before : null;
    const entries = await new AuditLog(o.sequelize).list({ limit: AUDIT_PAGE, before });
    const json = (v: unknown) => (v === null ? '' : JSON.stringify(v, null, 1));
    const next = entries.length === AUDIT_PAGE ? html`<p><a href="/audit?before=${entries[entries.length - 1]!.id}">Older entries</a></p>` : '';
    send(res, 200, page('Audit log', s.session.operator, html`<p>Every change by an operator, through the console or the CLI, newest first. The log is append-only.</p>
      <table><thead><tr><th>#</th><th>When</th><th>Who</th><th>Role</th><th>Via</th><th>From</th><th>What</th><th>Target</th><th>Before</th><th>After</th></tr></thead><tbody>
      ${entries.map((e) => html`<tr><td>${e.id}</td><td>${formatLocalDateTime(e.at)}</td><td>${e.actor}</td><td>${e.actorRole}</td><td>${e.channel}</td><td>${e.source ?? ''}</td><td>${e.action}</td><td>${e.target ?? ''}</td>
        <td><pre>${json(e.before)}</pre></td><td><pre>${json(e.after)}</pre></td></tr>`)}
      </tbody></table>${next}`, s.csrf));
  }));

  app.get('/operators', wrap(async (req, res) => {
    const s = await signedIn(req, res);
    if (!s) return;
    const list = await o.operators.list();
    const admin = may(s.session.operator.role, 'operators.write');
    send(res, 200, page('Operators', s.session.operator, html`<p>Accounts are created with <code>wcs operator create</code>; passwords and authenticator secrets are shown once, there.</p>
      <table><thead><tr><th>Username</th><th>Role</th><th>Status</th><th>Authenticator</th><th>Created</th>${admin ? html`<th></th>` : ''}</tr></thead><tbody>
      ${list.map((v) => html`<tr><td>${v.username}</td><td>${v.role}</td><td>${v.status}</td><td>${v.totp ? 'yes' : 'no'}</td><td>${formatLocalDateTime(v.createdAt)}</td>
        ${admin ? html`<td>${v.status === 'ACTIVE' && v.username !== s.session.operator.username ? html`<form method="post" action="/operators/${v.username}/disable" class="inline">
          <input type="hidden" name="_csrf" value="${s.csrf}"><button type="submit">Disable</button></form>` : ''}</td>` : ''}</tr>`)}
      </tbody></table>`, s.csrf));
  }));

  app.post('/operators/:username/disable', wrap(async (req, res) => {
    const s = await change(req, res, 'operators.write', 'disable operators');
    if (!s) return;
    const username = String(req.params.username);
    if (username === s.session.operator.username) {
      send(res, 400, page('Refused', s.session.operator, html`<p class="error">You cannot disable your own account.</p>`, s.csrf));
      return;
    }
    try {
      await o.operators.disable(actor(s, req), { username });
    } catch (e) {
      if (e instanceof OperatorError) {
        send(res, e.code === 'OPERATOR_NOT_FOUND' ? 404 : 400, page('Refused', s.session.operator, html`<p class="error">${e.message}</p>`, s.csrf));
        return;
      }
      throw e;
    }
    res.redirect(303, '/operators');
  }));

  app.get('/alerts', wrap(async (req, res) => {
    const s = await signedIn(req, res);
    if (!s) return;
    const all = req.query.all === '1';
    const list = await new Alerts(o.sequelize).list({ open: !all, limit: 100 });
    const canAck = may(s.session.operator.role, 'alerts.acknowledge');
    send(res, 200, page('Alerts', s.session.operator, html`<p>${all ? html`All alerts, newest first. <a href="/alerts">Open ones only</a>` : html`Open alerts, newest first. <a href="/alerts?all=1">All alerts</a>`}</p>
      <table><thead><tr><th>#</th><th>Raised</th><th>Chain</th><th>Kind</th><th>Message</th><th>Details</th><th>Acknowledged</th></tr></thead><tbody>
      ${list.length === 0 ? html`<tr><td colspan="7">No ${all ? '' : 'open '}alerts.</td></tr>` : list.map((a) => html`<tr><td>${a.id}</td><td>${formatLocalDateTime(a.createdAt)}</td><td>${a.chainCode ?? ''}</td><td>${a.kind}</td><td>${a.message}</td>
        <td><pre>${JSON.stringify(a.details, null, 1)}</pre></td>
        <td>${a.acknowledgedAt ? `${formatLocalDateTime(a.acknowledgedAt)}${a.acknowledgedBy ? ` by ${a.acknowledgedBy}` : ''}` : canAck ? html`<form method="post" action="/alerts/${a.id}/acknowledge" class="inline">
          <input type="hidden" name="_csrf" value="${s.csrf}"><button type="submit">Acknowledge</button></form>` : 'open'}</td></tr>`)}
      </tbody></table>`, s.csrf));
  }));

  app.post('/alerts/:id/acknowledge', wrap(async (req, res) => {
    const s = await change(req, res, 'alerts.acknowledge', 'acknowledge alerts');
    if (!s) return;
    const r = await new Alerts(o.sequelize).acknowledge(actor(s, req), String(req.params.id));
    if (!r.ok) {
      send(res, r.reason === 'NOT_FOUND' ? 404 : 409, page('Refused', s.session.operator, html`<p class="error">${r.reason === 'NOT_FOUND' ? 'No such alert.' : 'That alert is already acknowledged.'}</p>`, s.csrf));
      return;
    }
    res.redirect(303, '/alerts');
  }));

  const passwordPage = (s: Signed, message: Html | null) => page('Change your password', s.session.operator, html`<form method="post" action="/password" class="card">
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
    send(res, 200, passwordPage(s, html`<p class="ok" role="status">Password changed; your other sessions are logged out.</p>`));
  }));

  app.use((_req: Request, res: Response) => send(res, 404, page('Not found', null, html`<p>No such page. <a href="/">Overview</a></p>`)));
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  app.use((e: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if ((e as { type?: string }).type === 'entity.too.large' || (e as { type?: string }).type === 'parameters.too.many') {
      send(res, 413, page('Refused', null, html`<p class="error">The form is too large.</p>`));
      return;
    }
    o.logger.error('console request failed', { error: e });
    send(res, 500, page('Error', null, html`<p class="error">Something went wrong; it is in the service's log.</p>`));
  });
  return app;
}
