/**
 * Chain event subscriptions and custody outflows on a real bcoin regtest node
 * (@wcs/adapter-bitcoin/regtest), through the service with its workers: an address whose key the
 * test holds, monitored both ways, funded by the node's wallet (IN: fromAddress the address the
 * funding's first input spends from) and then spent by the test itself (bitcoinjs-lib Psbt) to a
 * payee with change back (one OUT event for the payment output only, no IN event for the
 * change); callbacks only once the chain's 2 confirmations are reached, signed, with exactly the
 * spec's `chain_event` fields. P2WSH counterparties, both ways, are CONTRACT. TRANSFER: a deposit
 * address made through the API and spent by the test with the deposit key it derives from
 * TEST_MNEMONIC (BIP-84, m/84'/1'/{application}'/0/{index}) gives one `transfer` callback and one
 * UNEXPECTED_OUTFLOW alert.
 *
 * BTCREG (id 150, 2 confirmations, hrp "rb") and its native coin come from a WCS_CONFIG file, as
 * in deposits-btc.test.ts; scanning starts above the 432 blocks startRegtest mines.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { secp256k1 } from '@noble/curves/secp256k1';
import { address as btcAddress, networks, payments, Psbt, Transaction, type Network, type Payment, type Signer } from 'bitcoinjs-lib';
import { startRegtest, type RegtestNode } from '@wcs/adapter-bitcoin/regtest';
import type { CreatedApplication } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testLogger, TEST_ACTOR, TEST_MNEMONIC, type TestDatabase } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver, verifyCallback } from './support/callback-receiver';
import { expectOk, pollUntil, sleep } from './support/expect';
import { ADDRESS_CREATE } from './support/recharge-types';
import { inMempool } from './support/regtest-wallet';
import { tempDir } from './support/temp';

const CHAIN_ID = 150;
const CODE = 'BTCREG';
const TOKEN_ID = CHAIN_ID * 100;
const MIN_CONF = 2;
const HRP = 'rb';
/** Our regtest: bech32 "rb", Bitcoin Core's regtest base58 versions (adapters/bitcoin/README.md). */
const NETWORK: Network = { ...networks.regtest, bech32: HRP, pubKeyHash: 0x6f, scriptHash: 0xc4 };
/** What the test pays in fees (sat): far above 1 sat/vB for these one- and two-input transactions. */
const FEE = 1_000n;

const SUB = '/api/v1/wallet/chain-event/subscription';
const EVENTS = '/api/v1/wallet/chain-event';
const OUTFLOWS = '/api/v1/wallet/outflow';

/** The spec's `chain_event` fields ("Event chain_event"), exactly. */
const CHAIN_EVENT_FIELDS = ['event', 'id', 'subscriptionId', 'applicationId', 'chainId', 'chainTokenId', 'contractAddress', 'fromAddress', 'toAddress', 'amount',
  'txHash', 'blockHeight', 'directionMatched', 'addressNature'].sort();

interface ChainEventCallback {
  event: string; id: number; subscriptionId: number; applicationId: number; chainId: number; chainTokenId: number; contractAddress: string;
  fromAddress: string; toAddress: string; amount: string; txHash: string; blockHeight: number; directionMatched: 'IN' | 'OUT'; addressNature: 'EOA' | 'CONTRACT';
}

type Key = Signer & { readonly privateKey: Uint8Array };

/** A secp256k1 key as a bitcoinjs-lib signer (low-S ECDSA by @noble/curves). */
function signer(privateKey: Uint8Array): Key {
  return {
    privateKey,
    publicKey: secp256k1.getPublicKey(privateKey, true),
    sign: (hash: Uint8Array) => secp256k1.sign(hash, privateKey, { lowS: true }).toCompactRawBytes(),
  };
}
const randomKey = (): Key => signer(secp256k1.utils.randomPrivateKey());
const p2wpkh = (k: Key): Payment => payments.p2wpkh({ pubkey: k.publicKey, network: NETWORK });
/** A P2WSH of `<key> OP_CHECKSIG`: a script controls it. */
const p2wsh = (k: Key): Payment => payments.p2wsh({ redeem: payments.p2pk({ pubkey: k.publicKey, network: NETWORK }), network: NETWORK });

/** An output the test can spend: where it is, what it holds, and the payment (script) and key that unlock it. */
interface Coin { txid: string; vout: number; sats: bigint; payment: Payment; key: Key }

describe('chain events on a bcoin regtest node (IN/OUT on a monitored address, confirmations, addressNature, TRANSFER)', function () {
  this.timeout(180_000);
  let node: RegtestNode;
  let db: TestDatabase;
  let pool: Pool;
  let svc: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  const receiver = new CallbackReceiver();

  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const tip = async () => BigInt(await node.rpc<number>('getblockcount'));
  const caughtUp = async () => {
    const t = await tip();
    const r = await pollUntil(async () => BigInt((await q<{ h: string | null }>('SELECT height::text AS h FROM scan_cursors WHERE chain_id = $1', [CHAIN_ID]))[0]?.h ?? '-1'), (h) => h >= t, 30_000);
    expect(r.ok, `scanner at ${r.result}, tip ${t}`).to.equal(true);
  };
  const rawTx = async (txid: string) => Transaction.fromHex(await node.rpc<string>('getrawtransaction', [txid, false]));
  /** The height of the block holding a transaction. */
  const heightOf = async (txid: string): Promise<number> => {
    const v = await node.rpc<{ blockhash?: string | null }>('getrawtransaction', [txid, true]);
    expect(v.blockhash, `${txid} mined`).to.be.a('string');
    return (await node.rpc<{ height: number }>('getblockheader', [v.blockhash, true])).height;
  };
  /** The address the first input of a transaction spends from, read from the output it spends (the node's bytes). */
  const firstInputAddress = async (txid: string): Promise<string> => {
    const input = (await rawTx(txid)).ins[0]!;
    const prev = await rawTx(Buffer.from(input.hash).reverse().toString('hex'));
    return btcAddress.fromOutputScript(prev.outs[input.index]!.script, NETWORK);
  };
  /** Pays a payment's address from the node's wallet: the coin it made, as the node's bytes say. */
  const fund = async (payment: Payment, key: Key, sats: bigint): Promise<Coin> => {
    const txid = await node.send(payment.address!, sats);
    const outs = (await rawTx(txid)).outs.map((o, vout) => ({ o, vout })).filter(({ o }) => Buffer.from(o.script).equals(Buffer.from(payment.output!)));
    expect(outs.map(({ o }) => BigInt(o.value))).to.deep.equal([sats]);
    return { txid, vout: outs[0]!.vout, sats, payment, key };
  };
  /** Spends coins (signed by the test, bitcoinjs-lib Psbt) to outputs, broadcasts, and waits for the mempool: the txid and the coins it made. */
  const spend = async (coins: readonly Coin[], outputs: ReadonlyArray<{ address: string; sats: bigint }>): Promise<{ txid: string; coin: (vout: number, payment: Payment, key: Key) => Coin }> => {
    const psbt = new Psbt({ network: NETWORK });
    for (const c of coins) {
      psbt.addInput({
        hash: c.txid, index: c.vout, witnessUtxo: { script: c.payment.output!, value: c.sats },
        ...(c.payment.redeem?.output ? { witnessScript: c.payment.redeem.output } : {}),
      });
    }
    for (const o of outputs) psbt.addOutput({ address: o.address, value: o.sats });
    const sum = (xs: bigint[]) => xs.reduce((s, v) => s + v, 0n);
    expect(sum(coins.map((c) => c.sats)) - sum(outputs.map((o) => o.sats)), 'the fee').to.equal(FEE);
    coins.forEach((c, i) => psbt.signInput(i, c.key));
    psbt.finalizeAllInputs();
    const tx = psbt.extractTransaction();
    const txid = await node.rpc<string>('sendrawtransaction', [tx.toHex()]);
    expect(txid).to.equal(tx.getId());
    await inMempool(node, txid);
    return { txid, coin: (vout, payment, key) => ({ txid, vout, sats: outputs[vout]!.sats, payment, key }) };
  };
  /** chain_event callbacks received for the application, each verified against its secret. */
  const callbacks = (a: CreatedApplication): ChainEventCallback[] =>
    receiver.received
      .filter((r) => r.target === `/merchant/${a.id}/chain-event`)
      .map((r) => {
        expect(verifyCallback(r, a.apiKey, a.apiSecret)).to.equal(null);
        return JSON.parse(r.body.toString('utf8')) as ChainEventCallback;
      });
  const ofSub = (subscriptionId: number) => callbacks(app).filter((e) => e.subscriptionId === subscriptionId);
  const waitCallbacks = async (subscriptionId: number, n: number) => {
    const r = await pollUntil(async () => ofSub(subscriptionId), (l) => l.length >= n, 30_000, 100);
    expect(r.ok, `callbacks of subscription ${subscriptionId}: ${JSON.stringify(r.result)}`).to.equal(true);
    return r.result;
  };
  const records = async (subscriptionId: number) =>
    (expectOk(await client.get(`${EVENTS}/list?subscriptionId=${subscriptionId}`)) as { list: Array<{ id: number; txHash: string; position: number; status: string; directionMatched: string; monitoredAddress: string; toAddress: string }>; total: number });
  const subscribe = async (body: Record<string, unknown>) => expectOk(await client.post(`${SUB}/create`, body)) as { id: number; created: boolean; addresses: string[] };
  /** Mines n blocks and waits until the scanner has read them. */
  const mineScanned = async (n = 1) => {
    await node.mine(n);
    await caughtUp();
  };

  before(async function () {
    this.timeout(120_000);
    node = await startRegtest();
    const startHeight = Number(await tip()) + 1;
    const configFile = path.join(tempDir('wcs-cev-btc-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({
      chains: [{ id: CHAIN_ID, code: CODE, name: 'Bitcoin regtest (bcoin)', family: 'bitcoin', environment: 'test', network: 'regtest', nativeSymbol: 'BTC', decimals: 8, confirmations: MIN_CONF, options: { bech32Hrp: HRP } }],
      tokens: [{ id: TOKEN_ID, chainCode: CODE, environment: 'test', symbol: 'BTC', name: 'Bitcoin regtest native coin', contract: null, decimals: 8 }],
    }));
    await prepareTestKeystore();
    await receiver.start();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 2 });
    svc = await WcsService.start(testConfig(db.url, {
      [`WCS_RPC_TEST_${CODE}`]: node.url, [`WCS_SCAN_START_TEST_${CODE}`]: String(startHeight),
      WCS_SCAN_POLL_MS: '50', WCS_CALLBACK_POLL_MS: '50', WCS_CALLBACK_ALLOW_PRIVATE: '1', WCS_CONFIG: configFile,
    }), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'btc-watcher', environment: 'test', chains: [CODE] });
    await svc.storage.applications.setCallback(TEST_ACTOR, app.id, 'CHAIN_EVENT', receiver.url(`/merchant/${app.id}/chain-event`));
    await svc.storage.applications.setCallback(TEST_ACTOR, app.id, 'TRANSFER', receiver.url(`/merchant/${app.id}/transfer`));
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    await caughtUp();
  });

  after(async () => {
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await receiver.stop();
    await node?.stop();
  });

  it('a P2WPKH address monitored both ways: IN from the funding, then one OUT for the payment output only (no event, IN or OUT, for the change), each sent once 2 confirmations are reached, every field of the spec', async () => {
    const key = randomKey();
    const m = p2wpkh(key);
    const sub = await subscribe({ appSubscriptionNo: 'btc-both', chainCode: CODE, addresses: [m.address] });
    expect(sub.addresses).to.deep.equal([m.address]);
    await caughtUp(); // the scanner has the monitored address before the transfers

    // IN: the node's wallet pays it
    const funded = await fund(m, key, 5_000_000n);
    const funder = await firstInputAddress(funded.txid);
    expect(funder).to.match(/^rb1q/);
    expect(funder).to.not.equal(m.address);
    await mineScanned();
    const inHeight = await heightOf(funded.txid);
    // recorded, PENDING: one block deep, nothing sent
    expect((await records(sub.id)).list.map((e) => [e.txHash, e.status, e.directionMatched])).to.deep.equal([[funded.txid, 'PENDING', 'IN']]);
    await sleep(300);
    expect(ofSub(sub.id), 'one confirmation of 2: nothing sent').to.deep.equal([]);
    await mineScanned();
    const [inEvent] = await waitCallbacks(sub.id, 1);
    expect(Object.keys(inEvent!).sort()).to.deep.equal(CHAIN_EVENT_FIELDS);
    expect(inEvent).to.deep.equal({
      event: 'chain_event', id: inEvent!.id, subscriptionId: sub.id, applicationId: app.id, chainId: CHAIN_ID, chainTokenId: TOKEN_ID, contractAddress: '',
      fromAddress: funder, toAddress: m.address, amount: '0.05', txHash: funded.txid, blockHeight: inHeight, directionMatched: 'IN', addressNature: 'EOA',
    });
    expect(inEvent!.id).to.be.a('number');

    // OUT: the test spends it, the change first (vout 0) and the payment second (vout 1)
    const payee = p2wpkh(randomKey()).address!;
    const change = 5_000_000n - 1_234_567n - FEE;
    const out = await spend([funded], [{ address: m.address!, sats: change }, { address: payee, sats: 1_234_567n }]);
    await mineScanned();
    const outHeight = await heightOf(out.txid);
    const pending = (await records(sub.id)).list.filter((e) => e.txHash === out.txid);
    expect(pending.map((e) => [e.status, e.directionMatched, e.toAddress, e.position]), 'one record for the spend: the payment (vout 1), OUT; none for the change (vout 0) either way')
      .to.deep.equal([['PENDING', 'OUT', payee, 1]]);
    await sleep(300);
    expect(ofSub(sub.id).map((e) => e.txHash), 'the spend is one block deep: nothing sent for it yet').to.deep.equal([funded.txid]);
    await mineScanned();
    const got = await waitCallbacks(sub.id, 2);
    const outEvent = got.find((e) => e.txHash === out.txid)!;
    expect(Object.keys(outEvent).sort()).to.deep.equal(CHAIN_EVENT_FIELDS);
    expect(outEvent).to.deep.equal({
      event: 'chain_event', id: outEvent.id, subscriptionId: sub.id, applicationId: app.id, chainId: CHAIN_ID, chainTokenId: TOKEN_ID, contractAddress: '',
      fromAddress: m.address, toAddress: payee, amount: '0.01234567', txHash: out.txid, blockHeight: outHeight, directionMatched: 'OUT', addressNature: 'EOA',
    });

    // more blocks: nothing more, one callback per event, the records CONFIRMED with their callbacks
    await mineScanned(2);
    await sleep(500);
    expect(ofSub(sub.id).map((e) => [e.txHash, e.directionMatched])).to.deep.equal([[funded.txid, 'IN'], [out.txid, 'OUT']]);
    const all = await records(sub.id);
    expect(all.total).to.equal(2);
    expect(all.list.every((e) => e.status === 'CONFIRMED' && e.monitoredAddress === m.address)).to.equal(true);
    const rec = expectOk(await client.get(`${EVENTS}/get?id=${outEvent.id}`));
    expect(rec).to.include({ status: 'CONFIRMED', directionMatched: 'OUT', monitoredAddress: m.address, fromAddress: m.address, toAddress: payee, amount: '0.01234567', chainCode: CODE, tokenSymbol: 'BTC', addressNature: 'EOA', minConfirmations: MIN_CONF });
    expect(rec.callbackTaskId).to.be.a('number');
    // the monitored address is no custody address: no outflow, no TRANSFER
    expect((await q<{ n: number }>('SELECT count(*)::int AS n FROM custody_outflows'))[0]!.n).to.equal(0);
  });

  it('P2WSH counterparties are CONTRACT: IN from a P2WSH spend (fromAddress the P2WSH address), OUT to a P2WSH address', async () => {
    const key = randomKey();
    const m = p2wpkh(key);
    const scriptKey = randomKey();
    const w = p2wsh(scriptKey);
    expect(w.address).to.match(/^rb1q[02-9ac-hj-np-z]{58}$/);
    const sub = await subscribe({ appSubscriptionNo: 'btc-contract', chainCode: CODE, addresses: [m.address] });
    await caughtUp();
    const atW = await fund(w, scriptKey, 3_000_000n);
    await mineScanned();
    // the P2WSH output pays the monitored address (and its change back to itself)
    const fromW = await spend([atW], [{ address: m.address!, sats: 2_000_000n }, { address: w.address!, sats: 1_000_000n - FEE }]);
    expect(await firstInputAddress(fromW.txid)).to.equal(w.address);
    await mineScanned();
    // the monitored address pays another P2WSH address (all of it: the change case is the test above)
    const other = p2wsh(randomKey()).address!;
    const toW = await spend([fromW.coin(0, m, key)], [{ address: other, sats: 2_000_000n - FEE }]);
    await mineScanned(MIN_CONF);
    const got = await waitCallbacks(sub.id, 2);
    await mineScanned();
    await sleep(300);
    expect(ofSub(sub.id)).to.have.length(2);
    for (const e of got) expect(Object.keys(e).sort()).to.deep.equal(CHAIN_EVENT_FIELDS);
    const inEvent = got.find((e) => e.txHash === fromW.txid)!;
    const outEvent = got.find((e) => e.txHash === toW.txid)!;
    expect(inEvent).to.deep.equal({
      event: 'chain_event', id: inEvent.id, subscriptionId: sub.id, applicationId: app.id, chainId: CHAIN_ID, chainTokenId: TOKEN_ID, contractAddress: '',
      fromAddress: w.address, toAddress: m.address, amount: '0.02', txHash: fromW.txid, blockHeight: await heightOf(fromW.txid), directionMatched: 'IN', addressNature: 'CONTRACT',
    });
    expect(outEvent).to.deep.equal({
      event: 'chain_event', id: outEvent.id, subscriptionId: sub.id, applicationId: app.id, chainId: CHAIN_ID, chainTokenId: TOKEN_ID, contractAddress: '',
      fromAddress: m.address, toAddress: other, amount: '0.01999', txHash: toW.txid, blockHeight: await heightOf(toW.txid), directionMatched: 'OUT', addressNature: 'CONTRACT',
    });
  });

  it('TRANSFER: a deposit address\'s key (derived by the test from TEST_MNEMONIC) used outside the service gives one transfer callback, one UNEXPECTED_OUTFLOW alert and a record', async () => {
    const owner = await svc.storage.applications.create(TEST_ACTOR, { name: 'btc-custody', environment: 'test', chains: [CODE] });
    await svc.storage.applications.setCallback(TEST_ACTOR, owner.id, 'TRANSFER', receiver.url(`/merchant/${owner.id}/transfer`));
    const c = new SigningClient(svc.url, { apiKey: owner.apiKey, apiSecret: owner.apiSecret });
    const deposit = (expectOk(await c.post(ADDRESS_CREATE, { chainCode: CODE, externalUserId: 'leaky' })) as { address: string }).address;
    // the key the service holds for it: BIP-84 on the test networks' coin type 1, account = application, external chain, index 0
    const node0 = HDKey.fromMasterSeed(mnemonicToSeedSync(TEST_MNEMONIC)).derive(`m/84'/1'/${owner.id}'/0/0`);
    const key = signer(node0.privateKey!);
    const d = p2wpkh(key);
    expect(d.address).to.equal(deposit);
    await caughtUp();
    const funded = await fund(d, key, 3_000_000n);
    await mineScanned(MIN_CONF);
    const credited = await pollUntil(() => q<{ tx_status: string }>('SELECT tx_status FROM recharges WHERE address = $1 AND tx_hash = $2', [deposit, funded.txid]), (r) => r[0]?.tx_status === 'SETTLED', 30_000, 100);
    expect(credited.ok, `the deposit credited: ${JSON.stringify(credited.result)}`).to.equal(true);
    const transfers = () => receiver.received.filter((r) => r.target === `/merchant/${owner.id}/transfer`);
    expect(transfers(), 'a deposit is no outflow').to.deep.equal([]);

    // the key used outside the service: 0.02 to a thief, the change back to the deposit address
    const thief = p2wpkh(randomKey()).address!;
    const stolen = await spend([funded], [{ address: thief, sats: 2_000_000n }, { address: deposit, sats: 1_000_000n - FEE }]);
    await mineScanned();
    const got = await pollUntil(async () => transfers(), (l) => l.length >= 1, 30_000, 100);
    expect(got.ok, 'a transfer callback').to.equal(true);
    await mineScanned(MIN_CONF + 1);
    await sleep(500);
    const all = transfers();
    expect(all).to.have.length(1);
    expect(verifyCallback(all[0]!, owner.apiKey, owner.apiSecret)).to.equal(null);
    const ev = JSON.parse(all[0]!.body.toString('utf8')) as { id: number };
    expect(ev).to.deep.equal({
      event: 'transfer', id: ev.id, applicationId: owner.id, chainId: CHAIN_ID, chainTokenId: TOKEN_ID, contractAddress: '', addressKind: 'DEPOSIT',
      fromAddress: deposit, externalUserId: 'leaky', toAddress: thief, amount: '0.02', txHash: stolen.txid, blockHeight: await heightOf(stolen.txid),
    });
    const alerts = await q<{ details: { outflowId: number; fromAddress: string; txHash: string } }>(`SELECT details FROM operator_alerts WHERE kind = 'UNEXPECTED_OUTFLOW'`);
    expect(alerts.map((a) => [a.details.outflowId, a.details.fromAddress, a.details.txHash])).to.deep.equal([[ev.id, deposit, stolen.txid]]);
    expect(expectOk(await c.get(`${OUTFLOWS}/get?id=${ev.id}`))).to.include({ addressKind: 'DEPOSIT', txHash: stolen.txid, amount: '0.02', fromAddress: deposit, toAddress: thief });
    expect((await q<{ n: number }>('SELECT count(*)::int AS n FROM custody_outflows'))[0]!.n).to.equal(1);
    expect((await q<{ n: number }>(`SELECT count(*)::int AS n FROM callback_tasks WHERE biz_type = 'TRANSFER'`))[0]!.n).to.equal(1);
    // nothing was credited for the theft: neither the thief's output nor the change back to the
    // deposit address (from its own key) is a deposit
    expect((await q<{ n: number }>('SELECT count(*)::int AS n FROM recharges WHERE application_id = $1', [owner.id]))[0]!.n).to.equal(1);
    // the watcher application saw nothing of it
    expect(receiver.received.filter((r) => r.target === `/merchant/${app.id}/transfer`)).to.deep.equal([]);
  });
});
