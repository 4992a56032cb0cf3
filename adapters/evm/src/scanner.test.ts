import { expect } from 'chai';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HDNodeWallet, Wallet, getAddress, hexlify, randomBytes } from 'ethers';
import type { BlockRef, BlockScanner, ObservedTransfer } from '@wcs/core';
import { testChain } from '@wcs/core/testing';
import {
  ANVIL_DEFAULT_MNEMONIC, ANVIL_DEV_KEYS, anvilRpc, deployErc20, erc20Balance, mine, mintErc20, sendNative, setAutomine, startAnvil, startBlockClock, transferErc20, waitForReceipt,
  type AnvilDevnet,
} from './devnet';
import { ERC20_TRANSFER_TOPIC, EvmBlockScanner, EvmRpcError, plugin } from './index';

const ANVIL_CHAIN = testChain({ id: 900, code: 'ANVIL', name: 'anvil devnet', family: 'evm', environment: 'test', network: 'anvil', nativeSymbol: 'ETH', decimals: 18, confirmations: 1, evmChainId: 31337 });
const DEV0 = getAddress(new Wallet(ANVIL_DEV_KEYS[0]!).address);
const DEV1 = getAddress(new Wallet(ANVIL_DEV_KEYS[1]!).address);
const ZERO = '0x0000000000000000000000000000000000000000';

/** A fresh EIP-55 address nobody watches yet. */
const fresh = () => getAddress(hexlify(randomBytes(20)));

type Receipt = { blockNumber: string; blockHash: string; status: string; contractAddress: string | null };

/** Mocha's it() for tests that need anvil: a chain that did not start fails them (before() throws), never skips them. */
describe('EvmBlockScanner against anvil', function () {
  this.timeout(60_000);
  let anvil: AnvilDevnet;
  let url: string;
  let scanner: BlockScanner;
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
    scanner = adapter.createScanner!({ url, timeoutMs: 10_000 }) as BlockScanner;
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
      expect(proxy.batchSizes.reduce((a, b) => a + b, 0)).to.equal(Number(end - start + 1n) + 1 + 1); // blocks + getLogs + one receipt
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

  it('refuses a node of another chain (RPC_WRONG_CHAIN)', async () => {
    const wrong = plugin.create({ ...ANVIL_CHAIN, evmChainId: 1 }).createScanner!({ url }) as BlockScanner;
    const e = await expectRejected(wrong.tipHeight(), EvmRpcError);
    expect(e.code).to.equal('RPC_WRONG_CHAIN');
    expect(e.message).to.match(/31337.*\b1\b/);
  });
});

describe('EvmBlockScanner RPC errors', () => {
  it('a dead port fails quickly with RPC_UNAVAILABLE', async () => {
    const port = await deadPort();
    const scanner = new EvmBlockScanner({ url: `http://127.0.0.1:${port}`, timeoutMs: 2000 });
    const t = Date.now();
    const e = await expectRejected(scanner.tipHeight(), EvmRpcError);
    expect(e.code).to.equal('RPC_UNAVAILABLE');
    expect(e.message).to.match(/ECONNREFUSED/);
    expect(Date.now() - t).to.be.below(3000);
  });

  it('never shows URL credentials, the URL path or header values in messages', async () => {
    const port = await deadPort();
    for (const url of [`https://user:secret@127.0.0.1:${port}/v3/pathkey123?apikey=querykey456`, `http://user:secret@127.0.0.1:${port}/v3/pathkey123`]) {
      const scanner = plugin.create(ANVIL_CHAIN).createScanner!({ url, headers: { 'x-api-key': 'headerkey789' }, timeoutMs: 2000 }) as BlockScanner;
      for (const attempt of [scanner.tipHeight(), scanner.blockAt(1n), scanner.scanRange(1n, 2n, new Set([fresh()])), scanner.lookupTransaction('0x' + 'ab'.repeat(32))]) {
        const e = await expectRejected(attempt, EvmRpcError);
        expect(e.code).to.equal('RPC_UNAVAILABLE');
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
      const unavailable = await expectRejected(scanner.tipHeight(), EvmRpcError);
      expect([unavailable.code, unavailable.httpStatus]).to.deep.equal(['RPC_UNAVAILABLE', 503]);

      const rpcError = await expectRejected(scanner.blockAt(1n), EvmRpcError);
      expect([rpcError.code, rpcError.rpcCode]).to.deep.equal(['RPC_ERROR', -32000]);
      expect(rpcError.message).to.include('eth_getBlockByNumber').and.not.include('pathkey123').and.not.include('headerkey789');

      status = 401;
      const refused = await expectRejected(scanner.tipHeight(), EvmRpcError);
      expect([refused.code, refused.httpStatus]).to.deep.equal(['RPC_ERROR', 401]);
      expect(refused.message).to.match(/credentials/);
      expect(() => new EvmBlockScanner({ url: 'ftp://user:secret@host/x' })).to.throw(EvmRpcError, /http\(s\)/).that.satisfies((e: EvmRpcError) => e.code === 'RPC_CONFIG' && !e.message.includes('secret'));
    } finally {
      await server.close();
    }
  });

  it('times out a silent node with RPC_UNAVAILABLE', async () => {
    const server = await startServer(() => new Promise(() => undefined));
    try {
      const scanner = new EvmBlockScanner({ url: `http://127.0.0.1:${server.port}`, timeoutMs: 200 }, { retries: 1, backoffMs: 10 });
      const e = await expectRejected(scanner.tipHeight(), EvmRpcError);
      expect(e.code).to.equal('RPC_UNAVAILABLE');
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
 * asked, and can answer some calls with an error instead of forwarding them.
 */
async function startProxy(target: string, refuse: (call: Call) => { code: number; message: string } | undefined = () => undefined) {
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
      for (const a of (await res.json()) as Array<{ id: number }>) answers.set(a.id, a);
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
