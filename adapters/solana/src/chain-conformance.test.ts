import { Keypair, PublicKey as SolanaPublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { LiteSVM } from 'litesvm';
import type { TransferKey } from '@wcs/core';
import { runChainConformance, signersByAddress, testChain } from '@wcs/core/testing';
import { LitesvmRpc, serveLitesvmRpc } from './litesvm-rpc.test-helper';
import { depositKey, hotKey, type TestKey } from './transfer.test';
import { plugin } from './index';

/**
 * The shared chain suite on litesvm (the Solana runtime, in process) behind a local JSON-RPC
 * endpoint (litesvm-rpc.test-helper.ts): what is sent is executed and confirmed at once, and
 * finalized by settle(); the scanner reads finalized history only. Keys are the test mnemonic's
 * (ed25519 over the message, as the KeyStore signs). The cases: a deposit of 1.5 SOL to a deposit
 * key, a system transfer made and signed by @solana/web3.js and finalized before the suite reads
 * it; a payout of 1 234 567 lamports from the funded hot key to a fresh address, its balance read
 * from the runtime; a sweep of every lamport of a deposit key holding SOL only, the hot key paying
 * the fee.
 */
const SOL_LITESVM = testChain({ id: 105, code: 'SOL', name: 'Solana (litesvm)', family: 'solana', environment: 'test', network: 'devnet', nativeSymbol: 'SOL', decimals: 9, confirmations: 1 });
type Address = Parameters<LiteSVM['getBalance']>[0];
const addr = (s: string): Address => s as Address;
const SOL = 1_000_000_000n;

const hot = hotKey(0);
const deposit = depositKey(0);
const swept = depositKey(1);
const keys = new Map([hot, deposit, swept].map((k) => [k.address, k]));
const transferKey = (k: TestKey): TransferKey => ({ address: k.address, publicKey: { curve: 'ed25519', bytes: k.publicKey } });

runChainConformance({
  adapter: plugin.create(SOL_LITESVM),
  node: 'litesvm (local, behind a JSON-RPC endpoint; settle() finalizes)',
  // another account may pay the fee: the sweep's hot wallet does
  separateFeePayer: true,
  balances: true,
  async start() {
    const svm = new LiteSVM();
    const rpc = new LitesvmRpc(svm);
    svm.airdrop(addr(hot.address), (10n * SOL) as never);
    svm.airdrop(addr(swept.address), 2_500_000_123n as never);
    // the deposit: a system transfer from a key of nobody's, built and signed by @solana/web3.js
    const payer = Keypair.generate();
    svm.airdrop(addr(payer.publicKey.toBase58()), (5n * SOL) as never);
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: svm.latestBlockhash() })
      .add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: new SolanaPublicKey(deposit.address), lamports: 1_500_000_000n }));
    tx.sign(payer);
    const sent = rpc.send(tx.serialize());
    if ('error' in sent) throw new Error(`the deposit was not executed: ${JSON.stringify(sent.error)}`);
    rpc.finalize();
    const server = await serveLitesvmRpc(rpc);
    return {
      endpoint: { url: server.url },
      deposit: { address: deposit.address, expected: { txHash: sent.signature, toAddress: deposit.address, memo: null, contract: null, amount: 1_500_000_000n, succeeded: true } },
      transfer: {
        from: transferKey(hot), to: Keypair.generate().publicKey.toBase58(), memo: null, contract: null, amount: 1_234_567n, live: true,
        // the runtime's own account, not the adapter's reading
        balanceOf: async (address) => rpc.lamportsOf(address),
      },
      sweep: { from: transferKey(swept), hot: transferKey(hot), residual: 0n },
      // what the setup gave each key; a fresh address has no account (NO_ACCOUNT)
      balances: {
        expected: [
          { query: { address: hot.address, contract: null }, answer: { kind: 'AMOUNT', amount: 10n * SOL } },
          { query: { address: Keypair.generate().publicKey.toBase58(), contract: null }, answer: { kind: 'NO_ACCOUNT' } },
          { query: { address: deposit.address, contract: null }, answer: { kind: 'AMOUNT', amount: 1_500_000_000n } },
          { query: { address: swept.address, contract: null }, answer: { kind: 'AMOUNT', amount: 2_500_000_123n } },
        ],
        badAddress: '0x52908400098527886E0F7030069857D2E4169EE7',
      },
      sign: signersByAddress([...keys].map(([address, k]) => [address, (p: Uint8Array) => k.sign(p)] as const)),
      settle: async () => rpc.finalize(),
      close: () => server.close(),
    };
  },
});
