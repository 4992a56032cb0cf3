import type express from 'express';
import type { Response } from 'express';
import { QueryTypes } from 'sequelize';
import { isWcsError } from '@wcs/core';
import { itemDetail } from '../../collection/item-view';
import { CollectCommandError, appOf, chainOf, listPolicies, setPolicy, tokenOf } from '../../collection/operator';
import { collectionStatus, listItems, retryItem, retryRefusal } from '../../collection/operator-items';
import { POLICY_FIELDS, formFromPolicy, formProblems, formWords, policyInputFromForm, type PolicyFieldName } from '../../collection/policy-form-view';
import { POLICY_DEFAULTS, PolicyInputError, policyView } from '../../collection/policy-input';
import { collectRecord } from '../../collection/collect-events';
import { html, type Html } from '../html';
import { field, idOf, q, type ConsoleKit, type Signed } from '../kit';

const APPS_PER_PAGE = 10;
const ITEMS_PER_PAGE = 50;
const ITEM_STATUSES = ['PLANNED', 'TOPPING_UP', 'FUNDED', 'SWEEPING', 'SUCCESS', 'FAILED'] as const;
const STAGES = ['HOT_GATHER', 'COLD_TRANSFER'] as const;

/** A WcsError of the application/chain/token lookups as an HTTP status: no such application 404, a bad chain or token 400. */
const lookupStatus = (name: string) => (name === 'APPLICATION_NOT_FOUND' ? 404 : 400);

/**
 * Collection: policies per application and token (with the form that changes one through
 * setPolicy, the function `wcs collect policy set` calls), the status per token, the items list
 * and an item's page with Retry (retryItem, as `wcs collect retry`), and cold transfers (items
 * of stage COLD_TRANSFER; the CLI offers no decision on them, so neither does the console).
 */
export function registerCollectionPages(app: express.Express, kit: ConsoleKit): void {
  kit.get(app, '/collection', async (req, res, s) => {
    const rawApp = q(req, 'app');
    const appId = idOf(rawApp);
    if (rawApp !== null && appId === null) {
      kit.refuse(res, s, 400, 'The application must be a positive whole number (an application id).');
      return;
    }
    const after = idOf(q(req, 'after'));
    const apps = await kit.sequelize.query<{ id: number; name: string; environment: string; settlement_mode: string; status: string }>(
      `SELECT id, name, environment, settlement_mode, status FROM applications WHERE ($1::int IS NULL OR id = $1) AND ($2::int IS NULL OR id > $2) ORDER BY id LIMIT $3`,
      { bind: [appId, after, APPS_PER_PAGE + 1], type: QueryTypes.SELECT },
    );
    const page = apps.slice(0, APPS_PER_PAGE);
    const sections: Html[] = [];
    for (const a of page) {
      const policies = await listPolicies(kit.sequelize, a.id);
      const status = await collectionStatus(kit.sequelize, a.id);
      sections.push(html`<section id="app-${a.id}"><h2>Application ${a.id}: ${a.name} <span class="muted">(${a.environment}, ${a.status})</span></h2>
        <p>Settlement mode: <b>${a.settlement_mode}</b> ${a.settlement_mode === 'PASS_THROUGH' ? '(deposits settle once swept to the MERCHANT address)' : '(deposits settle at confirmation; sweeps gather into the hot wallet)'}.
        Set with <code>wcs collect settlement</code> or on the application's page.</p>
        <table><thead><tr><th>Token</th><th>Collect</th><th>Threshold</th><th>Max fee %</th><th>Native value</th><th>On confirmed</th><th>Schedule (s)</th><th>Max wait (s)</th>
          <th>Hot low / target / high</th><th>Last run</th><th>Updated</th><th></th></tr></thead><tbody>
        ${policies.length === 0 ? html`<tr><td colspan="12">No collection policy: nothing of this application is collected.</td></tr>` : policies.map((p) => html`<tr>
          <td>${p.chainCode} ${p.token} <span class="muted">#${p.chainTokenId}</span></td><td>${p.enabled ? 'enabled' : html`<b>disabled</b>`}</td><td>${p.threshold}</td><td>${p.maxFeePercent}</td>
          <td>${p.nativeValue ?? '-'}</td><td>${String(p.onConfirmed)}</td><td>${p.scheduleSeconds ?? 'off'}</td><td>${p.maxWaitSeconds ?? 'off'}</td>
          <td>${p.hotLow ?? '-'} / ${p.hotTarget ?? '-'} / ${p.hotHigh ?? '-'}</td><td>${p.lastRunTime ?? ''}</td><td>${p.updateTime ?? ''}</td>
          <td><a href="${policyHref(a.id, p.chainCode, String(p.chainTokenId))}">${kit.may(s, 'collection.policies.write') ? 'Change' : 'View'}</a></td></tr>`)}
        </tbody></table>
        ${status.tokens.length === 0 ? '' : html`<h3>Status</h3><table><thead><tr><th>Token</th><th>Policy</th><th>Open items</th><th>Failed</th><th>Waiting</th><th>Skipped / waiting addresses</th><th>Fee wallet</th></tr></thead><tbody>
        ${status.tokens.map((t) => html`<tr><td>${t.chainCode} ${t.token}</td><td>${t.policy}</td>
          <td>${Object.entries(t.open).filter(([, n]) => n > 0).map(([k, n]) => `${n} ${k}`).join(', ') || 'none'}</td>
          <td>${t.failed > 0 ? html`<a href="/collection/items?${new URLSearchParams({ app: String(a.id), token: String(t.chainTokenId), status: 'FAILED' }).toString()}">${t.failed}</a>` : '0'}</td>
          <td>${t.waiting.map((w) => html`${w.items}: ${w.reason}<br>`)}</td>
          <td>${t.skippedTotal}${t.skipped.slice(0, 3).map((k) => html`<br><span class="muted">${k.kind === 'WAIT' ? `waiting since ${k.sinceTime ?? ''}: ` : ''}${k.address} (${k.amount} ${t.token}): ${k.reason}</span>`)}</td>
          <td>${t.feeWallet ? `${t.feeWallet.address} ${t.feeWallet.balance === null ? '(not read)' : `${t.feeWallet.balance} ${t.feeWallet.symbol}`}` : '-'}</td></tr>`)}
        </tbody></table>`}
        ${status.alerts.length === 0 ? '' : html`<h3>Open collection alerts</h3><ul>${status.alerts.map((x) => html`<li class="error">${x.kind}, ${x.createdTime}: ${x.message} <a href="/alerts">Alerts</a></li>`)}</ul>`}
        <p><a href="/collection/items?${new URLSearchParams({ app: String(a.id) }).toString()}">Items</a> · <a href="/collection/items?${new URLSearchParams({ app: String(a.id), stage: 'COLD_TRANSFER' }).toString()}">Cold transfers</a>
        · <a href="/wallets?${new URLSearchParams({ app: String(a.id) }).toString()}">Wallets</a></p></section>`);
    }
    const next = apps.length > APPS_PER_PAGE ? html`<p class="pager"><a href="/collection?${new URLSearchParams({ after: String(page[page.length - 1]!.id) }).toString()}">Next applications</a></p>` : '';
    kit.render(res, s, 'Collection', html`<p>Collection policies per application and token, what is under way, and the items.
      <a href="/collection/items">All items</a> · <a href="/collection/items?status=FAILED">Failed items</a> · <a href="/collection/items?stage=COLD_TRANSFER">Cold transfers</a></p>
      <form method="get" action="/collection" class="filters"><label>Application id <input name="app" value="${rawApp ?? ''}" inputmode="numeric"></label><button type="submit">Show</button>
      ${appId !== null || after !== null ? html`<a href="/collection">All applications</a>` : ''}</form>
      <form method="get" action="/collection/policy" class="filters"><b>${kit.may(s, 'collection.policies.write') ? 'Set a policy for' : 'Look up a policy'}:</b>
        <label>Application id <input name="app" inputmode="numeric" required></label><label>Chain <input name="chain" required size="6"></label>
        <label>Token (symbol or id) <input name="token" required size="8"></label><button type="submit">Open</button></form>
      ${page.length === 0 ? html`<p>No ${appId !== null ? html`application ${appId}` : 'applications'}.</p>` : sections}${next}`);
  });

  /** The policy page: the form (read only for roles that may not change it). */
  const policyPage = async (res: Response, s: Signed, o: { app: string; chain: string; token: string; values?: Record<string, string>; problems?: string[]; result?: Html; status?: number }) => {
    const appId = idOf(o.app);
    if (appId === null) {
      kit.refuse(res, s, 400, 'The application must be a positive whole number (an application id).');
      return;
    }
    let target;
    try {
      const a = await appOf(kit.sequelize, appId);
      const chain = chainOf(kit.storage.catalogue, a, o.chain);
      target = { a, chain, token: tokenOf(chain, o.token) };
    } catch (e) {
      if (isWcsError(e)) {
        kit.refuse(res, s, lookupStatus(e.errorName), e.message);
        return;
      }
      throw e;
    }
    const { a, chain, token } = target;
    const [current] = await listPolicies(kit.sequelize, a.id, token.id);
    const native = token.contract === null;
    const values = o.values ?? formFromPolicy(current ?? policyView(POLICY_DEFAULTS, token.decimals));
    const canWrite = kit.may(s, 'collection.policies.write');
    const input = (name: PolicyFieldName, label: string) => {
      if (name === 'enabled' || name === 'onConfirmed') {
        const v = values[name] ?? '';
        return html`<label for="${name}">${label}</label><select id="${name}" name="${name}" ${canWrite ? '' : html`disabled`}>
          <option value="true" ${v === 'true' ? html`selected` : ''}>yes</option><option value="false" ${v === 'false' ? html`selected` : ''}>no</option></select>`;
      }
      if (name === 'nativeValue' && native) return html``;
      return html`<label for="${name}">${label}</label><input id="${name}" name="${name}" value="${values[name] ?? ''}" ${canWrite ? '' : html`readonly`}>`;
    };
    kit.render(res, s, `Collection policy: application ${a.id}, ${chain.code} ${token.symbol}`, html`${o.result ?? ''}
      ${o.problems && o.problems.length > 0 ? html`<div class="error" role="alert"><p>Nothing was changed:</p><ul>${o.problems.map((p) => html`<li>${p}</li>`)}</ul></div>` : ''}
      <p>${current ? html`Last changed ${current.updateTime ?? ''}${current.lastRunTime ? html`; last planning pass ${current.lastRunTime}` : ''}.` : html`<b>No policy yet</b>: ${token.symbol} of application ${a.id} is not collected. The form shows the defaults of a new policy.`}
        Amounts are in ${token.symbol} (${token.decimals} decimals). Application ${a.id} settles ${a.settlement_mode === 'PASS_THROUGH' ? 'PASS_THROUGH (once swept to its MERCHANT address)' : 'ON_CONFIRM'}.
        The same change as <code>wcs collect policy set --app ${a.id} --chain ${chain.code} --token ${token.symbol}</code>; every change is in the <a href="/audit?action=collect.policy.set">audit log</a>.</p>
      <form method="post" action="/collection/policy" class="card">${kit.csrfField(s)}
        <input type="hidden" name="app" value="${String(a.id)}"><input type="hidden" name="chain" value="${chain.code}"><input type="hidden" name="token" value="${String(token.id)}">
        ${POLICY_FIELDS.map((f) => input(f.name, f.label))}
        ${canWrite ? html`<button type="submit">${current ? 'Save changes' : 'Create policy'}</button>` : html`<p class="muted">Your role (${s.session.operator.role}) may read this policy; operators change it.</p>`}
      </form><p><a href="/collection?${new URLSearchParams({ app: String(a.id) }).toString()}">Back to application ${a.id}'s collection</a></p>`, o.status ?? 200);
  };

  kit.get(app, '/collection/policy', async (req, res, s) => {
    await policyPage(res, s, { app: q(req, 'app') ?? '', chain: q(req, 'chain') ?? '', token: q(req, 'token') ?? '' });
  });

  kit.post(app, '/collection/policy', 'collection.policies.write', 'change collection policies', async (req, res, s) => {
    const appId = idOf(field(req, 'app'));
    if (appId === null) {
      kit.refuse(res, s, 400, 'The application must be a positive whole number (an application id).');
      return;
    }
    const chain = field(req, 'chain');
    const token = field(req, 'token');
    const values = Object.fromEntries(POLICY_FIELDS.map((f) => [f.name, field(req, f.name)])) as Record<PolicyFieldName, string>;
    try {
      const a = await appOf(kit.sequelize, appId);
      const t = tokenOf(chainOf(kit.storage.catalogue, a, chain), token);
      const r = await setPolicy(kit.sequelize, kit.storage.catalogue, kit.actor(s, req), { app: appId, chain, token, ...policyInputFromForm(values, t.contract === null) });
      const v = r.view;
      const result = html`<p class="ok" role="status">${v.created ? 'Policy created.' : v.changed.length > 0 ? `Saved: changed ${v.changed.join(', ')}.` : 'Nothing changed (the policy already held these values).'}</p>
        ${v.notes.length > 0 ? html`<ul>${v.notes.map((n) => html`<li>${formWords(n)}</li>`)}</ul>` : ''}`;
      await policyPage(res, s, { app: String(appId), chain, token, result });
    } catch (e) {
      if (e instanceof PolicyInputError) {
        await policyPage(res, s, { app: String(appId), chain, token, values, problems: formProblems(e), status: 400 });
        return;
      }
      if (isWcsError(e)) {
        kit.refuse(res, s, lookupStatus(e.errorName), e.message);
        return;
      }
      throw e;
    }
  });

  kit.get(app, '/collection/items', async (req, res, s) => {
    const f = {
      app: q(req, 'app'), chain: q(req, 'chain'), token: q(req, 'token'), status: q(req, 'status'), stage: q(req, 'stage'), before: q(req, 'before'),
    };
    const appId = idOf(f.app);
    const before = idOf(f.before);
    const bad = (f.app !== null && appId === null) ? 'The application must be a positive whole number.'
      : (f.before !== null && before === null) ? 'before must be an item id.'
        : (f.status !== null && !(ITEM_STATUSES as readonly string[]).includes(f.status)) ? `Status must be one of ${ITEM_STATUSES.join(', ')}.`
          : (f.stage !== null && !(STAGES as readonly string[]).includes(f.stage)) ? `Stage must be one of ${STAGES.join(', ')}.`
            : (f.chain !== null && !/^[A-Za-z0-9]{1,16}$/.test(f.chain)) ? 'Chain must be a chain code such as ETH.'
              : (f.token !== null && !/^[A-Za-z0-9._-]{1,32}$/.test(f.token)) ? 'Token must be a token symbol or a chainTokenId.' : null;
    if (bad !== null) {
      kit.refuse(res, s, 400, bad);
      return;
    }
    const rows = await listItems(kit.sequelize, { app: appId, chain: f.chain, token: f.token, status: f.status, stage: f.stage, before, limit: ITEMS_PER_PAGE });
    const keep: Record<string, string> = {};
    for (const k of ['app', 'chain', 'token', 'status', 'stage'] as const) if (f[k] !== null) keep[k] = f[k]!;
    const next = rows.length === ITEMS_PER_PAGE ? html`<p class="pager"><a href="/collection/items?${new URLSearchParams({ ...keep, before: rows[rows.length - 1]!.id }).toString()}">Older items</a></p>` : '';
    const codes = [...new Set((['test', 'live'] as const).flatMap((env) => kit.storage.catalogue.chains(env).map((c) => c.code)))].sort();
    const select = (name: string, choices: readonly string[], value: string | null) => html`<select name="${name}"><option value="">any</option>${choices.map((c) => html`<option ${c === value ? html`selected` : ''}>${c}</option>`)}</select>`;
    const cold = f.stage === 'COLD_TRANSFER';
    kit.render(res, s, cold ? 'Cold transfers' : 'Collection items', html`<p>${cold
      ? html`Transfers from a hot wallet to its application's COLD address, made when the hot wallet is above its high watermark. The CLI offers no decision on them:
          a failed one is not retried, the watermark check makes a new one while the hot wallet stays above its high watermark.`
      : html`Newest first. A FAILED sweep (HOT_GATHER) can be retried by an approver from its page.`} <a href="/collection">Policies</a></p>
      <form method="get" action="/collection/items" class="filters">
        <label>Application id <input name="app" value="${f.app ?? ''}" inputmode="numeric" size="6"></label>
        <label>Chain ${select('chain', codes, f.chain)}</label>
        <label>Token (symbol or id) <input name="token" value="${f.token ?? ''}" size="8"></label>
        <label>Status ${select('status', ITEM_STATUSES, f.status)}</label>
        <label>Stage ${select('stage', STAGES, f.stage)}</label>
        <button type="submit">Filter</button></form>
      <table><thead><tr><th>#</th><th>Created</th><th>App</th><th>Token</th><th>Stage, status</th><th>Amount</th><th>From → to</th><th>Tx</th><th>Failure / waiting</th></tr></thead><tbody>
      ${rows.length === 0 ? html`<tr><td colspan="9">No items.</td></tr>` : rows.map((r) => {
        const e = collectRecord(r);
        return html`<tr><td><a href="/collection/items/${r.id}">${r.id}</a></td><td>${e.createdTime}</td><td>${r.application_id}</td><td>${r.symbol} <span class="muted">#${r.chain_token_id}</span></td>
          <td>${r.stage}<br>${r.status === 'FAILED' ? html`<b class="error">FAILED</b>` : r.status}${r.retry_times > 0 ? html`<br><span class="muted">retries ${r.retry_times}</span>` : ''}</td><td>${e.amount}</td><td>${r.from_address}<br>→ ${r.to_address || '(not chosen yet)'}</td>
          <td>${r.tx_hash ? html`<span title="${r.tx_hash}">${shortHash(r.tx_hash)}</span>` : ''}</td><td>${r.status === 'FAILED' ? `${r.failure_code ?? ''}: ${r.failure_message ?? ''}` : r.waiting_reason ?? ''}</td></tr>`;
      })}
      </tbody></table>${next}`);
  });

  kit.get(app, '/collection/items/:id', async (req, res, s) => {
    const id = idOf(String(req.params.id));
    const d = id === null ? null : await itemDetail(kit.sequelize, id);
    if (d === null) {
      kit.refuse(res, s, 404, 'No such collection item.');
      return;
    }
    const e = d.event as Record<string, unknown> & { gasFunding: Record<string, unknown> | null; relatedRechargeIds: number[] };
    const refusal = retryRefusal(d.row.id, d.row);
    const kv = (pairs: Array<[string, unknown]>) => html`<dl class="kv">${pairs.map(([k, v]) => html`<dt>${k}</dt><dd>${v === null || v === undefined || v === '' ? '-' : String(v)}</dd>`)}</dl>`;
    kit.render(res, s, `Collection item ${d.row.id}`, html`
      <p><a href="/collection/items?${new URLSearchParams({ app: String(d.row.application_id) }).toString()}">Items of application ${d.row.application_id}</a></p>
      ${d.row.stage === 'COLD_TRANSFER' ? html`<p>A cold transfer: from the hot wallet to the application's COLD address, made when the hot wallet was above its high watermark.
        The CLI offers no decision on it: cold transfers are not retried; while the hot wallet stays above its high watermark the watermark check makes a new one.</p>` : ''}
      ${d.row.status === 'FAILED' ? html`<p class="error" role="alert">FAILED: ${d.row.failure_code ?? ''}: ${d.row.failure_message ?? ''}</p>` : ''}
      ${refusal === null ? (kit.may(s, 'collection.decide')
        ? html`<p>${kit.button(s, `/collection/items/${d.row.id}/retry`, 'Retry')} Plans the sweep again (PLANNED, retryTimes + 1; a gas top-up that succeeded is kept), as <code>wcs collect retry --item ${d.row.id}</code>.</p>`
        : html`<p class="muted">An approver can retry this item.</p>`) : html`<p class="muted">No retry: ${refusal.replace(/^item \d+ /, 'this item ')}.</p>`}
      <h2>Item (the collect event)</h2>
      ${kv([['Item id', e.itemId], ['Request id', `${String(e.requestId)} (trigger ${d.trigger})`], ['Application', e.applicationId], ['Chain', `${d.chainCode} (${d.environment}, chainId ${String(e.chainId)})`],
        ['Token', `${d.row.symbol} (chainTokenId ${String(e.chainTokenId)})`], ['Stage', e.stage], ['Status', e.status], ['Waiting', d.row.waiting_reason], ['Amount', `${String(e.amount)} ${d.row.symbol}`],
        ['From', `${String(e.fromAddress)} (address id ${String(e.fromAddressId)})`], ['To', e.toAddress], ['Tx hash', e.txHash], ['Gas fee', e.gasFee === null ? null : `${String(e.gasFee)} ${String(e.gasFeeCurrency)}`],
        ['Retries', e.retryTimes], ['Failure code', e.failureReasonCode], ['Failure message', e.failureReasonMessage], ['Created', e.createdTime], ['Finished', e.finishedTime]])}
      <h2>Gas funding</h2>
      ${e.gasFunding === null ? html`<p class="muted">None (no gas top-up: a native coin sweep, or not funded yet).</p>`
        : kv([['Top-up transfer', e.gasFunding.id], ['Status', e.gasFunding.status], ['Tx hash', e.gasFunding.txHash], ['Fee wallet', e.gasFunding.feeAddress], ['User address', e.gasFunding.userAddress],
          ['Amount', `${String(e.gasFunding.amount)} ${d.row.native_symbol}`], ['Failure', e.gasFunding.failureReasonMessage]])}
      <h2>Related recharges</h2>
      ${d.recharges.length === 0 ? html`<p class="muted">None.</p>` : html`<table><thead><tr><th>Recharge</th><th>Status</th><th>Amount</th><th>User</th><th>Address</th><th>Tx hash</th></tr></thead><tbody>
        ${d.recharges.map((r) => html`<tr><td><a href="/deposits/${r.id}">${r.id}</a></td><td>${r.txStatus}</td><td>${r.amount}</td><td>${r.externalUserId}</td><td>${r.address}</td><td>${r.txHash}</td></tr>`)}</tbody></table>`}
      <h2>Transfers</h2>
      ${d.transfers.length === 0 ? html`<p class="muted">None yet${d.row.retry_times > 0 ? ' (a retry clears the failed transfer; the audit log keeps its id)' : ''}.</p>` : d.transfers.map((t) => html`<h3>${t.role}: transfer ${t.id}</h3>
        ${kv([['Status', t.status], ['Tx hash', t.txHash], ['From', t.fromAddress], ['To', `${t.toAddress}${t.memo ? ` memo ${t.memo}` : ''}`], ['Amount', t.amount], ['Sent', t.sentAmount], ['Fee', t.fee],
          ['Confirmations', t.confirmations], ['Failure', t.failure], ['Created', t.createdTime], ['Finished', t.finishedTime]])}
        ${t.attempts.length === 0 ? '' : html`<table><thead><tr><th>Attempt</th><th>Tx hash</th><th>Most fee</th><th>Signed</th><th>Sent</th></tr></thead><tbody>
          ${t.attempts.map((x) => html`<tr><td>${x.attempt}</td><td>${x.txHash}</td><td>${x.maxFee}</td><td>${x.createdTime ?? ''}</td><td>${x.sentTime ?? ''}</td></tr>`)}</tbody></table>`}`)}
      <h2>Operators' changes</h2>
      ${d.changes.length === 0 ? html`<p class="muted">None on record.</p>` : html`<ul>${d.changes.map((c) => html`<li>${c.time}: ${c.action} by ${c.actor} (${c.role}, ${c.channel}) <a href="/audit?${new URLSearchParams({ action: c.action }).toString()}">audit log</a></li>`)}</ul>`}`);
  });

  kit.post(app, '/collection/items/:id/retry', 'collection.decide', 'retry collection items', async (req, res, s) => {
    const id = idOf(String(req.params.id));
    if (id === null) {
      kit.refuse(res, s, 404, 'No such collection item.');
      return;
    }
    try {
      await retryItem(kit.sequelize, kit.actor(s, req), id);
    } catch (e) {
      if (e instanceof CollectCommandError) {
        kit.refuse(res, s, e.name === 'COLLECTION_ITEM_NOT_FOUND' ? 404 : 409, e.message);
        return;
      }
      throw e;
    }
    res.redirect(303, `/collection/items/${id}`);
  });
}

/** A long hash as its head and tail (the list; the item's page shows it whole). */
function shortHash(h: string): string {
  return h.length > 24 ? `${h.slice(0, 12)}…${h.slice(-8)}` : h;
}

function policyHref(app: number, chain: string, token: string): string {
  return `/collection/policy?${new URLSearchParams({ app: String(app), chain, token }).toString()}`;
}
