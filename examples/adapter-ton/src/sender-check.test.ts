import { expect } from 'chai';
import { Address, toNano } from '@ton/core';
import { WalletContractV4 } from '@ton/ton';
import { paying, type KeyRef, type SenderCheck, type SequenceCrafter } from '@wcs/core';
import { memoryLedger } from '@wcs/core/testing';
import { plugin, type TonNodeTransferInput, type TonTransferNode } from './index';
import { TonSandboxNode } from './test-support/sandbox-server';
import { testKeyStore, tonChain } from './test-support/fixtures';

/**
 * TonTransferNode.senderCheck against the real TVM (@ton/sandbox behind the node API): the hot
 * wallet's seqno against the database's next sequence.
 */
describe('TonTransferNode.senderCheck in @ton/sandbox: the wallet\'s seqno against the database\'s next', function () {
  this.timeout(120_000);
  let node: TonSandboxNode;
  let tn: TonTransferNode;
  let crafter: SequenceCrafter;
  const keys = testKeyStore();
  const adapter = plugin.create(tonChain());
  const hotRef: KeyRef = { applicationId: 4, spec: adapter.keySpec('hot'), purpose: 'hot', index: 0 };
  let hot: string;
  const elsewhere = WalletContractV4.create({ workchain: 0, publicKey: Buffer.alloc(32, 9) }).address.toString({ urlSafe: true, bounceable: false, testOnly: true });

  /** A Toncoin payment from the hot wallet at its seqno, signed by its key and applied: what a transaction the database lost looks like. */
  async function pay(): Promise<void> {
    const fromPublicKey = await keys.getPublicKey(hotRef);
    const base = { from: hot, fromPublicKey, to: elsewhere, memo: null, contract: null, amount: toNano('0.01') };
    const input = (await tn.transferInput(base)) as TonNodeTransferInput;
    const unsigned = crafter.craft({ ...base, sequence: await tn.nextSequence(hot) }, input);
    const signatures = [];
    for (const p of unsigned.payloads) signatures.push(await keys.sign(hotRef, p));
    expect((await tn.broadcast(crafter.combine(unsigned, signatures))).outcome).to.equal('ACCEPTED');
  }

  before(async () => {
    node = await TonSandboxNode.start();
    const payer = paying(adapter);
    if (payer.spendModel !== 'sequence') throw new Error('TON is a sequence chain');
    tn = payer.createTransferNode({ url: node.url }) as TonTransferNode;
    crafter = payer.transfers;
    hot = adapter.address.addressFromPublicKey(await keys.getPublicKey(hotRef));
    const user = await node.blockchain.treasury('user');
    await user.send({ to: Address.parse(hot), value: toNano('5'), bounce: false });
  });
  after(async () => {
    await node?.close();
  });

  it('AGREES for a wallet not deployed yet (seqno 0) with nothing signed', async () => {
    expect(await tn.senderCheck(hot, memoryLedger())).to.deep.equal({ kind: 'AGREES' });
  });

  it('AHEAD when the wallet sent more than the database signed (nothing signed, or fewer); AGREES when it knows them all', async () => {
    await pay();
    await pay();
    expect(await tn.nextSequence(hot)).to.equal(2n);
    const none = await tn.senderCheck(hot, memoryLedger());
    expect(none.kind).to.equal('AHEAD');
    expect((none as Extract<SenderCheck, { kind: 'AHEAD' }>).evidence).to.deep.equal({ kind: 'SEQUENCE', databaseNext: null, chainNext: 2n, pendingNext: null });
    const one = await tn.senderCheck(hot, memoryLedger({ nextSequences: new Map([[hot, 1n]]) }));
    expect((one as Extract<SenderCheck, { kind: 'AHEAD' }>).summary).to.contain("database's next is 1");
    const ledger = memoryLedger({ nextSequences: new Map([[hot, 2n]]) });
    expect(await tn.senderCheck(hot, ledger)).to.deep.equal({ kind: 'AGREES' });
    expect(ledger.calls).to.deep.equal(['nextSequences']);
  });
});
