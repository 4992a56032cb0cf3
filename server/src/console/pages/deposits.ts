import type express from 'express';
import type { Request, Response } from 'express';
import { isWcsError } from '@wcs/core';
import { TOKENS } from '../../container';
import { AssignRefused, type RechargeService, type RecordCallbackTask } from '../../deposits/recharge-service';
import { TX_STATUSES, type TxStatus } from '../../deposits/recharges';
import { html, type Html } from '../html';
import { field, idOf, q, type ConsoleKit, type Signed } from '../kit';

const DEPOSIT_PAGE = 50;
const CHAIN_CODE_RE = /^[A-Za-z0-9_-]{1,32}$/;
const TX_HASH_RE = /^[A-Za-z0-9:._-]{1,128}$/;
/** externalUserId as the spec's address create takes it: 1 to 64 characters. */
const USER_MAX = 64;

/** A long hash or address in a listing: its ends, the whole in the tooltip (the record's page shows it whole). */
export function shortHash(h: string, suffix = ''): Html {
  return h.length <= 24 ? html`${h}${suffix}` : html`<span title="${h}">${h.slice(0, 10)}…${h.slice(-8)}${suffix}</span>`;
}

/** The callback tasks of a business record, each linking to its attempts on /callbacks/<taskId>. */
export function callbackTaskTable(tasks: readonly RecordCallbackTask[], stateLabel: string): Html {
  return html`<table><thead><tr><th>Task</th><th>${stateLabel}</th><th>Delivery</th><th>Retries</th><th>URL</th><th>Next retry</th><th>Created</th><th>Updated</th></tr></thead><tbody>
    ${tasks.length === 0 ? html`<tr><td colspan="8">No callback tasks.</td></tr>` : tasks.map((k) => html`<tr><td><a href="/callbacks/${k.taskId}">${k.taskId}</a></td><td>${k.state}</td><td>${k.status}</td><td>${k.retryTimes}</td>
      <td>${k.url === '' ? html`<span class="muted">(no URL configured)</span>` : k.url}</td><td>${k.nextRetryTime ?? ''}</td><td>${k.createTime}</td><td>${k.updateTime}</td></tr>`)}
    </tbody></table>`;
}

/**
 * Deposits: recharge records of every application (keyset paging by id), one record with its
 * callback tasks, and the unattributed memo deposits with their assignment (RechargeService, the
 * same functions as `wcs deposits unattributed|assign`).
 */
export function registerDepositPages(app: express.Express, kit: ConsoleKit): void {
  const recharges = () => kit.resolve<RechargeService>(TOKENS.RechargeService);

  kit.get(app, '/deposits', async (req, res, s) => {
    const rawApp = q(req, 'app');
    const chain = q(req, 'chain');
    const status = q(req, 'status');
    const txHash = q(req, 'txHash');
    const rawBefore = q(req, 'before');
    const applicationId = rawApp === null ? null : idOf(rawApp);
    const before = rawBefore === null ? null : idOf(rawBefore);
    if ((rawApp !== null && applicationId === null) || (rawBefore !== null && before === null)) return kit.refuse(res, s, 400, 'Application id and "before" must be positive whole numbers.');
    if (chain !== null && !CHAIN_CODE_RE.test(chain)) return kit.refuse(res, s, 400, 'Chain: a chain code such as ETH.');
    if (status !== null && !(TX_STATUSES as readonly string[]).includes(status)) return kit.refuse(res, s, 400, `Status: one of ${TX_STATUSES.join(', ')}.`);
    if (txHash !== null && !TX_HASH_RE.test(txHash)) return kit.refuse(res, s, 400, 'Transaction hash: up to 128 letters and digits.');
    const list = await recharges().operatorList({ applicationId, chainCode: chain, txStatus: status as TxStatus | null, txHash, before, limit: DEPOSIT_PAGE });
    const keep: Record<string, string> = { ...(rawApp ? { app: rawApp } : {}), ...(chain ? { chain } : {}), ...(status ? { status } : {}), ...(txHash ? { txHash } : {}) };
    const older = list.length === DEPOSIT_PAGE ? html`<a href="/deposits?${new URLSearchParams({ ...keep, before: String(list[list.length - 1]!.id) }).toString()}">Older records</a>` : '';
    const newest = before !== null ? html`<a href="/deposits?${new URLSearchParams(keep).toString()}">Newest</a>` : '';
    kit.render(res, s, 'Deposits', html`<p>Recharge records of every application, newest first. <a href="/deposits/unattributed">Unattributed memo deposits</a></p>
      <form method="get" action="/deposits" class="filters">
        <label>Application id <input name="app" value="${rawApp ?? ''}" size="6" inputmode="numeric"></label>
        <label>Chain <input name="chain" value="${chain ?? ''}" size="8"></label>
        <label>Status <select name="status"><option value="">any</option>${TX_STATUSES.map((x) => html`<option${x === status ? html` selected` : ''}>${x}</option>`)}</select></label>
        <label>Transaction hash <input name="txHash" value="${txHash ?? ''}" size="40"></label>
        <button type="submit">Filter</button></form>
      <table><thead><tr><th>#</th><th>App</th><th>Chain</th><th>Amount</th><th>User</th><th>Address / memo</th><th>Transaction</th><th>Status</th><th>Confirmations</th><th>Created</th></tr></thead><tbody>
      ${list.length === 0 ? html`<tr><td colspan="10">No recharge records${before !== null ? ' older than these' : ''}.</td></tr>` : list.map((r) => html`<tr>
        <td><a href="/deposits/${r.id}">${r.id}</a></td><td>${r.applicationId}</td><td>${r.chainCode}</td><td>${r.amount} ${r.tokenSymbol}</td><td>${r.externalUserId}</td>
        <td>${r.address}${r.memo !== null ? html`<br><span class="muted">memo ${r.memo}</span>` : ''}</td><td>${shortHash(r.txHash, `#${r.position}`)}</td><td>${r.txStatus}</td>
        <td>${r.confirmations} / ${r.minConfirmations}</td><td>${r.createTime}</td></tr>`)}
      </tbody></table><p class="pager">${newest}${older}</p>`);
  });

  kit.get(app, '/deposits/unattributed', async (req, res, s) => {
    const all = req.query.all === '1';
    const rows = await recharges().unattributed(all);
    const canAssign = kit.may(s, 'deposits.assign');
    const assignForm = (id: number) => html`<form method="post" action="/deposits/unattributed/${id}/assign">${kit.csrfField(s)}
      <input name="applicationId" inputmode="numeric" required placeholder="application id" aria-label="Application id">
      <input name="externalUserId" maxlength="${USER_MAX}" required placeholder="externalUserId" aria-label="externalUserId">
      <button type="submit">Assign</button></form>`;
    kit.render(res, s, 'Unattributed memo deposits', html`<p>Deposits to a shared memo-chain address whose memo is missing (MEMO_MISSING) or names no user (MEMO_UNKNOWN): credited to nobody until assigned to a user who has an address on that shared address. Assigning creates the user's recharge record and its callbacks.
      ${all ? html`<a href="/deposits/unattributed">Open ones only</a>` : html`<a href="/deposits/unattributed?all=1">Include assigned ones</a>`} · <a href="/deposits">Recharge records</a></p>
      ${canAssign ? '' : html`<p class="muted">Your role (${s.session.operator.role}) may not assign deposits (operators do).</p>`}
      <table><thead><tr><th>#</th><th>Chain</th><th>Amount</th><th>Address</th><th>Memo</th><th>Reason</th><th>Transaction</th><th>Block</th><th>Seen</th><th>Recharge</th></tr></thead><tbody>
      ${rows.length === 0 ? html`<tr><td colspan="10">No ${all ? '' : 'open '}unattributed deposits.</td></tr>` : rows.map((u) => html`<tr>
        <td>${u.id}</td><td>${u.environment}:${u.chainCode}</td><td>${u.amount} ${u.tokenSymbol}</td><td>${u.address}</td><td>${u.memo ?? html`<span class="muted">(none)</span>`}</td><td>${u.reason}</td>
        <td>${shortHash(u.txHash, `#${u.position}`)}</td><td>${u.blockHeight}</td><td>${u.createTime}</td>
        <td>${u.rechargeId !== null ? html`<a href="/deposits/${u.rechargeId}">recharge ${u.rechargeId}</a>` : canAssign ? assignForm(u.id) : 'open'}</td></tr>`)}
      </tbody></table>`);
  });

  kit.post(app, '/deposits/unattributed/:id/assign', 'deposits.assign', 'assign deposits', async (req, res, s) => {
    const id = idOf(String(req.params.id));
    const applicationId = idOf(field(req, 'applicationId').trim());
    const user = field(req, 'externalUserId').trim();
    if (id === null) return kit.refuse(res, s, 404, 'UNATTRIBUTED_NOT_FOUND: no such unattributed deposit.');
    if (applicationId === null) return kit.refuse(res, s, 400, 'Application id: a positive whole number.');
    if (user === '' || user.length > USER_MAX) return kit.refuse(res, s, 400, `externalUserId: 1 to ${USER_MAX} characters.`);
    await assign(req, res, s, id, applicationId, user);
  });

  async function assign(req: Request, res: Response, s: Signed, id: number, applicationId: number, user: string): Promise<void> {
    try {
      await kit.storage.applications.get(applicationId);
      const r = await recharges().assign(kit.actor(s, req), id, applicationId, user);
      res.redirect(303, `/deposits/${r.id}?assigned=${id}`);
    } catch (e) {
      if (e instanceof AssignRefused) {
        const status = { UNATTRIBUTED_NOT_FOUND: 404, UNATTRIBUTED_ALREADY_ASSIGNED: 409, USER_ADDRESS_NOT_FOUND: 400 }[e.code];
        return kit.refuse(res, s, status, `${e.code}: ${e.message}`);
      }
      if (isWcsError(e)) return kit.refuse(res, s, e.errorName === 'APPLICATION_NOT_FOUND' ? 404 : 400, `${e.errorName}: ${e.message}`);
      throw e;
    }
  }

  kit.get(app, '/deposits/:id', async (req, res, s) => {
    const id = idOf(String(req.params.id));
    const r = id === null ? null : await recharges().operatorGet(id);
    if (!r) return kit.refuse(res, s, 404, 'RECHARGE_NOT_FOUND: no such recharge record.');
    const tasks = await recharges().callbackTasks(r.id);
    const assigned = q(req, 'assigned');
    const row = (k: string, v: unknown) => html`<dt>${k}</dt><dd>${v === null ? html`<span class="muted">null</span>` : v}</dd>`;
    kit.render(res, s, `Recharge ${r.id}`, html`${assigned !== null ? html`<p class="ok" role="status">Unattributed deposit ${assigned} assigned: this is the recharge record it created.</p>` : ''}
      <p><a href="/deposits">All recharge records</a> · <a href="/deposits?app=${r.applicationId}">Application ${r.applicationId}'s records</a></p>
      <dl class="kv">
        ${row('id', r.id)}${row('applicationId', r.applicationId)}${row('chainId', r.chainId)}${row('chainCode', r.chainCode)}${row('chainTokenId', r.chainTokenId)}
        ${row('tokenSymbol', r.tokenSymbol)}${row('contractAddress', r.contractAddress)}${row('externalUserId', r.externalUserId)}${row('address', r.address)}${row('memo', r.memo)}
        ${row('fromAddress', r.fromAddress)}${row('amount', r.amount)}${row('txHash', r.txHash)}${row('position', r.position)}${row('blockHeight', r.blockHeight)}${row('blockHash', r.blockHash)}
        ${row('txStatus', r.txStatus)}${row('confirmations', r.confirmations)}${row('minConfirmations', r.minConfirmations)}${row('failReason', r.failReason)}
        ${row('createTime', r.createTime)}${row('updateTime', r.updateTime)}${row('confirmedTime', r.confirmedTime)}${row('settledTime', r.settledTime)}${row('failedTime', r.failedTime)}
      </dl>
      <h2>Callback tasks</h2>${callbackTaskTable(tasks, 'txStatus')}`);
  });
}
