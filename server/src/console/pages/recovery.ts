import type express from 'express';
import { formatLocalDateTime, type AdapterRegistry } from '@wcs/core';
import { TOKENS } from '../../container';
import { listHolds, type SenderHold } from '../../transfers/sender-holds';
import { TransferRecovery } from '../../transfers/recovery';
import { planJson, type PlanJson } from '../../transfers/recovery-view';
import { html } from '../html';
import type { ConsoleKit } from '../kit';

/** The evidence as the operator reads it. */
function evidenceText(e: Record<string, unknown>): string {
  switch (e.kind) {
    case 'SEQUENCE': return `sequence: the database's next ${String(e.databaseNext ?? 'none')}, the chain's ${String(e.chainNext)}${e.pendingNext ? ` (${String(e.pendingNext)} with the pool)` : ''}`;
    case 'SPENT_OUTPUTS': return `spent outputs: ${Array.isArray(e.outputs) ? e.outputs.map((o: { txHash?: string; vout?: number }) => `${o.txHash}:${o.vout}`).join(', ') : ''}`;
    case 'UNKNOWN_TRANSACTIONS': return `unknown transactions: ${Array.isArray(e.transactions) ? e.transactions.join(', ') : ''}`;
    default: return JSON.stringify(e);
  }
}

/**
 * Recovery after a database restore (docs/deployment.md, "Transfers after a restore"): the senders
 * the chain check holds, their evidence, and the dry-run plan of `wcs recover transfers` for each
 * (MATCHED, UNMATCHED_ON_CHAIN, UNMATCHED_IN_DATABASE), read from the chain's node when the page is
 * opened. Read only: applying and releasing stay CLI actions.
 */
export function registerRecoveryPages(app: express.Express, kit: ConsoleKit): void {
  kit.get(app, '/recovery', async (_req, res, s) => {
    const holds = await listHolds(kit.sequelize, { open: true });
    const reader = new TransferRecovery(kit.sequelize, kit.resolve<AdapterRegistry>(TOKENS.AdapterRegistry), kit.deps.config.deposits.endpoints);
    const chains = (['test', 'live'] as const).flatMap((env) => kit.storage.catalogue.chains(env));
    const plans: Array<{ hold: SenderHold; plan: PlanJson | null; error: string | null }> = [];
    for (const hold of holds) {
      const chain = chains.find((c) => c.id === hold.chainId);
      try {
        if (!chain) throw new Error(`chain ${hold.chainCode} is not in the active catalogue`);
        plans.push({ hold, plan: planJson(await reader.planOne(hold, chain)), error: null });
      } catch (e) {
        plans.push({ hold, plan: null, error: `${e instanceof Error ? `${e.name === 'Error' ? '' : `${e.name}: `}${e.message}` : String(e)}` });
      }
    }
    const section = ({ hold, plan, error }: (typeof plans)[number]) => html`<h2>${hold.chainCode} (${hold.environment}) ${hold.address}</h2>
      <dl class="kv"><dt>Held</dt><dd>${formatLocalDateTime(hold.heldAt)}${hold.alertId ? html` (<a href="/alerts">alert #${hold.alertId}</a>)` : ''}</dd>
        <dt>Found</dt><dd>${hold.summary}</dd><dt>Evidence</dt><dd>${evidenceText(hold.evidence)}</dd>
        ${plan ? html`<dt>Read</dt><dd>${plan.window.kind === 'blocks' ? `blocks ${plan.window.from} to ${plan.window.to}` : `the address history from ${plan.window.cursor ?? 'its first transaction'} (${plan.window.pages} pages)`}</dd>` : ''}</dl>
      ${error !== null ? html`<p class="error">The plan could not be read: ${error}</p>` : ''}
      ${plan ? html`
      <h3>Matched (${plan.matched.length}): the chain's transaction becomes the order's</h3>
      <table><thead><tr><th>Transfer</th><th>Kind</th><th>Order</th><th>Amount</th><th>To</th><th>Transaction on chain</th><th>Block</th><th>Sequence</th></tr></thead><tbody>
      ${plan.matched.length === 0 ? html`<tr><td colspan="8">None.</td></tr>` : plan.matched.map((m) => html`<tr><td>${m.transferId}</td><td>${m.kind}</td>
        <td>${m.withdrawalId ? html`<a href="/withdrawals/${m.withdrawalId}">${m.withdrawalId}</a> ${m.appOrderNo ?? ''}` : ''}</td><td>${m.amount} ${m.token}</td><td>${m.toAddress}</td>
        <td>${m.txHash}</td><td>${m.blockHeight}</td><td>${m.sequence ?? ''}</td></tr>`)}
      </tbody></table>
      <h3>Unmatched on chain (${plan.unmatchedOnChain.length}): paid, with no order in the restored database</h3>
      <table><thead><tr><th>Transaction</th><th>Block</th><th>Paid</th><th>What to do</th></tr></thead><tbody>
      ${plan.unmatchedOnChain.length === 0 ? html`<tr><td colspan="4">None.</td></tr>` : plan.unmatchedOnChain.map((t) => html`<tr class="error"><td>${t.txHash}</td><td>${t.blockHeight}</td>
        <td>${t.payments.map((x) => html`${x.amount} ${x.token} to ${x.toAddress}${x.memo ? ` (memo ${x.memo})` : ''}<br>`)}</td><td>${t.resubmit}</td></tr>`)}
      </tbody></table>
      <h3>Unmatched in the database (${plan.unmatchedInDatabase.length}): not on chain, signed normally once the sender is released</h3>
      <table><thead><tr><th>Transfer</th><th>Kind</th><th>Order</th><th>Amount</th><th>To</th><th>Created</th></tr></thead><tbody>
      ${plan.unmatchedInDatabase.length === 0 ? html`<tr><td colspan="6">None.</td></tr>` : plan.unmatchedInDatabase.map((i) => html`<tr><td>${i.transferId}</td><td>${i.kind}</td>
        <td>${i.withdrawalId ? html`<a href="/withdrawals/${i.withdrawalId}">${i.withdrawalId}</a> ${i.appOrderNo ?? ''}` : ''}</td><td>${i.amount} ${i.token}</td><td>${i.toAddress}</td><td>${i.createdTime}</td></tr>`)}
      </tbody></table>
      ${plan.notReached.length > 0 ? html`<p class="error">The read did not reach ${plan.notReached.join(', ')} of the hold's evidence: the plan is incomplete.</p>` : ''}` : ''}`;
    kit.render(res, s, 'Recovery', html`<p>Senders the chain check before signing holds: the chain holds transactions from them that the database does not know (after a restore).
      Nothing is signed for a held sender. For each, the plan of <code>wcs recover transfers</code>, read from the chain's node now; this page changes nothing.</p>
      <p>Applying the plan and releasing a sender are command-line actions (audited): <code>wcs recover transfers --apply --release</code>
      (<code>--accept-unmatched</code> once every payment unmatched on chain has been dealt with). See docs/deployment.md, "Transfers after a restore".</p>
      ${plans.length === 0 ? html`<p class="ok">No sender is held.</p>` : plans.map(section)}`);
  });
}
