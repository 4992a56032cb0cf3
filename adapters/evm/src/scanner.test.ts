import { expect } from 'chai';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HDNodeWallet, Wallet, getAddress, getCreateAddress, hexlify, randomBytes } from 'ethers';
import { ChainRpcError, scanning, type BlockRef, type ChainAdapter, type ChainEndpoint, type ObservedTransfer } from '@wcs/core';
import { testChain } from '@wcs/core/testing';
import {
  ANVIL_DEFAULT_MNEMONIC, ANVIL_DEV_KEYS, anvilRpc, deployErc20, erc20Balance, mine, mintErc20, sendNative, setAutomine, startAnvil, startBlockClock, transferErc20, waitForReceipt,
  type AnvilDevnet,
} from './devnet';
import { ERC20_TRANSFER_TOPIC, EvmBlockScanner, plugin } from './index';
import { EOA_NATURE_TTL_MS } from './scanner';

const ANVIL_CHAIN = testChain({ id: 900, code: 'ANVIL', name: 'anvil devnet', family: 'evm', environment: 'test', network: 'anvil', nativeSymbol: 'ETH', decimals: 18, confirmations: 1, evmChainId: 31337 });
const DEV0 = getAddress(new Wallet(ANVIL_DEV_KEYS[0]!).address);
const DEV1 = getAddress(new Wallet(ANVIL_DEV_KEYS[1]!).address);
/** The sender of the outgoing-transfer tests (a hot wallet, say): no other test sends from it. */
const KEY3 = ANVIL_DEV_KEYS[3]!;
const DEV3 = getAddress(new Wallet(KEY3).address);
const ZERO = '0x0000000000000000000000000000000000000000';

/** The adapter's scanner for an endpoint (the plugin's wiring), as the EVM block scanner it is. */
function evmScanner(adapter: ChainAdapter, endpoint: ChainEndpoint): EvmBlockScanner {
  const scanner = scanning(adapter).createScanner(endpoint);
  if (!(scanner instanceof EvmBlockScanner)) throw new TypeError('the EVM adapter made another scanner');
  return scanner;
}

/** A fresh EIP-55 address nobody watches yet. */
const fresh = () => getAddress(hexlify(randomBytes(20)));

type Receipt = { blockNumber: string; blockHash: string; status: string; contractAddress: string | null };

/** Mocha's it() for tests that need anvil: a chain that did not start fails them (before() throws), never skips them. */
describe('EvmBlockScanner against anvil', function () {
  this.timeout(60_000);
  let anvil: AnvilDevnet;
  let url: string;
  let scanner: EvmBlockScanner;
  let token: string;
  const rpc = <T>(method: string, params: unknown[] = []) => anvilRpc<T>(url, method, params);
  const receipt = (hash: string) => waitForReceipt<Receipt>(url, hash);
  const heightOf = async (hash: string) => BigInt((await receipt(hash)).blockNumber);
  const tip = async () => BigInt(await rpc<string>('eth_blockNumber'));

  before(async () => {
    anvil = await startAnvil();
    url = anvil.url;
    const adapter = plugin.create(ANVIL_CHAIN);
    expect(adapter.createScanner, 'the EVM adapter scans').to.be.a('function');
    scanner = evmScanner(adapter, { url, timeoutMs: 10_000 });
    token = await deployErc20(url, { name: 'Test Dollar', symbol: 'TUSD' });
    await mintErc20(url, token, DEV0, 10n ** 24n);
  });

  after(async () => {
    await anvil?.stop();
  });

  function expectLinked(blocks: readonly BlockRef[], from: bigint, to: bigint): void {
    expect(blocks.map((b) => b.height)).to.deep.equal(Array.from({ length: Number(to - from + 1n) }, (_, i) => from + BigInt(i)));
    for (let i = 1; i < blocks.length; i++) expect(blocks[i]!.parentHash, `parent of ${blocks[i]!.height}`).to.equal(blocks[i - 1]!.hash);
  }

  it('is a block scanner created by the adapter: tip, blocks by height, null above the tip', async () => {
    expect(scanner.kind).to.equal('blocks');
    expect(scanner).to.be.instanceOf(EvmBlockScanner);
    const t = await scanner.tipHeight();
    expect(t).to.equal(await tip());
    const head = await scanner.blockAt(t);
    const raw = await rpc<{ hash: string; parentHash: string }>('eth_getBlockByNumber', ['latest', false]);
    expect(head).to.deep.equal({ height: t, hash: raw.hash, parentHash: raw.parentHash });
    const genesis = await scanner.blockAt(0n);
    expect(genesis!.height).to.equal(0n);
    expect(genesis!.parentHash).to.equal('0x' + '0'.repeat(64));
    expect(await scanner.blockAt(t + 10n)).to.equal(null);
  });

  it('finds a native deposit: amount, position -1, from, block hash, canonical addresses', async () => {
    const to = fresh();
    const amount = 1_234_567_890_123_456_789_012n; // beyond 2^53: never a JS number
    const hash = await sendNative(url, to.toLowerCase(), amount);
    const h = await heightOf(hash);
    const { blocks, transfers } = await scanner.scanRange(h, h, new Set([to, fresh()]));
    expect(blocks).to.have.length(1);
    expect(blocks[0]).to.deep.equal(await scanner.blockAt(h));
    expect(transfers).to.deep.equal([{
      txHash: hash, position: -1, fromAddress: DEV0, toAddress: to, memo: null, contract: null,
      amount, blockHeight: h, blockHash: blocks[0]!.hash, succeeded: true,
    } satisfies ObservedTransfer]);
    expect(typeof transfers[0]!.amount).to.equal('bigint');
  });

  it('finds ERC-20 deposits (mint and transfer): contract, amount, log index, sender', async () => {
    const a = fresh();
    const b = fresh();
    const mintHash = await mintErc20(url, token, a, 5_000_000n);
    const transferHash = await transferErc20(url, token, b, 10n ** 21n + 1n);
    const from = await heightOf(mintHash);
    const to = await heightOf(transferHash);
    const { blocks, transfers } = await scanner.scanRange(from, to, new Set([a, b]));
    expectLinked(blocks, from, to);
    const mintLog = await receipt(mintHash) as unknown as { logs: Array<{ logIndex: string }> };
    const transferLog = await receipt(transferHash) as unknown as { logs: Array<{ logIndex: string }> };
    expect(transfers).to.deep.equal([
      { txHash: mintHash, position: Number(mintLog.logs[0]!.logIndex), fromAddress: ZERO, toAddress: a, memo: null, contract: token, amount: 5_000_000n, blockHeight: from, blockHash: blocks[0]!.hash, succeeded: true },
      { txHash: transferHash, position: Number(transferLog.logs[0]!.logIndex), fromAddress: DEV0, toAddress: b, memo: null, contract: token, amount: 10n ** 21n + 1n, blockHeight: to, blockHash: blocks[blocks.length - 1]!.hash, succeeded: true },
    ]);
    expect(await erc20Balance(url, token, b)).to.equal(10n ** 21n + 1n);
  });

  it('finds several deposits in one block, in transaction order, and ignores unwatched addresses and zero-value calls', async () => {
    const w1 = fresh();
    const w2 = fresh();
    const unwatched = fresh();
    await setAutomine(url, false);
    let hashes: string[];
    try {
      hashes = [
        await sendNative(url, w1, 11n),
        await sendNative(url, unwatched, 12n),
        await transferErc20(url, token, w1, 13n, { gasLimit: 100_000n }),
        await sendNative(url, w2, 0n), // a zero-value call is no deposit
        await transferErc20(url, token, unwatched, 14n, { gasLimit: 100_000n }),
        await sendNative(url, w2, 15n, { fromPrivateKey: ANVIL_DEV_KEYS[1] }),
      ];
      await mine(url);
    } finally {
      await setAutomine(url, true);
    }
    const h = await tip();
    for (const hash of hashes) expect(await heightOf(hash), 'all in one block').to.equal(h);
    const { blocks, transfers } = await scanner.scanRange(h, h, new Set([w1, w2]));
    expect(transfers.map((t) => [t.txHash, t.toAddress, t.contract, t.amount, t.fromAddress])).to.deep.equal([
      [hashes[0], w1, null, 11n, DEV0],
      [hashes[2], w1, token, 13n, DEV0],
      [hashes[5], w2, null, 15n, DEV1],
    ]);
    for (const t of transfers) expect([t.blockHeight, t.blockHash, t.succeeded]).to.deep.equal([h, blocks[0]!.hash, true]);
    // Nothing watched: the blocks, and no transfers.
    const bare = await scanner.scanRange(h, h, new Set());
    expect(bare).to.deep.equal({ blocks, transfers: [] });
  });

  it('finds several deposits in one transaction (value to a watched contract that emits two Transfer logs); ERC-721-style and malformed Transfer logs are not deposits', async () => {
    const to1 = fresh();
    const to2 = fresh();
    const wallet = new Wallet(ANVIL_DEV_KEYS[2]!);
    const deployHash = await rpc<string>('eth_sendTransaction', [{ from: wallet.address, data: transferEmitterInitCode(to1, to2) }]);
    const emitter = getAddress((await receipt(deployHash)).contractAddress!);
    const hash = await sendNative(url, emitter, 3n, { fromPrivateKey: ANVIL_DEV_KEYS[2], gasLimit: 200_000n });
    const r = await waitForReceipt<Receipt & { logs: Array<{ logIndex: string; topics: string[] }> }>(url, hash);
    expect(r.status).to.equal('0x1');
    expect(r.logs.map((l) => l.topics.length), 'two ERC-20 logs, one 4-topic log, one malformed 3-topic log').to.deep.equal([3, 3, 4, 3]);
    const h = BigInt(r.blockNumber);
    const { transfers } = await scanner.scanRange(h, h, new Set([emitter, to1, to2]));
    const first = Number(r.logs[0]!.logIndex);
    expect(transfers.map((t) => [t.txHash, t.position, t.toAddress, t.contract, t.amount, t.fromAddress])).to.deep.equal([
      [hash, -1, emitter, null, 3n, wallet.address],
      [hash, first, to1, emitter, 1000n, wallet.address],
      [hash, first + 1, to2, emitter, 2000n, wallet.address],
    ]);
  });

  it('re-reads a watched set whose size changed, and a new set object, instead of its cached lower-cased copy', async () => {
    const w = fresh();
    const hash = await sendNative(url, w, 5n);
    const h = await heightOf(hash);
    const watched = new Set<string>([fresh()]);
    expect((await scanner.scanRange(h, h, watched)).transfers).to.deep.equal([]);
    watched.add(w); // same object, one more address
    expect((await scanner.scanRange(h, h, watched)).transfers.map((t) => t.txHash)).to.deep.equal([hash]);
    expect((await scanner.scanRange(h, h, new Set([fresh()]))).transfers, 'a new set replaces the cached one').to.deep.equal([]);
    expect((await scanner.scanRange(h, h, new Set([w.toLowerCase()]))).transfers.map((t) => t.toAddress)).to.deep.equal([w]);
  });

  it('reports a reverted native transfer with succeeded=false', async () => {
    // The token has no payable receive/fallback: value sent to it reverts (mined, status 0).
    const hash = await sendNative(url, token, 777n, { gasLimit: 100_000n });
    const r = await receipt(hash);
    expect(r.status).to.equal('0x0');
    const h = BigInt(r.blockNumber);
    const { transfers } = await scanner.scanRange(h, h, new Set([token]));
    expect(transfers).to.have.length(1);
    expect(transfers[0]).to.deep.include({ txHash: hash, position: -1, toAddress: token, contract: null, amount: 777n, succeeded: false });
    expect(await scanner.lookupTransaction(hash)).to.deep.equal({ state: 'MINED', blockHeight: h, blockHash: r.blockHash, succeeded: false });
  });

  it('follows a reorg: new hashes at the same heights, parent links intact, the dropped deposit UNKNOWN, the replacement found', async () => {
    const w = fresh();
    const dropped = await sendNative(url, w, 10n);
    const h = await heightOf(dropped);
    await mine(url, 2);
    const before = await Promise.all([h, h + 1n, h + 2n].map((x) => scanner.blockAt(x)));
    const scanBefore = await scanner.scanRange(h - 1n, h + 2n, new Set([w]));
    expect(scanBefore.transfers.map((t) => t.txHash)).to.deep.equal([dropped]);
    expect(await scanner.lookupTransaction(dropped)).to.deep.equal({ state: 'MINED', blockHeight: h, blockHash: before[0]!.hash, succeeded: true });

    // Replace the last 3 blocks; the new second block carries another deposit to w (anvil signs for its dev accounts).
    await rpc('anvil_reorg', [3, [[{ from: DEV1, to: w, value: '0x14' }, 1]]]);
    expect(await tip()).to.equal(h + 2n);
    const after = await Promise.all([h, h + 1n, h + 2n].map((x) => scanner.blockAt(x)));
    for (let i = 0; i < 3; i++) expect(after[i]!.hash, `height ${h + BigInt(i)}`).to.not.equal(before[i]!.hash);
    const scanAfter = await scanner.scanRange(h - 1n, h + 2n, new Set([w]));
    expectLinked(scanAfter.blocks, h - 1n, h + 2n);
    expect(scanAfter.blocks[0]).to.deep.equal(scanBefore.blocks[0], 'the fork point is unchanged');
    expect(scanAfter.blocks.slice(1)).to.deep.equal(after);
    expect(scanAfter.transfers).to.have.length(1);
    const replacement = scanAfter.transfers[0]!;
    expect(replacement).to.deep.include({ fromAddress: DEV1, toAddress: w, amount: 20n, blockHeight: h + 1n, blockHash: after[1]!.hash, succeeded: true });
    expect(await scanner.lookupTransaction(dropped)).to.deep.equal({ state: 'UNKNOWN' });
    expect(await scanner.lookupTransaction(replacement.txHash)).to.deep.equal({ state: 'MINED', blockHeight: h + 1n, blockHash: after[1]!.hash, succeeded: true });
  });

  it('looks up transactions: MINED, PENDING (in the pool), UNKNOWN (random hash)', async () => {
    expect(await scanner.lookupTransaction(hexlify(randomBytes(32)))).to.deep.equal({ state: 'UNKNOWN' });
    await setAutomine(url, false);
    let hash: string;
    try {
      hash = await sendNative(url, fresh(), 1n);
      expect(await scanner.lookupTransaction(hash)).to.deep.equal({ state: 'PENDING' });
      await mine(url);
    } finally {
      await setAutomine(url, true);
    }
    const r = await receipt(hash);
    expect(await scanner.lookupTransaction(hash)).to.deep.equal({ state: 'MINED', blockHeight: BigInt(r.blockNumber), blockHash: r.blockHash, succeeded: true });
    await expectRejected(scanner.lookupTransaction('0x1234'), TypeError);
  });

  it('scans a range larger than one batch (split into batches of at most 50) and matches a per-block scan', async () => {
    const w = fresh();
    const start = (await tip()) + 1n;
    await mine(url, 30);
    const native = await sendNative(url, w, 41n);
    await receipt(native);
    await mine(url, 40);
    const erc20 = await transferErc20(url, token, w, 42n);
    await receipt(erc20);
    await mine(url, 50);
    const end = await tip();
    expect(Number(end - start + 1n)).to.be.greaterThan(120);
    const proxy = await startProxy(url);
    try {
      const viaProxy = new EvmBlockScanner({ url: proxy.url });
      const { blocks, transfers } = await viaProxy.scanRange(start, end, new Set([w]));
      expectLinked(blocks, start, end);
      expect(transfers.map((t) => [t.txHash, t.amount])).to.deep.equal([[native, 41n], [erc20, 42n]]);
      expect(Math.max(...proxy.batchSizes)).to.be.at.most(50);
      // the trace probe, then blocks + getLogs, then the traces of the two blocks with a transaction
      // (anvil serves debug_traceBlockByNumber; the other blocks are empty) and one receipt
      expect(proxy.methods[0]).to.equal('debug_traceBlockByNumber');
      expect(proxy.batchSizes.reduce((a, b) => a + b, 0)).to.equal(1 + Number(end - start + 1n) + 1 + 2 + 1);
      expect(proxy.methods.filter((m) => m === 'debug_traceBlockByNumber')).to.have.length(1 + 2);
      // The same answer block by block.
      const oneByOne: ObservedTransfer[] = [];
      for (let x = start; x <= end; x++) oneByOne.push(...(await scanner.scanRange(x, x, new Set([w]))).transfers);
      expect(oneByOne).to.deep.equal(transfers);
    } finally {
      await proxy.close();
    }
  });

  it('halves the eth_getLogs range when the node refuses a wide one', async () => {
    const w = fresh();
    const start = (await tip()) + 1n;
    const hashes = [await sendNative(url, w, 1n), await transferErc20(url, token, w, 2n)];
    await receipt(hashes[1]!);
    await mine(url, 5);
    hashes.push(await transferErc20(url, token, w, 3n));
    const end = await heightOf(hashes[2]!);
    const proxy = await startProxy(url, (call) => {
      if (call.method !== 'eth_getLogs') return undefined;
      const f = (call.params as Array<{ fromBlock: string; toBlock: string }>)[0]!;
      return BigInt(f.toBlock) - BigInt(f.fromBlock) >= 2n ? { code: -32005, message: 'query returned more than 10000 results' } : undefined;
    });
    try {
      const { transfers } = await new EvmBlockScanner({ url: proxy.url }).scanRange(start, end, new Set([w]));
      expect(transfers.map((t) => t.amount)).to.deep.equal([1n, 2n, 3n]);
      expect(proxy.methods.filter((m) => m === 'eth_getLogs').length).to.be.greaterThan(2);
    } finally {
      await proxy.close();
    }
  });

  describe('outgoing transfers (options.senders)', () => {
    const senders = new Set([DEV3]);
    const logIndex = async (hash: string) => Number((await receipt(hash) as unknown as { logs: Array<{ logIndex: string }> }).logs[0]!.logIndex);

    before(async () => {
      await mintErc20(url, token, DEV3, 10n ** 20n);
    });

    it('finds a sender\'s native and ERC-20 transfers to any address, fromAddress the sender (EIP-55); transfers into a sender alone are not returned', async () => {
      const out1 = fresh();
      const out2 = fresh();
      const native = await sendNative(url, out1.toLowerCase(), 21n, { fromPrivateKey: KEY3 });
      const incomingNative = await sendNative(url, DEV3, 22n);
      const incomingToken = await transferErc20(url, token, DEV3, 23n);
      const erc20 = await transferErc20(url, token, out2, 24n, { fromPrivateKey: KEY3 });
      const from = await heightOf(native);
      const to = await heightOf(erc20);
      expect(Number(await heightOf(incomingNative))).to.be.within(Number(from), Number(to));
      expect(Number(await heightOf(incomingToken))).to.be.within(Number(from), Number(to));
      const { blocks, transfers } = await scanner.scanRange(from, to, new Set(), { senders });
      expectLinked(blocks, from, to);
      expect(transfers).to.deep.equal([
        { txHash: native, position: -1, fromAddress: DEV3, toAddress: out1, memo: null, contract: null, amount: 21n, blockHeight: from, blockHash: blocks[0]!.hash, succeeded: true },
        { txHash: erc20, position: await logIndex(erc20), fromAddress: DEV3, toAddress: out2, memo: null, contract: token, amount: 24n, blockHeight: to, blockHash: blocks[blocks.length - 1]!.hash, succeeded: true },
      ] satisfies ObservedTransfer[]);
      // Senders in any case (canonical forms are EIP-55, but the match is case-blind as for watched).
      expect(await scanner.scanRange(from, to, new Set(), { senders: new Set([DEV3.toLowerCase()]) })).to.deep.equal({ blocks, transfers });
    });

    it('returns a transfer both from a sender and to a watched address once, reports a reverted outgoing native transfer with succeeded=false, and asks receipts in the same one batch', async () => {
      const w = fresh();
      const other = fresh();
      await setAutomine(url, false);
      let hashes: string[];
      try {
        hashes = [
          await sendNative(url, w, 31n, { fromPrivateKey: KEY3 }), // out and in
          await transferErc20(url, token, w, 32n, { fromPrivateKey: KEY3, gasLimit: 100_000n }), // out and in
          await sendNative(url, token, 33n, { fromPrivateKey: KEY3, gasLimit: 100_000n }), // out, reverts (the token takes no coin)
          await sendNative(url, DEV3, 34n, { fromPrivateKey: KEY3 }), // a sender to itself
          await sendNative(url, w, 35n), // in only
          await sendNative(url, other, 36n), // neither
          await sendNative(url, other, 0n, { fromPrivateKey: KEY3 }), // a sender's zero-value call: no transfer
        ];
        await mine(url);
      } finally {
        await setAutomine(url, true);
      }
      const h = await tip();
      for (const hash of hashes) expect(await heightOf(hash), 'all in one block').to.equal(h);
      expect((await receipt(hashes[2]!)).status).to.equal('0x0');
      const proxy = await startProxy(url);
      try {
        // traces off: the transaction path alone (the trace calls are counted in scanner-traces.test.ts)
        const { transfers } = await new EvmBlockScanner({ url: proxy.url }, { traces: 'off' }).scanRange(h, h, new Set([w]), { senders });
        expect(transfers.map((t) => [t.txHash, t.position === -1, t.fromAddress, t.toAddress, t.contract, t.amount, t.succeeded])).to.deep.equal([
          [hashes[0], true, DEV3, w, null, 31n, true],
          [hashes[1], false, DEV3, w, token, 32n, true],
          [hashes[2], true, DEV3, token, null, 33n, false],
          [hashes[3], true, DEV3, DEV3, null, 34n, true],
          [hashes[4], true, DEV0, w, null, 35n, true],
        ]);
        // One batch of the block and its logs, then one batch of the 4 native candidates' receipts (in and out together).
        expect(proxy.batchSizes).to.deep.equal([2, 4]);
        expect(proxy.methods.slice(2)).to.deep.equal(Array(4).fill('eth_getTransactionReceipt'));
      } finally {
        await proxy.close();
      }
    });

    it('a sender\'s contract creation with value goes to the created contract (the receipt\'s contractAddress), reverted or not', async () => {
      const created = await rpc<string>('eth_sendTransaction', [{ from: DEV3, data: transferEmitterInitCode(fresh(), fresh()), value: '0x29', gas: '0x30d40' }]);
      const r1 = await receipt(created);
      // PUSH1 0, PUSH1 0, REVERT: the creation fails, the value stays with the sender.
      const nonce = BigInt(await rpc<string>('eth_getTransactionCount', [DEV3, 'latest']));
      const reverted = await rpc<string>('eth_sendTransaction', [{ from: DEV3, data: '0x60006000fd', value: '0x2a', gas: '0x186a0' }]);
      const r2 = await receipt(reverted);
      expect([r1.status, r2.status]).to.deep.equal(['0x1', '0x0']);
      const { transfers } = await scanner.scanRange(BigInt(r1.blockNumber), BigInt(r2.blockNumber), new Set(), { senders });
      expect(transfers.map((t) => [t.txHash, t.fromAddress, t.toAddress, t.amount, t.succeeded])).to.deep.equal([
        [created, DEV3, getAddress(r1.contractAddress!), 41n, true],
        [reverted, DEV3, getCreateAddress({ from: DEV3, nonce }), 42n, false],
      ]);
      // A node whose receipts carry no contractAddress: the address is the CREATE address of sender and nonce.
      const proxy = await startProxy(url, undefined, (call, answer) =>
        call.method === 'eth_getTransactionReceipt' ? { ...answer, result: { ...(answer.result as object), contractAddress: null } } : answer);
      try {
        const viaProxy = await new EvmBlockScanner({ url: proxy.url }).scanRange(BigInt(r1.blockNumber), BigInt(r2.blockNumber), new Set(), { senders });
        expect(proxy.methods).to.include('eth_getTransactionReceipt');
        expect(viaProxy.transfers).to.deep.equal(transfers);
      } finally {
        await proxy.close();
      }
    });

    it('senders absent or empty: the same answer from the same requests as before', async () => {
      const w = fresh();
      const start = (await tip()) + 1n;
      const hashes = [
        await sendNative(url, w, 51n, { fromPrivateKey: KEY3 }),
        await transferErc20(url, token, fresh(), 52n, { fromPrivateKey: KEY3 }),
        await transferErc20(url, token, w, 53n),
        await sendNative(url, fresh(), 54n, { fromPrivateKey: KEY3 }),
      ];
      const end = await heightOf(hashes[3]!);
      const proxy = await startProxy(url);
      try {
        const viaProxy = new EvmBlockScanner({ url: proxy.url }, { traces: 'off' });
        const runs: Array<{ result: unknown; methods: string[]; batchSizes: number[] }> = [];
        for (const options of [undefined, {}, { senders: new Set<string>() }]) {
          const m = proxy.methods.length;
          const b = proxy.batchSizes.length;
          const result = await viaProxy.scanRange(start, end, new Set([w]), options);
          runs.push({ result, methods: proxy.methods.slice(m), batchSizes: proxy.batchSizes.slice(b) });
        }
        expect((runs[0]!.result as { transfers: ObservedTransfer[] }).transfers.map((t) => t.txHash)).to.deep.equal([hashes[0], hashes[2]]);
        expect(runs[1]).to.deep.equal(runs[0]);
        expect(runs[2]).to.deep.equal(runs[0]);
        // Nothing watched and no senders: the blocks alone (headers only, no eth_getLogs, no receipts).
        const m = proxy.methods.length;
        const bare = await viaProxy.scanRange(start, end, new Set(), { senders: new Set() });
        expect(bare.transfers).to.deep.equal([]);
        expect(proxy.methods.slice(m)).to.deep.equal(Array(Number(end - start + 1n)).fill('eth_getBlockByNumber'));
      } finally {
        await proxy.close();
      }
    });

    it('re-reads a senders set whose size changed, and a new set object, instead of its cached lower-cased copy', async () => {
      const key = hexlify(randomBytes(32));
      const sender = getAddress(new Wallet(key).address);
      await sendNative(url, sender, 10n ** 18n);
      const hash = await sendNative(url, fresh(), 5n, { fromPrivateKey: key });
      const h = await heightOf(hash);
      const set = new Set<string>([fresh()]);
      expect((await scanner.scanRange(h, h, new Set(), { senders: set })).transfers).to.deep.equal([]);
      set.add(sender); // same object, one more address
      expect((await scanner.scanRange(h, h, new Set(), { senders: set })).transfers.map((t) => t.txHash)).to.deep.equal([hash]);
      expect((await scanner.scanRange(h, h, new Set(), { senders: new Set([fresh()]) })).transfers, 'a new set replaces the cached one').to.deep.equal([]);
      expect((await scanner.scanRange(h, h, new Set(), { senders: new Set([sender.toLowerCase()]) })).transfers.map((t) => t.fromAddress)).to.deep.equal([sender]);
    });
  });

  describe('addressNatures', () => {
    it('tells EOAs (used, unused, EIP-7702 delegated) from contracts, one answer per address in order, from one batch of eth_getCode', async () => {
      const unused = fresh();
      const delegated = fresh();
      await rpc('anvil_setCode', [delegated, '0xef0100' + DEV1.slice(2).toLowerCase()]);
      const proxy = await startProxy(url);
      try {
        const s = new EvmBlockScanner({ url: proxy.url });
        const asked = [DEV0, token, unused, delegated, token.toLowerCase(), DEV0, ZERO];
        expect(await s.addressNatures(asked)).to.deep.equal(['EOA', 'CONTRACT', 'EOA', 'EOA', 'CONTRACT', 'EOA', 'EOA']);
        expect(proxy.batchSizes, 'one request, each address once').to.deep.equal([5]);
        expect(new Set(proxy.methods)).to.deep.equal(new Set(['eth_getCode']));

        // Again: from the cache, no request. A new address alone is asked.
        expect(await s.addressNatures(asked)).to.deep.equal(['EOA', 'CONTRACT', 'EOA', 'EOA', 'CONTRACT', 'EOA', 'EOA']);
        expect(proxy.batchSizes).to.have.length(1);
        expect(await s.addressNatures([token, fresh(), DEV0])).to.deep.equal(['CONTRACT', 'EOA', 'EOA']);
        expect(proxy.batchSizes).to.deep.equal([5, 1]);
        expect(await s.addressNatures([])).to.deep.equal([]);
        expect(proxy.batchSizes).to.have.length(2);
      } finally {
        await proxy.close();
      }
    });

    it('refuses what is not an address with a TypeError, asking nothing', async () => {
      const mixed = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
      expect(await scanner.addressNatures([mixed, mixed.toUpperCase().replace('0X', '0x')])).to.deep.equal(['EOA', 'EOA']);
      for (const bad of ['0x1234', mixed.slice(2), '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD', 'vitalik.eth', 42 as unknown as string]) {
        await expectRejected(scanner.addressNatures([DEV0, bad]), TypeError);
      }
    });

    it('an EOA answer is kept for EOA_NATURE_TTL_MS (code deployed there later is seen after it), a CONTRACT answer until evicted', async () => {
      const s = new EvmBlockScanner({ url });
      const a = fresh();
      expect(await s.addressNatures([a])).to.deep.equal(['EOA']);
      await rpc('anvil_setCode', [a, '0x6000']); // as a CREATE2 deployment to a counterfactual address would
      expect(await s.addressNatures([a]), 'still the cached answer').to.deep.equal(['EOA']);
      const realNow = Date.now;
      try {
        Date.now = () => realNow() + EOA_NATURE_TTL_MS + 1;
        expect(await s.addressNatures([a])).to.deep.equal(['CONTRACT']);
        await rpc('anvil_setCode', [a, '0x']);
        Date.now = () => realNow() + 100 * EOA_NATURE_TTL_MS;
        expect(await s.addressNatures([a]), 'CONTRACT answers do not expire').to.deep.equal(['CONTRACT']);
      } finally {
        Date.now = realNow;
      }
    });
  });

  it('refuses a node of another chain (RPC_WRONG_CHAIN)', async () => {
    const wrong = evmScanner(plugin.create({ ...ANVIL_CHAIN, evmChainId: 1 }), { url });
    const e = await expectRejected(wrong.tipHeight(), ChainRpcError);
    expect(e.errorName).to.equal('RPC_WRONG_CHAIN');
    expect(e.message).to.match(/31337.*\b1\b/);
  });
});

describe('EvmBlockScanner RPC errors', () => {
  it('a dead port fails quickly with RPC_UNAVAILABLE', async () => {
    const port = await deadPort();
    const scanner = new EvmBlockScanner({ url: `http://127.0.0.1:${port}`, timeoutMs: 2000 });
    const t = Date.now();
    const e = await expectRejected(scanner.tipHeight(), ChainRpcError);
    expect(e.errorName).to.equal('RPC_UNAVAILABLE');
    expect(e.message).to.match(/ECONNREFUSED/);
    expect(Date.now() - t).to.be.below(3000);
  });

  it('never shows URL credentials, the URL path or header values in messages', async () => {
    const port = await deadPort();
    for (const url of [`https://user:secret@127.0.0.1:${port}/v3/pathkey123?apikey=querykey456`, `http://user:secret@127.0.0.1:${port}/v3/pathkey123`]) {
      const scanner = evmScanner(plugin.create(ANVIL_CHAIN), { url, headers: { 'x-api-key': 'headerkey789' }, timeoutMs: 2000 });
      for (const attempt of [scanner.tipHeight(), scanner.blockAt(1n), scanner.scanRange(1n, 2n, new Set([fresh()])), scanner.lookupTransaction('0x' + 'ab'.repeat(32))]) {
        const e = await expectRejected(attempt, ChainRpcError);
        expect(e.errorName).to.equal('RPC_UNAVAILABLE');
        const shown = `${e.message} ${e.stack} ${JSON.stringify(e)}`;
        for (const secret of ['secret', 'user:', 'pathkey123', 'querykey456', 'headerkey789']) expect(shown).to.not.include(secret);
        expect(e.message).to.include(`ANVIL RPC ${url.split(':')[0]}://127.0.0.1:${port}`);
      }
    }
  });

  it('sends URL credentials as Basic auth and headers; retries 429/5xx; classifies errors; echoes of secrets are blanked', async () => {
    let status = 200;
    let failuresLeft = 0;
    const seen: Array<{ auth?: string; key?: string; path?: string }> = [];
    const server = await startServer((req, body) => {
      seen.push({ auth: req.headers.authorization, key: req.headers['x-api-key'] as string, path: req.url });
      if (failuresLeft > 0) {
        failuresLeft--;
        return { status: 503, body: 'busy' };
      }
      if (status !== 200) return { status, body: 'no' };
      const call = JSON.parse(body) as { id: number; method: string };
      if (call.method === 'eth_blockNumber') return { status: 200, body: JSON.stringify({ jsonrpc: '2.0', id: call.id, result: '0x2a' }) };
      return { status: 200, body: JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: -32000, message: `bad request to ${req.url} key headerkey789` } }) };
    });
    try {
      const url = `http://us%40er:p%3Ass@127.0.0.1:${server.port}/v2/pathkey123`;
      const scanner = new EvmBlockScanner({ url, headers: { 'X-Api-Key': 'headerkey789' } }, { backoffMs: 10 });
      expect(await scanner.tipHeight()).to.equal(42n);
      expect(seen[0]).to.deep.equal({ auth: `Basic ${Buffer.from('us@er:p:ss').toString('base64')}`, key: 'headerkey789', path: '/v2/pathkey123' });

      failuresLeft = 2;
      expect(await scanner.tipHeight(), 'two 503s, then an answer').to.equal(42n);
      failuresLeft = 3;
      const unavailable = await expectRejected(scanner.tipHeight(), ChainRpcError);
      expect([unavailable.errorName, unavailable.responseStatus]).to.deep.equal(['RPC_UNAVAILABLE', 503]);

      const rpcError = await expectRejected(scanner.blockAt(1n), ChainRpcError);
      expect([rpcError.errorName, rpcError.rpcCode]).to.deep.equal(['RPC_ERROR', -32000]);
      expect(rpcError.message).to.include('eth_getBlockByNumber').and.not.include('pathkey123').and.not.include('headerkey789');

      status = 401;
      const refused = await expectRejected(scanner.tipHeight(), ChainRpcError);
      expect([refused.errorName, refused.responseStatus]).to.deep.equal(['RPC_ERROR', 401]);
      expect(refused.message).to.match(/credentials/);
      expect(() => new EvmBlockScanner({ url: 'ftp://user:secret@host/x' })).to.throw(ChainRpcError, /http\(s\)/).that.satisfies((e: ChainRpcError) => e.errorName === 'RPC_CONFIG' && !e.message.includes('secret'));
    } finally {
      await server.close();
    }
  });

  it('addressNatures reads eth_getCode strictly: only an exact 23-byte 0xef0100 designator is a delegated EOA; a non-hex answer is RPC_BAD_RESPONSE', async () => {
    // Codes anvil cannot hold (its anvil_setCode aborts on a malformed 0xef01 code), answered by a scripted node.
    const codes: Record<string, unknown> = {};
    const server = await startServer((_req, body) => {
      const parsed = JSON.parse(body) as Call | Call[];
      const answer = (c: Call) => ({ jsonrpc: '2.0', id: c.id, result: (c.params[0] as string) in codes ? codes[c.params[0] as string] : '0x' });
      return { status: 200, body: JSON.stringify(Array.isArray(parsed) ? parsed.map(answer) : answer(parsed)) };
    });
    try {
      const designator = '0xef0100' + 'ab'.repeat(20);
      const cases: Array<[string, string]> = [
        ['0x', 'EOA'], [designator, 'EOA'], [designator.toUpperCase().replace('0X', '0x'), 'EOA'],
        [designator + '00', 'CONTRACT'], [designator.slice(0, -2), 'CONTRACT'], ['0xef0200' + 'ab'.repeat(20), 'CONTRACT'], ['0x6000', 'CONTRACT'],
      ];
      const addresses = cases.map(([code]) => { const a = fresh().toLowerCase(); codes[a] = code; return a; });
      const s = new EvmBlockScanner({ url: server.url });
      expect(await s.addressNatures(addresses)).to.deep.equal(cases.map(([, nature]) => nature));
      for (const bad of ['0x0', null, 7, '0xzz']) {
        const a = fresh().toLowerCase();
        codes[a] = bad;
        const e = await expectRejected(s.addressNatures([a]), ChainRpcError);
        expect(e.errorName).to.equal('RPC_BAD_RESPONSE');
      }
    } finally {
      await server.close();
    }
  });

  it('times out a silent node with RPC_UNAVAILABLE', async () => {
    const server = await startServer(() => new Promise(() => undefined));
    try {
      const scanner = new EvmBlockScanner({ url: `http://127.0.0.1:${server.port}`, timeoutMs: 200 }, { attempts: 2, backoffMs: 10 });
      const e = await expectRejected(scanner.tipHeight(), ChainRpcError);
      expect(e.errorName).to.equal('RPC_UNAVAILABLE');
      expect(e.message).to.match(/no answer within 200 ms/);
    } finally {
      await server.close();
    }
  });
});

describe('devnet helpers', () => {
  it('are the package subpath @wcs/adapter-evm/devnet', () => {
    const devnet = require('@wcs/adapter-evm/devnet') as typeof import('./devnet');
    expect(devnet.startAnvil).to.be.a('function');
    expect(require.resolve('@wcs/adapter-evm/devnet')).to.match(/adapters[\\/]evm[\\/]dist[\\/]devnet\.js$/);
  });

  it('ANVIL_DEV_KEYS are the keys of anvil\'s default mnemonic (m/44\'/60\'/0\'/0/i)', () => {
    expect(ANVIL_DEV_KEYS).to.have.length(10);
    ANVIL_DEV_KEYS.forEach((key, i) => {
      expect(HDNodeWallet.fromPhrase(ANVIL_DEFAULT_MNEMONIC, undefined, `m/44'/60'/0'/0/${i}`).privateKey, `key ${i}`).to.equal(key);
    });
    expect(DEV0).to.equal('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
  });

  it('starts anvil with a chain id and interval mining, and stops it', async function () {
    this.timeout(30_000);
    const devnet = await startAnvil({ chainId: 8453, blockTime: 1, accounts: 2 });
    try {
      expect(devnet.chainId).to.equal(8453);
      expect(devnet.url).to.equal(`http://127.0.0.1:${devnet.port}`);
      expect((await anvilRpc<string[]>(devnet.url, 'eth_accounts')).map((a) => getAddress(a))).to.deep.equal([DEV0, DEV1]);
      const first = BigInt(await anvilRpc<string>(devnet.url, 'eth_blockNumber'));
      await new Promise((r) => setTimeout(r, 2200));
      expect(Number(await anvilRpc<string>(devnet.url, 'eth_blockNumber'))).to.be.greaterThan(Number(first));
      await expectRejected(deployErc20(devnet.url, { name: 'X', symbol: 'X', decimals: 6 }), Error);
    } finally {
      await devnet.stop();
    }
    expect(devnet.process.exitCode !== null || devnet.process.signalCode !== null).to.equal(true);
    await expectRejected(anvilRpc(devnet.url, 'eth_chainId', [], 1000), Error);
    await devnet.stop(); // idempotent
  });

  it('a block clock mines instead of automine: blocks keep coming, pause holds transactions in the pool, resume mines them', async function () {
    this.timeout(30_000);
    const devnet = await startAnvil({ accounts: 2 });
    try {
      const height = async () => Number(await anvilRpc<string>(devnet.url, 'eth_blockNumber'));
      const clock = await startBlockClock(devnet.url, 50);
      expect(await anvilRpc<boolean>(devnet.url, 'anvil_getAutomine')).to.equal(false);
      const h0 = await height();
      await new Promise((r) => setTimeout(r, 400));
      expect(await height()).to.be.greaterThan(h0 + 2);
      await clock.pause();
      const held = await height();
      const hash = await anvilRpc<string>(devnet.url, 'eth_sendTransaction', [{ from: DEV0, to: DEV1, value: '0x1' }]);
      await new Promise((r) => setTimeout(r, 300));
      expect(await height(), 'no block while paused').to.equal(held);
      expect(await anvilRpc(devnet.url, 'eth_getTransactionReceipt', [hash])).to.equal(null);
      clock.resume();
      const receipt = await waitForReceipt<{ status: string }>(devnet.url, hash, 5_000);
      expect(receipt.status).to.equal('0x1');
      await clock.stop();
      const stopped = await height();
      await new Promise((r) => setTimeout(r, 200));
      expect(await height(), 'no block once stopped').to.equal(stopped);
      const broken = await startBlockClock(devnet.url, 20);
      await devnet.stop();
      await new Promise((r) => setTimeout(r, 100));
      await expectRejected(broken.stop(), Error);
      await expectRejected(startBlockClock(devnet.url, 5), TypeError);
    } finally {
      await devnet.stop();
    }
  });

  it('fails loudly with anvil\'s output when anvil cannot start', async () => {
    const e = await expectRejected(startAnvil({ extraArgs: ['--no-such-flag'] }), Error);
    expect(e.message).to.match(/anvil .*did not start: it exited/).and.match(/no-such-flag/);
    const missing = await expectRejected(startAnvil({ binary: '/nonexistent/anvil' }), Error);
    expect(missing.message).to.match(/could not run it/);
  });
});

// ---- helpers ----

async function expectRejected<E extends Error>(p: Promise<unknown>, type: abstract new (...args: never[]) => E): Promise<E> {
  try {
    await p;
  } catch (e) {
    expect(e).to.be.instanceOf(type);
    return e as E;
  }
  throw new Error('expected a rejection');
}

/** A port nothing listens on (bound, then released). */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

type Reply = { status: number; body: string };

async function startServer(handle: (req: IncomingMessage, body: string) => Reply | Promise<Reply>): Promise<{ port: number; url: string; close(): Promise<void>; server: Server }> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => { body += c; }).on('end', async () => {
      const reply = await handle(req, body);
      res.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    port, server, url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

type Call = { jsonrpc: string; id: number; method: string; params: unknown[] };

/**
 * A JSON-RPC proxy in front of anvil that records the size of every HTTP request and the methods
 * asked, can answer some calls with an error instead of forwarding them, and can rewrite answers.
 */
async function startProxy(
  target: string,
  refuse: (call: Call) => { code: number; message: string } | undefined = () => undefined,
  rewrite: (call: Call, answer: { id: number; result?: unknown }) => unknown = (_call, answer) => answer,
) {
  const batchSizes: number[] = [];
  const methods: string[] = [];
  const server = await startServer(async (_req, body) => {
    const parsed = JSON.parse(body) as Call | Call[];
    const calls = Array.isArray(parsed) ? parsed : [parsed];
    batchSizes.push(calls.length);
    const answers = new Map<number, unknown>();
    const forward: Call[] = [];
    for (const c of calls) {
      methods.push(c.method);
      const error = refuse(c);
      if (error) answers.set(c.id, { jsonrpc: '2.0', id: c.id, error });
      else forward.push(c);
    }
    if (forward.length > 0) {
      const res = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(forward) });
      for (const a of (await res.json()) as Array<{ id: number }>) answers.set(a.id, rewrite(forward.find((c) => c.id === a.id)!, a));
    }
    const out = calls.map((c) => answers.get(c.id));
    return { status: 200, body: JSON.stringify(Array.isArray(parsed) ? out : out[0]) };
  });
  return { url: server.url, batchSizes, methods, close: server.close };
}

/**
 * Init code of a contract whose every call (value accepted) emits, from the caller:
 * Transfer(caller, to1, 1000) and Transfer(caller, to2, 2000) (ERC-20 shaped), an ERC-721
 * shaped Transfer(caller, to1, tokenId 7) (4 topics), and a 3-topic Transfer to to1 with no data
 * (malformed). Hand-assembled EVM bytecode: no compiler needed.
 */
function transferEmitterInitCode(to1: string, to2: string): string {
  const topic = ERC20_TRANSFER_TOPIC.slice(2);
  const push20 = (a: string) => '73' + a.slice(2).toLowerCase();
  const push32Topic = '7f' + topic;
  const erc20Log = (to: string, amountHex4: string) =>
    '61' + amountHex4 + '6000' + '52' // PUSH2 amount, PUSH1 0, MSTORE
    + push20(to) + '33' + push32Topic + '6020' + '6000' + 'a3'; // to, CALLER, topic0, size 32, offset 0, LOG3
  const runtime = erc20Log(to1, '03e8') + erc20Log(to2, '07d0')
    + '6007' + push20(to1) + '33' + push32Topic + '6000' + '6000' + 'a4' // tokenId 7, to, CALLER, topic0, size 0, offset 0, LOG4
    + push20(to1) + '33' + push32Topic + '6000' + '6000' + 'a3' // 3 topics, empty data
    + '00'; // STOP
  const len = runtime.length / 2;
  const len2 = len.toString(16).padStart(4, '0');
  // PUSH2 len, DUP1, PUSH2 offset(13), PUSH1 0, CODECOPY, PUSH1 0, RETURN
  const init = '61' + len2 + '80' + '61' + '000d' + '6000' + '39' + '6000' + 'f3';
  if (init.length / 2 !== 13) throw new Error('init code length changed');
  return '0x' + init + runtime;
}
