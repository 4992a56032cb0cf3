/**
 * The callback target guard end to end (docs/callbacks.md, "Target safety"): for a LIVE
 * application every loopback, private, link-local and metadata form is refused with 1002001004
 * where a merchant can give a callback URL — `wcs app set-callback` (application service and
 * CLI), withdraw/create and withdraw/batch-create (the item's callbackUrl) — and nothing is
 * persisted. Connect-time refusal of the same forms: callbacks-processes.test.ts ("live
 * application: set-callback refuses …").
 *
 * No RPC endpoint is configured, so an item that passes every check reaches the ledger and is
 * refused there with 1007004001 (the chain has no hot wallet reading): that is how an item the
 * guard lets through is told apart from one it stops, without anything being written.
 */
import { expect } from 'chai';
import { Pool } from 'pg';
import { WcsError } from '@wcs/core';
import type { CreatedApplication } from '@wcs/server';
import { startTestService, testEnv, type TestService, TEST_ACTOR } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { expectError, expectOk } from './support/expect';
import { cliJson, describeCli, runCli } from './support/processes';
import { freshEvmAddress, type BatchResult } from './support/payouts';

const CREATE = '/api/v1/wallet/withdraw/create';
const BATCH = '/api/v1/wallet/withdraw/batch-create';
/** Merchant-facing codes, as literals (a renumbering must break the test). */
const CALLBACK_URL_FORBIDDEN = 1002001004;
const CALLBACK_URL_INVALID = 1002001003;
const CHAIN_UNAVAILABLE = 1007004001;
/** The catalogue's native coin of ETH mainnet (live) and of Sepolia (test). */
const LIVE_ETH = 200;
const TEST_ETH = 10200;

/** Every form the guard refuses, with the host its message names. */
const FORBIDDEN: ReadonlyArray<readonly [url: string, names: string]> = [
  // IPv4, and its short, decimal, octal and hex forms (the URL parser writes them dotted)
  ['https://127.0.0.1/cb', '127.0.0.1'],
  ['https://127.1/cb', '127.0.0.1'],
  ['https://2130706433/cb', '127.0.0.1'],
  ['https://0x7f000001/cb', '127.0.0.1'],
  ['https://0177.0.0.1/cb', '127.0.0.1'],
  ['https://127.0.0.1./cb', '127.0.0.1'],
  ['https://10.0.0.1/cb', '10.0.0.1'],
  ['https://10.1/cb', '10.0.0.1'],
  ['https://192.168.1.1/cb', '192.168.1.1'],
  ['https://100.100.100.200/latest/meta-data/', '100.100.100.200'],
  ['https://169.254.169.254/latest/meta-data/', '169.254.169.254'],
  ['https://2852039166/latest/meta-data/', '169.254.169.254'],
  // IPv6, and IPv4 inside IPv6
  ['https://[::1]/cb', '::1'],
  ['https://[::ffff:127.0.0.1]/cb', '::ffff:7f00:1'],
  ['https://[::ffff:7f00:1]/cb', '::ffff:7f00:1'],
  ['https://[::127.0.0.1]/cb', '::7f00:1'],
  ['https://[::ffff:0:a00:1]/cb', '::ffff:0:a00:1'],
  ['https://[2002:7f00:0001::]/cb', '2002:7f00:1::'],
  ['https://[2002:a9fe:a9fe::1]/cb', '2002:a9fe:a9fe::1'],
  ['https://[64:ff9b::a9fe:a9fe]/cb', '64:ff9b::a9fe:a9fe'],
  ['https://[64:ff9b:1::5db8:d70e]/cb', '64:ff9b:1::5db8:d70e'],
  ['https://[fd00:ec2::254]/latest/meta-data/', 'fd00:ec2::254'],
  ['https://[fc00::1]/cb', 'fc00::1'],
  ['https://[fe80::1]/cb', 'fe80::1'],
  ['https://[fec0::1]/cb', 'fec0::1'],
  ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/cb', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
  // names: loopback and cloud metadata, trailing dots included
  ['https://localhost/cb', 'localhost'],
  ['https://localhost./cb', 'localhost.'],
  ['https://api.localhost/cb', 'api.localhost'],
  ['https://metadata.google.internal/computeMetadata/v1/', 'metadata.google.internal'],
  ['https://metadata.google.internal./computeMetadata/v1/', 'metadata.google.internal.'],
  ['https://metadata.goog/computeMetadata/v1/', 'metadata.goog'],
  ['https://metadata/computeMetadata/v1/', 'metadata'],
  ['https://instance-data/latest/meta-data/', 'instance-data'],
  ['https://instance-data.ec2.internal/latest/meta-data/', 'instance-data.ec2.internal'],
];

/** Public targets (IP literals: nothing to resolve) the guard lets through. */
const PUBLIC = ['https://93.184.215.14/cb', 'https://[2606:2800:21f:cb07:6820:80da:af6b:1627]/cb', 'https://[2002:5db8:d70e::]/cb'];

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const refusal = (names: string) => new RegExp(`^Callback URL refused for a live application: ${escape(names)} (is a|resolves to) .+ \\(on-premise deployments: WCS_CALLBACK_ALLOW_PRIVATE=1\\)$`);

describe('callback target guard: a live application\'s forbidden callback targets are refused at set-callback, withdraw/create and withdraw/batch-create (1002001004), nothing persisted', function () {
  let svc: TestService;
  let pool: Pool;
  let live: CreatedApplication;
  let test: CreatedApplication;
  let liveClient: SigningClient;
  let testClient: SigningClient;

  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const item = (callbackUrl: string | undefined, over: Record<string, unknown> = {}) => ({
    appOrderNo: `g-${Math.random().toString(36).slice(2)}`, chainCode: 'ETH', chainTokenId: LIVE_ETH, toAddress: freshEvmAddress(), amount: '0.01',
    ...(callbackUrl === undefined ? {} : { callbackUrl }), ...over,
  });
  const noWithdrawals = async () => expect(await q('SELECT id, app_order_no, callback_url FROM withdrawals')).to.deep.equal([]);

  before(async function () {
    svc = await startTestService({ workers: false });
    pool = new Pool({ connectionString: svc.db.url, max: 2 });
    live = await svc.createApp({ name: 'guard-live', environment: 'live', chains: ['ETH'] });
    test = await svc.createApp({ name: 'guard-test', environment: 'test', chains: ['ETH'] });
    liveClient = new SigningClient(svc.url, { apiKey: live.apiKey, apiSecret: live.apiSecret });
    testClient = new SigningClient(svc.url, { apiKey: test.apiKey, apiSecret: test.apiSecret });
  });

  after(async () => {
    await pool?.end();
    await svc?.stop();
  });

  it('set-callback (application service): every form refused with CALLBACK_URL_FORBIDDEN, nothing stored; public targets stored', async () => {
    const apps = svc.service.storage.applications;
    for (const [url, names] of FORBIDDEN) {
      const err = await apps.setCallback(TEST_ACTOR, live.id, 'WITHDRAW', url).then(() => null, (e: unknown) => e);
      expect(err, url).to.be.instanceOf(WcsError);
      expect((err as WcsError).code, url).to.equal(CALLBACK_URL_FORBIDDEN);
      expect((err as WcsError).message, url).to.match(refusal(names));
    }
    expect((await apps.get(live.id)).callbacks).to.deep.equal({});
    expect(await q('SELECT url FROM application_callbacks')).to.deep.equal([]);

    const [v4, v6, sixToFour] = PUBLIC;
    await apps.setCallback(TEST_ACTOR, live.id, 'RECHARGE', v4!);
    await apps.setCallback(TEST_ACTOR, live.id, 'COLLECT', v6!);
    await apps.setCallback(TEST_ACTOR, live.id, 'TRANSFER', sixToFour!);
    expect((await apps.get(live.id)).callbacks).to.deep.equal({ RECHARGE: v4, COLLECT: v6, TRANSFER: sixToFour });
    // a test application is not guarded
    await apps.setCallback(TEST_ACTOR, test.id, 'WITHDRAW', 'http://127.0.0.1:9/cb');
    expect((await apps.get(test.id)).callbacks).to.deep.equal({ WITHDRAW: 'http://127.0.0.1:9/cb' });
  });

  it('set-callback (wcs CLI): the same guard refuses a trailing-dot metadata name and a 6to4 loopback with 1002001004', async () => {
    const env = { ...process.env, ...testEnv(svc.db.url) };
    const cases: Array<[string, string]> = [['https://metadata.google.internal./computeMetadata/v1/', 'metadata.google.internal.'], ['https://[2002:7f00:1::]/cb', '2002:7f00:1::']];
    const results = await Promise.all(cases.map(([url]) => runCli(['app', 'set-callback', '--app', String(live.id), '--biz-type', 'WITHDRAW', '--url', url, '--json'], env)));
    cases.forEach(([url, names], i) => {
      const args = ['app', 'set-callback', '--url', url];
      expect(results[i]!.code, describeCli(args, results[i]!)).to.equal(1);
      const err = cliJson(args, results[i]!).error;
      expect(err.code, url).to.equal(CALLBACK_URL_FORBIDDEN);
      expect(err.msg, url).to.match(refusal(names));
    });
    expect((await svc.service.storage.applications.get(live.id)).callbacks).to.not.have.property('WITHDRAW');
  });

  it('withdraw/create: every form in the item\'s callbackUrl refused with 1002001004 and data null, no withdrawal row', async () => {
    const answers = await Promise.all(FORBIDDEN.map(([url]) => liveClient.post(CREATE, item(url))));
    FORBIDDEN.forEach(([url, names], i) => {
      const msg = expectError(answers[i]!, 200, CALLBACK_URL_FORBIDDEN);
      expect(msg, url).to.match(refusal(names));
    });
    await noWithdrawals();
  });

  it('withdraw/batch-create: each forbidden item refused on its own (1002001004), the others judged as usual, nothing persisted', async () => {
    const forbidden = FORBIDDEN.map(([url]) => item(url));
    const passing = [...PUBLIC.map((url) => item(url)), item(undefined)];
    const syntax = item('http://93.184.215.14/cb'); // live needs https: the syntax check comes first
    const items = [passing[0]!, ...forbidden.slice(0, 10), passing[1]!, ...forbidden.slice(10), syntax, passing[2]!, passing[3]!];
    const r = expectOk(await liveClient.post(BATCH, { items })) as BatchResult;
    expect(r).to.include({ total: items.length, successCount: 0, failedCount: items.length });
    r.items.forEach((res, i) => {
      const sent = items[i]!;
      expect(res.appOrderNo).to.equal(sent.appOrderNo);
      expect(res.success).to.equal(false);
      expect(res.withdraw).to.equal(null);
      const at = FORBIDDEN.findIndex(([url]) => url === (sent as { callbackUrl?: string }).callbackUrl);
      if (at >= 0) {
        expect(res.errorCode, sent.callbackUrl).to.equal(CALLBACK_URL_FORBIDDEN);
        expect(res.errorMessage, sent.callbackUrl).to.match(refusal(FORBIDDEN[at]![1]));
      } else if (sent === syntax) {
        expect(res.errorCode).to.equal(CALLBACK_URL_INVALID);
      } else {
        // passed the guard: refused only by the ledger (no node configured), after every item check
        expect(res.errorCode, JSON.stringify(sent)).to.equal(CHAIN_UNAVAILABLE);
      }
    });
    expect(r.items.filter((x) => x.errorCode === CALLBACK_URL_FORBIDDEN)).to.have.length(FORBIDDEN.length);
    await noWithdrawals();
  });

  it('a test application\'s item is not guarded: a loopback callbackUrl passes on to the ledger check', async () => {
    const res = await testClient.post(CREATE, item('http://127.0.0.1:9/cb', { chainTokenId: TEST_ETH, toAddress: freshEvmAddress() }));
    expectError(res, 200, CHAIN_UNAVAILABLE);
    const r = expectOk(await testClient.post(BATCH, { items: [item('https://[2002:7f00:1::]/cb', { chainTokenId: TEST_ETH }), item('https://metadata.google.internal./x', { chainTokenId: TEST_ETH })] })) as BatchResult;
    expect(r.items.map((x) => x.errorCode)).to.deep.equal([CHAIN_UNAVAILABLE, CHAIN_UNAVAILABLE]);
    await noWithdrawals();
  });
});
