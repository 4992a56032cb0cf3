import type express from 'express';
import type { NextFunction, Request, Response } from 'express';
import type { Sequelize } from 'sequelize';
import type { StorageHandle } from '../service';
import type { ServiceConfig } from '../config/config';
import type { Logger } from '../config/logger';
import type { KeyStoreSupervisor } from '../custody/keystore-supervisor';
import type { ReadyReport } from '../http/app';
import type { AuditActor } from '../operators/audit';
import type { OperatorAuth, Session } from '../operators/operator-auth';
import type { Operators } from '../operators/operators';
import { may, type Action } from '../operators/permissions';
import { html, page, type Html, type PageOperator } from './html';

export const SESSION_COOKIE = 'wcs_session';
export const CSRF_COOKIE = 'wcs_csrf';

/** A signed-in request: the session and the CSRF token its forms carry. */
export interface Signed {
  readonly session: Session;
  readonly csrf: string;
}

export interface ConsoleDeps {
  readonly storage: StorageHandle;
  readonly config: ServiceConfig;
  readonly operators: Operators;
  readonly auth: OperatorAuth;
  readonly logger: Logger;
  /** The same report as the API's /readyz, for this process (database, key store when open here). */
  readonly readiness: () => Promise<ReadyReport>;
  /** The key store's supervisor when this process runs the API or workers; null in a console-only process. */
  readonly keystoreSupervisor: () => KeyStoreSupervisor | null;
}

export function cookies(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0) {
      try {
        out[part.slice(0, i).trim()] = decodeURIComponent(part.slice(i + 1).trim());
      } catch {
        // a malformed cookie is no cookie
      }
    }
  }
  return out;
}

/**
 * What every console page module uses (docs/console.md): the session check, the change check
 * (session + CSRF token + role, on the server whatever the page showed), the audit actor, and the
 * page senders. Page modules (console/pages/*.ts) call the same service functions as the CLI.
 */
export class ConsoleKit {
  readonly sequelize: Sequelize;

  constructor(readonly deps: ConsoleDeps) {
    this.sequelize = deps.storage.database.sequelize;
  }

  get storage(): StorageHandle {
    return this.deps.storage;
  }

  resolve<T>(token: symbol): T {
    return this.deps.storage.container.resolve<T>(token);
  }

  source(req: Request): string {
    return req.socket.remoteAddress ?? 'unknown';
  }

  actor(s: Signed, req: Request): AuditActor {
    return { name: s.session.operator.username, role: s.session.operator.role, channel: 'console', source: this.source(req) };
  }

  send(res: Response, status: number, body: string): void {
    res.status(status).type('html').send(body);
  }

  /** Who the page is for: the operator and whether the password must be changed first (the banner, the short navigation). */
  pageOperator(s: Signed): PageOperator {
    return { username: s.session.operator.username, role: s.session.operator.role, mustChangePassword: s.session.mustChangePassword };
  }

  /** A full page for a signed-in operator. */
  render(res: Response, s: Signed, title: string, body: Html, status = 200): void {
    this.send(res, status, page(title, this.pageOperator(s), body, s.csrf));
  }

  /** A refusal page: the message is shown escaped, nothing was changed. */
  refuse(res: Response, s: Signed, status: number, message: string): void {
    this.render(res, s, 'Refused', html`<p class="error" role="alert">${message}</p><p><a href="/">Overview</a></p>`, status);
  }

  /**
   * The request's session or null, authenticated once per request (the console's middleware does
   * it first, console/password-first.ts) and kept for the route in `res.locals`.
   */
  async current(req: Request, res: Response): Promise<Signed | null> {
    const locals = res.locals as { wcsSigned?: Signed | null };
    if (locals.wcsSigned !== undefined) return locals.wcsSigned;
    const c = cookies(req);
    const token = c[SESSION_COOKIE];
    const session = token ? await this.deps.auth.authenticate(token) : null;
    locals.wcsSigned = session ? { session, csrf: c[CSRF_COOKIE] ?? '' } : null;
    return locals.wcsSigned;
  }

  /** The request's session, or a redirect to the login page (null). */
  async signedIn(req: Request, res: Response): Promise<Signed | null> {
    const s = await this.current(req, res);
    if (!s) res.redirect(303, '/login');
    return s;
  }

  may(s: Signed, action: Action): boolean {
    return may(s.session.operator.role, action);
  }

  /** A change: the session, the CSRF token from the form, and the role's permission (null: answered already). */
  async change(req: Request, res: Response, action: Action, what: string): Promise<Signed | null> {
    const s = await this.signedIn(req, res);
    if (!s) return null;
    if (!this.deps.auth.checkCsrf(s.session, (req.body as Record<string, unknown> | undefined)?._csrf)) {
      this.refuse(res, s, 403, "The form's security token is missing or wrong (CSRF): reload the page and try again.");
      return null;
    }
    if (!this.may(s, action)) {
      this.refuse(res, s, 403, `Your role (${s.session.operator.role}) may not ${what}.`);
      return null;
    }
    return s;
  }

  /** A hidden CSRF field for a form. */
  csrfField(s: Signed): Html {
    return html`<input type="hidden" name="_csrf" value="${s.csrf}">`;
  }

  /** A one-button POST form (the CSRF token included). */
  button(s: Signed, action: string, label: string, fields: Record<string, string> = {}): Html {
    return html`<form method="post" action="${action}" class="inline">${this.csrfField(s)}${Object.entries(fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}<button type="submit">${label}</button></form>`;
  }

  /** Wraps an async handler so a rejection reaches the error handler. */
  wrap(fn: (req: Request, res: Response) => Promise<unknown>) {
    return (req: Request, res: Response, next: NextFunction) => {
      fn(req, res).catch(next);
    };
  }

  /** A read page: signed in, then `fn`. */
  get(app: express.Express, path: string, fn: (req: Request, res: Response, s: Signed) => Promise<unknown>): void {
    app.get(path, this.wrap(async (req, res) => {
      const s = await this.signedIn(req, res);
      if (s) await fn(req, res, s);
    }));
  }

  /** A change: signed in, CSRF and role checked, then `fn`. */
  post(app: express.Express, path: string, action: Action, what: string, fn: (req: Request, res: Response, s: Signed) => Promise<unknown>): void {
    app.post(path, this.wrap(async (req, res) => {
      const s = await this.change(req, res, action, what);
      if (s) await fn(req, res, s);
    }));
  }
}

/** A query-string value as a string (the first, when repeated), or null. */
export function q(req: Request, name: string): string | null {
  const v = req.query[name];
  const one = Array.isArray(v) ? v[0] : v;
  return typeof one === 'string' && one !== '' ? one : null;
}

/** A form field as a string ('' when absent). */
export function field(req: Request, name: string): string {
  const v = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v : '';
}

/** A form field given several times (checkboxes), as strings. */
export function fields(req: Request, name: string): string[] {
  const v = (req.body as Record<string, unknown> | undefined)?.[name];
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  return typeof v === 'string' ? [v] : [];
}

/** A positive whole-number id from a route parameter or field, or null. */
export function idOf(v: string | null | undefined): number | null {
  return typeof v === 'string' && /^[1-9]\d{0,14}$/.test(v) ? Number(v) : null;
}
