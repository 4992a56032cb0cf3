import type { NextFunction, Request, Response } from 'express';
import { html, page } from './html';
import type { ConsoleKit } from './kit';

/**
 * Credentials that must change, change first (docs/console.md, "The first login"): while the
 * session's operator still has a generated password (`mustChangePassword`), the console serves
 * only what it takes to change it. Everything else, every page and every change whatever its
 * method, is refused with 403 before any route runs; nothing is stored and nothing is audited.
 */

export type PasswordFirst = 'ALLOW' | 'REFUSE';

/** What a must-change session may still reach: method and path (lower case, no trailing slash). */
const ALLOWED: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
  [['GET', 'HEAD', 'POST'], '/password'], // the change itself and its page
  [['POST'], '/logout'],
  [['GET', 'HEAD', 'POST'], '/login'], // a new login (another account): it does not act on this session
  [['GET', 'HEAD'], '/assets/console.css'],
];

/**
 * Whether a request may go on given its session's must-change state. Pure: method and path as
 * Express gives them (`req.method`, `req.path`). Paths are compared as Express routes them (case
 * insensitive, one trailing slash ignored); any other spelling is refused, which is always safe.
 */
export function passwordFirst(method: string, path: string, mustChangePassword: boolean): PasswordFirst {
  if (!mustChangePassword) return 'ALLOW';
  const m = method.toUpperCase();
  let p = path.toLowerCase();
  if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  return ALLOWED.some(([methods, allowed]) => allowed === p && methods.includes(m)) ? 'ALLOW' : 'REFUSE';
}

/**
 * The console's middleware for the rule, ahead of every route: the session is authenticated once
 * (kept for the route, ConsoleKit.current), and a must-change session's request outside the rule
 * is answered 403 with the must-change banner. The refusal is one log line (no stack trace).
 */
export function passwordFirstGate(kit: ConsoleKit) {
  return (req: Request, res: Response, next: NextFunction): void => {
    kit.current(req, res).then((s) => {
      if (s === null || passwordFirst(req.method, req.path, s.session.mustChangePassword) === 'ALLOW') {
        next();
        return;
      }
      kit.deps.logger.warn('console request refused: the password must be changed first', {
        operator: s.session.operator.username, method: req.method, path: req.path.slice(0, 200), source: kit.source(req),
      });
      kit.send(res, 403, page('Change your password first', kit.pageOperator(s), html`<p class="error" role="alert">Refused: nothing was changed. Change your password first.</p>
        <p><a href="/password">Change your password</a></p>`, s.csrf));
    }, next);
  };
}
