import { expect } from 'chai';
import { QueryTypes, type Sequelize } from 'sequelize';
import { Wallet } from 'ethers';
import { paying, type AdapterRegistry, type TransferNode } from '@wcs/core';
import { sendNative, startAnvil, type AnvilDevnet } from '@wcs/adapter-evm/devnet';
import { TEST_ACTOR, startTestService, testLogger, type TestService } from '../testing';
import { TOKENS } from '../container';
import type { ChainView } from '../catalogue/catalogue';
import { DatabaseSenderLedger, SenderChainCheck } from './chain-check';
import { SENDER_CHAIN_AHEAD, heldAmong, listHolds, releaseSender } from './sender-holds';

/**
 * The chain check's service side on real Postgres and a real anvil (test ETH): holds, the one
 * alert, the release, and the ledger the adapters read (its SQL against real rows).
 */
describe('chain check before signing: holds, alert, release (real Postgres, anvil)', function () {
  this.timeout(120_000);
  let anvil: AnvilDevnet;
  let svc: TestService;
  let sequelize: Sequelize;
  let eth: ChainView;
  let node: TransferNode;

  const alerts = async (address: string) => sequelize.query<{ id: string; message: string; details: Record<string, unknown> }>(
    `SELECT id::text AS id, message, details FROM operator_alerts WHERE kind = $1 AND details->>'address' = $2 ORDER BY id`,
    { bind: [SENDER_CHAIN_AHEAD, address], type: QueryTypes.SELECT },
  );
  /** A new sender with 1 ETH whose transactions the test sends outside the service's knowledge. */
  async function sender(): Promise<Wallet> {
    const w = Wallet.createRandom();
    await sendNative(anvil.url, w.address, 10n ** 18n);
    return new Wallet(w.privateKey);
  }
  const sendFrom = (w: Wallet) => sendNative(anvil.url, Wallet.createRandom().address, 1000n, { fromPrivateKey: w.privateKey });
  const allocate = (address: string, next: bigint) => sequelize.query(
    `INSERT INTO sequence_allocators (chain_id, address, next_sequence) VALUES ($1, $2, $3::numeric)
     ON CONFLICT (chain_id, address) DO UPDATE SET next_sequence = EXCLUDED.next_sequence`,
    { bind: [eth.id, address, next.toString()] },
  );

  before(async () => {
    anvil = await startAnvil({ chainId: 11155111 });
    svc = await startTestService({ env: { WCS_RPC_TEST_ETH: anvil.url }, workers: false });
    sequelize = svc.service.storage.database.sequelize;
    eth = svc.service.storage.catalogue.chains('test').find((c) => c.code === 'ETH')!;
    const registry = svc.service.storage.container.resolve<AdapterRegistry>(TOKENS.AdapterRegistry);
    node = paying(registry.forChain(eth)).createTransferNode({ url: anvil.url });
  });
  after(async () => {
    await svc?.stop();
    await anvil?.stop();
  });

  it('a sender the chain is ahead of is held once, with one SENDER_CHAIN_AHEAD alert naming the evidence; a sender it agrees with is not', async () => {
    const check = new SenderChainCheck(sequelize, testLogger(), true);
    const [ahead, agrees, fresh] = [await sender(), await sender(), await sender()];
    await sendFrom(ahead);
    await sendFrom(ahead);
    await allocate(ahead.address, 1n); // the database signed one; the chain has two
    await sendFrom(agrees);
    await allocate(agrees.address, 1n);

    const blocked = await check.blocked(eth, node, [ahead.address, agrees.address, fresh.address, ahead.address]);
    expect([...blocked]).to.deep.equal([ahead.address]);
    // asked again (the next round, another process): still held, no second alert
    expect([...(await check.blocked(eth, node, [ahead.address]))]).to.deep.equal([ahead.address]);
    expect([...(await new SenderChainCheck(sequelize, testLogger(), true).blocked(eth, node, [ahead.address]))]).to.deep.equal([ahead.address]);

    const raised = await alerts(ahead.address);
    expect(raised).to.have.length(1);
    expect(raised[0]!.message).to.contain('ETH').and.contain(ahead.address).and.contain('wcs transfers holds');
    expect(raised[0]!.details.evidence).to.deep.equal({ kind: 'SEQUENCE', databaseNext: '1', chainNext: '2', pendingNext: '2' });
    expect(await alerts(agrees.address)).to.have.length(0);

    const holds = await listHolds(sequelize);
    const hold = holds.find((h) => h.address === ahead.address)!;
    expect(hold.chainCode).to.equal('ETH');
    expect(hold.alertId).to.equal(raised[0]!.id);
    expect(hold.releasedAt).to.equal(null);
    expect([...(await heldAmong(sequelize, eth.id, [ahead.address, agrees.address]))]).to.deep.equal([ahead.address]);
  });

  it('the hold lasts (a new process, the check off) until released; the release is audited, raises the allocator to the chain\'s next, and signing may resume', async () => {
    const w = await sender();
    await sendFrom(w);
    await new SenderChainCheck(sequelize, testLogger(), true).blocked(eth, node, [w.address]);
    // the check off (benchmarks): no node call, but the recorded hold still applies
    expect([...(await new SenderChainCheck(sequelize, testLogger(), false).blocked(eth, node, [w.address]))]).to.deep.equal([w.address]);

    await rejectsWith(() => releaseSender(sequelize, { chainId: eth.id, address: w.address }, TEST_ACTOR, '  '), TypeError);
    const released = await releaseSender(sequelize, { chainId: eth.id, address: w.address }, TEST_ACTOR, 'matched to order 17 by the recovery');
    expect(released.ok).to.equal(true);
    if (!released.ok) return;
    expect(released.hold.releasedBy).to.equal('test');
    expect(released.hold.releaseNote).to.equal('matched to order 17 by the recovery');
    expect(await releaseSender(sequelize, { chainId: eth.id, address: w.address }, TEST_ACTOR, 'again')).to.deep.equal({ ok: false, reason: 'NOT_HELD' });
    const [allocator] = await sequelize.query<{ next: string }>('SELECT next_sequence::text AS next FROM sequence_allocators WHERE chain_id = $1 AND address = $2', {
      bind: [eth.id, w.address], type: QueryTypes.SELECT,
    });
    expect(allocator!.next).to.equal('1');
    const [audit] = await sequelize.query<{ action: string; target: string; actor: string }>(
      `SELECT action, target, actor FROM audit_log WHERE target = $1`, { bind: [`sender:ETH:${w.address}`], type: QueryTypes.SELECT },
    );
    expect(audit).to.deep.equal({ action: 'transfers.release-sender', target: `sender:ETH:${w.address}`, actor: 'test' });

    const check = new SenderChainCheck(sequelize, testLogger(), true);
    expect([...(await check.blocked(eth, node, [w.address]))]).to.deep.equal([]);
    expect((await listHolds(sequelize)).some((h) => h.address === w.address)).to.equal(false);
    expect((await listHolds(sequelize, { open: false })).filter((h) => h.address === w.address)).to.have.length(1);

    // more unknown transactions later: held again, a second alert
    await sendFrom(w);
    expect([...(await check.blocked(eth, node, [w.address]))]).to.deep.equal([w.address]);
    expect(await alerts(w.address)).to.have.length(2);
  });

  it('a check the node cannot answer blocks the sender for the round without holding it', async () => {
    const w = await sender();
    await sendFrom(w);
    const dead = paying(svc.service.storage.container.resolve<AdapterRegistry>(TOKENS.AdapterRegistry).forChain(eth)).createTransferNode({ url: 'http://127.0.0.1:1', timeoutMs: 300 });
    expect([...(await new SenderChainCheck(sequelize, testLogger(), true).blocked(eth, dead, [w.address]))]).to.deep.equal([w.address]);
    expect(await heldAmong(sequelize, eth.id, [w.address])).to.have.property('size', 0);
    expect(await alerts(w.address)).to.have.length(0);
  });

  it('atStart checks every hot wallet of the chain and every sender with a READY transfer', async () => {
    const [hot, other] = [await sender(), await sender()];
    await sendFrom(hot);
    await sendFrom(other);
    const app = await svc.createApp({ chains: ['ETH'] });
    await sequelize.query(`INSERT INTO hot_wallets (application_id, chain_id, key_namespace, key_index, address) VALUES ($1, $2, 'test', 0, $3)`, { bind: [app.id, eth.id, hot.address] });
    const blocked = await new SenderChainCheck(sequelize, testLogger(), true).atStart(eth, node);
    expect(blocked.has(hot.address)).to.equal(true);
    expect(blocked.has(other.address)).to.equal(false); // nothing to sign from it: not asked
  });

  it('the ledger the adapters read: allocator next, unspent and service-spent outputs, known transactions, and what released holds accepted', async () => {
    const ledger = new DatabaseSenderLedger(sequelize, eth.id);
    await allocate('0xLedgerSender', 7n);
    expect([...(await ledger.nextSequences(['0xLedgerSender', '0xNobody']))]).to.deep.equal([['0xLedgerSender', 7n], ['0xNobody', null]]);

    const app = await svc.createApp({ chains: ['ETH'] });
    const [w] = await sequelize.query<{ id: number }>(
      `INSERT INTO hot_wallets (application_id, chain_id, key_namespace, key_index, address) VALUES ($1, $2, 'test', 1, 'utxo-hot') RETURNING id`,
      { bind: [app.id, eth.id], type: QueryTypes.SELECT },
    );
    const token = eth.tokens.find((t) => t.contract === null)!;
    const [x] = await sequelize.query<{ id: string }>(
      `INSERT INTO transfers (application_id, chain_id, chain_token_id, kind, key_purpose, key_namespace, key_index, from_address, to_address, amount, status)
       VALUES ($1, $2, $3, 'PAYOUT', 'hot', 'test', 1, 'utxo-hot', 'somewhere', 5, 'SIGNED') RETURNING id::text AS id`,
      { bind: [app.id, eth.id, token.id], type: QueryTypes.SELECT },
    );
    await sequelize.query(`INSERT INTO transfer_attempts (transfer_id, attempt, tx_hash, raw_tx, transfer_input, max_fee) VALUES ($1, 1, 'tx-known', '\\x00', '{}', 1)`, { bind: [x!.id] });
    await sequelize.query(
      `INSERT INTO hot_wallet_utxos (hot_wallet_id, tx_hash, vout, amount, confirmations, spent_by) VALUES ($1, 'a', 0, 10, 1, NULL), ($1, 'a', 1, 10, 1, $2), ($1, 'b', 0, 10, 1, NULL)`,
      { bind: [w!.id, x!.id] },
    );
    expect(await ledger.unspentOutputs('utxo-hot')).to.deep.equal([{ txHash: 'a', vout: 0 }, { txHash: 'b', vout: 0 }]);
    expect(await ledger.unspentOutputs('someone-else')).to.deep.equal([]);
    expect([...(await ledger.spentByService([{ txHash: 'a', vout: 0 }, { txHash: 'a', vout: 1 }, { txHash: 'c', vout: 0 }]))]).to.deep.equal(['a:1']);
    expect([...(await ledger.knownTransactions(['tx-known', 'tx-lost', 'tx-accepted']))]).to.deep.equal(['tx-known']);
    // another chain's ledger knows none of it
    expect([...(await new DatabaseSenderLedger(sequelize, eth.id + 100_000).knownTransactions(['tx-known']))]).to.deep.equal([]);

    // a released hold's evidence counts as known; an open one's does not
    await sequelize.query(
      `INSERT INTO sender_holds (chain_id, address, summary, evidence, released_at, released_by, release_note) VALUES
         ($1, 'utxo-hot', 's', '{"kind":"UNKNOWN_TRANSACTIONS","transactions":["tx-accepted"]}', now(), 'test', 'n'),
         ($1, 'utxo-hot', 's', '{"kind":"SPENT_OUTPUTS","outputs":[{"txHash":"c","vout":0}]}', now(), 'test', 'n'),
         ($1, 'utxo-hot', 's', '{"kind":"UNKNOWN_TRANSACTIONS","transactions":["tx-lost"]}', NULL, NULL, NULL)`,
      { bind: [eth.id] },
    );
    expect([...(await ledger.knownTransactions(['tx-known', 'tx-lost', 'tx-accepted']))].sort()).to.deep.equal(['tx-accepted', 'tx-known']);
    expect([...(await ledger.spentByService([{ txHash: 'a', vout: 0 }, { txHash: 'c', vout: 0 }]))]).to.deep.equal(['c:0']);
  });
});

async function rejectsWith(fn: () => Promise<unknown>, type: new (...args: never[]) => Error): Promise<void> {
  try {
    await fn();
  } catch (e) {
    expect(e).to.be.instanceOf(type);
    return;
  }
  expect.fail('expected a rejection');
}
