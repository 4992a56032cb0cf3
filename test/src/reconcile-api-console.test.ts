/**
 * What reconciliation shows to a merchant and to an operator (docs/reconciliation.md, "Merchant
 * API, console and metrics"), on anvil with the service's own passes (`wcs reconcile run`):
 *
 * - GET /api/v1/wallet/reconciliation/balances (signed, through the SDK): each application sees
 *   its own totals per chain and token, equal to the chain, with the block the pass read at; a
 *   surplus raised on one application's deposit address shows as unexplained to that one only;
 *   filters; bad input is INVALID_PARAMETER and changes nothing;
 * - the console's Reconciliation page in Chromium: the totals, the differing address with its
 *   unexplained amount, the discrepancy with its alert (screenshot test/screenshots/reconciliation.png);
 * - the Prometheus families move with it (wcs_reconcile_unexplained_addresses, open discrepancies).
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Pool } from 'pg';
import { chromium, type BrowserContext } from 'playwright-core';
import { ErrorCode, WcsClient, WcsApiError } from '@wcs/sdk';
import { anvilRpc, deployErc20, deployMulticall3, mine, sendNative, startAnvil, startBlockClock, type AnvilDevnet, type BlockClock } from '@wcs/adapter-evm/devnet';
import type { CreatedApplication } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testEnv, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { expectOk, pollUntil } from './support/expect';
import { waitForHotWallet } from './support/payouts';
import { cliJson, describeCli, runCli } from './support/processes';
import { ADDRESS_CREATE } from './support/recharge-types';
import { SigningClient } from './client/signing-client';
import { tempDir } from './support/temp';
import { totp } from './support/totp';

const CHROMIUM = process.env.WCS_TEST_CHROMIUM ?? '/usr/bin/chromium';
const SHOTS = path.resolve(__dirname, '..', 'screenshots');
const ETH_CHAIN = 102;
const TUSD = 10296;
const ETHER = 10n ** 18n;

interface Totals {
  chainId: number; chainCode: string; chainTokenId: number; tokenSymbol: string; contractAddress: string; addressCount: number; ledgerBalance: string; chainBalance: string;
  difference: string; explained: string; unexplained: string; blockHeight: number; blockHash: string; oldestBlockHeight: number; reconcileTime: string;
  oldestReconcileTime: string; openDiscrepancies: number;
}

describe('reconciliation for merchants and operators: the signed balances operation, the console page, the metrics (anvil)', function () {
  this.timeout(600_000);
  let anvil: AnvilDevnet;
  let clock: BlockClock;
  let tusd: string;
  let db: TestDatabase;
  let svc: WcsService;
  let pool: Pool;
  let env: Record<string, string>;
  let shop: CreatedApplication;
  let other: CreatedApplication;
  let shopSdk: WcsClient;
  let otherSdk: WcsClient;
  let shopAddress: string;
  let otherAddress: string;
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const wcs = async (args: string[], exit = 0) => {
    const r = await runCli([...args, '--json'], env, 300_000);
    expect(r.code, describeCli(args, r)).to.equal(exit);
    return cliJson(args, r);
  };
  const caughtUp = async () => {
    const t = BigInt(await anvilRpc<string>(anvil.url, 'eth_blockNumber'));
    const r = await pollUntil(() => q<{ height: string | null }>('SELECT height::text AS height FROM scan_cursors WHERE chain_id = $1', [ETH_CHAIN]), (rows) => rows[0]?.height != null && BigInt(rows[0].height) >= t, 60_000, 50);
    expect(r.ok, `the scan reached ${t}`).to.equal(true);
  };
  const settled = async (address: string, n: number) => {
    const r = await pollUntil(() => q<{ tx_status: string }>('SELECT tx_status FROM recharges WHERE address = $1', [address]), (rows) => rows.length === n && rows.every((x) => x.tx_status === 'SETTLED'), 60_000, 100);
    expect(r.ok, `${address}: ${JSON.stringify(r.result)}`).to.equal(true);
  };
  const pass = async () => {
    await caughtUp();
    const passes = (await wcs(['reconcile', 'run', '--chain', 'ETH', '--full'])) as Array<{ height: string; unexplained: number }>;
    expect(passes).to.have.length(1);
    return passes[0]!;
  };
  const newAddress = async (app: CreatedApplication, user: string) => {
    const client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    return (expectOk(await client.post(ADDRESS_CREATE, { chainCode: 'ETH', externalUserId: user })) as { address: string }).address;
  };
  const totals = async (sdk: WcsClient, query: Record<string, string> = {}) => (await sdk.reconciliation.balances(query)).list as Totals[];

  before(async () => {
    anvil = await startAnvil({ chainId: 11155111 });
    clock = await startBlockClock(anvil.url, 100);
    await deployMulticall3(anvil.url);
    tusd = await deployErc20(anvil.url, { name: 'Test USD', symbol: 'TUSD' });
    const configFile = path.join(tempDir('wcs-reconcile-api-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({
      chains: [{ id: ETH_CHAIN, code: 'ETH', name: 'Ethereum Sepolia (anvil)', family: 'evm', environment: 'test', network: 'sepolia', nativeSymbol: 'ETH', decimals: 18, confirmations: 2, evmChainId: 11155111 }],
      tokens: [{ id: TUSD, chainCode: 'ETH', environment: 'test', symbol: 'TUSD', name: 'Test USD (anvil)', contract: tusd, decimals: 6 }],
    }));
    await prepareTestKeystore();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 3 });
    const vars = {
      WCS_RPC_TEST_ETH: anvil.url, WCS_CONFIG: configFile, WCS_SCAN_POLL_MS: '50', WCS_CALLBACK_POLL_MS: '50', WCS_RECONCILE_INTERVAL_SECONDS: '0',
      WCS_RATE_LIMIT_RPS: '0', WCS_CONSOLE_PORT: '0', WCS_METRICS_PORT: '0', WCS_METRICS_TOKEN: 'reconcile-metrics-token-0123456789',
    };
    env = { ...process.env, ...testEnv(db.url, vars) } as Record<string, string>;
    svc = await WcsService.start(testConfig(db.url, vars), testLogger(), { api: true, workers: true, console: true });
    shop = await svc.storage.applications.create(TEST_ACTOR, { name: 'shop', environment: 'test', chains: ['ETH'] });
    other = await svc.storage.applications.create(TEST_ACTOR, { name: 'other', environment: 'test', chains: ['ETH'] });
    shopSdk = new WcsClient({ baseUrl: svc.url, apiKey: shop.apiKey, apiSecret: shop.apiSecret });
    otherSdk = new WcsClient({ baseUrl: svc.url, apiKey: other.apiKey, apiSecret: other.apiSecret });
    await waitForHotWallet(q, shop.id, ETH_CHAIN, 30_000);
    await waitForHotWallet(q, other.id, ETH_CHAIN, 30_000);
  });

  after(async () => {
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await clock?.stop().catch(() => undefined);
    await anvil?.stop();
  });

  it('before any pass: an empty list; after one, each application sees only its own totals, equal to the chain, with the block read at', async () => {
    expect(await totals(shopSdk)).to.deep.equal([]);
    shopAddress = await newAddress(shop, 'ann');
    otherAddress = await newAddress(other, 'bob');
    await sendNative(anvil.url, shopAddress, 3n * ETHER / 2n, { wait: true });
    await sendNative(anvil.url, otherAddress, ETHER, { wait: true });
    await settled(shopAddress, 1);
    await settled(otherAddress, 1);
    const p = await pass();
    expect(p.unexplained).to.equal(0);
    const block = await anvilRpc<{ hash: string }>(anvil.url, 'eth_getBlockByNumber', [`0x${BigInt(p.height).toString(16)}`, false]);

    const mine_ = await totals(shopSdk, { addressKind: 'DEPOSIT' });
    expect(mine_.map((t) => t.tokenSymbol).sort()).to.deep.equal(['ETH', 'TUSD']);
    const eth = mine_.find((t) => t.tokenSymbol === 'ETH')!;
    expect(eth).to.deep.include({
      chainId: ETH_CHAIN, chainCode: 'ETH', contractAddress: '', addressCount: 1, ledgerBalance: '1.5', chainBalance: '1.5', difference: '0', explained: '0',
      unexplained: '0', blockHeight: Number(p.height), blockHash: block.hash, oldestBlockHeight: Number(p.height), openDiscrepancies: 0,
    });
    expect(eth.reconcileTime).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    const tusdLine = mine_.find((t) => t.tokenSymbol === 'TUSD')!;
    expect(tusdLine).to.deep.include({ contractAddress: tusd, ledgerBalance: '0', chainBalance: '0' });
    const theirs = (await totals(otherSdk, { addressKind: 'DEPOSIT', chainCode: 'ETH' })).find((t) => t.tokenSymbol === 'ETH')!;
    expect(theirs).to.deep.include({ addressCount: 1, ledgerBalance: '1', chainBalance: '1' });
    // every custody address kind of the application, the hot wallet included
    const all = (await totals(shopSdk)).find((t) => t.tokenSymbol === 'ETH')!;
    expect(all.addressCount).to.be.greaterThan(1);
    expect(await totals(shopSdk, { addressKind: 'FEE', chainCode: 'ETH' })).to.satisfy((l: Totals[]) => l.every((t) => t.addressCount >= 1));
    // a chain the application does not hold anything on: nothing, not an error
    expect(await totals(shopSdk, { chainCode: 'BTC' })).to.deep.equal([]);
  });

  it('a surplus on one application\'s deposit address: unexplained for that application only, an open discrepancy; the other application unchanged', async () => {
    await anvilRpc(anvil.url, 'anvil_setBalance', [otherAddress, `0x${(ETHER + ETHER / 8n).toString(16)}`]);
    await mine(anvil.url, 2);
    const p = await pass();
    expect(p.unexplained).to.equal(1);
    const theirs = (await totals(otherSdk, { addressKind: 'DEPOSIT' })).find((t) => t.tokenSymbol === 'ETH')!;
    expect(theirs).to.deep.include({ ledgerBalance: '1', chainBalance: '1.125', difference: '0.125', unexplained: '0.125', openDiscrepancies: 1 });
    const mine_ = (await totals(shopSdk, { addressKind: 'DEPOSIT' })).find((t) => t.tokenSymbol === 'ETH')!;
    expect(mine_).to.deep.include({ ledgerBalance: '1.5', chainBalance: '1.5', unexplained: '0', openDiscrepancies: 0 });
  });

  it('bad input: INVALID_PARAMETER with the field named, nothing changed', async () => {
    const before = await q<{ n: string }>('SELECT (SELECT count(*) FROM reconcile_passes) + (SELECT count(*) FROM reconcile_discrepancies) AS n');
    for (const [query, field] of [[{ chainCode: 'eth' }, 'chainCode'], [{ addressKind: 'COLD' }, 'addressKind'], [{ pageNo: '1' }, 'pageNo']] as const) {
      try {
        await shopSdk.reconciliation.balances(query as Record<string, string>);
        expect.fail(`${JSON.stringify(query)} was accepted`);
      } catch (e) {
        expect(e, String(e)).to.be.instanceOf(WcsApiError);
        expect((e as WcsApiError).code).to.equal(ErrorCode.INVALID_PARAMETER);
        expect((e as WcsApiError).msg).to.include(field);
      }
    }
    expect(await q<{ n: string }>('SELECT (SELECT count(*) FROM reconcile_passes) + (SELECT count(*) FROM reconcile_discrepancies) AS n')).to.deep.equal(before);
  });

  it('Prometheus: the unexplained address and the open discrepancy of ETH are exported', async () => {
    const scrape = async () => {
      const res = await fetch(svc.metricsUrl, { headers: { authorization: 'Bearer reconcile-metrics-token-0123456789' } });
      expect(res.status).to.equal(200);
      return res.text();
    };
    const text = await scrape();
    expect(text).to.match(/wcs_reconcile_open_discrepancies\{chain="ETH",environment="test"\} 1\n/);
    expect(text).to.match(/wcs_reconcile_unexplained_addresses\{chain="ETH",environment="test",token="ETH",token_id="\d+"\} 1\n/);
    expect(text).to.match(/wcs_reconcile_unexplained_abs_base_units\{chain="ETH",environment="test",token="ETH",token_id="\d+"\} 125000000000000000\n/);
    expect(text).to.match(/wcs_reconcile_oldest_unreconciled_seconds\{chain="ETH",environment="test"\} \d/);
  });

  it('the console\'s Reconciliation page in Chromium: the totals, the differing address with its unexplained amount, the discrepancy and its alert', async () => {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM}: the README's test line installs it (scripts/test-prereqs.js)`);
    fs.mkdirSync(SHOTS, { recursive: true });
    const made = await wcs(['operator', 'create', '--username', 'rita', '--role', 'viewer']);
    const secret = made.totpUri ? new URL(made.totpUri).searchParams.get('secret') : null;
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-chromium-'));
    let ctx: BrowserContext | null = null;
    try {
      ctx = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM, headless: true, viewport: { width: 1400, height: 900 },
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
      });
      const page = await ctx.newPage();
      await page.goto(`${svc.consoleUrl}/login`);
      await page.fill('#username', 'rita');
      await page.fill('#password', made.password);
      await page.fill('#totp', secret ? totp(secret) : '');
      await Promise.all([page.waitForLoadState('load'), page.click('button[type=submit]')]);
      if (page.url().endsWith('/password')) {
        // a new operator changes the password first
        await page.fill('#current', made.password);
        await page.fill('#next', 'rita has a long new passphrase');
        await Promise.all([page.waitForLoadState('load'), page.click('form.card button[type=submit]')]);
      }
      await page.goto(`${svc.consoleUrl}/reconciliation`);
      expect(await page.title()).to.include('Reconciliation');
      const body = (await page.textContent('main'))!;
      expect(body).to.include(otherAddress);
      expect(body).to.include('+0.125');
      expect(body).to.match(/OPEN/);
      const rows = await page.$$eval('main table:first-of-type tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '')));
      const otherEth = rows.find((r) => r[0] === String(other.id) && r[2] === 'ETH' && r[8] !== '0');
      expect(otherEth, JSON.stringify(rows)).to.not.equal(undefined);
      expect(otherEth![8]).to.equal('+0.125');
      await page.screenshot({ path: path.join(SHOTS, 'reconciliation.png'), fullPage: true });
      // one application's view
      await page.goto(`${svc.consoleUrl}/reconciliation?app=${shop.id}`);
      expect(await page.textContent('main')).to.not.include(otherAddress);
      const refused = await page.goto(`${svc.consoleUrl}/reconciliation?app=x`);
      expect(refused!.status()).to.equal(400);
    } finally {
      await ctx?.close();
      fs.rmSync(profile, { recursive: true, force: true });
    }
  });
});
