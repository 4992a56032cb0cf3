import { expect } from 'chai';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getAddress, hexlify, randomBytes } from 'ethers';
import { ChainRpcError, scanning } from '@wcs/core';
import { testChain } from '@wcs/core/testing';
import { anvilRpc, mine, setAutomine, startAnvil, type AnvilDevnet } from './devnet';
import { contractWallet, deployContractWallet, devSend, walletCall } from './contract-wallet.test-helper';
import { EvmBlockScanner, plugin } from './index';

const ANVIL_CHAIN = testChain({ id: 900, code: 'ANVIL', name: 'anvil devnet', family: 'evm', environment: 'test', network: 'anvil', nativeSymbol: 'ETH', decimals: 18, confirmations: 1, evmChainId: 31337 });
const fresh = () => getAddress(hexlify(randomBytes(20)));
const ETH = 10n ** 18n;
const GAS = '0x100000';

type Call = { id: number; method: string; params: unknown[] };

/**
 * A JSON-RPC relay to anvil that records what is asked (batch sizes, methods) and answers the
 * methods `refuse` names with "method not found", as a node without that API does.
 */
async function relay(target: string, refuse: ReadonlySet<string> = new Set()) {
  const batchSizes: number[] = [];
  const methods: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      void (async () => {
        const parsed = JSON.parse(body) as Call | Call[];
        const calls = Array.isArray(parsed) ? parsed : [parsed];
        batchSizes.push(calls.length);
        methods.push(...calls.map((c) => c.method));
        const forward = calls.filter((c) => !refuse.has(c.method));
        const answers = new Map<number, unknown>();
        for (const c of calls) if (refuse.has(c.method)) answers.set(c.id, { jsonrpc: '2.0', id: c.id, error: { code: -32601, message: `Method not found: ${c.method}` } });
        if (forward.length > 0) {
          const r = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(forward) });
          for (const a of (await r.json()) as Array<{ id: number }>) answers.set(a.id, a);
        }
        const out = calls.map((c) => answers.get(c.id));
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(Array.isArray(parsed) ? out : out[0]));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    batchSizes,
    methods,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('EvmBlockScanner: internal transfers from traces, on anvil (a contract wallet compiled with solc)', function () {
  this.timeout(60_000);
  let anvil: AnvilDevnet;
  let url: string;
  let scanner: EvmBlockScanner;
  let wallet: string;
  let walletEip55: string;
  const heightOf = async (r: { blockNumber: string }) => BigInt(r.blockNumber);

  before(async () => {
    anvil = await startAnvil();
    url = anvil.url;
    contractWallet(); // compile once, before the timed parts
    const built = scanning(plugin.create(ANVIL_CHAIN)).createScanner({ url, timeoutMs: 10_000 });
    if (!(built instanceof EvmBlockScanner)) throw new TypeError('the EVM adapter made another scanner');
    scanner = built;
    wallet = await deployContractWallet(url, 10n * ETH);
    walletEip55 = getAddress(wallet);
  });

  after(async () => {
    await anvil?.stop();
  });

  it('detects the trace API once: debug_traceBlockByNumber on anvil; trace_block when the node lacks debug_; unavailable when it has neither; off when the option says so', async () => {
    expect(await scanner.traceMode()).to.equal('debug_traceBlockByNumber');
    expect(await new EvmBlockScanner({ url }, { traces: 'off' }).traceMode()).to.equal('off');
    const noDebug = await relay(url, new Set(['debug_traceBlockByNumber']));
    const none = await relay(url, new Set(['debug_traceBlockByNumber', 'trace_block']));
    try {
      const s = new EvmBlockScanner({ url: noDebug.url });
      expect(await s.traceMode()).to.equal('trace_block');
      expect(await s.traceMode()).to.equal('trace_block');
      expect(noDebug.methods, 'probed once, the latest block').to.deep.equal(['debug_traceBlockByNumber', 'trace_block']);
      expect(await new EvmBlockScanner({ url: none.url }).traceMode()).to.equal('unavailable');
    } finally {
      await noDebug.close();
      await none.close();
    }
    expect(() => new EvmBlockScanner({ url }, { traces: 'on' as never })).to.throw(TypeError, /traces/);
    expect(() => plugin.create({ ...ANVIL_CHAIN, options: { traces: 'yes' } })).to.throw(/option traces must be "auto" or "off"/);
    const off = scanning(plugin.create({ ...ANVIL_CHAIN, code: 'ANVILOFF', options: { traces: 'off' } })).createScanner({ url });
    expect(off.kind === 'blocks' && off.traceMode ? await off.traceMode() : null, 'the chain option reaches the scanner').to.equal('off');
  });

  it('a node that cannot be reached is not "unavailable": the probe throws and is asked again', async () => {
    const s = new EvmBlockScanner({ url: 'http://127.0.0.1:9', timeoutMs: 2_000 }, { attempts: 1 });
    for (let i = 0; i < 2; i++) {
      try {
        await s.traceMode();
        expect.fail('expected RPC_UNAVAILABLE');
      } catch (e) {
        expect((e as ChainRpcError).errorName).to.equal('RPC_UNAVAILABLE');
      }
    }
  });

  it('credits a contract wallet\'s CALL with value to a watched address: position -2 (then -3, ...), txHash the outer transaction\'s, fromAddress the wallet; the same through trace_block', async () => {
    const w = fresh();
    const other = fresh();
    const r = await devSend(url, { to: wallet, data: walletCall('pay', [[w, other, w], [5n, 6n, 7n]]), gas: GAS });
    expect(r.status).to.equal('0x1');
    const h = await heightOf(r);
    const { blocks, transfers } = await scanner.scanRange(h, h, new Set([w]));
    const base = { txHash: r.transactionHash, fromAddress: walletEip55, toAddress: w, memo: null, contract: null, blockHeight: h, blockHash: blocks[0]!.hash, succeeded: true };
    expect(transfers).to.deep.equal([{ ...base, position: -2, amount: 5n }, { ...base, position: -4, amount: 7n }]);
    const parity = await relay(url, new Set(['debug_traceBlockByNumber']));
    try {
      expect((await new EvmBlockScanner({ url: parity.url }).scanRange(h, h, new Set([w]))).transfers).to.deep.equal(transfers);
      expect(parity.methods).to.include('trace_block');
    } finally {
      await parity.close();
    }
    // the outer transaction is what lookupTransaction follows (the orphan path)
    expect(await scanner.lookupTransaction(r.transactionHash)).to.deep.equal({ state: 'MINED', blockHeight: h, blockHash: blocks[0]!.hash, succeeded: true });
  });

  it('does not credit a transfer whose frame reverted (the transaction succeeded), nor one in a failed transaction; a DELEGATECALL carries no value of its own', async () => {
    const w = fresh();
    const inner = await deployContractWallet(url, ETH);
    const reverted = await devSend(url, { to: wallet, data: walletCall('payThroughReverting', [inner, w, 9n]), gas: GAS });
    const failed = await devSend(url, { to: wallet, data: walletCall('payThenRevert', [w, 10n]), gas: GAS });
    const delegated = await devSend(url, { to: wallet, data: walletCall('payByDelegate', [inner, w, 11n]), gas: GAS });
    expect([reverted.status, failed.status, delegated.status]).to.deep.equal(['0x1', '0x0', '0x1']);
    const { transfers } = await scanner.scanRange(await heightOf(reverted), await heightOf(delegated), new Set([w]));
    // only the delegated code's CALL, from the wallet (the DELEGATECALL runs in its context), the transaction's first value frame
    expect(transfers.map((t) => [t.txHash, t.position, t.fromAddress, t.amount])).to.deep.equal([[delegated.transactionHash, -2, walletEip55, 11n]]);
    expect(BigInt(await anvilRpc<string>(url, 'eth_getBalance', [w, 'latest']))).to.equal(11n);
  });

  it('credits SELFDESTRUCT\'s balance to its beneficiary; an internal transfer out of a sender counts as outgoing', async () => {
    const w = fresh();
    const doomed = await deployContractWallet(url, 3n * ETH);
    const r = await devSend(url, { to: doomed, data: walletCall('destroy', [w]), gas: GAS });
    const h = await heightOf(r);
    const found = await scanner.scanRange(h, h, new Set([w]));
    expect(found.transfers.map((t) => [t.txHash, t.position, t.fromAddress, t.toAddress, t.amount])).to.deep.equal([[r.transactionHash, -2, getAddress(doomed), w, 3n * ETH]]);
    const out = await scanner.scanRange(h, h, new Set(), { senders: new Set([getAddress(doomed)]) });
    expect(out.transfers).to.deep.equal(found.transfers);
  });

  it('traces off: the same payment is not seen (the transaction path alone)', async () => {
    const w = fresh();
    const r = await devSend(url, { to: wallet, data: walletCall('pay', [[w], [12n]]), gas: GAS });
    const h = await heightOf(r);
    expect((await new EvmBlockScanner({ url }, { traces: 'off' }).scanRange(h, h, new Set([w]))).transfers).to.deep.equal([]);
    expect((await scanner.scanRange(h, h, new Set([w]))).transfers.map((t) => t.amount)).to.deep.equal([12n]);
  });

  it('traces only the blocks with transactions, in one batch with the receipts after the blocks\' batch; none when nothing is watched; a top-level deposit keeps -1 beside internal ones in the same block', async () => {
    const w = fresh();
    await setAutomine(url, false);
    let hashes: string[];
    try {
      hashes = [
        await anvilRpc<string>(url, 'eth_sendTransaction', [{ from: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', to: w, value: '0x64' }]),
        await anvilRpc<string>(url, 'eth_sendTransaction', [{ from: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', to: wallet, data: walletCall('pay', [[w], [13n]]), gas: GAS }]),
      ];
      await mine(url);
    } finally {
      await setAutomine(url, true);
    }
    const h = BigInt(await anvilRpc<string>(url, 'eth_blockNumber'));
    await mine(url, 2);
    const proxy = await relay(url);
    try {
      const s = new EvmBlockScanner({ url: proxy.url });
      const { transfers } = await s.scanRange(h, h + 2n, new Set([w]));
      expect(transfers.map((t) => [t.txHash, t.position, t.amount])).to.deep.equal([[hashes[0], -1, 100n], [hashes[1], -2, 13n]]);
      // the probe; then 3 blocks + eth_getLogs; then the trace of block h (h + 1 and h + 2 are empty) with the top-level transfer's receipt
      expect(proxy.batchSizes).to.deep.equal([1, 4, 2]);
      expect(proxy.methods.slice(1)).to.deep.equal([...Array(3).fill('eth_getBlockByNumber'), 'eth_getLogs', 'debug_traceBlockByNumber', 'eth_getTransactionReceipt']);
      expect(proxy.methods.filter((m) => m === 'debug_traceBlockByNumber')).to.have.length(2); // the probe's and block h's
      let m = proxy.methods.length;
      // only empty blocks: one batch, no trace
      await s.scanRange(h + 1n, h + 2n, new Set([w]));
      expect(proxy.methods.slice(m)).to.deep.equal([...Array(2).fill('eth_getBlockByNumber'), 'eth_getLogs']);
      m = proxy.methods.length;
      await s.scanRange(h, h + 2n, new Set());
      expect(proxy.methods.slice(m)).to.deep.equal(Array(3).fill('eth_getBlockByNumber'));
    } finally {
      await proxy.close();
    }
  });

  it('a block whose only match is internal: the second batch is its trace alone (an unrelated top-level transfer asks no receipt), at the position the whole block\'s trace gives', async () => {
    const w = fresh();
    const other = fresh();
    await setAutomine(url, false);
    let hashes: string[];
    try {
      hashes = [
        await anvilRpc<string>(url, 'eth_sendTransaction', [{ from: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', to: other, value: '0x64' }]),
        await anvilRpc<string>(url, 'eth_sendTransaction', [{ from: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', to: wallet, data: walletCall('pay', [[other, w], [5n, 15n]]), gas: GAS }]),
      ];
      await mine(url);
    } finally {
      await setAutomine(url, true);
    }
    const h = BigInt(await anvilRpc<string>(url, 'eth_blockNumber'));
    await mine(url, 1);
    const proxy = await relay(url);
    try {
      const s = new EvmBlockScanner({ url: proxy.url });
      await s.traceMode();
      const { transfers } = await s.scanRange(h, h + 1n, new Set([w]));
      expect(transfers.map((t) => [t.txHash, t.position, t.amount])).to.deep.equal([[hashes[1], -3, 15n]]);
      // the probe; 2 blocks + eth_getLogs; block h's trace (its unrelated transfer needs no receipt; h + 1 is empty)
      expect(proxy.batchSizes).to.deep.equal([1, 3, 1]);
      expect(proxy.methods.slice(4)).to.deep.equal(['debug_traceBlockByNumber']);
    } finally {
      await proxy.close();
    }
  });

  it('a node that refuses traces still scans a range of empty blocks: nothing there to trace (the next test: a block with transactions fails the scan)', async () => {
    const w = fresh();
    await mine(url, 3);
    const tip = BigInt(await anvilRpc<string>(url, 'eth_blockNumber'));
    const proxy = await relay(url, new Set(['debug_traceBlockByNumber']));
    try {
      const swapped = new EvmBlockScanner({ url: proxy.url });
      (swapped as unknown as { detected: Promise<string> }).detected = Promise.resolve('debug_traceBlockByNumber');
      const { blocks, transfers } = await swapped.scanRange(tip - 2n, tip, new Set([w]));
      expect(blocks.map((b) => b.height)).to.deep.equal([tip - 2n, tip - 1n, tip]);
      expect(transfers).to.deep.equal([]);
      expect(proxy.methods).to.not.include('debug_traceBlockByNumber');
    } finally {
      await proxy.close();
    }
  });

  it('a trace the node refuses for a block fails the scan (RPC_ERROR) rather than skipping what it would have shown', async () => {
    const w = fresh();
    const r = await devSend(url, { to: wallet, data: walletCall('pay', [[w], [14n]]), gas: GAS });
    const h = await heightOf(r);
    const proxy = await relay(url, new Set(['debug_traceBlockByNumber']));
    try {
      // a scanner that detected traces, then reads through a node that refuses them (a pruned or swapped node)
      const swapped = new EvmBlockScanner({ url: proxy.url });
      (swapped as unknown as { detected: Promise<string> }).detected = Promise.resolve('debug_traceBlockByNumber');
      try {
        await swapped.scanRange(h, h, new Set([w]));
        expect.fail('expected the scan to fail');
      } catch (e) {
        expect((e as ChainRpcError).errorName).to.equal('RPC_ERROR');
        expect((e as Error).message).to.include(`debug_traceBlockByNumber (block ${h})`);
      }
    } finally {
      await proxy.close();
    }
  });

  it('lookupTransaction of a block hash (a withdrawal\'s "transaction"): MINED while the block is on the best chain, UNKNOWN once a reorg replaced it', async () => {
    await mine(url, 2);
    const tip = BigInt(await anvilRpc<string>(url, 'eth_blockNumber'));
    const block = (await scanner.blockAt(tip))!;
    expect(await scanner.lookupTransaction(block.hash)).to.deep.equal({ state: 'MINED', blockHeight: tip, blockHash: block.hash, succeeded: true });
    await anvilRpc(url, 'anvil_reorg', [1, []]);
    const replaced = (await scanner.blockAt(tip))!;
    expect(replaced.hash).to.not.equal(block.hash);
    expect(await scanner.lookupTransaction(block.hash)).to.deep.equal({ state: 'UNKNOWN' });
  });
});
