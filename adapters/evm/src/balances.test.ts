import { expect } from 'chai';
import { Wallet, getAddress, hexlify, randomBytes } from 'ethers';
import { ChainRpcError, type BalancePoint, type BalanceQuery } from '@wcs/core';
import { EvmBalanceReader, MULTICALL3_ADDRESS, type EvmBalanceReaderOptions } from './balances';
import { ANVIL_DEFAULT_CHAIN_ID, anvilRpc, sendNative, deployErc20, deployMulticall3, erc20Balance, mine, mintErc20, startAnvil, transferErc20, type AnvilDevnet } from './devnet';

/**
 * The EVM balance reader on a real anvil: 200 addresses, native coin and two ERC-20s, read in one
 * balancesAt and compared with anvil's own answers one by one; an older block; the same answers
 * without Multicall3 (one eth_call per pair); a block reorganised away under the read.
 */

const ETHER = 10n ** 18n;
const N = 200;

/** A fetch that counts the JSON-RPC calls it carries, per method. */
function countingFetch(): { fetch: typeof fetch; calls: Map<string, number>; requests: string[][]; reset(): void } {
  const calls = new Map<string, number>();
  const requests: string[][] = [];
  const counting: typeof fetch = async (input, init) => {
    const body = JSON.parse(String(init?.body)) as unknown;
    const methods = ((Array.isArray(body) ? body : [body]) as Array<{ method: string }>).map((c) => c.method);
    requests.push(methods);
    for (const m of methods) calls.set(m, (calls.get(m) ?? 0) + 1);
    return fetch(input, init);
  };
  return { fetch: counting, calls, requests, reset: () => { calls.clear(); requests.length = 0; } };
}

describe('EvmBalanceReader (anvil)', function () {
  this.timeout(180_000);
  let anvil: AnvilDevnet;
  let url: string;
  let tokenA: string;
  let tokenB: string;
  const addresses = Array.from({ length: N }, () => getAddress(hexlify(randomBytes(20))));
  let queries: BalanceQuery[];
  /** Balances read one by one from anvil at the point `first` (after the setup). */
  let expected: bigint[];
  let first: BalancePoint;

  const reader = (options: EvmBalanceReaderOptions = {}) => new EvmBalanceReader({ url }, { expectedChainId: ANVIL_DEFAULT_CHAIN_ID, ...options });
  const individually = async (qs: readonly BalanceQuery[], block: string) => Promise.all(qs.map(async (q) => (q.contract === null
    ? BigInt(await anvilRpc<string>(url, 'eth_getBalance', [q.address, block]))
    : BigInt(await anvilRpc<string>(url, 'eth_call', [{ to: q.contract, data: `0x70a08231${q.address.slice(2).toLowerCase().padStart(64, '0')}` }, block])))));

  before(async () => {
    anvil = await startAnvil();
    url = anvil.url;
    tokenA = await deployErc20(url, { name: 'Token A', symbol: 'TKA' });
    tokenB = await deployErc20(url, { name: 'Token B', symbol: 'TKB' });
    for (let i = 0; i < N; i++) {
      // Some hold nothing, some native only, some tokens only: zeros are answers too.
      if (i % 5 !== 0) await anvilRpc(url, 'anvil_setBalance', [addresses[i], `0x${(BigInt(i + 1) * ETHER + BigInt(i)).toString(16)}`]);
      if (i % 2 === 0) await mintErc20(url, tokenA, addresses[i]!, 1_000_000n + BigInt(i));
      if (i % 3 === 0) await mintErc20(url, tokenB, addresses[i]!, 7n * 10n ** 20n + BigInt(i));
    }
    // Mixed order and repeats: answers follow the queries.
    queries = addresses.flatMap((address, i): BalanceQuery[] => (i % 2 === 0
      ? [{ address, contract: tokenB }, { address, contract: null }, { address, contract: tokenA }]
      : [{ address, contract: null }, { address, contract: tokenA }, { address, contract: tokenB }]));
    queries.push({ address: addresses[4]!, contract: tokenA }, { address: addresses[4]!.toLowerCase(), contract: null });
    const latest = (await anvilRpc<{ number: string; hash: string }>(url, 'eth_getBlockByNumber', ['latest', false]));
    first = { height: BigInt(latest.number), blockHash: latest.hash };
    expected = await individually(queries, latest.number);
    expect(expected.filter((v) => v > 0n).length, 'the setup made balances').to.be.greaterThan(N);
  });

  after(async () => anvil?.stop());

  it('without Multicall3 on the chain: one eth_call per (token, address), answers equal to the node read one by one', async () => {
    const counter = countingFetch();
    const r = reader({ fetch: counter.fetch, batchSize: 64 });
    const at = await r.head();
    expect(at).to.deep.equal(first);
    expect(r.history).to.deep.equal({ kind: 'archive' });
    counter.reset();
    const { at: readAt, answers } = await r.balancesAt(queries, at);
    expect(readAt).to.deep.equal(first);
    expect(answers.map((a) => (a.kind === 'AMOUNT' ? a.amount : null))).to.deep.equal(expected);
    expect(await r.usesMulticall()).to.equal(false);
    expect(counter.calls.get('eth_getBalance')).to.equal(N); // the repeated address is read once
    expect(counter.calls.get('eth_call')).to.equal(2 * N);
  });

  it('with Multicall3: the same answers in one aggregate3 per multicallSize pairs', async () => {
    await mine(url, 1); // anvil_setCode changes the latest block's state in place: not `first`'s
    expect(await deployMulticall3(url)).to.equal(MULTICALL3_ADDRESS);
    await mine(url, 1);
    const counter = countingFetch();
    const r = reader({ fetch: counter.fetch, multicallSize: 150 });
    const at = await r.head();
    counter.reset();
    const { answers } = await r.balancesAt(queries, at);
    expect(answers.map((a) => (a.kind === 'AMOUNT' ? a.amount : null))).to.deep.equal(expected);
    expect(await r.usesMulticall()).to.equal(true);
    expect(counter.calls.get('eth_call')).to.equal(Math.ceil((2 * N) / 150));
    // aggregate3 calls go in requests of their own, as many as fit maxRequestBytes (here one each)
    const small = countingFetch();
    const one = reader({ fetch: small.fetch, multicallSize: 150, maxRequestBytes: 1 });
    await one.head();
    small.reset();
    expect((await one.balancesAt(queries, at)).answers.map((a) => (a.kind === 'AMOUNT' ? a.amount : null))).to.deep.equal(expected);
    expect(small.requests.filter((r) => r.includes('eth_call')).map((r) => r.length)).to.deep.equal([1, 1, 1]);
  });

  it('reads an older block as it was: later changes are not in it', async () => {
    // Moves after `first`: a token transfer out of address 0, new native coin and tokens for address 1.
    const holder = Wallet.createRandom();
    await anvilRpc(url, 'anvil_setBalance', [holder.address, `0x${ETHER.toString(16)}`]);
    await mintErc20(url, tokenA, holder.address, 500n);
    await transferErc20(url, tokenA, addresses[0]!, 123n, { fromPrivateKey: holder.privateKey });
    await anvilRpc(url, 'anvil_setBalance', [addresses[1], '0x1']);
    await mintErc20(url, tokenB, addresses[1]!, 9n);
    await mine(url, 1);
    for (const pin of ['hash', 'number'] as const) {
      const r = reader({ pin });
      const old = await r.balancesAt(queries, first);
      expect(old.answers.map((a) => (a.kind === 'AMOUNT' ? a.amount : null)), pin).to.deep.equal(expected);
      const now = await r.balancesAt(queries, await r.head());
      const latest = await individually(queries, 'latest');
      expect(now.answers.map((a) => (a.kind === 'AMOUNT' ? a.amount : null)), pin).to.deep.equal(latest);
      expect(latest).to.not.deep.equal(expected);
    }
    expect(await erc20Balance(url, tokenA, addresses[0]!)).to.equal(expected[2]! + 123n);
  });

  it('below Multicall3\'s deployment the reader falls back to one eth_call per pair (same block, same answers)', async () => {
    // `first` is below the block where Multicall3's code was set: aggregate3 answers 0x there.
    const counter = countingFetch();
    const r = reader({ fetch: counter.fetch });
    expect(await r.usesMulticall()).to.equal(true);
    counter.reset();
    const { answers } = await r.balancesAt(queries, first);
    expect(answers.map((a) => (a.kind === 'AMOUNT' ? a.amount : null))).to.deep.equal(expected);
    expect(counter.calls.get('eth_call')).to.equal(Math.ceil((2 * N) / 500) + 2 * N);
  });

  for (const pin of ['hash', 'number'] as const) {
    it(`a point reorganised away is RPC_INCONSISTENT, never a mixed answer (pin: ${pin})`, async () => {
      const r = reader({ pin });
      const snapshot = await anvilRpc<string>(url, 'evm_snapshot');
      await mine(url, 1);
      const doomed = await r.head();
      await anvilRpc(url, 'evm_revert', [snapshot]);
      await sendNative(url, addresses[2]!, 2n); // another transaction, another block at that height
      const replaced = await r.head();
      expect(replaced.height).to.equal(doomed.height);
      expect(replaced.blockHash).to.not.equal(doomed.blockHash);
      const failure = await r.balancesAt(queries, doomed).then(() => null, (e: unknown) => e);
      expect(failure).to.be.instanceOf(ChainRpcError);
      expect((failure as ChainRpcError).errorName).to.equal('RPC_INCONSISTENT');
      const fresh = await r.balancesAt(queries.slice(0, 3), replaced);
      expect(fresh.answers).to.have.length(3);
    });
  }

  it('checks every query before asking the node: a bad address or token is a TypeError and no call', async () => {
    const counter = countingFetch();
    const r = reader({ fetch: counter.fetch });
    const bad: Array<[BalanceQuery[], RegExp]> = [
      [[{ address: '0x123', contract: null }], /not an EVM address/],
      [[{ address: addresses[0]!, contract: null }, { address: addresses[1]!, contract: 'USDT' }], /not an EVM address/],
      // EIP-55 with one letter's case flipped
      // EIP-55's test vector 0x52908400098527886E0F7030069857D2E4169EE7 with one letter's case flipped
      [[{ address: '0x52908400098527886E0F7030069857D2E4169Ee7', contract: null }], /EIP-55/],
    ];
    for (const [qs, message] of bad) {
      const e = await r.balancesAt(qs, first).then(() => null, (x: unknown) => x);
      expect(e, JSON.stringify(qs)).to.be.instanceOf(TypeError);
      expect((e as Error).message).to.match(message);
    }
    expect(await r.balancesAt([], first)).to.deep.equal({ at: first, answers: [] });
    expect(counter.calls.size).to.equal(0);
  });
});
