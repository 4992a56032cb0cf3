import { expect } from 'chai';
import { QueryTypes, type Sequelize } from 'sequelize';
import { startTestService, type TestService } from '../testing';
import type { ChainView } from '../catalogue/catalogue';
import { DatabaseSenderLedger } from './chain-check';
import { markSpent } from './recovery-apply';

/**
 * Utxo chains after a restore, on real Postgres (no node): the outputs the chain check believes
 * unspent (the hot wallet's, and an unsigned consolidation's fixed inputs) and which of them the
 * service's own transactions spend; and what a recovery's apply marks spent.
 */
describe('utxo recovery: the outputs the chain check believes unspent, and those a recovery marks spent (real Postgres)', function () {
  this.timeout(60_000);
  let svc: TestService;
  let sequelize: Sequelize;
  let btc: ChainView;
  let eth: ChainView;
  let appId: number;

  const wallet = async (chain: ChainView, address: string) => (await sequelize.query<{ id: number }>(
    `INSERT INTO hot_wallets (application_id, chain_id, key_namespace, key_index, address) VALUES ($1, $2, 'test', 0, $3) RETURNING id`,
    { bind: [appId, chain.id, address], type: QueryTypes.SELECT },
  ))[0]!.id;
  const transfer = async (chain: ChainView, from: string, status: string, txHash: string | null, options: object = {}) => (await sequelize.query<{ id: string }>(
    `INSERT INTO transfers (application_id, chain_id, chain_token_id, kind, key_purpose, key_namespace, key_index, from_address, to_address, amount, status, tx_hash, options)
     VALUES ($1, $2, $3, 'SWEEP', 'deposit', 'test', 1, $4, 'hot', 5, $5, $6, $7::jsonb) RETURNING id::text AS id`,
    { bind: [appId, chain.id, chain.tokens.find((t) => t.contract === null)!.id, from, status, txHash, JSON.stringify(options)], type: QueryTypes.SELECT },
  ))[0]!.id;
  const outputs = (walletId: number) => sequelize.query<{ k: string; spent_by: string | null }>(
    `SELECT tx_hash || ':' || vout AS k, spent_by::text AS spent_by FROM hot_wallet_utxos WHERE hot_wallet_id = $1 ORDER BY tx_hash, vout`,
    { bind: [walletId], type: QueryTypes.SELECT },
  );
  const inputs = (...ks: string[]) => ({ subtractFee: true, inputs: ks.map((k) => ({ txHash: k.split(':')[0], vout: Number(k.split(':')[1]), amount: '10', owner: { purpose: 'deposit', namespace: 'test', index: 1, address: 'dep' } })) });

  before(async () => {
    svc = await startTestService({ workers: false });
    sequelize = svc.service.storage.database.sequelize;
    btc = svc.service.storage.catalogue.chains('test').find((c) => c.code === 'BTC')!;
    eth = svc.service.storage.catalogue.chains('test').find((c) => c.code === 'ETH')!;
    appId = (await svc.createApp({ chains: ['BTC', 'ETH'] })).id;
  });
  after(async () => {
    await svc?.stop();
  });

  it('the ledger: a sender\'s unsigned transfers\' fixed inputs count as believed unspent; a signed transfer\'s inputs as spent by the service', async () => {
    const ledger = new DatabaseSenderLedger(sequelize, btc.id);
    await transfer(btc, 'dep', 'READY', null, inputs('d1:0', 'd2:1'));
    await transfer(btc, 'dep', 'SUCCESS', 'sweep-1', inputs('d0:0'));
    await transfer(btc, 'other', 'READY', null, inputs('d9:0'));
    await transfer(eth, 'dep', 'READY', null, { feeFromAmount: true });
    expect(await ledger.unspentOutputs('dep')).to.deep.equal([{ txHash: 'd1', vout: 0 }, { txHash: 'd2', vout: 1 }]);
    expect(await ledger.unspentOutputs('nobody')).to.deep.equal([]);
    expect([...(await ledger.spentByService([{ txHash: 'd0', vout: 0 }, { txHash: 'd1', vout: 0 }]))]).to.deep.equal(['d0:0']);
    expect([...(await new DatabaseSenderLedger(sequelize, eth.id).spentByService([{ txHash: 'd0', vout: 0 }]))]).to.deep.equal([]);
  });

  it('markSpent: a recorded transfer\'s spent outputs are taken by it, those of transactions no transfer has are dropped; other chains\' wallets untouched', async () => {
    const hot = await wallet(btc, 'hot-btc');
    const other = await wallet(eth, 'hot-eth');
    const x = await transfer(btc, 'hot-btc', 'BROADCASTED', 'w2');
    for (const [w, rows] of [[hot, "('a', 0), ('a', 1), ('b', 0), ('c', 2)"], [other, "('a', 0), ('a', 1)"]] as const) {
      await sequelize.query(`INSERT INTO hot_wallet_utxos (hot_wallet_id, tx_hash, vout, amount, confirmations) SELECT $1, t, v, 10, 3 FROM (VALUES ${rows}) AS r(t, v)`, { bind: [w] });
    }
    const done = await sequelize.transaction((t) => markSpent(sequelize, t, btc.id, {
      taken: [{ transferId: x, outputs: [{ txHash: 'a', vout: 0 }, { txHash: 'lost-change', vout: 1 }] }],
      dropped: [{ txHash: 'a', vout: 1 }, { txHash: 'c', vout: 2 }, { txHash: 'never-known', vout: 0 }],
    }));
    expect(done).to.deep.equal({ taken: 1, dropped: 2 });
    expect(await outputs(hot)).to.deep.equal([{ k: 'a:0', spent_by: x }, { k: 'b:0', spent_by: null }]);
    expect(await outputs(other)).to.deep.equal([{ k: 'a:0', spent_by: null }, { k: 'a:1', spent_by: null }]);
    // what the chain check then believes unspent: only b:0
    expect(await new DatabaseSenderLedger(sequelize, btc.id).unspentOutputs('hot-btc')).to.deep.equal([{ txHash: 'b', vout: 0 }]);
    expect(await sequelize.transaction((t) => markSpent(sequelize, t, btc.id, { taken: [], dropped: [] }))).to.deep.equal({ taken: 0, dropped: 0 });
  });
});
