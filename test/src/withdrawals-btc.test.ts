/**
 * Bitcoin withdrawals end to end through the service (API and workers in process: the hot wallet
 * ledger and the payout worker, software key store) on a real bcoin regtest node
 * (@wcs/adapter-bitcoin/regtest, address index and replace-by-fee on): the ledger reads the hot
 * wallet's balance and its outputs (hot_wallet_utxos) through the adapter's unspentOutputs, an
 * unfunded or short wallet refuses with 1007004002 naming the exact shortfall, payouts to P2WPKH,
 * P2TR and P2PKH destinations arrive exactly (read back from the node) with the change back to
 * the hot wallet and the record's fee equal to the transaction's (inputs − outputs), the callbacks
 * BROADCASTED, CONFIRMING, SUCCESS are verified by a receiver written from the spec, and 50
 * concurrent orders from the one hot wallet (more than it has confirmed outputs, so the last ones
 * wait for the change of the first to confirm) all succeed with every signed transaction's inputs
 * pairwise disjoint and one on-chain transaction per order.
 *
 * BTCREG (id 150, 2 confirmations, hrp "rb") and its native coin come from a WCS_CONFIG file, as
 * in deposits-btc.test.ts: the built-in test BTC is testnet ("tb").
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { secp256k1 } from '@noble/curves/secp256k1';
import { address as btcAddress, crypto as btcCrypto, Transaction } from 'bitcoinjs-lib';
import { formatUnits } from '@wcs/core';
import { bitcoinRpc, btcToSats } from '@wcs/adapter-bitcoin';
import { startRegtest, type RegtestNode } from '@wcs/adapter-bitcoin/regtest';
import type { CreatedApplication } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testEnv, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver, verifyCallback } from './support/callback-receiver';
import { expectOk, pollUntil } from './support/expect';
import { sendOutputs as sendToOutputs } from './support/regtest-wallet';
import { cliJson, runCli } from './support/processes';
import type { BatchResult, Withdraw, WithdrawEvent } from './support/payouts';
import { tempDir } from './support/temp';

const BATCH = '/api/v1/wallet/withdraw/batch-create';
const CREATE = '/api/v1/wallet/withdraw/create';
const GET = '/api/v1/wallet/withdraw/get';
const CHAIN_ID = 150;
const CODE = 'BTCREG';
const TOKEN_ID = CHAIN_ID * 100;
const MIN_CONF = 2;
const HRP = 'rb';
/** Merchant-facing code of the balance rule, as a literal (a renumbering must break the test). */
const BALANCE_TOO_LOW = 1007004002;
const EVENT_FIELDS = ['amount', 'appOrderNo', 'applicationId', 'chainId', 'chainTokenId', 'event', 'id', 'status', 'toAddress', 'txHash'];
/** The funding: two large outputs, and 40 small ones (distinct amounts, so largest-first is one order). */
const LARGE = [50_000_000n, 30_000_000n];
const SMALL = Array.from({ length: 40 }, (_, i) => 200_000n + BigInt(i));
const FUNDED = [...LARGE, ...SMALL].reduce((s, v) => s + v, 0n);
const CONCURRENT = 50;

interface VerboseTx { txid: string; hex: string; blockhash?: string | null; confirmations?: number }
/** spent_by: the withdrawal whose payout transfer spends the output (hot_wallet_utxos.spent_by holds the transfer). */
interface Utxo { tx_hash: string; vout: number; amount: string; confirmations: number; spent_by: string | null }

const btc = (sats: bigint) => formatUnits(sats, 8);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const outpoint = (txid: string, vout: number) => `${txid}:${vout}`;
const inputsOf = (tx: Transaction) => tx.ins.map((i) => outpoint(Buffer.from(i.hash).reverse().toString('hex'), i.index));
const randomKey = () => secp256k1.getPublicKey(secp256k1.utils.randomPrivateKey(), true);
/** Destinations no wallet of the node owns: P2WPKH (bech32), P2TR (bech32m, an x-only key) and legacy P2PKH (0x6f, as regtest). */
const p2wpkh = () => btcAddress.toBech32(Buffer.from(btcCrypto.hash160(Buffer.from(randomKey()))), 0, HRP);
const p2tr = () => btcAddress.toBech32(Buffer.from(randomKey().subarray(1)), 1, HRP);
const p2pkh = () => btcAddress.toBase58Check(Buffer.from(btcCrypto.hash160(Buffer.from(randomKey()))), 0x6f);
/** The output script an address stands for, written out by hand (witness v0/v1 programs, P2PKH). */
const scriptOf = (address: string): string => {
  if (address.startsWith(`${HRP}1`)) {
    const { version, data } = btcAddress.fromBech32(address);
    return `${(version === 0 ? 0 : 0x50 + version).toString(16).padStart(2, '0')}${data.length.toString(16).padStart(2, '0')}${hex(data)}`;
  }
  const { version, hash } = btcAddress.fromBase58Check(address);
  expect(version).to.equal(0x6f);
  return `76a914${hex(hash)}88ac`;
};

describe('bitcoin withdrawals on a bcoin regtest node (ledger, UTXO selection, payout worker, callbacks)', function () {
  this.timeout(240_000);
  let node: RegtestNode;
  let db: TestDatabase;
  let svc: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  let pool: Pool;
  let configFile: string;
  let hot: string;
  let hotScript: string;
  /** The funding transaction's outputs to the hot wallet. */
  const funded = new Map<string, bigint>();
  const receiver = new CallbackReceiver();

  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const batch = async (items: unknown[]): Promise<BatchResult> => expectOk(await client.post(BATCH, { items })) as BatchResult;
  const item = (over: Record<string, unknown> = {}) => ({ appOrderNo: `b-${Math.random().toString(36).slice(2)}`, chainCode: CODE, chainTokenId: TOKEN_ID, toAddress: p2wpkh(), amount: '0.001', ...over });
  const get = async (id: number): Promise<Withdraw> => expectOk(await client.get(`${GET}?id=${id}`)) as Withdraw;
  const events = (id: number): WithdrawEvent[] => receiver.received.map((r) => JSON.parse(r.body.toString('utf8')) as WithdrawEvent).filter((e) => e.event === 'withdraw' && e.id === id);
  const quote = async (): Promise<bigint> => BigInt((await q<{ max_fee: string }>('SELECT max_fee::text AS max_fee FROM withdraw_fee_quotes WHERE chain_token_id = $1', [TOKEN_ID]))[0]!.max_fee);
  const ledger = async () => (await q<{ on_chain: string; reserved: string; observed_at: Date }>(
    `SELECT b.on_chain::text AS on_chain, b.reserved::text AS reserved, b.observed_at FROM hot_wallet_balances b JOIN hot_wallets h ON h.id = b.hot_wallet_id
      WHERE h.application_id = $1 AND h.chain_id = $2 AND b.chain_token_id = $3`, [app.id, CHAIN_ID, TOKEN_ID]))[0];
  const utxos = async (): Promise<Utxo[]> => q<Utxo>(
    `SELECT u.tx_hash, u.vout, u.amount::text AS amount, u.confirmations, (SELECT w.id::text FROM withdrawals w WHERE w.transfer_id = u.spent_by) AS spent_by FROM hot_wallet_utxos u JOIN hot_wallets h ON h.id = u.hot_wallet_id
      WHERE h.application_id = $1 AND h.chain_id = $2 ORDER BY u.tx_hash, u.vout`, [app.id, CHAIN_ID]);
  /** Waits for a ledger reading (balance and outputs, one transaction) that began after now. */
  const freshLedger = async () => {
    const [{ now }] = await q<{ now: Date }>('SELECT clock_timestamp() AS now');
    const r = await pollUntil(ledger, (b) => b !== undefined && b.observed_at > now!, 30_000, 50);
    expect(r.ok, 'a new hot wallet reading').to.equal(true);
    return r.result!;
  };
  const tx = async (txid: string): Promise<VerboseTx> => node.rpc<VerboseTx>('getrawtransaction', [txid, true]);
  /** The transaction's fee as the chain says: its inputs' values (read from their transactions) minus its outputs. */
  const actualFee = async (t: Transaction): Promise<bigint> => {
    let fee = 0n;
    for (const i of t.ins) {
      const prev = Transaction.fromHex((await tx(Buffer.from(i.hash).reverse().toString('hex'))).hex);
      fee += BigInt(prev.outs[i.index]!.value);
    }
    for (const o of t.outs) fee -= BigInt(o.value);
    return fee;
  };
  /** The stored signed transactions of an order (withdraw_transactions), decoded. */
  const signedTxs = async (id: number) => (await q<{ tx_hash: string; raw_tx: Buffer }>('SELECT tx_hash, raw_tx FROM withdraw_transactions WHERE withdrawal_id = $1 ORDER BY attempt', [id]))
    .map((r) => ({ txHash: r.tx_hash, raw: r.raw_tx, tx: Transaction.fromBuffer(r.raw_tx) }));
  /** Mines a block at a time until every order is final; the orders as the API shows them. */
  const settle = async (ids: number[], timeoutMs = 90_000): Promise<Withdraw[]> => {
    const final = (rows: Array<{ status: string }>) => rows.every((r) => r.status === 'SUCCESS' || r.status === 'FAILED');
    const r = await pollUntil(async () => {
      const rows = await q<{ id: string; status: string }>('SELECT id::text AS id, status FROM withdrawals WHERE id = ANY($1::bigint[])', [ids]);
      // a block only once something waits for one: an order broadcast, or waiting for its change to confirm
      if (!final(rows)) await node.mine(1);
      return rows;
    }, final, timeoutMs, 300);
    expect(r.ok, `not final: ${JSON.stringify(r.result.filter((x) => x.status !== 'SUCCESS'))}`).to.equal(true);
    const out: Withdraw[] = [];
    for (const id of ids) out.push(await get(id));
    for (const w of out) expect(w.status, JSON.stringify(w)).to.equal('SUCCESS');
    return out;
  };
  const sendOutputs = (outputs: Array<{ address: string; sats: bigint }>) => sendToOutputs(node, outputs);
  /** The three callbacks of a successful order, each verified with the application's secret. */
  const expectCallbacks = async (order: Withdraw, done: Withdraw) => {
    const r = await pollUntil(async () => events(order.id).map((e) => e.status), (s) => s.length >= 3, 30_000, 50);
    expect(r.result, `callbacks of ${order.id}`).to.deep.equal(['BROADCASTED', 'CONFIRMING', 'SUCCESS']);
    const got = receiver.received.filter((x) => (JSON.parse(x.body.toString('utf8')) as WithdrawEvent).id === order.id);
    expect(got).to.have.length(3);
    for (const req of got) {
      expect(verifyCallback(req, app.apiKey, app.apiSecret)).to.equal(null);
      expect(req.target).to.equal('/merchant/withdraw');
      const e = JSON.parse(req.body.toString('utf8')) as WithdrawEvent;
      expect(Object.keys(e).sort()).to.deep.equal(EVENT_FIELDS);
      expect(e).to.deep.include({
        event: 'withdraw', applicationId: app.id, appOrderNo: order.appOrderNo, chainId: CHAIN_ID, chainTokenId: TOKEN_ID, toAddress: order.toAddress, amount: order.amount, txHash: done.txHash,
      });
    }
  };
  /**
   * One paid order, checked against the node: its one stored transaction is the mined one (same
   * bytes), pays the destination exactly at vout 0, returns the change (if any) to the hot wallet
   * at vout 1 and nothing else, spends only hot wallet outputs, and the record's fee is the
   * transaction's actual fee. Returns the decoded transaction.
   */
  const expectPaid = async (done: Withdraw, to: string, sats: bigint): Promise<Transaction> => {
    const stored = await signedTxs(done.id);
    expect(stored, `order ${done.id} has one signed transaction`).to.have.length(1);
    const [{ txHash, raw, tx: t }] = stored as [(typeof stored)[0]];
    expect(done.txHash).to.equal(txHash);
    expect(t.getId()).to.equal(txHash);
    const mined = await tx(txHash);
    expect(mined.hex, 'the node holds the stored bytes').to.equal(raw.toString('hex'));
    expect(mined.blockhash, `${txHash} is in a block`).to.be.a('string');
    expect(mined.confirmations).to.be.at.least(MIN_CONF);
    const header = await node.rpc<{ height: number }>('getblockheader', [mined.blockhash, true]);
    expect(done.blockHeight).to.equal(header.height);
    expect(done.confirmations).to.be.at.least(MIN_CONF);
    expect(t.outs.length).to.be.oneOf([1, 2]);
    expect([hex(t.outs[0]!.script), BigInt(t.outs[0]!.value)]).to.deep.equal([scriptOf(to), sats]);
    if (t.outs.length === 2) expect(hex(t.outs[1]!.script), 'change to the hot wallet').to.equal(hotScript);
    const fee = await actualFee(t);
    expect(fee > 0n).to.equal(true);
    expect(done.fee, 'the record\'s fee is the actual fee').to.equal(btc(fee));
    return t;
  };

  before(async function () {
    this.timeout(120_000);
    node = await startRegtest();
    configFile = path.join(tempDir('wcs-wd-btc-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({
      chains: [{ id: CHAIN_ID, code: CODE, name: 'Bitcoin regtest (bcoin)', family: 'bitcoin', environment: 'test', network: 'regtest', nativeSymbol: 'BTC', decimals: 8, confirmations: MIN_CONF, options: { bech32Hrp: HRP } }],
      tokens: [{ id: TOKEN_ID, chainCode: CODE, environment: 'test', symbol: 'BTC', name: 'Bitcoin regtest native coin', contract: null, decimals: 8 }],
    }));
    await prepareTestKeystore();
    await receiver.start();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 2 });
    svc = await WcsService.start(testConfig(db.url, {
      [`WCS_RPC_TEST_${CODE}`]: node.url,
      [`WCS_SCAN_START_TEST_${CODE}`]: String(Number(await node.rpc<number>('getblockcount')) + 1),
      WCS_CONFIG: configFile, WCS_CALLBACK_POLL_MS: '50', WCS_CALLBACK_ALLOW_PRIVATE: '1',
      WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '200',
    }), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'btc-payouts', environment: 'test', chains: [CODE] });
    await svc.storage.applications.setCallback(TEST_ACTOR, app.id, 'WITHDRAW', receiver.url('/merchant/withdraw'));
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    const r = await pollUntil(() => q<{ address: string }>('SELECT address FROM hot_wallets WHERE application_id = $1 AND chain_id = $2', [app.id, CHAIN_ID]), (rows) => rows.length === 1, 30_000, 50);
    expect(r.ok, 'the ledger made the hot wallet').to.equal(true);
    hot = r.result[0]!.address;
    hotScript = scriptOf(hot);
  });

  after(async () => {
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await receiver.stop();
    await node?.stop();
  });

  it('an unfunded hot wallet (P2WPKH) refuses an order with 1007004002 naming the shortfall: amount plus the fee quote, 0 available; nothing persisted', async () => {
    expect(hot).to.match(/^rb1q[02-9ac-hj-np-z]{38}$/);
    const fee = await pollUntil(() => q<{ max_fee: string }>('SELECT max_fee::text AS max_fee FROM withdraw_fee_quotes WHERE chain_token_id = $1', [TOKEN_ID]), (rows) => rows.length === 1, 30_000, 50);
    expect(fee.ok, 'a fee quote for BTCREG').to.equal(true);
    const maxFee = await quote();
    // a two-input payment with change at the regtest fallback of 1 sat/vB: 11 + 2 × 68 + 2 × 31 vB
    expect(maxFee).to.equal(209n);
    expect(await freshLedger()).to.include({ on_chain: '0', reserved: '0' });
    const r = await batch([item({ amount: '0.5' })]);
    expect(r).to.include({ total: 1, successCount: 0, failedCount: 1 });
    expect(r.items[0]).to.include({ success: false, withdraw: null, errorCode: BALANCE_TOO_LOW });
    const need = btc(50_000_000n + maxFee);
    expect(r.items[0]!.errorMessage).to.contain(`needs ${need} BTC (amount plus the fee), 0 available: short by ${need} BTC`);
    expect(await q('SELECT id FROM withdrawals')).to.deep.equal([]);
  });

  it('funding with 42 outputs: the ledger lists them at 0 confirmations while unmined (balance 0), after a block reads the balance and every output confirmed; `wcs hotwallets` shows it', async () => {
    const txid = await sendOutputs([...LARGE, ...SMALL].map((sats) => ({ address: hot, sats })));
    const t = Transaction.fromHex((await tx(txid)).hex);
    t.outs.forEach((o, vout) => {
      if (hex(o.script) === hotScript) funded.set(outpoint(txid, vout), BigInt(o.value));
    });
    expect([...funded.values()].sort((a, b) => (a < b ? 1 : -1))).to.deep.equal([...LARGE, ...SMALL].sort((a, b) => (a < b ? 1 : -1)));
    const key = (u: Utxo) => outpoint(u.tx_hash, u.vout);

    const pending = await pollUntil(utxos, (rows) => rows.length === funded.size, 30_000, 50);
    expect(pending.ok, `mempool outputs listed: ${pending.result.length}`).to.equal(true);
    expect(pending.result.map((u) => [key(u), BigInt(u.amount), u.confirmations, u.spent_by])).to.have.deep.members([...funded].map(([k, v]) => [k, v, 0, null]));
    expect((await freshLedger()).on_chain, 'unconfirmed outputs are not in the balance').to.equal('0');

    await node.mine(1);
    const b = await freshLedger();
    expect(b).to.include({ on_chain: FUNDED.toString(), reserved: '0' });
    expect((await utxos()).map((u) => [key(u), BigInt(u.amount), u.confirmations, u.spent_by])).to.have.deep.members([...funded].map(([k, v]) => [k, v, 1, null]));

    const env = { ...process.env, ...testEnv(db.url, { WCS_CONFIG: configFile }) };
    const args = ['hotwallets', '--app', String(app.id), '--json'];
    const listed = cliJson(args, await runCli(args, env)) as Array<{ applicationId: number; chainCode: string; address: string; token: string; onChain: string | null; reserved: string }>;
    expect(listed.map((x) => [x.applicationId, x.chainCode, x.address, x.token, x.onChain, x.reserved])).to.deep.equal([[app.id, CODE, hot, 'BTC', btc(FUNDED), '0']]);
  });

  it('pays a P2WPKH destination of the node\'s wallet: the largest confirmed output is taken and marked spent by the order, the exact amount arrives, the change comes back, fee = inputs − outputs, three verified callbacks', async () => {
    const to = await node.newAddress();
    expect(to).to.match(/^rb1q/);
    const order = expectOk(await client.post(CREATE, item({ toAddress: to, amount: '0.12345678' }))) as Withdraw;
    expect(order).to.include({ chainCode: CODE, chainTokenId: TOKEN_ID, token: 'BTC', amount: '0.12345678', fromAddress: hot, toAddress: to, status: 'PROCESSING', txHash: null, fee: btc(await quote()) });

    const broadcast = await pollUntil(() => get(order.id), (w) => w.status !== 'PROCESSING', 30_000, 50);
    expect(broadcast.result.status).to.equal('BROADCASTED');
    const [{ tx: signed, txHash }] = (await signedTxs(order.id)) as [{ tx: Transaction; txHash: string; raw: Buffer }];
    const largest = [...funded].find(([, v]) => v === LARGE[0])![0];
    expect(inputsOf(signed), 'largest first: one 0.5 BTC input covers it').to.deep.equal([largest]);
    expect((await utxos()).filter((u) => u.spent_by === String(order.id)).map((u) => outpoint(u.tx_hash, u.vout))).to.deep.equal([largest]);
    expect(await node.rpc<string[]>('getrawmempool')).to.include(txHash);
    expect(broadcast.result.txHash).to.equal(txHash);

    const [done] = await settle([order.id]);
    const t = await expectPaid(done!, to, 12_345_678n);
    expect(t.outs).to.have.length(2);
    expect(BigInt(t.outs[1]!.value)).to.equal(LARGE[0]! - 12_345_678n - (await actualFee(t)));
    expect(btcToSats(await node.walletRpc<number>('getreceivedbyaddress', [to, 0])), 'the node wallet received it').to.equal(12_345_678n);
    await expectCallbacks(order, done!);
    expect(done!.callbackTaskId).to.be.a('number');

    // the next reading: the spent output gone, the change in its place, confirmed
    await freshLedger();
    const rows = await utxos();
    expect(rows.map((u) => outpoint(u.tx_hash, u.vout))).to.not.include(largest);
    expect(rows.find((u) => u.tx_hash === txHash)).to.deep.include({ vout: 1, amount: t.outs[1]!.value.toString(), spent_by: null });
  });

  it('pays a P2TR and a P2PKH destination from one batch: two transactions with disjoint inputs, exact amounts, change back, actual fees, verified callbacks', async () => {
    const toTr = p2tr();
    const toPkh = p2pkh();
    const r = await batch([item({ toAddress: toTr, amount: '0.2' }), item({ toAddress: toPkh, amount: '0.00054321' })]);
    expect(r).to.include({ total: 2, successCount: 2 });
    const [tr, pkh] = r.items.map((x) => x.withdraw!) as [Withdraw, Withdraw];
    expect(tr.toAddress).to.equal(toTr);
    expect(pkh.toAddress).to.equal(toPkh);
    const done = await settle([tr.id, pkh.id]);
    const a = await expectPaid(done[0]!, toTr, 20_000_000n);
    const b = await expectPaid(done[1]!, toPkh, 54_321n);
    expect(a.getId()).to.not.equal(b.getId());
    const ins = [...inputsOf(a), ...inputsOf(b)];
    expect(new Set(ins).size, 'no input in both').to.equal(ins.length);
    for (const t of [a, b]) expect(t.outs).to.have.length(2);
    await expectCallbacks(tr, done[0]!);
    await expectCallbacks(pkh, done[1]!);
    // the outputs the node holds at the destinations
    expect(btcToSats((await node.rpc<{ value: number } | null>('gettxout', [a.getId(), 0, true]))!.value)).to.equal(20_000_000n);
    expect(btcToSats((await node.rpc<{ value: number } | null>('gettxout', [b.getId(), 0, true]))!.value)).to.equal(54_321n);
  });

  it(`${CONCURRENT} concurrent orders from the one hot wallet (more than its confirmed outputs): all SUCCESS, every signed transaction's inputs pairwise disjoint, one on-chain transaction per order`, async () => {
    await freshLedger();
    const confirmed = (await utxos()).filter((u) => u.spent_by === null && u.confirmations >= 1);
    expect(confirmed.length, 'fewer confirmed outputs than orders: the last orders wait for change').to.be.below(CONCURRENT);
    const before = new Set((await q<{ tx_hash: string }>('SELECT tx_hash FROM withdraw_transactions')).map((x) => x.tx_hash));

    const batches = await Promise.all(Array.from({ length: 5 }, () => batch(Array.from({ length: CONCURRENT / 5 }, () => item({ amount: '0.001' })))));
    for (const r of batches) expect(r, JSON.stringify(r.items.filter((x) => !x.success))).to.include({ total: CONCURRENT / 5, successCount: CONCURRENT / 5 });
    const orders = batches.flatMap((r) => r.items.map((x) => x.withdraw!));
    expect(new Set(orders.map((o) => o.id)).size).to.equal(CONCURRENT);

    const done = await settle(orders.map((o) => o.id), 180_000);
    const txs: Transaction[] = [];
    for (let k = 0; k < orders.length; k++) txs.push(await expectPaid(done[k]!, orders[k]!.toAddress, 100_000n));
    expect(new Set(txs.map((t) => t.getId())).size, 'one transaction per order').to.equal(CONCURRENT);

    // every transaction the worker ever signed for this wallet, decoded: no input in two of them
    const all = await q<{ withdrawal_id: string; tx_hash: string; raw_tx: Buffer }>('SELECT withdrawal_id::text AS withdrawal_id, tx_hash, raw_tx FROM withdraw_transactions ORDER BY withdrawal_id, attempt');
    expect(all.filter((x) => !before.has(x.tx_hash))).to.have.length(CONCURRENT);
    const spender = new Map<string, string>();
    for (const x of all) {
      for (const i of inputsOf(Transaction.fromBuffer(x.raw_tx))) {
        expect(spender.get(i), `${i} spent by orders ${spender.get(i)} and ${x.withdrawal_id}`).to.equal(undefined);
        spender.set(i, x.withdrawal_id);
      }
    }
    // each input is an output of the hot wallet: the funding, or the change of an earlier withdrawal
    const changes = new Set(all.map((x) => Transaction.fromBuffer(x.raw_tx)).flatMap((t) => t.outs.map((o, vout) => (hex(o.script) === hotScript ? outpoint(t.getId(), vout) : null)).filter((o) => o !== null)));
    for (const i of spender.keys()) expect(funded.has(i) || changes.has(i), `${i} is a hot wallet output`).to.equal(true);
    // the orders beyond the confirmed outputs spent change of this round, once it confirmed
    const round = new Set(txs.map((t) => t.getId()));
    const respent = txs.filter((t) => inputsOf(t).some((i) => round.has(i.split(':')[0]!)));
    expect(respent.length, 'orders paid from the change of this round').to.be.at.least(CONCURRENT - confirmed.length);

    for (let k = 0; k < orders.length; k++) await expectCallbacks(orders[k]!, done[k]!);
  });

  it('afterwards: the ledger equals the node (balance = funding − amounts − actual fees, outputs = the node\'s), nothing reserved; an order larger than the wallet holds is refused with 1007004002 and the exact shortfall', async () => {
    const r = await pollUntil(freshLedger, (b) => b.reserved === '0', 30_000, 50);
    expect(r.ok, `reservations released: ${JSON.stringify(r.result)}`).to.equal(true);
    const paid = await q<{ amount: string; fee: string }>(`SELECT amount::text AS amount, fee::text AS fee FROM withdrawals WHERE status = 'SUCCESS' AND fee_final`);
    expect(paid).to.have.length(3 + CONCURRENT);
    const spent = paid.reduce((s, w) => s + BigInt(w.amount) + BigInt(w.fee), 0n);
    const balance = BigInt(r.result.on_chain);
    expect(balance).to.equal(FUNDED - spent);
    // the node's own view of the hot wallet (bcoin's address index)
    const coins = await bitcoinRpc({ url: node.url }).rest<Array<{ hash: string; index: number; value: number }>>(`/coin/address/${hot}`);
    expect((await utxos()).map((x) => [outpoint(x.tx_hash, x.vout), x.amount, x.spent_by])).to.have.deep.members(coins.map((c) => [outpoint(c.hash, c.index), String(c.value), null]));
    expect(coins.reduce((s, c) => s + BigInt(c.value), 0n)).to.equal(balance);

    const maxFee = await quote();
    const over = balance - maxFee + 1n; // one satoshi more than amount plus the fee fits
    const before = (await q('SELECT id FROM withdrawals')).length;
    const res = await batch([item({ amount: btc(over) }), item({ amount: btc(balance + 100_000_000n) })]);
    expect(res).to.include({ total: 2, successCount: 0, failedCount: 2 });
    expect(res.items.map((x) => x.errorCode)).to.deep.equal([BALANCE_TOO_LOW, BALANCE_TOO_LOW]);
    expect(res.items[0]!.errorMessage).to.contain(`needs ${btc(balance + 1n)} BTC (amount plus the fee), ${btc(balance)} available: short by 0.00000001 BTC`);
    expect(res.items[1]!.errorMessage).to.contain(`needs ${btc(balance + 100_000_000n + maxFee)} BTC (amount plus the fee), ${btc(balance)} available: short by ${btc(100_000_000n + maxFee)} BTC`);
    expect((await q('SELECT id FROM withdrawals')).length).to.equal(before);
  });

  it('the service\'s own payouts raised no TRANSFER: once the scanner has read past them, no custody outflow, no UNEXPECTED_OUTFLOW alert, no TRANSFER callback', async () => {
    // every transaction the service made on the chain and saw mined, and the highest block holding one
    const mined = await q<{ kind: string; n: number; top: string }>(
      `SELECT kind, count(*)::int AS n, max(block_height)::text AS top FROM transfers WHERE chain_id = $1 AND block_height IS NOT NULL GROUP BY kind ORDER BY kind`, [CHAIN_ID]);
    expect(mined.map((r) => [r.kind, r.n]), `transactions mined: ${JSON.stringify(mined)}`).to.deep.equal([['PAYOUT', 3 + CONCURRENT]]);
    const top = mined.reduce((h, r) => (BigInt(r.top) > h ? BigInt(r.top) : h), -1n);
    // the deposit scanner (which matches custody outflows) has read past the last of them: otherwise the counts below prove nothing
    const scanned = await pollUntil(async () => BigInt((await q<{ h: string | null }>('SELECT height::text AS h FROM scan_cursors WHERE chain_id = $1', [CHAIN_ID]))[0]?.h ?? '-1'), (h) => h >= top, 60_000, 100);
    expect(scanned.ok, `scanner at ${scanned.result}, the service's last transaction in block ${top}`).to.equal(true);
    expect(await q('SELECT id::text AS id, address_kind, from_address, to_address, tx_hash FROM custody_outflows'), 'no custody outflow recorded').to.deep.equal([]);
    expect(await q(`SELECT id::text AS id, message FROM operator_alerts WHERE kind = 'UNEXPECTED_OUTFLOW'`), 'no UNEXPECTED_OUTFLOW alert').to.deep.equal([]);
    expect(await q(`SELECT id::text AS id, application_id FROM callback_tasks WHERE biz_type = 'TRANSFER'`), 'no TRANSFER callback').to.deep.equal([]);
  });
});
