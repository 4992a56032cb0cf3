/**
 * Timing of EvmBlockScanner.scanRange over 100 anvil blocks against a bare per-block loop
 * (eth_getBlockByNumber + eth_getLogs per block, one HTTP request each, as a naive scanner does).
 * Run: npx tsc -b adapters/evm && node adapters/evm/dist/bench/scan-range.js
 * (BLOCKS=100 TXS_PER_BLOCK=10 by default; at most 10 transactions a block, one per dev account.)
 * Not a test (no assertions on time); prints the medians.
 */
import { getAddress, hexlify, randomBytes, Wallet } from 'ethers';
import { ANVIL_DEV_KEYS, anvilRpc, deployErc20, mintErc20, setAutomine, startAnvil, waitForReceipt } from '../devnet';
import { ERC20_TRANSFER_TOPIC, EvmBlockScanner } from '../scanner';

const BLOCKS = Number(process.env.BLOCKS ?? 100);
const TXS_PER_BLOCK = Number(process.env.TXS_PER_BLOCK ?? 10);
const WATCHED = 10_000;
const RUNS = 7;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const anvil = await startAnvil({ accounts: 10 });
  const url = anvil.url;
  try {
    const token = await deployErc20(url, { name: 'Bench', symbol: 'BNCH' });
    const senders = ANVIL_DEV_KEYS.map((k) => new Wallet(k).address);
    for (const s of senders) await waitForReceipt(url, await mintErc20(url, token, s, 10n ** 30n));
    const watchedList = Array.from({ length: WATCHED }, () => getAddress(hexlify(randomBytes(20))));
    const watched = new Set(watchedList);
    const transferData = (to: string, amount: bigint) => '0xa9059cbb' + to.slice(2).toLowerCase().padStart(64, '0') + amount.toString(16).padStart(64, '0');

    // 100 blocks of 10 transactions: natives and token transfers, half of them to watched addresses.
    await setAutomine(url, false);
    const from = BigInt(await anvilRpc<string>(url, 'eth_blockNumber')) + 1n;
    for (let b = 0; b < BLOCKS; b++) {
      const batch = Array.from({ length: TXS_PER_BLOCK }, (_, i) => {
        const to = i % 2 === 0 || TXS_PER_BLOCK === 1 ? watchedList[(b * TXS_PER_BLOCK + i) % WATCHED]! : getAddress(hexlify(randomBytes(20)));
        const tx = i % 4 < 2
          ? { from: senders[i]!, to, value: '0x' + (1000 + i).toString(16) }
          : { from: senders[i]!, to: token, data: transferData(to, BigInt(1000 + i)), gas: '0x20000' };
        return { jsonrpc: '2.0', id: i, method: 'eth_sendTransaction', params: [tx] };
      });
      const res = (await (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(batch) })).json()) as Array<{ error?: unknown }>;
      const failed = res.find((r) => r.error);
      if (failed) throw new Error(`eth_sendTransaction: ${JSON.stringify(failed.error)}`);
      await anvilRpc(url, 'evm_mine');
    }
    await setAutomine(url, true);
    const to = from + BigInt(BLOCKS) - 1n;

    const scanner = new EvmBlockScanner({ url });
    let found = 0;
    const batched: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      const t = performance.now();
      const { transfers } = await scanner.scanRange(from, to, watched);
      batched.push(performance.now() - t);
      found = transfers.length;
    }

    // The bare loop: one request per call, one block at a time (plus receipts of matching natives, as scanRange does).
    const lower = new Set(watchedList.map((a) => a.toLowerCase()));
    let loopFound = 0;
    const loop: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      const t = performance.now();
      loopFound = 0;
      for (let h = from; h <= to; h++) {
        const hex = '0x' + h.toString(16);
        const block = await anvilRpc<{ transactions: Array<{ to: string | null; value: string; hash: string }> }>(url, 'eth_getBlockByNumber', [hex, true]);
        const logs = await anvilRpc<Array<{ topics: string[] }>>(url, 'eth_getLogs', [{ fromBlock: hex, toBlock: hex, topics: [ERC20_TRANSFER_TOPIC] }]);
        for (const tx of block.transactions) {
          if (tx.to && lower.has(tx.to.toLowerCase()) && BigInt(tx.value) > 0n) {
            await anvilRpc(url, 'eth_getTransactionReceipt', [tx.hash]);
            loopFound++;
          }
        }
        for (const log of logs) if (log.topics.length === 3 && lower.has('0x' + log.topics[2]!.slice(26))) loopFound++;
      }
      loop.push(performance.now() - t);
    }
    if (loopFound !== found) throw new Error(`the two scans disagree: ${found} vs ${loopFound}`);
    console.log(`${BLOCKS} blocks x ${TXS_PER_BLOCK} txs, ${WATCHED} watched addresses, ${found} deposits found, median of ${RUNS} runs:`);
    console.log(`  scanRange (batched):                              ${median(batched).toFixed(1)} ms`);
    console.log(`  per-block loop (getBlockByNumber + getLogs each): ${median(loop).toFixed(1)} ms`);
  } finally {
    await anvil.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
