/**
 * Bitcoin collection end to end through the service (API and workers in process: scanner, hot
 * wallet ledger, collection intake and the transfer pipeline, software key store) on a real bcoin
 * regtest node: 50 deposit addresses, each paid one or two outputs by the node's wallet and mined
 * to the chain's confirmations, are consolidated into the hot wallet in transactions of at most
 * WCS_COLLECT_MAX_INPUTS (20 here) inputs, each input signed by its own deposit key, the fee out of
 * the amount. Checked against the node: every deposit output spent exactly once, an output still
 * in the mempool when planning ran left out until it confirmed, the fee of each transaction
 * (inputs − output) equal to the recorded fee and to the crafted maximum, its real vsize at most
 * the charged one (ratio printed), the hot wallet ledger equal to the node's view, each item's
 * amount plus its fee share equal to its outputs, the `collect` callbacks field by field. Then the
 * fee-rate ceiling (WCS_COLLECT_MAX_FEE_RATE_TEST_BTCREG): below the node's rate the items wait
 * naming rate and ceiling; at the rate they go.
 *
 * BTCREG (id 150, 2 confirmations, hrp "rb") and its native coin come from a WCS_CONFIG file, as
 * in deposits-btc.test.ts.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { address as btcAddress, Transaction } from 'bitcoinjs-lib';
import { formatUnits } from '@wcs/core';
import { bitcoinRpc, consolidationVsize, feeForVsize, parseFeeRate } from '@wcs/adapter-bitcoin';
import { startRegtest, type RegtestNode } from '@wcs/adapter-bitcoin/regtest';
import type { CreatedApplication } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver, verifyCallback } from './support/callback-receiver';
import { expectOk, pollUntil, sleep } from './support/expect';
import { waitForHotWallet } from './support/payouts';
import { ADDRESS_CREATE } from './support/recharge-types';
import { sendOutputs } from './support/regtest-wallet';
import { tempDir } from './support/temp';

const CHAIN_ID = 150;
const CODE = 'BTCREG';
const TOKEN_ID = CHAIN_ID * 100;
const MIN_CONF = 2;
const HRP = 'rb';
const ADDRESSES = 50;
const MAX_INPUTS = 20;
const CEILING_VAR = `WCS_COLLECT_MAX_FEE_RATE_TEST_${CODE}`;
const COLLECT_FIELDS = [
  'amount', 'applicationId', 'chainId', 'chainTokenId', 'createdTime', 'event', 'failureReasonCode', 'failureReasonMessage', 'finishedTime', 'fromAddress', 'fromAddressId',
  'gasFee', 'gasFeeCurrency', 'gasFunding', 'id', 'itemId', 'relatedRechargeIds', 'requestId', 'retryTimes', 'stage', 'status', 'toAddress', 'txHash',
];
const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

interface CollectEvent {
  event: string; id: number; requestId: number; itemId: number; applicationId: number; chainId: number; chainTokenId: number; stage: string; fromAddressId: number;
  fromAddress: string; toAddress: string; amount: string; txHash: string | null; status: string; failureReasonCode: string | null; failureReasonMessage: string | null;
  retryTimes: number; gasFee: string | null; gasFeeCurrency: string | null; gasFunding: unknown; relatedRechargeIds: number[]; createdTime: string; finishedTime: string | null;
}
interface Item {
  id: string; request_id: string; from_address_id: number; from_address: string; to_address: string; amount: string; gas_fee: string | null; status: string; waiting_reason: string | null;
  tx_hash: string | null; transfer_id: string | null; retry_times: number; failure_code: string | null;
}
interface Sweep { id: string; status: string; amount: string; sent_amount: string; fee: string; fee_final: boolean; tx_hash: string; to_address: string; created_at: Date }
interface Recharge { id: string; tx_hash: string; position: number; amount: string; address: string; tx_status: string; collection_item_id: string | null; confirmed_at: Date | null }

const btc = (sats: bigint) => formatUnits(sats, 8);
const outpoint = (txid: string, vout: number) => `${txid}:${vout}`;
const inputsOf = (tx: Transaction) => tx.ins.map((i) => outpoint(Buffer.from(i.hash).reverse().toString('hex'), i.index));
const sum = (xs: readonly bigint[]) => xs.reduce((s, v) => s + v, 0n);

describe('collection on a bcoin regtest node: bounded consolidations of deposit outputs, exact fees, ledger, collect callbacks, the fee-rate ceiling', function () {
  this.timeout(600_000);
  let node: RegtestNode;
  let db: TestDatabase;
  let svc: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  let pool: Pool;
  let configFile: string;
  let scanStart: string;
  let hot: string;
  const receiver = new CallbackReceiver();
  /** address → its address record id (address/create). */
  const addressIds = new Map<string, number>();

  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const start = async (ceiling: string) => {
    svc = await WcsService.start(testConfig(db.url, {
      [`WCS_RPC_TEST_${CODE}`]: node.url, [`WCS_SCAN_START_TEST_${CODE}`]: scanStart, WCS_CONFIG: configFile,
      WCS_CALLBACK_POLL_MS: '50', WCS_CALLBACK_ALLOW_PRIVATE: '1', WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '100',
      WCS_COLLECT_PLAN_MS: '200', WCS_COLLECT_MAX_INPUTS: String(MAX_INPUTS), [CEILING_VAR]: ceiling,
    }), testLogger(), { api: true, workers: true });
    if (app) client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
  };
  const newAddress = async (user: string): Promise<string> => {
    const r = expectOk(await client.post(ADDRESS_CREATE, { chainCode: CODE, externalUserId: user })) as { id: number; address: string };
    addressIds.set(r.address, r.id);
    return r.address;
  };
  const setPolicy = () => q(
    `INSERT INTO collection_policies (application_id, chain_token_id, threshold, max_fee_bps, native_value, on_confirmed, schedule_seconds)
     VALUES ($1, $2, $3::numeric, $4, NULL, true, NULL)`, [app.id, TOKEN_ID, '100000', 5000]);
  const items = () => q<Item>(
    `SELECT id::text AS id, request_id::text AS request_id, from_address_id, from_address, to_address, amount::text AS amount, gas_fee::text AS gas_fee, status, waiting_reason,
            tx_hash, transfer_id::text AS transfer_id, retry_times, failure_code FROM collection_items WHERE application_id = $1 ORDER BY collection_items.id`, [app.id]);
  const recharges = () => q<Recharge>(
    `SELECT id::text AS id, tx_hash, position, amount::text AS amount, address, tx_status, collection_item_id::text AS collection_item_id, confirmed_at
       FROM recharges WHERE application_id = $1 ORDER BY recharges.id`, [app.id]);
  const sweeps = () => q<Sweep>(
    `SELECT id::text AS id, status, amount::text AS amount, sent_amount::text AS sent_amount, fee::text AS fee, fee_final, tx_hash, to_address, created_at
       FROM transfers WHERE application_id = $1 AND kind = 'SWEEP' ORDER BY transfers.id`, [app.id]);
  /** The outputs of a transaction paying an address (txid:vout → sats), from the node's raw bytes. */
  const outputsTo = async (txid: string, address: string): Promise<Map<string, bigint>> => {
    const script = btcAddress.toOutputScript(address, { bech32: HRP, pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef, messagePrefix: '', bip32: { public: 0, private: 0 } });
    const t = Transaction.fromHex(await node.rpc<string>('getrawtransaction', [txid, false]));
    const out = new Map<string, bigint>();
    t.outs.forEach((o, vout) => {
      if (Buffer.from(o.script).equals(Buffer.from(script))) out.set(outpoint(txid, vout), BigInt(o.value));
    });
    return out;
  };
  /** Waits until the recharges of these outputs are all in one of `statuses`. */
  const credited = async (outs: ReadonlyMap<string, bigint>, statuses: string[]) => {
    const r = await pollUntil(recharges, (rows) => [...outs.keys()].every((k) => rows.some((x) => outpoint(x.tx_hash, x.position) === k && statuses.includes(x.tx_status))), 60_000, 100);
    expect(r.ok, `recharges ${statuses.join('/')}: ${r.result.length}`).to.equal(true);
    for (const [k, sats] of outs) expect(BigInt(r.result.find((x) => outpoint(x.tx_hash, x.position) === k)!.amount), k).to.equal(sats);
  };
  /** Mines a block at a time until every item of the application is final (and at least n exist). */
  const settle = async (n: number, timeoutMs = 180_000): Promise<Item[]> => {
    const final = (rows: Item[]) => rows.length >= n && rows.every((i) => i.status === 'SUCCESS' || i.status === 'FAILED');
    const r = await pollUntil(async () => {
      const rows = await items();
      if (!final(rows)) await node.mine(1);
      return rows;
    }, final, timeoutMs, 400);
    expect(r.ok, `items not final: ${JSON.stringify(r.result.filter((i) => i.status !== 'SUCCESS').slice(0, 3))} (${r.result.length} items)`).to.equal(true);
    expect(r.result.filter((i) => i.status !== 'SUCCESS'), 'every item SUCCESS').to.deep.equal([]);
    return r.result;
  };
  const collectEvents = (): CollectEvent[] => receiver.received.filter((r) => r.target === '/merchant/collect').map((r) => JSON.parse(r.body.toString('utf8')) as CollectEvent);

  before(async function () {
    this.timeout(120_000);
    node = await startRegtest();
    scanStart = String(Number(await node.rpc<number>('getblockcount')) + 1);
    configFile = path.join(tempDir('wcs-collect-btc-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({
      chains: [{ id: CHAIN_ID, code: CODE, name: 'Bitcoin regtest (bcoin)', family: 'bitcoin', environment: 'test', network: 'regtest', nativeSymbol: 'BTC', decimals: 8, confirmations: MIN_CONF, options: { bech32Hrp: HRP } }],
      tokens: [{ id: TOKEN_ID, chainCode: CODE, environment: 'test', symbol: 'BTC', name: 'Bitcoin regtest native coin', contract: null, decimals: 8 }],
    }));
    await prepareTestKeystore();
    await receiver.start();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 3 });
    // a ceiling far above the regtest rate: read every step, never holding
    await start('1000');
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'btc-collect', environment: 'test', chains: [CODE] });
    await svc.storage.applications.setCallback(TEST_ACTOR, app.id, 'COLLECT', receiver.url('/merchant/collect'));
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    hot = await waitForHotWallet(q, app.id, CHAIN_ID, 30_000);
    const quote = await pollUntil(() => q('SELECT 1 FROM withdraw_fee_quotes WHERE chain_token_id = $1', [TOKEN_ID]), (rows) => rows.length === 1, 30_000, 50);
    expect(quote.ok, 'a fee quote for BTCREG (the cost guard needs one)').to.equal(true);
  });

  after(async () => {
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await receiver.stop();
    await node?.stop();
  });

  it(`${ADDRESSES} deposit addresses with one or two confirmed outputs each: consolidated in transactions of at most ${MAX_INPUTS} inputs, every output spent once, an unconfirmed one left for later; exact fees and vsize; ledger = node; item amounts and fee shares; collect callbacks`, async () => {
    const addrs: string[] = [];
    for (let i = 0; i < ADDRESSES; i++) addrs.push(await newAddress(`u-${i}`));
    const late = await newAddress('late');
    // four funding transactions; every third address gets a second output (every sixth in the same transaction as its first)
    const groups: Array<Array<{ address: string; sats: bigint }>> = [[], [], [], []];
    addrs.forEach((a, i) => {
      groups[i % 4]!.push({ address: a, sats: 1_000_000n + BigInt(i) * 1_001n });
      if (i % 3 === 0) groups[(i % 6 === 0 ? i : i + 1) % 4]!.push({ address: a, sats: 300_000n + BigInt(i) });
    });
    groups[0]!.push({ address: late, sats: 2_000_000n });
    const funding: string[] = [];
    for (const g of groups) funding.push(await sendOutputs(node, g));
    /** Every deposit output of the first round, txid:vout → sats, and per address. */
    const paid = new Map<string, bigint>();
    const ofAddress = new Map<string, string[]>();
    for (const a of [...addrs, late]) {
      for (const txid of funding) {
        for (const [k, v] of await outputsTo(txid, a)) {
          paid.set(k, v);
          ofAddress.set(a, [...(ofAddress.get(a) ?? []), k]);
        }
      }
    }
    const twoOutputs = addrs.filter((a) => ofAddress.get(a)!.length === 2).length;
    expect(twoOutputs).to.equal(17);
    expect(paid.size).to.equal(ADDRESSES + twoOutputs + 1);
    await node.mine(MIN_CONF);
    await credited(paid, ['SETTLED']);

    // an output to `late` that stays in the mempool while the service plans and signs
    const unconfirmedTx = await node.send(late, 1_500_000n);
    const unconfirmed = await outputsTo(unconfirmedTx, late);
    expect([...unconfirmed.values()]).to.deep.equal([1_500_000n]);
    const lateOut = [...unconfirmed.keys()][0]!;

    await setPolicy();
    // every address planned and every consolidation signed and broadcast, before any block
    const launched = await pollUntil(async () => ({ items: await items(), sweeps: await sweeps() }),
      (r) => r.items.length === ADDRESSES + 1 && r.items.every((i) => i.status === 'SWEEPING' && i.tx_hash !== null) && r.sweeps.length > 0 && r.sweeps.every((s) => s.status === 'BROADCASTED'), 60_000, 100);
    expect(launched.ok, `launched: ${JSON.stringify(launched.result.items.filter((i) => i.status !== 'SWEEPING').slice(0, 3))}`).to.equal(true);
    const firstRound = launched.result.sweeps;
    const mempool = await node.rpc<string[]>('getrawmempool');
    expect(mempool, 'the late output is still unconfirmed').to.include(unconfirmedTx);
    for (const s of firstRound) expect(mempool).to.include(s.tx_hash);
    expect(new Set(launched.result.items.map((i) => i.request_id)).size, 'one planning pass: one request').to.equal(1);
    const [request] = await q<{ trigger: string }>('SELECT trigger FROM collection_requests WHERE id = $1', [launched.result.items[0]!.request_id]);
    expect(request!.trigger).to.equal('DEPOSIT');
    // ≥ ⌈outputs / bound⌉ transactions, none above the bound
    expect(firstRound.length).to.be.at.least(Math.max(3, Math.ceil(paid.size / MAX_INPUTS)));
    for (const s of firstRound) {
      const [a] = await q<{ raw_tx: Buffer }>('SELECT raw_tx FROM transfer_attempts WHERE transfer_id = $1', [s.id]);
      const ins = inputsOf(Transaction.fromBuffer(a!.raw_tx));
      expect(ins.length, `transaction ${s.tx_hash}`).to.be.at.most(MAX_INPUTS);
      expect(ins, 'the unconfirmed output is in no consolidation').to.not.include(lateOut);
    }

    // blocks until every item, the late output's own one included, is final
    const done = await settle(ADDRESSES + 2);
    expect(done).to.have.length(ADDRESSES + 2);
    const lateItems = done.filter((i) => i.from_address === late);
    expect(lateItems, 'late: one item for its confirmed output, then one for the output once it confirmed').to.have.length(2);
    const all = await recharges();
    const lateRecharge = all.find((r) => outpoint(r.tx_hash, r.position) === lateOut)!;
    expect(lateRecharge.collection_item_id).to.equal(lateItems[1]!.id);
    paid.set(lateOut, 1_500_000n);
    ofAddress.set(late, [...ofAddress.get(late)!, lateOut]);

    // every recharge linked to the item that moved it; the deposits are exactly the outputs paid
    expect(all.map((r) => outpoint(r.tx_hash, r.position)).sort()).to.deep.equal([...paid.keys()].sort());
    expect(all.every((r) => r.tx_status === 'SETTLED' && r.collection_item_id !== null)).to.equal(true);

    // each transaction against the node: the stored bytes, inputs = its items' deposit outputs, one output to the hot wallet
    const hotScript = Buffer.from(btcAddress.toOutputScript(hot, { bech32: HRP, pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef, messagePrefix: '', bip32: { public: 0, private: 0 } })).toString('hex');
    const spentBy = new Map<string, string>();
    const transfers = await sweeps();
    expect(transfers.length).to.equal(firstRound.length + 1);
    const ratios: string[] = [];
    let arrived = 0n;
    for (const s of transfers) {
      expect(s).to.include({ status: 'SUCCESS', fee_final: true, to_address: hot });
      const attempts = await q<{ raw_tx: Buffer; tx_hash: string; max_fee: string; transfer_input: { feeRate: string } }>(
        'SELECT raw_tx, tx_hash, max_fee::text AS max_fee, transfer_input FROM transfer_attempts WHERE transfer_id = $1', [s.id]);
      expect(attempts, 'one transaction per consolidation').to.have.length(1);
      const [{ raw_tx: raw, max_fee: maxFee, transfer_input: input }] = attempts as [(typeof attempts)[0]];
      const t = Transaction.fromBuffer(raw);
      expect(t.getId()).to.equal(s.tx_hash);
      const mined = await node.rpc<{ hex: string; confirmations: number }>('getrawtransaction', [s.tx_hash, true]);
      expect(mined.hex, 'the node holds the stored bytes').to.equal(raw.toString('hex'));
      expect(mined.confirmations).to.be.at.least(MIN_CONF);
      const mine = done.filter((i) => i.transfer_id === s.id);
      expect(mine.length).to.be.at.least(1);
      const ins = inputsOf(t);
      const itemOutputs = all.filter((r) => mine.some((i) => i.id === r.collection_item_id)).map((r) => outpoint(r.tx_hash, r.position));
      expect([...ins].sort(), `transaction ${s.tx_hash} spends exactly its items' deposit outputs`).to.deep.equal([...itemOutputs].sort());
      for (const i of ins) {
        expect(spentBy.get(i), `${i} spent twice`).to.equal(undefined);
        spentBy.set(i, s.tx_hash);
        const r = all.find((x) => outpoint(x.tx_hash, x.position) === i)!;
        expect(r.confirmed_at !== null && r.confirmed_at.getTime() <= s.created_at.getTime(), `${i} confirmed before its consolidation was made`).to.equal(true);
      }
      expect(ins.length).to.be.at.most(MAX_INPUTS);
      expect(t.outs).to.have.length(1);
      expect(Buffer.from(t.outs[0]!.script).toString('hex')).to.equal(hotScript);
      const out = BigInt(t.outs[0]!.value);
      // inputs as the chain says (their funding transactions), less the output
      let inputs = 0n;
      for (const i of t.ins) {
        const prev = Transaction.fromHex(await node.rpc<string>('getrawtransaction', [Buffer.from(i.hash).reverse().toString('hex'), false]));
        inputs += BigInt(prev.outs[i.index]!.value);
      }
      expect(inputs).to.equal(sum(ins.map((i) => paid.get(i)!)));
      const fee = inputs - out;
      expect(BigInt(s.fee), 'recorded fee = inputs − output').to.equal(fee);
      expect(BigInt(maxFee), 'the crafted maximum').to.equal(fee);
      expect(BigInt(s.amount)).to.equal(inputs);
      expect(BigInt(s.sent_amount)).to.equal(out);
      const charged = consolidationVsize(ins.length);
      expect(fee, 'fee = ⌈rate × charged vsize⌉').to.equal(feeForVsize(charged, parseFeeRate(input.feeRate)));
      const actual = t.virtualSize();
      expect(actual).to.be.at.most(charged);
      expect(charged / actual).to.be.at.most(1.02);
      ratios.push(`${ins.length} inputs: charged ${charged} vB, actual ${actual} vB, ratio ${(charged / actual).toFixed(4)}, fee ${fee} sat at ${input.feeRate} sat/vB`);
      arrived += out;

      // the items: fee shares add up to the fee, amounts to what arrived; each share in proportion (rounded down, the remainder on the highest id)
      const planned = mine.map((i) => sum(all.filter((r) => r.collection_item_id === i.id).map((r) => BigInt(r.amount))));
      const total = sum(planned);
      expect(total).to.equal(inputs);
      const shares = planned.map((p) => (fee * p) / total);
      shares[shares.length - 1]! += fee - sum(shares);
      mine.forEach((i, k) => {
        expect(BigInt(i.gas_fee!), `item ${i.id} fee share`).to.equal(shares[k]);
        expect(BigInt(i.amount) + BigInt(i.gas_fee!), `item ${i.id}: amount + fee share = its outputs`).to.equal(planned[k]);
        expect(i.tx_hash).to.equal(s.tx_hash);
      });
      expect(sum(mine.map((i) => BigInt(i.amount)))).to.equal(out);
    }
    console.log(`      consolidations (vsize charged / actual):\n${ratios.map((r) => `        ${r}`).join('\n')}`);
    expect([...spentBy.keys()].sort(), 'every deposit output spent exactly once').to.deep.equal([...paid.keys()].sort());
    // each item's amount + share = its address's outputs (the late address: per item)
    for (const a of addrs) {
      const [i] = done.filter((x) => x.from_address === a);
      expect(BigInt(i!.amount) + BigInt(i!.gas_fee!)).to.equal(sum(ofAddress.get(a)!.map((k) => paid.get(k)!)));
    }

    // the ledger after a reading that began now: the node's outputs of the hot address, exactly, and their sum as balance
    const [{ now }] = (await q<{ now: Date }>('SELECT clock_timestamp() AS now')) as [{ now: Date }];
    const ledger = await pollUntil(() => q<{ on_chain: string; reserved: string; incoming: string; observed_at: Date }>(
      `SELECT b.on_chain::text AS on_chain, b.reserved::text AS reserved, b.incoming::text AS incoming, b.observed_at FROM hot_wallet_balances b JOIN hot_wallets h ON h.id = b.hot_wallet_id
        WHERE h.application_id = $1 AND h.chain_id = $2 AND b.chain_token_id = $3`, [app.id, CHAIN_ID, TOKEN_ID]), (r) => r[0] !== undefined && r[0].observed_at > now, 30_000, 50);
    expect(ledger.ok, 'a fresh ledger reading').to.equal(true);
    const coins = await bitcoinRpc({ url: node.url }).rest<Array<{ hash: string; index: number; value: number }>>(`/coin/address/${hot}`);
    const utxos = await q<{ tx_hash: string; vout: number; amount: string; spent_by: string | null; confirmations: number }>(
      'SELECT u.tx_hash, u.vout, u.amount::text AS amount, u.spent_by::text AS spent_by, u.confirmations FROM hot_wallet_utxos u JOIN hot_wallets h ON h.id = u.hot_wallet_id WHERE h.application_id = $1 AND h.chain_id = $2',
      [app.id, CHAIN_ID]);
    expect(utxos.map((u) => [outpoint(u.tx_hash, u.vout), u.amount, u.spent_by])).to.have.deep.members(coins.map((c) => [outpoint(c.hash, c.index), String(c.value), null]));
    expect(coins.map((c) => c.hash).sort()).to.deep.equal(transfers.map((s) => s.tx_hash).sort());
    expect(ledger.result[0]).to.include({ on_chain: arrived.toString(), reserved: '0', incoming: '0' });
    expect(sum(coins.map((c) => BigInt(c.value)))).to.equal(arrived);
    expect(arrived).to.equal(sum([...paid.values()]) - sum(transfers.map((s) => BigInt(s.fee))));

    // collect callbacks: one SUCCESS per item, signed, field by field
    const ev = await pollUntil(async () => collectEvents(), (e) => e.length >= done.length, 30_000, 100);
    expect(ev.result.length, 'one callback per item').to.equal(done.length);
    for (const got of receiver.received.filter((x) => x.target === '/merchant/collect')) expect(verifyCallback(got, app.apiKey, app.apiSecret, got.at)).to.equal(null);
    const times = await q<{ id: string; created_at: Date; finished_at: Date }>('SELECT id::text AS id, created_at, finished_at FROM collection_items WHERE application_id = $1', [app.id]);
    for (const e of ev.result) {
      expect(Object.keys(e).sort()).to.deep.equal(COLLECT_FIELDS);
      const i = done.find((x) => x.id === String(e.id))!;
      expect(i, `an item for callback ${e.id}`).to.not.equal(undefined);
      const related = all.filter((r) => r.collection_item_id === i.id).map((r) => Number(r.id)).sort((a, b) => a - b);
      expect(related.length).to.be.at.least(1);
      expect(e).to.deep.equal({
        event: 'collect', id: Number(i.id), requestId: Number(i.request_id), itemId: Number(i.id), applicationId: app.id, chainId: CHAIN_ID, chainTokenId: TOKEN_ID,
        stage: 'HOT_GATHER', fromAddressId: addressIds.get(i.from_address), fromAddress: i.from_address, toAddress: hot, amount: btc(BigInt(i.amount)), txHash: i.tx_hash,
        status: 'SUCCESS', failureReasonCode: null, failureReasonMessage: null, retryTimes: 0, gasFee: btc(BigInt(i.gas_fee!)), gasFeeCurrency: 'BTC', gasFunding: null,
        relatedRechargeIds: related, createdTime: e.createdTime, finishedTime: e.finishedTime,
      });
      expect(e.fromAddressId).to.be.a('number').and.above(0);
      expect(e.gasFee).to.match(/^0\.\d{1,8}$|^0$/);
      expect(e.createdTime).to.match(LOCAL_TIME);
      expect(e.finishedTime).to.match(LOCAL_TIME);
      const row = times.find((x) => x.id === i.id)!;
      expect(e.createdTime).to.equal(row.created_at.toISOString().slice(0, 19));
      expect(e.finishedTime).to.equal(row.finished_at.toISOString().slice(0, 19));
    }
    expect(new Set(ev.result.map((e) => e.id)).size).to.equal(done.length);
  });

  it(`the fee-rate ceiling (${CEILING_VAR}): below the node's rate the items wait naming rate and ceiling, nothing is signed; at the rate they go`, async () => {
    await svc.stop();
    await start('0.5');
    const addrs = [await newAddress('c-0'), await newAddress('c-1'), await newAddress('c-2')];
    const txid = await sendOutputs(node, addrs.map((a, i) => ({ address: a, sats: 800_000n + BigInt(i) })));
    const outs = new Map<string, bigint>();
    for (const a of addrs) for (const [k, v] of await outputsTo(txid, a)) outs.set(k, v);
    expect(outs.size).to.equal(3);
    const before = (await sweeps()).length;
    await node.mine(MIN_CONF);
    await credited(outs, ['SETTLED']);
    const ours = async () => (await items()).filter((i) => addrs.includes(i.from_address));
    const held = await pollUntil(ours, (rows) => rows.length === 3 && rows.every((i) => i.waiting_reason !== null), 30_000, 100);
    expect(held.ok, `items waiting: ${JSON.stringify(held.result)}`).to.equal(true);
    const reason = /^the fee rate (\d+(?:\.\d{1,3})?) sat\/vB is above the ceiling 0\.5 sat\/vB \(WCS_COLLECT_MAX_FEE_RATE_TEST_BTCREG\): consolidations wait$/;
    const rate = reason.exec(held.result[0]!.waiting_reason!)?.[1];
    expect(rate, held.result[0]!.waiting_reason!).to.be.a('string');
    expect(parseFeeRate(rate) > 500n).to.equal(true);
    // the node's own rate, as the transfer input reads it
    const estimate = await node.rpc<{ fee?: number }>('estimatesmartfee', [3]);
    console.log(`      the node's rate: ${rate} sat/vB (estimatesmartfee: ${JSON.stringify(estimate)})`);
    // still waiting several steps later: no transfer, nothing signed
    await sleep(1500);
    const still = await ours();
    expect(still.map((i) => [i.status, i.waiting_reason, i.transfer_id])).to.deep.equal(still.map(() => ['PLANNED', held.result[0]!.waiting_reason, null]));
    expect((await sweeps()).length).to.equal(before);

    // raised to exactly the rate: at most the ceiling goes
    await svc.stop();
    await start(rate!);
    const done = await settle(ADDRESSES + 2 + 3);
    const mine = done.filter((i) => addrs.includes(i.from_address));
    expect(mine.map((i) => [i.status, i.waiting_reason])).to.deep.equal(mine.map(() => ['SUCCESS', null]));
    expect(new Set(mine.map((i) => i.transfer_id)).size, 'one consolidation of the three').to.equal(1);
    const [s] = await q<{ tx_hash: string; fee: string; sent_amount: string }>('SELECT tx_hash, fee::text AS fee, sent_amount::text AS sent_amount FROM transfers WHERE id = $1', [mine[0]!.transfer_id]);
    const t = Transaction.fromHex(await node.rpc<string>('getrawtransaction', [s!.tx_hash, false]));
    expect(inputsOf(t).sort()).to.deep.equal([...outs.keys()].sort());
    expect(BigInt(s!.fee)).to.equal(sum([...outs.values()]) - BigInt(t.outs[0]!.value));
    expect(BigInt(s!.fee)).to.equal(feeForVsize(consolidationVsize(3), parseFeeRate(rate)));
    const byAddress = new Map<string, bigint>();
    for (const a of addrs) byAddress.set(a, sum([...(await outputsTo(txid, a)).values()]));
    for (const i of mine) expect(BigInt(i.amount) + BigInt(i.gas_fee!), `item ${i.id}: amount + fee share = its output`).to.equal(byAddress.get(i.from_address));
  });

  it('the service\'s own consolidations raised no TRANSFER: once the scanner has read past them, no custody outflow, no UNEXPECTED_OUTFLOW alert, no TRANSFER callback', async () => {
    // every transaction the service made on the chain and saw mined, and the highest block holding one
    const mined = await q<{ kind: string; n: number; top: string }>(
      `SELECT kind, count(*)::int AS n, max(block_height)::text AS top FROM transfers WHERE chain_id = $1 AND block_height IS NOT NULL GROUP BY kind ORDER BY kind`, [CHAIN_ID]);
    expect(mined.find((r) => r.kind === 'SWEEP')?.n ?? 0, `consolidations mined: ${JSON.stringify(mined)}`).to.be.above(3);
    const top = mined.reduce((h, r) => (BigInt(r.top) > h ? BigInt(r.top) : h), -1n);
    // the deposit scanner (which matches custody outflows) has read past the last of them: otherwise the counts below prove nothing
    const scanned = await pollUntil(async () => BigInt((await q<{ h: string | null }>('SELECT height::text AS h FROM scan_cursors WHERE chain_id = $1', [CHAIN_ID]))[0]?.h ?? '-1'), (h) => h >= top, 60_000, 100);
    expect(scanned.ok, `scanner at ${scanned.result}, the service's last transaction in block ${top}`).to.equal(true);
    expect(await q('SELECT id::text AS id, address_kind, from_address, to_address, tx_hash FROM custody_outflows'), 'no custody outflow recorded').to.deep.equal([]);
    expect(await q(`SELECT id::text AS id, message FROM operator_alerts WHERE kind = 'UNEXPECTED_OUTFLOW'`), 'no UNEXPECTED_OUTFLOW alert').to.deep.equal([]);
    expect(await q(`SELECT id::text AS id, application_id FROM callback_tasks WHERE biz_type = 'TRANSFER'`), 'no TRANSFER callback').to.deep.equal([]);
  });
});
