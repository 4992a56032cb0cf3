/**
 * TON deposit detection catch-up: 1,000 transactions to the shared deposit address in @ton/sandbox
 * (900 Toncoin deposits with numeric comments, 100 jetton deposits), then, in the same run and
 * against the same node API over HTTP:
 * - bare: a loop reading the same transactions (getTransactions pages of 256, newest first, each
 *   page's JSON parsed (fetch, text, JSON.parse: the adapter's HTTP client's reading) and walked, paging on the oldest item's id), the floor of any scanner
 *   speaking this API;
 * - adapter: a new TonScanner of the adapter (as the service makes one for a catch-up) from no
 *   cursor, transfersSince(limit 100) until the cursor stops: every transaction's fields checked,
 *   ObservedTransfers with exact bigint amounts and memos, jetton notification bodies decoded, the
 *   jetton wallet verified with its master once per adapter (the verification is shared by the
 *   adapter's scanners of one endpoint, so after the warm-up round it is not asked again);
 * - cold: the same with a new adapter each round (a restarted service), so the jetton wallet is
 *   verified again: the reference jetton code's wallet and master cells (two getAddressInformation,
 *   the master's wallet address for the owner computed from StateInit);
 * - cold, get methods (for comparison, not under the bar): a new scanner that asks the get methods
 *   instead (readJettonCode: false; get_wallet_data and get_wallet_address, each ~5 ms of TVM
 *   emulation in @ton/sandbox plus the HTTP call, in this process), as any other jetton code is checked.
 * All 100 jetton deposits come from the one jetton wallet of the shared address for the jetton (a
 * notification is sent by the receiver's jetton wallet): a catch-up checks one wallet per jetton.
 * Rounds alternate; a ratio is bare time / adapter time of the medians (1.0: as fast as the bare
 * loop). The bar is at least 0.5, for `ratio` and `coldRatio`. Prints one JSON line; exit 1
 * when under the bar.
 */
import os from 'node:os';
import { Address, toNano } from '@ton/core';
import { TonAddresses, TonScanner, commentCell, plugin, tonScanner } from '../index';
import { TonSandboxNode } from '../test-support/sandbox-server';
import { deployJetton, testKeyStore, tonChain } from '../test-support/fixtures';

const TONCOIN = 900;
const JETTON = 100;
const ROUNDS = Number(process.env.ROUNDS ?? 7);

async function main(): Promise<void> {
  const node = await TonSandboxNode.start();
  try {
    const adapter = plugin.create(tonChain());
    const keys = testKeyStore();
    const shared = adapter.address.addressFromPublicKey(await keys.getPublicKey({ applicationId: 1, spec: adapter.keySpec('deposit'), purpose: 'deposit', index: 0 }));
    const to = Address.parse(shared);
    const user = await node.blockchain.treasury('bench user');
    const jetton = await deployJetton(node, await node.blockchain.treasury('bench admin'));
    await jetton.mint(user.address, 10n ** 12n);
    const t0 = Date.now();
    for (let i = 0; i < TONCOIN + JETTON; i++) {
      if (i % 10 === 9) await jetton.transfer(user, to, 1_000_000n + BigInt(i), String(i + 1));
      else await user.send({ to, value: toNano('0.01') + BigInt(i), bounce: false, body: commentCell(String(i + 1)) });
    }
    const filled = Date.now() - t0;
    const total = node.transactionsOf(to).length;
    if (total !== TONCOIN + JETTON) throw new Error(`${total} transactions at the shared address, expected ${TONCOIN + JETTON}`);

    const bare = async (): Promise<number> => {
      let n = 0;
      let from: { lt: string; hash: string } | null = null;
      for (;;) {
        const q = new URLSearchParams({ address: to.toRawString(), limit: '256', ...(from ? from : {}) });
        const res = await fetch(`${node.url}/getTransactions?${q}`);
        // read as the adapter's HTTP client reads an answer (text, then JSON.parse)
        const body = JSON.parse(await res.text()) as { ok: boolean; result: Array<{ transaction_id: { lt: string; hash: string } }> };
        if (!body.ok || !Array.isArray(body.result)) throw new Error('not a getTransactions answer');
        // the first item of a page after the first is the previous page's last (from is inclusive)
        for (let i = from ? 1 : 0; i < body.result.length; i++) if (body.result[i]!.transaction_id.lt !== from?.lt) n++;
        if (body.result.length < 256) break;
        from = body.result[body.result.length - 1]!.transaction_id;
      }
      return n;
    };
    const scan = async (cold: false | 'cells' | 'get-methods' = false): Promise<number> => {
      const scanner = cold === 'get-methods'
        ? new TonScanner({ url: node.url }, new TonAddresses(tonChain().network), { readJettonCode: false })
        : tonScanner(cold ? plugin.create(tonChain()) : adapter, { url: node.url });
      let cursor: string | null = null;
      let n = 0;
      let toncoin = 0n;
      for (;;) {
        const r: { transfers: readonly { amount: bigint; contract: string | null }[]; cursor: string | null } = await scanner.transfersSince(shared, cursor, 100);
        if (r.cursor === cursor) break;
        n += r.transfers.length;
        for (const t of r.transfers) if (t.contract === null) toncoin += t.amount;
        cursor = r.cursor;
      }
      if (n !== TONCOIN + JETTON) throw new Error(`the scanner found ${n} deposits, expected ${TONCOIN + JETTON}`);
      return n;
    };
    const time = async (f: () => Promise<number>) => {
      const s = process.hrtime.bigint();
      const n = await f();
      return { ms: Number(process.hrtime.bigint() - s) / 1e6, n };
    };
    await bare();
    await scan(); // warm-up
    await scan('cells');
    await scan('get-methods');
    const bareMs: number[] = [];
    const scanMs: number[] = [];
    const coldMs: number[] = [];
    const coldGetMs: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const b = await time(bare);
      if (b.n !== TONCOIN + JETTON) throw new Error(`the bare loop read ${b.n} transactions`);
      bareMs.push(b.ms);
      scanMs.push((await time(() => scan())).ms);
      coldMs.push((await time(() => scan('cells'))).ms);
      coldGetMs.push((await time(() => scan('get-methods'))).ms);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const ratio = median(bareMs) / median(scanMs);
    const coldRatio = median(bareMs) / median(coldMs);
    const coldGetRatio = median(bareMs) / median(coldGetMs);
    const result = {
      bench: 'ton-deposit-catch-up', transactions: total, toncoin: TONCOIN, jetton: JETTON, rounds: ROUNDS, fillMs: filled,
      bareMedianMs: Math.round(median(bareMs) * 10) / 10, adapterMedianMs: Math.round(median(scanMs) * 10) / 10,
      ratio: Math.round(ratio * 1000) / 1000,
      coldAdapterMedianMs: Math.round(median(coldMs) * 10) / 10, coldRatio: Math.round(coldRatio * 1000) / 1000,
      bar: 0.5, pass: ratio >= 0.5 && coldRatio >= 0.5,
      coldGetMethodsMedianMs: Math.round(median(coldGetMs) * 10) / 10, coldGetMethodsRatio: Math.round(coldGetRatio * 1000) / 1000,
      load: os.loadavg().map((l) => Math.round(l * 10) / 10),
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
    if (!result.pass) process.exitCode = 1;
  } finally {
    await node.close();
  }
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  process.exitCode = 1;
});
