import { expect } from 'chai';
import type { BalanceQuery } from '@wcs/core';
import { BitcoinBalanceReader } from './balances';
import { BTC_REGTEST_RB } from './fixtures.test-helper';
import { resolveNetwork } from './network';
import { startRegtest, type RegtestNode } from './regtest';
import { plugin } from './index';

/**
 * The bitcoin balance reader on a bcoin regtest node (its address index: POST /coin/address):
 * the sums of the outputs the test paid, at the node's head, in the order asked; mempool outputs
 * listed (0 confirmations) but not in the balance; many addresses over several listings.
 */
describe('BitcoinBalanceReader (bcoin regtest)', function () {
  this.timeout(120_000);
  const network = resolveNetwork(BTC_REGTEST_RB);
  let node: RegtestNode;
  const reader = (scanSize?: number) => new BitcoinBalanceReader(network, { url: node.url }, scanSize === undefined ? {} : { scanSize });

  before(async () => {
    node = await startRegtest();
  });
  after(async () => node?.stop());

  it('the plugin builds it', () => {
    expect(plugin.create(BTC_REGTEST_RB).createBalanceReader!({ url: node.url })).to.be.instanceOf(BitcoinBalanceReader);
  });

  it('sums each address\'s confirmed outputs at the head, in order; mempool outputs are listed with 0 confirmations, not summed', async () => {
    const [a, b, c] = [await node.newAddress(), await node.newAddress(), await node.newAddress()];
    await node.send(a, 150_000_000n);
    await node.send(a, 30_000_001n);
    await node.send(b, 20_000_000n);
    const [mined] = await node.mine(1);
    await node.send(b, 5_000_000n); // stays in the mempool
    const r = reader();
    expect(r.history).to.deep.equal({ kind: 'head' });
    const head = await r.head();
    expect(head.blockHash).to.equal(mined);
    expect(head.height).to.equal(BigInt(await node.rpc<number>('getblockcount')));
    const queries: BalanceQuery[] = [{ address: b, contract: null }, { address: c, contract: null }, { address: a, contract: null }, { address: b, contract: null }];
    const { at, answers } = await r.balancesAt(queries, head);
    expect(at).to.deep.equal(head);
    expect(answers).to.deep.equal([
      { kind: 'AMOUNT', amount: 20_000_000n }, { kind: 'AMOUNT', amount: 0n }, { kind: 'AMOUNT', amount: 180_000_001n }, { kind: 'AMOUNT', amount: 20_000_000n },
    ]);
    const listed = await r.unspentOutputs([a, b, c]);
    expect(listed.at).to.deep.equal(head);
    expect(listed.outputs[0]!.map((o) => [o.amount, o.confirmations]).sort()).to.deep.equal([[150_000_000n, 1], [30_000_001n, 1]].sort());
    expect(listed.outputs[1]!.map((o) => [o.amount, o.confirmations]).sort()).to.deep.equal([[20_000_000n, 1], [5_000_000n, 0]].sort());
    expect(listed.outputs[2]).to.deep.equal([]);

    // A block later: the mempool output is in the balance, confirmations counted from the new head.
    await node.mine(1);
    const later = await r.balancesAt(queries.slice(0, 1), head);
    expect(later.at.height).to.equal(head.height + 1n); // a 'head' reader answers at the head, above the point asked
    expect(later.answers).to.deep.equal([{ kind: 'AMOUNT', amount: 25_000_000n }]);
    expect((await r.unspentOutputs([a])).outputs[0]!.map((o) => o.confirmations)).to.deep.equal([2, 2]);
  });

  it('many addresses over several listings of scanSize', async () => {
    const addresses: string[] = [];
    for (let i = 0; i < 23; i++) addresses.push(await node.newAddress());
    await node.sendMany(addresses.map((address, i) => ({ address, sats: 10_000n * BigInt(i + 1) })));
    await node.mine(1);
    const r = reader(5);
    const { answers } = await r.balancesAt(addresses.map((address) => ({ address, contract: null })), await r.head());
    expect(answers).to.deep.equal(addresses.map((_, i) => ({ kind: 'AMOUNT', amount: 10_000n * BigInt(i + 1) })));
  });

  it('refuses a bad address or a token before any node call', async () => {
    const r = new BitcoinBalanceReader(network, { url: 'http://127.0.0.1:9' }); // nothing listens: a node call would fail otherwise
    const head = { height: 1n, blockHash: null };
    for (const q of [{ address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', contract: null }, { address: 'nope', contract: null }, { address: await node.newAddress(), contract: 'USDT' }]) {
      const e = await r.balancesAt([q], head).then(() => null, (x: unknown) => x);
      expect(e, q.address).to.be.instanceOf(TypeError);
    }
    expect(await r.balancesAt([], head)).to.deep.equal({ at: head, answers: [] });
  });
});
