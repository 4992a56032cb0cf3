import { expect } from 'chai';
import { LiteSVM } from 'litesvm';
import { PublicKey as SolanaPublicKey, SystemProgram, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import { ChainRpcError, type SenderCheck } from '@wcs/core';
import { memoryLedger, rejected, type ReplayServer } from '@wcs/core/testing';
import { LitesvmRpc, serveLitesvmRpc } from './litesvm-rpc.test-helper';
import { SIGNATURE_PAGE } from './sender-check';
import { base58Encode } from './transfer';
import { SolanaTransferNode } from './transfer-node';
import { depositKey, hotKey } from './transfer.test';

type Key = ReturnType<typeof hotKey>;
type Address = Parameters<LiteSVM['getBalance']>[0];
const addr = (s: string): Address => s as Address;

/**
 * SolanaTransferNode.senderCheck against a JSON-RPC endpoint over litesvm (the Solana runtime in
 * process; litesvm-rpc.test-helper.ts): the hot wallet's transactions, sent and received, are
 * real ones the runtime executed.
 */
describe('SolanaTransferNode.senderCheck (litesvm): the sender\'s recent signatures against the database\'s transactions', () => {
  let svm: LiteSVM;
  let rpc: LitesvmRpc;
  let server: ReplayServer;
  let node: SolanaTransferNode;
  const hot = hotKey(21);
  const funder = depositKey(22);
  const other = depositKey(23);
  let n = 0;

  /** A system transfer signed by `signers` (the first pays the fee), executed: its signature. */
  function transfer(from: Key, to: string, signers: Key[] = [from]): string {
    const message = new TransactionMessage({
      payerKey: new SolanaPublicKey(signers[0]!.address),
      recentBlockhash: svm.latestBlockhash(),
      instructions: [SystemProgram.transfer({ fromPubkey: new SolanaPublicKey(from.address), toPubkey: new SolanaPublicKey(to), lamports: 1_000 + n++ })],
    }).compileToLegacyMessage();
    const tx = new VersionedTransaction(message);
    const bytes = message.serialize();
    tx.signatures = message.staticAccountKeys.slice(0, message.header.numRequiredSignatures).map((k) => signers.find((s) => s.address === k.toBase58())!.sign(bytes).bytes);
    const answer = rpc.answer({ id: 1, method: 'sendTransaction', params: [Buffer.from(tx.serialize()).toString('base64')] });
    expect(answer.error, JSON.stringify(answer.error)).to.equal(undefined);
    expect(answer.result).to.equal(base58Encode(tx.signatures[0]!));
    return answer.result as string;
  }
  const reads = (method: string) => server.requests.flatMap((r) => [JSON.parse(r.body)].flat()).filter((c: { method: string }) => c.method === method).length;
  const ahead = (c: SenderCheck) => {
    expect(c.kind, JSON.stringify(c)).to.equal('AHEAD');
    return c as Extract<SenderCheck, { kind: 'AHEAD' }>;
  };

  beforeEach(async () => {
    svm = new LiteSVM();
    for (const k of [hot, funder, other]) svm.airdrop(addr(k.address), 10_000_000_000n as never);
    rpc = new LitesvmRpc(svm);
    server = await serveLitesvmRpc(rpc);
    node = new SolanaTransferNode({ url: server.url });
  });
  afterEach(async () => {
    await server?.close();
  });

  it('AGREES with no history, and with payments received only (each read once, then remembered)', async () => {
    expect(await node.senderCheck(hot.address, memoryLedger())).to.deep.equal({ kind: 'AGREES' });
    transfer(funder, hot.address);
    transfer(other, hot.address);
    const ledger = memoryLedger();
    expect(await node.senderCheck(hot.address, ledger)).to.deep.equal({ kind: 'AGREES' });
    expect(reads('getTransaction')).to.equal(2);
    expect(await node.senderCheck(hot.address, ledger)).to.deep.equal({ kind: 'AGREES' });
    expect(reads('getTransaction'), 'received payments are not read again').to.equal(2);
    expect(ledger.calls).to.deep.equal(['knownTransactions', 'knownTransactions']);
  });

  it('AHEAD for a transaction the sender signed that the database does not know; AGREES once it knows it', async () => {
    transfer(funder, hot.address);
    const mine = transfer(hot, other.address);
    const lost = transfer(hot, other.address);
    const ledger = memoryLedger({ known: new Set([mine]) });
    const found = ahead(await node.senderCheck(hot.address, ledger));
    expect(found.evidence).to.deep.equal({ kind: 'UNKNOWN_TRANSACTIONS', transactions: [lost] });
    expect(found.summary).to.contain(hot.address).and.contain(lost);
    ledger.state.known.add(lost);
    expect(await node.senderCheck(hot.address, ledger)).to.deep.equal({ kind: 'AGREES' });
  });

  it('a transaction the sender signed without paying its fee is the sender\'s too; one it only paid the fee of is known by its hash', async () => {
    const cosigned = transfer(hot, other.address, [funder, hot]); // funder pays, hot signs for its lamports
    expect(ahead(await node.senderCheck(hot.address, memoryLedger())).evidence).to.deep.equal({ kind: 'UNKNOWN_TRANSACTIONS', transactions: [cosigned] });
    const sweep = transfer(other, hot.address, [hot, other]); // a sweep into the hot wallet, which pays the fee
    expect(ahead(await node.senderCheck(hot.address, memoryLedger({ known: new Set([cosigned]) }))).evidence).to.deep.equal({ kind: 'UNKNOWN_TRANSACTIONS', transactions: [sweep] });
    expect(await node.senderCheck(hot.address, memoryLedger({ known: new Set([cosigned, sweep]) }))).to.deep.equal({ kind: 'AGREES' });
  });

  it(`a full page (${SIGNATURE_PAGE}) of received payments the database does not know is UNCHECKED; one it knows in the page makes it AGREES`, async () => {
    const first = transfer(hot, other.address);
    for (let i = 0; i < SIGNATURE_PAGE; i++) transfer(funder, hot.address);
    const unchecked = await node.senderCheck(hot.address, memoryLedger({ known: new Set([first]) }));
    expect(unchecked.kind).to.equal('UNCHECKED');
    expect((unchecked as Extract<SenderCheck, { kind: 'UNCHECKED' }>).reason).to.contain('older ones are not read');
    const mine = transfer(hot, other.address);
    expect(await node.senderCheck(hot.address, memoryLedger({ known: new Set([first, mine]) }))).to.deep.equal({ kind: 'AGREES' });
  });

  it('senderChecks: many senders in one batch, the database read once; what is not one sender\'s may be another\'s', async () => {
    const paid = transfer(other, hot.address); // other's: a payment hot received
    const ledger = memoryLedger();
    expect(await node.senderCheck(hot.address, ledger)).to.deep.equal({ kind: 'AGREES' });
    const before = server.requests.length;
    const answers = await node.senderChecks([hot.address, other.address, funder.address], ledger);
    expect(answers.map((a) => (a instanceof Error ? a.message : a.kind))).to.deep.equal(['AGREES', 'AHEAD', 'AGREES']);
    expect((answers[1] as Extract<SenderCheck, { kind: 'AHEAD' }>).evidence).to.deep.equal({ kind: 'UNKNOWN_TRANSACTIONS', transactions: [paid] });
    expect(server.requests.length - before, 'two round trips: the signatures, then the one transaction not read yet for other').to.equal(2);
    expect(ledger.calls).to.deep.equal(['knownTransactions', 'knownTransactions']);
    expect(await node.senderChecks([], ledger)).to.deep.equal([]);
  });

  it('refuses a sender that is not a Solana address; a node fault is thrown', async () => {
    await rejected(node.senderCheck('0xnot-solana', memoryLedger()), TypeError);
    const dead = new SolanaTransferNode({ url: 'http://127.0.0.1:1', timeoutMs: 300 });
    await rejected(dead.senderCheck(hot.address, memoryLedger()), ChainRpcError);
  });
});
