/**
 * Chain events and custody outflows on the memo chains (XRP, XLM, EOS) through the running service
 * (`wcs start`), on recorded real node answers: no XRP, Stellar or EOS node is reachable from the
 * test environment, so local replays (support/recorded-nodes.ts: xrpEventsReplay,
 * horizonEventsReplay, eosEventsReplay) answer the scanners with the adapters' own fixtures
 * (provenance in adapters/{xrp,stellar,eos}/src/fixtures/SOURCE.md). What they serve that is not a
 * verbatim recording (a lowered validated ledger / latest ledger, empty rippled pages, the EOS
 * get_actions envelope and test-made action variants, a get_account answer of another account)
 * is said, with why, in recorded-nodes.ts.
 *
 * The replays start with their final tip BELOW some recorded transfers (XRP: ledger 42600000, under
 * r3pz's payment tagged 4774246; XLM: ledger 27984461, under the payment c1cb850f…; EOS: the early
 * last irreversible block, under the test-made transfer in block 209671573). A watcher application
 * subscribes to accounts the service does not own (r3pz…, GAYOLL…, crosschaino3): the scanner
 * reads them from that head. Then the test raises the tips, as the chains moving on: the recorded
 * transfers above the head are reported (IN), those below it never are.
 *
 * TRANSFER: a custody application's shared deposit accounts are the recorded senders (XRP: the
 * `deposit_accounts` row rewritten to rLNaPo…, as deposits-memo.test.ts rewrites them; XLM: to
 * GBVFTZ…; EOS: chain 108's configured depositAccount crosschaino2, as in deposits-sol-eos). Their
 * recorded outgoing transfers are outflows the service did not sign, except one per chain that the
 * test records as the service's own: a `transfers` row with one `transfer_attempts` row holding
 * the recorded transaction's hash, which is what the transfer pipeline stores before it broadcasts
 * a transaction it signed (the recorded transactions were not signed by this service; the rows
 * stand for that). Those give nothing; the others one `transfer` callback, one
 * UNEXPECTED_OUTFLOW alert and one record each.
 */
import { expect } from 'chai';
import { DepositHarness, type Merchant } from './support/deposit-harness';
import { verifyCallback } from './support/callback-receiver';
import { expectError, expectOk, pollUntil, sleep } from './support/expect';
import {
  EOS, eosActions, eosEventsReplay, horizonEventsReplay, STELLAR, XLM_CREATE_LEDGER, XRP, XRP_PAGED, xrpEventsReplay,
  type EosEventsReplay, type HorizonEventsReplay, type XrpEventsReplay,
} from './support/recorded-nodes';
import { ADDRESS_CREATE } from './support/recharge-types';

const XRP_CHAIN = 6;
const XLM_CHAIN = 7;
const EOS_CHAIN = 108;
const XRP_TOKEN = 600;
const XLM_TOKEN = 700;
const EOS_TOKEN = 10800;
/** The validated ledger the XRP replay starts at: after r3pz's deposit tagged 0 (42594675), before its failed payment and the payment tagged 4774246. */
const XRP_LOW = 42_600_000;

const SUB = '/api/v1/wallet/chain-event/subscription';
const OUTFLOWS = '/api/v1/wallet/outflow';
const CHAIN_EVENT_FIELDS = ['event', 'id', 'subscriptionId', 'applicationId', 'chainId', 'chainTokenId', 'contractAddress', 'fromAddress', 'toAddress', 'amount',
  'txHash', 'blockHeight', 'directionMatched', 'addressNature'].sort();

/** The recorded transactions (SOURCE.md of each adapter). */
const TX = {
  /** rhNY5u… → r3pz, 212200 drops, tag 4774246, ledger 42935098. */
  xrpTagged: '198B475CFD2B0693966D684CD33C2950BFA235F25F68F78FB5797FF87B40E97F',
  /** rfwPAY… → r3pz, 20 XRP, tag 0, ledger 42594675: below the watcher's head. */
  xrpTagZero: '7F47A8AE1A17EE6D7EF47E5732ED99F17D5514EEE29E5D77AD8AC56556B7390B',
  /** r3pz → r4Ew, tecUNFUNDED_PAYMENT, ledger 42694215: failed, no event. */
  xrpUnfunded: 'D7D181E7F2BA66F5180806999EC105AF53D5108CF6EEBC4A5E5ABFB7A4268611',
  /** GBVFTZ… → GAYOLL… create_account 2 XLM, ledger 27984461. */
  xlmCreate: 'ef0fe04ac3c7de7228ca2598886059868ad05c224a041e8b2d9ee2a8a9dd6894',
  /** GBVFTZ… → GAYOLL… payment 200 XLM, ledger 27984467. */
  xlmPayment: 'c1cb850f413e4038c4120bd9badc07bb8ef85a46649a4d5c9c16e578a2d30589',
} as const;

interface Callback { event: string; id: number; txHash: string; [k: string]: unknown }

describe('chain events and TRANSFER on the memo chains (XRP, XLM, EOS) on recorded node answers: monitored accounts read from the head, outflows of shared deposit accounts the service did not sign', function () {
  this.timeout(180_000);
  let xrp: XrpEventsReplay;
  let horizon: HorizonEventsReplay;
  let eos: EosEventsReplay;
  const actions = eosActions();
  let allowPrivate: string | undefined;
  const h = new DepositHarness({
    chainIds: [XRP_CHAIN, XLM_CHAIN, EOS_CHAIN],
    rpcEnv: () => ({ WCS_RPC_LIVE_XRP: xrp.url, WCS_RPC_LIVE_XLM: horizon.url, WCS_RPC_TEST_EOS: eos.url }),
    merchants: {
      watchLive: { name: 'watch-live', environment: 'live', chains: ['XRP', 'XLM'] },
      custodyLive: { name: 'custody-live', environment: 'live', chains: ['XRP', 'XLM'] },
      watchTest: { name: 'watch-test', environment: 'test', chains: ['EOS'] },
      custodyTest: { name: 'custody-test', environment: 'test', chains: ['EOS'] },
    },
    config: {
      chains: [{ id: EOS_CHAIN, code: 'EOS', name: 'EOS Jungle Testnet', family: 'eos', environment: 'test', network: 'jungle4', nativeSymbol: 'EOS', decimals: 4, confirmations: 1, evmChainId: null, options: { depositAccount: EOS.SENDER } }],
    },
  });
  const { m, q, dbNow, wcs, historyCursors, startScanning } = h;
  const received = (x: Merchant, kind: 'chain-event' | 'transfer') => h.receiver.received.filter((r) => r.target === `${x.path}/${kind}`);
  const bodiesOf = (x: Merchant, kind: 'chain-event' | 'transfer') => received(x, kind).map((r) => JSON.parse(r.body.toString('utf8')) as Callback);
  /** Records a recorded transaction as the service's own: a transfer and its signed attempt with that hash (see the header). */
  const signedByService = async (x: Merchant, chainId: number, tokenId: number, namespace: string, from: string, to: string, txHash: string) => {
    const [t] = await q<{ id: string }>(
      `INSERT INTO transfers (application_id, chain_id, chain_token_id, kind, key_purpose, key_namespace, key_index, from_address, to_address, amount, sent_amount, status, tx_hash)
       VALUES ($1, $2, $3, 'SWEEP', 'deposit', $4, 0, $5, $6, 1, 1, 'SUCCESS', $7) RETURNING id::text AS id`,
      [x.app.id, chainId, tokenId, namespace, from, to, txHash],
    );
    await q(`INSERT INTO transfer_attempts (transfer_id, attempt, tx_hash, raw_tx, transfer_input, max_fee) VALUES ($1, 1, $2, '\\x00'::bytea, '{}', 0)`, [t!.id, txHash]);
  };

  before(async () => {
    xrp = await xrpEventsReplay(XRP_LOW);
    horizon = await horizonEventsReplay(XLM_CREATE_LEDGER);
    eos = await eosEventsReplay();
    // the harness's CLI runs take this process's environment: `wcs app set-callback` below must
    // accept the loopback receiver for the live applications, as every service of the test does
    allowPrivate = process.env.WCS_CALLBACK_ALLOW_PRIVATE;
    process.env.WCS_CALLBACK_ALLOW_PRIVATE = '1';
    await h.start();
    await h.createMerchants(async () => {
      for (const chainCode of ['XRP', 'XLM']) expectOk(await m.custodyLive.client.post(ADDRESS_CREATE, { chainCode, externalUserId: 'u1' }));
      const a = expectOk(await m.custodyTest.client.post(ADDRESS_CREATE, { chainCode: 'EOS', externalUserId: 'u1' })) as { address: string };
      expect(a.address, 'the configured EOS deposit account').to.equal(EOS.SENDER);
    });
    // the custody application's shared accounts become the recorded senders (see the header)
    for (const [chainId, address] of [[XRP_CHAIN, XRP_PAGED.ACCOUNT], [XLM_CHAIN, STELLAR.GBVFTZ]] as const) {
      const rows = await q<{ id: number }>('UPDATE deposit_accounts SET address = $3 WHERE application_id = $1 AND chain_id = $2 RETURNING id', [m.custodyLive.app.id, chainId, address]);
      expect(rows).to.have.length(1);
      await q('UPDATE addresses SET address = $2, updated_at = now() WHERE deposit_account_id = $1', [rows[0]!.id, address]);
    }
    await signedByService(m.custodyLive, XRP_CHAIN, XRP_TOKEN, 'xrp', XRP_PAGED.ACCOUNT, XRP_PAGED.OUT_2_TO, XRP_PAGED.OUT_2);
    await signedByService(m.custodyLive, XLM_CHAIN, XLM_TOKEN, 'xlm', STELLAR.GBVFTZ, STELLAR.GAYOLL, TX.xlmCreate);
    await signedByService(m.custodyTest, EOS_CHAIN, EOS_TOKEN, 'eos', EOS.SENDER, EOS.RECEIVER, actions.user.trx_id);
    for (const x of Object.values<Merchant>(m)) {
      for (const [bizType, kind] of [['CHAIN_EVENT', 'chain-event'], ['TRANSFER', 'transfer']]) {
        await wcs(['app', 'set-callback', '--app', String(x.app.id), '--biz-type', bizType!, '--url', h.receiver.url(`${x.path}/${kind}`)], 0);
      }
    }
    const t0 = await dbNow();
    await startScanning();
    await h.stepSince(t0);
  });

  after(async () => {
    if (allowPrivate === undefined) delete process.env.WCS_CALLBACK_ALLOW_PRIVATE;
    else process.env.WCS_CALLBACK_ALLOW_PRIVATE = allowPrivate;
    await h.stop();
    await xrp?.close();
    await horizon?.close();
    await eos?.close();
  });

  it('monitored addresses are checked with each chain\'s address codec: an invalid one is 1008001004 naming it, nothing stored', async () => {
    const cases: Array<[Merchant, string, string[], string]> = [
      [m.watchLive, 'XRP', [XRP.R3PZ, 'r3pzYrVu7oruSJh1jhACmb6wRDkTWVw1JX'], 'addresses[1]'], // checksum broken
      [m.watchLive, 'XLM', ['GAYOLLLUIZE4DZMBB2ZBKGBUBZLIOYU6XFLW37GBP2VZD3ABNXCW4BVB'], 'addresses[0]'], // checksum broken
      [m.watchTest, 'EOS', ['Not.An.Account'], 'addresses[0]'],
    ];
    for (const [x, chainCode, addresses, field] of cases) {
      expectError(await x.client.post(`${SUB}/create`, { appSubscriptionNo: `bad-${chainCode}`, chainCode, addresses }), 200, 1008001004, field);
    }
    expect(await q('SELECT id FROM chain_subscriptions')).to.deep.equal([]);
  });

  it('subscriptions on accounts the service does not own are read from the chains\' heads: only the recorded transfers that became final after are reported, IN, once each, every field of the spec', async () => {
    const subscribe = async (x: Merchant, body: Record<string, unknown>) => expectOk(await x.client.post(`${SUB}/create`, body)) as { id: number; addresses: string[] };
    const xrpSub = await subscribe(m.watchLive, { appSubscriptionNo: 'xrp', chainCode: 'XRP', addresses: [XRP.R3PZ] });
    const xlmSub = await subscribe(m.watchLive, { appSubscriptionNo: 'xlm', chainCode: 'XLM', addresses: [STELLAR.GAYOLL] });
    const eosSub = await subscribe(m.watchTest, { appSubscriptionNo: 'eos', chainCode: 'EOS', addresses: [EOS.RECEIVER] });
    const heads = await pollUntil(historyCursors, (rows) => [XRP.R3PZ, STELLAR.GAYOLL, EOS.RECEIVER].every((a) => rows.some((r) => r.address === a)), 30_000, 100);
    expect(heads.ok, 'the scanner has read the monitored accounts').to.equal(true);
    const cursor = new Map(heads.result.map((r) => [r.address, r.cursor]));
    // each at its chain's head: the lowered validated ledger, the last position of the latest Horizon ledger, the newest irreversible transfer (the test-made faketoken111 one)
    expect(JSON.parse(cursor.get(XRP.R3PZ)!)).to.deep.equal({ v: 1, ledger: XRP_LOW, index: Number.MAX_SAFE_INTEGER });
    expect(cursor.get(STELLAR.GAYOLL)).to.equal((((BigInt(XLM_CREATE_LEDGER) + 1n) << 32n) - 1n).toString());
    expect(cursor.get(EOS.RECEIVER)).to.equal(String(actions.fake.global_sequence));
    await sleep(500);
    expect(received(m.watchLive, 'chain-event').concat(received(m.watchTest, 'chain-event')), 'nothing before the tips move').to.deep.equal([]);

    // the chains move on
    xrp.setTip(XRP.TIP);
    horizon.setLatest(STELLAR.TIP);
    eos.setInfo('late');
    const got = await pollUntil(async () => [...bodiesOf(m.watchLive, 'chain-event'), ...bodiesOf(m.watchTest, 'chain-event')], (l) => l.length >= 3, 30_000, 100);
    expect(got.ok, `3 chain events: ${JSON.stringify(got.result)}`).to.equal(true);
    await sleep(1000);
    const live = bodiesOf(m.watchLive, 'chain-event');
    const test = bodiesOf(m.watchTest, 'chain-event');
    expect(live).to.have.length(2);
    expect(test).to.have.length(1);
    for (const [x, kind] of [[m.watchLive, 'chain-event'], [m.watchTest, 'chain-event']] as const) {
      for (const r of received(x, kind)) expect(verifyCallback(r, x.app.apiKey, x.app.apiSecret)).to.equal(null);
    }
    for (const e of [...live, ...test]) expect(Object.keys(e).sort()).to.deep.equal(CHAIN_EVENT_FIELDS);
    const xrpEv = live.find((e) => e.txHash === TX.xrpTagged)!;
    expect(xrpEv).to.deep.equal({
      event: 'chain_event', id: xrpEv.id, subscriptionId: xrpSub.id, applicationId: m.watchLive.app.id, chainId: XRP_CHAIN, chainTokenId: XRP_TOKEN, contractAddress: '',
      fromAddress: 'rhNY5uxRGpn6QHJoXbPSTGzkD9yv6b6oDE', toAddress: XRP.R3PZ, amount: '0.2122', txHash: TX.xrpTagged, blockHeight: 42935098, directionMatched: 'IN', addressNature: 'EOA',
    });
    const xlmEv = live.find((e) => e.txHash === TX.xlmPayment)!;
    expect(xlmEv).to.deep.equal({
      event: 'chain_event', id: xlmEv.id, subscriptionId: xlmSub.id, applicationId: m.watchLive.app.id, chainId: XLM_CHAIN, chainTokenId: XLM_TOKEN, contractAddress: '',
      fromAddress: STELLAR.GBVFTZ, toAddress: STELLAR.GAYOLL, amount: '200', txHash: TX.xlmPayment, blockHeight: STELLAR.TIP, directionMatched: 'IN', addressNature: 'EOA',
    });
    expect(test[0]).to.deep.equal({
      event: 'chain_event', id: test[0]!.id, subscriptionId: eosSub.id, applicationId: m.watchTest.app.id, chainId: EOS_CHAIN, chainTokenId: EOS_TOKEN, contractAddress: '',
      fromAddress: EOS.SENDER, toAddress: EOS.RECEIVER, amount: '3', txHash: actions.late.trx_id, blockHeight: actions.late.block_num, directionMatched: 'IN', addressNature: 'EOA',
    });
    // the EOS counterparty's nature was read from the node (get_account)
    expect(eos.accountQueries()).to.include(EOS.SENDER);
    // never reported: what was final before the subscription's head, and the failed payment after it
    const hashes = (await q<{ tx_hash: string }>('SELECT tx_hash FROM chain_events')).map((r) => r.tx_hash);
    for (const before of [TX.xrpTagZero, TX.xrpUnfunded, TX.xlmCreate, EOS.REAL_TRX, actions.user.trx_id]) expect(hashes, before as string).to.not.include(before);
    expect((await q<{ status: string; min_confirmations: number }>('SELECT status, min_confirmations FROM chain_events')).every((r) => r.status === 'CONFIRMED' && r.min_confirmations === 1)).to.equal(true);
  });

  it('TRANSFER: the shared deposit accounts\' recorded outgoing transfers the service did not sign give one transfer callback, one UNEXPECTED_OUTFLOW alert and one record each; the ones it signed (its attempt\'s hash) nothing', async () => {
    const want = (x: Merchant, n: number) => pollUntil(async () => bodiesOf(x, 'transfer'), (l) => l.length >= n, 30_000, 100);
    expect((await want(m.custodyLive, 2)).ok, 'two XRP/XLM outflows').to.equal(true);
    expect((await want(m.custodyTest, 2)).ok, 'two EOS outflows').to.equal(true);
    await sleep(1000);
    const live = bodiesOf(m.custodyLive, 'transfer');
    const test = bodiesOf(m.custodyTest, 'transfer');
    for (const [x, n] of [[m.custodyLive, 2], [m.custodyTest, 2]] as const) {
      expect(received(x, 'transfer')).to.have.length(n);
      for (const r of received(x, 'transfer')) expect(verifyCallback(r, x.app.apiKey, x.app.apiSecret)).to.equal(null);
    }
    const common = (x: Merchant, chainId: number, chainTokenId: number) => ({ event: 'transfer', applicationId: x.app.id, chainId, chainTokenId, contractAddress: '', addressKind: 'DEPOSIT', externalUserId: null });
    const xrpOut = live.find((e) => e.txHash === XRP_PAGED.OUT_1)!;
    expect(xrpOut).to.deep.equal({
      ...common(m.custodyLive, XRP_CHAIN, XRP_TOKEN), id: xrpOut.id, fromAddress: XRP_PAGED.ACCOUNT, toAddress: XRP_PAGED.OUT_1_TO, amount: '550',
      txHash: XRP_PAGED.OUT_1, blockHeight: XRP_PAGED.OUT_1_LEDGER,
    });
    const xlmOut = live.find((e) => e.txHash === TX.xlmPayment)!;
    expect(xlmOut).to.deep.equal({
      ...common(m.custodyLive, XLM_CHAIN, XLM_TOKEN), id: xlmOut.id, fromAddress: STELLAR.GBVFTZ, toAddress: STELLAR.GAYOLL, amount: '200', txHash: TX.xlmPayment, blockHeight: STELLAR.TIP,
    });
    const eosReal = test.find((e) => e.txHash === EOS.REAL_TRX)!;
    expect(eosReal).to.deep.equal({
      ...common(m.custodyTest, EOS_CHAIN, EOS_TOKEN), id: eosReal.id, fromAddress: EOS.SENDER, toAddress: EOS.RECEIVER, amount: '0.01', txHash: EOS.REAL_TRX, blockHeight: EOS.REAL_BLOCK,
    });
    const eosLate = test.find((e) => e.txHash === actions.late.trx_id)!;
    expect(eosLate).to.include({ amount: '3', blockHeight: actions.late.block_num, fromAddress: EOS.SENDER, toAddress: EOS.RECEIVER });
    // the service's own (its attempts' hashes): no outflow; faketoken111's transfer is no catalogue token
    const outflows = await q<{ tx_hash: string; from_address: string; address_kind: string }>('SELECT tx_hash, from_address, address_kind FROM custody_outflows ORDER BY id');
    expect(outflows.map((o) => o.tx_hash).sort()).to.deep.equal([XRP_PAGED.OUT_1, TX.xlmPayment, EOS.REAL_TRX, actions.late.trx_id].sort());
    const alerts = await q<{ details: { outflowId: number; fromAddress: string; txHash: string; addressKind: string } }>(`SELECT details FROM operator_alerts WHERE kind = 'UNEXPECTED_OUTFLOW' ORDER BY id`);
    expect(alerts.map((a) => a.details.txHash).sort()).to.deep.equal(outflows.map((o) => o.tx_hash).sort());
    expect(alerts.every((a) => a.details.addressKind === 'DEPOSIT')).to.equal(true);
    expect(expectOk(await m.custodyLive.client.get(`${OUTFLOWS}/get?id=${xrpOut.id}`))).to.include({ addressKind: 'DEPOSIT', txHash: XRP_PAGED.OUT_1, amount: '550', chainCode: 'XRP', tokenSymbol: 'XRP' });
    // another application's outflow is "not found"
    const foreign = await m.custodyTest.client.get(`${OUTFLOWS}/get?id=${xrpOut.id}`);
    expect((foreign.json as { code: number }).code).to.equal(1008002002);
    // the watchers hold no custody address: no TRANSFER for them
    expect(received(m.watchLive, 'transfer').concat(received(m.watchTest, 'transfer'))).to.deep.equal([]);
  });
});
