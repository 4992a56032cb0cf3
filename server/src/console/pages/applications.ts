import type express from 'express';
import type { Response } from 'express';
import { isWcsError } from '@wcs/core';
import { BIZ_TYPES, type ApplicationView, type BizType } from '../../apps/applications';
import { SETTLEMENT_MODES, setSettlementMode, settlementMode, settlementModes } from '../../apps/settlement';
import type { CallbackService } from '../../callbacks/callback-service';
import { TOKENS } from '../../container';
import { html, type Html } from '../html';
import { field, fields, idOf, q, type ConsoleKit, type Signed } from '../kit';

/** A refusal for a service's WcsError: its name and message; 404 for what does not exist, 409 for what is busy, else 400. */
export function refuseWcsError(kit: ConsoleKit, res: Response, s: Signed, e: unknown): boolean {
  if (!isWcsError(e)) return false;
  const status = e.errorName.endsWith('_NOT_FOUND') ? 404 : e.errorName === 'CALLBACK_TASK_BUSY' ? 409 : 400;
  kit.refuse(res, s, status, `${e.errorName}: ${e.message}`);
  return true;
}

/** A whole number of at most 8 digits (as the CLI's --grace, --rps, --burst), or null. */
function whole(v: string): number | null {
  const t = v.trim();
  return /^\d{1,8}$/.test(t) ? Number(t) : null;
}

/** Checkboxes (name "chains") in a table: the stylesheet gives inputs the full width, a table cell keeps a checkbox small. */
function chainChecks(items: readonly { code: string; name: string; checked: boolean }[]): Html {
  return html`<table class="checks"><tbody>${items.map((c) => html`<tr><td><input type="checkbox" id="chain-${c.code}" name="chains" value="${c.code}"${c.checked ? html` checked` : ''}></td>
    <td><label for="chain-${c.code}">${c.code}</label></td><td class="muted">${c.name}</td></tr>`)}</tbody></table>`;
}

const row = (k: string, v: unknown) => html`<dt>${k}</dt><dd>${v === null || v === undefined || v === '' ? html`<span class="muted">none</span>` : v}</dd>`;

/**
 * Applications (docs/console.md, "Applications"): the list, create (the API secret shown once,
 * on the result page only), and one application's page: enable/disable, chains, secret rotation
 * with its grace period, rate limit, settlement mode, callback URLs per bizType with a test
 * event. Every change calls the same service function as the CLI (ApplicationService,
 * setSettlementMode, CallbackService.sendTest), which audits it.
 */
/** Applications per page of the list (keyset by id). */
export const APPS_PAGE = 50;

export function registerApplicationPages(app: express.Express, kit: ConsoleKit): void {
  const apps = () => kit.storage.applications;
  const callbacks = () => kit.resolve<CallbackService>(TOKENS.CallbackService);

  /** Runs a change; a WcsError from the service becomes a refusal page (nothing was written). */
  async function attempt(res: Response, s: Signed, fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (e) {
      if (!refuseWcsError(kit, res, s, e)) throw e;
    }
  }

  kit.get(app, '/applications', async (req, res, s) => {
    const rawAfter = q(req, 'after');
    const after = rawAfter === null ? null : idOf(rawAfter);
    if (rawAfter !== null && after === null) return kit.refuse(res, s, 400, `after: must be an application id, got "${rawAfter}"`);
    const page = await apps().list({ after, limit: APPS_PAGE + 1 });
    const list = page.slice(0, APPS_PAGE);
    const next = page.length > APPS_PAGE ? html`<p class="pager"><a href="/applications?after=${list[list.length - 1]!.id}">More applications</a></p>` : '';
    const modes = await settlementModes(kit.sequelize);
    kit.render(res, s, 'Applications', html`<p>Merchant applications: each has an API key and secret, its enabled chains and its callback URLs.
      ${kit.may(s, 'applications.write') ? html`<a href="/applications/new">Create an application</a>` : ''}</p>
      <table><thead><tr><th>#</th><th>Name</th><th>Environment</th><th>Status</th><th>Chains</th><th>Settlement</th><th>Created</th></tr></thead><tbody>
      ${list.length === 0 ? html`<tr><td colspan="7">No applications yet.</td></tr>` : list.map((a) => html`<tr><td><a href="/applications/${a.id}">${a.id}</a></td>
        <td><a href="/applications/${a.id}">${a.name}</a></td><td>${a.environment}</td><td>${a.status}</td><td>${a.chains.join(', ') || html`<span class="muted">none</span>`}</td>
        <td>${modes.get(a.id) ?? ''}</td><td>${a.createTime}</td></tr>`)}
      </tbody></table>${next}${after !== null ? html`<p><a href="/applications">First applications</a></p>` : ''}`);
  });

  kit.get(app, '/applications/new', async (_req, res, s) => {
    if (!kit.may(s, 'applications.write')) return kit.refuse(res, s, 403, `Your role (${s.session.operator.role}) may not create applications.`);
    const cat = kit.storage.catalogue;
    const codes = [...new Set([...cat.chains('test'), ...cat.chains('live')].map((c) => c.code))];
    const names = (code: string) => (['test', 'live'] as const).filter((env) => cat.has(env, code)).map((env) => `${env}: ${cat.chain(env, code).name}`).join('; ');
    kit.render(res, s, 'New application', html`<form method="post" action="/applications" class="card">${kit.csrfField(s)}
      <label for="name">Name</label><input id="name" name="name" maxlength="100" required>
      <label for="environment">Environment</label><select id="environment" name="environment"><option value="test">test</option><option value="live">live</option></select>
      <p>Chains (each must be in the chosen environment)</p>${chainChecks(codes.map((code) => ({ code, name: names(code), checked: false })))}
      <button type="submit">Create</button></form>
      <p class="muted">The API secret is shown once, on the next page: store it then.</p>`);
  });

  kit.post(app, '/applications', 'applications.write', 'create applications', async (req, res, s) => {
    await attempt(res, s, async () => {
      const created = await apps().create(kit.actor(s, req), { name: field(req, 'name'), environment: field(req, 'environment'), chains: fields(req, 'chains') });
      // the one and only page the secret is ever on (never logged, never audited, not stored in the clear)
      kit.render(res, s, 'Application created', html`<p class="ok" role="status">Application ${created.id} created.</p>
        <dl class="kv">${row('id', created.id)}${row('name', created.name)}${row('environment', created.environment)}${row('apiKey', created.apiKey)}${row('chains', created.chains.join(', '))}</dl>
        <h2>API secret</h2>
        <p class="secret" id="api-secret">${created.apiSecret}</p>
        <p class="error">Store the API secret now: it is not shown again, on this page or any other. A lost secret is replaced by rotating it.</p>
        <p><a href="/applications/${created.id}">Go to the application</a></p>`, 201);
    });
  });

  kit.get(app, '/applications/:id', async (req, res, s) => {
    const id = idOf(String(req.params.id));
    if (id === null) return kit.refuse(res, s, 404, 'APPLICATION_NOT_FOUND: no such application.');
    let a: ApplicationView;
    try {
      a = await apps().get(id);
    } catch (e) {
      if (refuseWcsError(kit, res, s, e)) return;
      throw e;
    }
    const mode = await settlementMode(kit.sequelize, id);
    const canApp = kit.may(s, 'applications.write');
    const canCb = kit.may(s, 'callbacks.write');
    const chains = kit.storage.catalogue.chains(a.environment);
    const grace = kit.deps.config.secretGraceSeconds;
    const cards: Html[] = [];
    if (canApp) {
      cards.push(html`<section class="card"><h3>Status</h3><p>${a.status === 'ACTIVE' ? 'Active: its API requests are served.' : 'Disabled: its API requests are refused.'}</p>
        ${kit.button(s, `/applications/${id}/status`, a.status === 'ACTIVE' ? 'Disable' : 'Enable', { status: a.status === 'ACTIVE' ? 'DISABLED' : 'ACTIVE' })}</section>`);
      cards.push(html`<section class="card"><h3>Chains</h3><form method="post" action="/applications/${id}/chains">${kit.csrfField(s)}
        ${chainChecks(chains.map((c) => ({ code: c.code, name: c.name, checked: a.chains.includes(c.code) })))}
        <button type="submit">Save chains</button></form></section>`);
      cards.push(html`<section class="card"><h3>Rotate the API secret</h3><form method="post" action="/applications/${id}/rotate-secret">${kit.csrfField(s)}
        <label for="grace">Grace period for the current secrets (seconds; 0 stops them at once)</label><input id="grace" name="grace" value="${grace}" inputmode="numeric" required>
        <button type="submit">Rotate the secret</button></form><p class="muted">The new secret is shown once, on the next page.</p></section>`);
      cards.push(html`<section class="card"><h3>Rate limit</h3><form method="post" action="/applications/${id}/rate-limit">${kit.csrfField(s)}
        <label for="limit">Limit</label><select id="limit" name="limit"><option value="default"${a.rateLimit === null ? html` selected` : ''}>the service default</option><option value="own"${a.rateLimit !== null ? html` selected` : ''}>its own, below</option></select>
        <label for="rps">Requests per second</label><input id="rps" name="rps" value="${a.rateLimit?.ratePerSecond ?? ''}" inputmode="numeric">
        <label for="burst">Burst (bucket size)</label><input id="burst" name="burst" value="${a.rateLimit?.burst ?? ''}" inputmode="numeric">
        <p class="muted">The service default is WCS_RATE_LIMIT_RPS / _BURST.</p>
        <button type="submit">Save rate limit</button></form></section>`);
      cards.push(html`<section class="card"><h3>Settlement mode</h3><form method="post" action="/applications/${id}/settlement">${kit.csrfField(s)}
        <label for="mode">Deposits reach SETTLED</label><select id="mode" name="mode">${SETTLEMENT_MODES.map((m) => html`<option value="${m}"${m === mode ? html` selected` : ''}>${m}</option>`)}</select>
        <p class="muted">ON_CONFIRM: at confirmation. PASS_THROUGH: once collected to the application's MERCHANT address.</p>
        <button type="submit">Save settlement mode</button></form></section>`);
      cards.push(html`<section class="card"><h3>RECHARGE_CREDITED</h3><p>${a.rechargeCredited ? 'On: each deposit that reaches SETTLED gets one recharge_credited callback.' : 'Off: deposits get their recharge callbacks only.'}</p>
        ${kit.button(s, `/applications/${id}/recharge-credited`, a.rechargeCredited ? 'Turn off' : 'Turn on', { on: a.rechargeCredited ? 'false' : 'true' })}</section>`);
    }
    if (canCb) {
      cards.push(html`<section class="card"><h3>Callback delivery rate</h3><form method="post" action="/applications/${id}/callback-rate">${kit.csrfField(s)}
        <label for="perSecond">Deliveries per second to each endpoint (empty: no limit)</label><input id="perSecond" name="perSecond" value="${a.callbackRateLimit ?? ''}" inputmode="numeric">
        <button type="submit">Save rate</button></form><p class="muted">For merchants with small receivers: shared by every worker process.</p></section>`);
    }
    const cbRow = (t: BizType) => html`<tr><td>${t}</td>
      <td>${canCb ? html`<form method="post" action="/applications/${id}/callbacks" class="inline url">${kit.csrfField(s)}<input type="hidden" name="bizType" value="${t}">
        <input name="url" value="${a.callbacks[t] ?? ''}" placeholder="https://merchant.example/callback" aria-label="${t} callback URL" required> <button type="submit">Save</button></form>`
        : a.callbacks[t] ?? html`<span class="muted">not configured</span>`}</td>
      ${canCb ? html`<td>${kit.button(s, `/applications/${id}/callbacks/${t}/test`, 'Send test event')}</td>` : ''}</tr>`;
    kit.render(res, s, `Application ${a.id}: ${a.name}`, html`<p><a href="/applications">All applications</a> · <a href="/callbacks?app=${id}">Callback tasks</a> · <a href="/audit">Audit log</a></p>
      <dl class="kv">${row('id', a.id)}${row('name', a.name)}${row('environment', a.environment)}${row('apiKey', a.apiKey)}${row('status', a.status)}
        ${row('chains', a.chains.join(', '))}${row('settlement mode', mode)}${row('rate limit', a.rateLimit ? `${a.rateLimit.ratePerSecond} requests/s, burst ${a.rateLimit.burst}` : 'service default')}
        ${row('RECHARGE_CREDITED', a.rechargeCredited ? 'on' : 'off')}${row('callback delivery rate', a.callbackRateLimit === null ? 'no limit' : `${a.callbackRateLimit}/s per endpoint`)}${row('created', a.createTime)}${row('updated', a.updateTime)}</dl>
      <h2>Callback URLs</h2>
      <p class="muted">Where each kind of event is pushed (${a.environment === 'live' ? 'https only' : 'http or https'}). A test event goes through the real delivery pipeline, signed with the application's secret.</p>
      <table><thead><tr><th>bizType</th><th>URL</th>${canCb ? html`<th></th>` : ''}</tr></thead><tbody>${BIZ_TYPES.map(cbRow)}</tbody></table>
      <h2>Settings</h2>
      ${cards.length > 0 ? cards : html`<p class="muted">Your role (${s.session.operator.role}) may not change applications (operators do).</p>`}`);
  });

  const appId = (res: Response, s: Signed, raw: unknown): number | null => {
    const id = idOf(String(raw));
    if (id === null) kit.refuse(res, s, 404, 'APPLICATION_NOT_FOUND: no such application.');
    return id;
  };

  kit.post(app, '/applications/:id/status', 'applications.write', 'enable or disable applications', async (req, res, s) => {
    const id = appId(res, s, req.params.id);
    if (id === null) return;
    const status = field(req, 'status');
    if (status !== 'ACTIVE' && status !== 'DISABLED') return kit.refuse(res, s, 400, 'Status: ACTIVE or DISABLED.');
    await attempt(res, s, async () => {
      await apps().setStatus(kit.actor(s, req), id, status);
      res.redirect(303, `/applications/${id}`);
    });
  });

  kit.post(app, '/applications/:id/chains', 'applications.write', 'change the chains of applications', async (req, res, s) => {
    const id = appId(res, s, req.params.id);
    if (id === null) return;
    await attempt(res, s, async () => {
      await apps().setChains(kit.actor(s, req), id, fields(req, 'chains'));
      res.redirect(303, `/applications/${id}`);
    });
  });

  kit.post(app, '/applications/:id/rotate-secret', 'applications.write', 'rotate API secrets', async (req, res, s) => {
    const id = appId(res, s, req.params.id);
    if (id === null) return;
    const grace = whole(field(req, 'grace'));
    if (grace === null) return kit.refuse(res, s, 400, `Grace period: a whole number of seconds (0 to 99999999), got "${field(req, 'grace')}".`);
    await attempt(res, s, async () => {
      const r = await apps().rotateSecret(kit.actor(s, req), id, grace);
      kit.render(res, s, 'API secret rotated', html`<p class="ok" role="status">Application ${id} has a new API secret.</p>
        <dl class="kv">${row('id', id)}${row('name', r.application.name)}${row('apiKey', r.application.apiKey)}${row('grace period', `${grace} s`)}
          ${row('previous secrets valid until', `${r.previousSecretsValidUntil} (UTC)`)}</dl>
        <h2>New API secret</h2>
        <p class="secret" id="api-secret">${r.apiSecret}</p>
        <p class="error">Store the new API secret now: it is not shown again. The previous secrets stop working at ${r.previousSecretsValidUntil} UTC${grace === 0 ? ' (now)' : ''}.</p>
        <p><a href="/applications/${id}">Back to the application</a></p>`);
    });
  });

  kit.post(app, '/applications/:id/rate-limit', 'applications.write', 'change rate limits', async (req, res, s) => {
    const id = appId(res, s, req.params.id);
    if (id === null) return;
    let limit: { ratePerSecond: number; burst: number } | null = null;
    const which = field(req, 'limit');
    if (which !== 'default' && which !== 'own') return kit.refuse(res, s, 400, 'Limit: the service default or its own.');
    if (which === 'own') {
      const rps = whole(field(req, 'rps'));
      const burst = whole(field(req, 'burst'));
      if (rps === null || burst === null) return kit.refuse(res, s, 400, 'Rate limit: give both requests per second and burst as whole numbers, or choose the service default.');
      limit = { ratePerSecond: rps, burst };
    }
    await attempt(res, s, async () => {
      await apps().setRateLimit(kit.actor(s, req), id, limit);
      res.redirect(303, `/applications/${id}`);
    });
  });

  kit.post(app, '/applications/:id/settlement', 'applications.write', 'change settlement modes', async (req, res, s) => {
    const id = appId(res, s, req.params.id);
    if (id === null) return;
    await attempt(res, s, async () => {
      const r = await setSettlementMode(kit.sequelize, kit.actor(s, req), id, field(req, 'mode'));
      kit.render(res, s, 'Settlement mode', html`<p class="ok" role="status">Application ${id}: settlement ${r.settlementMode}${r.previousSettlementMode !== r.settlementMode ? ` (was ${r.previousSettlementMode})` : ' (unchanged)'}.</p>
        ${r.notes.length > 0 ? html`<ul>${r.notes.map((n) => html`<li>${n}</li>`)}</ul>` : ''}
        <p><a href="/applications/${id}">Back to the application</a></p>`);
    });
  });

  kit.post(app, '/applications/:id/recharge-credited', 'applications.write', 'change RECHARGE_CREDITED', async (req, res, s) => {
    const id = appId(res, s, req.params.id);
    if (id === null) return;
    const on = field(req, 'on');
    if (on !== 'true' && on !== 'false') return kit.refuse(res, s, 400, 'RECHARGE_CREDITED: on is true or false.');
    await attempt(res, s, async () => {
      await apps().setRechargeCredited(kit.actor(s, req), id, on === 'true');
      res.redirect(303, `/applications/${id}`);
    });
  });

  kit.post(app, '/applications/:id/callback-rate', 'callbacks.write', 'set the callback delivery rate', async (req, res, s) => {
    const id = appId(res, s, req.params.id);
    if (id === null) return;
    const raw = (field(req, 'perSecond') ?? '').trim();
    if (raw !== '' && !/^\d{1,5}$/.test(raw)) return kit.refuse(res, s, 400, 'Callback delivery rate: a whole number of deliveries per second from 1 to 10000, or empty for no limit.');
    await attempt(res, s, async () => {
      await apps().setCallbackRateLimit(kit.actor(s, req), id, raw === '' ? null : Number(raw));
      res.redirect(303, `/applications/${id}`);
    });
  });

  kit.post(app, '/applications/:id/callbacks', 'callbacks.write', 'set callback URLs', async (req, res, s) => {
    const id = appId(res, s, req.params.id);
    if (id === null) return;
    await attempt(res, s, async () => {
      await apps().setCallback(kit.actor(s, req), id, field(req, 'bizType'), field(req, 'url').trim());
      res.redirect(303, `/applications/${id}`);
    });
  });

  kit.post(app, '/applications/:id/callbacks/:bizType/test', 'callbacks.write', 'send test events', async (req, res, s) => {
    const id = appId(res, s, req.params.id);
    if (id === null) return;
    const bizType = String(req.params.bizType);
    if (!(BIZ_TYPES as readonly string[]).includes(bizType)) return kit.refuse(res, s, 400, `bizType: one of ${BIZ_TYPES.join(', ')}.`);
    await attempt(res, s, async () => {
      const task = await callbacks().sendTest(kit.actor(s, req), id, bizType as BizType);
      res.redirect(303, `/callbacks/${task.id}`);
    });
  });
}
