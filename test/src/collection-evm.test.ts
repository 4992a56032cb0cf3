/**
 * Collection on a real EVM node (anvil) through the service with its workers and the software
 * key store: 100 deposit addresses (50 native, 50 ERC-20) swept to the hot wallet — every token
 * unit arrives, native addresses end at exactly 0, each token address topped up once from the fee
 * wallet and left with gas within the documented bound; a fee wallet too poor makes the items
 * wait with an alert; `collect` callbacks checked field by field by a receiver written from the
 * spec; the cost guard skips a dust address and sweeps it once it grew; a reverted token sweep
 * ends FAILED with its code and callback; the surplus above the high watermark reaches the cold
 * address; pass-through: SETTLED only after the merchant's address received the funds.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { anvilRpc, deployErc20, erc20Balance, mine, mintErc20, sendNative, startAnvil, startBlockClock, type AnvilDevnet, type BlockClock } from '@wcs/adapter-evm/devnet';
import type { CreatedApplication } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { SigningClient } from './client/signing-client';
import { freshEvmAddress, waitForHotWallet } from './support/payouts';
import { CallbackReceiver, verifyCallback } from './support/callback-receiver';
import { expectOk, pollUntil } from './support/expect';
import { ADDRESS_CREATE } from './support/recharge-types';
import { tempDir } from './support/temp';

const ETH_CHAIN = 102;
const ETH_TOKEN_ID = 10200;
const TOKEN_ID = 10299;
const ETHER = 10n ** 18n;
const GWEI = 10n ** 9n;
const DEV_ACCOUNT = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const NATIVE_ADDRESSES = 50;
const TOKEN_ADDRESSES = 50;
/** The spec's `collect` event fields, sorted. */
const COLLECT_FIELDS = [
  'amount', 'applicationId', 'chainId', 'chainTokenId', 'createdTime', 'event', 'failureReasonCode', 'failureReasonMessage', 'finishedTime', 'fromAddress', 'fromAddressId',
  'gasFee', 'gasFeeCurrency', 'gasFunding', 'id', 'itemId', 'relatedRechargeIds', 'requestId', 'retryTimes', 'stage', 'status', 'toAddress', 'txHash',
];
const FUNDING_FIELDS = ['amount', 'failureReasonMessage', 'feeAddress', 'id', 'status', 'txHash', 'userAddress'];
const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

interface CollectEvent {
  event: string; id: number; requestId: number; itemId: number; applicationId: number; chainId: number; chainTokenId: number; stage: string | null; fromAddressId: number;
  fromAddress: string; toAddress: string; amount: string; txHash: string | null; status: string; failureReasonCode: string | null; failureReasonMessage: string | null;
  retryTimes: number; gasFee: string | null; gasFeeCurrency: string | null; relatedRechargeIds: number[]; createdTime: string; finishedTime: string;
  gasFunding: { id: number; status: string; txHash: string; feeAddress: string; userAddress: string; amount: string; failureReasonMessage: string | null } | null;
}

describe('collection on anvil: sweeps, gas top-up, cost guard, cold transfer, pass-through, collect callbacks', function () {
  this.timeout(600_000);
  let anvil: AnvilDevnet;
  let clock: BlockClock;
  let token: string;
  let db: TestDatabase;
  let svc: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  let pool: Pool;
  let hot: string;
  const receiver = new CallbackReceiver();
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const collectEvents = (appId: number): CollectEvent[] => receiver.received.filter((r) => r.target.startsWith(`/collect/${appId}`)).map((r) => JSON.parse(r.body.toString('utf8')) as CollectEvent);
  const newAddress = async (c: SigningClient, user: string) => (expectOk(await c.post(ADDRESS_CREATE, { chainCode: 'ETH', externalUserId: user })) as { address: string }).address;
  const balance = (a: string) => anvilRpc<string>(anvil.url, 'eth_getBalance', [a, 'latest']).then(BigInt);
  const setPolicy = (appId: number, tokenId: number, p: Record<string, string | number | boolean | null>) => q(
    `INSERT INTO collection_policies (application_id, chain_token_id, threshold, max_fee_bps, native_value, on_confirmed, schedule_seconds, hot_low, hot_target, hot_high)
     VALUES ($1, $2, $3::numeric, $4, $5::numeric, true, NULL, $6::numeric, $7::numeric, $8::numeric)
     ON CONFLICT (application_id, chain_token_id) DO UPDATE SET threshold = EXCLUDED.threshold, max_fee_bps = EXCLUDED.max_fee_bps, native_value = EXCLUDED.native_value,
       hot_low = EXCLUDED.hot_low, hot_target = EXCLUDED.hot_target, hot_high = EXCLUDED.hot_high, updated_at = now()`,
    [appId, tokenId, p.threshold ?? '0', p.maxFeeBps ?? 1000, p.nativeValue ?? null, p.low ?? null, p.target ?? null, p.high ?? null]);
  const items = (appId: number) => q<{ id: string; from_address: string; chain_token_id: number; status: string; stage: string; amount: string; failure_code: string | null; waiting_reason: string | null; topup_transfer_id: string | null; transfer_id: string | null; to_address: string }>(
    `SELECT id::text AS id, from_address, chain_token_id, status, stage, amount::text AS amount, failure_code, waiting_reason, topup_transfer_id::text AS topup_transfer_id,
            transfer_id::text AS transfer_id, to_address FROM collection_items WHERE application_id = $1 ORDER BY id`, [appId]);
  const settled = async (appId: number, n: number, timeoutMs = 240_000) => {
    const r = await pollUntil(() => items(appId), (rows) => rows.length >= n && rows.every((i) => i.status === 'SUCCESS' || i.status === 'FAILED'), timeoutMs, 250);
    expect(r.ok, `items of app ${appId}: ${JSON.stringify(r.result.filter((i) => i.status !== 'SUCCESS').slice(0, 3))}`).to.equal(true);
    return r.result;
  };

  before(async () => {
    anvil = await startAnvil({ chainId: 11155111 });
    clock = await startBlockClock(anvil.url, 100);
    token = await deployErc20(anvil.url, { name: 'Test USD', symbol: 'TUSD' });
    const configFile = path.join(tempDir('wcs-collect-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({ tokens: [{ id: TOKEN_ID, chainCode: 'ETH', environment: 'test', symbol: 'TUSD', name: 'Test USD (anvil)', contract: token, decimals: 18 }] }));
    await prepareTestKeystore();
    await receiver.start();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 3 });
    svc = await WcsService.start(testConfig(db.url, {
      WCS_RPC_TEST_ETH: anvil.url, WCS_CONFIG: configFile, WCS_CALLBACK_POLL_MS: '50', WCS_CALLBACK_ALLOW_PRIVATE: '1',
      WCS_HOT_WALLET_REFRESH_MS: '300', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '200', WCS_COLLECT_PLAN_MS: '300',
    }), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'collect', environment: 'test', chains: ['ETH'] });
    await svc.storage.applications.setCallback(TEST_ACTOR, app.id, 'COLLECT', receiver.url(`/collect/${app.id}`));
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    hot = await waitForHotWallet(q, app.id, ETH_CHAIN, 30_000);
    // the operator funds the hot wallet with Ether for its own transfers' gas (the cold transfer); never
    // with the token: the hot wallet receives it only through collection, which prices each sweep by
    // the sweep itself (collection-first-token.test.ts: a token no destination ever held)
    await sendNative(anvil.url, hot, 10n * ETHER);
  });

  after(async () => {
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await receiver.stop();
    await clock?.stop();
    await anvil?.stop();
  });

  it('100 deposit addresses (50 native, 50 ERC-20): a poor fee wallet makes token items wait with an alert; funded, every unit arrives, each token address topped up once', async () => {
    const hotTokenBefore = await erc20Balance(anvil.url, token, hot);
    const nativeAddrs: string[] = [];
    const tokenAddrs: string[] = [];
    for (let i = 0; i < NATIVE_ADDRESSES; i++) nativeAddrs.push(await newAddress(client, `n-${i}`));
    for (let i = 0; i < TOKEN_ADDRESSES; i++) tokenAddrs.push(await newAddress(client, `t-${i}`));
    const nativeAmounts = nativeAddrs.map((_a, i) => ETHER / 100n + BigInt(i) * GWEI);
    const tokenAmounts = tokenAddrs.map((_a, i) => 5n * ETHER + BigInt(i));
    for (const [i, a] of nativeAddrs.entries()) await sendNative(anvil.url, a, nativeAmounts[i]!);
    for (const [i, a] of tokenAddrs.entries()) await mintErc20(anvil.url, token, a, tokenAmounts[i]!);
    await setPolicy(app.id, ETH_TOKEN_ID, { threshold: (ETHER / 1000n).toString(), maxFeeBps: 1000 });
    await setPolicy(app.id, TOKEN_ID, { threshold: ETHER.toString(), maxFeeBps: 1000, nativeValue: (3000n * ETHER).toString() });
    // the fee wallet is empty: token items wait, named, with one FEE_WALLET_LOW alert
    const waiting = await pollUntil(() => items(app.id), (rows) => rows.filter((i) => i.chain_token_id === TOKEN_ID && i.waiting_reason?.includes('fee wallet')).length === TOKEN_ADDRESSES, 120_000, 250);
    expect(waiting.ok, `token items waiting for the fee wallet: ${JSON.stringify(waiting.result.slice(-2))}`).to.equal(true);
    expect(waiting.result.filter((i) => i.chain_token_id === TOKEN_ID).every((i) => i.status === 'PLANNED' && i.topup_transfer_id === null)).to.equal(true);
    const [fee] = await q<{ address: string }>('SELECT address FROM fee_wallets WHERE application_id = $1 AND chain_id = $2', [app.id, ETH_CHAIN]);
    expect((await q<{ n: number }>(`SELECT count(*)::int AS n FROM operator_alerts WHERE kind = 'FEE_WALLET_LOW' AND details->>'address' = $1`, [fee!.address]))[0]!.n).to.equal(1);
    await sendNative(anvil.url, fee!.address, 5n * ETHER);

    const done = await settled(app.id, NATIVE_ADDRESSES + TOKEN_ADDRESSES);
    expect(done.filter((i) => i.status !== 'SUCCESS'), 'all SUCCESS').to.deep.equal([]);
    expect(done.every((i) => i.to_address === hot && i.stage === 'HOT_GATHER')).to.equal(true);
    // every token unit arrived at the hot wallet; each token address topped up exactly once (it held no gas)
    expect(await erc20Balance(anvil.url, token, hot)).to.equal(hotTokenBefore + tokenAmounts.reduce((s, v) => s + v, 0n));
    for (const a of tokenAddrs) expect(await erc20Balance(anvil.url, token, a), a).to.equal(0n);
    const topups = await q<{ to_address: string; n: number; status: string }>(
      `SELECT to_address, count(*)::int AS n, min(status) AS status FROM transfers WHERE kind = 'TOP_UP' AND application_id = $1 GROUP BY to_address`, [app.id]);
    expect(topups.length).to.equal(TOKEN_ADDRESSES);
    expect(topups.every((t) => t.n === 1 && t.status === 'SUCCESS'), 'one top-up per token address').to.equal(true);
    // gas left behind at a token address: at most the unused part of the sweep's gas limit at its price
    const sweeps = await q<{ from_address: string; tx_hash: string; fee: string; topup: string; fee_per_unit: string; measured_gas: string }>(
      `SELECT x.from_address, x.tx_hash, x.fee::text AS fee, u.amount::text AS topup, i.fee_per_unit::text AS fee_per_unit, i.source->>'gasLimit' AS measured_gas
         FROM transfers x JOIN collection_items i ON i.transfer_id = x.id JOIN transfers u ON u.id = i.topup_transfer_id
        WHERE x.kind = 'SWEEP' AND x.chain_token_id = $1 AND x.application_id = $2`, [TOKEN_ID, app.id]);
    expect(sweeps.length).to.equal(TOKEN_ADDRESSES);
    for (const s of sweeps) {
      const receipt = await anvilRpc<{ gasUsed: string; effectiveGasPrice: string; status: string }>(anvil.url, 'eth_getTransactionReceipt', [s.tx_hash]);
      const tx = await anvilRpc<{ gas: string }>(anvil.url, 'eth_getTransactionByHash', [s.tx_hash]);
      const left = await balance(s.from_address);
      const paid = BigInt(receipt.gasUsed) * BigInt(receipt.effectiveGasPrice);
      // the address held no gas: what is left is the top-up less the sweep's fee, and the top-up was
      // only the sweep's gas limit at the measured price (docs/collection.md: the bound)
      expect(left, `${s.from_address}: left = top-up − fee`).to.equal(BigInt(s.topup) - paid);
      // the top-up is the gas limit measured when it was sized, at the measured price; the sweep is
      // estimated again when signed, and never needs more: the hot wallet held none of the token
      // when the first top-ups were sized (a first receipt writes a zero storage slot, 17,100 gas
      // more), so those sweeps, signed once an earlier sweep had arrived, need less, and the rest
      // stays at the address as gas for its next sweep (docs/collection.md, first sweep of a token)
      expect(BigInt(s.topup), 'top-up = measured gas limit × measured price').to.equal(BigInt(s.measured_gas) * BigInt(s.fee_per_unit));
      expect(BigInt(tx.gas) <= BigInt(s.measured_gas), 'the signed gas limit is at most the measured one').to.equal(true);
      expect(BigInt(receipt.effectiveGasPrice) <= BigInt(s.fee_per_unit), 'never above the measured price').to.equal(true);
      expect(BigInt(s.fee), 'the recorded fee is the fee paid').to.equal(BigInt(receipt.gasUsed) * BigInt(receipt.effectiveGasPrice));
    }
    // native addresses end at exactly 0: the fee came out of the amount, charged exactly
    for (const a of nativeAddrs) expect(await balance(a), a).to.equal(0n);
    const nativeItems = done.filter((i) => i.chain_token_id === ETH_TOKEN_ID);
    const nativeSweeps = await q<{ fee: string; sent_amount: string; amount: string }>(`SELECT fee::text AS fee, sent_amount::text AS sent_amount, amount::text AS amount FROM transfers WHERE kind = 'SWEEP' AND chain_token_id = $1 AND application_id = $2`, [ETH_TOKEN_ID, app.id]);
    expect(nativeSweeps.every((s) => BigInt(s.sent_amount) + BigInt(s.fee) === BigInt(s.amount)), 'sent + fee = the whole balance').to.equal(true);
    expect(nativeItems.length).to.equal(NATIVE_ADDRESSES);
    // each recharge knows the item that moved it
    const unlinked = await q<{ n: number }>('SELECT count(*)::int AS n FROM recharges WHERE application_id = $1 AND collection_item_id IS NULL', [app.id]);
    expect(unlinked[0]!.n).to.equal(0);
    // the service's own top-ups are not credited as deposits
    expect((await q<{ n: number }>('SELECT count(*)::int AS n FROM recharges WHERE application_id = $1', [app.id]))[0]!.n).to.equal(NATIVE_ADDRESSES + TOKEN_ADDRESSES);
  });

  it('collect callbacks: one SUCCESS per item, signed, every field of the spec with the right types and values', async () => {
    const all = await items(app.id);
    const r = await pollUntil(async () => collectEvents(app.id), (e) => e.length >= all.length, 60_000, 200);
    expect(r.result.length, 'one callback per item').to.equal(all.length);
    for (const got of receiver.received.filter((x) => x.target.startsWith(`/collect/${app.id}`))) expect(verifyCallback(got, app.apiKey, app.apiSecret, got.at)).to.equal(null);
    const recharges = await q<{ id: string; collection_item_id: string }>('SELECT id::text AS id, collection_item_id::text AS collection_item_id FROM recharges WHERE application_id = $1', [app.id]);
    for (const e of r.result) {
      expect(Object.keys(e).sort()).to.deep.equal(COLLECT_FIELDS);
      const item = all.find((i) => i.id === String(e.id))!;
      expect(e).to.include({ event: 'collect', itemId: e.id, applicationId: app.id, chainId: ETH_CHAIN, chainTokenId: item.chain_token_id, stage: 'HOT_GATHER', status: 'SUCCESS', failureReasonCode: null, failureReasonMessage: null, retryTimes: 0, gasFeeCurrency: 'ETH' });
      expect(e.fromAddress.toLowerCase()).to.equal(item.from_address.toLowerCase());
      expect(e.toAddress).to.equal(hot);
      expect(typeof e.requestId).to.equal('number');
      expect(typeof e.fromAddressId === 'number' && e.fromAddressId > 0).to.equal(true);
      expect(e.txHash).to.match(/^0x[0-9a-f]{64}$/);
      expect(e.amount).to.match(/^\d+(\.\d+)?$/);
      expect(e.gasFee).to.match(/^\d+(\.\d+)?$/);
      expect(e.createdTime).to.match(LOCAL_TIME);
      expect(e.finishedTime).to.match(LOCAL_TIME);
      expect(e.relatedRechargeIds).to.deep.equal(recharges.filter((x) => x.collection_item_id === String(e.id)).map((x) => Number(x.id)).sort((a, b) => a - b));
      if (item.chain_token_id === TOKEN_ID) {
        expect(Object.keys(e.gasFunding!).sort()).to.deep.equal(FUNDING_FIELDS);
        expect(e.gasFunding).to.include({ status: 'SUCCESS', userAddress: item.from_address, failureReasonMessage: null });
        expect(e.gasFunding!.txHash).to.match(/^0x[0-9a-f]{64}$/);
        expect(BigInt(e.gasFunding!.amount.replace('.', '').padEnd(1, '0')) > 0n).to.equal(true);
      } else {
        expect(e.gasFunding).to.equal(null);
      }
    }
  });

  it('the cost guard skips a dust address with its reason and sweeps it once it has grown', async () => {
    const a = await newAddress(client, 'dust');
    // 0.002 ETH passes the threshold (0.001) but a sweep's fee is more than 10 % of it at this fee quote? make it certain: a 1 % guard
    await setPolicy(app.id, ETH_TOKEN_ID, { threshold: (ETHER / 1000n).toString(), maxFeeBps: 1 });
    await sendNative(anvil.url, a, ETHER / 500n);
    const skipped = await pollUntil(() => q<{ reason: string }>('SELECT reason FROM collection_skips WHERE address = $1', [a]), (r) => r.length === 1, 60_000, 200);
    expect(skipped.ok, 'recorded as skipped').to.equal(true);
    expect(skipped.result[0]!.reason).to.match(/^uneconomic: the fee .* would exceed 0.01 % of the 2000000000000000 to collect$/);
    expect((await items(app.id)).some((i) => i.from_address === a)).to.equal(false);
    await sendNative(anvil.url, a, 100n * ETHER);
    const grown = await pollUntil(() => items(app.id), (rows) => rows.some((i) => i.from_address === a && i.status === 'SUCCESS'), 120_000, 250);
    expect(grown.ok, 'swept once grown').to.equal(true);
    expect(await balance(a)).to.equal(0n);
    expect(await q('SELECT 1 FROM collection_skips WHERE address = $1', [a])).to.deep.equal([]);
    await setPolicy(app.id, ETH_TOKEN_ID, { threshold: (ETHER / 1000n).toString(), maxFeeBps: 1000 });
  });

  it('a token sweep that reverts on chain ends FAILED with SWEEP_REVERTED, a COLLECTION_FAILED alert and a FAILED callback', async () => {
    const a = await newAddress(client, 'revert');
    // gas at the address (no top-up: the sweep is signed at once); neither token collected until the clock is paused
    await q('UPDATE collection_policies SET enabled = false WHERE application_id = $1', [app.id]);
    await sendNative(anvil.url, a, ETHER / 10n);
    await mintErc20(anvil.url, token, a, 7n * ETHER);
    const credited = await pollUntil(() => q<{ n: number }>(`SELECT count(*)::int AS n FROM recharges WHERE address = $1 AND tx_status = 'SETTLED'`, [a]), (r) => r[0]!.n === 2, 60_000, 100);
    expect(credited.ok, 'both deposits credited').to.equal(true);
    await clock.pause();
    await q('UPDATE collection_policies SET enabled = true WHERE application_id = $1 AND chain_token_id = $2', [app.id, TOKEN_ID]);
    try {
      const sent = await pollUntil(() => q<{ status: string }>(`SELECT x.status FROM collection_items i JOIN transfers x ON x.id = i.transfer_id WHERE i.from_address = $1 AND i.chain_token_id = $2`, [a, TOKEN_ID]),
        (r) => r[0]?.status === 'BROADCASTED', 60_000, 100);
      expect(sent.ok, 'the sweep was broadcast').to.equal(true);
      await anvilRpc(anvil.url, 'eth_sendTransaction', [{ from: DEV_ACCOUNT, to: token, data: '0x8456cb59', maxPriorityFeePerGas: '0x' + (10n ** 12n).toString(16), maxFeePerGas: '0x' + (10n ** 13n).toString(16) }]);
      await mine(anvil.url, 1);
    } finally {
      clock.resume();
    }
    try {
      const failed = await pollUntil(() => items(app.id), (rows) => rows.some((i) => i.from_address === a && i.chain_token_id === TOKEN_ID && i.status === 'FAILED'), 60_000, 200);
      expect(failed.ok, 'FAILED').to.equal(true);
      const item = failed.result.find((i) => i.from_address === a && i.chain_token_id === TOKEN_ID)!;
      expect(item.failure_code).to.equal('SWEEP_REVERTED');
      expect((await q<{ n: number }>(`SELECT count(*)::int AS n FROM operator_alerts WHERE kind = 'COLLECTION_FAILED' AND details->>'item' = $1`, [item.id]))[0]!.n).to.equal(1);
      const ev = await pollUntil(async () => collectEvents(app.id).filter((e) => e.id === Number(item.id)), (e) => e.length === 1, 30_000, 100);
      expect(ev.result[0]).to.include({ status: 'FAILED', failureReasonCode: 'SWEEP_REVERTED' });
      expect(ev.result[0]!.failureReasonMessage).to.match(/reverted/);
      expect(await erc20Balance(anvil.url, token, a), 'the tokens stay at the address').to.equal(7n * ETHER);
    } finally {
      // unpause(), mined before anything else is tried (a sweep ordered before it in the same block would revert)
      const unpause = await anvilRpc<string>(anvil.url, 'eth_sendTransaction', [{ from: DEV_ACCOUNT, to: token, data: '0x3f4ba83a' }]);
      await mine(anvil.url, 1);
      const receipt = await pollUntil(() => anvilRpc<{ status: string } | null>(anvil.url, 'eth_getTransactionReceipt', [unpause]), (r) => r !== null, 30_000, 100);
      expect(receipt.result?.status, 'the token is unpaused').to.equal('0x1');
      await q('UPDATE collection_policies SET enabled = true WHERE application_id = $1', [app.id]);
    }
  });

  it('the surplus above the high watermark goes to the cold address, down to the target; withdrawals are never accepted against it', async () => {
    const cold = freshEvmAddress();
    await q(`INSERT INTO collection_addresses (application_id, chain_id, kind, address) VALUES ($1, $2, 'COLD', $3)`, [app.id, ETH_CHAIN, cold]);
    const onHot = await erc20Balance(anvil.url, token, hot);
    // the watermark reads the ledger: wait until it reflects the chain (a sweep mined but not final
    // — the reverted one above, say — counts as incoming until it is final, and moves nothing)
    const ledger = await pollUntil(() => q<{ on_chain: string; available: string }>(
      `SELECT b.on_chain::text AS on_chain, (b.on_chain - b.reserved - b.incoming)::text AS available FROM hot_wallet_balances b JOIN hot_wallets h ON h.id = b.hot_wallet_id
        WHERE h.application_id = $1 AND b.chain_token_id = $2`, [app.id, TOKEN_ID]), (r) => r[0]?.available === onHot.toString() && r[0]?.on_chain === onHot.toString(), 30_000, 100);
    expect(ledger.ok, `the ledger reads the hot wallet's ${onHot}: ${JSON.stringify(ledger.result)}`).to.equal(true);
    const target = 100n * ETHER;
    await setPolicy(app.id, TOKEN_ID, { threshold: ETHER.toString(), maxFeeBps: 1000, nativeValue: (3000n * ETHER).toString(), target: target.toString(), high: (200n * ETHER).toString(), low: (10n * ETHER).toString() });
    const moved = await pollUntil(() => erc20Balance(anvil.url, token, cold), (b) => b > 0n, 120_000, 250);
    expect(moved.result, 'surplus down to the target').to.equal(onHot - target);
    const cold_items = await pollUntil(() => items(app.id).then((r) => r.filter((i) => i.stage === 'COLD_TRANSFER')), (r) => r.length === 1 && r[0]!.status === 'SUCCESS', 60_000, 200);
    expect(cold_items.ok, `one COLD_TRANSFER item, SUCCESS: ${JSON.stringify(cold_items.result)}`).to.equal(true);
    expect(cold_items.result[0]!.to_address.toLowerCase()).to.equal(cold.toLowerCase());
  });

  it('pass-through: a deposit reaches SETTLED only after the merchant\'s collection address received it', async () => {
    const pt = await svc.storage.applications.create(TEST_ACTOR, { name: 'pass-through', environment: 'test', chains: ['ETH'] });
    await q(`UPDATE applications SET settlement_mode = 'PASS_THROUGH' WHERE id = $1`, [pt.id]);
    await svc.storage.applications.setCallback(TEST_ACTOR, pt.id, 'RECHARGE', receiver.url(`/recharge/${pt.id}`));
    await svc.storage.applications.setCallback(TEST_ACTOR, pt.id, 'COLLECT', receiver.url(`/collect/${pt.id}`));
    const ptClient = new SigningClient(svc.url, { apiKey: pt.apiKey, apiSecret: pt.apiSecret });
    await waitForHotWallet(q, pt.id, ETH_CHAIN, 30_000);
    await setPolicy(pt.id, ETH_TOKEN_ID, { threshold: (ETHER / 1000n).toString(), maxFeeBps: 1000 });
    const a = await newAddress(ptClient, 'pt-user');
    const merchant = freshEvmAddress();
    await sendNative(anvil.url, a, ETHER / 20n);
    // without a merchant address: CONFIRMED, and the item waits naming why
    const waits = await pollUntil(() => items(pt.id), (r) => r.length === 1 && (r[0]!.waiting_reason ?? '').includes('merchant'), 60_000, 200);
    expect(waits.ok, JSON.stringify(waits.result)).to.equal(true);
    const rc = await q<{ tx_status: string }>('SELECT tx_status FROM recharges WHERE application_id = $1', [pt.id]);
    expect(rc).to.deep.equal([{ tx_status: 'CONFIRMED' }]);
    await q(`INSERT INTO collection_addresses (application_id, chain_id, kind, address) VALUES ($1, $2, 'MERCHANT', $3)`, [pt.id, ETH_CHAIN, merchant]);
    const done = await settled(pt.id, 1);
    expect(done[0]!.status).to.equal('SUCCESS');
    const arrived = await balance(merchant);
    expect(arrived > 0n && arrived < ETHER / 20n).to.equal(true);
    const after = await pollUntil(() => q<{ tx_status: string; settled_at: Date | null }>('SELECT tx_status, settled_at FROM recharges WHERE application_id = $1', [pt.id]), (r) => r[0]!.tx_status === 'SETTLED', 30_000, 100);
    expect(after.ok).to.equal(true);
    const [sweep] = await q<{ finished_at: Date }>(`SELECT x.finished_at FROM transfers x JOIN collection_items i ON i.transfer_id = x.id WHERE i.application_id = $1`, [pt.id]);
    expect(after.result[0]!.settled_at!.getTime() >= sweep!.finished_at.getTime(), 'settled once the sweep was final').to.equal(true);
    const events = await pollUntil(async () => receiver.received.filter((r) => r.target.startsWith(`/recharge/${pt.id}`)).map((r) => JSON.parse(r.body.toString('utf8')) as { txStatus: string; confirmations: number; minConfirmations: number }),
      (e) => e.some((x) => x.txStatus === 'SETTLED'), 30_000, 100);
    const s = events.result.find((x) => x.txStatus === 'SETTLED')!;
    expect([s.confirmations, s.minConfirmations]).to.deep.equal([-1, -1]);
    expect(events.result.map((x) => x.txStatus)).to.deep.equal(['PENDING', 'CONFIRMED', 'SETTLED']);
    const ce = collectEvents(pt.id);
    expect(ce.length).to.equal(1);
    expect(ce[0]!.toAddress.toLowerCase()).to.equal(merchant.toLowerCase());
  });

  it('the service\'s own sweeps, top-ups and cold transfer raised no TRANSFER: once the scanner has read past them, no custody outflow, no UNEXPECTED_OUTFLOW alert, no TRANSFER callback', async () => {
    // every transaction the service made on the chain and saw mined, and the highest block holding one
    const mined = await q<{ kind: string; n: number; top: string }>(
      `SELECT kind, count(*)::int AS n, max(block_height)::text AS top FROM transfers WHERE chain_id = $1 AND block_height IS NOT NULL GROUP BY kind ORDER BY kind`, [ETH_CHAIN]);
    expect(Object.fromEntries(mined.map((r) => [r.kind, r.n])), `transactions mined: ${JSON.stringify(mined)}`).to.deep.include({ COLD_TRANSFER: 1, TOP_UP: TOKEN_ADDRESSES });
    expect(mined.find((r) => r.kind === 'SWEEP')?.n ?? 0).to.be.above(NATIVE_ADDRESSES + TOKEN_ADDRESSES);
    const top = mined.reduce((h, r) => (BigInt(r.top) > h ? BigInt(r.top) : h), -1n);
    // the deposit scanner (which matches custody outflows) has read past the last of them: otherwise the counts below prove nothing
    const scanned = await pollUntil(async () => BigInt((await q<{ h: string | null }>('SELECT height::text AS h FROM scan_cursors WHERE chain_id = $1', [ETH_CHAIN]))[0]?.h ?? '-1'), (h) => h >= top, 60_000, 100);
    expect(scanned.ok, `scanner at ${scanned.result}, the service's last transaction in block ${top}`).to.equal(true);
    expect(await q('SELECT id::text AS id, address_kind, from_address, to_address, tx_hash FROM custody_outflows'), 'no custody outflow recorded').to.deep.equal([]);
    expect(await q(`SELECT id::text AS id, message FROM operator_alerts WHERE kind = 'UNEXPECTED_OUTFLOW'`), 'no UNEXPECTED_OUTFLOW alert').to.deep.equal([]);
    expect(await q(`SELECT id::text AS id, application_id FROM callback_tasks WHERE biz_type = 'TRANSFER'`), 'no TRANSFER callback').to.deep.equal([]);
  });
});
