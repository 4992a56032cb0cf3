import type express from 'express';
import { formatLocalDateTime } from '@wcs/core';
import { Alerts } from '../../operators/alerts';
import { html } from '../html';
import type { ConsoleKit } from '../kit';

/** Alerts: open ones (or all), acknowledge. */
export function registerAlertPages(app: express.Express, kit: ConsoleKit): void {
  kit.get(app, '/alerts', async (req, res, s) => {
    const all = req.query.all === '1';
    const list = await new Alerts(kit.sequelize).list({ open: !all, limit: 100 });
    const canAck = kit.may(s, 'alerts.acknowledge');
    kit.render(res, s, 'Alerts', html`<p>${all ? html`All alerts, newest first. <a href="/alerts">Open ones only</a>` : html`Open alerts, newest first. <a href="/alerts?all=1">All alerts</a>`}</p>
      <table><thead><tr><th>#</th><th>Raised</th><th>Chain</th><th>Kind</th><th>Message</th><th>Details</th><th>Acknowledged</th></tr></thead><tbody>
      ${list.length === 0 ? html`<tr><td colspan="7">No ${all ? '' : 'open '}alerts.</td></tr>` : list.map((a) => html`<tr><td>${a.id}</td><td>${formatLocalDateTime(a.createdAt)}</td><td>${a.chainCode ?? ''}</td><td>${a.kind}</td><td>${a.message}</td>
        <td><pre>${JSON.stringify(a.details, null, 1)}</pre></td>
        <td>${a.acknowledgedAt ? `${formatLocalDateTime(a.acknowledgedAt)}${a.acknowledgedBy ? ` by ${a.acknowledgedBy}` : ''}` : canAck ? kit.button(s, `/alerts/${a.id}/acknowledge`, 'Acknowledge') : 'open'}</td></tr>`)}
      </tbody></table>`);
  });

  kit.post(app, '/alerts/:id/acknowledge', 'alerts.acknowledge', 'acknowledge alerts', async (req, res, s) => {
    const r = await new Alerts(kit.sequelize).acknowledge(kit.actor(s, req), String(req.params.id));
    if (!r.ok) {
      kit.refuse(res, s, r.reason === 'NOT_FOUND' ? 404 : 409, r.reason === 'NOT_FOUND' ? 'No such alert.' : 'That alert is already acknowledged.');
      return;
    }
    res.redirect(303, '/alerts');
  });
}
