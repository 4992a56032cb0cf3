import { runChainConformance, signersByAddress } from '@wcs/core/testing';
import { plugin } from './index';
import { demoChain } from './test-support/chains';
import { DemoNode } from './test-support/demo-node';

/**
 * The shared chain suite against the template's stand-in node (test-support/demo-node.ts): one
 * deposit of 1.25 DMO to a user's address among payments to others, read two transactions a page.
 * A scan-only adapter: the session has a deposit case and no transfer or sweep case, and the
 * suite checks that this matches the adapter's capabilities; no key signs anything (`sign` has no
 * keys). No balance section either: the adapter has no BalanceReader.
 */
const adapter = plugin.create(demoChain());
const key = (fill: number) => adapter.address.addressFromPublicKey({ curve: 'ed25519', bytes: new Uint8Array(32).fill(fill) });

runChainConformance({
  adapter,
  node: 'the template\'s stand-in node (src/test-support/demo-node.ts; replace it with your chain\'s own)',
  async start() {
    const node = await DemoNode.start();
    const user = key(7);
    const payer = key(9);
    node.pay(payer, key(8), 5n);
    node.pay(payer, user, 3n, true);
    const paid = node.pay(payer, user, 1_250_000n);
    node.pay(payer, user, 40n);
    return {
      endpoint: { url: node.url },
      deposit: { address: user, expected: { txHash: paid.hash, toAddress: user, memo: null, contract: null, amount: 1_250_000n, succeeded: true }, limit: 2 },
      sign: signersByAddress([]),
      settle: async () => undefined,
      close: () => node.close(),
    };
  },
});
