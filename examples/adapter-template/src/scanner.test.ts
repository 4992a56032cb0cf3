import { expect } from 'chai';
import { ChainRpcError } from '@wcs/core';
import { rejected } from '@wcs/core/testing';
import { DemoAddresses } from './address';
import { DemoScanner } from './scanner';
import { DemoNode } from './test-support/demo-node';

/** The package's own tests, beside the shared suites: what the scanner makes of the node's answers. */
describe('demo scanner', () => {
  const addresses = new DemoAddresses('testnet');
  const addr = (fill: number) => addresses.addressFromPublicKey({ curve: 'ed25519', bytes: new Uint8Array(32).fill(fill) });
  let node: DemoNode;
  beforeEach(async () => {
    node = await DemoNode.start();
  });
  afterEach(() => node.close());

  it('reads every transfer once, page by page, failed ones as failed, exact amounts beyond 2^53', async () => {
    const user = addr(1);
    const big = 2n ** 64n + 1n;
    const a = node.pay(addr(2), user, big);
    node.pay(addr(2), addr(3), 9n);
    const b = node.pay(addr(3), user, 1n, true);
    const c = node.pay(addr(2), user, 2n);
    const scanner = new DemoScanner({ url: node.url }, addresses);
    const seen: Array<[string, bigint, boolean]> = [];
    let cursor: string | null = null;
    for (let i = 0; i < 10; i++) {
      const page = await scanner.transfersSince(user, cursor, 1);
      seen.push(...page.transfers.map((t): [string, bigint, boolean] => [t.txHash, t.amount, t.succeeded]));
      if (page.cursor === cursor) break;
      cursor = page.cursor;
    }
    expect(seen).to.deep.equal([[a.hash, big, true], [b.hash, 1n, false], [c.hash, 2n, true]]);
    expect(await scanner.tipHeight()).to.equal(4n);
  });

  it('refuses an answer it cannot trust with RPC_BAD_RESPONSE, naming the field', async () => {
    const user = addr(1);
    const scanner = new DemoScanner({ url: node.url }, addresses);
    const item = { hash: 'ab'.repeat(32), index: 0, from: null, to: user, amount: '1.5', height: '1', blockHash: 'cd'.repeat(32), status: 'ok' };
    node.overrides.set('demo_transfersTo', { transfers: [item], cursor: '1' });
    const e = await rejected(scanner.transfersSince(user, null, 10), ChainRpcError);
    expect(e.errorName).to.equal('RPC_BAD_RESPONSE');
    expect(e.message).to.match(/amount is not a decimal string/);
    node.overrides.set('demo_transfersTo', { transfers: [{ ...item, amount: '15', to: addr(1).replace(/^dt/, 'dm') }], cursor: '1' });
    expect((await rejected(scanner.transfersSince(user, null, 10), ChainRpcError)).message).to.match(/destination: a mainnet address on a test network/);
    node.overrides.set('demo_finalHeight', 'soon');
    expect((await rejected(scanner.tipHeight(), ChainRpcError)).message).to.match(/demo_finalHeight: not a height/);
  });
});
