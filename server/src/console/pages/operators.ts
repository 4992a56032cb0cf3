import type express from 'express';
import { formatLocalDateTime } from '@wcs/core';
import { OperatorError } from '../../operators/operators';
import { html } from '../html';
import type { ConsoleKit } from '../kit';

/** Operators: the list; an admin disables accounts (accounts are created with the CLI). */
export function registerOperatorPages(app: express.Express, kit: ConsoleKit): void {
  kit.get(app, '/operators', async (_req, res, s) => {
    const list = await kit.deps.operators.list();
    const admin = kit.may(s, 'operators.write');
    kit.render(res, s, 'Operators', html`<p>Accounts are created with <code>wcs operator create</code>; passwords and authenticator secrets are shown once, there.</p>
      <table><thead><tr><th>Username</th><th>Role</th><th>Status</th><th>Authenticator</th><th>Created</th>${admin ? html`<th></th>` : ''}</tr></thead><tbody>
      ${list.map((v) => html`<tr><td>${v.username}</td><td>${v.role}</td><td>${v.status}</td><td>${v.totp ? 'yes' : 'no'}</td><td>${formatLocalDateTime(v.createdAt)}</td>
        ${admin ? html`<td>${v.status === 'ACTIVE' && v.username !== s.session.operator.username ? kit.button(s, `/operators/${v.username}/disable`, 'Disable') : ''}</td>` : ''}</tr>`)}
      </tbody></table>`);
  });

  kit.post(app, '/operators/:username/disable', 'operators.write', 'disable operators', async (req, res, s) => {
    const username = String(req.params.username);
    if (username === s.session.operator.username) {
      kit.refuse(res, s, 400, 'You cannot disable your own account.');
      return;
    }
    try {
      await kit.deps.operators.disable(kit.actor(s, req), { username });
    } catch (e) {
      if (e instanceof OperatorError) {
        kit.refuse(res, s, e.code === 'OPERATOR_NOT_FOUND' ? 404 : 400, e.message);
        return;
      }
      throw e;
    }
    res.redirect(303, '/operators');
  });
}
