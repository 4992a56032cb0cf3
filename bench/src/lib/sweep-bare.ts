/**
 * The physical-limit baseline of delegated sweeps (collection-delegated benchmark): a bare ethers
 * script doing the service's delegated batches on the same anvil, to the same contracts (the
 * service's BatchSweeper and its hot wallet's DepositForwarder, deployed through
 * CREATE2_DEPLOYER; deployed here only if missing). Fresh keys in memory, funded like the
 * service's addresses (half the ERC-20 and no gas, half native) before the clock starts. Timed:
 * every authorization signed by its ethers Wallet (nonce 0: the keys are fresh), batches of
 * `batchSize` entries (ERC-20 addresses first, as the service's planner queues them), every
 * type-4 transaction signed from one funded account with nonces counted here and sent at once,
 * until every receipt has `conf` confirmations. The gas limit of a batch: without `estimate`, the
 * service's own bound for its entries (the EVM adapter's entryGas and batchBaseGas: what it packs
 * batches by), no node call; with `estimate`, one eth_estimateGas per batch (all in one JSON-RPC
 * batch) plus the service's 20 % margin, as the service's pipeline estimates each batch.
 */
import { getAddress, hexlify, keccak256, randomBytes, Wallet, type Authorization } from 'ethers';
import { batchSweeperDeployment, createEvmAdapter, CREATE2_DEPLOYER, forwarderDeployment, sweepBatchData, sweepOutcomes } from '@wcs/adapter-evm';
import type { BlockClock } from '@wcs/adapter-evm/devnet';
import { rpc, rpcBatch } from './evm';
import { BARE_SENDER, big, EVM_CHAIN_ID, feeNow, fund, nativeBalances, NATIVE_AMOUNT, sendMany, tipOf, tokenBalances, TOKEN_AMOUNT, waitReceipts } from './sweep-chain';
import { perAddressGas, totals, type CostTotals, type CostUnit, type PerAddressGas } from './sweep-gas';

export interface BareBatch { readonly hash: string; readonly gasUsed: bigint; readonly price: bigint; readonly tok: number; readonly nat: number; readonly ok: boolean; readonly gasLimit: bigint }

export interface BareRun {
  readonly seconds: number;
  readonly blocks: number;
  /** Parts of the timed run: authorizations signed, gas limits (estimated or from the bounds) and the nonce, transactions signed and sent, mined to `conf` confirmations. */
  readonly phases: { signAuthorizationsS: number; limitsS: number; signAndSendS: number; minedS: number };
  readonly estimated: boolean;
  readonly batches: BareBatch[];
  readonly perAddress: PerAddressGas;
  readonly totals: CostTotals;
  readonly failures: string[];
}

/** An authorization in eth_estimateGas's `authorizationList` form (hex quantities without leading zeros). */
function authorizationRpc(a: Authorization) {
  const qn = (n: bigint | number | string) => `0x${BigInt(n).toString(16)}`;
  return { chainId: qn(a.chainId), address: a.address.toLowerCase(), nonce: qn(a.nonce), yParity: qn(a.signature.yParity), r: qn(a.signature.r), s: qn(a.signature.s) };
}

/** Deploys `d` through CREATE2_DEPLOYER from the bare sender unless its code is there; checks the code that landed. */
async function ensureDeployed(url: string, d: { address: string; deployData: string; runtimeCodeHash: string }): Promise<void> {
  if ((await rpc<string>(url, 'eth_getCode', [d.address, 'latest'])) === '0x') {
    const fee = await feeNow(url);
    const [h] = await sendMany(url, BARE_SENDER, [{ to: CREATE2_DEPLOYER, data: d.deployData, gasLimit: 3_000_000n }], { maxFee: fee.maxFee * 2n, tip: fee.tip });
    await waitReceipts(url, [h!], 1, 60_000, `deploying ${d.address}`);
  }
  const code = await rpc<string>(url, 'eth_getCode', [d.address, 'latest']);
  if (code === '0x' || keccak256(code) !== d.runtimeCodeHash) throw new Error(`bare: unexpected code at ${d.address}`);
}

/** The EVM adapter's delegated-sweep part for the test ETH chain: the per-entry gas bounds the service packs its batches by. */
function serviceSweeps() {
  const adapter = createEvmAdapter({
    id: 102, code: 'ETH', name: 'Ethereum Sepolia', family: 'evm', environment: 'test', network: 'sepolia', curve: 'secp256k1', addressing: 'hd',
    nativeSymbol: 'ETH', decimals: 18, confirmations: 3, evmChainId: EVM_CHAIN_ID, options: {},
  });
  if (adapter.spendModel !== 'sequence' || !adapter.delegatedSweeps) throw new Error('the EVM adapter has no delegated sweeps');
  return adapter.delegatedSweeps;
}

export async function runBareDelegated(url: string, token: string, o: { clock: BlockClock; collector: string; nTok: number; nNat: number; batchSize: number; conf: number; estimate: boolean }): Promise<BareRun> {
  const failures: string[] = [];
  const bounds = serviceSweeps();
  const forwarder = forwarderDeployment(o.collector);
  const sweeper = batchSweeperDeployment();
  await ensureDeployed(url, sweeper);
  await ensureDeployed(url, forwarder);
  const tokW = Array.from({ length: o.nTok }, () => new Wallet(hexlify(randomBytes(32))));
  const natW = Array.from({ length: o.nNat }, () => new Wallet(hexlify(randomBytes(32))));
  await fund(url, token, tokW.map((w) => w.address), natW.map((w) => w.address), NATIVE_AMOUNT, o.clock);
  const collTok0 = (await tokenBalances(url, token, [o.collector]))[0]!;
  const collNat0 = (await nativeBalances(url, [o.collector]))[0]!;
  const sender = new Wallet(BARE_SENDER);
  const chainId = BigInt(EVM_CHAIN_ID);
  const entries = [...tokW.map((w) => ({ w, token: token as string | null })), ...natW.map((w) => ({ w, token: null as string | null }))];
  const tip0 = await tipOf(url);

  const t0 = performance.now();
  const auths = entries.map((e) => e.w.authorizeSync({ address: forwarder.address, nonce: 0n, chainId }));
  const t1 = performance.now();
  const groups: Array<Array<{ account: string; token: string | null; auth: Authorization }>> = [];
  for (let i = 0; i < entries.length; i += o.batchSize) groups.push(entries.slice(i, i + o.batchSize).map((e, j) => ({ account: e.w.address, token: e.token, auth: auths[i + j]! })));
  const data = groups.map((g) => sweepBatchData(g.map((e) => ({ account: e.account, token: e.token }))));
  const [fee, nonceHex, limits] = await Promise.all([
    feeNow(url),
    rpc<string>(url, 'eth_getTransactionCount', [sender.address, 'pending']),
    o.estimate
      ? rpcBatch<string>(url, groups.map((g, k) => ({ method: 'eth_estimateGas', params: [{ from: sender.address, to: sweeper.address, data: data[k], authorizationList: g.map((e) => authorizationRpc(e.auth)) }] })))
        .then((es) => es.map((e) => (big(e) * 120n + 99n) / 100n))
      : groups.map((g) => g.reduce((s, e) => s + bounds.entryGas({ token: e.token !== null, authorize: true }), bounds.batchBaseGas)),
  ]);
  const t2 = performance.now();
  let nonce = Number(big(nonceHex));
  const raws = await Promise.all(groups.map((g, k) => sender.signTransaction({
    type: 4, chainId, nonce: nonce++, to: sweeper.address, data: data[k]!, gasLimit: limits[k]!,
    maxFeePerGas: fee.maxFee, maxPriorityFeePerGas: fee.tip, authorizationList: g.map((e) => e.auth),
  })));
  const hashes = await rpcBatch<string>(url, raws.map((r) => ({ method: 'eth_sendRawTransaction', params: [r] })));
  const t3 = performance.now();
  const rc = await waitReceipts(url, hashes, o.conf, 300_000, 'bare batches');
  const t4 = performance.now();
  const blocks = (await tipOf(url)) - tip0;

  const batches: BareBatch[] = hashes.map((h, k) => {
    const r = rc.get(h)!;
    const g = groups[k]!;
    const outcomes = sweepOutcomes(r.logs, sweeper.address);
    const bad = outcomes.filter((x) => !x.ok);
    if (r.status !== '0x1') failures.push(`bare: batch ${k} (${h}) reverted`);
    else if (outcomes.length !== g.length || bad.length) failures.push(`bare: batch ${k}: ${outcomes.length} outcomes for ${g.length} entries, ${bad.length} failed (e.g. ${bad[0] && !bad[0].ok ? bad[0].reason : '-'})`);
    const tok = g.filter((e) => e.token !== null).length;
    return { hash: h, gasUsed: big(r.gasUsed), price: big(r.effectiveGasPrice), tok, nat: g.length - tok, ok: r.status === '0x1', gasLimit: limits[k]! };
  });
  // every unit at the collector
  const wantTok = tokW.reduce((s, _w, i) => s + TOKEN_AMOUNT(i), 0n);
  const wantNat = natW.reduce((s, _w, i) => s + NATIVE_AMOUNT(i), 0n);
  const gotTok = (await tokenBalances(url, token, [o.collector]))[0]! - collTok0;
  const gotNat = (await nativeBalances(url, [o.collector]))[0]! - collNat0;
  if (gotTok !== wantTok) failures.push(`bare: the collector received ${gotTok} token units, expected ${wantTok}`);
  if (gotNat !== wantNat) failures.push(`bare: the collector received ${gotNat} wei, expected ${wantNat}`);
  const code = await rpc<string>(url, 'eth_getCode', [tokW[0]!.address, 'latest']);
  if (code.toLowerCase() !== `0xef0100${getAddress(forwarder.address).slice(2).toLowerCase()}`) failures.push(`bare: ${tokW[0]!.address} is not delegated to the forwarder (code ${code.slice(0, 48)})`);
  const units: CostUnit[] = batches.map((b) => ({ gas: b.gasUsed, fee: b.gasUsed * b.price, tok: b.tok, nat: b.nat }));
  return {
    seconds: (t4 - t0) / 1000, blocks, estimated: o.estimate,
    phases: { signAuthorizationsS: (t1 - t0) / 1000, limitsS: (t2 - t1) / 1000, signAndSendS: (t3 - t2) / 1000, minedS: (t4 - t3) / 1000 },
    batches, perAddress: perAddressGas(units), totals: totals(batches.map((b) => ({ gasUsed: b.gasUsed, price: b.price }))), failures,
  };
}
