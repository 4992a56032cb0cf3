import type express from 'express';
import type { AdapterRegistry } from '@wcs/core';
import { TOKENS } from '../../container';
import { walletsView, workerEndpoints } from '../../collection/wallets-view';
import { html } from '../html';
import { idOf, q, type ConsoleKit } from '../kit';

/** Applications per page of the wallets list. */
const APPS_PER_PAGE = 10;

/**
 * Wallets: per application, the hot wallets with their ledger and watermarks, the missing ones
 * and why, the fee wallets, the COLD and MERCHANT addresses, and open wallet alerts. Read only:
 * balances are the workers' last readings (no chain node is called); fee wallets are made by
 * `wcs collect fee-wallets`, hot accounts registered by `wcs hotwallets register`.
 */
export function registerWalletPages(app: express.Express, kit: ConsoleKit): void {
  kit.get(app, '/wallets', async (req, res, s) => {
    const rawApp = q(req, 'app');
    const appId = idOf(rawApp);
    if (rawApp !== null && appId === null) {
      kit.refuse(res, s, 400, 'The application must be a positive whole number (an application id).');
      return;
    }
    const after = idOf(q(req, 'after'));
    const view = await walletsView(kit.sequelize, kit.storage.catalogue, kit.resolve<AdapterRegistry>(TOKENS.AdapterRegistry), workerEndpoints(kit.deps.config),
      { app: appId, after, limit: APPS_PER_PAGE });
    const dash = (v: string | null | undefined) => v ?? '-';
    const next = view.next !== null ? html`<p class="pager"><a href="/wallets?${new URLSearchParams({ after: String(view.next) }).toString()}">Next applications</a></p>` : '';
    kit.render(res, s, 'Wallets', html`<p>Hot wallets, fee wallets and cold addresses per application and chain. Balances are what the workers last read from the nodes
      (this page calls no node); <i>available</i> is on chain less what withdrawals and cold transfers reserved and sweeps not final yet, the figure the watermarks are checked on.</p>
      <form method="get" action="/wallets" class="filters"><label>Application id <input name="app" value="${rawApp ?? ''}" inputmode="numeric"></label><button type="submit">Show</button>
      ${appId !== null || after !== null ? html`<a href="/wallets">All applications</a>` : ''}</form>
      ${view.applications.length === 0 ? html`<p>No ${appId !== null ? html`application ${appId}` : 'applications'}.</p>` : ''}
      ${view.applications.map((a) => html`<section id="app-${a.applicationId}">
        <h2>Application ${a.applicationId}: ${a.name} <span class="muted">(${a.environment}, ${a.status}, settlement ${a.settlementMode}, chains ${a.enabledChains.join(', ') || 'none'})</span></h2>
        ${a.alerts.length === 0 ? '' : html`<h3>Open alerts</h3><ul>${a.alerts.map((x) => html`<li class="error">${x.kind}${x.chainCode ? html` (${x.chainCode})` : ''}, ${x.createdTime}: ${x.message} <a href="/alerts">Alerts</a></li>`)}</ul>`}
        <h3>Hot wallets</h3>
        <table><thead><tr><th>Chain</th><th>Address</th><th>Token</th><th>On chain</th><th>Reserved</th><th>Incoming</th><th>Low / target / high</th><th>Watermarks</th><th>Read</th></tr></thead><tbody>
        ${a.hotWallets.length === 0 && a.missingHotWallets.length === 0 ? html`<tr><td colspan="9">No chain enabled.</td></tr>` : ''}
        ${a.hotWallets.map((h) => html`<tr><td>${h.chainCode}</td><td>${h.address}</td><td>${h.token}</td><td>${h.onChain ?? '(not read)'}</td><td>${h.reserved}</td><td>${dash(h.incoming)}</td>
          <td>${dash(h.hotLow)} / ${dash(h.hotTarget)} / ${dash(h.hotHigh)}</td><td>${h.watermarkState === 'BELOW_LOW' || h.watermarkState === 'ABOVE_HIGH' ? html`<b class="error">${h.watermark}</b>` : h.watermark}</td><td>${h.observedTime ?? ''}</td></tr>`)}
        ${a.missingHotWallets.map((m) => html`<tr><td>${m.chainCode}</td><td colspan="8" class="muted">no hot wallet: ${m.reason}</td></tr>`)}
        </tbody></table>
        <h3>Fee wallets (pay EVM token sweeps' gas top-ups)</h3>
        ${a.feeWallets.length === 0 ? html`<p class="muted">None (made by <code>wcs collect fee-wallets</code> or a running worker on EVM chains).</p>` : html`<table><thead><tr><th>Chain</th><th>Address</th><th>Balance</th><th>Read</th></tr></thead><tbody>
        ${a.feeWallets.map((f) => html`<tr><td>${f.chainCode}</td><td>${f.address}</td><td>${f.balance === null ? '(not read yet)' : `${f.balance} ${f.symbol}`}</td><td>${f.observedTime ?? ''}</td></tr>`)}</tbody></table>`}
        <h3>Cold and merchant addresses</h3>
        ${a.addresses.length === 0 ? html`<p class="muted">None set (<code>wcs collect address set --kind COLD|MERCHANT</code>).</p>` : html`<table><thead><tr><th>Chain</th><th>Kind</th><th>Address</th><th>Memo</th><th>Set</th></tr></thead><tbody>
        ${a.addresses.map((c) => html`<tr><td>${c.chainCode}</td><td>${c.kind}</td><td>${c.address}</td><td>${c.memo ?? ''}</td><td>${c.updateTime ?? ''}</td></tr>`)}</tbody></table>`}
        <p><a href="/collection?${new URLSearchParams({ app: String(a.applicationId) }).toString()}">Collection policies and items of application ${a.applicationId}</a></p>
      </section>`)}
      ${next}`);
  });
}
