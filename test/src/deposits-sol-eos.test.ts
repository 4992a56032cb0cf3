/**
 * Solana and EOS deposit detection through the running service (`wcs start`: scanner worker,
 * unattributed deposits, `wcs deposits` operator commands, signed RECHARGE callbacks) on recorded
 * real RPC responses: no Solana node, Antelope node or Hyperion is reachable from the test
 * environment, so local replay servers (support/recorded-nodes.ts, solanaReplay and eosReplay)
 * answer the scanners with the adapters' own fixtures (adapters/solana and adapters/eos
 * src/fixtures, provenance in their SOURCE.md).
 *
 * Chains: the Solana recordings are mainnet-beta, so the SOL application is `live` (chain 5,
 * native token 500, USDC EPjFWdd5… token 502 of the built-in catalogue, 32 confirmations); the EOS
 * recordings are Jungle 4 testnet, so the EOS application is `test` (chain 108 "EOS Jungle Testnet",
 * native token 10800, 1 confirmation). WCS_RPC_LIVE_SOL and WCS_RPC_TEST_EOS point at the replays.
 *
 * Why database rows are rewritten, and what is configured instead: the fixtures are transfers to
 * real accounts this service does not own. After the applications and their users' addresses are
 * created through the API (by an API-only instance, no scanner running), the test points them at
 * the recorded data directly in Postgres:
 * - SOL (one HD address per user, no shared deposit account): `addresses.address` of user
 *   "sol-user" becomes 2b7iQq3… (receiver of the recorded 0.001 SOL transfer 5QMfuq…),
 *   "usdc-user" becomes 3i476kT… (owner of the token account that received 0.001 USDC in
 *   2S2rTZ…), "failed-user" becomes 7NcXXsn… (receiver of the inner 199 SOL transfer of the failed
 *   5D3ksh…), and "sender-user" becomes 8fusVwh… (the sender of the USDC: an outgoing transfer).
 * - EOS: `deposit_accounts.address` is NOT rewritten. The EOS deposit account is configuration (an
 *   account the operator creates on chain and names in chains[].options.depositAccount): the
 *   WCS_CONFIG file given to every process of this test redefines chain 108 with depositAccount
 *   "crosschaino3", the recorded receiver, so the API itself hands out crosschaino3. Memos are
 *   issued from a counter, so user "eos-user" gets `addresses.memo` "42", the memo of the
 *   test-made transfers that name a user; user "eos-claimant" keeps the memo it was issued.
 * Only then is the scanning service (`wcs start`) started, so its watch list reads the rewritten
 * rows from its first step. Served answers that are not verbatim recordings are described, with
 * why, in support/recorded-nodes.ts: Solana's getSlot (the only recorded one is the docs' example,
 * 1234; the replay answers a tip starting at the newest recorded slot, which this test raises),
 * the getSignaturesForAddress lists, the empty getTokenAccountsByOwner answers and the envelope
 * of the failed transaction's bare recorded result (all as the adapter's scanner test makes them);
 * the Hyperion get_actions envelope, and the EOS transfers with memos, inline, from another
 * contract and above the last irreversible block (copies of the recorded action document with
 * only the named fields changed, as the adapter test's variant() makes them).
 *
 * Live callback URLs must be https and must not point at private targets: the merchant receiver is
 * an HTTPS server on loopback with a self-signed certificate (support/https-callback-receiver.ts,
 * used by both applications), the service process trusts it via NODE_EXTRA_CA_CERTS, and
 * WCS_CALLBACK_ALLOW_PRIVATE=1 allows the loopback target. WCS_CALLBACK_PER_ENDPOINT=1 makes
 * deliveries sequential, so that arrival order can be asserted besides the outbox order.
 * Database, receiver, merchants, the config file, the `wcs start` process, the CLI and the reads
 * and waits the assertions use are support/deposit-harness.ts, shared with deposits-memo.test.ts.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { DepositHarness } from './support/deposit-harness';
import { expectOk, sleep } from './support/expect';
import { cliJson } from './support/processes';
import { EOS, eosActions, eosReplay, SOLANA, solanaReplay, type EosReplay, type SolanaReplay } from './support/recorded-nodes';
import { ADDRESS_CREATE, RECHARGE_FIELDS, RECHARGE_GET, type Recharge } from './support/recharge-types';

const SOL_CHAIN = 5;
const EOS_CHAIN = 108;
const SOL_TOKEN = 500;
const USDC_TOKEN = 502;
const EOS_TOKEN = 10800;
const SOL_MIN_CONF = 32;
const MAX_GS = '9223372036854775807';
/** The EOS action documents served: the recorded one and its test-made variants (support/recorded-nodes.ts). */
const ACT = eosActions();

describe('Solana and EOS deposits on recorded data (SOL finalized history with SPL USDC, EOS Hyperion actions with memos): scanner, unattributed deposits, wcs deposits assign, callbacks', function () {
  this.timeout(120_000);
  let sol: SolanaReplay;
  let eos: EosReplay;
  const h = new DepositHarness({
    chainIds: [SOL_CHAIN, EOS_CHAIN],
    rpcEnv: () => ({ WCS_RPC_LIVE_SOL: sol.url, WCS_RPC_TEST_EOS: eos.url }),
    merchants: {
      sol: { name: 'sol-main', environment: 'live', chains: ['SOL'] },
      eos: { name: 'eos-main', environment: 'test', chains: ['EOS'] },
    },
    // chain 108 as in the built-in catalogue, plus the deposit account (see the header)
    config: {
      chains: [{ id: EOS_CHAIN, code: 'EOS', name: 'EOS Jungle Testnet', family: 'eos', environment: 'test', network: 'jungle4', nativeSymbol: 'EOS', decimals: 4, confirmations: 1, evmChainId: null, options: { depositAccount: EOS.RECEIVER } }],
    },
  });
  const { m, q, dbNow, list, byTx, waitStatus, bodies, expectCallbacks, historyCursors, wcs, unattributed, snapshot, startScanning, stopService } = h;
  /** The recorded Solana accounts the users' HD addresses are pointed at (see the header). */
  const SOL_USERS: Array<[string, string]> = [
    ['sol-user', SOLANA.SOL_RECEIVER], ['usdc-user', SOLANA.USDC_OWNER], ['failed-user', SOLANA.FAILED_RECEIVER], ['sender-user', SOLANA.USDC_SENDER],
  ];
  const issuedMemo: Record<string, string> = {};

  /**
   * Waits until a whole scan step has run since `since` on both chains, without an error, and has
   * read the replays' current tips (a step that began before a tip change may still end after `since`).
   */
  const stepSince = async (since: Date) => {
    const tips = [sol.tip(), eos.lib()];
    await h.stepSince(since, (c, i) => c.height === String(tips[i]), ` at heights ${tips.join(', ')}`);
  };
  /** Nothing of this transaction was recorded, kept or sent. */
  const nothingOf = async (txHash: string) => {
    expect(await q('SELECT id FROM recharges WHERE tx_hash = $1', [txHash]), `recharges of ${txHash}`).to.deep.equal([]);
    expect(await q('SELECT id FROM unattributed_deposits WHERE tx_hash = $1', [txHash]), `unattributed deposits of ${txHash}`).to.deep.equal([]);
    const tasks = await q<{ body: Buffer }>('SELECT body FROM callback_tasks');
    expect(tasks.filter((t) => Buffer.from(t.body).toString('utf8').includes(txHash)), `callback tasks of ${txHash}`).to.deep.equal([]);
    expect(bodies().filter(({ e }) => e.txHash === txHash), `callbacks of ${txHash}`).to.deep.equal([]);
  };
  const solCalls = (from = 0) => sol.calls().slice(from);

  before(async () => {
    sol = await solanaReplay();
    eos = await eosReplay();
    await h.start();

    // 1. applications and addresses through the API, on an instance that scans nothing
    await h.createMerchants(async () => {
      for (const [user, recorded] of SOL_USERS) {
        const a = expectOk(await m.sol.client.post(ADDRESS_CREATE, { chainCode: 'SOL', externalUserId: user })) as { address: string; memo: string | null };
        expect(a.memo, `SOL memo of ${user}`).to.equal(null);
        expect(a.address, `SOL address of ${user}: derived by the service, not the recorded account`).to.match(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/).and.not.equal(recorded);
      }
      for (const user of ['eos-user', 'eos-claimant']) {
        const a = expectOk(await m.eos.client.post(ADDRESS_CREATE, { chainCode: 'EOS', externalUserId: user })) as { address: string; memo: string };
        expect(a.address, `EOS deposit account of ${user}: the configured depositAccount`).to.equal(EOS.RECEIVER);
        expect(a.memo, `EOS memo of ${user}`).to.match(/^[1-9][0-9]*$/).and.not.be.oneOf([EOS.USER_MEMO, EOS.UNKNOWN_MEMO]);
        issuedMemo[user] = a.memo;
      }
    });

    // 2. point them at the recorded accounts and memos (see the header)
    for (const [user, recorded] of SOL_USERS) {
      const rows = await q('UPDATE addresses SET address = $3, updated_at = now() WHERE application_id = $1 AND chain_id = $2 AND external_user_id = $4 RETURNING id', [m.sol.app.id, SOL_CHAIN, recorded, user]);
      expect(rows, `SOL address of ${user}`).to.have.length(1);
    }
    const memoRows = await q('UPDATE addresses SET memo = $3, updated_at = now() WHERE application_id = $1 AND chain_id = $2 AND external_user_id = $4 RETURNING id', [m.eos.app.id, EOS_CHAIN, EOS.USER_MEMO, 'eos-user']);
    expect(memoRows, 'EOS address of eos-user').to.have.length(1);
    expect(await q('SELECT address FROM deposit_accounts WHERE application_id = $1 AND chain_id = $2', [m.eos.app.id, EOS_CHAIN])).to.deep.equal([{ address: EOS.RECEIVER }]);

    // 3. the scanning instance, reading the rewritten rows from its first step
    const t0 = await dbNow();
    await startScanning();
    await stepSince(t0);
  });

  after(async () => {
    await h.stop();
    await sol?.close();
    await eos?.close();
  });

  it('support/chains reports deposit detection ENABLED for live SOL and test EOS with an RPC endpoint', async () => {
    const solChains = expectOk(await m.sol.client.get('/api/v1/wallet/support/chains')) as Array<{ chainCode: string; depositDetection: string }>;
    expect(solChains.map((c) => [c.chainCode, c.depositDetection])).to.deep.equal([['SOL', 'ENABLED']]);
    const eosChains = expectOk(await m.eos.client.get('/api/v1/wallet/support/chains')) as Array<{ chainCode: string; depositDetection: string }>;
    expect(eosChains.map((c) => [c.chainCode, c.depositDetection])).to.deep.equal([['EOS', 'ENABLED']]);
  });

  it('the scanner watched the users\' Solana addresses (and the USDC owner\'s token account) and the shared EOS account, each read from the beginning of its history', async () => {
    // the applications' hot wallets are read too, from the head, for their outflows (docs/chain-events.md, "Account-history chains")
    const hot = (await q<{ address: string }>('SELECT address FROM hot_wallets')).map((r) => r.address);
    const cursors = (await historyCursors()).filter((c) => !hot.includes(c.address));
    // SOL: the last slot read per address; EOS: the global sequence of the last action read (the
    // faketoken111 transfer: the one above the last irreversible block was not asked for)
    expect(cursors.map((c) => [c.chain_id, c.address, c.cursor])).to.have.deep.members([
      [SOL_CHAIN, SOLANA.SOL_RECEIVER, String(SOLANA.SOL_SLOT)],
      [SOL_CHAIN, SOLANA.USDC_OWNER, String(SOLANA.SPL_SLOT)],
      [SOL_CHAIN, SOLANA.FAILED_RECEIVER, String(SOLANA.FAILED_SLOT)],
      [SOL_CHAIN, SOLANA.USDC_SENDER, String(SOLANA.SPL_SLOT)],
      [EOS_CHAIN, EOS.RECEIVER, String(ACT.fake.global_sequence)],
    ]);
    const listed = solCalls().filter((c) => c.method === 'getSignaturesForAddress');
    expect(listed.map((c) => c.params[0])).to.include.members([SOLANA.SOL_RECEIVER, SOLANA.USDC_OWNER, SOLANA.USDC_ATA, SOLANA.FAILED_RECEIVER, SOLANA.USDC_SENDER]);
    for (const c of listed) expect(c.params[1], JSON.stringify(c)).to.deep.include({ commitment: 'finalized' }).and.not.have.property('before');
    const first = eos.actionQueries()[0]!;
    expect(Object.fromEntries(first)).to.deep.equal({ account: EOS.RECEIVER, filter: '*:transfer', sort: 'asc', global_sequence: `0-${MAX_GS}`, block_num: `0-${EOS.LIB_EARLY}`, limit: '100' });
  });

  it('SOL: the SPL USDC deposit (net token balance rise of the owner\'s accounts) is credited to its user with the exact amount, mint and sender, SETTLED at once (540487 confirmations), three signed callbacks in order', async () => {
    const r = await waitStatus(m.sol, SOLANA.SPL_SIG, 'SETTLED');
    const depth = SOLANA.SOL_SLOT - SOLANA.SPL_SLOT + 1;
    expect(depth).to.equal(540487);
    expect(r).to.include({
      applicationId: m.sol.app.id, chainId: SOL_CHAIN, chainCode: 'SOL', chainTokenId: USDC_TOKEN, tokenSymbol: 'USDC', contractAddress: SOLANA.USDC,
      externalUserId: 'usdc-user', address: SOLANA.USDC_OWNER, memo: null, fromAddress: SOLANA.USDC_SENDER, amount: '0.001', txHash: SOLANA.SPL_SIG,
      position: 1_000_002, blockHeight: SOLANA.SPL_SLOT, blockHash: String(SOLANA.SPL_SLOT), confirmations: depth, minConfirmations: SOL_MIN_CONF, failReason: null,
    });
    const evs = await expectCallbacks(m.sol, r.id, ['PENDING', 'CONFIRMED', 'SETTLED']);
    const common = { event: 'recharge', id: r.id, applicationId: m.sol.app.id, chainId: SOL_CHAIN, chainTokenId: USDC_TOKEN, address: SOLANA.USDC_OWNER, amount: '0.001', txHash: SOLANA.SPL_SIG, blockHeight: SOLANA.SPL_SLOT };
    expect(evs[0]).to.deep.equal({ ...common, txStatus: 'PENDING', confirmations: depth, minConfirmations: SOL_MIN_CONF });
    expect(evs[1]).to.deep.equal({ ...common, txStatus: 'CONFIRMED', confirmations: depth, minConfirmations: SOL_MIN_CONF });
    expect(evs[2]).to.deep.equal({ ...common, txStatus: 'SETTLED', confirmations: -1, minConfirmations: -1 });
    const detail = expectOk(await m.sol.client.get(`${RECHARGE_GET}?id=${r.id}`)) as Recharge;
    expect(Object.keys(detail).sort()).to.deep.equal(RECHARGE_FIELDS);
    expect(detail).to.deep.equal(r);
    expect(detail.confirmedTime).to.be.a('string');
    expect(detail.settledTime).to.be.a('string');
    expect(detail.failedTime).to.equal(null);
    // read once for its owner (listed through both the owner and its token account) and once for its sender
    const reads = solCalls().filter((c) => c.method === 'getTransaction' && c.params[0] === SOLANA.SPL_SIG);
    expect(reads.length, 'getTransaction of 2S2rTZ (owner and sender)').to.equal(2);
    for (const c of reads) expect(c.params[1]).to.deep.equal({ encoding: 'jsonParsed', maxSupportedTransactionVersion: 0, commitment: 'finalized' });
  });

  it('SOL: the native transfer is PENDING with 1 of 32 confirmations at the newest finalized slot, still PENDING at 31, then CONFIRMED and SETTLED at 32, one callback per state', async () => {
    const r = await waitStatus(m.sol, SOLANA.SOL_SIG, 'PENDING');
    expect(r).to.include({
      applicationId: m.sol.app.id, chainId: SOL_CHAIN, chainCode: 'SOL', chainTokenId: SOL_TOKEN, tokenSymbol: 'SOL', contractAddress: null,
      externalUserId: 'sol-user', address: SOLANA.SOL_RECEIVER, memo: null, fromAddress: SOLANA.SOL_SENDER, amount: '0.001', txHash: SOLANA.SOL_SIG,
      position: 0, blockHeight: SOLANA.SOL_SLOT, blockHash: String(SOLANA.SOL_SLOT), confirmations: 1, minConfirmations: SOL_MIN_CONF, failReason: null,
      confirmedTime: null, settledTime: null,
    });
    const common = { event: 'recharge', id: r.id, applicationId: m.sol.app.id, chainId: SOL_CHAIN, chainTokenId: SOL_TOKEN, address: SOLANA.SOL_RECEIVER, amount: '0.001', txHash: SOLANA.SOL_SIG, blockHeight: SOLANA.SOL_SLOT };
    const pending = await expectCallbacks(m.sol, r.id, ['PENDING']);
    expect(pending[0]).to.deep.equal({ ...common, txStatus: 'PENDING', confirmations: 1, minConfirmations: SOL_MIN_CONF });

    // 31 confirmations: one short
    sol.setTip(SOLANA.SOL_SLOT + SOL_MIN_CONF - 2);
    await stepSince(await dbNow());
    const short = (await byTx(m.sol, SOLANA.SOL_SIG))[0]!;
    expect(short).to.include({ id: r.id, txStatus: 'PENDING', confirmations: SOL_MIN_CONF - 1 });
    await expectCallbacks(m.sol, r.id, ['PENDING']);

    // 32: confirmed, and settled at once (ON_CONFIRM)
    sol.setTip(SOLANA.SOL_SLOT + SOL_MIN_CONF - 1);
    const done = await waitStatus(m.sol, SOLANA.SOL_SIG, 'SETTLED');
    expect(done).to.include({ id: r.id, confirmations: SOL_MIN_CONF, minConfirmations: SOL_MIN_CONF, amount: '0.001' });
    const evs = await expectCallbacks(m.sol, r.id, ['PENDING', 'CONFIRMED', 'SETTLED']);
    expect(evs[1]).to.deep.equal({ ...common, txStatus: 'CONFIRMED', confirmations: SOL_MIN_CONF, minConfirmations: SOL_MIN_CONF });
    expect(evs[2]).to.deep.equal({ ...common, txStatus: 'SETTLED', confirmations: -1, minConfirmations: -1 });
    const detail = expectOk(await m.sol.client.get(`${RECHARGE_GET}?id=${r.id}`)) as Recharge;
    expect(detail).to.include({ txStatus: 'SETTLED', amount: '0.001', tokenSymbol: 'SOL', chainCode: 'SOL' });
    await stepSince(await dbNow());
  });

  it('SOL: the failed transaction is never credited: its inner 199 SOL transfer to a watched address is one FAILED record (confirmations 0) with only a FAILED callback, and stays so as the slots advance; the USDC sender\'s outgoing transfer is nothing', async () => {
    const r = await waitStatus(m.sol, SOLANA.FAILED_SIG, 'FAILED');
    expect(r).to.include({
      applicationId: m.sol.app.id, chainId: SOL_CHAIN, chainCode: 'SOL', chainTokenId: SOL_TOKEN, tokenSymbol: 'SOL', externalUserId: 'failed-user',
      address: SOLANA.FAILED_RECEIVER, fromAddress: SOLANA.FAILED_SENDER, amount: '199', position: 1001, blockHeight: SOLANA.FAILED_SLOT,
      blockHash: String(SOLANA.FAILED_SLOT), confirmations: 0, minConfirmations: SOL_MIN_CONF, failReason: 'the transaction failed on chain',
      confirmedTime: null, settledTime: null,
    });
    expect(r.failedTime).to.be.a('string');
    const evs = await expectCallbacks(m.sol, r.id, ['FAILED']);
    expect(evs[0]).to.deep.equal({
      event: 'recharge', id: r.id, applicationId: m.sol.app.id, chainId: SOL_CHAIN, chainTokenId: SOL_TOKEN, address: SOLANA.FAILED_RECEIVER, amount: '199',
      txHash: SOLANA.FAILED_SIG, blockHeight: SOLANA.FAILED_SLOT, txStatus: 'FAILED', confirmations: 0, minConfirmations: SOL_MIN_CONF,
    });
    const notices = await q<{ tx_status: string }>('SELECT tx_status FROM recharge_notices WHERE recharge_id = $1', [r.id]);
    expect(notices.map((n) => n.tx_status)).to.deep.equal(['FAILED']);
    // the tip moved 31 slots since it was recorded (previous test): nothing changed
    expect((await byTx(m.sol, SOLANA.FAILED_SIG)).map((x) => [x.id, x.txStatus, x.confirmations])).to.deep.equal([[r.id, 'FAILED', 0]]);
    // sender-user (8fusVwh…) sent the USDC: its history holds the transaction, but no deposit
    expect((await list(m.sol)).filter((x) => x.externalUserId === 'sender-user')).to.deep.equal([]);
    expect((await list(m.sol)).map((x) => [x.txHash, x.externalUserId, x.txStatus])).to.have.deep.members([
      [SOLANA.SPL_SIG, 'usdc-user', 'SETTLED'], [SOLANA.SOL_SIG, 'sol-user', 'SETTLED'], [SOLANA.FAILED_SIG, 'failed-user', 'FAILED'],
    ]);
    // an HD chain keeps no unattributed deposits
    expect((await unattributed(true)).filter((u) => u.chainId === SOL_CHAIN)).to.deep.equal([]);
  });

  it('EOS: the transfer to the shared deposit account with a user\'s memo is credited to that user (exact amount, memo, action ordinal, block id), SETTLED at once; the same symbol from another contract (faketoken111) with the same memo is not credited', async () => {
    const r = await waitStatus(m.eos, ACT.user.trx_id, 'SETTLED');
    const depth = EOS.LIB_EARLY - ACT.user.block_num + 1;
    expect(r).to.include({
      applicationId: m.eos.app.id, chainId: EOS_CHAIN, chainCode: 'EOS', chainTokenId: EOS_TOKEN, tokenSymbol: 'EOS', contractAddress: null,
      externalUserId: 'eos-user', address: EOS.RECEIVER, memo: EOS.USER_MEMO, fromAddress: EOS.SENDER, amount: '1.2345', txHash: ACT.user.trx_id,
      position: 1, blockHeight: 209370500, blockHash: createHash('sha256').update('block:209370500').digest('hex'), confirmations: depth, minConfirmations: 1, failReason: null,
    });
    const evs = await expectCallbacks(m.eos, r.id, ['PENDING', 'CONFIRMED', 'SETTLED']);
    const common = { event: 'recharge', id: r.id, applicationId: m.eos.app.id, chainId: EOS_CHAIN, chainTokenId: EOS_TOKEN, address: EOS.RECEIVER, amount: '1.2345', txHash: ACT.user.trx_id, blockHeight: 209370500 };
    expect(evs[0]).to.deep.equal({ ...common, txStatus: 'PENDING', confirmations: depth, minConfirmations: 1 });
    expect(evs[1]).to.deep.equal({ ...common, txStatus: 'CONFIRMED', confirmations: depth, minConfirmations: 1 });
    expect(evs[2]).to.deep.equal({ ...common, txStatus: 'SETTLED', confirmations: -1, minConfirmations: -1 });
    const detail = expectOk(await m.eos.client.get(`${RECHARGE_GET}?id=${r.id}`)) as Recharge;
    expect(Object.keys(detail).sort()).to.deep.equal(RECHARGE_FIELDS);
    expect(detail).to.deep.equal(r);
    // the only record of the merchant so far: the other transfers name nobody, or another contract
    expect((await list(m.eos)).map((x) => x.txHash)).to.deep.equal([ACT.user.trx_id]);
    // faketoken111 "5.0000 EOS" to the same account with the same memo: no record, nothing kept, nothing sent
    expect(ACT.fake.act.data.memo).to.equal(EOS.USER_MEMO);
    await nothingOf(ACT.fake.trx_id);
  });

  it('EOS: the recorded transfer without memo and the inline transfer with an unknown memo are unattributed (MEMO_MISSING / MEMO_UNKNOWN); `wcs deposits assign` credits one to a user on that account (record, PENDING..SETTLED callbacks), once; users without an address on it are refused', async () => {
    expect(await byTx(m.eos, EOS.REAL_TRX)).to.deep.equal([]);
    expect(await q('SELECT id FROM recharges WHERE tx_hash = $1', [EOS.REAL_TRX])).to.deep.equal([]);
    const rows = (await unattributed()).filter((u) => u.chainId === EOS_CHAIN);
    expect(rows.map((u) => [u.txHash, u.position]).sort()).to.deep.equal([[EOS.REAL_TRX, 1], [ACT.inline.trx_id, 2]].sort());
    const { createTime: _c0, id: missingId, ...missing } = rows.find((u) => u.txHash === EOS.REAL_TRX)!;
    expect(missing).to.deep.equal({
      chainId: EOS_CHAIN, chainCode: 'EOS', environment: 'test', tokenSymbol: 'EOS', address: EOS.RECEIVER, memo: null, amount: '0.01',
      txHash: EOS.REAL_TRX, position: 1, blockHeight: EOS.REAL_BLOCK, reason: 'MEMO_MISSING', rechargeId: null,
    });
    const { createTime: _c1, id: unknownId, ...unknown } = rows.find((u) => u.txHash === ACT.inline.trx_id)!;
    expect(unknown).to.deep.equal({
      chainId: EOS_CHAIN, chainCode: 'EOS', environment: 'test', tokenSymbol: 'EOS', address: EOS.RECEIVER, memo: EOS.UNKNOWN_MEMO, amount: '0.5',
      txHash: ACT.inline.trx_id, position: 2, blockHeight: ACT.inline.block_num, reason: 'MEMO_UNKNOWN', rechargeId: null,
    });
    // the unknown-memo transfer is the second action of the credited user's transaction: same hash, its own position
    expect(ACT.inline.trx_id).to.equal(ACT.user.trx_id);
    expect(await q<{ position: number }>('SELECT position FROM recharges WHERE tx_hash = $1', [ACT.user.trx_id])).to.deep.equal([{ position: 1 }]);
    // no callback for either
    expect(bodies().filter(({ e }) => e.txHash === EOS.REAL_TRX)).to.deep.equal([]);
    expect(bodies().filter(({ e }) => e.txHash === ACT.inline.trx_id).map(({ e }) => e.amount)).to.deep.equal(['1.2345', '1.2345', '1.2345']);
    const human = await wcs(['deposits', 'unattributed'], 0);
    expect(human.stdout).to.include(`test:EOS 0.01 EOS to ${EOS.RECEIVER} memo (none) MEMO_MISSING tx ${EOS.REAL_TRX}#1`)
      .and.include(`test:EOS 0.5 EOS to ${EOS.RECEIVER} memo ${EOS.UNKNOWN_MEMO} MEMO_UNKNOWN tx ${ACT.inline.trx_id}#2`);

    // refused: a user of another application (no address on crosschaino3), and an unknown user
    const wrong = await wcs(['deposits', 'assign', String(missingId), '--app', String(m.sol.app.id), '--user', 'sol-user'], 1);
    expect(wrong.stderr).to.include(`application ${m.sol.app.id} has no user sol-user with an address on ${EOS.RECEIVER}`);
    const nobody = await wcs(['deposits', 'assign', String(missingId), '--app', String(m.eos.app.id), '--user', 'no-such-user'], 1);
    expect(nobody.stderr).to.include(`has no user no-such-user with an address on ${EOS.RECEIVER}`);
    expect(await q('SELECT id FROM recharges WHERE tx_hash = $1', [EOS.REAL_TRX])).to.deep.equal([]);

    const args = ['deposits', 'assign', String(missingId), '--app', String(m.eos.app.id), '--user', 'eos-claimant', '--json'];
    const assigned = cliJson(args, await wcs(args, 0)) as Recharge;
    const depth = EOS.LIB_EARLY - EOS.REAL_BLOCK + 1;
    expect(assigned).to.include({
      applicationId: m.eos.app.id, chainId: EOS_CHAIN, chainCode: 'EOS', chainTokenId: EOS_TOKEN, tokenSymbol: 'EOS', contractAddress: null,
      externalUserId: 'eos-claimant', address: EOS.RECEIVER, memo: null, fromAddress: EOS.SENDER, amount: '0.01', txHash: EOS.REAL_TRX, position: 1,
      blockHeight: EOS.REAL_BLOCK, blockHash: EOS.REAL_BLOCK_ID, txStatus: 'SETTLED', confirmations: depth, minConfirmations: 1,
    });
    const evs = await expectCallbacks(m.eos, assigned.id, ['PENDING', 'CONFIRMED', 'SETTLED']);
    const common = { event: 'recharge', id: assigned.id, applicationId: m.eos.app.id, chainId: EOS_CHAIN, chainTokenId: EOS_TOKEN, address: EOS.RECEIVER, amount: '0.01', txHash: EOS.REAL_TRX, blockHeight: EOS.REAL_BLOCK };
    expect(evs[0]).to.deep.equal({ ...common, txStatus: 'PENDING', confirmations: depth, minConfirmations: 1 });
    expect(evs[1]).to.deep.equal({ ...common, txStatus: 'CONFIRMED', confirmations: depth, minConfirmations: 1 });
    expect(evs[2]).to.deep.equal({ ...common, txStatus: 'SETTLED', confirmations: -1, minConfirmations: -1 });
    const detail = expectOk(await m.eos.client.get(`${RECHARGE_GET}?id=${assigned.id}`)) as Recharge;
    expect(detail).to.include({ id: assigned.id, externalUserId: 'eos-claimant', txStatus: 'SETTLED', amount: '0.01', memo: null });
    expect((await byTx(m.eos, EOS.REAL_TRX)).map((x) => [x.id, x.externalUserId, x.txStatus])).to.deep.equal([[assigned.id, 'eos-claimant', 'SETTLED']]);

    // assigned once: gone from the open list, shown with its recharge under --all; the unknown-memo one stays open
    expect((await unattributed()).filter((u) => u.chainId === EOS_CHAIN).map((u) => u.id)).to.deep.equal([unknownId]);
    expect((await unattributed(true)).find((u) => u.id === missingId)).to.include({ rechargeId: assigned.id, reason: 'MEMO_MISSING' });
    const again = await wcs(['deposits', 'assign', String(missingId), '--app', String(m.eos.app.id), '--user', 'eos-user'], 1);
    expect(again.stderr).to.include(`unattributed deposit ${missingId} was already assigned (recharge ${assigned.id})`);
    expect(await q('SELECT id FROM recharges WHERE tx_hash = $1', [EOS.REAL_TRX])).to.have.length(1);
    expect(issuedMemo['eos-claimant']).to.not.equal(EOS.USER_MEMO);
  });

  it('EOS: a transfer above the last irreversible block is not read; once get_info reports a later one it is credited to the memo\'s user from the stored cursor', async () => {
    await nothingOf(ACT.late.trx_id);
    expect(eos.actionQueries().every((x) => x.get('block_num') === `0-${EOS.LIB_EARLY}`)).to.equal(true);
    const from = eos.actionQueries().length;
    eos.setInfo('late');
    const r = await waitStatus(m.eos, ACT.late.trx_id, 'SETTLED');
    const depth = EOS.LIB_LATE - ACT.late.block_num + 1;
    expect(depth).to.equal(1397);
    expect(r).to.include({
      externalUserId: 'eos-user', address: EOS.RECEIVER, memo: EOS.USER_MEMO, fromAddress: EOS.SENDER, amount: '3', position: 1,
      blockHeight: 209671573, blockHash: ACT.late.block_id, confirmations: depth, minConfirmations: 1, chainTokenId: EOS_TOKEN,
    });
    const evs = await expectCallbacks(m.eos, r.id, ['PENDING', 'CONFIRMED', 'SETTLED']);
    expect(evs[0]).to.include({ amount: '3', txHash: ACT.late.trx_id, blockHeight: 209671573, confirmations: depth, minConfirmations: 1 });
    const asked = eos.actionQueries().slice(from).map((x) => Object.fromEntries(x));
    expect(asked.find((x) => x.block_num === `0-${EOS.LIB_LATE}`), JSON.stringify(asked)).to.deep.include({ global_sequence: `${ACT.fake.global_sequence + 1}-${MAX_GS}` });
    await stepSince(await dbNow());
    expect((await historyCursors()).find((c) => c.chain_id === EOS_CHAIN)!.cursor).to.equal(String(ACT.late.global_sequence));
    expect((await list(m.eos)).map((x) => x.txHash).sort()).to.deep.equal([ACT.user.trx_id, EOS.REAL_TRX, ACT.late.trx_id].sort());
  });

  it('a restart resumes from the stored cursors: no Solana transaction read again, Hyperion asked from the next global sequence, nothing recorded or sent twice', async () => {
    const before = await snapshot();
    expect(before.recharges).to.have.length(6);
    await stopService();
    const solFrom = sol.calls().length;
    const eosFrom = eos.actionQueries().length;
    const t0 = await dbNow();
    await startScanning();
    await stepSince(t0);
    const calls = solCalls(solFrom);
    expect(calls.filter((c) => c.method === 'getSignaturesForAddress').map((c) => c.params[0])).to.include.members([SOLANA.SOL_RECEIVER, SOLANA.USDC_OWNER, SOLANA.USDC_ATA, SOLANA.FAILED_RECEIVER, SOLANA.USDC_SENDER]);
    expect(calls.filter((c) => c.method === 'getTransaction'), 'getTransaction after the restart').to.deep.equal([]);
    const asked = eos.actionQueries().slice(eosFrom);
    expect(asked.length).to.be.greaterThan(0);
    expect(asked[0]!.get('global_sequence')).to.equal(`${ACT.late.global_sequence + 1}-${MAX_GS}`);
    await sleep(500); // several dispatcher polls
    expect(await snapshot()).to.deep.equal(before);
  });

  it('a full re-scan (scan_history_cursors reset, restart) reads every recorded transfer again and changes nothing: no duplicate record, no new unattributed deposit, no new callback', async () => {
    const before = await snapshot();
    await stopService();
    await q('DELETE FROM scan_history_cursors');
    const solFrom = sol.calls().length;
    const eosFrom = eos.actionQueries().length;
    const t0 = await dbNow();
    await startScanning();
    await stepSince(t0);
    const read = solCalls(solFrom).filter((c) => c.method === 'getTransaction').map((c) => c.params[0] as string);
    expect([...new Set(read)].sort()).to.deep.equal([SOLANA.SPL_SIG, SOLANA.SOL_SIG, SOLANA.FAILED_SIG].sort());
    expect(eos.actionQueries()[eosFrom]!.get('global_sequence')).to.equal(`0-${MAX_GS}`);
    const hot = (await q<{ address: string }>('SELECT address FROM hot_wallets')).map((r) => r.address);
    expect((await historyCursors()).filter((c) => !hot.includes(c.address)).map((c) => [c.address, c.cursor])).to.have.deep.members([
      [SOLANA.SOL_RECEIVER, String(SOLANA.SOL_SLOT)], [SOLANA.USDC_OWNER, String(SOLANA.SPL_SLOT)], [SOLANA.FAILED_RECEIVER, String(SOLANA.FAILED_SLOT)],
      [SOLANA.USDC_SENDER, String(SOLANA.SPL_SLOT)], [EOS.RECEIVER, String(ACT.late.global_sequence)],
    ]);
    await sleep(500);
    expect(await snapshot()).to.deep.equal(before);
    const dups = await q('SELECT chain_id, tx_hash, position, count(*)::int AS n FROM recharges GROUP BY 1, 2, 3 HAVING count(*) > 1');
    expect(dups).to.deep.equal([]);
  });
});
