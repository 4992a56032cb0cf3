import { Address, toNano } from '@ton/core';
import { WalletContractV4 } from '@ton/ton';
import type { KeyRef } from '@wcs/core';
import { runChainConformance, signersByAddress } from '@wcs/core/testing';
import { commentCell, plugin } from './index';
import { TonSandboxNode } from './test-support/sandbox-server';
import { testKeyStore, tonChain } from './test-support/fixtures';

/**
 * The shared chain suite on the real TVM: @ton/sandbox behind the node API the adapter speaks
 * (test-support/sandbox-server). The deposit: 1.5 TON with the comment "42" from a sandbox
 * treasury to the application's shared wallet. The transfer: 1.25 TON with a text comment from the
 * hot wallet v4R2 (funded with 5 TON, deployed by its first transfer) to a fresh non-bounceable
 * address, its balance read from the sandbox's own account state. No sweep: TON is a memo chain,
 * deposits land on the shared wallet itself.
 */
const adapter = plugin.create(tonChain());
const keys = testKeyStore();
const depositRef: KeyRef = { applicationId: 3, spec: adapter.keySpec('deposit'), purpose: 'deposit', index: 0 };
const hotRef: KeyRef = { applicationId: 3, spec: adapter.keySpec('hot'), purpose: 'hot', index: 0 };

runChainConformance({
  adapter,
  node: '@ton/sandbox (the real TVM, in-process) behind the toncenter-shaped node API',
  async start() {
    const node = await TonSandboxNode.start();
    const hotKey = await keys.getPublicKey(hotRef);
    const shared = adapter.address.addressFromPublicKey(await keys.getPublicKey(depositRef));
    const hot = adapter.address.addressFromPublicKey(hotKey);
    const user = await node.blockchain.treasury('conformance user');
    await user.send({ to: Address.parse(hot), value: toNano('5'), bounce: false });
    const paid = await user.send({ to: Address.parse(shared), value: toNano('1.5'), bounce: false, body: commentCell('42') });
    const arrival = paid.transactions.find((t) => t.inMessage?.info.dest instanceof Address && t.inMessage.info.dest.equals(Address.parse(shared)));
    if (!arrival) throw new Error('the deposit did not reach the shared wallet');
    const to = WalletContractV4.create({ workchain: 0, publicKey: Buffer.alloc(32, 9) }).address.toString({ urlSafe: true, bounceable: false, testOnly: true });
    const signers = new Map([[hot, hotRef]]);
    return {
      endpoint: { url: node.url },
      deposit: { address: shared, expected: { txHash: arrival.hash().toString('hex'), toAddress: shared, memo: '42', contract: null, amount: toNano('1.5'), succeeded: true } },
      transfer: {
        from: { address: hot, publicKey: hotKey }, to, memo: 'payout 7', contract: null, amount: toNano('1.25'), live: true,
        // the sandbox's own account state, not the adapter's node API
        balanceOf: async (address) => (await node.blockchain.getContract(Address.parse(address))).balance,
      },
      sign: signersByAddress([...signers].map(([address, ref]) => [address, (p: Uint8Array) => keys.sign(ref, p)] as const)),
      // the sandbox applies a message when it is sent: what was accepted is already in a block
      settle: async () => undefined,
      close: () => node.close(),
    };
  },
});
