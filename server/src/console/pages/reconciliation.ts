import type express from 'express';
import { formatLocalDateTime, formatUnits } from '@wcs/core';
import { listDiscrepancies, type DiscrepancyView } from '../../reconciliation/operator';
import { differingBalances, tokenTotals, type TokenTotals } from '../../reconciliation/totals';
import { html } from '../html';
import { idOf, q, type ConsoleKit } from '../kit';

/** Differing addresses shown per token; discrepancies shown. */
const ADDRESSES_PER_TOKEN = 20;
const DISCREPANCIES = 100;

/** A signed base-unit amount in the token's units, with a sign when it is a difference. */
function signed(v: bigint, decimals: number): string {
  return v > 0n ? `+${formatUnits(v, decimals)}` : formatUnits(v, decimals);
}

/** The kinds of an address's explanations, e.g. "TRANSFER_IN_FLIGHT +0.5, DEPOSIT_PENDING +1". */
function explanationText(explanations: unknown, decimals: number): string {
  if (!Array.isArray(explanations) || explanations.length === 0) return '';
  return explanations.map((e: { kind?: unknown; amount?: unknown }) => {
    const amount = typeof e?.amount === 'string' && /^-?\d+$/.test(e.amount) ? ` ${signed(BigInt(e.amount), decimals)}` : '';
    return `${String(e?.kind ?? '?')}${amount}`;
  }).join(', ');
}

/**
 * Reconciliation: per application, chain and token the ledger against the chain from the latest
 * comparison of each custody address (docs/reconciliation.md), the addresses whose balance
 * differs and what explains it, and the discrepancies with their alert. Read only: passes are
 * run by the workers or `wcs reconcile run`; discrepancies are settled with `wcs reconcile
 * assign|book`.
 */
export function registerReconciliationPages(app: express.Express, kit: ConsoleKit): void {
  kit.get(app, '/reconciliation', async (req, res, s) => {
    const rawApp = q(req, 'app');
    const appId = idOf(rawApp);
    if (rawApp !== null && appId === null) {
      kit.refuse(res, s, 400, 'The application must be a positive whole number (an application id).');
      return;
    }
    const totals = await tokenTotals(kit.sequelize, { applicationId: appId });
    const discrepancies = await listDiscrepancies(kit.sequelize, { ...(appId !== null ? { applicationId: appId } : {}), all: true, limit: DISCREPANCIES });
    const differing = new Map<string, Awaited<ReturnType<typeof differingBalances>>>();
    for (const t of totals.filter((x) => x.difference !== 0n || x.unexplained !== 0n)) {
      differing.set(`${t.applicationId}:${t.chainTokenId}`, await differingBalances(kit.sequelize, { applicationId: t.applicationId, chainTokenId: t.chainTokenId, limit: ADDRESSES_PER_TOKEN }));
    }
    const row = (t: TokenTotals) => html`<tr class="${t.unexplained !== 0n ? 'error' : ''}"><td>${t.applicationId}</td><td>${t.chainCode}</td><td>${t.symbol}</td><td>${t.addresses}</td>
      <td>${formatUnits(t.ledger, t.decimals)}</td><td>${formatUnits(t.onChain, t.decimals)}</td><td>${signed(t.difference, t.decimals)}</td>
      <td>${signed(t.explained, t.decimals)}</td><td>${t.unexplained === 0n ? '0' : html`<b>${signed(t.unexplained, t.decimals)}</b>`}</td>
      <td>${t.minHeight === t.maxHeight ? String(t.maxHeight) : `${t.minHeight} to ${t.maxHeight}`}</td><td>${formatLocalDateTime(t.oldestReconciledAt)}</td><td>${t.openDiscrepancies}</td></tr>`;
    const details = totals.filter((t) => differing.has(`${t.applicationId}:${t.chainTokenId}`)).map((t) => {
      const list = differing.get(`${t.applicationId}:${t.chainTokenId}`) ?? [];
      return html`<h3>Application ${t.applicationId}, ${t.chainCode} ${t.symbol}: addresses that differ</h3>
      <table><thead><tr><th>Address</th><th>Kind</th><th>User</th><th>Ledger</th><th>Chain</th><th>Difference</th><th>Explained by</th><th>Unexplained</th><th>Block</th><th>Compared</th></tr></thead><tbody>
      ${list.map((b) => html`<tr class="${b.unexplained !== 0n ? 'error' : ''}"><td>${b.address}</td><td>${b.addressKind}</td><td>${b.externalUserId ?? ''}</td>
        <td>${formatUnits(b.ledger, t.decimals)}</td><td>${formatUnits(b.onChain, t.decimals)}</td><td>${signed(b.difference, t.decimals)}</td>
        <td>${explanationText(b.explanations, t.decimals)}</td><td>${signed(b.unexplained, t.decimals)}</td><td>${String(b.height)}</td><td>${formatLocalDateTime(b.reconciledAt)}</td></tr>`)}
      </tbody></table>`;
    });
    const discrepancyRow = (d: DiscrepancyView) => html`<tr class="${d.status === 'OPEN' ? 'error' : ''}"><td>${d.id}</td><td>${d.applicationId}</td><td>${d.chainCode}</td><td>${d.token}</td>
      <td>${d.address}${d.externalUserId ? html` <span class="muted">(${d.externalUserId})</span>` : ''}</td><td>${d.addressKind}</td><td>${d.amount.startsWith('-') ? d.amount : `+${d.amount}`}</td>
      <td>${String(d.height)}</td><td>${d.locatedHeight === null ? html`<span class="muted">not located</span>` : String(d.locatedHeight)}</td><td>${d.status}${d.resolution ? html`: ${d.resolution}` : ''}</td>
      <td>${d.alertId === null ? '' : html`<a href="/alerts?all=1">#${d.alertId}</a> ${d.alertAcknowledged ? 'acknowledged' : 'open'}`}</td><td>${d.createTime}</td></tr>`;
    kit.render(res, s, 'Reconciliation', html`<p>The ledger against the chain: for every custody address (deposit addresses, shared deposit accounts, hot and fee wallets) and token, what the ledger
      expects and what the node held at the block the last pass read. A difference is either explained (a transfer in flight, a deposit still pending, a recorded outflow) or it is a
      discrepancy for an operator (<code>wcs reconcile assign|book</code>). This page calls no node.</p>
      <form method="get" action="/reconciliation" class="filters"><label>Application id <input name="app" value="${rawApp ?? ''}" inputmode="numeric"></label><button type="submit">Show</button>
      ${appId !== null ? html`<a href="/reconciliation">All applications</a>` : ''}</form>
      <h2>Per application, chain and token</h2>
      <table><thead><tr><th>App</th><th>Chain</th><th>Token</th><th>Addresses</th><th>Ledger</th><th>Chain</th><th>Difference</th><th>Explained</th><th>Unexplained</th><th>Block</th><th>Oldest comparison</th><th>Open discrepancies</th></tr></thead><tbody>
      ${totals.length === 0 ? html`<tr><td colspan="12">Nothing reconciled yet${appId !== null ? html` for application ${appId}` : ''} (<code>wcs reconcile run</code>, or wait for the workers' next pass).</td></tr>` : totals.map(row)}
      </tbody></table>
      ${details}
      <h2>Discrepancies</h2>
      <table><thead><tr><th>#</th><th>App</th><th>Chain</th><th>Token</th><th>Address</th><th>Kind</th><th>Amount</th><th>Found at</th><th>Located to</th><th>Status</th><th>Alert</th><th>Raised</th></tr></thead><tbody>
      ${discrepancies.length === 0 ? html`<tr><td colspan="12">No discrepancies.</td></tr>` : discrepancies.map(discrepancyRow)}
      </tbody></table>`);
  });
}
