/**
 * The console's withdrawals pages in Chromium on a real EVM node (anvil), through the service
 * with its workers (hot wallet ledger, payout worker, callbacks) and the console
 * (docs/console.md, "Withdrawals" and "Four eyes"):
 * - an operator (olga) sets an approval threshold and the destination lists on the risk rules
 *   page (RiskRules, as `wcs withdraw limits|block|...`); orders above it are held;
 * - four eyes: after `wcs withdraw limits` by this system user, `wcs withdraw approve` by the same
 *   user is refused (exit 1, FOUR_EYES_REQUIRED, nothing changed, nothing audited);
 * - a viewer's approval is refused by the server (403), an operator sees no decision forms;
 * - an approver (ann), not the last changer of the rule, approves with a note in the browser and
 *   the order reaches SUCCESS on anvil; she rejects another with a note and it ends FAILED with
 *   the note in failReason; deciding it again is refused (409);
 * - every change is in the audit log (and on its page). Screenshots of every page.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Pool } from 'pg';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { sendNative, startAnvil, startBlockClock, type AnvilDevnet, type BlockClock } from '@wcs/adapter-evm/devnet';
import { createTestDatabase, prepareTestKeystore, TEST_ACTOR, testConfig, testEnv, testLogger, type TestDatabase } from '@wcs/server/testing';
import { WcsService, type CreatedApplication } from '@wcs/server';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver } from './support/callback-receiver';
import { expectOk, pollUntil } from './support/expect';
import { freshEvmAddress, settleOnAnvil, waitForFunded, waitForHotWallet, type Withdraw } from './support/payouts';
import { pastFirstLogin } from './support/first-login';
import { cliJson, runCli } from './support/processes';
import { totp } from './support/totp';

const CHROMIUM = process.env.WCS_TEST_CHROMIUM ?? '/usr/bin/chromium';
const SHOTS = path.resolve(__dirname, '..', 'screenshots');
const CREATE = '/api/v1/wallet/withdraw/create';
const GET = '/api/v1/wallet/withdraw/get';
const ETH_TEST_CHAIN_ID = 102;
const ETH_TOKEN_ID = 10200;
const ETHER = 10n ** 18n;

describe('console withdrawals pages in Chromium on anvil (risk rules, held orders, four eyes, approve and reject, audit)', function () {
  this.timeout(300_000);
  let anvil: AnvilDevnet;
  let clock: BlockClock;
  let db: TestDatabase;
  let svc: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  let pool: Pool;
  let base: string;
  let profile: string;
  let ctx: BrowserContext;
  const receiver = new CallbackReceiver();
  const accounts: Record<string, { password: string; secret: string | null }> = {};
  const dialogs: string[] = [];
  const held: { approve: number; reject: number } = { approve: 0, reject: 0 };
  let blocked: string;
  /** ann's page: an approver's TOTP code is good for one login only, so she logs in once. */
  let annPage: Page;
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const cliEnv = () => ({ ...process.env, ...testEnv(db.url) });
  async function wcs(args: string[]) {
    const r = await runCli([...args, '--json'], cliEnv());
    expect(r.code, r.stdout + r.stderr).to.equal(0);
    return cliJson(args, r);
  }
  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  const usedCodes: Record<string, string> = {};
  async function login(username: string): Promise<Page> {
    await ctx.clearCookies();
    const page = await ctx.newPage();
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    const a = accounts[username]!;
    await page.goto(`${base}/login`);
    await page.fill('#username', username);
    await page.fill('#password', a.password);
    if (a.secret) {
      // a code is accepted once: a second login within the same 30-second step waits for the next code
      let code = totp(a.secret);
      while (code === usedCodes[username]) {
        await new Promise((r) => setTimeout(r, 500));
        code = totp(a.secret);
      }
      usedCodes[username] = code;
      await page.fill('#totp', code);
    }
    await Promise.all([page.waitForLoadState('load'), page.click('button[type=submit]')]);
    expect(await page.textContent('nav .who'), `${username} signed in`).to.include(username);
    return page;
  }
  const csrf = async () => (await ctx.cookies()).find((c) => c.name === 'wcs_csrf')!.value;
  const order = async (id: number) => (await q<{ approval: string; status: string; fail_reason: string | null; transfer_id: string | null }>(
    'SELECT approval, status, fail_reason, transfer_id FROM withdrawals WHERE id = $1', [id]))[0]!;
  const audit = async (action: string) => q<{ actor: string; actor_role: string; channel: string; target: string; before: Record<string, unknown> | null; after: Record<string, unknown> | null }>(
    'SELECT actor, actor_role, channel, target, before, after FROM audit_log WHERE action = $1 ORDER BY id', [action]);
  const get = async (id: number): Promise<Withdraw> => expectOk(await client.get(`${GET}?id=${id}`)) as Withdraw;
  const kv = async (page: Page, k: string) => (await page.locator('dl.kv').first().locator('dt', { hasText: new RegExp(`^${k}$`) }).locator('xpath=following-sibling::dd[1]').textContent())!.trim();

  before(async () => {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM}`);
    fs.mkdirSync(SHOTS, { recursive: true });
    anvil = await startAnvil({ chainId: 11155111 });
    clock = await startBlockClock(anvil.url, 100);
    await prepareTestKeystore();
    await receiver.start();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 2 });
    for (const [username, role] of [['olga', 'operator'], ['ann', 'approver'], ['vic', 'viewer']] as const) {
      const made = await wcs(['operator', 'create', '--username', username, '--role', role]);
      accounts[username] = { password: made.password, secret: made.totpUri ? new URL(made.totpUri).searchParams.get('secret') : null };
    }
    // past the first login: this file is about other pages (the first-login rule: console-first-login-browser.test.ts)
    await pastFirstLogin(db.url, ['olga', 'ann', 'vic']);
    svc = await WcsService.start(testConfig(db.url, {
      WCS_RPC_TEST_ETH: anvil.url, WCS_CALLBACK_POLL_MS: '50', WCS_CALLBACK_ALLOW_PRIVATE: '1', WCS_CONSOLE_PORT: '0',
      WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '200',
    }), testLogger(), { api: true, workers: true, console: true });
    base = svc.consoleUrl;
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'payouts', environment: 'test', chains: ['ETH'] });
    await svc.storage.applications.setCallback(TEST_ACTOR, app.id, 'WITHDRAW', receiver.url('/merchant/withdraw'));
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    const hot = await waitForHotWallet(q, app.id, ETH_TEST_CHAIN_ID, 30_000);
    await sendNative(anvil.url, hot, 100n * ETHER, { wait: true });
    await waitForFunded(q, app.id, [ETH_TOKEN_ID]);
    profile = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-chromium-'));
    ctx = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM, headless: true, viewport: { width: 1280, height: 800 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    });
  });
  after(async () => {
    await ctx?.close();
    if (profile) fs.rmSync(profile, { recursive: true, force: true });
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await receiver.stop();
    await clock?.stop();
    await anvil?.stop();
  });

  it('an operator sets the approval threshold and the destination lists on the risk rules page; bad input is refused; each change is audited once', async () => {
    const page = await login('olga');
    await page.goto(`${base}/withdrawals/rules`);
    await shot(page, 'withdrawal-rules-choose');
    await page.selectOption('select[name=app]', String(app.id));
    await Promise.all([page.waitForLoadState('load'), page.click('form.filters button')]);
    expect(page.url()).to.equal(`${base}/withdrawals/rules?app=${app.id}`);
    expect(await page.textContent('tbody')).to.include('No limits');
    // too many decimals for ETH: refused, nothing set
    await page.selectOption('#token', String(ETH_TOKEN_ID));
    await page.fill('#approvalOver', '1.0000000000000000001');
    const [bad] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/withdrawals/rules/limits')), page.click('button:has-text("Set limits")')]);
    expect(bad.status()).to.equal(400);
    expect(await page.textContent('[role=alert]')).to.match(/^APPLICATION_INVALID: --approval-over: .*\(ETH has 18 decimals\)$/);
    expect(await q('SELECT * FROM withdraw_limits')).to.deep.equal([]);
    expect(await audit('withdraw.limits.set')).to.deep.equal([]);
    // the threshold: orders above 1 ETH wait for an approver
    await page.goto(`${base}/withdrawals/rules?app=${app.id}`);
    await page.selectOption('#token', String(ETH_TOKEN_ID));
    await page.fill('#perOrder', '50');
    await page.fill('#approvalOver', '1');
    await Promise.all([page.waitForURL(/done=/), page.click('button:has-text("Set limits")')]);
    expect(await page.textContent('[role=status]')).to.include(`Saved: limits of token ${ETH_TOKEN_ID}`);
    const limitsRow = page.locator('tr', { hasText: 'ETH (10200)' });
    expect((await limitsRow.locator('td').allTextContents()).slice(0, 5)).to.deep.equal(['ETH', 'ETH (10200)', '50', 'none', '1']);
    expect(await limitsRow.locator('td').nth(5).textContent()).to.match(/^olga \(operator, console\) at \d{4}-\d\d-\d\dT/);
    expect(await q('SELECT per_order_max::text AS p, daily_max::text AS d, approval_threshold::text AS a FROM withdraw_limits WHERE application_id = $1', [app.id]))
      .to.deep.equal([{ p: (50n * ETHER).toString(), d: null, a: ETHER.toString() }]);
    // the block list: add (written in lower case, kept in EIP-55 form), a bad address refused
    blocked = freshEvmAddress();
    await page.selectOption('#chain', 'ETH');
    await page.fill('#address', blocked);
    await Promise.all([page.waitForURL(/done=/), page.click('button:has-text("Add")')]);
    expect((await page.textContent('main'))!.toLowerCase()).to.include(blocked);
    await page.fill('#address', 'not-an-address');
    const [badAddr] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/withdrawals/rules/address')), page.click('button:has-text("Add")')]);
    expect(badAddr.status()).to.equal(400);
    expect(await page.textContent('[role=alert]')).to.include('WITHDRAW_ADDRESS_INVALID');
    // allowlist-only on, then off again (the later orders go to fresh destinations)
    await page.goto(`${base}/withdrawals/rules?app=${app.id}`);
    await Promise.all([page.waitForURL(/done=/), page.click('button:has-text("Turn allowlist-only on")')]);
    expect(await page.textContent('main')).to.include('Allowlist-only: on');
    await shot(page, 'withdrawal-rules');
    await Promise.all([page.waitForURL(/done=/), page.click('button:has-text("Turn allowlist-only off")')]);
    expect(await page.textContent('main')).to.include('Allowlist-only: off');
    // an unknown application is a refusal page; a viewer may not change rules (403, nothing changed)
    const none = await page.request.get(`${base}/withdrawals/rules?app=999`);
    expect(none.status()).to.equal(404);
    const limits = await audit('withdraw.limits.set');
    expect(limits.map((e) => [e.actor, e.actor_role, e.channel, e.target])).to.deep.equal([['olga', 'operator', 'console', `app:${app.id}/token:${ETH_TOKEN_ID}`]]);
    expect(limits[0]!.after).to.include({ approvalThreshold: ETHER.toString(), perOrderMax: (50n * ETHER).toString() });
    expect((await audit('withdraw.blocklist.add')).map((e) => [e.actor, e.target.toLowerCase()])).to.deep.equal([['olga', `app:${app.id}/eth:${blocked}`]]);
    expect((await audit('withdraw.allowlist-only.set')).map((e) => [e.actor, e.after])).to.deep.equal([['olga', { allowlistOnly: true }], ['olga', { allowlistOnly: false }]]);
    await page.close();

    const viewer = await login('vic');
    await viewer.goto(`${base}/withdrawals/rules?app=${app.id}`);
    expect(await viewer.locator('button', { hasText: 'Set limits' }).count()).to.equal(0);
    await shot(viewer, 'withdrawal-rules-viewer');
    const refused = await viewer.request.post(`${base}/withdrawals/rules/limits`, { form: { _csrf: await csrf(), app: String(app.id), token: String(ETH_TOKEN_ID) }, maxRedirects: 0 });
    expect(refused.status()).to.equal(403);
    expect(await refused.text()).to.include('Your role (viewer) may not change withdrawal risk rules');
    expect(await q('SELECT count(*)::int AS n FROM withdraw_limits')).to.deep.equal([{ n: 1 }]);
    await viewer.close();
  });

  it('orders above the threshold are held; the list filters them; an operator sees who changed the rule but no decision forms; a viewer\'s POST approve is refused (403)', async () => {
    const place = async (amount: string) => (expectOk(await client.post(CREATE, { appOrderNo: `o-${Math.random().toString(36).slice(2)}`, chainCode: 'ETH', chainTokenId: ETH_TOKEN_ID, toAddress: freshEvmAddress(), amount })) as Withdraw).id;
    held.approve = await place('2');
    held.reject = await place('3');
    const low = await place('0.5');
    const toBlocked = (expectOk(await client.post(CREATE, { appOrderNo: 'to-blocked', chainCode: 'ETH', chainTokenId: ETH_TOKEN_ID, toAddress: blocked, amount: '0.1' })) as Withdraw).id;
    for (const id of [held.approve, held.reject, low, toBlocked]) {
      const r = await pollUntil(() => get(id), (w) => w.riskLevel !== null, 30_000, 100);
      expect(r.ok, `order ${id} assessed`).to.equal(true);
    }
    expect(await get(held.approve)).to.include({ status: 'PROCESSING', riskLevel: 'HIGH', riskReason: 'AMOUNT_OVER_APPROVAL_THRESHOLD', txHash: null });
    expect(await get(toBlocked)).to.include({ status: 'FAILED', riskLevel: 'BLOCKED', riskReason: 'DESTINATION_BLOCKED' });
    expect(await order(held.reject)).to.include({ approval: 'PENDING', transfer_id: null });

    const page = await login('olga');
    await page.goto(`${base}/withdrawals`);
    await shot(page, 'withdrawals');
    const listed = async () => page.locator('tbody tr td:first-child').evaluateAll((tds) => tds.map((td) => Number(td.textContent)));
    expect(await listed()).to.deep.equal([toBlocked, low, held.reject, held.approve]);
    await page.goto(`${base}/withdrawals?approval=PENDING`);
    expect(await listed()).to.deep.equal([held.reject, held.approve]);
    await page.goto(`${base}/withdrawals?status=FAILED&app=${app.id}&chain=ETH`);
    expect(await listed()).to.deep.equal([toBlocked]);
    await page.goto(`${base}/withdrawals?before=${held.reject}`);
    expect(await listed()).to.deep.equal([held.approve]);
    expect((await page.request.get(`${base}/withdrawals?approval=MAYBE`)).status()).to.equal(400);
    await page.goto(`${base}/withdrawals?approval=PENDING`);
    await shot(page, 'withdrawals-pending');
    await page.goto(`${base}/withdrawals/${held.approve}`);
    expect(await kv(page, 'riskLevel')).to.equal('HIGH');
    expect(await kv(page, 'approval')).to.equal('PENDING');
    expect(await page.textContent('main')).to.include('last changed by olga (operator, via console)');
    expect(await page.textContent('main')).to.include('Your role (operator) may not decide withdrawals');
    expect(await page.locator('button', { hasText: 'Approve' }).count()).to.equal(0);
    await shot(page, 'withdrawal-held-operator');
    await page.close();

    const viewer = await login('vic');
    const r = await viewer.request.post(`${base}/withdrawals/${held.approve}/approve`, { form: { _csrf: await csrf(), note: 'viewer says yes' }, maxRedirects: 0 });
    expect(r.status()).to.equal(403);
    expect(await r.text()).to.include('Your role (viewer) may not decide withdrawals');
    expect(await order(held.approve)).to.include({ approval: 'PENDING', status: 'PROCESSING', transfer_id: null });
    expect(await audit('withdraw.approve')).to.deep.equal([]);
    await viewer.close();
  });

  it('four eyes: after `wcs withdraw limits` by this system user, `wcs withdraw approve` by the same user is refused (exit 1, FOUR_EYES_REQUIRED), nothing changed or audited', async () => {
    await wcs(['withdraw', 'limits', '--app', String(app.id), '--token', String(ETH_TOKEN_ID), '--per-order', '50', '--approval-over', '1.5']);
    const changes = await audit('withdraw.limits.set');
    expect(changes).to.have.length(2);
    const shell = changes[1]!.actor;
    expect(shell).to.match(/^cli:/);
    const human = await runCli(['withdraw', 'approve', String(held.approve), '--note', 'my own rule'], cliEnv());
    expect(human.code, human.stdout + human.stderr).to.equal(1);
    expect(human.stderr).to.include(`wcs: FOUR_EYES_REQUIRED: withdrawal ${held.approve}: ${shell} last changed the rule that held this withdrawal: another approver must decide it`);
    const json = await runCli(['withdraw', 'approve', String(held.approve), '--json'], cliEnv());
    expect(json.code).to.equal(1);
    expect(JSON.parse(json.stdout).error).to.include({ name: 'FOUR_EYES_REQUIRED' });
    expect(await order(held.approve)).to.include({ approval: 'PENDING', status: 'PROCESSING', transfer_id: null });
    expect(await audit('withdraw.approve')).to.deep.equal([]);
    // unknown ids are refused with their own code
    const unknown = await runCli(['withdraw', 'reject', '987654'], cliEnv());
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.include('wcs: WITHDRAWAL_NOT_FOUND: withdrawal 987654 not found');
    // in the console: an approver on record as the rule's last changer is refused by the server
    // (no role holds both rights today, so that history is written directly, as a role change would leave it)
    await q(`INSERT INTO audit_log (actor, actor_role, channel, source, action, target, after) VALUES ('ann', 'operator', 'console', 'test', 'withdraw.limits.set', $1, '{"note": "before ann became an approver"}')`, [`app:${app.id}/token:${ETH_TOKEN_ID}`]);
    const annOwn = await login('ann');
    await annOwn.goto(`${base}/withdrawals/${held.approve}`);
    expect(await annOwn.textContent('main')).to.include('You may not approve');
    expect(await annOwn.locator('button', { hasText: 'Approve' }).count()).to.equal(0);
    await shot(annOwn, 'withdrawal-four-eyes');
    const csrf = (await annOwn.context().cookies()).find((c) => c.name === 'wcs_csrf')!;
    const forced = await annOwn.request.post(`${base}/withdrawals/${held.approve}/approve`, { form: { _csrf: csrf.value, note: 'my own rule' }, maxRedirects: 0 });
    expect(forced.status()).to.equal(403);
    expect(await forced.text()).to.include('FOUR_EYES_REQUIRED');
    expect(await order(held.approve)).to.include({ approval: 'PENDING', status: 'PROCESSING', transfer_id: null });
    expect(await audit('withdraw.approve')).to.deep.equal([]);
    await annOwn.close();
    // the console shows the last changer; olga puts her threshold back (and is the last changer again)
    const page = await login('olga');
    await page.goto(`${base}/withdrawals/rules?app=${app.id}`);
    expect(await page.locator('tr', { hasText: 'ETH (10200)' }).locator('td').nth(5).textContent()).to.include('ann (operator, console)');
    await page.selectOption('#token', String(ETH_TOKEN_ID));
    await page.fill('#perOrder', '50');
    await page.fill('#approvalOver', '1');
    await Promise.all([page.waitForURL(/done=/), page.click('button:has-text("Set limits")')]);
    expect((await audit('withdraw.limits.set')).map((e) => e.actor)).to.deep.equal(['olga', shell, 'ann', 'olga']);
    await page.close();
  });

  it('the approver, not the last changer of the rule, approves with a note in the browser; the order reaches SUCCESS on anvil and its page shows the transaction', async () => {
    annPage = await login('ann');
    const page = annPage;
    await page.goto(`${base}/withdrawals/${held.approve}`);
    expect(await page.textContent('main')).to.include('last changed by olga (operator, via console)');
    expect(await page.textContent('main')).to.include('You may approve or reject this withdrawal.');
    await shot(page, 'withdrawal-held-approver');
    await page.fill('#approve-note', 'checked with the merchant <b>ok</b>');
    await Promise.all([page.waitForURL(/decided=APPROVED/), page.click('button:has-text("Approve")')]);
    expect(await page.textContent('[role=status]')).to.include('Decision recorded: APPROVED');
    expect(await order(held.approve)).to.include({ approval: 'APPROVED' });
    const done = await settleOnAnvil<Withdraw>(client, anvil.url, held.approve, 'SUCCESS');
    expect(done.txHash).to.match(/^0x[0-9a-f]{64}$/);
    await page.goto(`${base}/withdrawals/${held.approve}`);
    expect(await kv(page, 'status')).to.equal('SUCCESS');
    expect(await kv(page, 'txHash')).to.equal(done.txHash);
    expect(await page.locator('button', { hasText: 'Approve' }).count()).to.equal(0);
    expect(await page.textContent('main')).to.match(/transfer\s*\d+/);
    const tasks = await q<{ task_id: string }>('SELECT task_id::text AS task_id FROM withdraw_notices WHERE withdrawal_id = $1 ORDER BY task_id', [held.approve]);
    expect(tasks.length).to.be.greaterThan(0);
    expect(await page.locator('table a[href^="/callbacks/"]').evaluateAll((as) => as.map((a) => a.getAttribute('href')))).to.deep.equal(tasks.map((t) => `/callbacks/${t.task_id}`));
    await shot(page, 'withdrawal-success');
    const approvals = await audit('withdraw.approve');
    expect(approvals).to.have.length(1);
    expect(approvals[0]).to.deep.include({ actor: 'ann', actor_role: 'approver', channel: 'console', target: `withdrawal:${held.approve}`, before: { approval: 'PENDING', status: 'PROCESSING' } });
    expect(approvals[0]!.after).to.deep.equal({ approval: 'APPROVED', status: 'PROCESSING', note: 'checked with the merchant <b>ok</b>' });
  });

  it('the approver rejects the other held order with a note: FAILED with the note in failReason and a FAILED callback; deciding it again is refused (409)', async () => {
    const page = annPage;
    await page.goto(`${base}/withdrawals/${held.reject}`);
    await page.fill('#reject-note', 'user asked to cancel');
    await Promise.all([page.waitForURL(/decided=REJECTED/), page.click('button:has-text("Reject")')]);
    expect(await kv(page, 'status')).to.equal('FAILED');
    expect(await kv(page, 'failReason')).to.equal('rejected by the operator: user asked to cancel');
    expect(await order(held.reject)).to.deep.equal({ approval: 'REJECTED', status: 'FAILED', fail_reason: 'rejected by the operator: user asked to cancel', transfer_id: null });
    expect(await get(held.reject)).to.include({ status: 'FAILED', failReason: 'rejected by the operator: user asked to cancel', txHash: null });
    await shot(page, 'withdrawal-rejected');
    const again = await page.request.post(`${base}/withdrawals/${held.reject}/approve`, { form: { _csrf: await csrf(), note: '' }, maxRedirects: 0 });
    expect(again.status()).to.equal(409);
    expect(await again.text()).to.include(`WITHDRAWAL_NOT_PENDING: withdrawal ${held.reject} is not waiting for approval (approval REJECTED, status FAILED)`);
    const missing = await page.request.post(`${base}/withdrawals/987654/reject`, { form: { _csrf: await csrf(), note: '' }, maxRedirects: 0 });
    expect(missing.status()).to.equal(404);
    const long = await page.request.post(`${base}/withdrawals/${held.reject}/reject`, { form: { _csrf: await csrf(), note: 'x'.repeat(201) }, maxRedirects: 0 });
    expect(long.status()).to.equal(400);
    const rejections = await audit('withdraw.reject');
    expect(rejections.map((e) => [e.actor, e.channel, e.target, e.after])).to.deep.equal([['ann', 'console', `withdrawal:${held.reject}`, { approval: 'REJECTED', status: 'FAILED', note: 'user asked to cancel' }]]);
    const cb = await pollUntil(async () => receiver.received.map((r) => JSON.parse(r.body.toString('utf8')) as { id: number; status: string }).filter((e) => e.id === held.reject), (e) => e.length > 0, 30_000, 100);
    expect(cb.result.map((e) => e.status)).to.deep.equal(['FAILED']);
    // the audit page shows every change of this test
    await page.goto(`${base}/audit`);
    const text = (await page.textContent('table'))!;
    for (const a of ['withdraw.limits.set', 'withdraw.blocklist.add', 'withdraw.allowlist-only.set', 'withdraw.approve', 'withdraw.reject']) expect(text, a).to.include(a);
    expect(text).to.include('checked with the merchant <b>ok</b>');
    await shot(page, 'withdrawals-audit');
    expect(dialogs).to.deep.equal([]);
    await page.close();
  });
});
