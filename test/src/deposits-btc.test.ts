/**
 * Bitcoin deposit detection through the running service (scanner worker, RECHARGE callbacks) on a
 * real bcoin regtest node (@wcs/adapter-bitcoin/regtest): P2WPKH deposits with exact amounts and
 * their output index as position, several outputs of one transaction (two outputs to the same
 * user included), confirmations up to SETTLED, and reorgs by `invalidateblock` below
 * minConfirmations with the deposit dropped (FAILED) and re-broadcast and mined in the new chain
 * (same record, confirmations from its new block, SETTLED once).
 *
 * The built-in catalogue's test BTC is testnet ("tb"); bcoin's regtest uses the bech32 hrp "rb",
 * so a regtest chain BTCREG (id 150, 2 confirmations) is added by a WCS_CONFIG file together with
 * its native coin (token 15000): the catalogue creates native tokens only for its built-in chains.
 * Scanning starts above the 432 blocks startRegtest mines for segwit (WCS_SCAN_START_TEST_BTCREG;
 * reading them as well would cost about half a second of catch-up: 530 ms against 70 ms, measured).
 *
 * bcoin's invalidateblock is a chain reset: the blocks above are deleted and the mempool is
 * emptied (bitcoind would put the block's transactions back), so a dropped deposit is unknown to
 * the node until someone re-broadcasts it.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { formatUnits } from '@wcs/core';
import { startRegtest, type RegtestNode } from '@wcs/adapter-bitcoin/regtest';
import type { CreatedApplication } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver, verifyCallback } from './support/callback-receiver';
import { expectOk, pollUntil } from './support/expect';
import { inMempool as inMempoolOf, sendOutputs as sendToOutputs } from './support/regtest-wallet';
import { ADDRESS_CREATE, EVENT_FIELDS, RECHARGE_FIELDS, RECHARGE_GET, RECHARGE_LIST, type Recharge, type RechargeEvent } from './support/recharge-types';
import { tempDir } from './support/temp';

const CHAIN_ID = 150;
const CODE = 'BTCREG';
const TOKEN_ID = CHAIN_ID * 100;
const MIN_CONF = 2;
/** A P2WPKH address of bcoin's regtest: witness v0, 20-byte program, hrp "rb". */
const P2WPKH_RB = /^rb1q[02-9ac-hj-np-z]{38}$/;

interface VerboseTx { txid: string; blockhash?: string | null; vin: Array<{ txid: string; vout: number }>; vout: Array<{ n: number; value: number; scriptPubKey: { addresses?: string[] } }> }

describe('Bitcoin deposit detection on a bcoin regtest node (scanner worker, confirmations, reorgs, callbacks)', function () {
  this.timeout(120_000);
  let node: RegtestNode;
  let db: TestDatabase;
  let svc: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  let pool: Pool;
  let configFile: string;
  /** Where competing blocks are mined: a wallet address no user owns. */
  let elsewhere: string;
  let startHeight: number;
  const receiver = new CallbackReceiver();
  const addresses = new Map<string, string>();
  /** Every (txid, vout) paid to a user's address during the run, for the final count. */
  const paid = new Set<string>();

  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const tip = async () => BigInt(await node.rpc<number>('getblockcount'));
  const cursor = async () => {
    const r = (await q<{ height: string | null }>('SELECT height::text AS height FROM scan_cursors WHERE chain_id = $1', [CHAIN_ID]))[0];
    return r?.height ? BigInt(r.height) : -1n;
  };
  /** Waits until the scanner has read up to the node's tip. */
  const caughtUp = async () => {
    const t = await tip();
    const r = await pollUntil(cursor, (h) => h >= t, 30_000);
    expect(r.ok, `scanner at ${r.result}, tip ${t}`).to.equal(true);
  };
  const list = async (query: Record<string, string | number> = {}): Promise<Recharge[]> => {
    const qs = new URLSearchParams(Object.entries({ pageSize: 200, ...query }).map(([k, v]): [string, string] => [k, String(v)])).toString();
    return (expectOk(await client.get(`${RECHARGE_LIST}?${qs}`)) as { list: Recharge[] }).list;
  };
  const byTx = async (txHash: string): Promise<Recharge[]> => (await list()).filter((r) => r.txHash === txHash).sort((a, b) => a.position - b.position);
  const userAddress = async (user: string): Promise<string> => {
    let a = addresses.get(user);
    if (!a) {
      a = (expectOk(await client.post(ADDRESS_CREATE, { chainCode: CODE, externalUserId: user })) as { address: string }).address;
      addresses.set(user, a);
    }
    return a;
  };
  const events = (id: number): RechargeEvent[] =>
    receiver.received.map((r) => JSON.parse(r.body.toString('utf8')) as RechargeEvent).filter((e) => e.event === 'recharge' && e.id === id);
  /** Waits until the transaction has `n` records, all in `status`. */
  const waitTx = async (txHash: string, status: string, n = 1, timeoutMs = 30_000): Promise<Recharge[]> => {
    const r = await pollUntil(() => byTx(txHash), (rows) => rows.length === n && rows.every((x) => x.txStatus === status), timeoutMs, 100);
    expect(r.ok, `${txHash}: ${JSON.stringify(r.result)}`).to.equal(true);
    return r.result;
  };
  const waitStatus = async (txHash: string, status: string): Promise<Recharge> => (await waitTx(txHash, status))[0]!;
  const waitEvents = async (id: number, statuses: string[]) => {
    const r = await pollUntil(async () => events(id).map((e) => e.txStatus), (s) => statuses.every((x) => s.includes(x)), 30_000, 100);
    expect(r.ok, `callbacks of ${id}: ${r.result.join(',')}`).to.equal(true);
  };
  /** The outputs of a transaction paying an address, by the node's own decoding: their vouts and satoshis. */
  const outputsTo = async (txid: string, address: string): Promise<Array<{ vout: number; sats: bigint }>> => {
    const tx = await node.rpc<VerboseTx>('getrawtransaction', [txid, true]);
    return tx.vout
      .filter((o) => o.scriptPubKey.addresses?.includes(address))
      .map((o) => ({ vout: o.n, sats: BigInt(Math.round(o.value * 1e8)) }));
  };
  const sendOutputs = (outputs: Array<{ address: string; sats: bigint }>) => sendToOutputs(node, outputs);
  const inMempool = (txid: string) => inMempoolOf(node, txid);
  const noticesOf = async (id: number) =>
    (await q<{ tx_status: string }>('SELECT tx_status FROM recharge_notices WHERE recharge_id = $1 ORDER BY task_id', [id])).map((r) => r.tx_status);

  before(async function () {
    this.timeout(90_000);
    node = await startRegtest();
    elsewhere = await node.newAddress();
    startHeight = Number(await tip()) + 1;
    configFile = path.join(tempDir('wcs-dep-btc-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({
      chains: [{ id: CHAIN_ID, code: CODE, name: 'Bitcoin regtest (bcoin)', family: 'bitcoin', environment: 'test', network: 'regtest', nativeSymbol: 'BTC', decimals: 8, confirmations: MIN_CONF, options: { bech32Hrp: 'rb' } }],
      // native coins are created for the built-in chains only: a config-file chain lists its own
      tokens: [{ id: TOKEN_ID, chainCode: CODE, environment: 'test', symbol: 'BTC', name: 'Bitcoin regtest native coin', contract: null, decimals: 8 }],
    }));
    await prepareTestKeystore();
    await receiver.start();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 2 });
    svc = await WcsService.start(testConfig(db.url, {
      [`WCS_RPC_TEST_${CODE}`]: node.url,
      [`WCS_SCAN_START_TEST_${CODE}`]: String(startHeight),
      WCS_SCAN_POLL_MS: '50',
      WCS_CALLBACK_POLL_MS: '50',
      WCS_CALLBACK_ALLOW_PRIVATE: '1',
      WCS_CONFIG: configFile,
    }), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'btc-deposits', environment: 'test', chains: [CODE] });
    await svc.storage.applications.setCallback(TEST_ACTOR, app.id, 'RECHARGE', receiver.url('/merchant/recharge'));
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

  it('BTCREG comes from the config file with its native coin, deposit detection ENABLED, scanning from the configured height (the 432 setup blocks unread)', async () => {
    const chains = expectOk(await client.get('/api/v1/wallet/support/chains')) as Array<{ chainCode: string; depositDetection: string }>;
    expect(chains.map((x) => [x.chainCode, x.depositDetection])).to.deep.equal([[CODE, 'ENABLED']]);
    const tokens = await q<{ id: number; symbol: string; contract: string | null; decimals: number; active: boolean }>(
      'SELECT id, symbol, contract, decimals, active FROM chain_tokens WHERE chain_id = $1', [CHAIN_ID]);
    expect(tokens).to.deep.equal([{ id: TOKEN_ID, symbol: 'BTC', contract: null, decimals: 8, active: true }]);
    // the cursor was placed on the block under the start height, which is the only older block kept
    const lowest = await q<{ h: string }>('SELECT min(height)::text AS h FROM scan_blocks WHERE chain_id = $1', [CHAIN_ID]);
    expect(Number(lowest[0]!.h)).to.equal(startHeight - 1);
  });

  it('a deposit to a user\'s P2WPKH address: nothing while unmined, PENDING with the exact amount and its vout, CONFIRMED and SETTLED at 2 confirmations, three verified callbacks', async () => {
    const to = await userAddress('alice');
    expect(to).to.match(P2WPKH_RB);
    const txHash = await node.send(to, 12_345_678n);
    const outs = await outputsTo(txHash, to);
    expect(outs.map((o) => o.sats)).to.deep.equal([12_345_678n]);
    const out = outs[0];
    paid.add(`${txHash}:${out!.vout}`);
    // in the mempool only: not a deposit yet
    await caughtUp();
    expect(await byTx(txHash)).to.deep.equal([]);

    const [blockHash] = await node.mine(1);
    const height = Number(await tip());
    const pending = await waitStatus(txHash, 'PENDING');
    expect(pending).to.include({
      chainCode: CODE, chainId: CHAIN_ID, tokenSymbol: 'BTC', chainTokenId: TOKEN_ID, amount: '0.12345678', address: to, externalUserId: 'alice',
      position: out!.vout, blockHeight: height, blockHash, confirmations: 1, minConfirmations: MIN_CONF,
    });
    // fromAddress: the address the first input spends from (the node's own decoding of the previous output)
    const spent = (await node.rpc<VerboseTx>('getrawtransaction', [txHash, true])).vin[0]!;
    const from = (await node.rpc<VerboseTx>('getrawtransaction', [spent.txid, true])).vout[spent.vout]!.scriptPubKey.addresses![0];
    expect(from).to.match(/^rb1/);
    expect(pending).to.include({ fromAddress: from, memo: null, contractAddress: null });
    await waitEvents(pending.id, ['PENDING']);
    expect(events(pending.id).map((e) => e.txStatus)).to.deep.equal(['PENDING']);

    await node.mine(1);
    const settled = await waitStatus(txHash, 'SETTLED');
    expect(settled).to.include({ id: pending.id, blockHash, blockHeight: height, confirmations: MIN_CONF });
    await waitEvents(settled.id, ['PENDING', 'CONFIRMED', 'SETTLED']);
    const got = receiver.received.filter((r) => (JSON.parse(r.body.toString()) as RechargeEvent).id === settled.id);
    expect(got).to.have.length(3);
    for (const r of got) {
      expect(verifyCallback(r, app.apiKey, app.apiSecret)).to.equal(null);
      expect(r.target).to.equal('/merchant/recharge');
      expect(Object.keys(JSON.parse(r.body.toString())).sort()).to.deep.equal(EVENT_FIELDS);
    }
    const evs = events(settled.id);
    expect(evs.map((e) => e.txStatus)).to.deep.equal(['PENDING', 'CONFIRMED', 'SETTLED']);
    const common = { event: 'recharge', id: settled.id, applicationId: app.id, chainId: CHAIN_ID, chainTokenId: TOKEN_ID, address: to, amount: '0.12345678', txHash, blockHeight: height };
    expect(evs[0]).to.deep.equal({ ...common, txStatus: 'PENDING', confirmations: 1, minConfirmations: MIN_CONF });
    expect(evs[1]).to.deep.equal({ ...common, txStatus: 'CONFIRMED', confirmations: MIN_CONF, minConfirmations: MIN_CONF });
    expect(evs[2]).to.deep.equal({ ...common, txStatus: 'SETTLED', confirmations: -1, minConfirmations: -1 });

    const detail = expectOk(await client.get(`${RECHARGE_GET}?id=${settled.id}`)) as Recharge;
    expect(Object.keys(detail).sort()).to.deep.equal(RECHARGE_FIELDS);
    expect(detail).to.include({ id: settled.id, txStatus: 'SETTLED', chainCode: CODE, tokenSymbol: 'BTC', amount: '0.12345678', position: out!.vout, txHash, blockHash, failReason: null });
  });

  it('several outputs of one transaction (sendmany to two users; two outputs to one user): one record per output, positions = the vouts, one txHash', async () => {
    const [carol, dave, erin] = [await userAddress('carol'), await userAddress('dave'), await userAddress('erin')];
    // sendmany: two users and an output to nobody of ours
    const many = await node.sendMany([{ address: carol, sats: 1_000_000n }, { address: elsewhere, sats: 700_000n }, { address: dave, sats: 250_000_001n }]);
    // the wallet's send API: carol twice in one transaction, and erin
    const twice = await sendOutputs([{ address: carol, sats: 3_000_000n }, { address: erin, sats: 4_000_000n }, { address: carol, sats: 5_000_001n }]);
    const expected = async (txid: string, users: Array<[string, string]>) => {
      const rows: Array<[number, string, string, string]> = [];
      for (const [user, addr] of users) {
        for (const o of await outputsTo(txid, addr)) {
          rows.push([o.vout, user, addr, formatUnits(o.sats, 8)]);
          paid.add(`${txid}:${o.vout}`);
        }
      }
      return rows.sort((a, b) => a[0] - b[0]);
    };
    const wantMany = await expected(many, [['carol', carol], ['dave', dave]]);
    const wantTwice = await expected(twice, [['carol', carol], ['erin', erin]]);
    expect(wantMany.map((r) => r[3])).to.have.members(['0.01', '2.50000001']);
    expect(wantTwice.map((r) => [r[1], r[3]])).to.have.deep.members([['carol', '0.03'], ['erin', '0.04'], ['carol', '0.05000001']]);
    expect(new Set(wantTwice.map((r) => r[0])).size).to.equal(3);

    const [blockHash] = await node.mine(1);
    const pendingMany = await waitTx(many, 'PENDING', 2);
    const pendingTwice = await waitTx(twice, 'PENDING', 3);
    for (const [rows, want, txid] of [[pendingMany, wantMany, many], [pendingTwice, wantTwice, twice]] as const) {
      expect(rows.map((r) => [r.position, r.externalUserId, r.address, r.amount])).to.deep.equal(want);
      for (const r of rows) expect(r).to.include({ txHash: txid, blockHash, confirmations: 1, chainTokenId: TOKEN_ID });
    }
    expect(new Set([...pendingMany, ...pendingTwice].map((r) => r.id)).size).to.equal(5);

    await node.mine(1);
    const settled = [...(await waitTx(many, 'SETTLED', 2)), ...(await waitTx(twice, 'SETTLED', 3))];
    expect(settled.map((r) => r.id).sort()).to.deep.equal([...pendingMany, ...pendingTwice].map((r) => r.id).sort());
    for (const r of settled) {
      await waitEvents(r.id, ['PENDING', 'CONFIRMED', 'SETTLED']);
      expect(events(r.id).map((e) => [e.txStatus, e.amount, e.address])).to.deep.equal(['PENDING', 'CONFIRMED', 'SETTLED'].map((s) => [s, r.amount, r.address]));
    }
    // nothing for the output to an address no user owns
    expect((await list()).filter((r) => r.address === elsewhere)).to.deep.equal([]);
  });

  it('a reorg (invalidateblock) dropping the deposit\'s block at depth 1: never CONFIRMED or SETTLED, ends FAILED with a verified callback', async () => {
    const to = await userAddress('dropped');
    const txHash = await node.send(to, 5_000_000n);
    const [out] = await outputsTo(txHash, to);
    paid.add(`${txHash}:${out!.vout}`);
    const [old] = await node.mine(1);
    const seen = await waitStatus(txHash, 'PENDING');
    expect(seen).to.include({ blockHash: old, confirmations: 1, position: out!.vout, amount: '0.05' });
    const forkHeight = BigInt(seen.blockHeight!) - 1n;

    await node.rpc('invalidateblock', [old]);
    await node.syncWallet();
    expect(await tip()).to.equal(forkHeight);
    // bcoin's reset emptied the mempool: the node no longer knows the transaction
    expect(await node.rpc<string[]>('getrawmempool')).to.not.include(txHash);
    let lookup: unknown = null;
    try {
      await node.rpc('getrawtransaction', [txHash, true]);
    } catch (e) {
      lookup = e;
    }
    expect(lookup, 'the node still knows the dropped transaction').to.be.instanceOf(Error);

    // a competing chain without it, one block at a time until the scanner gives up on the deposit
    let mined = 0;
    const gone = await pollUntil(async () => {
      await node.mine(1, elsewhere);
      mined++;
      return byTx(txHash);
    }, (rows) => rows[0]?.txStatus === 'FAILED', 30_000, 200);
    expect(gone.ok, JSON.stringify(gone.result)).to.equal(true);
    expect(mined, 'FAILED before dropAfterBlocks (2) blocks of the new chain').to.be.at.least(2);
    const failed = gone.result[0]!;
    expect(failed).to.include({ id: seen.id, blockHash: null, confirmations: 0 });
    expect(failed.failReason).to.match(/left the chain/);
    await waitEvents(failed.id, ['PENDING', 'FAILED']);
    const evs = events(failed.id);
    expect(evs.map((e) => e.txStatus)).to.deep.equal(['PENDING', 'FAILED']);
    expect(evs[1]).to.deep.include({ txHash, amount: '0.05', confirmations: 0, minConfirmations: MIN_CONF });
    for (const r of receiver.received.filter((x) => (JSON.parse(x.body.toString()) as RechargeEvent).id === failed.id)) {
      expect(verifyCallback(r, app.apiKey, app.apiSecret)).to.equal(null);
    }
    expect(await noticesOf(failed.id)).to.deep.equal(['PENDING', 'FAILED']);
    // more blocks change nothing
    await node.mine(MIN_CONF, elsewhere);
    await caughtUp();
    expect((await byTx(txHash)).map((r) => [r.id, r.txStatus])).to.deep.equal([[failed.id, 'FAILED']]);
    // the wallet still counts the dropped transaction as pending: forget it, so that later
    // payments do not spend its change
    await node.walletRpc('abandontransaction', [txHash]);
  });

  it('a reorg (invalidateblock) at depth 1 with the raw transaction re-broadcast and mined one block higher in the new chain: the same record, confirmations from its new block, SETTLED once', async () => {
    const to = await userAddress('remined');
    const txHash = await node.send(to, 7_654_321n);
    const raw = await node.rpc<string>('getrawtransaction', [txHash, false]);
    const [out] = await outputsTo(txHash, to);
    paid.add(`${txHash}:${out!.vout}`);
    const [old] = await node.mine(1);
    const before = await waitStatus(txHash, 'PENDING');
    expect(before).to.include({ blockHash: old, confirmations: 1, position: out!.vout, amount: '0.07654321' });
    const oldHeight = before.blockHeight!;

    await node.rpc('invalidateblock', [old]);
    await node.syncWallet();
    expect(await tip()).to.equal(BigInt(oldHeight - 1));
    expect(await node.rpc<string[]>('getrawmempool')).to.not.include(txHash);
    // the new chain: an empty block at the old height, then the same signed transaction one block higher
    const [first] = await node.mine(1, elsewhere);
    expect(first).to.not.equal(old);
    expect(await node.rpc<string>('sendrawtransaction', [raw])).to.equal(txHash);
    await inMempool(txHash);
    const [again] = await node.mine(1, elsewhere);
    const onChain = await node.rpc<VerboseTx>('getrawtransaction', [txHash, true]);
    expect(onChain.blockhash).to.equal(again);
    const newHeight = oldHeight + 1;
    expect(await tip()).to.equal(BigInt(newHeight));

    // from the old block it would now be 2 deep (CONFIRMED); from its new block it is 1 deep
    const moved = await pollUntil(() => byTx(txHash), (rows) => rows.length === 1 && rows[0]!.blockHash === again, 30_000, 100);
    expect(moved.ok, JSON.stringify(moved.result)).to.equal(true);
    await caughtUp();
    const now = (await byTx(txHash))[0]!;
    expect(now).to.include({ id: before.id, txStatus: 'PENDING', blockHash: again, blockHeight: newHeight, confirmations: 1, position: out!.vout, amount: '0.07654321' });
    expect(await noticesOf(before.id)).to.deep.equal(['PENDING']);

    await node.mine(1, elsewhere);
    const settled = await waitStatus(txHash, 'SETTLED');
    expect(settled).to.include({ id: before.id, blockHash: again, blockHeight: newHeight, confirmations: MIN_CONF });
    expect((await list()).filter((r) => r.address === to), 'one record for the address').to.have.length(1);
    await waitEvents(settled.id, ['PENDING', 'CONFIRMED', 'SETTLED']);
    const evs = events(settled.id);
    expect(evs.map((e) => e.txStatus)).to.deep.equal(['PENDING', 'CONFIRMED', 'SETTLED']);
    expect(evs.map((e) => e.blockHeight)).to.deep.equal([oldHeight, newHeight, newHeight]);
    expect(evs[1]).to.deep.include({ confirmations: MIN_CONF, minConfirmations: MIN_CONF });
    expect(evs[2]).to.deep.include({ confirmations: -1, minConfirmations: -1 });
    // still once after more blocks
    await node.mine(2, elsewhere);
    await caughtUp();
    expect(await noticesOf(settled.id)).to.deep.equal(['PENDING', 'CONFIRMED', 'SETTLED']);
  });

  it('nothing is credited twice across the run: one record per paid output, one callback task per (record, txStatus), each callback delivered once', async () => {
    const recharges = await q<{ id: string; tx_hash: string; position: number; tx_status: string }>(
      'SELECT id::text AS id, tx_hash, position, tx_status FROM recharges WHERE chain_id = $1', [CHAIN_ID]);
    expect(recharges.map((r) => `${r.tx_hash}:${r.position}`).sort()).to.deep.equal([...paid].sort());
    const tasks = await q<{ biz_id: string; body: Buffer | string }>(`SELECT biz_id::text AS biz_id, body FROM callback_tasks WHERE biz_type = 'RECHARGE'`);
    const keys = tasks.map((t) => {
      const e = JSON.parse(Buffer.from(t.body as Buffer).toString('utf8')) as RechargeEvent;
      expect(String(e.id)).to.equal(t.biz_id);
      return `${e.id}:${e.txStatus}`;
    });
    expect(new Set(keys).size, keys.join(' ')).to.equal(keys.length);
    // exactly the states each record went through
    const want = recharges.flatMap((r) => (r.tx_status === 'SETTLED' ? ['PENDING', 'CONFIRMED', 'SETTLED'] : r.tx_status === 'FAILED' ? ['PENDING', 'FAILED'] : ['?']).map((s) => `${r.id}:${s}`));
    expect(keys.sort()).to.deep.equal(want.sort());
    // and the receiver got each one once
    const delivered = receiver.received.map((r) => JSON.parse(r.body.toString('utf8')) as RechargeEvent).map((e) => `${e.id}:${e.txStatus}`);
    expect(delivered.sort()).to.deep.equal(want.sort());
  });
});
