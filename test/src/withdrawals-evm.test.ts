/**
 * Withdrawals on a real EVM node (anvil, from npm @foundry-rs/anvil) through the service with
 * its workers (the hot wallet ledger and the payout worker) and the software key store: the
 * batch rules (every invalid field, duplicates inside a batch and against earlier orders, 50
 * concurrent identical batches, the hot wallet balance, the hard maximum, a bad signature), native
 * and ERC-20 payouts end to end with the exact amounts arriving and the callbacks BROADCASTED,
 * CONFIRMING, SUCCESS verified by a receiver written from the spec, a reverted token transfer
 * ending FAILED, 200 concurrent orders from one hot wallet using every nonce once, and the risk
 * rules with operator approval.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { anvilRpc, deployErc20, erc20Balance, mine, mintErc20, sendNative, startAnvil, startBlockClock, waitForReceipt, type AnvilDevnet, type BlockClock } from '@wcs/adapter-evm/devnet';
import type { CreatedApplication } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testEnv, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { SigningClient } from './client/signing-client';
import { freshEvmAddress, settleOnAnvil, waitForFunded, waitForHotWallet, type BatchResult, type Withdraw, type WithdrawEvent } from './support/payouts';
import { CallbackReceiver, verifyCallback } from './support/callback-receiver';
import { Codes, expectError, expectOk, pollUntil } from './support/expect';
import { cliJson, runCli } from './support/processes';
import { tempDir } from './support/temp';

const BATCH = '/api/v1/wallet/withdraw/batch-create';
const CREATE = '/api/v1/wallet/withdraw/create';
const GET = '/api/v1/wallet/withdraw/get';
const ETH_TEST_CHAIN_ID = 102;
/** The catalogue's native coin of test ETH, and a token listed by this test. */
const ETH_TOKEN_ID = 10200;
/** Circle's Sepolia USDC, in the catalogue but not deployed on anvil: its balance cannot be read. */
const USDC_TOKEN_ID = 10202;
const TOKEN_ID = 10299;
const MIN_CONF = 3;
const ETHER = 10n ** 18n;
const DEV_ACCOUNT = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
/** Merchant-facing codes of this issue, as literals (a renumbering must break the test). */
const W = {
  DUPLICATE: 1007001001,
  NOT_FOUND: 1007001002,
  ADDRESS_INVALID: 1007002001,
  MEMO_INVALID: 1007002002,
  AMOUNT_INVALID: 1007002003,
  TOKEN_MISMATCH: 1007002004,
  CHAIN_UNAVAILABLE: 1007004001,
  BALANCE_TOO_LOW: 1007004002,
} as const;
const RECORD_FIELDS = [
  'amount', 'appOrderNo', 'blockHeight', 'callbackTaskId', 'chainCode', 'chainTokenId', 'confirmations', 'createTime', 'failReason', 'fee', 'fromAddress', 'id', 'memo',
  'riskLevel', 'riskReason', 'status', 'toAddress', 'token', 'txHash', 'updateTime',
];
const EVENT_FIELDS = ['amount', 'appOrderNo', 'applicationId', 'chainId', 'chainTokenId', 'event', 'id', 'status', 'toAddress', 'txHash'];


const fresh = freshEvmAddress;

describe('withdrawals on anvil (acceptance, ledger, payout worker, callbacks)', function () {
  this.timeout(300_000);
  let anvil: AnvilDevnet;
  let clock: BlockClock;
  let token: string;
  let db: TestDatabase;
  let svc: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  let pool: Pool;
  let configFile: string;
  let hot: string;
  const receiver = new CallbackReceiver();
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const batch = async (items: unknown[]): Promise<BatchResult> => expectOk(await client.post(BATCH, { items })) as BatchResult;
  const item = (over: Record<string, unknown> = {}) => ({ appOrderNo: `o-${Math.random().toString(36).slice(2)}`, chainCode: 'ETH', chainTokenId: ETH_TOKEN_ID, toAddress: fresh(), amount: '0.001', ...over });
  const get = async (id: number): Promise<Withdraw> => expectOk(await client.get(`${GET}?id=${id}`)) as Withdraw;
  const events = (id: number): WithdrawEvent[] => receiver.received.map((r) => JSON.parse(r.body.toString('utf8')) as WithdrawEvent).filter((e) => e.event === 'withdraw' && e.id === id);
  const waitStatus = async (id: number, status: string, timeoutMs = 60_000): Promise<Withdraw> => {
    const r = await pollUntil(() => get(id), (w) => w.status === status || (w.status === 'FAILED' && status !== 'FAILED'), timeoutMs, 100);
    expect(r.result.status, `order ${id}: ${JSON.stringify(r.result)}`).to.equal(status);
    return r.result;
  };
  /** Mines blocks until the order reaches its final status (the payout worker needs MIN_CONF). */
  const settle = (id: number, status: 'SUCCESS' | 'FAILED'): Promise<Withdraw> => settleOnAnvil<Withdraw>(client, anvil.url, id, status, 150);
  const ledgerRead = async (): Promise<Date> => (await q<{ t: Date }>('SELECT max(observed_at) AS t FROM hot_wallet_balances b JOIN hot_wallets h ON h.id = b.hot_wallet_id WHERE h.chain_id = $1', [ETH_TEST_CHAIN_ID]))[0]!.t;
  /** Waits for a ledger reading that began after now (it reflects what happened before). */
  const freshLedger = async () => {
    const [{ now }] = await q<{ now: Date }>('SELECT now() AS now');
    const r = await pollUntil(ledgerRead, (t) => t !== null && t > now!, 30_000, 100);
    expect(r.ok, 'a new hot wallet balance reading').to.equal(true);
  };

  before(async () => {
    anvil = await startAnvil({ chainId: 11155111 });
    // blocks every 100 ms, not automine: the payout worker sends its transactions in JSON-RPC
    // batches, and automine now and then strands one of a batch (see startBlockClock)
    clock = await startBlockClock(anvil.url, 100);
    token = await deployErc20(anvil.url, { name: 'Test USD', symbol: 'TUSD' });
    configFile = path.join(tempDir('wcs-wd-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({ tokens: [{ id: TOKEN_ID, chainCode: 'ETH', environment: 'test', symbol: 'TUSD', name: 'Test USD (anvil)', contract: token, decimals: 18 }] }));
    await prepareTestKeystore();
    await receiver.start();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 2 });
    svc = await WcsService.start(testConfig(db.url, {
      WCS_RPC_TEST_ETH: anvil.url, WCS_CONFIG: configFile, WCS_CALLBACK_POLL_MS: '50', WCS_CALLBACK_ALLOW_PRIVATE: '1',
      WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '200',
    }), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'payouts', environment: 'test', chains: ['ETH', 'BTC'] });
    await svc.storage.applications.setCallback(TEST_ACTOR, app.id, 'WITHDRAW', receiver.url('/merchant/withdraw'));
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    hot = await waitForHotWallet(q, app.id, ETH_TEST_CHAIN_ID, 30_000);
  });

  after(async () => {
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await receiver.stop();
    await clock?.stop();
    await anvil?.stop();
  });

  it('an unfunded hot wallet refuses items with 1007004002 naming the shortfall; a token it holds none of is not available yet (1007004001)', async () => {
    await freshLedger();
    const r = await batch([item({ amount: '1.5' }), item({ chainTokenId: TOKEN_ID, amount: '1' })]);
    expect(r).to.include({ total: 2, successCount: 0, failedCount: 2 });
    expect(r.items[0]).to.include({ success: false, withdraw: null, errorCode: W.BALANCE_TOO_LOW });
    expect(r.items[0]!.errorMessage).to.match(/needs 1\.5\d* ETH \(amount plus the fee\), 0 available: short by 1\.5\d* ETH/);
    expect(r.items[1]!.errorCode).to.equal(W.CHAIN_UNAVAILABLE);
    expect(await q('SELECT id FROM withdrawals')).to.deep.equal([]);
  });

  it('`wcs hotwallets` lists the hot wallet to fund; after funding, the ledger reads its balances', async () => {
    const env = { ...process.env, ...testEnv(db.url, { WCS_CONFIG: configFile }) };
    const args = ['hotwallets', '--app', String(app.id), '--json'];
    const listed = cliJson(args, await runCli(args, env)) as Array<{ applicationId: number; chainCode: string; address: string; token: string; onChain: string | null; reserved: string }>;
    expect(listed.filter((x) => x.chainCode === 'ETH').map((x) => [x.address, x.token, x.onChain])).to.deep.equal([[hot, 'ETH', '0'], [hot, 'USDC', null], [hot, 'TUSD', '0']]);
    await sendNative(anvil.url, hot, 1000n * ETHER, { wait: true }); // mined before the ledger reading awaited below
    await mintErc20(anvil.url, token, hot, 1_000_000n * ETHER, { wait: true });
    await freshLedger();
    const b = await q<{ symbol: string; on_chain: string; reserved: string }>(
      `SELECT t.symbol, b.on_chain::text AS on_chain, b.reserved::text AS reserved FROM hot_wallet_balances b JOIN chain_tokens t ON t.id = b.chain_token_id
        JOIN hot_wallets h ON h.id = b.hot_wallet_id WHERE h.application_id = $1 AND h.chain_id = $2 ORDER BY t.id`, [app.id, ETH_TEST_CHAIN_ID]);
    expect(b).to.deep.equal([{ symbol: 'ETH', on_chain: (1000n * ETHER).toString(), reserved: '0' }, { symbol: 'TUSD', on_chain: (1_000_000n * ETHER).toString(), reserved: '0' }]);
    const quotes = await pollUntil(() => q<{ chain_token_id: number }>('SELECT chain_token_id FROM withdraw_fee_quotes WHERE chain_id = $1 ORDER BY 1', [ETH_TEST_CHAIN_ID]),
      (rows) => [ETH_TOKEN_ID, TOKEN_ID].every((id) => rows.some((x) => x.chain_token_id === id)), 30_000, 100);
    expect(quotes.ok, 'fee quotes for ETH and TUSD').to.equal(true);
    const usdc = await batch([item({ chainTokenId: USDC_TOKEN_ID, amount: '1' })]);
    expect(usdc.items[0]!.errorCode).to.equal(W.CHAIN_UNAVAILABLE);
  });

  it('checks every item on its own: one result per item in request order, with the field\'s error code; nothing persisted for a refused item', async () => {
    const good = item({ amount: '0.25' });
    const r = await batch([
      good,
      item({ toAddress: '0xnotanaddress' }),
      item({ toAddress: '0x52908400098527886e0F7030069857D2E4169EE7' }), // EIP-55's own example with one letter's case changed: checksum broken
      item({ toAddress: 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx' }), // a bitcoin address
      item({ toMemo: '12345' }),
      item({ amount: 1 }),
      item({ amount: '0' }),
      item({ amount: '-1' }),
      item({ amount: '1e3' }),
      item({ amount: '0.0000000000000000001' }), // 19 places, ETH has 18
      item({ chainTokenId: 10500 }), // test SOL's native coin: a token of another chain
      item({ chainTokenId: 999999 }),
      item({ chainCode: 'SOL' }), // not enabled for the application
      item({ chainCode: 'NOPE' }),
      item({ remark: 'x'.repeat(201) }),
      item({ callbackUrl: 'ftp://merchant.example/cb' }),
      item({ appOrderNo: 'bad order no' }),
      item({ surprise: true }),
      { ...item(), appOrderNo: good.appOrderNo }, // duplicate inside the batch
      'not an object',
    ]);
    expect(r).to.include({ total: 20, successCount: 1, failedCount: 19 });
    expect(r.items.map((x) => x.errorCode)).to.deep.equal([
      null, W.ADDRESS_INVALID, W.ADDRESS_INVALID, W.ADDRESS_INVALID, W.MEMO_INVALID, W.AMOUNT_INVALID, W.AMOUNT_INVALID, W.AMOUNT_INVALID, W.AMOUNT_INVALID, W.AMOUNT_INVALID,
      W.TOKEN_MISMATCH, Codes.TOKEN_UNKNOWN, Codes.CHAIN_NOT_ENABLED, Codes.CHAIN_UNKNOWN, Codes.INVALID_PARAMETER, Codes.CALLBACK_URL_INVALID, Codes.INVALID_PARAMETER,
      Codes.INVALID_PARAMETER, W.DUPLICATE, Codes.INVALID_PARAMETER,
    ]);
    for (const x of r.items.slice(1)) {
      expect(x.success).to.equal(false);
      expect(x.withdraw).to.equal(null);
      expect(x.errorMessage).to.be.a('string').and.not.equal('');
    }
    expect(r.items[5]!.errorMessage).to.match(/decimal string/);
    expect(r.items[9]!.errorMessage).to.match(/18/);
    expect(r.items.map((x) => x.appOrderNo).slice(0, 3)).to.deep.equal([good.appOrderNo, (r.items[1]!.appOrderNo), r.items[2]!.appOrderNo]);
    expect(r.items[19]!.appOrderNo).to.equal(null);
    const w = r.items[0]!.withdraw!;
    expect(Object.keys(w).sort()).to.deep.equal(RECORD_FIELDS);
    expect(w).to.include({
      appOrderNo: good.appOrderNo, chainCode: 'ETH', chainTokenId: ETH_TOKEN_ID, token: 'ETH', amount: '0.25', fromAddress: hot, memo: null, txHash: null,
      blockHeight: null, confirmations: 0, status: 'PROCESSING', failReason: null, riskLevel: null, riskReason: null, callbackTaskId: null,
    });
    expect(w.toAddress.toLowerCase()).to.equal(good.toAddress);
    expect(w.fee).to.match(/^0\.\d+$/);
    const rows = await q<{ app_order_no: string }>('SELECT app_order_no FROM withdrawals WHERE application_id = $1', [app.id]);
    expect(rows.map((x) => x.app_order_no)).to.deep.equal([good.appOrderNo]);
  });

  it('a malformed request, more than 100 items, or a bad signature fails as a whole and persists nothing', async () => {
    const before = (await q('SELECT id FROM withdrawals')).length;
    expectError(await client.post(BATCH, { items: Array.from({ length: 101 }, () => item()) }), 400, Codes.INVALID_PARAMETER, /at most 100/);
    expectError(await client.post(BATCH, { items: [] }), 400, Codes.INVALID_PARAMETER);
    expectError(await client.post(BATCH, { items: [item()], extra: 1 }), 400, Codes.INVALID_PARAMETER);
    expectError(await client.post(BATCH, [item()]), 400, Codes.INVALID_PARAMETER);
    expectError(await client.post(BATCH, { items: [item()] }, { sign: { secret: 'not-the-secret' } }), 401, Codes.AUTH_SIGNATURE_INVALID);
    expect((await q('SELECT id FROM withdrawals')).length).to.equal(before);
    const r = await batch(Array.from({ length: 100 }, () => item({ amount: '0.0001' })));
    expect(r).to.include({ total: 100, successCount: 100 });
  });

  it('a repeated appOrderNo is refused with 1007001001 and never changes the order, also from 50 concurrent identical batches', async () => {
    const first = item({ amount: '0.01' });
    const a = await batch([first]);
    expect(a.successCount).to.equal(1);
    const again = await batch([{ ...first, amount: '0.02', toAddress: fresh() }]);
    expect(again.items[0]).to.include({ success: false, errorCode: W.DUPLICATE });
    expect(again.items[0]!.errorMessage).to.contain(first.appOrderNo);
    expectError(await client.post(CREATE, { ...first }), 200, W.DUPLICATE);
    const kept = expectOk(await client.get(`${GET}?appOrderNo=${first.appOrderNo}`)) as Withdraw;
    expect(kept).to.include({ id: a.items[0]!.withdraw!.id, amount: '0.01' });
    const items = Array.from({ length: 5 }, (_, i) => item({ appOrderNo: `race-${i}`, amount: '0.001' }));
    const results = await Promise.all(Array.from({ length: 50 }, () => batch(items)));
    const wins = results.flatMap((r) => r.items.filter((x) => x.success).map((x) => x.appOrderNo));
    expect(wins.sort()).to.deep.equal(items.map((x) => x.appOrderNo).sort());
    for (const r of results) for (const x of r.items.filter((y) => !y.success)) expect(x.errorCode).to.equal(W.DUPLICATE);
    const rows = await q<{ n: number }>(`SELECT count(*)::int AS n FROM withdrawals WHERE application_id = $1 AND app_order_no LIKE 'race-%'`, [app.id]);
    expect(rows[0]!.n).to.equal(5);
  });

  it('accepted orders never exceed the hot wallet minus what is reserved', async () => {
    await freshLedger();
    const [b] = await q<{ on_chain: string; reserved: string }>(
      `SELECT b.on_chain::text AS on_chain, b.reserved::text AS reserved FROM hot_wallet_balances b JOIN hot_wallets h ON h.id = b.hot_wallet_id
        WHERE h.application_id = $1 AND h.chain_id = $2 AND b.chain_token_id = $3`, [app.id, ETH_TEST_CHAIN_ID, TOKEN_ID]);
    const available = BigInt(b!.on_chain) - BigInt(b!.reserved);
    const half = available / 2n + 1n; // two of these do not fit
    const fmt = (v: bigint) => `${v / ETHER}.${(v % ETHER).toString().padStart(18, '0')}`.replace(/\.?0+$/, '');
    const r = await batch([item({ chainTokenId: TOKEN_ID, amount: fmt(half) }), item({ chainTokenId: TOKEN_ID, amount: fmt(half) })]);
    expect(r.items.map((x) => x.errorCode)).to.deep.equal([null, W.BALANCE_TOO_LOW]);
    expect(r.items[1]!.errorMessage).to.match(/TUSD/).and.match(/short by/);
    // give it back: reject is not possible for a LOW order, so let it pay out later; the ledger reflects it
  });

  it('pays out a native and an ERC-20 withdrawal: exact amounts arrive, BROADCASTED, CONFIRMING, SUCCESS callbacks verified, the actual fee recorded', async () => {
    const toNative = fresh();
    const toToken = fresh();
    const n = expectOk(await client.post(CREATE, item({ toAddress: toNative, amount: '1.234567890123456789' }))) as Withdraw;
    const t = expectOk(await client.post(CREATE, item({ toAddress: toToken, chainTokenId: TOKEN_ID, amount: '42.5' }))) as Withdraw;
    const nDone = await settle(n.id, 'SUCCESS');
    const tDone = await settle(t.id, 'SUCCESS');
    expect(BigInt(await anvilRpc<string>(anvil.url, 'eth_getBalance', [toNative, 'latest']))).to.equal(1_234_567_890_123_456_789n);
    expect(await erc20Balance(anvil.url, token, toToken)).to.equal(42n * ETHER + ETHER / 2n);
    for (const [order, done] of [[n, nDone], [t, tDone]] as const) {
      expect(done.txHash).to.match(/^0x[0-9a-f]{64}$/);
      const receipt = await waitForReceipt<{ gasUsed: string; effectiveGasPrice: string; blockNumber: string; status: string }>(anvil.url, done.txHash!);
      expect(receipt.status).to.equal('0x1');
      const fee = BigInt(receipt.gasUsed) * BigInt(receipt.effectiveGasPrice);
      expect(done.fee).to.equal(`${fee / ETHER}.${(fee % ETHER).toString().padStart(18, '0')}`.replace(/\.?0+$/, ''));
      expect(done.blockHeight).to.equal(Number(BigInt(receipt.blockNumber)));
      expect(done.confirmations).to.be.at.least(MIN_CONF);
      const r = await pollUntil(async () => events(order.id).map((e) => e.status), (s) => s.length >= 3, 30_000, 100);
      expect(r.result).to.deep.equal(['BROADCASTED', 'CONFIRMING', 'SUCCESS']);
      for (const req of receiver.received.filter((x) => (JSON.parse(x.body.toString('utf8')) as WithdrawEvent).id === order.id)) {
        expect(verifyCallback(req, app.apiKey, app.apiSecret)).to.equal(null);
        const e = JSON.parse(req.body.toString('utf8')) as WithdrawEvent;
        expect(Object.keys(e).sort()).to.deep.equal(EVENT_FIELDS);
        expect(e).to.include({ applicationId: app.id, appOrderNo: order.appOrderNo, chainId: ETH_TEST_CHAIN_ID, chainTokenId: order.chainTokenId, amount: order.amount, txHash: done.txHash });
      }
      expect(done.callbackTaskId).to.be.a('number');
    }
  });

  it('200 concurrent orders from one hot wallet: every nonce used once, none skipped, each order one on-chain transaction', async () => {
    const startNonce = BigInt(await anvilRpc<string>(anvil.url, 'eth_getTransactionCount', [hot, 'pending']));
    const results = await Promise.all(Array.from({ length: 4 }, () => batch(Array.from({ length: 50 }, () => item({ amount: '0.000001' })))));
    const ids = results.flatMap((r) => r.items.map((x) => x.withdraw!.id));
    expect(ids).to.have.length(200);
    // the block clock mines every 100 ms: no anvil_mine of the test's own beside the service's batches of eth_sendRawTransaction
    const r = await pollUntil(
      () => q<{ n: number }>(`SELECT count(*)::int AS n FROM withdrawals WHERE id = ANY($1::bigint[]) AND status IN ('CONFIRMING','SUCCESS')`, [ids]),
      (rows) => rows[0]!.n === 200, 180_000, 200);
    expect(r.ok, `${r.result[0]!.n} of 200 mined`).to.equal(true);
    const rows = await q<{ sequence: string; tx_hash: string; txs: number }>(
      `SELECT w.sequence::text AS sequence, w.tx_hash, (SELECT count(*)::int FROM withdraw_transactions x WHERE x.withdrawal_id = w.id) AS txs
         FROM withdrawals w WHERE w.id = ANY($1::bigint[]) ORDER BY w.sequence`, [ids]);
    const seqs = rows.map((x) => BigInt(x.sequence));
    expect(new Set(seqs.map(String)).size, 'no nonce used twice').to.equal(200);
    expect(seqs[seqs.length - 1]! - seqs[0]! + 1n, 'no nonce skipped').to.equal(200n);
    expect(seqs[0]! >= startNonce, `first nonce ${seqs[0]} >= ${startNonce}`).to.equal(true);
    expect(rows.every((x) => x.txs === 1)).to.equal(true);
    for (const x of rows.slice(0, 20)) {
      const tx = await anvilRpc<{ nonce: string; from: string }>(anvil.url, 'eth_getTransactionByHash', [x.tx_hash]);
      expect(BigInt(tx.nonce)).to.equal(BigInt(x.sequence));
      expect(tx.from.toLowerCase()).to.equal(hot.toLowerCase());
    }
  });

  it('a token transfer that reverts on chain ends FAILED with a verified FAILED callback', async () => {
    // the transfer is signed and sent while the token works; the token is paused before it is mined (anvil orders by fee)
    await clock.pause();
    let order: Withdraw;
    let paused = false;
    try {
      try {
        order = expectOk(await client.post(CREATE, item({ chainTokenId: TOKEN_ID, amount: '3' }))) as Withdraw;
        await waitStatus(order.id, 'BROADCASTED', 30_000);
        const pauseData = '0x8456cb59'; // pause()
        await anvilRpc(anvil.url, 'eth_sendTransaction', [{ from: DEV_ACCOUNT, to: token, data: pauseData, maxPriorityFeePerGas: '0x' + (10n ** 12n).toString(16), maxFeePerGas: '0x' + (10n ** 13n).toString(16) }]);
        paused = true;
        await mine(anvil.url, 1);
      } finally {
        clock.resume();
      }
      const done = await settle(order!.id, 'FAILED');
      expect(done.failReason).to.match(/failed on chain/);
      const receipt = await waitForReceipt<{ status: string }>(anvil.url, done.txHash!);
      expect(receipt.status).to.equal('0x0');
      const r = await pollUntil(async () => events(order!.id).map((e) => e.status), (s) => s.includes('FAILED'), 30_000, 100);
      expect(r.result).to.deep.equal(['BROADCASTED', 'CONFIRMING', 'FAILED']);
      const failed = receiver.received.find((x) => {
        const e = JSON.parse(x.body.toString('utf8')) as WithdrawEvent;
        return e.id === order!.id && e.status === 'FAILED';
      })!;
      expect(verifyCallback(failed, app.apiKey, app.apiSecret)).to.equal(null);
    } finally {
      // the later tests pay TUSD: the token works again whatever happened here
      if (paused) await waitForReceipt(anvil.url, await anvilRpc<string>(anvil.url, 'eth_sendTransaction', [{ from: DEV_ACCOUNT, to: token, data: '0x3f4ba83a' }])); // unpause()
    }
  });

  it('risk rules: blocklist and limits fail the order with a callback; over the threshold waits for `wcs withdraw approve|reject`', async () => {
    const env = { ...process.env, ...testEnv(db.url, { WCS_CONFIG: configFile }) };
    const cli = async (args: string[]) => cliJson([...args, '--json'], await runCli([...args, '--json'], env));
    const blocked = fresh(); // written in lower case; the rule keeps the canonical (EIP-55) form, as orders do
    await cli(['withdraw', 'block', 'ETH', blocked, '--app', String(app.id)]);
    const set = await cli(['withdraw', 'limits', '--app', String(app.id), '--token', String(ETH_TOKEN_ID), '--per-order', '5', '--approval-over', '2']) as {
      limits: Array<{ chainTokenId: number; perOrderMax: string | null; dailyMax: string | null; approvalThreshold: string | null }>; addresses: Array<{ kind: string; address: string }>;
    };
    expect(set.limits).to.deep.equal([{ chainCode: 'ETH', chainTokenId: ETH_TOKEN_ID, token: 'ETH', perOrderMax: '5', dailyMax: null, approvalThreshold: '2' }]);
    expect(set.addresses.map((a) => [a.kind, a.address.toLowerCase()])).to.deep.equal([['BLOCK', blocked]]);
    expect((await runCli(['withdraw', 'limits', '--app', String(app.id), '--token', String(ETH_TOKEN_ID), '--daily', '1.0000000000000000001'], env)).code).to.not.equal(0);
    const over = expectOk(await client.post(CREATE, item({ amount: '6' }))) as Withdraw;
    const high1 = expectOk(await client.post(CREATE, item({ amount: '3' }))) as Withdraw;
    const high2 = expectOk(await client.post(CREATE, item({ amount: '3' }))) as Withdraw;
    const toBlocked = expectOk(await client.post(CREATE, item({ toAddress: blocked, amount: '0.5' }))) as Withdraw;
    const blockedDone = await waitStatus(toBlocked.id, 'FAILED');
    expect(blockedDone).to.include({ riskLevel: 'BLOCKED', riskReason: 'DESTINATION_BLOCKED', txHash: null });
    const overDone = await waitStatus(over.id, 'FAILED');
    expect(overDone).to.include({ riskLevel: 'BLOCKED', riskReason: 'PER_ORDER_LIMIT_EXCEEDED', txHash: null });
    expect(overDone.failReason).to.match(/per-order limit of 5/);
    await pollUntil(async () => events(over.id).map((e) => e.status), (s) => s.includes('FAILED'), 30_000, 100);
    expect(events(over.id).map((e) => [e.status, e.txHash])).to.deep.equal([['FAILED', '']]);
    const waiting = await pollUntil(() => get(high1.id), (w) => w.riskLevel !== null, 30_000, 100);
    expect(waiting.result).to.include({ status: 'PROCESSING', riskLevel: 'HIGH', riskReason: 'AMOUNT_OVER_APPROVAL_THRESHOLD', txHash: null });
    // four eyes (docs/console.md): the shell user who set the threshold may not approve what it holds
    const own = await runCli(['withdraw', 'approve', String(high1.id)], env);
    expect(own.code, own.stdout + own.stderr).to.equal(1);
    expect(own.stderr).to.include('FOUR_EYES_REQUIRED');
    expect((await get(high1.id)).status).to.equal('PROCESSING');
    // a later change of the rule by another operator (as the console records it) lets this shell user decide
    await q(`INSERT INTO audit_log (actor, actor_role, channel, source, action, target) VALUES ('olga', 'operator', 'console', 'test', 'withdraw.limits.set', $1)`, [`app:${app.id}/token:${ETH_TOKEN_ID}`]);
    const approveArgs = ['withdraw', 'approve', String(high1.id), '--json'];
    const ok = cliJson(approveArgs, await runCli(approveArgs, env)) as { approval: string };
    expect(ok.approval).to.equal('APPROVED');
    const rejectArgs = ['withdraw', 'reject', String(high2.id), '--note', 'not this user', '--json'];
    const no = cliJson(rejectArgs, await runCli(rejectArgs, env)) as { approval: string };
    expect(no.approval).to.equal('REJECTED');
    const again = await runCli(['withdraw', 'reject', String(high2.id)], env);
    expect(again.code).to.not.equal(0);
    // every decision and every rule change is in the audit log, with the shell's actor (docs/console.md)
    const auditArgs = ['audit', '--limit', '200', '--json'];
    const audit = cliJson(auditArgs, await runCli(auditArgs, env)) as { entries: Array<{ action: string; target: string; after: Record<string, unknown> | null; channel: string }> };
    const decisions = audit.entries.filter((e) => e.action === 'withdraw.approve' || e.action === 'withdraw.reject');
    expect(decisions.map((e) => [e.action, e.target, e.channel])).to.deep.equal([['withdraw.reject', `withdrawal:${high2.id}`, 'cli'], ['withdraw.approve', `withdrawal:${high1.id}`, 'cli']]);
    expect(decisions[0]!.after).to.deep.equal({ approval: 'REJECTED', status: 'FAILED', note: 'not this user' });
    expect(audit.entries.some((e) => e.action === 'withdraw.limits.set' && e.after !== null && e.after.approvalThreshold !== null), 'the limit that held them').to.equal(true);
    await settle(high1.id, 'SUCCESS');
    const rejected = await waitStatus(high2.id, 'FAILED');
    expect(rejected.failReason).to.equal('rejected by the operator: not this user');
    expect(rejected.txHash).to.equal(null);
  });

  it('risk rules: the daily limit counts the day\'s orders that did not fail; allowlist-only refuses destinations not on the list', async () => {
    const env = { ...process.env, ...testEnv(db.url, { WCS_CONFIG: configFile }) };
    const cli = async (args: string[]) => cliJson([...args, '--json'], await runCli([...args, '--json'], env));
    const other = await svc.storage.applications.create(TEST_ACTOR, { name: 'daily', environment: 'test', chains: ['ETH'] });
    const c = new SigningClient(svc.url, { apiKey: other.apiKey, apiSecret: other.apiSecret });
    await cli(['withdraw', 'limits', '--app', String(other.id), '--token', String(TOKEN_ID), '--daily', '10']);
    const otherHot = await waitForHotWallet(q, other.id, ETH_TEST_CHAIN_ID, 30_000);
    await sendNative(anvil.url, otherHot, 10n * ETHER);
    await mintErc20(anvil.url, token, otherHot, 100n * ETHER);
    await waitForFunded(q, other.id, [ETH_TOKEN_ID, TOKEN_ID]);
    const place = async (amount: string, to = fresh()) => (expectOk(await c.post(CREATE, item({ chainTokenId: TOKEN_ID, amount, toAddress: to }))) as Withdraw).id;
    const a = await place('6');
    const b = await place('4');
    const d = await place('0.000000000000000001'); // one base unit over the day's 10
    const [wa, wb, wd] = await Promise.all([a, b, d].map((id) => pollUntil(async () => expectOk(await c.get(`${GET}?id=${id}`)) as Withdraw, (w) => w.riskLevel !== null, 30_000, 100)));
    expect([wa!.result.riskLevel, wb!.result.riskLevel]).to.deep.equal(['LOW', 'LOW']);
    expect(wd!.result).to.include({ riskLevel: 'BLOCKED', riskReason: 'DAILY_LIMIT_EXCEEDED', status: 'FAILED' });
    expect(wd!.result.failReason).to.match(/daily limit of 10/);
    await cli(['withdraw', 'allowlist-only', 'on', '--app', String(other.id)]);
    const allowed = fresh();
    await cli(['withdraw', 'allow', 'ETH', allowed, '--app', String(other.id)]);
    await cli(['withdraw', 'limits', '--app', String(other.id), '--token', String(TOKEN_ID)]); // limits removed
    const ok = await place('1', allowed);
    const no = await place('1');
    const [wok, wno] = await Promise.all([ok, no].map((id) => pollUntil(async () => expectOk(await c.get(`${GET}?id=${id}`)) as Withdraw, (w) => w.riskLevel !== null, 30_000, 100)));
    expect(wok!.result.riskLevel).to.equal('LOW');
    expect(wno!.result).to.include({ riskLevel: 'BLOCKED', riskReason: 'DESTINATION_NOT_ALLOWED', status: 'FAILED' });
    const shown = await cli(['withdraw', 'rules', '--app', String(other.id)]) as { allowlistOnly: boolean; limits: unknown[]; addresses: Array<{ kind: string }> };
    expect(shown).to.deep.include({ allowlistOnly: true, limits: [] });
    expect(shown.addresses.map((x) => x.kind)).to.deep.equal(['ALLOW']);
  });

  it('withdraw/get: by id or appOrderNo, only the caller\'s orders, exactly one selector', async () => {
    const w = expectOk(await client.post(CREATE, item({ amount: '0.002' }))) as Withdraw;
    expect((expectOk(await client.get(`${GET}?appOrderNo=${w.appOrderNo}`)) as Withdraw).id).to.equal(w.id);
    const other = await svc.storage.applications.create(TEST_ACTOR, { name: 'other', environment: 'test', chains: ['ETH'] });
    const c2 = new SigningClient(svc.url, { apiKey: other.apiKey, apiSecret: other.apiSecret });
    expectError(await c2.get(`${GET}?id=${w.id}`), 200, W.NOT_FOUND);
    expectError(await c2.get(`${GET}?appOrderNo=${w.appOrderNo}`), 200, W.NOT_FOUND);
    expectError(await client.get(GET), 400, Codes.INVALID_PARAMETER);
    expectError(await client.get(`${GET}?id=${w.id}&appOrderNo=${w.appOrderNo}`), 400, Codes.INVALID_PARAMETER);
    expectError(await client.get(`${GET}?id=abc`), 400, Codes.INVALID_PARAMETER);
  });

  it('the service\'s own payouts raised no TRANSFER: once the scanner has read past them, no custody outflow, no UNEXPECTED_OUTFLOW alert, no TRANSFER callback', async () => {
    // every transaction the service made on the chain and saw mined, and the highest block holding one
    const mined = await q<{ kind: string; n: number; top: string }>(
      `SELECT kind, count(*)::int AS n, max(block_height)::text AS top FROM transfers WHERE chain_id = $1 AND block_height IS NOT NULL GROUP BY kind ORDER BY kind`, [ETH_TEST_CHAIN_ID]);
    expect(mined.map((r) => r.kind), `transactions mined: ${JSON.stringify(mined)}`).to.deep.equal(['PAYOUT']);
    expect(mined[0]!.n).to.be.at.least(2);
    const top = mined.reduce((h, r) => (BigInt(r.top) > h ? BigInt(r.top) : h), -1n);
    // the deposit scanner (which matches custody outflows) has read past the last of them: otherwise the counts below prove nothing
    const scanned = await pollUntil(async () => BigInt((await q<{ h: string | null }>('SELECT height::text AS h FROM scan_cursors WHERE chain_id = $1', [ETH_TEST_CHAIN_ID]))[0]?.h ?? '-1'), (h) => h >= top, 60_000, 100);
    expect(scanned.ok, `scanner at ${scanned.result}, the service's last transaction in block ${top}`).to.equal(true);
    expect(await q('SELECT id::text AS id, address_kind, from_address, to_address, tx_hash FROM custody_outflows'), 'no custody outflow recorded').to.deep.equal([]);
    expect(await q(`SELECT id::text AS id, message FROM operator_alerts WHERE kind = 'UNEXPECTED_OUTFLOW'`), 'no UNEXPECTED_OUTFLOW alert').to.deep.equal([]);
    expect(await q(`SELECT id::text AS id, application_id FROM callback_tasks WHERE biz_type = 'TRANSFER'`), 'no TRANSFER callback').to.deep.equal([]);
  });
});
