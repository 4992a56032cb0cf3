import type express from 'express';
import type { Request, Response } from 'express';
import { isWcsError, parseLocalDateTime } from '@wcs/core';
import { BIZ_TYPES, type BizType } from '../../apps/applications';
import { TASK_STATUSES, type CallbackAttemptView, type CallbackService, type CallbackTaskView, type ConsoleTaskFilter, type TaskStatus } from '../../callbacks/callback-service';
import { decodeTaskCursor } from '../../callbacks/task-cursor';
import { TOKENS } from '../../container';
import { html, type Html } from '../html';
import { field, fields, idOf, q, type ConsoleKit, type Signed } from '../kit';
import { refuseWcsError } from './applications';

/** Tasks per page of the console's listing. */
export const CALLBACK_PAGE = 50;
/** The spec's bizId: a whole number from 0 (a test event's bizId is 0). */
const BIZ_ID_RE = /^\d{1,15}$/;
/** The filters a listing link carries (the spec's listing, plus the application). */
const FILTERS = ['app', 'bizType', 'bizId', 'status', 'createTimeStart', 'createTimeEnd'] as const;

interface ParsedFilter {
  readonly filter: ConsoleTaskFilter;
  /** The filters as given, for links and the form. */
  readonly keep: Record<string, string>;
}

/** The listing's filters from the query string, or why not (a refusal message). */
function parseFilter(req: Request): ParsedFilter | string {
  const keep: Record<string, string> = {};
  for (const k of FILTERS) {
    const v = q(req, k);
    if (v !== null) keep[k] = v.trim();
  }
  const f: { -readonly [K in keyof ConsoleTaskFilter]: ConsoleTaskFilter[K] } = {};
  if (keep.app) {
    const id = idOf(keep.app);
    if (id === null) return `Application id: a positive whole number, got "${keep.app}".`;
    f.applicationId = id;
  }
  if (keep.bizType) {
    if (!(BIZ_TYPES as readonly string[]).includes(keep.bizType)) return `bizType: one of ${BIZ_TYPES.join(', ')}, got "${keep.bizType}".`;
    f.bizType = keep.bizType as BizType;
  }
  if (keep.bizId) {
    if (!BIZ_ID_RE.test(keep.bizId)) return `bizId: a whole number from 0, got "${keep.bizId}".`;
    f.bizId = Number(keep.bizId);
  }
  if (keep.status) {
    if (!(TASK_STATUSES as readonly string[]).includes(keep.status)) return `status: one of ${TASK_STATUSES.join(', ')}, got "${keep.status}".`;
    f.status = keep.status as TaskStatus;
  }
  for (const k of ['createTimeStart', 'createTimeEnd'] as const) {
    if (!keep[k]) continue;
    const d = parseLocalDateTime(keep[k]);
    if (!d) return `${k}: an ISO 8601 local date-time YYYY-MM-DDThh:mm:ss (UTC), got "${keep[k]}".`;
    f[k] = d;
  }
  if (f.createTimeStart && f.createTimeEnd && f.createTimeStart > f.createTimeEnd) return 'createTimeEnd must not be before createTimeStart.';
  for (const k of Object.keys(keep)) if (keep[k] === '') delete keep[k];
  return { filter: f, keep };
}

const row = (k: string, v: unknown) => html`<dt>${k}</dt><dd>${v === null || v === undefined ? html`<span class="muted">null</span>` : v}</dd>`;
const listingLink = (keep: Record<string, string>, extra: Record<string, string> = {}) => `/callbacks?${new URLSearchParams({ ...keep, ...extra }).toString()}`;

/**
 * Callbacks (docs/console.md, "Callbacks"): the task listing with every filter of the spec's
 * listing over one or every application, paged by keyset (CallbackService.taskPage: "Newer" and
 * "Older" carry cursors), each task with its attempts, and resend: one task, the FAILED tasks
 * selected on a page, or every FAILED task of an application and bizType (CallbackService.resend
 * and resendFailed, as `wcs callback resend`). What receivers answered is shown as text.
 */
export function registerCallbackPages(app: express.Express, kit: ConsoleKit): void {
  const service = () => kit.resolve<CallbackService>(TOKENS.CallbackService);

  kit.get(app, '/callbacks', async (req, res, s) => {
    const parsed = parseFilter(req);
    if (typeof parsed === 'string') return kit.refuse(res, s, 400, parsed);
    const { filter, keep } = parsed;
    const rawOlder = q(req, 'older');
    const rawNewer = q(req, 'newer');
    if (rawOlder !== null && rawNewer !== null) return kit.refuse(res, s, 400, 'Give "older" or "newer", not both.');
    const older = rawOlder === null ? null : decodeTaskCursor(rawOlder);
    const newer = rawNewer === null ? null : decodeTaskCursor(rawNewer);
    if ((rawOlder !== null && older === null) || (rawNewer !== null && newer === null)) {
      return kit.refuse(res, s, 400, 'That page position ("older"/"newer") is not one this listing wrote: start again from the newest tasks.');
    }
    const page = await service().taskPage(filter, { older, newer }, CALLBACK_PAGE);
    const canResend = kit.may(s, 'callbacks.resend');
    const failedOnPage = page.list.some((t) => t.status === 'FAILED');
    const pager = html`<p class="pager">${rawOlder !== null || rawNewer !== null ? html`<a href="${listingLink(keep)}">Newest</a>` : ''}${page.newer ? html`<a href="${listingLink(keep, { newer: page.newer })}" rel="prev">Newer</a>` : ''}${page.older ? html`<a href="${listingLink(keep, { older: page.older })}" rel="next">Older</a>` : ''}</p>`;
    const statusSelect = (name: string, selected: string | undefined) => html`<select name="${name}"><option value="">any</option>${TASK_STATUSES.map((x) => html`<option${x === selected ? html` selected` : ''}>${x}</option>`)}</select>`;
    const bizSelect = (selected: string | undefined, any = true) => html`<select name="bizType">${any ? html`<option value="">any</option>` : ''}${BIZ_TYPES.map((x) => html`<option${x === selected ? html` selected` : ''}>${x}</option>`)}</select>`;
    const taskRow = (t: CallbackTaskView & { applicationId: number }) => html`<tr>
      ${canResend ? html`<td>${t.status === 'FAILED' ? html`<input type="checkbox" name="task" value="${t.id}" form="resend-selected" aria-label="select task ${t.id}">` : ''}</td>` : ''}
      <td><a href="/callbacks/${t.id}">${t.id}</a></td><td><a href="/applications/${t.applicationId}">${t.applicationId}</a></td><td>${t.bizType}</td><td>${t.bizId}</td><td>${t.status}</td>
      <td>${t.retryTimes} / ${t.maxRetryTimes}</td><td>${t.nextRetryTime ?? ''}</td><td>${t.url === '' ? html`<span class="muted">(no URL configured)</span>` : t.url}</td>
      <td>${t.lastError ?? ''}</td><td>${t.createTime}</td><td>${t.updateTime}</td></tr>`;
    const cols = canResend ? 12 : 11;
    kit.render(res, s, 'Callback tasks', html`<p>Callback tasks of ${filter.applicationId ? html`<a href="/applications/${filter.applicationId}">application ${filter.applicationId}</a>` : 'every application'}, newest first, ${CALLBACK_PAGE} a page. Times are UTC.</p>
      <form method="get" action="/callbacks" class="filters">
        <label>Application id <input name="app" value="${keep.app ?? ''}" size="6" inputmode="numeric"></label>
        <label>bizType ${bizSelect(keep.bizType)}</label>
        <label>bizId <input name="bizId" value="${keep.bizId ?? ''}" size="8" inputmode="numeric"></label>
        <label>Status ${statusSelect('status', keep.status)}</label>
        <label>Created from <input name="createTimeStart" value="${keep.createTimeStart ?? ''}" size="19" placeholder="YYYY-MM-DDThh:mm:ss"></label>
        <label>Created until <input name="createTimeEnd" value="${keep.createTimeEnd ?? ''}" size="19" placeholder="YYYY-MM-DDThh:mm:ss"></label>
        <button type="submit">Filter</button> <a href="/callbacks">Clear</a></form>
      ${pager}
      <table><thead><tr>${canResend ? html`<th>Resend</th>` : ''}<th>Task</th><th>App</th><th>bizType</th><th>bizId</th><th>Status</th><th>Retries</th><th>Next retry</th><th>URL</th><th>Last error</th><th>Created</th><th>Updated</th></tr></thead><tbody>
      ${page.list.length === 0 ? html`<tr><td colspan="${cols}">No callback tasks${rawOlder !== null || rawNewer !== null ? ' here' : ''}.</td></tr>` : page.list.map(taskRow)}
      </tbody></table>
      ${pager}
      ${canResend ? html`<form method="post" action="/callbacks/resend" id="resend-selected" class="inline">${kit.csrfField(s)}<button type="submit"${failedOnPage ? '' : html` disabled`}>Resend selected</button></form>
      <form method="post" action="/callbacks/resend-failed" class="filters bulk">${kit.csrfField(s)}<span>Resend every FAILED task of</span>
        <label>application <input name="app" value="${keep.app ?? ''}" size="6" inputmode="numeric" required></label>
        <label>and bizType ${bizSelect(keep.bizType, false)}</label><button type="submit">Resend every FAILED task</button></form>` : ''}`);
  });

  /** The task and its application, or a 404 refusal (null). */
  async function taskOf(res: Response, s: Signed, raw: unknown): Promise<{ applicationId: number; id: number } | null> {
    const id = idOf(String(raw));
    const applicationId = id === null ? null : await service().taskApplication(id).catch((e: unknown) => {
      if (isWcsError(e)) return null;
      throw e;
    });
    if (id === null || applicationId === null) {
      kit.refuse(res, s, 404, `CALLBACK_TASK_NOT_FOUND: no callback task ${String(raw)}.`);
      return null;
    }
    return { applicationId, id };
  }

  const headersTable = (h: Record<string, string>) => html`<table class="headers"><tbody>${Object.entries(h ?? {}).map(([k, v]) => html`<tr><th>${k}</th><td>${v}</td></tr>`)}</tbody></table>`;
  const text = (v: string | null) => (v === null ? html`<span class="muted">null</span>` : html`<pre>${v}</pre>`);
  const attemptBlock = (a: CallbackAttemptView) => html`<section class="attempt"><h3>Attempt ${a.attemptNo} <span class="${a.accepted ? 'ok' : 'error'}">${a.accepted ? 'accepted' : 'not accepted'}</span></h3>
    <dl class="kv">${row('id', a.id)}${row('callbackTaskId', a.callbackTaskId)}${row('attemptNo', a.attemptNo)}${row('createTime', a.createTime)}
      ${row('requestHeadersSummary', headersTable(a.requestHeadersSummary))}
      ${row('requestBodySummary', text(a.requestBodySummary))}${row('requestBodyLength', a.requestBodyLength)}${row('requestBodySha256', a.requestBodySha256)}
      ${row('responseStatus', a.responseStatus)}${row('responseContentType', a.responseContentType)}
      ${row('responseBodySummary', text(a.responseBodySummary))}${row('responseBodyLength', a.responseBodyLength)}${row('responseBodySha256', a.responseBodySha256)}
      ${row('accepted', String(a.accepted))}${row('latencyMs', a.latencyMs)}${row('errorReason', a.errorReason)}${row('nextRetryTime', a.nextRetryTime)}</dl></section>`;

  kit.get(app, '/callbacks/:id', async (req, res, s) => {
    const at = await taskOf(res, s, req.params.id);
    if (!at) return;
    const t = await service().task(at.applicationId, at.id);
    const attempts = await service().attempts(at.applicationId, at.id);
    const resent = q(req, 'resent') !== null;
    const canResend = kit.may(s, 'callbacks.resend') && (t.status === 'FAILED' || t.status === 'SUCCESS');
    kit.render(res, s, `Callback task ${t.id}`, html`${resent ? html`<p class="ok" role="status">Queued again: a running worker delivers it (reload to see the new attempt).</p>` : ''}
      <p><a href="/callbacks">All callback tasks</a> · <a href="/callbacks?app=${at.applicationId}">Application ${at.applicationId}'s tasks</a> · <a href="/applications/${at.applicationId}">Application ${at.applicationId}</a></p>
      <dl class="kv">${row('id', t.id)}${row('applicationId', at.applicationId)}${row('bizType', t.bizType)}${row('bizId', t.bizId)}${row('url', t.url === '' ? html`<span class="muted">(no URL configured)</span>` : t.url)}
        ${row('status', t.status)}${row('retryTimes', t.retryTimes)}${row('maxRetryTimes', t.maxRetryTimes)}${row('nextRetryTime', t.nextRetryTime)}
        ${row('lastResponseSummary', text(t.lastResponseSummary))}${row('lastError', t.lastError)}${row('createTime', t.createTime)}${row('updateTime', t.updateTime)}</dl>
      ${canResend ? html`<p>${kit.button(s, `/callbacks/${t.id}/resend`, t.status === 'SUCCESS' ? 'Resend (deliver again)' : 'Resend')}</p>` : ''}
      <h2>Attempts (${attempts.length})</h2>
      ${attempts.length === 0 ? html`<p class="muted">No attempts yet${t.status === 'WAITING' || t.status === 'PROCESSING' ? ': it is queued or being delivered' : ''}.</p>` : attempts.map(attemptBlock)}`);
  });

  kit.post(app, '/callbacks/:id/resend', 'callbacks.resend', 'resend callbacks', async (req, res, s) => {
    const at = await taskOf(res, s, req.params.id);
    if (!at) return;
    try {
      await service().resend(kit.actor(s, req), at.applicationId, at.id);
    } catch (e) {
      if (refuseWcsError(kit, res, s, e)) return;
      throw e;
    }
    res.redirect(303, `/callbacks/${at.id}?resent=1`);
  });

  const outcomeTable = (rows: readonly { id: number; outcome: Html | string }[]) => html`<table><thead><tr><th>Task</th><th>Outcome</th></tr></thead><tbody>
    ${rows.map((r) => html`<tr><td><a href="/callbacks/${r.id}">${r.id}</a></td><td>${r.outcome}</td></tr>`)}</tbody></table>`;

  kit.post(app, '/callbacks/resend', 'callbacks.resend', 'resend callbacks', async (req, res, s) => {
    const raw = fields(req, 'task');
    if (raw.length === 0) return kit.refuse(res, s, 400, 'Select at least one FAILED task to resend.');
    const ids = raw.map((v) => idOf(v));
    if (ids.some((id) => id === null)) return kit.refuse(res, s, 400, 'Task ids are positive whole numbers.');
    const unique = [...new Set(ids as number[])];
    const actor = kit.actor(s, req);
    const rows: { id: number; outcome: Html | string }[] = [];
    let queued = 0;
    for (const id of unique) {
      try {
        const applicationId = await service().taskApplication(id);
        const t = await service().resend(actor, applicationId, id);
        queued++;
        rows.push({ id, outcome: html`<span class="ok">queued</span> (${t.status}, ${t.url})` });
      } catch (e) {
        if (!isWcsError(e)) throw e;
        rows.push({ id, outcome: html`<span class="error">refused: ${e.errorName}: ${e.message}</span>` });
      }
    }
    kit.render(res, s, 'Resend selected tasks', html`<p class="${queued > 0 ? 'ok' : 'error'}" role="status">${queued} of ${unique.length} tasks queued again; a running worker delivers them.</p>
      ${outcomeTable(rows)}<p><a href="/callbacks">Callback tasks</a></p>`, queued > 0 ? 200 : 409);
  });

  kit.post(app, '/callbacks/resend-failed', 'callbacks.resend', 'resend callbacks', async (req, res, s) => {
    const applicationId = idOf(field(req, 'app').trim());
    const bizType = field(req, 'bizType');
    if (applicationId === null) return kit.refuse(res, s, 400, 'Application id: a positive whole number.');
    if (!(BIZ_TYPES as readonly string[]).includes(bizType)) return kit.refuse(res, s, 400, `bizType: one of ${BIZ_TYPES.join(', ')}.`);
    let r: Awaited<ReturnType<CallbackService['resendFailed']>>;
    try {
      await kit.storage.applications.get(applicationId); // APPLICATION_NOT_FOUND rather than "nothing to resend"
      r = await service().resendFailed(kit.actor(s, req), applicationId, bizType as BizType);
    } catch (e) {
      if (refuseWcsError(kit, res, s, e)) return;
      throw e;
    }
    const rows = [...r.resent.map((t) => ({ id: t.id, outcome: html`<span class="ok">queued</span> (${t.url})` })), ...r.skipped.map((id) => ({ id, outcome: 'skipped: no longer FAILED' }))];
    kit.render(res, s, 'Resend FAILED tasks', html`<p class="ok" role="status">${r.resent.length === 0 ? `No FAILED ${bizType} callback tasks for application ${applicationId}.` : `${r.resent.length} FAILED ${bizType} tasks of application ${applicationId} queued again; a running worker delivers them.`}</p>
      ${rows.length > 0 ? outcomeTable(rows) : ''}<p><a href="${listingLink({ app: String(applicationId), bizType })}">Application ${applicationId}'s ${bizType} tasks</a></p>`);
  });
}
