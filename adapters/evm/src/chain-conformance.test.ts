import { getAddress, hexlify, randomBytes } from 'ethers';
import { runChainConformance, signersByAddress, testChain } from '@wcs/core/testing';
import { anvilRpc, mine, sendNative, setAutomine, startAnvil } from './devnet';
import { testKey } from './keys.test-helper';
import { plugin } from './index';

/**
 * The shared chain suite on a local anvil (the real EVM), mining on demand: a deposit of 1.5 ETH
 * to a deposit key mined at a known height, a payout from a funded hot key to a fresh address,
 * and a sweep of a deposit key's whole balance to the hot key at an exact fee (EIP-1559).
 */
const ANVIL = testChain({ id: 900, code: 'ANVIL', name: 'anvil devnet', family: 'evm', environment: 'test', network: 'anvil', nativeSymbol: 'ETH', decimals: 18, confirmations: 1, evmChainId: 31337 });
const ETHER = 10n ** 18n;

const hot = testKey(ANVIL, 7, 0, 'hot');
const deposit = testKey(ANVIL, 7, 0, 'deposit');
const swept = testKey(ANVIL, 7, 1, 'deposit');
const keys = new Map([hot, deposit, swept].map((k) => [k.address, k]));

runChainConformance({
  adapter: plugin.create(ANVIL),
  node: 'anvil (local, cancun, mined on demand)',
  balances: true,
  async start() {
    const anvil = await startAnvil({ extraArgs: ['--hardfork', 'cancun'] });
    await setAutomine(anvil.url, false);
    const url = anvil.url;
    await sendNative(url, hot.address, 10n * ETHER, { wait: false });
    await sendNative(url, swept.address, 2n * ETHER, { wait: false });
    await mine(url, 1);
    const txHash = await sendNative(url, deposit.address, 1_500_000_000_000_000_000n, { wait: false });
    await mine(url, 1);
    const height = BigInt(await anvilRpc<string>(url, 'eth_blockNumber'));
    await mine(url, 2);
    return {
      endpoint: { url },
      deposit: { address: deposit.address, height, expected: { txHash, toAddress: deposit.address, memo: null, contract: null, amount: 1_500_000_000_000_000_000n, succeeded: true } },
      transfer: { from: hot, to: getAddress(hexlify(randomBytes(20))), memo: null, contract: null, amount: 12_345_678_901_234n, live: true,
        // read by anvil's own eth_getBalance, not through the adapter
        balanceOf: async (address) => BigInt(await anvilRpc<string>(url, 'eth_getBalance', [address, 'latest'])),
      },
      sweep: { from: swept, hot, residual: 0n },
      // what the setup paid each key (and nothing to a fresh address)
      balances: {
        expected: [
          { query: { address: hot.address, contract: null }, answer: { kind: 'AMOUNT', amount: 10n * ETHER } },
          { query: { address: getAddress(hexlify(randomBytes(20))), contract: null }, answer: { kind: 'AMOUNT', amount: 0n } },
          { query: { address: deposit.address, contract: null }, answer: { kind: 'AMOUNT', amount: 1_500_000_000_000_000_000n } },
          { query: { address: swept.address, contract: null }, answer: { kind: 'AMOUNT', amount: 2n * ETHER } },
        ],
        badAddress: '0x123',
      },
      sign: signersByAddress([...keys].map(([address, k]) => [address, (p: Uint8Array) => k.sign(p)] as const)),
      settle: () => mine(url, 1),
      close: () => anvil.stop(),
    };
  },
});
