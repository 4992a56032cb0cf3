import { expect } from 'chai';
import { Transaction } from 'bitcoinjs-lib';
import { outpointKey, type KeyRef, type Outpoint, type SenderCheck, type SpendableOutput, type UnsignedTransfer } from '@wcs/core';
import { memoryLedger, rejected, toHex } from '@wcs/core/testing';
import { startRegtest, type RegtestNode } from './regtest';
import { addressScript, plugin, resolveNetwork, type BitcoinTransferNode } from './index';
import { BTC_REGTEST_RB } from './fixtures.test-helper';
import { TestKeyStore, randomPublicKey } from './keystore.test-helper';
import { bitcoinCrafter, bitcoinNode, crafted } from './spending.test-helper';

const adapter = plugin.create(BTC_REGTEST_RB);
const NETWORK = resolveNetwork(BTC_REGTEST_RB);
const crafter = bitcoinCrafter(adapter);
const keys = new TestKeyStore();
const elsewhere = () => adapter.address.addressFromPublicKey({ curve: 'secp256k1', bytes: randomPublicKey() });

describe('BitcoinTransferNode.senderCheck on a bcoin regtest node: the outputs the database believes unspent', function () {
  this.timeout(60_000);
  let node: RegtestNode;
  let transfers: BitcoinTransferNode;
  const ref: KeyRef = { applicationId: 9, spec: adapter.keySpec('hot'), purpose: 'hot', index: 1 };
  let hot: string;
  const outputs: SpendableOutput[] = [];

  /** A payment from the hot key spending `inputs`, sent to the node: what a transaction the database lost looks like. */
  async function spend(inputs: readonly SpendableOutput[]): Promise<string> {
    const publicKey = await keys.getPublicKey(ref);
    const req = { from: hot, fromPublicKey: publicKey, to: elsewhere(), memo: null, contract: null, amount: 5_000n, inputs, changeAddress: hot };
    const unsigned: UnsignedTransfer = crafted(crafter, req, await transfers.transferInput(req));
    const sigs = [];
    for (const p of unsigned.payloads) sigs.push(await keys.sign(ref, p));
    const signed = crafter.combine(unsigned, sigs);
    expect((await transfers.broadcast(signed)).outcome).to.equal('ACCEPTED');
    return signed.txHash;
  }
  const believed = (...os: Outpoint[]) => new Map([[hot, os.map((o) => ({ txHash: o.txHash, vout: o.vout }))]]);

  before(async function () {
    this.timeout(120_000);
    node = await startRegtest();
    transfers = bitcoinNode(adapter, { url: node.url });
    hot = adapter.address.addressFromPublicKey(await keys.getPublicKey(ref));
    const script = toHex(addressScript(hot, NETWORK));
    for (const sats of [100_000n, 90_000n, 80_000n, 70_000n]) {
      const txid = await node.send(hot, sats);
      const tx = Transaction.fromHex(await node.rpc<string>('getrawtransaction', [txid, false]));
      outputs.push({ txHash: txid, vout: tx.outs.findIndex((o) => toHex(o.script) === script && o.value === sats), amount: sats });
    }
    await node.mine(1);
  });
  after(async () => {
    await node?.stop();
  });

  it('AGREES while every believed-unspent output is unspent, and with nothing believed unspent', async () => {
    expect(await transfers.senderCheck(hot, memoryLedger({ unspent: believed(...outputs) }))).to.deep.equal({ kind: 'AGREES' });
    const none = memoryLedger();
    expect(await transfers.senderCheck(hot, none)).to.deep.equal({ kind: 'AGREES' });
    expect(none.calls).to.deep.equal(['unspentOutputs']);
  });

  it('AHEAD when a believed-unspent output is spent by a transaction the database does not know', async () => {
    const [lost] = outputs.splice(0, 1);
    await spend([lost!]);
    // mined: bcoin's gettxout, unlike Bitcoin Core's, does not leave out an output its mempool spends
    await node.mine(1);
    const ledger = memoryLedger({ unspent: believed(lost!, ...outputs) });
    const found = await transfers.senderCheck(hot, ledger);
    expect(found.kind).to.equal('AHEAD');
    const ahead = found as Extract<SenderCheck, { kind: 'AHEAD' }>;
    expect(ahead.evidence).to.deep.equal({ kind: 'SPENT_OUTPUTS', outputs: [{ txHash: lost!.txHash, vout: lost!.vout }] });
    expect(ahead.summary).to.contain(hot).and.contain(outpointKey(lost!)).and.contain('1 of');
    expect(ledger.calls).to.deep.equal(['unspentOutputs', 'spentByService']);
    // the database knows the spend (its own transfer): AGREES
    ledger.state.spentByService.add(outpointKey(lost!));
    expect(await transfers.senderCheck(hot, ledger)).to.deep.equal({ kind: 'AGREES' });
  });

  it('a spend the service signs (marking the output spent) and sends while the check runs is its own, not the chain ahead', async () => {
    const [mine] = outputs.splice(0, 1);
    let sent = false;
    const ledger = memoryLedger({ unspent: believed(mine!, ...outputs) }, async (m) => {
      // the service signs (marking the output spent, in its signing transaction) and sends, just after the database was read
      if (m !== 'unspentOutputs' || sent) return;
      sent = true;
      ledger.state.spentByService.add(outpointKey(mine!));
      await spend([mine!]);
      await node.mine(1);
    });
    expect(await transfers.senderCheck(hot, ledger)).to.deep.equal({ kind: 'AGREES' });
  });

  it('an output whose own transaction the node no longer has (reorged out, dropped) is gone, not spent: AGREES', async () => {
    const ghost = { txHash: '11'.repeat(32), vout: 0 };
    expect(await transfers.senderCheck(hot, memoryLedger({ unspent: believed(ghost, ...outputs) }))).to.deep.equal({ kind: 'AGREES' });
  });

  it('refuses a sender that is not an address of the chain; a node fault is thrown', async () => {
    await rejected(transfers.senderCheck('bc1-not-an-address', memoryLedger()), TypeError);
    const dead = bitcoinNode(adapter, { url: 'http://127.0.0.1:1', timeoutMs: 300 });
    await rejected(dead.senderCheck(hot, memoryLedger({ unspent: believed(...outputs) })), Error);
  });
});
