/**
 * Chain-side helpers of the delegated-sweep benchmark (collection-delegated): bare JSON-RPC sends
 * with nonces counted here, waiting for receipts at a number of confirmations, funding deposit
 * addresses, and the gas and fee of a list of transactions read from their receipts. The same
 * moves as bench/src/collection.ts (which keeps its own copies: it runs its main on import).
 */
import { Interface, Wallet } from 'ethers';
import { ANVIL_DEV_KEYS, type BlockClock } from '@wcs/adapter-evm/devnet';
import { rpc, rpcBatch } from './evm';
import { checkAborted, sleep } from './processes';

export const EVM_CHAIN_ID = 11155111;
export const ETHER = 10n ** 18n;
export const GWEI = 10n ** 9n;
export const ERC20 = new Interface(['function mint(address to, uint256 amount)', 'function transfer(address to, uint256 amount) returns (bool)', 'function balanceOf(address) view returns (uint256)']);
/** Who pays what (anvil dev accounts, 10,000 ETH each; the deployer of the token is its minter). */
export const MINTER = ANVIL_DEV_KEYS[0]!;
export const NATIVE_FUNDER = ANVIL_DEV_KEYS[1]!;
export const FEE_FUNDER = ANVIL_DEV_KEYS[2]!;
/** The bare script's one sending account. */
export const BARE_SENDER = ANVIL_DEV_KEYS[3]!;
/** The amounts of bench/src/collection.ts: a little different per address. */
export const NATIVE_AMOUNT = (i: number) => ETHER / 100n + BigInt(i) * GWEI;
export const TOKEN_AMOUNT = (i: number) => 5n * ETHER + BigInt(i);

export interface Receipt {
  transactionHash: string; blockNumber: string; status: string; gasUsed: string; effectiveGasPrice: string; from: string; to: string | null;
  logs: Array<{ address: string; topics: string[]; data: string }>;
}

export const big = (x: string | bigint | number) => BigInt(x);
export const tipOf = async (url: string) => Number(BigInt(await rpc<string>(url, 'eth_blockNumber')));

/** Waits until every hash has a receipt and the last of them `conf` confirmations; returns them by hash (as given). */
export async function waitReceipts(url: string, hashes: readonly string[], conf: number, timeoutMs: number, what: string): Promise<Map<string, Receipt>> {
  const got = new Map<string, Receipt>();
  const t0 = performance.now();
  for (;;) {
    checkAborted();
    const missing = hashes.filter((h) => !got.has(h));
    if (missing.length) {
      const rs = await rpcBatch<Receipt | null>(url, missing.map((h) => ({ method: 'eth_getTransactionReceipt', params: [h] })));
      missing.forEach((h, i) => rs[i] && got.set(h, rs[i]!));
    }
    if (got.size === hashes.length) {
      const last = hashes.length ? Math.max(...[...got.values()].map((r) => Number(big(r.blockNumber)))) : 0;
      if (hashes.length === 0 || (await tipOf(url)) - last + 1 >= conf) return got;
    }
    if (performance.now() - t0 > timeoutMs) throw new Error(`${what}: ${hashes.length - got.size} of ${hashes.length} transactions without a receipt after ${timeoutMs} ms`);
    await sleep(20);
  }
}

export interface Fees { maxFee: bigint; tip: bigint; base: bigint }

export async function feeNow(url: string): Promise<Fees> {
  const block = await rpc<{ baseFeePerGas: string }>(url, 'eth_getBlockByNumber', ['latest', false]);
  const tip = big(await rpc<string>(url, 'eth_maxPriorityFeePerGas'));
  const base = big(block.baseFeePerGas);
  return { maxFee: 2n * base + tip, tip, base };
}

/** Signs and sends many transactions from one key with nonces counted here (JSON-RPC batches); returns the hashes. */
export async function sendMany(url: string, key: string, txs: ReadonlyArray<{ to: string; value?: bigint; data?: string; gasLimit: bigint }>, fee: { maxFee: bigint; tip: bigint }): Promise<string[]> {
  const w = new Wallet(key);
  let nonce = Number(big(await rpc<string>(url, 'eth_getTransactionCount', [w.address, 'pending'])));
  const raws: string[] = [];
  for (const t of txs) {
    raws.push(await w.signTransaction({ type: 2, chainId: EVM_CHAIN_ID, nonce: nonce++, to: t.to, value: t.value ?? 0n, data: t.data ?? '0x', gasLimit: t.gasLimit, maxFeePerGas: fee.maxFee, maxPriorityFeePerGas: fee.tip }));
  }
  return rpcBatch<string>(url, raws.map((r) => ({ method: 'eth_sendRawTransaction', params: [r] })));
}

/**
 * Funds addresses and waits until every funding transaction is mined: `tokenAddrs[i]` gets
 * TOKEN_AMOUNT(i) minted, `nativeAddrs[i]` gets nativeValue(i) wei (gas limit 60000, not 21000: an
 * address delegated to the forwarder runs its receive() on a deposit). The block clock is paused
 * while they are sent: a block mined while anvil takes in a JSON-RPC batch of one sender's
 * transactions once lost four of them (nonces 6-9 of 500: the other 496 queued behind the gap for
 * good), which no later block fills.
 */
export async function fund(url: string, token: string, tokenAddrs: readonly string[], nativeAddrs: readonly string[], nativeValue: (i: number) => bigint, clock: BlockClock): Promise<void> {
  const fee = await feeNow(url);
  const f = { maxFee: fee.maxFee * 2n, tip: fee.tip };
  const mintGas = 120_000n;
  await clock.pause();
  let sent: [string[], string[]];
  try {
    sent = await Promise.all([
      sendMany(url, MINTER, tokenAddrs.map((to, i) => ({ to: token, data: ERC20.encodeFunctionData('mint', [to, TOKEN_AMOUNT(i)]), gasLimit: mintGas })), f),
      sendMany(url, NATIVE_FUNDER, nativeAddrs.map((to, i) => ({ to, value: nativeValue(i), gasLimit: 60_000n })), f),
    ]);
  } finally {
    clock.resume();
  }
  const [a, b] = sent;
  const rs = await waitReceipts(url, [...a, ...b], 1, 180_000, 'funding');
  const bad = [...rs.values()].filter((r) => r.status !== '0x1');
  if (bad.length) throw new Error(`${bad.length} funding transactions failed (e.g. ${bad[0]!.transactionHash})`);
}

/** Token balances (balanceOf) of many owners. */
export async function tokenBalances(url: string, token: string, owners: readonly string[]): Promise<bigint[]> {
  const r = await rpcBatch<string>(url, owners.map((a) => ({ method: 'eth_call', params: [{ to: token, data: ERC20.encodeFunctionData('balanceOf', [a]) }, 'latest'] })));
  return r.map(big);
}

/** Native balances of many accounts. */
export async function nativeBalances(url: string, owners: readonly string[]): Promise<bigint[]> {
  return (await rpcBatch<string>(url, owners.map((a) => ({ method: 'eth_getBalance', params: [a, 'latest'] })))).map(big);
}

/** Receipts of many transactions, by lower-case hash; a missing one throws (every hash given is expected mined). */
export async function receiptsOf(url: string, hashes: readonly string[]): Promise<Map<string, Receipt>> {
  const rs = await rpcBatch<Receipt | null>(url, hashes.map((h) => ({ method: 'eth_getTransactionReceipt', params: [h] })));
  const by = new Map<string, Receipt>();
  hashes.forEach((h, i) => {
    const r = rs[i];
    if (!r) throw new Error(`no receipt for ${h}`);
    by.set(h.toLowerCase(), r);
  });
  return by;
}
