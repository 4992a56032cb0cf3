/**
 * TEST ONLY. An anvil chain with DepositForwarder and BatchSweeper deployed through the CREATE2
 * deployer, fresh deposit EOAs, funding them in bulk, and sending a sweep batch (with or without
 * EIP-7702 authorizations). Test-only contracts (contracts/test/) are compiled once per process.
 */
import { join } from 'node:path';
import {
  ContractFactory, JsonRpcProvider, Wallet, keccak256, type Authorization, type InterfaceAbi,
} from 'ethers';
import { ANVIL_DEV_KEYS, anvilRpc, deployErc20, mine, setAutomine, startAnvil, waitForReceipt, type AnvilDevnet, type StartAnvilOptions } from '../devnet';
import { authorizationDigest, codeAtAccount } from './authorization';
import { sweepBatchData, sweepOutcomes, type SweepEntry, type SweepOutcome } from './batch';
import { CREATE2_DEPLOYER, batchSweeperDeployment, forwarderDeployment, type Deployment } from './deployment';

export type RawLog = { address: string; topics: string[]; data: string };
export type RawReceipt = { status: string; gasUsed: string; blockNumber: string; logs: RawLog[]; transactionHash: string };

/** Fees fixed so that no send waits for eth_feeHistory (anvil's base fee starts at 1 gwei and only falls). */
const FEES = { maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n };

export interface Chain {
  readonly devnet: AnvilDevnet;
  readonly url: string;
  readonly provider: JsonRpcProvider;
  readonly chainId: bigint;
  /** Deployer of tokens and funder of deposits (ANVIL_DEV_KEYS[0]). */
  readonly funder: Wallet;
  /** Sends the sweep batches (ANVIL_DEV_KEYS[1]). */
  readonly feeWallet: Wallet;
  /** A fresh address that only ever receives. */
  readonly collector: string;
  readonly forwarder: Deployment;
  readonly sweeper: Deployment;
}

/** Starts anvil and deploys the forwarder (for a fresh collector) and the sweeper through CREATE2_DEPLOYER. */
export async function setupChain(options: StartAnvilOptions = {}): Promise<Chain> {
  const devnet = await startAnvil(options);
  const provider = new JsonRpcProvider(devnet.url, undefined, { staticNetwork: true, cacheTimeout: -1, batchMaxCount: 1 });
  const funder = new Wallet(ANVIL_DEV_KEYS[0]!, provider);
  const feeWallet = new Wallet(ANVIL_DEV_KEYS[1]!, provider);
  const collector = Wallet.createRandom().address;
  const forwarder = forwarderDeployment(collector);
  const sweeper = batchSweeperDeployment();
  const chain: Chain = { devnet, url: devnet.url, provider, chainId: BigInt(devnet.chainId), funder, feeWallet, collector, forwarder, sweeper };
  for (const d of [forwarder, sweeper]) await deployThroughCreate2(chain, d);
  return chain;
}

export async function stopChain(chain: Chain | undefined): Promise<void> {
  if (!chain) return;
  chain.provider.destroy();
  await chain.devnet.stop();
}

/** One transaction to CREATE2_DEPLOYER with deployData; checks the code that landed. */
export async function deployThroughCreate2(chain: Chain, d: Deployment): Promise<void> {
  await send(chain, chain.funder, { to: CREATE2_DEPLOYER, data: d.deployData, gasLimit: 3_000_000n });
  const code = await chain.provider.getCode(d.address);
  if (code === '0x' || keccak256(code) !== d.runtimeCodeHash) throw new Error(`deployment at ${d.address}: unexpected code`);
}

/** Sends a transaction, waits for its receipt (25 ms polls), throws unless it succeeded (`expectFailure`: unless it failed). */
export async function send(chain: Chain, wallet: Wallet, tx: Parameters<Wallet['sendTransaction']>[0], expectFailure = false): Promise<RawReceipt> {
  const sent = await wallet.sendTransaction({ ...FEES, ...tx });
  const receipt = await waitForReceipt<RawReceipt>(chain.url, sent.hash);
  if ((receipt.status === '0x1') === expectFailure) throw new Error(`transaction ${sent.hash} ${expectFailure ? 'succeeded' : 'failed'} (status ${receipt.status})`);
  return receipt;
}

/** `n` fresh random deposit keys on the chain: no ETH, nonce 0. */
export function freshDeposits(chain: Chain, n: number): Wallet[] {
  return Array.from({ length: n }, () => new Wallet(Wallet.createRandom().privateKey, chain.provider));
}

/**
 * Sends each (to, data/value) from `wallet` with consecutive nonces and fixed gas, mined in one
 * block (automine off meanwhile: anvil's automine can drop one of several quick sends of a
 * sender, see devnet startBlockClock); throws unless all succeeded.
 */
export async function sendMany(chain: Chain, wallet: Wallet, txs: ReadonlyArray<{ to: string; data?: string; value?: bigint; gasLimit?: bigint }>): Promise<void> {
  if (txs.length === 0) return;
  await setAutomine(chain.url, false);
  try {
    let nonce = await wallet.getNonce('pending');
    const hashes: string[] = [];
    for (const tx of txs) {
      const signed = await wallet.signTransaction({ ...FEES, type: 2, chainId: chain.chainId, nonce: nonce++, gasLimit: tx.gasLimit ?? 200_000n, to: tx.to, data: tx.data ?? '0x', value: tx.value ?? 0n });
      hashes.push(await anvilRpc<string>(chain.url, 'eth_sendRawTransaction', [signed]));
    }
    await mine(chain.url, 1);
    for (const h of hashes) {
      const r = await waitForReceipt<RawReceipt>(chain.url, h);
      if (r.status !== '0x1') throw new Error(`sendMany: ${h} failed`);
    }
  } finally {
    await setAutomine(chain.url, true);
  }
}

const MINT = '0x40c10f19'; // mint(address,uint256), the same in every token here

/** Calldata of mint(to, amount). */
export function mintData(to: string, amount: bigint): string {
  return MINT + to.slice(2).toLowerCase().padStart(64, '0') + amount.toString(16).padStart(64, '0');
}

/** Mints `amount` of `token` to each address (in one block). */
export function mintTo(chain: Chain, token: string, to: readonly string[], amount: bigint): Promise<void> {
  return sendMany(chain, chain.funder, to.map((a) => ({ to: token, data: mintData(a, amount) })));
}

/** Sends `amount` wei to each address (in one block). */
export function fundNative(chain: Chain, to: readonly string[], amount: bigint): Promise<void> {
  return sendMany(chain, chain.funder, to.map((a) => ({ to: a, value: amount, gasLimit: 50_000n })));
}

/** ERC20PresetMinterPauser by the funder (minter and pauser). */
export function deployPresetToken(chain: Chain, symbol: string): Promise<string> {
  return deployErc20(chain.url, { name: symbol, symbol, fromPrivateKey: ANVIL_DEV_KEYS[0]! });
}

/**
 * An authorization delegating `deposit` to `delegate`, signed here from authorizationDigest (the
 * function under test), at the account's current nonce (it does not send the batch itself).
 */
export async function authorizeWithDigest(chain: Chain, deposit: Wallet, delegate: string): Promise<Authorization> {
  const nonce = BigInt(await chain.provider.getTransactionCount(deposit.address, 'latest'));
  const signature = deposit.signingKey.sign(authorizationDigest({ chainId: chain.chainId, address: delegate, nonce }));
  return { address: delegate, nonce, chainId: chain.chainId, signature };
}

export interface BatchResult {
  readonly receipt: RawReceipt;
  readonly outcomes: SweepOutcome[];
  readonly gasUsed: bigint;
}

/**
 * Sends BatchSweeper.sweep(entries) from the fee wallet: type 4 with `authorizations` when given
 * (type 2 otherwise), gas from eth_estimateGas unless `gasLimit` is given.
 */
export async function sendBatch(
  chain: Chain,
  entries: ReadonlyArray<SweepEntry>,
  options: { authorizations?: Authorization[]; gasLimit?: bigint; expectFailure?: boolean } = {},
): Promise<BatchResult> {
  const tx = {
    to: chain.sweeper.address,
    data: sweepBatchData(entries),
    ...(options.authorizations && options.authorizations.length > 0 ? { type: 4, authorizationList: options.authorizations } : { type: 2 }),
    ...(options.gasLimit !== undefined ? { gasLimit: options.gasLimit } : {}),
  };
  const receipt = await send(chain, chain.feeWallet, tx, options.expectFailure ?? false);
  return { receipt, outcomes: sweepOutcomes(receipt.logs, chain.sweeper.address), gasUsed: BigInt(receipt.gasUsed) };
}

/** What eth_getCode says about `account`. */
export async function codeAt(chain: Chain, account: string) {
  return codeAtAccount(await chain.provider.getCode(account));
}

/** Native balance. */
export async function nativeBalance(chain: Chain, account: string): Promise<bigint> {
  return chain.provider.getBalance(account);
}

/** balanceOf(owner) of any token. */
export async function tokenBalance(chain: Chain, token: string, owner: string): Promise<bigint> {
  const data = `0x70a08231${owner.slice(2).toLowerCase().padStart(64, '0')}`;
  return BigInt(await chain.provider.call({ to: token, data }));
}

// ---- test-only contracts ----

interface TestArtifact { readonly abi: InterfaceAbi; readonly bytecode: string }
let testArtifacts: Record<string, TestArtifact> | null = null;

/** contracts/test/*.sol compiled once per process with the production settings (scripts/compile-contracts.js). */
export function testContract(name: string): TestArtifact {
  if (!testArtifacts) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const script = require(join(__dirname, '..', '..', 'scripts', 'compile-contracts.js')) as { compileTestContracts(): Record<string, TestArtifact> };
    testArtifacts = script.compileTestContracts();
  }
  const a = testArtifacts[name];
  if (!a) throw new Error(`no test contract ${name} in contracts/test/`);
  return a;
}

/** Deploys a test-only contract from the funder; resolves with its address. */
export async function deployTestContract(chain: Chain, name: string, args: readonly unknown[] = []): Promise<string> {
  const a = testContract(name);
  const factory = new ContractFactory(a.abi, a.bytecode, chain.funder);
  const tx = await factory.getDeployTransaction(...args);
  const receipt = await send(chain, chain.funder, { ...tx, gasLimit: 5_000_000n });
  const address = (await chain.provider.getTransactionReceipt(receipt.transactionHash))?.contractAddress;
  if (!address) throw new Error(`${name}: no contract address`);
  return address;
}
