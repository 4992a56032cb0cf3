import type express from 'express';
import { formatLocalDateTime } from '@wcs/core';
import { AuditLog } from '../../operators/audit';
import { html } from '../html';
import { q, type ConsoleKit } from '../kit';

const AUDIT_PAGE = 50;

/** The audit log, newest first, paged by keyset (`before` = the last id shown). */
export function registerAuditPages(app: express.Express, kit: ConsoleKit): void {
  kit.get(app, '/audit', async (req, res, s) => {
    const raw = q(req, 'before');
    const before = raw !== null && /^\d{1,19}$/.test(raw) ? raw : null;
    const action = q(req, 'action');
    const actorName = q(req, 'actor');
    const entries = await new AuditLog(kit.sequelize).list({ limit: AUDIT_PAGE, before, action, actor: actorName });
    const json = (v: unknown) => (v === null ? '' : JSON.stringify(v, null, 1));
    const keep = { ...(action ? { action } : {}), ...(actorName ? { actor: actorName } : {}) };
    const next = entries.length === AUDIT_PAGE ? html`<p><a href="/audit?${new URLSearchParams({ ...keep, before: entries[entries.length - 1]!.id }).toString()}">Older entries</a></p>` : '';
    kit.render(res, s, 'Audit log', html`<p>Every change by an operator, through the console or the CLI, newest first. The log is append-only.</p>
      <form method="get" action="/audit" class="filters"><label>Action <input name="action" value="${action ?? ''}"></label><label>Who <input name="actor" value="${actorName ?? ''}"></label><button type="submit">Filter</button></form>
      <table><thead><tr><th>#</th><th>When</th><th>Who</th><th>Role</th><th>Via</th><th>From</th><th>What</th><th>Target</th><th>Before</th><th>After</th></tr></thead><tbody>
      ${entries.length === 0 ? html`<tr><td colspan="10">No entries.</td></tr>` : entries.map((e) => html`<tr><td>${e.id}</td><td>${formatLocalDateTime(e.at)}</td><td>${e.actor}</td><td>${e.actorRole}</td><td>${e.channel}</td><td>${e.source ?? ''}</td><td>${e.action}</td><td>${e.target ?? ''}</td>
        <td><pre>${json(e.before)}</pre></td><td><pre>${json(e.after)}</pre></td></tr>`)}
      </tbody></table>${next}`);
  });
}
