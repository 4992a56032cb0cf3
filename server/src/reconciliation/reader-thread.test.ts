import { expect } from 'chai';
import { ChainRpcError, WcsError, type ChainDefinition } from '@wcs/core';
import { deployErc20, deployMulticall3, mine, mintErc20, sendNative, startAnvil, anvilRpc, type AnvilDevnet } from '@wcs/adapter-evm/devnet';
import { plugin as evmPlugin } from '@wcs/adapter-evm';
import { ThreadedBalanceReader, revive } from './reader-thread';
import { flatten } from './reader-thread-protocol';

const CHAIN: ChainDefinition = {
  id: 102, code: 'ETH', name: 'Ethereum (anvil)', family: 'evm', environment: 'test', network: 'sepolia', curve: 'secp256k1', addressing: 'hd',
  nativeSymbol: 'ETH', decimals: 18, confirmations: 3, evmChainId: 11155111, options: {},
};

describe('ThreadedBalanceReader: a chain\'s balance reader in a worker thread (anvil)', function () {
  this.timeout(60_000);
  let anvil: AnvilDevnet;
  let token: string;
  const holders = ['0x1111111111111111111111111111111111111111', '0x2222222222222222222222222222222222222222', '0x3333333333333333333333333333333333333333'];
  const readers: ThreadedBalanceReader[] = [];
  const threaded = () => {
    const endpoint = { url: anvil.url, timeoutMs: 10_000 };
    const r = new ThreadedBalanceReader({ pluginPackage: '@wcs/adapter-evm', chain: CHAIN, endpoint }, evmPlugin.create(CHAIN).createBalanceReader!(endpoint));
    readers.push(r);
    return r;
  };

  before(async () => {
    anvil = await startAnvil({ chainId: 11155111 });
    await deployMulticall3(anvil.url);
    token = await deployErc20(anvil.url, { name: 'Thread USD', symbol: 'TUSD' });
    for (const [i, h] of holders.entries()) {
      await sendNative(anvil.url, h, BigInt(i + 1) * 10n ** 15n + 7n);
      await mintErc20(anvil.url, token, h, BigInt(i + 1) * 1000n + 3n);
    }
  });
  after(async () => {
    await Promise.all(readers.map((r) => r.close()));
    await anvil?.stop();
  });

  it('answers exactly what the same reader in this thread answers: the head, the history it probed, every balance at one block', async () => {
    const endpoint = { url: anvil.url, timeoutMs: 10_000 };
    const inline = evmPlugin.create(CHAIN).createBalanceReader!(endpoint);
    const r = threaded();
    await r.ready();
    const head = await r.head();
    expect(head).to.deep.equal(await inline.head());
    expect(r.history).to.deep.equal(inline.history);
    expect(r.history.kind).to.equal('archive'); // anvil keeps every state: the thread's probe said so
    const queries = holders.flatMap((h) => [{ address: h, contract: null }, { address: h, contract: token }]);
    const there = await r.balancesAt(queries, head);
    const here = await inline.balancesAt(queries, head);
    expect(there).to.deep.equal(here);
    expect(there.answers.map((a) => (a.kind === 'AMOUNT' ? a.amount : null))).to.deep.equal(holders.flatMap((_, i) => [BigInt(i + 1) * 10n ** 15n + 7n, BigInt(i + 1) * 1000n + 3n]));
    // optional reads follow the reader's own: the EVM reader has neither
    expect(r.unspentOutputs).to.equal(undefined);
    expect(r.nativeChanges).to.equal(undefined);
  });

  it('the reader\'s errors come back as the same kinds: a malformed query a TypeError, a block reorganised away RPC_INCONSISTENT', async () => {
    const r = threaded();
    const head = await r.head();
    let bad: unknown = null;
    await r.balancesAt([{ address: '0x12', contract: null }], head).catch((e: unknown) => { bad = e; });
    expect(bad).to.be.instanceOf(TypeError);
    expect((bad as Error).message).to.match(/not an EVM address/);
    // the block the read is pinned to leaves the chain
    await mine(anvil.url, 2);
    const point = await r.head();
    await anvilRpc(anvil.url, 'anvil_reorg', [2, []]);
    let gone: unknown = null;
    await r.balancesAt([{ address: holders[0]!, contract: null }], point).catch((e: unknown) => { gone = e; });
    expect(gone).to.be.instanceOf(ChainRpcError);
    expect((gone as ChainRpcError).errorName).to.be.oneOf(['RPC_INCONSISTENT', 'RPC_ERROR']);
  });

  it('a thread that cannot load its adapter fails every call and says it is broken; close() ends a working one', async () => {
    const endpoint = { url: anvil.url };
    const r = new ThreadedBalanceReader({ pluginPackage: '@wcs/no-such-adapter', chain: CHAIN, endpoint }, evmPlugin.create(CHAIN).createBalanceReader!(endpoint));
    readers.push(r);
    let failed: unknown = null;
    await r.ready().catch((e: unknown) => { failed = e; });
    expect(String((failed as Error)?.message)).to.match(/no-such-adapter/);
    expect(r.broken).to.equal(true);
    await r.head().then(() => expect.fail('answered'), (e: unknown) => expect(String((e as Error).message)).to.match(/no-such-adapter/));
    const ok = threaded();
    await ok.head();
    await ok.close();
    expect(ok.broken).to.equal(true);
    await ok.head().then(() => expect.fail('answered after close'), (e: unknown) => expect(String((e as Error).message)).to.match(/closed/));
  });

  it('errors cross the boundary with their kind and details (flatten, then revive)', () => {
    const rpc = new ChainRpcError('RPC_UNAVAILABLE', 'ETH RPC http://x: 503', { method: 'eth_call', responseStatus: 503, attempts: 3 });
    const back = revive(flatten(rpc));
    expect(back).to.be.instanceOf(ChainRpcError);
    expect(back).to.include({ errorName: 'RPC_UNAVAILABLE', message: rpc.message, method: 'eth_call', responseStatus: 503, attempts: 3, code: rpc.code });
    const coded = new WcsError('CHAIN_UNKNOWN', { message: 'no adapter for XYZ', details: { chainCode: 'XYZ' } });
    const c = revive(flatten(coded));
    expect(c).to.be.instanceOf(WcsError);
    expect(c).to.include({ code: coded.code, errorName: 'CHAIN_UNKNOWN', message: 'no adapter for XYZ' });
    expect((c as WcsError).details).to.deep.equal({ chainCode: 'XYZ' });
    expect(revive(flatten(new TypeError('bad')))).to.be.instanceOf(TypeError);
    const plain = revive(flatten('a string'));
    expect(plain).to.be.instanceOf(Error);
    expect(plain.message).to.equal('a string');
  });
});
