/**
 * The console's deposits pages in Chromium (docs/console.md, "Deposits"): the recharge list of
 * every application with its filters and keyset paging, one recharge record with its callback
 * tasks, and the unattributed memo deposits with the Assign form, which calls the same
 * RechargeService.assign as `wcs deposits assign` and is audited (deposit.assign).
 *
 * The merchant's XRP (testnet) users get their shared address and memos through the signed API.
 * No XRP node is reachable here, so the deposits the scanner would have recorded are written into
 * Postgres as the scanner writes them: two unattributed deposits to the shared address (an unknown
 * memo, and none), and 55 settled recharge records to page through. Scanning itself is tested
 * on recorded ledgers by deposits-memo.test.ts.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Pool } from 'pg';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { createTestDatabase, prepareTestKeystore, TEST_ACTOR, testConfig, testEnv, testLogger, type TestDatabase } from '@wcs/server/testing';
import { WcsService, type CreatedApplication } from '@wcs/server';
import { SigningClient } from './client/signing-client';
import { expectOk } from './support/expect';
import { pastFirstLogin } from './support/first-login';
import { cliJson, runCli } from './support/processes';
import { ADDRESS_CREATE } from './support/recharge-types';

const CHROMIUM = process.env.WCS_TEST_CHROMIUM ?? '/usr/bin/chromium';
const SHOTS = path.resolve(__dirname, '..', 'screenshots');
const XRP_TEST = 106;
const XRP_TOKEN = 10600;
const PAGED = 55;

describe('console deposits pages in Chromium (recharge list and detail, unattributed memo deposits, assign, audit)', function () {
  this.timeout(180_000);
  let db: TestDatabase;
  let svc: WcsService;
  let base: string;
  let pool: Pool;
  let profile: string;
  let ctx: BrowserContext;
  let app: CreatedApplication;
  let other: CreatedApplication;
  let shared: string;
  const unattributedIds: Record<'unknown' | 'missing', number> = { unknown: 0, missing: 0 };
  const accounts: Record<string, { password: string }> = {};
  const dialogs: string[] = [];
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];

  async function wcs(args: string[], code = 0) {
    const r = await runCli([...args, '--json'], { ...process.env, ...testEnv(db.url) });
    expect(r.code, r.stdout + r.stderr).to.equal(code);
    return cliJson(args, r);
  }
  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  async function login(username: string): Promise<Page> {
    await ctx.clearCookies();
    const page = await ctx.newPage();
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(`${base}/login`);
    await page.fill('#username', username);
    await page.fill('#password', accounts[username]!.password);
    await Promise.all([page.waitForLoadState('load'), page.click('button[type=submit]')]);
    expect(await page.textContent('nav .who')).to.include(username);
    return page;
  }
  const csrf = async () => (await ctx.cookies()).find((c) => c.name === 'wcs_csrf')!.value;
  const auditOf = async (action: string) => q<{ actor: string; actor_role: string; channel: string; target: string; before: Record<string, unknown> | null; after: Record<string, unknown> | null }>(
    'SELECT actor, actor_role, channel, target, before, after FROM audit_log WHERE action = $1 ORDER BY id', [action]);

  before(async () => {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM}`);
    fs.mkdirSync(SHOTS, { recursive: true });
    await prepareTestKeystore();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 2 });
    for (const [username, role] of [['olga', 'operator'], ['vic', 'viewer']] as const) {
      accounts[username] = { password: (await wcs(['operator', 'create', '--username', username, '--role', role])).password };
    }
    // past the first login: this file is about other pages (the first-login rule: console-first-login-browser.test.ts)
    await pastFirstLogin(db.url, ['olga', 'vic']);
    svc = await WcsService.start(testConfig(db.url, { WCS_CONSOLE_PORT: '0' }), testLogger(), { api: true, workers: false, console: true });
    base = svc.consoleUrl;
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'memo merchant', environment: 'test', chains: ['XRP'] });
    other = await svc.storage.applications.create(TEST_ACTOR, { name: 'other merchant', environment: 'test', chains: ['XRP'] });
    const client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    const made: Record<string, { address: string; memo: string }> = {};
    for (const user of ['claimant', 'tagged']) made[user] = expectOk(await client.post(ADDRESS_CREATE, { chainCode: 'XRP', externalUserId: user })) as { address: string; memo: string };
    shared = made.claimant!.address;
    expect(made.tagged!.address).to.equal(shared);
    // what the scanner records for deposits to the shared address whose memo names nobody
    const ins = async (memo: string | null, reason: string, tx: string, amount: string) => Number((await q<{ id: string }>(
      `INSERT INTO unattributed_deposits (chain_id, chain_token_id, address, memo, from_address, tx_hash, position, amount, block_height, block_hash, reason)
       VALUES ($1, $2, $3, $4, 'rSENDERxxxxxxxxxxxxxxxxxxxxxxxxxx', $5, 0, $6, 1000, '1000', $7) RETURNING id`, [XRP_TEST, XRP_TOKEN, shared, memo, tx, amount, reason]))[0]!.id);
    unattributedIds.unknown = await ins('424242', 'MEMO_UNKNOWN', 'A'.repeat(64), '5000000');
    unattributedIds.missing = await ins(null, 'MEMO_MISSING', 'B'.repeat(64), '1250000');
    // settled deposits of user "tagged" to page through (ids in order, newest = highest)
    const [addr] = await q<{ id: number }>('SELECT id FROM addresses WHERE application_id = $1 AND external_user_id = $2', [app.id, 'tagged']);
    for (let i = 0; i < PAGED; i++) {
      await q(`INSERT INTO recharges (application_id, chain_id, chain_token_id, address_id, external_user_id, address, memo, from_address, tx_hash, position, amount,
                                      block_height, block_hash, tx_status, confirmations, min_confirmations, confirmed_at, settled_at)
               VALUES ($1, $2, $3, $4, 'tagged', $5, $6, 'rSENDERxxxxxxxxxxxxxxxxxxxxxxxxxx', $7, 0, $8, $9, $10, 'SETTLED', -1, -1, now(), now())`,
      [app.id, XRP_TEST, XRP_TOKEN, addr!.id, shared, made.tagged!.memo, `C${String(i).padStart(63, '0')}`, 1_000_000 + i, 900 + i, String(900 + i)]);
    }
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
  });

  it('a viewer sees the unattributed deposits without Assign forms, and the server refuses a viewer\'s assignment (403, nothing changed)', async () => {
    const page = await login('vic');
    await page.goto(`${base}/deposits/unattributed`);
    expect(await page.locator('tbody tr').count()).to.equal(2);
    expect(await page.locator('button', { hasText: 'Assign' }).count()).to.equal(0);
    expect(await page.textContent('main')).to.include('Your role (viewer) may not assign deposits');
    await shot(page, 'deposits-unattributed-viewer');
    const r = await page.request.post(`${base}/deposits/unattributed/${unattributedIds.unknown}/assign`, { form: { _csrf: await csrf(), applicationId: String(app.id), externalUserId: 'claimant' }, maxRedirects: 0 });
    expect(r.status()).to.equal(403);
    expect(await r.text()).to.include('Your role (viewer) may not assign deposits');
    expect(await q('SELECT id FROM recharges WHERE tx_hash = $1', ['A'.repeat(64)])).to.deep.equal([]);
    expect(await auditOf('deposit.assign')).to.deep.equal([]);
    await page.close();
  });

  it('an operator\'s bad assignments are refusal pages with the code and message; nothing is created or audited', async () => {
    const page = await login('olga');
    await page.goto(`${base}/deposits/unattributed`);
    const row = page.locator('tr', { hasText: '424242' });
    // a user of the application without an address on that shared address
    await row.locator('input[name=applicationId]').fill(String(app.id));
    await row.locator('input[name=externalUserId]').fill('nobody-here');
    const [res] = await Promise.all([page.waitForResponse((x) => x.url().endsWith('/assign')), row.locator('button', { hasText: 'Assign' }).click()]);
    expect(res.status()).to.equal(400);
    await page.waitForLoadState('load');
    expect(await page.textContent('[role=alert]')).to.equal(`USER_ADDRESS_NOT_FOUND: application ${app.id} has no user nobody-here with an address on ${shared} (chain ${XRP_TEST}): create it first`);
    await shot(page, 'deposits-assign-refused');
    // the right user, but of an application that does not hold it / does not exist
    const f = async (form: Record<string, string>) => page.request.post(`${base}/deposits/unattributed/${unattributedIds.unknown}/assign`, { form: { _csrf: await csrf(), ...form }, maxRedirects: 0 });
    const wrongApp = await f({ applicationId: String(other.id), externalUserId: 'claimant' });
    expect(wrongApp.status()).to.equal(400);
    expect(await wrongApp.text()).to.include(`USER_ADDRESS_NOT_FOUND: application ${other.id} has no user claimant`);
    const noApp = await f({ applicationId: '99999', externalUserId: 'claimant' });
    expect(noApp.status()).to.equal(404);
    expect(await noApp.text()).to.include('APPLICATION_NOT_FOUND: Application 99999 not found');
    const badApp = await f({ applicationId: 'one', externalUserId: 'claimant' });
    expect(badApp.status()).to.equal(400);
    const noUser = await f({ applicationId: String(app.id), externalUserId: '   ' });
    expect(noUser.status()).to.equal(400);
    const noDeposit = await page.request.post(`${base}/deposits/unattributed/987654/assign`, { form: { _csrf: await csrf(), applicationId: String(app.id), externalUserId: 'claimant' }, maxRedirects: 0 });
    expect(noDeposit.status()).to.equal(404);
    expect(await noDeposit.text()).to.include('UNATTRIBUTED_NOT_FOUND: unattributed deposit 987654 not found');
    expect(await q('SELECT id FROM recharges WHERE tx_hash = $1', ['A'.repeat(64)])).to.deep.equal([]);
    expect(await q('SELECT recharge_id FROM unattributed_deposits WHERE recharge_id IS NOT NULL')).to.deep.equal([]);
    expect(await auditOf('deposit.assign')).to.deep.equal([]);
    await page.close();
  });

  it('an operator assigns the unknown-memo deposit with the form: the record and its callback tasks are shown, the audit entry names them; a second assignment is refused (409)', async () => {
    const page = await login('olga');
    await page.goto(`${base}/deposits/unattributed`);
    await shot(page, 'deposits-unattributed');
    const row = page.locator('tr', { hasText: '424242' });
    await row.locator('input[name=applicationId]').fill(String(app.id));
    await row.locator('input[name=externalUserId]').fill('claimant');
    await Promise.all([page.waitForURL(/\/deposits\/\d+\?assigned=/), row.locator('button', { hasText: 'Assign' }).click()]);
    const rechargeId = Number(/\/deposits\/(\d+)\?/.exec(page.url())![1]);
    expect(await page.textContent('[role=status]')).to.include(`Unattributed deposit ${unattributedIds.unknown} assigned`);
    const [rec] = await q<{ application_id: number; external_user_id: string; memo: string; amount: string; tx_status: string; tx_hash: string }>(
      'SELECT application_id, external_user_id, memo, amount::text AS amount, tx_status, tx_hash FROM recharges WHERE id = $1', [rechargeId]);
    expect(rec).to.deep.include({ application_id: app.id, external_user_id: 'claimant', memo: '424242', amount: '5000000', tx_hash: 'A'.repeat(64) });
    expect(await q('SELECT recharge_id::int AS r FROM unattributed_deposits WHERE id = $1', [unattributedIds.unknown])).to.deep.equal([{ r: rechargeId }]);
    // every field of the record on the page
    const kv = async (k: string) => (await page.locator('dl.kv dt', { hasText: new RegExp(`^${k}$`) }).locator('xpath=following-sibling::dd[1]').textContent())!.trim();
    expect(await kv('externalUserId')).to.equal('claimant');
    expect(await kv('amount')).to.equal('5');
    expect(await kv('memo')).to.equal('424242');
    expect(await kv('txHash')).to.equal('A'.repeat(64));
    expect(await kv('txStatus')).to.equal(rec!.tx_status);
    expect(await kv('tokenSymbol')).to.equal('XRP');
    for (const k of ['id', 'applicationId', 'chainId', 'chainCode', 'chainTokenId', 'contractAddress', 'address', 'fromAddress', 'position', 'blockHeight', 'blockHash',
      'confirmations', 'minConfirmations', 'failReason', 'createTime', 'updateTime', 'confirmedTime', 'settledTime', 'failedTime']) {
      expect(await page.locator('dl.kv dt', { hasText: new RegExp(`^${k}$`) }).count(), k).to.equal(1);
    }
    // its callback tasks, one per txStatus it reached, each linking to its attempts
    const tasks = await q<{ task_id: string; tx_status: string }>('SELECT task_id::text AS task_id, tx_status FROM recharge_notices WHERE recharge_id = $1 ORDER BY task_id', [rechargeId]);
    expect(tasks.length).to.be.greaterThan(0);
    expect(tasks[0]!.tx_status).to.equal('PENDING');
    const links = await page.locator('table a[href^="/callbacks/"]').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    expect(links).to.deep.equal(tasks.map((t) => `/callbacks/${t.task_id}`));
    await shot(page, 'deposit-detail');
    // the audit entry, in the assignment's transaction
    const audit = await auditOf('deposit.assign');
    expect(audit).to.have.length(1);
    expect(audit[0]).to.deep.include({ actor: 'olga', actor_role: 'operator', channel: 'console', target: `unattributed:${unattributedIds.unknown}` });
    expect(audit[0]!.before).to.deep.include({ rechargeId: null, memo: '424242', amount: '5', token: 'XRP', reason: 'MEMO_UNKNOWN' });
    expect(audit[0]!.after).to.deep.include({ rechargeId, applicationId: app.id, externalUserId: 'claimant', amount: '5' });
    // assigned: off the open list, on the full list with its record; a second assignment is refused
    await page.goto(`${base}/deposits/unattributed`);
    expect(await page.locator('tbody tr').count()).to.equal(1);
    await page.goto(`${base}/deposits/unattributed?all=1`);
    expect(await page.locator(`a[href="/deposits/${rechargeId}"]`).count()).to.equal(1);
    const again = await page.request.post(`${base}/deposits/unattributed/${unattributedIds.unknown}/assign`, { form: { _csrf: await csrf(), applicationId: String(app.id), externalUserId: 'claimant' }, maxRedirects: 0 });
    expect(again.status()).to.equal(409);
    expect(await again.text()).to.include(`UNATTRIBUTED_ALREADY_ASSIGNED: unattributed deposit ${unattributedIds.unknown} was already assigned (recharge ${rechargeId})`);
    expect(await auditOf('deposit.assign')).to.have.length(1);
    await page.close();
  });

  it('`wcs deposits assign` is the same function: audited with the shell\'s actor; the console then lists both as assigned', async () => {
    const r = await wcs(['deposits', 'assign', String(unattributedIds.missing), '--app', String(app.id), '--user', 'tagged']);
    expect(r).to.include({ externalUserId: 'tagged', memo: null, amount: '1.25' });
    const audit = await auditOf('deposit.assign');
    expect(audit.map((a) => [a.channel, a.actor_role, a.target])).to.deep.equal([['console', 'operator', `unattributed:${unattributedIds.unknown}`], ['cli', 'shell', `unattributed:${unattributedIds.missing}`]]);
    expect(audit[1]!.actor).to.match(/^cli:/);
    const refused = await runCli(['deposits', 'assign', String(unattributedIds.missing), '--app', String(app.id), '--user', 'tagged'], { ...process.env, ...testEnv(db.url) });
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.include(`unattributed deposit ${unattributedIds.missing} was already assigned (recharge ${r.id})`);
    const page = await login('olga');
    await page.goto(`${base}/deposits/unattributed`);
    expect(await page.textContent('tbody')).to.include('No open unattributed deposits.');
    await page.goto(`${base}/deposits/unattributed?all=1`);
    expect(await page.locator('tbody a[href^="/deposits/"]').count()).to.equal(2);
    await shot(page, 'deposits-unattributed-all');
    await page.close();
  });

  it('the recharge list: every application\'s records newest first, 50 a page with an "Older records" link (keyset), and each filter', async () => {
    const page = await login('vic');
    await page.goto(`${base}/deposits`);
    await shot(page, 'deposits');
    const ids = async () => page.locator('tbody tr td:first-child').evaluateAll((tds) => tds.map((td) => Number(td.textContent)));
    const all = (await q<{ id: string }>('SELECT id FROM recharges ORDER BY id DESC')).map((r) => Number(r.id));
    expect(all).to.have.length(PAGED + 2);
    const first = await ids();
    expect(first).to.deep.equal(all.slice(0, 50));
    await Promise.all([page.waitForLoadState('load'), page.click('text=Older records')]);
    expect(page.url()).to.include(`before=${all[49]}`);
    expect(await ids()).to.deep.equal(all.slice(50));
    expect(await page.locator('text=Older records').count()).to.equal(0);
    // filters: application, chain, status, txHash
    await page.goto(`${base}/deposits?app=${other.id}`);
    expect(await page.textContent('tbody')).to.include('No recharge records');
    await page.goto(`${base}/deposits?app=${app.id}&chain=XRP&status=SETTLED&txHash=${'C'.padEnd(64, '0')}`);
    expect(await ids()).to.have.length(1);
    await page.goto(`${base}/deposits`);
    await page.fill('input[name=txHash]', 'A'.repeat(64));
    await Promise.all([page.waitForLoadState('load'), page.click('form.filters button')]);
    expect(await page.textContent('tbody')).to.include('claimant');
    expect(await ids()).to.have.length(1);
    await shot(page, 'deposits-filtered');
    const bad = await page.request.get(`${base}/deposits?status=BOGUS`);
    expect(bad.status()).to.equal(400);
    expect(await bad.text()).to.include('Status: one of PENDING, CONFIRMED, SETTLED, FAILED.');
    const missing = await page.request.get(`${base}/deposits/987654`);
    expect(missing.status()).to.equal(404);
    expect(dialogs).to.deep.equal([]);
    await page.close();
  });
});
