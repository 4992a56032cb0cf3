import { expect } from 'chai';
import { LiteSVM } from 'litesvm';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import type { ReplayServer } from '@wcs/core/testing';
import { SolanaBalanceReader } from './balances';
import { base58Encode } from './transfer';
import { LitesvmRpc, serveLitesvmRpc } from './litesvm-rpc.test-helper';

/**
 * SolanaBalanceReader.nativeChanges (reconciliation books the lamports a service transaction moved
 * beyond its records, e.g. token-account rent): on litesvm behind the package's RPC helper, a real
 * System transfer: each side's change, fee included for the payer; nothing before the transaction
 * is finalized; 0 for an address it does not list; bad input refused before any node call.
 */
type Address = Parameters<LiteSVM['getBalance']>[0];

describe('SolanaBalanceReader.nativeChanges (litesvm)', function () {
  this.timeout(60_000);
  let svm: LiteSVM;
  let rpc: LitesvmRpc;
  let server: ReplayServer;
  let reader: SolanaBalanceReader;
  const payer = Keypair.generate();
  const to = Keypair.generate().publicKey.toBase58();
  const stranger = Keypair.generate().publicKey.toBase58();

  before(async () => {
    svm = new LiteSVM();
    rpc = new LitesvmRpc(svm);
    server = await serveLitesvmRpc(rpc);
    reader = new SolanaBalanceReader({ url: server.url });
    svm.airdrop(payer.publicKey.toBase58() as Address, 5_000_000_000n as never);
  });

  after(async () => {
    await server?.close();
  });

  it('a transfer: the payer loses amount + fee, the recipient gains the amount, an address not in it 0; null until finalized and for an unknown signature', async () => {
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: svm.latestBlockhash() })
      .add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: new PublicKey(to), lamports: 1_234_567n }));
    tx.sign(payer);
    const before = svm.getBalance(payer.publicKey.toBase58() as Address)!;
    const sent = rpc.send(tx.serialize());
    if (!('signature' in sent)) throw new Error(JSON.stringify(sent.error));
    const after = svm.getBalance(payer.publicKey.toBase58() as Address)!;
    const items = [{ txHash: sent.signature, address: payer.publicKey.toBase58() }, { txHash: sent.signature, address: to }, { txHash: sent.signature, address: stranger }];
    expect(await reader.nativeChanges(items), 'not finalized yet').to.deep.equal([null, null, null]);
    rpc.finalize();
    expect(await reader.nativeChanges(items)).to.deep.equal([after - before, 1_234_567n, 0n]);
    expect(after - before).to.equal(-(1_234_567n + 5000n));
    const unknown = Keypair.generate();
    const other = new Transaction({ feePayer: unknown.publicKey, recentBlockhash: svm.latestBlockhash() })
      .add(SystemProgram.transfer({ fromPubkey: unknown.publicKey, toPubkey: new PublicKey(to), lamports: 1n }));
    other.sign(unknown);
    const never = other.signatures[0]!.signature!;
    expect(await reader.nativeChanges([{ txHash: base58Encode(never), address: to }]), 'never executed').to.deep.equal([null]);
  });

  it('bad input is refused before any node call; an empty list answers [] without one', async () => {
    const calls = server.requests.length;
    expect(await reader.nativeChanges([])).to.deep.equal([]);
    for (const bad of [[{ txHash: 'not a signature', address: to }], [{ txHash: '1'.repeat(64), address: '0xdeadbeef' }], 'x']) {
      let err: unknown = null;
      try {
        await reader.nativeChanges(bad as never);
      } catch (e) {
        err = e;
      }
      expect(err, JSON.stringify(bad)).to.be.instanceOf(TypeError);
    }
    expect(server.requests.length).to.equal(calls);
  });
});
