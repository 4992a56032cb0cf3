import type express from 'express';
import type { Request, Response } from 'express';
import { QueryTypes } from 'sequelize';
import { formatLocalDateTime, formatUnits, isWcsError, type AdapterRegistry } from '@wcs/core';
import { TOKENS } from '../../container';
import type { RecordCallbackTask } from '../../deposits/recharge-service';
import { fourEyesFor, HOLDING_RULE_ACTION, holdingRuleTarget, lastHoldingRuleChange } from '../../withdrawals/four-eyes';
import { decideApproval, type DecisionRefusal } from '../../withdrawals/payout-intake';
import { RiskRules } from '../../withdrawals/risk-rules';
import { WITHDRAW_STATUSES } from '../../withdrawals/withdraw-service';
import { html, type Html } from '../html';
import { field, idOf, q, type ConsoleKit, type Signed } from '../kit';
import { callbackTaskTable, shortHash } from './deposits';

const WITHDRAW_PAGE = 50;
const APPROVALS = ['NONE', 'PENDING', 'APPROVED', 'REJECTED'] as const;
const CHAIN_CODE_RE = /^[A-Za-z0-9_-]{1,32}$/;
/** A decision's note: kept in the audit entry, and on reject in failReason (256 characters with its prefix). */
const NOTE_MAX = 200;

interface Row {
  id: string; application_id: number; app_order_no: string; chain_code: string; chain_token_id: number; symbol: string; decimals: number; native_decimals: number;
  amount: string; fee: string; fee_final: boolean; from_address: string; to_address: string; memo: string | null; tx_hash: string | null; block_height: string | null;
  confirmations: number; status: string; approval: string; fail_reason: string | null; risk_level: string | null; risk_reason: string | null;
  callback_url: string | null; remark: string | null; callback_task_id: string | null; created_at: Date; updated_at: Date; finished_at: Date | null;
  transfer_id: string | null; transfer_status: string | null; transfer_tx_hash: string | null; transfer_fail_code: string | null; transfer_fail_reason: string | null;
  approval_threshold: string | null;
}

const SELECT = `SELECT w.id::text AS id, w.application_id, w.app_order_no, c.code AS chain_code, w.chain_token_id, t.symbol, t.decimals, c.decimals AS native_decimals,
  w.amount::text AS amount, w.fee::text AS fee, w.fee_final, w.from_address, w.to_address, w.memo, w.tx_hash, w.block_height::text AS block_height, w.confirmations,
  w.status, w.approval, w.fail_reason, w.risk_level, w.risk_reason, w.callback_url, w.remark,
  (SELECT max(n.task_id) FROM withdraw_notices n WHERE n.withdrawal_id = w.id)::text AS callback_task_id, w.created_at, w.updated_at, w.finished_at,
  w.transfer_id::text AS transfer_id, x.status AS transfer_status, x.tx_hash AS transfer_tx_hash, x.fail_code AS transfer_fail_code, x.fail_reason AS transfer_fail_reason,
  l.approval_threshold::text AS approval_threshold
  FROM withdrawals w JOIN chains c ON c.id = w.chain_id JOIN chain_tokens t ON t.id = w.chain_token_id
  LEFT JOIN transfers x ON x.id = w.transfer_id
  LEFT JOIN withdraw_limits l ON l.application_id = w.application_id AND l.chain_token_id = w.chain_token_id`;

/** Bad risk-rule form input found by the page itself (a 400 refusal). */
class RuleInputError extends Error {}

const amountOf = (r: Row) => formatUnits(BigInt(r.amount), r.decimals);
const held = (r: Row) => r.approval === 'PENDING' && r.status === 'PROCESSING';

/** Why the risk rules gave the order its level, in words. */
function riskWhy(r: Row): string {
  switch (r.risk_reason) {
    case null: return r.risk_level === null ? 'not assessed yet' : 'within every rule';
    case 'AMOUNT_OVER_APPROVAL_THRESHOLD':
      return `held for an approver: the amount ${amountOf(r)} ${r.symbol} is above the application's approval threshold for ${r.symbol}`
        + (r.approval_threshold === null ? ' (since removed)' : ` (now ${formatUnits(BigInt(r.approval_threshold), r.decimals)} ${r.symbol})`);
    case 'DESTINATION_BLOCKED': return "failed: the destination is on the application's blocklist";
    case 'DESTINATION_NOT_ALLOWED': return 'failed: the application pays out only to allowlisted destinations';
    case 'PER_ORDER_LIMIT_EXCEEDED': return 'failed: above the per-order limit';
    case 'DAILY_LIMIT_EXCEEDED': return 'failed: above the daily limit';
    default: return r.risk_reason;
  }
}

/**
 * Withdrawals: every application's orders (keyset paging by id), one order with its risk verdict,
 * transfer and callback tasks, approve or reject a held order (decideApproval, the same function
 * as `wcs withdraw approve|reject`, four eyes included), and the risk rules (RiskRules, as
 * `wcs withdraw limits|block|unblock|allow|disallow|allowlist-only|rules`).
 */
export function registerWithdrawalPages(app: express.Express, kit: ConsoleKit): void {
  const rules = () => new RiskRules(kit.sequelize, kit.storage.catalogue, kit.resolve<AdapterRegistry>(TOKENS.AdapterRegistry));

  kit.get(app, '/withdrawals', async (req, res, s) => {
    const rawApp = q(req, 'app');
    const chain = q(req, 'chain');
    const status = q(req, 'status');
    const approval = q(req, 'approval');
    const rawBefore = q(req, 'before');
    const applicationId = rawApp === null ? null : idOf(rawApp);
    const before = rawBefore === null ? null : idOf(rawBefore);
    if ((rawApp !== null && applicationId === null) || (rawBefore !== null && before === null)) return kit.refuse(res, s, 400, 'Application id and "before" must be positive whole numbers.');
    if (chain !== null && !CHAIN_CODE_RE.test(chain)) return kit.refuse(res, s, 400, 'Chain: a chain code such as ETH.');
    if (status !== null && !(WITHDRAW_STATUSES as readonly string[]).includes(status)) return kit.refuse(res, s, 400, `Status: one of ${WITHDRAW_STATUSES.join(', ')}.`);
    if (approval !== null && !(APPROVALS as readonly string[]).includes(approval)) return kit.refuse(res, s, 400, `Approval: one of ${APPROVALS.join(', ')}.`);
    const list = await kit.sequelize.query<Row>(
      `${SELECT} WHERE ($1::bigint IS NULL OR w.id < $1) AND ($2::int IS NULL OR w.application_id = $2) AND ($3::text IS NULL OR c.code = $3)
          AND ($4::text IS NULL OR w.status = $4) AND ($5::text IS NULL OR w.approval = $5)
        ORDER BY w.id DESC LIMIT $6`,
      { bind: [before, applicationId, chain, status, approval, WITHDRAW_PAGE], type: QueryTypes.SELECT },
    );
    const keep: Record<string, string> = { ...(rawApp ? { app: rawApp } : {}), ...(chain ? { chain } : {}), ...(status ? { status } : {}), ...(approval ? { approval } : {}) };
    const older = list.length === WITHDRAW_PAGE ? html`<a href="/withdrawals?${new URLSearchParams({ ...keep, before: list[list.length - 1]!.id }).toString()}">Older orders</a>` : '';
    const newest = before !== null ? html`<a href="/withdrawals?${new URLSearchParams(keep).toString()}">Newest</a>` : '';
    const select = (name: string, values: readonly string[], current: string | null) =>
      html`<select name="${name}"><option value="">any</option>${values.map((x) => html`<option${x === current ? html` selected` : ''}>${x}</option>`)}</select>`;
    kit.render(res, s, 'Withdrawals', html`<p>Withdrawal orders of every application, newest first. <a href="/withdrawals?approval=PENDING&amp;status=PROCESSING">Waiting for approval</a> · <a href="/withdrawals/rules">Risk rules</a></p>
      <form method="get" action="/withdrawals" class="filters">
        <label>Application id <input name="app" value="${rawApp ?? ''}" size="6" inputmode="numeric"></label>
        <label>Chain <input name="chain" value="${chain ?? ''}" size="8"></label>
        <label>Status ${select('status', WITHDRAW_STATUSES, status)}</label>
        <label>Approval ${select('approval', APPROVALS, approval)}</label>
        <button type="submit">Filter</button></form>
      <table><thead><tr><th>#</th><th>App</th><th>appOrderNo</th><th>Chain</th><th>Amount</th><th>To</th><th>Status</th><th>Approval</th><th>Risk</th><th>Transaction</th><th>Created</th></tr></thead><tbody>
      ${list.length === 0 ? html`<tr><td colspan="11">No withdrawal orders${before !== null ? ' older than these' : ''}.</td></tr>` : list.map((r) => html`<tr>
        <td><a href="/withdrawals/${r.id}">${r.id}</a></td><td>${r.application_id}</td><td>${r.app_order_no}</td><td>${r.chain_code}</td><td>${amountOf(r)} ${r.symbol}</td>
        <td>${shortHash(r.to_address)}${r.memo !== null ? html`<br><span class="muted">memo ${r.memo}</span>` : ''}</td><td>${r.status}</td><td>${r.approval}</td>
        <td>${r.risk_level ?? ''}${r.risk_reason ? html`<br><span class="muted">${r.risk_reason}</span>` : ''}</td><td>${r.tx_hash === null ? '' : shortHash(r.tx_hash)}</td><td>${formatLocalDateTime(r.created_at)}</td></tr>`)}
      </tbody></table><p class="pager">${newest}${older}</p>`);
  });

  // ---- risk rules (before /withdrawals/:id) ----

  kit.get(app, '/withdrawals/rules', async (req, res, s) => {
    const rawApp = q(req, 'app');
    const apps = await kit.storage.applications.list();
    const chooser = html`<form method="get" action="/withdrawals/rules" class="filters"><label>Application <select name="app">${apps.map((a) => html`<option value="${a.id}"${String(a.id) === rawApp ? html` selected` : ''}>${a.id} · ${a.name} (${a.environment})</option>`)}</select></label><button type="submit">Show</button></form>`;
    if (rawApp === null) {
      return kit.render(res, s, 'Withdrawal risk rules', html`<p>Per application: token limits and the approval threshold above which orders wait for an approver, destination block and allow lists, and the allowlist-only switch.</p>${apps.length === 0 ? html`<p>No applications yet.</p>` : chooser}`);
    }
    const applicationId = idOf(rawApp);
    const a = applicationId === null ? undefined : apps.find((x) => x.id === applicationId);
    if (!a) return kit.refuse(res, s, 404, 'APPLICATION_NOT_FOUND: no such application.');
    const view = await rules().show(a.id);
    const changes = await Promise.all(view.limits.map((l) => lastHoldingRuleChange(kit.sequelize, a.id, l.chainTokenId)));
    const canWrite = kit.may(s, 'withdrawals.rules.write');
    const chains = kit.storage.catalogue.chains(a.environment).filter((c) => a.chains.includes(c.code));
    const done = q(req, 'done');
    const form = (action: string, body: Html, cls = 'card') => html`<form method="post" action="${action}" class="${cls}">${kit.csrfField(s)}<input type="hidden" name="app" value="${a.id}">${body}</form>`;
    const none = html`<span class="muted">none</span>`;
    kit.render(res, s, `Withdrawal risk rules: application ${a.id}`, html`${done ? html`<p class="ok" role="status">Saved: ${done}.</p>` : ''}${chooser}
      <p>${a.name} (${a.environment}). Orders above a token's approval threshold wait (riskLevel HIGH, approval PENDING) for an approver, who must not be whoever last changed that token's limits (four eyes). <a href="/withdrawals?app=${a.id}">This application's withdrawals</a></p>
      <h2>Token limits</h2>
      <table><thead><tr><th>Chain</th><th>Token</th><th>Per order at most</th><th>Per UTC day at most</th><th>Approval above</th><th>Last changed by</th></tr></thead><tbody>
      ${view.limits.length === 0 ? html`<tr><td colspan="6">No limits: every order within the hot wallet's balance is paid at once.</td></tr>` : view.limits.map((l, i) => html`<tr><td>${l.chainCode}</td><td>${l.token} (${l.chainTokenId})</td>
        <td>${l.perOrderMax ?? none}</td><td>${l.dailyMax ?? none}</td><td>${l.approvalThreshold ?? none}</td>
        <td>${changes[i] ? html`${changes[i]!.actor} (${changes[i]!.actorRole}, ${changes[i]!.channel}) at ${formatLocalDateTime(changes[i]!.at)}` : none}</td></tr>`)}
      </tbody></table>
      ${canWrite ? html`<p class="muted">Setting a token's limits replaces all three: decimal amounts of the token; an empty field is no limit; all empty removes the token's limits.</p>` : ''}
      ${canWrite ? form('/withdrawals/rules/limits', html`<h3>Set a token's limits</h3>
        <label for="token">Token</label><select id="token" name="token">${chains.flatMap((c) => c.tokens.map((t) => html`<option value="${t.id}">${c.code} · ${t.symbol} (${t.id})</option>`))}</select>
        <label for="perOrder">Per order at most</label><input id="perOrder" name="perOrder" inputmode="decimal">
        <label for="daily">Per UTC day at most</label><input id="daily" name="daily" inputmode="decimal">
        <label for="approvalOver">Approval above</label><input id="approvalOver" name="approvalOver" inputmode="decimal">
        <button type="submit">Set limits</button>`) : ''}
      <h2>Destinations</h2>
      <div><p>Allowlist-only: <b>${view.allowlistOnly ? 'on' : 'off'}</b> ${view.allowlistOnly ? '(orders to destinations not on the allowlist fail with DESTINATION_NOT_ALLOWED)' : '(orders to any destination not on the blocklist may be paid)'}</p>
        ${canWrite ? form('/withdrawals/rules/allowlist-only', html`<input type="hidden" name="on" value="${view.allowlistOnly ? '0' : '1'}"><button type="submit">${view.allowlistOnly ? 'Turn allowlist-only off' : 'Turn allowlist-only on'}</button>`, 'inline') : ''}</div>
      <table><thead><tr><th>Chain</th><th>List</th><th>Address</th><th></th></tr></thead><tbody>
      ${view.addresses.length === 0 ? html`<tr><td colspan="4">No addresses on the block or allow list.</td></tr>` : view.addresses.map((x) => html`<tr><td>${x.chainCode}</td><td>${x.kind === 'BLOCK' ? 'blocklist' : 'allowlist'}</td><td>${x.address}</td>
        <td>${canWrite ? form('/withdrawals/rules/address', html`<input type="hidden" name="chain" value="${x.chainCode}"><input type="hidden" name="address" value="${x.address}"><input type="hidden" name="kind" value="${x.kind}"><input type="hidden" name="remove" value="1"><button type="submit">Remove</button>`, 'inline') : ''}</td></tr>`)}
      </tbody></table>
      ${canWrite ? html`<p class="muted">Addresses are kept in the chain's canonical form (as orders store them), however they are written.</p>` : ''}
      ${canWrite ? form('/withdrawals/rules/address', html`<h3>Add a destination</h3>
        <label for="chain">Chain</label><select id="chain" name="chain">${chains.map((c) => html`<option>${c.code}</option>`)}</select>
        <label for="address">Address</label><input id="address" name="address" required>
        <label for="kind">List</label><select id="kind" name="kind"><option value="BLOCK">blocklist</option><option value="ALLOW">allowlist</option></select>
        <button type="submit">Add</button>`) : html`<p class="muted">Your role (${s.session.operator.role}) may not change risk rules (operators do).</p>`}`);
  });

  /** A risk rule change: the application, then fn; a WcsError is a refusal page naming its code. */
  const ruleChange = (path: string, fn: (req: Request, applicationId: number, s: Signed) => Promise<string>) =>
    kit.post(app, path, 'withdrawals.rules.write', 'change withdrawal risk rules', async (req, res, s) => {
      const applicationId = idOf(field(req, 'app'));
      if (applicationId === null) return kit.refuse(res, s, 400, 'Application id: a positive whole number.');
      try {
        const done = await fn(req, applicationId, s);
        res.redirect(303, `/withdrawals/rules?${new URLSearchParams({ app: String(applicationId), done }).toString()}`);
      } catch (e) {
        if (isWcsError(e)) return kit.refuse(res, s, e.errorName === 'APPLICATION_NOT_FOUND' ? 404 : 400, `${e.errorName}: ${e.message}`);
        if (e instanceof RuleInputError) return kit.refuse(res, s, 400, e.message);
        throw e;
      }
    });

  ruleChange('/withdrawals/rules/limits', async (req, applicationId, s) => {
    const token = idOf(field(req, 'token'));
    if (token === null) throw new RuleInputError('Token: choose a token.');
    const amount = (name: string) => {
      const v = field(req, name).trim();
      return v === '' ? null : v;
    };
    const limits = { perOrderMax: amount('perOrder'), dailyMax: amount('daily'), approvalThreshold: amount('approvalOver') };
    await rules().setLimits(kit.actor(s, req), applicationId, token, limits);
    return `limits of token ${token}`;
  });

  ruleChange('/withdrawals/rules/address', async (req, applicationId, s) => {
    const kind = field(req, 'kind');
    if (kind !== 'BLOCK' && kind !== 'ALLOW') throw new RuleInputError('List: blocklist or allowlist.');
    const chain = field(req, 'chain').trim();
    const address = field(req, 'address').trim();
    if (!CHAIN_CODE_RE.test(chain)) throw new RuleInputError('Chain: a chain code such as ETH.');
    if (address === '' || address.length > 128) throw new RuleInputError('Address: 1 to 128 characters.');
    const remove = field(req, 'remove') === '1';
    const normalized = await rules().setAddress(kit.actor(s, req), applicationId, chain, address, kind, remove);
    return `${normalized} ${remove ? 'taken off' : 'put on'} the ${chain} ${kind === 'BLOCK' ? 'blocklist' : 'allowlist'}`;
  });

  ruleChange('/withdrawals/rules/allowlist-only', async (req, applicationId, s) => {
    const on = field(req, 'on');
    if (on !== '1' && on !== '0') throw new RuleInputError('Allowlist-only: on or off.');
    await rules().setAllowlistOnly(kit.actor(s, req), applicationId, on === '1');
    return `allowlist-only ${on === '1' ? 'on' : 'off'}`;
  });

  // ---- one order ----

  const load = async (id: number): Promise<Row | null> => {
    const [r] = await kit.sequelize.query<Row>(`${SELECT} WHERE w.id = $1`, { bind: [id], type: QueryTypes.SELECT });
    return r ?? null;
  };

  kit.get(app, '/withdrawals/:id', async (req, res, s) => {
    const id = idOf(String(req.params.id));
    const r = id === null ? null : await load(id);
    if (!r) return kit.refuse(res, s, 404, 'WITHDRAWAL_NOT_FOUND: no such withdrawal order.');
    const tasks = await kit.sequelize.query<{ task_id: string; state: string; status: string; retry_times: number; url: string; next_retry_time: Date | null; created_at: Date; updated_at: Date }>(
      `SELECT n.task_id::text AS task_id, n.status AS state, k.status, k.retry_times, k.url, k.next_retry_time, k.created_at, k.updated_at
         FROM withdraw_notices n JOIN callback_task_states k ON k.id = n.task_id WHERE n.withdrawal_id = $1 ORDER BY n.task_id`,
      { bind: [r.id], type: QueryTypes.SELECT },
    );
    const taskList: RecordCallbackTask[] = tasks.map((k) => ({
      taskId: Number(k.task_id), state: k.state, status: k.status, retryTimes: k.retry_times, url: k.url,
      nextRetryTime: formatLocalDateTime(k.next_retry_time), createTime: formatLocalDateTime(k.created_at)!, updateTime: formatLocalDateTime(k.updated_at)!,
    }));
    const change = r.risk_reason === 'AMOUNT_OVER_APPROVAL_THRESHOLD' ? await lastHoldingRuleChange(kit.sequelize, r.application_id, r.chain_token_id) : null;
    const decided = q(req, 'decided');
    const row = (k: string, v: unknown) => html`<dt>${k}</dt><dd>${v === null ? html`<span class="muted">null</span>` : v}</dd>`;
    const mayDecide = kit.may(s, 'withdrawals.decide');
    const me = s.session.operator.username;
    const approveRefused = fourEyesFor('APPROVE', me, change?.actor ?? null);
    let decision: Html | string = '';
    if (held(r)) {
      const noteField = (idp: string) => html`<label for="${idp}-note">Note (kept in the audit log${idp === 'reject' ? ' and the order\'s failReason' : ''}; at most ${NOTE_MAX} characters)</label><textarea id="${idp}-note" name="note" rows="2" maxlength="${NOTE_MAX}"></textarea>`;
      decision = !mayDecide
        ? html`<p class="muted">Held for an approver. Your role (${s.session.operator.role}) may not decide withdrawals (approvers do).</p>`
        : html`<h2>Decide</h2>
          ${approveRefused === null ? html`<p class="ok">You may approve or reject this withdrawal.</p>` : html`<p class="error" role="alert">You may not approve: ${approveRefused} (four eyes). You may reject it.</p>`}
          <div class="grid">
          ${approveRefused === null ? html`<form method="post" action="/withdrawals/${r.id}/approve" class="card">${kit.csrfField(s)}<h3>Approve</h3><p>The order is released to the payout worker, which signs and sends it.</p>${noteField('approve')}<button type="submit">Approve</button></form>` : ''}
          <form method="post" action="/withdrawals/${r.id}/reject" class="card">${kit.csrfField(s)}<h3>Reject</h3><p>The order ends FAILED (failReason "rejected by the operator: …") with a withdraw callback; nothing is sent.</p>${noteField('reject')}<button type="submit">Reject</button></form>
          </div>`;
    }
    const native = (v: string) => formatUnits(BigInt(v), r.native_decimals);
    kit.render(res, s, `Withdrawal ${r.id}`, html`${decided ? html`<p class="ok" role="status">Decision recorded: ${decided}.</p>` : ''}
      <p><a href="/withdrawals">All withdrawals</a> · <a href="/withdrawals?app=${r.application_id}">Application ${r.application_id}'s withdrawals</a> · <a href="/withdrawals/rules?app=${r.application_id}">Its risk rules</a></p>
      <dl class="kv">
        ${row('id', Number(r.id))}${row('applicationId', r.application_id)}${row('appOrderNo', r.app_order_no)}${row('chainCode', r.chain_code)}${row('chainTokenId', r.chain_token_id)}${row('token', r.symbol)}
        ${row('amount', amountOf(r))}${row('fee', `${native(r.fee)}${r.fee_final ? '' : ' (estimate until mined)'}`)}${row('fromAddress', r.from_address)}${row('toAddress', r.to_address)}${row('memo', r.memo)}
        ${row('txHash', r.tx_hash)}${row('blockHeight', r.block_height === null ? null : Number(r.block_height))}${row('confirmations', r.confirmations)}${row('status', r.status)}${row('failReason', r.fail_reason)}
        ${row('riskLevel', r.risk_level)}${row('riskReason', r.risk_reason)}${row('callbackTaskId', r.callback_task_id === null ? null : Number(r.callback_task_id))}
        ${row('createTime', formatLocalDateTime(r.created_at))}${row('updateTime', formatLocalDateTime(r.updated_at))}
        ${row('approval', r.approval)}${row('finished', formatLocalDateTime(r.finished_at))}${row('callbackUrl', r.callback_url)}${row('remark', r.remark)}
      </dl>
      <h2>Risk</h2>
      <p>${r.risk_level ?? 'not assessed'}: ${riskWhy(r)}.</p>
      ${r.risk_reason === 'AMOUNT_OVER_APPROVAL_THRESHOLD' ? html`<p>The rule that held it (${HOLDING_RULE_ACTION} on ${holdingRuleTarget(r.application_id, r.chain_token_id)}) was last changed by ${change ? html`<b>${change.actor}</b> (${change.actorRole}, via ${change.channel}) at ${formatLocalDateTime(change.at)}` : html`nobody on record`}. An approver other than whoever last changed it must approve (four eyes).
        <a href="/audit?action=${HOLDING_RULE_ACTION}">Rule changes in the audit log</a></p>` : ''}
      ${decision}
      <h2>Transfer</h2>
      ${r.transfer_id === null ? html`<p class="muted">Not released to the transfer pipeline${held(r) ? ' (waiting for approval)' : ''}.</p>` : html`<dl class="kv">
        ${row('transfer', Number(r.transfer_id))}${row('status', r.transfer_status)}${row('txHash', r.transfer_tx_hash)}${row('failCode', r.transfer_fail_code)}${row('failReason', r.transfer_fail_reason)}</dl>`}
      <h2>Callback tasks</h2>${callbackTaskTable(taskList, 'status')}`);
  });

  const decide = (approve: boolean) => async (req: Request, res: Response, s: Signed) => {
    const id = idOf(String(req.params.id));
    if (id === null) return kit.refuse(res, s, 404, 'WITHDRAWAL_NOT_FOUND: no such withdrawal order.');
    const note = field(req, 'note').trim();
    if (note.length > NOTE_MAX) return kit.refuse(res, s, 400, `Note: at most ${NOTE_MAX} characters.`);
    const r = await decideApproval(kit.sequelize, kit.actor(s, req), id, approve, note === '' ? null : note);
    if (!r.ok) {
      const status: Record<DecisionRefusal, number> = { WITHDRAWAL_NOT_FOUND: 404, WITHDRAWAL_NOT_PENDING: 409, FOUR_EYES_REQUIRED: 403 };
      return kit.refuse(res, s, status[r.code], `${r.code}: ${r.message}`);
    }
    res.redirect(303, `/withdrawals/${id}?decided=${r.approval}`);
  };
  kit.post(app, '/withdrawals/:id/approve', 'withdrawals.decide', 'decide withdrawals', decide(true));
  kit.post(app, '/withdrawals/:id/reject', 'withdrawals.decide', 'decide withdrawals', decide(false));
}
