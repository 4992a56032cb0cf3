/**
 * The console's Wallets, Collection and Key store pages in a real browser (Debian's Chromium
 * driven by playwright-core, headless), on a console-only service: an operator (TOTP) reads the
 * wallets with their watermarks, changes a collection policy through the form (the row changes,
 * the audit entry holds before and after; bad input changes nothing), a viewer's POST of the same
 * form is refused by the server, an approver retries a FAILED item exactly as `wcs collect
 * retry` does; the CLI's policy change and retry are audited too. The wallet and item state is
 * written in SQL (no chain is needed to show it). Screenshots: test/screenshots/wallets.png,
 * keystore.png, collection-*.png.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { createTestDatabase, testConfig, testEnv, testLogger, type TestDatabase } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { pastFirstLogin } from './support/first-login';
import { cliJson, describeCli, runCli } from './support/processes';
import { totp } from './support/totp';

const CHROMIUM = process.env.WCS_TEST_CHROMIUM ?? '/usr/bin/chromium';
const SHOTS = path.resolve(__dirname, '..', 'screenshots');
// default catalogue, test environment
const ETH_CHAIN = 102;
const ETH = 10200;
const USDC = 10202;
const HOT = '0x1111111111111111111111111111111111111111';
const FEE = '0x2222222222222222222222222222222222222222';
const COLD = '0x3333333333333333333333333333333333333333';

describe('console wallets, collection and key store pages in Chromium (policy form, retry, audit, refusals, screenshots)', function () {
  let db: TestDatabase;
  let svc: WcsService;
  let base: string;
  let profile: string;
  let ctx: BrowserContext;
  let pg: Client;
  let appId: number;
  let consoleItem: number;
  let cliItem: number;
  let coldItem: number;
  let recharge: number;
  const dialogs: string[] = [];
  const accounts: Record<string, { password: string; secret: string | null }> = {};
  const cliUser = `cli:${os.userInfo().username}`;

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function wcs(args: string[], exit = 0): Promise<any> {
    const r = await runCli([...args, '--json'], { ...process.env, ...testEnv(db.url) });
    expect(r.code, describeCli(args, r)).to.equal(exit);
    return cliJson(args, r);
  }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function sql(text: string, params: unknown[] = []): Promise<any[]> {
    return (await pg.query(text, params)).rows;
  }
  async function shot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  }
  async function login(username: string): Promise<Page> {
    await ctx.clearCookies();
    const page = await ctx.newPage();
    const a = accounts[username]!;
    await page.goto(`${base}/login`);
    await page.fill('#username', username);
    await page.fill('#password', a.password);
    await page.fill('#totp', a.secret ? totp(a.secret) : '');
    await Promise.all([page.waitForLoadState('load'), page.click('button[type=submit]')]);
    expect(await page.textContent('nav .who')).to.include(username);
    return page;
  }
  const policy = async () => (await sql(
    `SELECT enabled, threshold::text, max_fee_bps, native_value::text, on_confirmed, schedule_seconds, max_wait_seconds, hot_low::text, hot_target::text, hot_high::text
       FROM collection_policies WHERE application_id = $1 AND chain_token_id = $2`, [appId, USDC]))[0];
  const audit = (action: string) => sql('SELECT actor, actor_role, channel, source, target, before, after FROM audit_log WHERE action = $1 ORDER BY id', [action]);
  const itemRow = async (id: number) => (await sql(
    `SELECT status, retry_times, failure_code, failure_message, waiting_reason, transfer_id::text, topup_transfer_id IS NOT NULL AS topup_kept, tx_hash, gas_fee::text,
            fee_per_unit::text, finished_at FROM collection_items WHERE id = $1`, [id]))[0];

  /** A FAILED USDC sweep of one user's deposit after a successful gas top-up: the item, its two transfers (one attempt each) and the recharge. */
  async function failedSweep(user: string, n: number): Promise<{ item: number; recharge: number }> {
    const address = `0x${'a'.repeat(38)}0${n}`;
    const [k] = await sql(`INSERT INTO user_keys (application_id, namespace, external_user_id, key_index, public_key) VALUES ($1, 'evm', $2, $3, '\\x02') RETURNING id`, [appId, user, n]);
    const [a] = await sql(`INSERT INTO addresses (application_id, chain_id, chain_code, external_user_id, address, user_key_id) VALUES ($1, $2, 'ETH', $3, $4, $5) RETURNING id`, [appId, ETH_CHAIN, user, address, k.id]);
    const [top] = await sql(
      `INSERT INTO transfers (application_id, chain_id, chain_token_id, kind, key_purpose, key_namespace, key_index, from_address, to_address, amount, status, tx_hash, fee, fee_final, finished_at)
       VALUES ($1, $2, $3, 'TOP_UP', 'fee', 'evm', 0, $4, $5, 1000000000000000, 'SUCCESS', $6, 21000000000000, true, now()) RETURNING id`,
      [appId, ETH_CHAIN, ETH, FEE, address, `0x${'ab'.repeat(31)}${String(n).padStart(2, '0')}`]);
    const sweepHash = `0x${'cd'.repeat(31)}${String(n).padStart(2, '0')}`;
    const [sweep] = await sql(
      `INSERT INTO transfers (application_id, chain_id, chain_token_id, kind, key_purpose, key_namespace, key_index, from_address, to_address, amount, status, tx_hash, fee, fail_code, fail_reason, finished_at)
       VALUES ($1, $2, $3, 'SWEEP', 'deposit', 'evm', $4, $5, $6, 25000000, 'FAILED', $7, 50000000000000, 'REVERTED', 'execution reverted', now()) RETURNING id`,
      [appId, ETH_CHAIN, USDC, n, address, HOT, sweepHash]);
    await sql(`INSERT INTO transfer_attempts (transfer_id, attempt, tx_hash, raw_tx, transfer_input, max_fee, sent_at) VALUES ($1, 1, $2, '\\x00', '{}', 60000000000000, now())`, [sweep.id, sweepHash]);
    const [req] = await sql(`INSERT INTO collection_requests (application_id, chain_id, chain_token_id, trigger) VALUES ($1, $2, $3, 'DEPOSIT') RETURNING id`, [appId, ETH_CHAIN, USDC]);
    const [item] = await sql(
      `INSERT INTO collection_items (request_id, application_id, chain_id, chain_token_id, stage, from_address_id, from_address, to_address, amount, status, failure_code, failure_message,
                                     retry_times, fee_per_unit, topup_transfer_id, transfer_id, tx_hash, gas_fee, finished_at)
       VALUES ($1, $2, $3, $4, 'HOT_GATHER', $5, $6, $7, 25000000, 'FAILED', 'SWEEP_REVERTED', 'the sweep <b>reverted</b> on chain', 0, 1000000000, $8, $9, $10, 40000000000000, now()) RETURNING id`,
      [req.id, appId, ETH_CHAIN, USDC, a.id, address, HOT, top.id, sweep.id, sweepHash]);
    const [r] = await sql(
      `INSERT INTO recharges (application_id, chain_id, chain_token_id, address_id, external_user_id, address, tx_hash, position, amount, tx_status, confirmations, min_confirmations,
                              confirmed_at, collection_item_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 0, 25000000, 'CONFIRMED', 12, 12, now(), $8) RETURNING id`,
      [appId, ETH_CHAIN, USDC, a.id, user, address, `0x${'ef'.repeat(31)}${String(n).padStart(2, '0')}`, item.id]);
    return { item: Number(item.id), recharge: Number(r.id) };
  }

  before(async function () {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM}: the README's test line installs it (scripts/test-prereqs.js)`);
    fs.mkdirSync(SHOTS, { recursive: true });
    db = await createTestDatabase();
    for (const [username, role] of [['olga', 'operator'], ['vic', 'viewer'], ['abe', 'approver']] as const) {
      const made = await wcs(['operator', 'create', '--username', username, '--role', role]);
      accounts[username] = { password: made.password, secret: made.totpUri ? new URL(made.totpUri).searchParams.get('secret') : null };
    }
    // past the first login: this file is about other pages (the first-login rule: console-first-login-browser.test.ts)
    await pastFirstLogin(db.url, ['olga', 'vic', 'abe']);
    appId = (await wcs(['app', 'create', '--name', 'shop <one>', '--env', 'test', '--chains', 'ETH,BTC'])).id;
    pg = new Client({ connectionString: db.url });
    await pg.connect();

    // the CLI's policy change is audited with its actor; the same values again write nothing
    await wcs(['collect', 'policy', 'set', '--app', String(appId), '--chain', 'ETH', '--token', 'USDC', '--threshold', '5', '--native-value', '3000', '--hot-low', '10', '--hot-target', '50', '--hot-high', '100']);
    const unchanged = await wcs(['collect', 'policy', 'set', '--app', String(appId), '--chain', 'ETH', '--token', 'USDC', '--threshold', '5']);
    expect(unchanged).to.include({ created: false });
    expect(unchanged.changed).to.deep.equal([]);
    const cliSet = await audit('collect.policy.set');
    expect(cliSet).to.have.length(1);
    expect(cliSet[0]).to.deep.include({ actor: cliUser, actor_role: 'shell', channel: 'cli', target: `app:${appId}/token:${USDC}`, before: null });
    expect(cliSet[0].after).to.include({ enabled: true, threshold: '5', nativeValue: '3000', hotLow: '10', hotTarget: '50', hotHigh: '100' });
    // a bad option: exit 2, nothing written
    await wcs(['collect', 'policy', 'set', '--app', String(appId), '--chain', 'ETH', '--token', 'USDC', '--threshold', '-5'], 2);
    expect(await audit('collect.policy.set')).to.have.length(1);

    // the wallets as the workers would have recorded them
    const [hot] = await sql(`INSERT INTO hot_wallets (application_id, chain_id, key_namespace, key_index, address) VALUES ($1, $2, 'evm', 0, $3) RETURNING id`, [appId, ETH_CHAIN, HOT]);
    await sql(`INSERT INTO hot_wallet_balances (hot_wallet_id, chain_token_id, on_chain, reserved, observed_at) VALUES ($1, $2, 350000000, 20000000, now()), ($1, $3, 2000000000000000000, 0, now())`, [hot.id, USDC, ETH]);
    await sql(`INSERT INTO fee_wallets (application_id, chain_id, key_namespace, key_index, address, on_chain, observed_at) VALUES ($1, $2, 'evm', 0, $3, 100000000000000000, now())`, [appId, ETH_CHAIN, FEE]);
    // the CLI's COLD address is audited too
    await wcs(['collect', 'address', 'set', '--app', String(appId), '--chain', 'ETH', '--kind', 'COLD', '--address', COLD]);
    expect(await audit('collect.address.set')).to.deep.equal([{
      actor: cliUser, actor_role: 'shell', channel: 'cli', source: os.hostname(), target: `app:${appId}/chain:ETH/COLD`, before: null, after: { address: COLD, memo: null },
    }]);
    await sql(`INSERT INTO operator_alerts (chain_id, kind, message, details) VALUES ($1, 'FEE_WALLET_LOW', 'ETH: fee wallet <i>too poor</i> for a top-up', $2)`, [ETH_CHAIN, JSON.stringify({ applicationId: appId, address: FEE })]);
    const first = await failedSweep('user-1', 1);
    consoleItem = first.item;
    recharge = first.recharge;
    cliItem = (await failedSweep('user-2', 2)).item;
    const [req] = await sql(`INSERT INTO collection_requests (application_id, chain_id, chain_token_id, trigger) VALUES ($1, $2, $3, 'WATERMARK') RETURNING id`, [appId, ETH_CHAIN, USDC]);
    coldItem = Number((await sql(
      `INSERT INTO collection_items (request_id, application_id, chain_id, chain_token_id, stage, from_address_id, from_address, to_address, amount, status, tx_hash, finished_at)
       VALUES ($1, $2, $3, $4, 'COLD_TRANSFER', 0, $5, $6, 200000000, 'SUCCESS', $7, now()) RETURNING id`, [req.id, appId, ETH_CHAIN, USDC, HOT, COLD, `0x${'99'.repeat(32)}`]))[0].id);

    svc = await WcsService.start(testConfig(db.url, { WCS_CONSOLE_PORT: '0' }), testLogger(), { api: false, workers: false, console: true });
    base = svc.consoleUrl;
    profile = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-chromium-'));
    ctx = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM, headless: true, viewport: { width: 1280, height: 800 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    });
    ctx.on('page', (p) => p.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    }));
  });
  after(async function () {
    await ctx?.close();
    if (profile) fs.rmSync(profile, { recursive: true, force: true });
    await svc?.stop();
    await pg?.end();
    await db?.drop();
  });

  it('an operator sees the wallets (balances, watermarks, fee wallet, cold address, open alert) and the key store page of a console-only process', async () => {
    const page = await login('olga');
    await page.goto(`${base}/wallets`);
    const section = (await page.textContent(`#app-${appId}`))!;
    expect(section).to.include('shop <one>');
    expect(section).to.include(HOT);
    // 350 on chain, 20 reserved: 330 available, above the high watermark 100, down to the target 50
    expect(await page.locator('tr', { hasText: 'USDC' }).first().textContent()).to.match(/350.*20.*10 \/ 50 \/ 100.*above high: 280 USDC to go cold/s);
    expect(section).to.include(`${FEE}`);
    expect(section).to.include('0.1 ETH');
    expect(section).to.include(COLD);
    expect(section).to.include('FEE_WALLET_LOW');
    expect(section).to.include('ETH: fee wallet <i>too poor</i> for a top-up');
    expect(await page.locator('main i').count()).to.equal(1); // the page's own <i>available</i>; the alert's markup is text
    expect(await page.locator(`#app-${appId} tr`, { hasText: 'no hot wallet' }).locator('td').first().textContent()).to.equal('BTC');
    await shot(page, 'wallets');
    // keyset paging and a bad filter
    await page.goto(`${base}/wallets?after=${appId}`);
    expect(await page.textContent('main')).to.include('No applications');
    const bad = await page.request.get(`${base}/wallets?app=abc`);
    expect(bad.status()).to.equal(400);

    await page.goto(`${base}/keystore`);
    const ks = (await page.textContent('main'))!;
    expect(ks).to.include('This process has not opened the key store');
    expect(ks).to.include('software');
    expect(await page.locator('.stat', { hasText: 'Deposit keys' }).locator('b').textContent()).to.equal('2');
    expect(await page.locator('.stat', { hasText: 'Hot wallet keys' }).locator('b').textContent()).to.equal('1');
    expect(await page.locator('.stat', { hasText: 'Fee wallet keys' }).locator('b').textContent()).to.equal('1');
    expect(ks).to.not.match(/passphrase:|mnemonic|TEST_MASTER/i);
    await shot(page, 'keystore');
    await page.close();
  });

  it('the collection page lists why addresses are not planned: a wait (looked at again every pass) with its start, a skip with its reason', async () => {
    const waiting = `0x${'7'.repeat(40)}`;
    const skipped = `0x${'8'.repeat(40)}`;
    await sql(
      `INSERT INTO collection_skips (application_id, chain_token_id, address, amount, fee, reason, skipped_at, holds, since) VALUES
         ($1, $2, $3, 30000000, NULL, 'the sweep cannot be priced: eth_estimateGas refused the transfer: <b>paused</b>', now(), false, '2026-01-02 03:04:05+00'),
         ($1, $2, $4, 1000, 50000000000000, 'below the threshold of 5000000', now(), true, now())`, [appId, USDC, waiting, skipped]);
    try {
      const page = await login('olga');
      await page.goto(`${base}/collection`);
      const row = (await page.locator('tr', { hasText: waiting }).first().textContent())!;
      expect(row).to.include(`waiting since 2026-01-02T03:04:05: ${waiting} (30 USDC): the sweep cannot be priced: eth_estimateGas refused the transfer: <b>paused</b>`);
      expect(row).to.include(`${skipped} (0.001 USDC): below the threshold of 5000000`);
      expect(row).to.not.include(`waiting since 2026-01-02T03:04:05: ${skipped}`);
      expect(await page.locator('main b', { hasText: 'paused' }).count(), 'the node\'s reason is text, never markup').to.equal(0);
      await shot(page, 'collection-waits');
      await page.close();
      // the CLI says the same
      const status = await wcs(['collect', 'status', '--app', String(appId)]);
      const usdc = status.tokens.find((t: { chainTokenId: number }) => t.chainTokenId === USDC);
      expect(usdc.skipped.map((k: { address: string; kind: string; fee: string | null }) => [k.address, k.kind, k.fee])).to.deep.include.members([[waiting, 'WAIT', null], [skipped, 'SKIP', '0.00005']]);
    } finally {
      await sql('DELETE FROM collection_skips WHERE address = ANY($1::text[])', [[waiting, skipped]]);
    }
  });

  it('an operator changes a policy through the form: the row changes and the audit entry holds before and after; bad input changes nothing', async () => {
    const page = await login('olga');
    await page.goto(`${base}/collection`);
    const row = page.locator(`#app-${appId} tr`, { hasText: 'USDC' }).first();
    expect(await row.textContent()).to.match(/ETH USDC.*enabled.*5.*10.*3000.*true.*300.*off.*10 \/ 50 \/ 100/s);
    expect(await page.textContent(`#app-${appId}`)).to.include('ON_CONFIRM');
    await shot(page, 'collection');
    await Promise.all([page.waitForLoadState('load'), row.locator('a', { hasText: 'Change' }).click()]);
    expect(await page.inputValue('#threshold')).to.equal('5');
    expect(await page.inputValue('#hotHigh')).to.equal('100');
    await shot(page, 'collection-policy');

    await page.fill('#threshold', '9.5');
    await page.fill('#hotHigh', '200');
    await page.fill('#maxWaitSeconds', '600');
    await Promise.all([page.waitForLoadState('load'), page.click('form.card button[type=submit]')]);
    expect(await page.textContent('[role=status]')).to.include('Saved: changed threshold, maxWaitSeconds, hotHigh');
    expect(await policy()).to.deep.equal({
      enabled: true, threshold: '9500000', max_fee_bps: 1000, native_value: '3000000000', on_confirmed: true, schedule_seconds: 300, max_wait_seconds: 600,
      hot_low: '10000000', hot_target: '50000000', hot_high: '200000000',
    });
    let log = await audit('collect.policy.set');
    expect(log).to.have.length(2);
    expect(log[1]).to.deep.include({ actor: 'olga', actor_role: 'operator', channel: 'console', target: `app:${appId}/token:${USDC}` });
    expect(log[1].source).to.match(/127\.0\.0\.1|::1/);
    expect(log[1].before).to.deep.include({ threshold: '5', hotHigh: '100', maxWaitSeconds: null });
    expect(log[1].after).to.deep.include({ threshold: '9.5', hotHigh: '200', maxWaitSeconds: 600, nativeValue: '3000' });
    await shot(page, 'collection-policy-saved');

    // saved again unchanged: no entry
    await Promise.all([page.waitForLoadState('load'), page.click('form.card button[type=submit]')]);
    expect(await page.textContent('[role=status]')).to.include('Nothing changed');
    expect(await audit('collect.policy.set')).to.have.length(2);

    // bad input: 400, every problem named, the typed values kept, nothing written
    const before = await policy();
    await page.fill('#threshold', '-3');
    await page.fill('#hotLow', '500');
    const [response] = await Promise.all([page.waitForResponse((r) => r.url() === `${base}/collection/policy` && r.request().method() === 'POST'), page.click('form.card button[type=submit]')]);
    expect(response.status()).to.equal(400);
    await page.waitForLoadState('load');
    const alert = (await page.textContent('[role=alert]'))!;
    expect(alert).to.include('Nothing was changed');
    expect(alert).to.include('Threshold: must not be negative, got "-3"');
    expect(alert).to.include('Hot wallet low watermark: the low watermark 500 is above the target 50');
    expect(await page.inputValue('#threshold')).to.equal('-3');
    await shot(page, 'collection-policy-refused');
    expect(await policy()).to.deep.equal(before);
    log = await audit('collect.policy.set');
    expect(log).to.have.length(2);

    // an operator may not retry (approvers decide): no button, and the server refuses
    await page.goto(`${base}/collection/items/${consoleItem}`);
    expect(await page.locator('button', { hasText: 'Retry' }).count()).to.equal(0);
    const csrf = (await ctx.cookies()).find((c) => c.name === 'wcs_csrf')!.value;
    const refused = await page.request.post(`${base}/collection/items/${consoleItem}/retry`, { form: { _csrf: csrf }, maxRedirects: 0 });
    expect(refused.status()).to.equal(403);
    expect(await refused.text()).to.include('Your role (operator) may not retry collection items');
    expect(await itemRow(consoleItem)).to.include({ status: 'FAILED', retry_times: 0 });
    await page.close();
  });

  it('a viewer reads the policy but has no form to send, and the server refuses the POST (403) with nothing changed', async () => {
    const page = await login('vic');
    await page.goto(`${base}/collection/policy?app=${appId}&chain=ETH&token=USDC`);
    expect(await page.locator('form.card button[type=submit]').count()).to.equal(0);
    expect(await page.textContent('form.card')).to.include('Your role (viewer) may read this policy');
    await shot(page, 'collection-policy-viewer');
    const before = await policy();
    const entries = (await audit('collect.policy.set')).length;
    const csrf = (await ctx.cookies()).find((c) => c.name === 'wcs_csrf')!.value;
    const refused = await page.request.post(`${base}/collection/policy`, {
      form: { _csrf: csrf, app: String(appId), chain: 'ETH', token: String(USDC), enabled: 'false', threshold: '1', maxFeePercent: '50', nativeValue: '1', onConfirmed: 'true', scheduleSeconds: '', maxWaitSeconds: '', hotLow: '', hotTarget: '', hotHigh: '' },
      maxRedirects: 0,
    });
    expect(refused.status()).to.equal(403);
    expect(await refused.text()).to.include('Your role (viewer) may not change collection policies');
    expect(await policy()).to.deep.equal(before);
    expect(await audit('collect.policy.set')).to.have.length(entries);
    await page.close();
  });

  it('an approver retries a FAILED item from its page: re-queued exactly as `wcs collect retry` does, and both are audited', async () => {
    const page = await login('abe');
    await page.goto(`${base}/collection/items?status=FAILED`);
    const ids = await page.locator('tbody tr td:first-child').allTextContents();
    expect(ids).to.deep.equal([String(cliItem), String(consoleItem)]);
    expect(await page.textContent('tbody')).to.include('SWEEP_REVERTED: the sweep <b>reverted</b> on chain');
    await shot(page, 'collection-items');

    await Promise.all([page.waitForLoadState('load'), page.locator('tbody a', { hasText: String(consoleItem) }).click()]);
    const detail = (await page.textContent('main'))!;
    expect(detail).to.include('FAILED: SWEEP_REVERTED: the sweep <b>reverted</b> on chain');
    expect(detail).to.match(/Gas funding.*SUCCESS.*0x2222222222222222222222222222222222222222.*0\.001 ETH/s);
    expect(await page.getAttribute(`a[href="/deposits/${recharge}"]`, 'href')).to.equal(`/deposits/${recharge}`);
    expect(detail).to.match(/sweep: transfer \d+.*FAILED.*REVERTED: execution reverted/s);
    expect(detail).to.include(`0x${'cd'.repeat(31)}01`);
    expect(await page.locator('main b').filter({ hasText: 'reverted' }).count()).to.equal(0);
    await shot(page, 'collection-item');
    await Promise.all([page.waitForLoadState('load'), page.locator('button', { hasText: 'Retry' }).click()]);
    expect(page.url()).to.equal(`${base}/collection/items/${consoleItem}`);
    expect(await page.textContent('main')).to.match(/Status\s*PLANNED/);
    expect(await page.textContent('main')).to.include('collect.item.retry by abe (approver, console)');
    await shot(page, 'collection-item-retried');

    // the CLI retries the twin item; both end in the same state
    const out = await wcs(['collect', 'retry', '--item', String(cliItem)]);
    expect(out).to.include({ status: 'PLANNED', retryTimes: 1 });
    const viaConsole = await itemRow(consoleItem);
    expect(viaConsole).to.deep.equal({
      status: 'PLANNED', retry_times: 1, failure_code: null, failure_message: null, waiting_reason: null, transfer_id: null, topup_kept: true, tx_hash: null, gas_fee: null,
      fee_per_unit: '1000000000', finished_at: null,
    });
    expect(await itemRow(cliItem)).to.deep.equal(viaConsole);
    const log = await audit('collect.item.retry');
    expect(log.map((e) => [e.actor, e.channel, e.target])).to.deep.equal([['abe', 'console', `collection-item:${consoleItem}`], [cliUser, 'cli', `collection-item:${cliItem}`]]);
    expect(log[0].before).to.include({ status: 'FAILED', retryTimes: 0, failureCode: 'SWEEP_REVERTED' });
    expect(log[0].after).to.include({ status: 'PLANNED', retryTimes: 1, keptTopUp: true });

    // no longer FAILED: a second retry is refused (409), nothing written
    const csrf = (await ctx.cookies()).find((c) => c.name === 'wcs_csrf')!.value;
    const again = await page.request.post(`${base}/collection/items/${consoleItem}/retry`, { form: { _csrf: csrf }, maxRedirects: 0 });
    expect(again.status()).to.equal(409);
    expect(await again.text()).to.include('only a FAILED item can be retried');
    expect((await page.request.post(`${base}/collection/items/99999999/retry`, { form: { _csrf: csrf }, maxRedirects: 0 })).status()).to.equal(404);
    expect(await audit('collect.item.retry')).to.have.length(2);
    expect(await itemRow(consoleItem)).to.include({ retry_times: 1 });

    // cold transfers: listed, no decision offered
    await page.goto(`${base}/collection/items?stage=COLD_TRANSFER`);
    expect(await page.locator('tbody tr td:first-child').allTextContents()).to.deep.equal([String(coldItem)]);
    expect(await page.textContent('h1')).to.equal('Cold transfers');
    await shot(page, 'collection-cold');
    await page.goto(`${base}/collection/items/${coldItem}`);
    expect(await page.locator('button', { hasText: 'Retry' }).count()).to.equal(0);
    expect(await page.textContent('main')).to.include('cold transfers are not retried');
    // keyset paging by id, newest first
    await page.goto(`${base}/collection/items?app=${appId}&before=${coldItem}`);
    expect(await page.locator('tbody tr td:first-child').allTextContents()).to.deep.equal([String(cliItem), String(consoleItem)]);
    expect((await page.request.get(`${base}/collection/items?status=NOPE`)).status()).to.equal(400);
    expect((await page.request.get(`${base}/collection/items/abc`)).status()).to.equal(404);
    expect(dialogs, 'no script ran').to.deep.equal([]);
    await page.close();
  });
});
