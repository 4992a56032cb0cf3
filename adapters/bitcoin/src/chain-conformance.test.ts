import type { KeyPurpose, KeyRef, TransferKey } from '@wcs/core';
import { runChainConformance, signersByAddress } from '@wcs/core/testing';
import { startRegtest } from './regtest';
import { plugin } from './index';
import { BTC_REGTEST_RB } from './fixtures.test-helper';
import { TestKeyStore } from './keystore.test-helper';

/**
 * The shared chain suite on a bcoin regtest node (a real full node in a child process, segwit
 * active, blocks mined on demand; settle() mines one). Keys are the test key store's (the
 * KeyStore's secp256k1 contract: low-S r || s and a recovery id over each input's digest), funded
 * by the node's wallet. The cases: a deposit of 1.5 BTC to a deposit key's P2WPKH address mined
 * at a known height; a payout from a hot key (two confirmed outputs) to a fresh address of the
 * node's wallet, whose balance the wallet reports (getreceivedbyaddress, confirmed); a sweep
 * (consolidation, fee out of the sum) of a deposit key's two confirmed outputs into the hot key.
 */
const adapter = plugin.create(BTC_REGTEST_RB);
const store = new TestKeyStore();

interface HeldKey extends TransferKey {
  readonly ref: KeyRef;
}

async function held(purpose: KeyPurpose, index: number): Promise<HeldKey> {
  const ref: KeyRef = { applicationId: 11, spec: adapter.keySpec(purpose), purpose, index };
  const publicKey = await store.getPublicKey(ref);
  return { ref, publicKey, address: adapter.address.addressFromPublicKey(publicKey) };
}

runChainConformance({
  adapter,
  node: 'bcoin regtest (local, mined on demand)',
  balances: true,
  async start() {
    const [hot, deposit, swept] = await Promise.all([held('hot', 0), held('deposit', 0), held('deposit', 1)]);
    const keys = new Map([hot, deposit, swept].map((k) => [k.address, k]));
    const node = await startRegtest();
    try {
      for (const [k, sats] of [[hot, 100_000_000n], [hot, 50_000_000n], [swept, 30_000_000n], [swept, 4_000_000n]] as const) await node.send(k.address, sats);
      const txHash = await node.send(deposit.address, 150_000_000n);
      await node.mine(1);
      const height = BigInt(await node.rpc<number>('getblockcount'));
      const to = await node.newAddress();
      return {
        endpoint: { url: node.url },
        deposit: { address: deposit.address, height, expected: { txHash, toAddress: deposit.address, memo: null, contract: null, amount: 150_000_000n, succeeded: true } },
        transfer: {
          from: hot, to, memo: null, contract: null, amount: 12_345_678n, live: true,
          // the node's wallet (its own address: a fresh one, never paid before), confirmed coins only; not the adapter's reading
          balanceOf: async (address) => BigInt(Math.round((await node.walletRpc<number>('getreceivedbyaddress', [address, 1])) * 1e8)),
        },
        sweep: { from: swept, hot, residual: 0n },
        // what the setup paid each key, all mined (and nothing to a fresh address of the node's wallet)
        balances: {
          expected: [
            { query: { address: hot.address, contract: null }, answer: { kind: 'AMOUNT', amount: 150_000_000n } },
            { query: { address: to, contract: null }, answer: { kind: 'AMOUNT', amount: 0n } },
            { query: { address: deposit.address, contract: null }, answer: { kind: 'AMOUNT', amount: 150_000_000n } },
            { query: { address: swept.address, contract: null }, answer: { kind: 'AMOUNT', amount: 34_000_000n } },
          ],
          badAddress: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq',
        },
        sign: signersByAddress([...keys].map(([address, k]) => [address, (p: Uint8Array) => store.sign(k.ref, p)] as const)),
        settle: async () => {
          await node.mine(1);
        },
        close: () => node.stop(),
      };
    } catch (e) {
      await node.stop();
      throw e;
    }
  },
});
