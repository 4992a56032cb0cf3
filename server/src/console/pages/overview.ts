import type express from 'express';
import { QueryTypes } from 'sequelize';
import { formatLocalDateTime } from '@wcs/core';
import { html } from '../html';
import type { ConsoleKit } from '../kit';

/** Overview: health, readiness, scan lag per chain, callback backlog, open alerts. */
export function registerOverviewPages(app: express.Express, kit: ConsoleKit): void {
  kit.get(app, '/', async (_req, res, s) => {
    const [stats] = await kit.sequelize.query<{ alerts: number; backlog: number; failed: number; operators: number; held: number }>(
      `SELECT (SELECT count(*)::int FROM operator_alerts WHERE acknowledged_at IS NULL) AS alerts,
              (SELECT count(*)::int FROM callback_queue q JOIN callback_tasks t ON t.id = q.task_id WHERE q.lease_owner IS NOT NULL OR t.status = 'WAITING') AS backlog,
              (SELECT count(*)::int FROM callback_task_states WHERE status = 'FAILED') AS failed,
              (SELECT count(*)::int FROM withdrawals WHERE approval = 'PENDING' AND status = 'PROCESSING') AS held,
              (SELECT count(*)::int FROM operators WHERE status = 'ACTIVE') AS operators`,
      { type: QueryTypes.SELECT },
    );
    const chains = await kit.sequelize.query<{ code: string; environment: string; height: string | null; tip: string | null; last_error: string | null; updated_at: Date | null }>(
      `SELECT c.code, c.environment, s.height::text AS height, s.tip_height::text AS tip, s.last_error, s.updated_at
         FROM scan_cursors s JOIN chains c ON c.id = s.chain_id ORDER BY c.environment, c.code`,
      { type: QueryTypes.SELECT },
    );
    const ready = await kit.deps.readiness().catch((e: unknown) => ({ ready: false, checks: { readiness: String((e as Error)?.message ?? e) } }));
    const st = stats!;
    kit.render(res, s, 'Overview', html`
      <h2>Health and readiness</h2>
      <p>This process is <b class="${ready.ready ? 'ok' : 'error'}">${ready.ready ? 'ready' : 'not ready'}</b> (the checks of the API's <code>/readyz</code>, made now).</p>
      <dl class="kv">${Object.entries(ready.checks).map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>
      <div class="grid">
      <div class="stat">Open alerts<b><a href="/alerts">${st.alerts}</a></b></div>
      <div class="stat">Callback backlog (waiting or in delivery)<b><a href="/callbacks?status=WAITING">${st.backlog}</a></b></div>
      <div class="stat">Failed callbacks<b><a href="/callbacks?status=FAILED">${st.failed}</a></b></div>
      <div class="stat">Withdrawals waiting for approval<b><a href="/withdrawals?approval=PENDING">${st.held}</a></b></div>
      <div class="stat">Active operators<b>${st.operators}</b></div></div>
      <h2>Deposit scanning</h2>
      <table><thead><tr><th>Chain</th><th>Scanned height</th><th>Node tip</th><th>Lag (blocks)</th><th>Last error</th><th>Updated</th></tr></thead><tbody>
      ${chains.length === 0 ? html`<tr><td colspan="6">No chain is scanned (no RPC endpoint configured).</td></tr>` : chains.map((c) => html`<tr><td>${c.code} (${c.environment})</td><td>${c.height ?? '-'}</td><td>${c.tip ?? '-'}</td>
        <td>${c.height !== null && c.tip !== null ? (BigInt(c.tip) - BigInt(c.height)).toString() : '-'}</td><td>${c.last_error ?? ''}</td><td>${c.updated_at ? formatLocalDateTime(c.updated_at) : ''}</td></tr>`)}
      </tbody></table>`);
  });
}
