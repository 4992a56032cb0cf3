import type express from 'express';
import type { KeyStoreSupervisor } from '../../custody/keystore-supervisor';
import { keyStoreState, keyUsage } from '../../collection/keystore-view';
import { html } from '../html';
import type { ConsoleKit } from '../kit';

/**
 * Key store: the backend, this process's KeyStoreSupervisor (the readiness check /readyz and the
 * keystore_ready metric read, and status() as `wcs keystore status` prints it), and the key
 * references the database records per purpose. Read only; no key material, PIN or passphrase
 * ever reaches the page. A console-only process opens no key store and says so.
 */
export function registerKeyStorePages(app: express.Express, kit: ConsoleKit): void {
  kit.get(app, '/keystore', async (_req, res, s) => {
    // the supervisor of this process's API or workers; a console-only process opens no key store (and loads no PKCS#11 module)
    const supervisor: KeyStoreSupervisor | null = kit.deps.keystoreSupervisor();
    const backend = kit.deps.config.keystoreBackend;
    const st = await keyStoreState(backend, supervisor);
    const usage = await keyUsage(kit.sequelize);
    const stateLine = !st.opened
      ? html`<p role="status"><b>This process has not opened the key store</b>: it runs the console without the API or a payout worker, which are what open it.
          What follows is what the database records. <code>wcs keystore status</code> on the service's host opens it and reports.</p>`
      : st.ready
        ? html`<p role="status" class="ok"><b>Open and ready</b> (readiness: ${st.detail}; ${st.attempts} opening attempt${st.attempts === 1 ? '' : 's'}).</p>`
        : html`<p role="alert" class="error"><b>Not ready</b>: ${st.detail}. The service retries in the background (1 s doubling to 30 s); key operations answer 503 meanwhile. ${st.attempts} attempts so far.</p>`;
    kit.render(res, s, 'Key store', html`<dl class="kv"><dt>Backend</dt><dd>${backend === 'pkcs11' ? 'pkcs11 (an HSM through PKCS#11)' : backend === 'software' ? 'software (an encrypted seed file)' : backend}</dd>
        <dt>In this process</dt><dd>${st.opened ? (st.ready ? 'open' : 'opening failed, retrying') : 'not opened'}</dd></dl>
      ${stateLine}
      ${st.facts.length > 0 ? html`<h2>What the key store reports</h2><p class="muted">As <code>wcs keystore status</code> prints it; never a secret.</p>
        <dl class="kv">${st.facts.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>` : ''}
      ${st.factsError ? html`<p class="error">The key store's status could not be read: ${st.factsError}</p>` : ''}
      <h2>Keys in use (from the database)</h2>
      <div class="grid"><div class="stat">Deposit keys<b>${usage.totals.deposit ?? 0}</b></div><div class="stat">Hot wallet keys<b>${usage.totals.hot ?? 0}</b></div>
        <div class="stat">Fee wallet keys<b>${usage.totals.fee ?? 0}</b></div><div class="stat">Cold keys<b>0</b><span class="muted">${usage.coldAddresses} COLD address${usage.coldAddresses === 1 ? '' : 'es'} set; their keys are held outside the service</span></div></div>
      <h3>Key references per purpose and namespace</h3>
      <table><thead><tr><th>Purpose</th><th>Namespace / chain</th><th>What</th><th>Applications</th><th>Keys</th></tr></thead><tbody>
      ${usage.refs.length === 0 ? html`<tr><td colspan="5">No keys used yet.</td></tr>` : usage.refs.map((r) => html`<tr><td>${r.purpose}</td><td>${r.namespace}</td><td>${r.what}</td><td>${r.applications}</td><td>${r.count}</td></tr>`)}
      </tbody></table>
      <h3>Key index allocation</h3>
      <table><thead><tr><th>Purpose</th><th>Namespace</th><th>Applications</th><th>Indexes allocated</th></tr></thead><tbody>
      ${usage.counters.length === 0 ? html`<tr><td colspan="4">None allocated yet.</td></tr>` : usage.counters.map((c) => html`<tr><td>${c.purpose}</td><td>${c.namespace}</td><td>${c.applications}</td><td>${c.allocated}</td></tr>`)}
      </tbody></table>
      <h3>Device keys recorded (PKCS#11 key directory)</h3>
      ${usage.deviceKeys.length === 0 ? html`<p class="muted">None (the software backend derives every key from its seed; nothing is recorded).</p>`
        : html`<table><thead><tr><th>Backend</th><th>Purpose</th><th>Keys</th></tr></thead><tbody>${usage.deviceKeys.map((d) => html`<tr><td>${d.backend}</td><td>${d.purpose}</td><td>${d.count}</td></tr>`)}</tbody></table>`}`);
  });
}
