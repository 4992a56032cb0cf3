/**
 * Collection on TON through the running service, with the TON adapter package (examples/adapter-ton,
 * outside the workspaces) installed by configuration alone, on the real TVM of @ton/sandbox behind the
 * package's toncenter-like HTTP API (the set-up of ton-service.test.ts: support/ton-service.ts).
 *
 * TON is a memo chain: one shared deposit account (a wallet v4R2 of the application's deposit key)
 * receives every user's deposits, each with the user's numeric comment; collection sweeps what that
 * account holds to the application's hot wallet (server/src/collection/processor.ts, direct()).
 *
 * The first sweep of a jetton (issue 27): the hot wallet has never held USDT, so its jetton wallet
 * does not exist (checked in the sandbox first). Nothing is created or funded for it: the operator
 * only funds the shared deposit account with Toncoin for its fees (as on every memo chain: the
 * account pays for its own transfers; a plain transfer without a comment, which the service lists as
 * an unattributed deposit). A user's USDT deposit with the comment is credited, a policy is set with
 * `wcs collect policy set` as an operator does, and the service sweeps: the deposit account's jetton
 * wallet sends the jettons with the state init of the hot wallet's jetton wallet (TEP-74), paid by
 * the Toncoin attached to the transfer. Checked from the sandbox's state: the hot wallet's jetton
 * wallet now exists and holds exactly what was swept, the deposit account's holds 0; the item ends
 * SUCCESS and its signed `collect` callback carries every field, gasFee the deposit wallet's
 * transaction's fee in TON (its total fees and the forwarding fee its message carries). Then a Toncoin deposit and its policy: the native sweep moves the account's
 * Toncoin above the deposit float the adapter keeps for jetton sweeps (0.1 TON) less the crafted fee reserve, which
 * the hot wallet receives whole (paying its own storage fee out of it); and the float pays the next USDT sweep.
 */
import { expect } from 'chai';
import { formatLocalDateTime, formatUnits } from '@wcs/core';
import { verifyCallback } from './support/callback-receiver';
import { expectOk, pollUntil, sleep } from './support/expect';
import { cliJson } from './support/processes';
import { ADDRESS_CREATE, type Unattributed } from './support/recharge-types';
import { TON, TON_CHAIN_ID, TON_TOKEN, TonService, USDT_TOKEN } from './support/ton-service';

const COLLECT_FIELDS = [
  'amount', 'applicationId', 'chainId', 'chainTokenId', 'createdTime', 'event', 'failureReasonCode', 'failureReasonMessage', 'finishedTime', 'fromAddress', 'fromAddressId',
  'gasFee', 'gasFeeCurrency', 'gasFunding', 'id', 'itemId', 'relatedRechargeIds', 'requestId', 'retryTimes', 'stage', 'status', 'toAddress', 'txHash',
];

interface ItemRow {
  id: string; request_id: string; chain_token_id: number; stage: string; status: string; from_address_id: number; from_address: string; to_address: string; amount: string;
  tx_hash: string | null; gas_fee: string | null; created_at: Date; finished_at: Date | null; failure_code: string | null; failure_message: string | null; waiting_reason: string | null;
}
type CollectEvent = Record<string, unknown>;
type SandboxTx = ReturnType<TonService['node']['transactionsOf']>[number]['tx'];

/** What a wallet paid for its own transaction: its total fees and the forwarding fees its outgoing messages carry (the adapter's walletFee). */
const walletFee = (tx: SandboxTx): bigint => [...tx.outMessages.values()].reduce((sum, m) => sum + (m.info.type === 'internal' ? m.info.forwardFee ?? 0n : 0n), tx.totalFees.coins);

describe('collection on TON through the service (@wcs/adapter-ton, @ton/sandbox): the first jetton sweep into a hot wallet whose jetton wallet did not exist, then a Toncoin sweep', function () {
  this.timeout(90_000);
  let s: TonService | null = null;
  let svc: TonService;
  let hot = '';
  let shared = '';
  let memo = '';
  /** Nanotons the first USDT sweep cost the deposit account. */
  let firstJettonSweep = 0n;

  const items = (tokenId: number) => svc.q<ItemRow>(
    `SELECT id::text AS id, request_id::text AS request_id, chain_token_id, stage, status, from_address_id, from_address, to_address, amount::text AS amount, tx_hash,
            gas_fee::text AS gas_fee, created_at, finished_at, failure_code, failure_message, waiting_reason
       FROM collection_items WHERE application_id = $1 AND chain_token_id = $2 ORDER BY id`, [svc.app.id, tokenId]);
  const collectEvents = () => svc.receiver.received.filter((r) => r.target === '/merchant/collect');
  const status = async () => JSON.stringify(cliJson(['collect', 'status'], await svc.cli(['collect', 'status', '--app', String(svc.app.id), '--json'])));
  /** The state of an account in the sandbox ('uninit' when it does not exist). */
  const stateOf = async (a: { toString(): string }) => (await svc.node.blockchain.getContract(svc.ton.parseAddress(a.toString()))).accountState?.type ?? 'uninit';
  /** The shared account's transactions started by an external message: the ones it signed (its sweeps), oldest first. */
  const signedBy = (a: string) => svc.node.transactionsOf(svc.ton.parseAddress(a)).filter((t) => t.tx.inMessage?.info.type === 'external-in');

  /** Waits for the item of a token to end; it must be SUCCESS. */
  async function swept(tokenId: number): Promise<ItemRow> {
    const r = await pollUntil(() => items(tokenId), (rows) => rows.length > 0 && (rows[0]!.status === 'SUCCESS' || rows[0]!.status === 'FAILED'), 45_000, 100);
    expect(r.ok, `an item of token ${tokenId} ended: ${JSON.stringify(r.result)}\nwcs collect status: ${await status()}${svc.describe()}`).to.equal(true);
    expect(r.result, 'one item').to.have.length(1);
    const item = r.result[0]!;
    expect(item, JSON.stringify(item)).to.include({ status: 'SUCCESS', stage: 'HOT_GATHER', from_address_id: 0, from_address: shared, to_address: hot, failure_code: null });
    expect(item.tx_hash).to.match(/^[0-9a-f]{64}$/);
    return item;
  }

  /** The item's one `collect` callback: signed with the application's secret, every field. */
  async function collectEvent(item: ItemRow, tokenId: number, expected: { amount: string; gasFee: string; rechargeId: number }): Promise<void> {
    const got = await pollUntil(async () => collectEvents().filter((r) => (JSON.parse(r.body.toString('utf8')) as CollectEvent).itemId === Number(item.id)), (l) => l.length > 0, 20_000, 50);
    expect(got.ok, `the collect callback of item ${item.id}`).to.equal(true);
    await sleep(300);
    const mine = collectEvents().filter((r) => (JSON.parse(r.body.toString('utf8')) as CollectEvent).itemId === Number(item.id));
    expect(mine, 'one collect callback per item').to.have.length(1);
    expect(verifyCallback(mine[0]!, svc.app.apiKey, svc.app.apiSecret, mine[0]!.at), 'signed').to.equal(null);
    const e = JSON.parse(mine[0]!.body.toString('utf8')) as CollectEvent;
    expect(Object.keys(e).sort()).to.deep.equal(COLLECT_FIELDS);
    expect(e).to.deep.equal({
      event: 'collect', id: Number(item.id), itemId: Number(item.id), requestId: Number(item.request_id), applicationId: svc.app.id, chainId: TON_CHAIN_ID, chainTokenId: tokenId,
      stage: 'HOT_GATHER', fromAddressId: 0, fromAddress: shared, toAddress: hot, amount: expected.amount, txHash: item.tx_hash, status: 'SUCCESS',
      failureReasonCode: null, failureReasonMessage: null, retryTimes: 0, gasFee: expected.gasFee, gasFeeCurrency: 'TON', gasFunding: null,
      relatedRechargeIds: [expected.rechargeId], createdTime: formatLocalDateTime(item.created_at), finishedTime: formatLocalDateTime(item.finished_at!),
    });
  }

  before(async function () {
    this.timeout(90_000);
    s = await TonService.start({ appName: 'ton-collector', callbacks: ['RECHARGE', 'COLLECT'], env: { WCS_COLLECT_PLAN_MS: '300' } }, (started) => (s = started));
    svc = s;
    hot = await svc.hotWallet();
    const a = expectOk(await svc.client.post(ADDRESS_CREATE, { chainCode: 'TON', externalUserId: 'carol' })) as { address: string; memo: string };
    shared = a.address;
    memo = a.memo;
  });

  after(async () => {
    await s?.stop();
  });

  describe('the first sweep of a jetton the hot wallet never held', () => {
    let rechargeId = 0;
    let beforeSweep = 0n;

    it('before: the hot wallet holds no USDT and its jetton wallet does not exist', async () => {
      expect(await stateOf(await svc.jetton.walletOf(svc.ton.parseAddress(hot))), 'the hot wallet\'s jetton wallet').to.equal('uninit');
      expect(await svc.jetton.balanceOf(svc.ton.parseAddress(hot))).to.equal(0n);
      expect(await items(USDT_TOKEN)).to.deep.equal([]);
    });

    it('the operator funds the shared deposit account with Toncoin for its fees (an unattributed deposit, no comment); a user\'s USDT deposit with the comment is credited', async () => {
      await svc.user.send({ to: svc.ton.parseAddress(shared), value: TON('0.5'), bounce: false });
      const funding = svc.lastTxTo(shared);
      const listed = await pollUntil(async () => cliJson(['deposits', 'unattributed'], await svc.cli(['deposits', 'unattributed', '--json'])) as Unattributed[], (rows) => rows.some((x) => x.txHash === funding), 30_000, 200);
      expect(listed.ok, JSON.stringify(listed.result)).to.equal(true);
      expect(listed.result.find((x) => x.txHash === funding)).to.include({ tokenSymbol: 'TON', address: shared, memo: null, amount: '0.5', reason: 'MEMO_MISSING' });
      expect(await svc.tonBalance(shared)).to.equal(TON('0.5'));

      await svc.jetton.transfer(svc.user, svc.ton.parseAddress(shared), 25_500_000n, memo);
      const hash = svc.lastTxTo(shared);
      const r = await svc.settled(hash);
      expect(r).to.include({ chainTokenId: USDT_TOKEN, externalUserId: 'carol', address: shared, memo, amount: '25.5', txHash: hash });
      rechargeId = r.id;
      expect(await svc.jetton.balanceOf(svc.ton.parseAddress(shared))).to.equal(25_500_000n);
      // the notification brought the Toncoin its sender forwarded (0.01 TON here) to the account too
      beforeSweep = await svc.tonBalance(shared);
      expect(beforeSweep > TON('0.5')).to.equal(true);
      await sleep(500);
      expect(await items(USDT_TOKEN), 'no policy: nothing collected').to.deep.equal([]);
    });

    it('with a USDT policy (`wcs collect policy set`: threshold, native value, max fee percent) the service sweeps every unit into the hot wallet, deploying its jetton wallet; SUCCESS; the collect callback signed, gasFee in TON', async () => {
      const set = await svc.cliOk(['collect', 'policy', 'set', '--app', String(svc.app.id), '--chain', 'TON', '--token', 'USDT', '--threshold', '10', '--native-value', '3', '--max-fee-percent', '5', '--json']);
      expect(set).to.deep.include({ created: true });
      const item = await swept(USDT_TOKEN);
      expect(item.amount, 'the whole deposit').to.equal('25500000');

      // the hot wallet's jetton wallet exists now (deployed by the transfer itself) and holds exactly what was swept
      const hotJettonWallet = await svc.jetton.walletOf(svc.ton.parseAddress(hot));
      expect(await stateOf(hotJettonWallet), 'the hot wallet\'s jetton wallet').to.equal('active');
      expect(await svc.jetton.balanceOf(svc.ton.parseAddress(hot))).to.equal(25_500_000n);
      expect(await svc.jetton.balanceOf(svc.ton.parseAddress(shared)), 'the deposit account\'s jetton wallet').to.equal(0n);

      // one transaction signed by the deposit account (its first: it deployed the wallet too); what it paid for it is the
      // item's gasFee: its total fees and the forwarding fee its message carries
      const sweeps = signedBy(shared);
      expect(sweeps).to.have.length(1);
      const fee = walletFee(sweeps[0]!.tx);
      expect(fee > sweeps[0]!.tx.totalFees.coins).to.equal(true);
      expect(item.gas_fee).to.equal(fee.toString());
      // the deposit account paid the whole sweep in Toncoin: that fee, and the 0.05 TON attached for the jetton wallets
      // (their gas, the new jetton wallet's storage), less the excess that came back from the new jetton wallet, which its
      // own transaction took in for a fee; within the crafted maxFee of 0.06 TON the cost guard counted
      const back = svc.node.transactionsOf(svc.ton.parseAddress(shared)).at(-1)!.tx;
      const excess = back.inMessage?.info.value?.coins ?? 0n;
      expect(excess > 0n && excess < TON('0.05'), `the excess ${excess}`).to.equal(true);
      const spent = beforeSweep - (await svc.tonBalance(shared));
      expect(spent).to.equal(fee + TON('0.05') - excess + back.totalFees.coins);
      expect(spent <= TON('0.06'), `the deposit account spent ${spent} nanotons`).to.equal(true);
      firstJettonSweep = spent;
      const kept = await svc.tonBalance(hotJettonWallet.toString());
      expect(kept > 0n, 'the new jetton wallet keeps Toncoin for its storage').to.equal(true);

      await collectEvent(item, USDT_TOKEN, { amount: '25.5', gasFee: formatUnits(fee, 9), rechargeId });
      expect(await svc.q('SELECT collection_item_id::text AS item FROM recharges WHERE id = $1', [rechargeId])).to.deep.equal([{ item: item.id }]);
      await sleep(600);
      expect((await items(USDT_TOKEN)).map((i) => i.id), 'nothing else planned').to.deep.equal([item.id]);
    });
  });

  describe('a Toncoin sweep of the shared deposit account', () => {
    it('a Toncoin deposit with the comment, a TON policy: the account\'s Toncoin above the 0.1 TON deposit float, less the crafted fee reserve, moves, and the hot wallet receives exactly that', async () => {
      await svc.user.send({ to: svc.ton.parseAddress(shared), value: TON('1.5'), bounce: false, body: svc.ton.commentCell(memo) });
      const hash = svc.lastTxTo(shared);
      const r = await svc.settled(hash);
      expect(r).to.include({ chainTokenId: TON_TOKEN, externalUserId: 'carol', amount: '1.5' });
      const held = await svc.tonBalance(shared);
      const hotBefore = await svc.tonBalance(hot);
      await svc.cliOk(['collect', 'policy', 'set', '--app', String(svc.app.id), '--chain', 'TON', '--token', 'TON', '--threshold', '1', '--max-fee-percent', '2', '--json']);
      const item = await swept(TON_TOKEN);
      // what the account held less the deposit float the adapter leaves for jetton sweeps (0.1 TON by default) and the
      // wallet's fee reserve (0.01 TON, fees paid separately: what they did not use stays)
      expect(item.amount, 'what was sent').to.equal((held - TON('0.1') - TON('0.01')).toString());
      const sweeps = signedBy(shared);
      expect(sweeps).to.have.length(2);
      const fee = walletFee(sweeps[1]!.tx);
      expect(item.gas_fee).to.equal(fee.toString());
      // the account's balance fell by exactly what was sent and the gasFee
      expect(await svc.tonBalance(shared)).to.equal(held - BigInt(item.amount) - fee);
      expect(fee < TON('0.01')).to.equal(true);
      expect(await svc.tonBalance(shared)).to.equal(TON('0.11') - fee);
      // it arrives whole at the hot wallet, which pays its own storage fee out of it (it is not deployed: no payout made it yet)
      const received = svc.node.transactionsOf(svc.ton.parseAddress(hot)).at(-1)!.tx;
      expect(received.inMessage?.info.value?.coins, 'the value the hot wallet received').to.equal(BigInt(item.amount));
      expect((await svc.tonBalance(hot)) - hotBefore).to.equal(BigInt(item.amount) - received.totalFees.coins);
      const arrived = BigInt(item.amount);
      await collectEvent(item, TON_TOKEN, { amount: formatUnits(arrived, 9), gasFee: formatUnits(fee, 9), rechargeId: r.id });
    });

    it('after it, the float still pays the next USDT sweep (into the jetton wallet the first one made, for less Toncoin)', async () => {
      const hotJettons = await svc.jetton.balanceOf(svc.ton.parseAddress(hot));
      await svc.jetton.transfer(svc.user, svc.ton.parseAddress(shared), 12_000_000n, memo);
      const r = await svc.settled(svc.lastTxTo(shared));
      expect(r).to.include({ chainTokenId: USDT_TOKEN, amount: '12' });
      const before = await svc.tonBalance(shared);
      const done = await pollUntil(() => items(USDT_TOKEN), (rows) => rows.length === 2 && ['SUCCESS', 'FAILED'].includes(rows[1]!.status), 45_000, 100);
      expect(done.ok && done.result[1]!.status === 'SUCCESS', `the second USDT item: ${JSON.stringify(done.result)}\nwcs collect status: ${await status()}${svc.describe()}`).to.equal(true);
      expect(done.result[1]!.amount).to.equal('12000000');
      expect(await svc.jetton.balanceOf(svc.ton.parseAddress(hot))).to.equal(hotJettons + 12_000_000n);
      expect(await svc.jetton.balanceOf(svc.ton.parseAddress(shared))).to.equal(0n);
      const spent = before - (await svc.tonBalance(shared));
      expect(spent > 0n && spent < firstJettonSweep, `the second sweep spent ${spent}, the first ${firstJettonSweep}`).to.equal(true);
    });
  });
});
