/**
 * Memo-chain deposit detection through the running service (`wcs start`: scanner worker, unattributed
 * deposits, `wcs deposits` operator commands, signed RECHARGE callbacks) on recorded real RPC
 * responses: no XRP or Stellar node is reachable from the test environment, so local replay
 * servers (support/recorded-nodes.ts) answer the scanners with the adapters' own fixtures
 * (adapters/xrp and adapters/stellar src/fixtures, provenance in their SOURCE.md).
 *
 * Why database rows are rewritten: the fixtures are recorded mainnet (XRP) and pubnet (Stellar)
 * data, i.e. payments to real accounts this service does not own (r3pz…, r4Ew…, rPdv…,
 * GAYOLL…) with the destination tags / memos their senders used. The service derives its shared
 * deposit addresses from its own key store, and issues memos from a counter. So, after the
 * applications and their users' addresses are created through the API (by an API-only instance,
 * no scanner running), the test points them at the recorded data directly in Postgres:
 * `deposit_accounts.address` and the users' `addresses.address` become the fixture's destination,
 * and chosen users' `addresses.memo` become the fixture's tag / memo (e.g. user "tagged" →
 * "4774246"; on Stellar, where the service issues MEMO_IDs, user "xlm-text" is given the recorded
 * MEMO_TEXT "hello universe"). Only then is the scanning service (`wcs start`) started with WCS_RPC_LIVE_XRP /
 * WCS_RPC_LIVE_XLM pointed at the replay servers, so its watch list reads the rewritten rows from
 * its first step. Two served answers are not verbatim recordings (r4Ew's account_tx page around the
 * recorded failed payment, and the Horizon root's latest ledger): support/recorded-nodes.ts says
 * what was changed and why.
 *
 * The applications are `live` (the data is mainnet / pubnet: live XRP is chain 6, token 600;
 * live XLM chain 7, token 700). Live callback URLs must be https and must not point at private
 * targets: the merchant receiver is an HTTPS server on loopback with a self-signed certificate
 * (support/https-callback-receiver.ts), the service process trusts it via NODE_EXTRA_CA_CERTS, and
 * WCS_CALLBACK_ALLOW_PRIVATE=1 allows the loopback target. WCS_CALLBACK_PER_ENDPOINT=1 makes
 * deliveries to the one receiver sequential, so that arrival order can be asserted besides the
 * outbox order. Database, receiver, merchants, the `wcs start` process, the CLI and the reads and
 * waits the assertions use are support/deposit-harness.ts, shared with deposits-sol-eos.test.ts.
 */
import { expect } from 'chai';
import { DepositHarness, type Merchant } from './support/deposit-harness';
import { expectOk, sleep } from './support/expect';
import { cliJson } from './support/processes';
import { horizonReplay, STELLAR, XRP, xrpReplay, type HorizonReplay, type XrpReplay } from './support/recorded-nodes';
import { ADDRESS_CREATE, RECHARGE_GET, type Recharge } from './support/recharge-types';

const XRP_CHAIN = 6;
const XLM_CHAIN = 7;

/** The recorded transactions (hashes verified against their fields, SOURCE.md). */
const TX = {
  /** rhNY5u… → r3pz, DestinationTag 4774246, delivered 212200 drops, ledger 42935098. */
  tagged: '198B475CFD2B0693966D684CD33C2950BFA235F25F68F78FB5797FF87B40E97F',
  /** rfwPAY… → r3pz, DestinationTag 0, delivered 20000000 drops, ledger 42594675. */
  tagZero: '7F47A8AE1A17EE6D7EF47E5732ED99F17D5514EEE29E5D77AD8AC56556B7390B',
  /** r3pz → r4Ew, DestinationTag 855007911, 483480 drops, tecUNFUNDED_PAYMENT, ledger 42694215. */
  unfunded: 'D7D181E7F2BA66F5180806999EC105AF53D5108CF6EEBC4A5E5ABFB7A4268611',
  /** rQHYSE… → rPdv, partial payment: Amount 100000000, delivered 106294 drops, no tag, ledger 63809286. */
  partial: '2CE935CC1FB07310E34DF373C95CE735FCB546577BA3C3E197F5F2CECAABB8B4',
  /** GBVFTZ… → GAYOLL… create_account 2.0000000 XLM, MEMO_TEXT "hello universe", ledger 27984461. */
  xlmText: 'ef0fe04ac3c7de7228ca2598886059868ad05c224a041e8b2d9ee2a8a9dd6894',
  /** GBVFTZ… → GAYOLL… payment 200.0000000 XLM, memo none, ledger 27984467. */
  xlmNoMemo: 'c1cb850f413e4038c4120bd9badc07bb8ef85a46649a4d5c9c16e578a2d30589',
} as const;

describe('memo-chain deposits on recorded mainnet data (XRP destination tags, Stellar memos): scanner, unattributed deposits, wcs deposits assign, callbacks', function () {
  this.timeout(120_000);
  let xrp: XrpReplay;
  let horizon: HorizonReplay;
  const h = new DepositHarness({
    chainIds: [XRP_CHAIN, XLM_CHAIN],
    rpcEnv: () => ({ WCS_RPC_LIVE_XRP: xrp.url, WCS_RPC_LIVE_XLM: horizon.url }),
    merchants: {
      xrp: { name: 'xrp-main', environment: 'live', chains: ['XRP'] },
      unfunded: { name: 'xrp-unfunded', environment: 'live', chains: ['XRP'] },
      partial: { name: 'xrp-partial', environment: 'live', chains: ['XRP'] },
      xlm: { name: 'xlm-main', environment: 'live', chains: ['XLM'] },
    },
  });
  const { m, q, dbNow, list, byTx, waitStatus, bodies, expectCallbacks, historyCursors, wcs, unattributed, snapshot, startScanning, stopService } = h;
  /** Waits until one whole scan step has run since `since` on each chain, without an error, and checks it read the replays' tips. */
  const stepSince = async (since: Date) => {
    const cursors = await h.stepSince(since);
    expect(cursors.map((c) => Number(c.height))).to.deep.equal([XRP.TIP, STELLAR.TIP]);
  };

  before(async () => {
    xrp = await xrpReplay();
    horizon = await horizonReplay();
    await h.start();

    // 1. applications and addresses through the API, on an instance that scans nothing
    const users: Array<[Merchant, string, string]> = [
      [m.xrp, 'XRP', 'tagged'], [m.xrp, 'XRP', 'claimant'], [m.unfunded, 'XRP', 'unfunded'], [m.partial, 'XRP', 'partial-user'],
      [m.xlm, 'XLM', 'xlm-text'], [m.xlm, 'XLM', 'xlm-claimant'],
    ];
    await h.createMerchants(async () => {
      for (const [x, chainCode, user] of users) {
        const a = expectOk(await x.client.post(ADDRESS_CREATE, { chainCode, externalUserId: user })) as { address: string; memo: string };
        expect(a.memo, `${chainCode} memo of ${user}`).to.match(/^[1-9][0-9]*$/);
      }
    });

    // 2. point them at the recorded accounts and memos (see the header)
    const shared: Array<[Merchant, number, string]> = [[m.xrp, XRP_CHAIN, XRP.R3PZ], [m.unfunded, XRP_CHAIN, XRP.R4EW], [m.partial, XRP_CHAIN, XRP.RPDV], [m.xlm, XLM_CHAIN, STELLAR.GAYOLL]];
    for (const [x, chainId, address] of shared) {
      const rows = await q<{ id: number }>('UPDATE deposit_accounts SET address = $3 WHERE application_id = $1 AND chain_id = $2 RETURNING id', [x.app.id, chainId, address]);
      expect(rows, `deposit account of ${x.name}`).to.have.length(1);
      await q('UPDATE addresses SET address = $2, updated_at = now() WHERE deposit_account_id = $1', [rows[0]!.id, address]);
    }
    const memos: Array<[Merchant, string, string]> = [[m.xrp, 'tagged', '4774246'], [m.unfunded, 'unfunded', '855007911'], [m.xlm, 'xlm-text', 'hello universe']];
    for (const [x, user, memo] of memos) {
      const rows = await q('UPDATE addresses SET memo = $3, updated_at = now() WHERE application_id = $1 AND external_user_id = $2 RETURNING id', [x.app.id, user, memo]);
      expect(rows, `address of ${user}`).to.have.length(1);
    }

    // 3. the scanning instance, reading the rewritten rows from its first step
    const t0 = await dbNow();
    await startScanning();
    await stepSince(t0);
  });

  after(async () => {
    await h.stop();
    await xrp?.close();
    await horizon?.close();
  });

  it('support/chains reports deposit detection ENABLED for the live memo chains with an RPC endpoint', async () => {
    const xrpChains = expectOk(await m.xrp.client.get('/api/v1/wallet/support/chains')) as Array<{ chainCode: string; depositDetection: string }>;
    expect(xrpChains.map((c) => [c.chainCode, c.depositDetection])).to.deep.equal([['XRP', 'ENABLED']]);
    const xlmChains = expectOk(await m.xlm.client.get('/api/v1/wallet/support/chains')) as Array<{ chainCode: string; depositDetection: string }>;
    expect(xlmChains.map((c) => [c.chainCode, c.depositDetection])).to.deep.equal([['XLM', 'ENABLED']]);
  });

  it('the scanner watched exactly the shared addresses and read each one\'s recorded history from its beginning', async () => {
    // the applications' hot wallets are read too, from the head, for their outflows (docs/chain-events.md, "Account-history chains")
    const hot = (await q<{ address: string }>('SELECT address FROM hot_wallets')).map((r) => r.address);
    const cursors = (await historyCursors()).filter((c) => !hot.includes(c.address));
    expect(cursors.map((c) => [c.chain_id, c.address])).to.have.deep.members([
      [XRP_CHAIN, XRP.R3PZ], [XRP_CHAIN, XRP.R4EW], [XRP_CHAIN, XRP.RPDV], [XLM_CHAIN, STELLAR.GAYOLL],
    ]);
    const byAddress = new Map(cursors.map((c) => [c.address, c.cursor]));
    // XRP cursor: the last entry read (ledger, TransactionIndex); Stellar: the last paging token
    expect(JSON.parse(byAddress.get(XRP.R3PZ)!)).to.deep.equal({ v: 1, ledger: 42935098, index: 0 });
    expect(JSON.parse(byAddress.get(XRP.R4EW)!)).to.deep.equal({ v: 1, ledger: 42694215, index: 18 });
    expect(byAddress.get(STELLAR.GAYOLL)).to.equal('120192370561220609');
    const first = xrp.accountTx().find((p) => p.account === XRP.R3PZ)!;
    expect(first).to.deep.include({ ledger_index_min: -1, ledger_index_max: -1, forward: true });
    expect(horizon.paymentRequests(STELLAR.GAYOLL)[0]!.get('cursor')).to.equal(null);
  });

  it('XRP: the deposit tagged with a user\'s memo is credited to that user with the exact amount, memo, hash and ledger, PENDING → CONFIRMED → SETTLED at once (validated ledgers are final), three signed callbacks in order', async () => {
    const r = await waitStatus(m.xrp, TX.tagged, 'SETTLED');
    expect(r).to.include({
      applicationId: m.xrp.app.id, chainId: XRP_CHAIN, chainCode: 'XRP', chainTokenId: 600, tokenSymbol: 'XRP', contractAddress: null,
      externalUserId: 'tagged', address: XRP.R3PZ, memo: '4774246', fromAddress: 'rhNY5uxRGpn6QHJoXbPSTGzkD9yv6b6oDE',
      amount: '0.2122', txHash: TX.tagged, position: 0, blockHeight: 42935098, blockHash: '42935098', minConfirmations: 1, failReason: null,
    });
    const evs = await expectCallbacks(m.xrp, r.id, ['PENDING', 'CONFIRMED', 'SETTLED']);
    const depth = XRP.TIP - 42935098 + 1;
    const common = { event: 'recharge', id: r.id, applicationId: m.xrp.app.id, chainId: XRP_CHAIN, chainTokenId: 600, address: XRP.R3PZ, amount: '0.2122', txHash: TX.tagged, blockHeight: 42935098 };
    expect(evs[0]).to.deep.equal({ ...common, txStatus: 'PENDING', confirmations: depth, minConfirmations: 1 });
    expect(evs[1]).to.deep.equal({ ...common, txStatus: 'CONFIRMED', confirmations: depth, minConfirmations: 1 });
    expect(evs[2]).to.deep.equal({ ...common, txStatus: 'SETTLED', confirmations: -1, minConfirmations: -1 });
    const detail = expectOk(await m.xrp.client.get(`${RECHARGE_GET}?id=${r.id}`)) as Recharge;
    expect(detail).to.include({ id: r.id, txStatus: 'SETTLED', memo: '4774246', amount: '0.2122' });
    // the only record of the merchant: the other deposits to r3pz name no user
    expect((await list(m.xrp)).map((x) => x.txHash)).to.deep.equal([TX.tagged]);
  });

  it('XRP: deposits with an unknown tag (0) and without a tag are credited to nobody (no record, no callback) and are listed by `wcs deposits unattributed` as MEMO_UNKNOWN / MEMO_MISSING', async () => {
    for (const h of [TX.tagZero, TX.partial]) {
      expect(await q('SELECT id FROM recharges WHERE tx_hash = $1', [h]), h).to.deep.equal([]);
      expect(bodies().filter(({ e }) => e.txHash === h), h).to.deep.equal([]);
      const tasks = await q<{ body: Buffer }>('SELECT body FROM callback_tasks');
      expect(tasks.filter((t) => Buffer.from(t.body).toString('utf8').includes(h)), h).to.deep.equal([]);
    }
    expect(await list(m.partial)).to.deep.equal([]);
    const rows = (await unattributed()).filter((u) => u.chainId === XRP_CHAIN);
    const { createTime: _c0, id: _i0, ...zero } = rows.find((u) => u.txHash === TX.tagZero)!;
    expect(zero).to.deep.equal({
      chainId: XRP_CHAIN, chainCode: 'XRP', environment: 'live', tokenSymbol: 'XRP', address: XRP.R3PZ, memo: '0', amount: '20',
      txHash: TX.tagZero, position: 0, blockHeight: 42594675, reason: 'MEMO_UNKNOWN', rechargeId: null,
    });
    // a partial payment: the delivered 106294 drops, not its Amount of 100 XRP
    const { createTime: _c1, id: _i1, ...missing } = rows.find((u) => u.txHash === TX.partial)!;
    expect(missing).to.deep.equal({
      chainId: XRP_CHAIN, chainCode: 'XRP', environment: 'live', tokenSymbol: 'XRP', address: XRP.RPDV, memo: null, amount: '0.106294',
      txHash: TX.partial, position: 0, blockHeight: 63809286, reason: 'MEMO_MISSING', rechargeId: null,
    });
    // the failed payment and the credited one are not unattributed deposits
    expect(rows.map((u) => u.txHash).sort()).to.deep.equal([TX.tagZero, TX.partial].sort());
    const human = await wcs(['deposits', 'unattributed'], 0);
    expect(human.stdout).to.include(`MEMO_UNKNOWN tx ${TX.tagZero}#0`).and.include(`memo (none) MEMO_MISSING tx ${TX.partial}#0`);
  });

  it('XRP: `wcs deposits assign` credits an unattributed deposit to a user with an address on that shared address (record, PENDING..SETTLED callbacks), once; a user without one is refused', async () => {
    const zero = (await unattributed()).find((u) => u.txHash === TX.tagZero)!;
    const missing = (await unattributed()).find((u) => u.txHash === TX.partial)!;

    // claimant (app xrp-main) has an address on r3pz, not on rPdv
    const wrongArgs = ['deposits', 'assign', String(missing.id), '--app', String(m.xrp.app.id), '--user', 'claimant'];
    const wrong = await wcs(wrongArgs, 1);
    expect(wrong.stderr).to.include(`application ${m.xrp.app.id} has no user claimant with an address on ${XRP.RPDV}`);
    const nobody = await wcs(['deposits', 'assign', String(zero.id), '--app', String(m.xrp.app.id), '--user', 'no-such-user'], 1);
    expect(nobody.stderr).to.include('has no user no-such-user with an address on');

    const args = ['deposits', 'assign', String(zero.id), '--app', String(m.xrp.app.id), '--user', 'claimant', '--json'];
    const assigned = cliJson(args, await wcs(args, 0)) as Recharge;
    expect(assigned).to.include({
      applicationId: m.xrp.app.id, chainId: XRP_CHAIN, chainTokenId: 600, externalUserId: 'claimant', address: XRP.R3PZ, memo: '0', amount: '20',
      txHash: TX.tagZero, position: 0, blockHeight: 42594675, fromAddress: 'rfwPAYShmdM3BYeCwAN3kciKXuYG1XFiCp', txStatus: 'SETTLED', minConfirmations: 1,
    });
    const evs = await expectCallbacks(m.xrp, assigned.id, ['PENDING', 'CONFIRMED', 'SETTLED']);
    for (const e of evs) expect(e).to.include({ amount: '20', txHash: TX.tagZero, address: XRP.R3PZ, blockHeight: 42594675, applicationId: m.xrp.app.id });
    expect(evs[1]).to.include({ confirmations: XRP.TIP - 42594675 + 1, minConfirmations: 1 });
    expect(evs[2]).to.include({ confirmations: -1, minConfirmations: -1 });
    expect((await byTx(m.xrp, TX.tagZero)).map((r) => [r.id, r.externalUserId, r.txStatus])).to.deep.equal([[assigned.id, 'claimant', 'SETTLED']]);

    // assigned: gone from the open list, shown with its recharge under --all
    expect((await unattributed()).map((u) => u.id)).to.not.include(zero.id);
    expect((await unattributed(true)).find((u) => u.id === zero.id)).to.include({ rechargeId: assigned.id, reason: 'MEMO_UNKNOWN' });
    const again = await wcs(['deposits', 'assign', String(zero.id), '--app', String(m.xrp.app.id), '--user', 'claimant'], 1);
    expect(again.stderr).to.include(`unattributed deposit ${zero.id} was already assigned (recharge ${assigned.id})`);
    expect(await q('SELECT id FROM recharges WHERE tx_hash = $1', [TX.tagZero])).to.have.length(1);

    // the memo-less partial payment, to a user of the application whose shared address it reached
    const pArgs = ['deposits', 'assign', String(missing.id), '--app', String(m.partial.app.id), '--user', 'partial-user', '--json'];
    const p = cliJson(pArgs, await wcs(pArgs, 0)) as Recharge;
    expect(p).to.include({ externalUserId: 'partial-user', address: XRP.RPDV, memo: null, amount: '0.106294', txHash: TX.partial, txStatus: 'SETTLED' });
    await expectCallbacks(m.partial, p.id, ['PENDING', 'CONFIRMED', 'SETTLED']);
    expect((await unattributed()).filter((u) => u.chainId === XRP_CHAIN)).to.deep.equal([]);
  });

  it('XRP: the failed payment (tecUNFUNDED_PAYMENT) is never credited: to the watched (r4Ew, 855007911) it is one FAILED record with only a FAILED callback; on the sender\'s account it is nothing', async () => {
    const r = await waitStatus(m.unfunded, TX.unfunded, 'FAILED');
    expect(r).to.include({
      externalUserId: 'unfunded', address: XRP.R4EW, memo: '855007911', fromAddress: XRP.R3PZ, amount: '0.48348', blockHeight: 42694215,
      confirmations: 0, failReason: 'the transaction failed on chain',
    });
    const evs = await expectCallbacks(m.unfunded, r.id, ['FAILED']);
    expect(evs[0]).to.include({ amount: '0.48348', txHash: TX.unfunded, confirmations: 0 });
    const notices = await q<{ tx_status: string }>('SELECT tx_status FROM recharge_notices WHERE recharge_id = $1', [r.id]);
    expect(notices.map((n) => n.tx_status)).to.deep.equal(['FAILED']);
    // r3pz's own (outgoing) failed payment: not a deposit of xrp-main, not an unattributed deposit
    expect(await q<{ application_id: number }>('SELECT application_id FROM recharges WHERE tx_hash = $1', [TX.unfunded])).to.deep.equal([{ application_id: m.unfunded.app.id }]);
    expect((await unattributed(true)).map((u) => u.txHash)).to.not.include(TX.unfunded);
  });

  it('Stellar: the create_account with a MEMO_TEXT naming a user is credited (2 XLM, SETTLED, callbacks in order); the payment without memo is MEMO_MISSING until assigned', async () => {
    const r = await waitStatus(m.xlm, TX.xlmText, 'SETTLED');
    expect(r).to.include({
      chainId: XLM_CHAIN, chainCode: 'XLM', chainTokenId: 700, tokenSymbol: 'XLM', externalUserId: 'xlm-text', address: STELLAR.GAYOLL,
      memo: 'hello universe', fromAddress: STELLAR.GBVFTZ, amount: '2', position: 0, blockHeight: 27984461, blockHash: '27984461', minConfirmations: 1,
    });
    const evs = await expectCallbacks(m.xlm, r.id, ['PENDING', 'CONFIRMED', 'SETTLED']);
    expect(evs[0]).to.include({ chainId: XLM_CHAIN, chainTokenId: 700, amount: '2', confirmations: STELLAR.TIP - 27984461 + 1, minConfirmations: 1 });
    expect(await byTx(m.xlm, TX.xlmNoMemo)).to.deep.equal([]);

    const u = (await unattributed(true)).find((x) => x.txHash === TX.xlmNoMemo)!;
    expect(u).to.include({ chainId: XLM_CHAIN, chainCode: 'XLM', environment: 'live', tokenSymbol: 'XLM', address: STELLAR.GAYOLL, memo: null, amount: '200', reason: 'MEMO_MISSING', rechargeId: null, blockHeight: 27984467, position: 0 });
    const args = ['deposits', 'assign', String(u.id), '--app', String(m.xlm.app.id), '--user', 'xlm-claimant', '--json'];
    const assigned = cliJson(args, await wcs(args, 0)) as Recharge;
    expect(assigned).to.include({ externalUserId: 'xlm-claimant', memo: null, amount: '200', txHash: TX.xlmNoMemo, txStatus: 'SETTLED', chainTokenId: 700 });
    await expectCallbacks(m.xlm, assigned.id, ['PENDING', 'CONFIRMED', 'SETTLED']);
    const twice = await wcs(['deposits', 'assign', String(u.id), '--app', String(m.xlm.app.id), '--user', 'xlm-text'], 1);
    expect(twice.stderr).to.include(`was already assigned (recharge ${assigned.id})`);
  });

  it('a restart resumes from the stored cursors: the same histories read again from where they ended, nothing recorded or sent twice', async () => {
    const before = await snapshot();
    expect(before.recharges).to.have.length(6);
    const xrpFrom = xrp.accountTx().length;
    const horizonFrom = horizon.paymentRequests(STELLAR.GAYOLL).length;
    await stopService();
    const t0 = await dbNow();
    await startScanning();
    await stepSince(t0);
    // XRP asks again from the cursor's ledger (entries up to the cursor skipped); Horizon after the last paging token
    const asked = xrp.accountTx().slice(xrpFrom);
    expect(asked.find((p) => p.account === XRP.R3PZ), JSON.stringify(asked)).to.deep.include({ ledger_index_min: 42935098 });
    expect(asked.find((p) => p.account === XRP.R4EW), JSON.stringify(asked)).to.deep.include({ ledger_index_min: 42694215 });
    const xlmAsked = horizon.paymentRequests(STELLAR.GAYOLL).slice(horizonFrom);
    expect(xlmAsked.length).to.be.greaterThan(0);
    expect(xlmAsked[0]!.get('cursor')).to.equal('120192370561220609');
    await sleep(500); // several dispatcher polls
    expect(await snapshot()).to.deep.equal(before);
  });

  it('a full re-scan (scan_history_cursors reset, restart) reads every recorded deposit again and changes nothing: no duplicate record, no new callback, assigned deposits stay assigned', async () => {
    const before = await snapshot();
    await stopService();
    await q('DELETE FROM scan_history_cursors');
    const xrpFrom = xrp.accountTx().length;
    const horizonFrom = horizon.paymentRequests(STELLAR.GAYOLL).length;
    const t0 = await dbNow();
    await startScanning();
    await stepSince(t0);
    const asked = xrp.accountTx().slice(xrpFrom);
    for (const account of [XRP.R3PZ, XRP.R4EW, XRP.RPDV]) {
      expect(asked.find((p) => p.account === account), `${account} read from the start: ${JSON.stringify(asked)}`).to.deep.include({ ledger_index_min: -1 });
    }
    expect(horizon.paymentRequests(STELLAR.GAYOLL)[horizonFrom]!.get('cursor')).to.equal(null);
    expect((await historyCursors()).every((c) => c.cursor !== null)).to.equal(true);
    await sleep(500);
    expect(await snapshot()).to.deep.equal(before);
    const dups = await q('SELECT chain_id, tx_hash, position, count(*)::int AS n FROM recharges GROUP BY 1, 2, 3 HAVING count(*) > 1');
    expect(dups).to.deep.equal([]);
  });
});
