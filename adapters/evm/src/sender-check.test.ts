import { expect } from 'chai';
import { Wallet, getAddress, hexlify, randomBytes } from 'ethers';
import { ChainRpcError, type SenderCheck } from '@wcs/core';
import { memoryLedger, rejected } from '@wcs/core/testing';
import { mine, sendNative, setAutomine, startAnvil, type AnvilDevnet } from './devnet';
import { EvmTransferNode } from './index';

const ETHER = 10n ** 18n;
const fresh = () => getAddress(hexlify(randomBytes(20)));

describe('EvmTransferNode.senderCheck against anvil: the nonce on chain against the database\'s next', function () {
  this.timeout(60_000);
  let anvil: AnvilDevnet;
  let node: EvmTransferNode;

  /** A new key with 1 ETH, whose transactions the test sends itself. */
  async function fundedWallet(): Promise<Wallet> {
    const w = Wallet.createRandom();
    await sendNative(anvil.url, w.address, ETHER);
    return new Wallet(w.privateKey);
  }
  const send = (w: Wallet, wait = true) => sendNative(anvil.url, fresh(), 1000n, { fromPrivateKey: w.privateKey, wait });

  before(async () => {
    anvil = await startAnvil({ extraArgs: ['--hardfork', 'cancun'] });
    node = new EvmTransferNode({ url: anvil.url, timeoutMs: 10_000 }, { expectedChainId: 31337 });
  });
  after(async () => {
    await anvil?.stop();
  });

  it('AGREES for an account that never sent, with nothing signed in the database', async () => {
    const w = await fundedWallet();
    expect(await node.senderCheck(w.address, memoryLedger())).to.deep.equal({ kind: 'AGREES' });
  });

  it('AGREES when the database signed every transaction the chain has; AHEAD when it knows fewer (the nonce on chain, mined)', async () => {
    const w = await fundedWallet();
    await send(w);
    await send(w);
    const agree = memoryLedger({ nextSequences: new Map([[w.address, 2n]]) });
    expect(await node.senderCheck(w.address, agree)).to.deep.equal({ kind: 'AGREES' });
    // the database ahead of the chain (signed, not yet sent) is not the chain ahead
    expect(await node.senderCheck(w.address, memoryLedger({ nextSequences: new Map([[w.address, 5n]]) }))).to.deep.equal({ kind: 'AGREES' });

    const behind = await node.senderCheck(w.address, memoryLedger({ nextSequences: new Map([[w.address, 1n]]) }));
    expect(behind.kind).to.equal('AHEAD');
    const ahead = behind as Extract<SenderCheck, { kind: 'AHEAD' }>;
    expect(ahead.evidence).to.deep.equal({ kind: 'SEQUENCE', databaseNext: 1n, chainNext: 2n, pendingNext: 2n });
    expect(ahead.summary).to.contain(w.address).and.contain('2').and.contain("database's next is 1");

    // a restore to before the first payout: no allocator row, the chain has sent twice
    const none = await node.senderCheck(w.address, memoryLedger());
    expect(none.kind).to.equal('AHEAD');
    expect((none as Extract<SenderCheck, { kind: 'AHEAD' }>).evidence).to.deep.equal({ kind: 'SEQUENCE', databaseNext: null, chainNext: 2n, pendingNext: 2n });
  });

  it('AHEAD for a transaction only in the node\'s pool (pending nonce past the database, latest not)', async () => {
    const w = await fundedWallet();
    await send(w);
    await setAutomine(anvil.url, false);
    try {
      await send(w, false);
      const check = await node.senderCheck(w.address, memoryLedger({ nextSequences: new Map([[w.address, 1n]]) }));
      expect(check.kind).to.equal('AHEAD');
      expect((check as Extract<SenderCheck, { kind: 'AHEAD' }>).evidence).to.deep.equal({ kind: 'SEQUENCE', databaseNext: 1n, chainNext: 1n, pendingNext: 2n });
      expect((check as Extract<SenderCheck, { kind: 'AHEAD' }>).summary).to.contain("with the node's pool");
    } finally {
      await setAutomine(anvil.url, true);
      await mine(anvil.url, 1);
    }
  });

  it('reads the database after the node: a transaction the service signs and sends meanwhile is not taken for the chain ahead', async () => {
    const w = await fundedWallet();
    let next = 0n;
    // the "service" signs and sends one transaction while the check runs, storing it first (as
    // the pipeline does): when the ledger is read, it already knows it
    const ledger = memoryLedger({}, async (m) => {
      if (m !== 'nextSequences' || next > 0n) return;
      next = 1n;
      ledger.state.nextSequences.set(w.address, next);
      await send(w);
    });
    expect(await node.senderCheck(w.address, ledger)).to.deep.equal({ kind: 'AGREES' });
    expect(ledger.calls).to.deep.equal(['nextSequences']);
    // the next check sees it on chain and in the database
    expect(await node.senderCheck(w.address, ledger)).to.deep.equal({ kind: 'AGREES' });
  });

  it('senderChecks: many senders in one batch and one ledger read, each answered in order', async () => {
    const [a, b, c] = [await fundedWallet(), await fundedWallet(), await fundedWallet()];
    await send(b);
    await send(c);
    const ledger = memoryLedger({ nextSequences: new Map([[c.address, 1n]]) });
    const answers = await node.senderChecks([a.address, b.address, c.address], ledger);
    expect(answers.map((x) => (x instanceof Error ? 'error' : x.kind))).to.deep.equal(['AGREES', 'AHEAD', 'AGREES']);
    expect(ledger.calls).to.deep.equal(['nextSequences']);
    expect(await node.senderChecks([], ledger)).to.deep.equal([]);
    await rejected(node.senderChecks(['0x1234'], ledger), TypeError);
  });

  it('a node fault is thrown as a coded error, not an answer', async () => {
    const dead = new EvmTransferNode({ url: 'http://127.0.0.1:1', timeoutMs: 500 }, { expectedChainId: 31337 });
    await rejected(dead.senderCheck(fresh(), memoryLedger()), ChainRpcError);
  });
});
