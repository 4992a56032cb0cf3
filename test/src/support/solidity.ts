/**
 * Solidity test contracts compiled at test time with the npm `solc` (solc-js) of the workspace,
 * and deployed from an anvil dev account. The same approach as adapters/evm's own test helper
 * (scripts/compile-contracts.js compileSources, prague, optimizer on), copied rather than imported:
 * the adapter's test helpers are not part of its published API. Only self-contained source units
 * (no imports) are supported: the end-to-end suite's contracts need none.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { anvilRpc, waitForReceipt } from '@wcs/adapter-evm/devnet';

/** anvil's first dev account (unlocked: eth_sendTransaction signs for it). */
export const DEV_ACCOUNT = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';

export interface CompiledContract {
  readonly abi: readonly unknown[];
  /** Creation code, 0x-prefixed, without constructor arguments. */
  readonly bytecode: string;
}

interface SolcOutput {
  errors?: Array<{ severity: string; formattedMessage: string }>;
  contracts?: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
}

/** The adapter's test-only contracts folder (adapters/evm/contracts/test), found through the installed package. */
export function adapterTestContract(file: string): string {
  return path.join(path.dirname(require.resolve('@wcs/adapter-evm/package.json')), 'contracts', 'test', file);
}

/** Compiles `file` (one self-contained unit) and returns contract `name`; throws with solc's errors. */
export function compileSolidity(file: string, name: string): CompiledContract {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const solc = require('solc') as { compile(input: string): string };
  const unit = path.basename(file);
  const input = {
    language: 'Solidity',
    sources: { [unit]: { content: fs.readFileSync(file, 'utf8') } },
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'prague', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(`solc (${unit}): ${errors.map((e) => e.formattedMessage).join('\n')}`);
  const c = out.contracts?.[unit]?.[name];
  if (!c) throw new Error(`solc produced no ${unit}:${name}`);
  return { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
}

/**
 * Deploys creation code from DEV_ACCOUNT and resolves with the contract's address once mined
 * (anvil must mine: automine or a block clock).
 */
export async function deployBytecode(url: string, bytecode: string, timeoutMs = 20_000): Promise<string> {
  const hash = await anvilRpc<string>(url, 'eth_sendTransaction', [{ from: DEV_ACCOUNT, data: bytecode, gas: '0x' + (3_000_000).toString(16) }]);
  const receipt = await waitForReceipt<{ status: string; contractAddress: string | null }>(url, hash, timeoutMs);
  if (receipt.status !== '0x1' || !receipt.contractAddress) throw new Error(`deployment ${hash} failed (status ${receipt.status})`);
  return receipt.contractAddress;
}

/** Sends `data` to `to` from DEV_ACCOUNT and waits for its receipt; throws unless it succeeded. Returns the receipt's block number. */
export async function sendCall(url: string, to: string, data: string, timeoutMs = 20_000): Promise<bigint> {
  const hash = await anvilRpc<string>(url, 'eth_sendTransaction', [{ from: DEV_ACCOUNT, to, data, gas: '0x' + (300_000).toString(16) }]);
  const receipt = await waitForReceipt<{ status: string; blockNumber: string }>(url, hash, timeoutMs);
  if (receipt.status !== '0x1') throw new Error(`call ${hash} to ${to} failed (status ${receipt.status})`);
  return BigInt(receipt.blockNumber);
}

/** Calldata of mint(address,uint256) (OpenZeppelin's preset and the test tokens alike). */
export function mintData(to: string, amount: bigint): string {
  return '0x40c10f19' + to.slice(2).toLowerCase().padStart(64, '0') + amount.toString(16).padStart(64, '0');
}

/** pause() / unpause() of OpenZeppelin's ERC20PresetMinterPauser. */
export const PAUSE = '0x8456cb59';
export const UNPAUSE = '0x3f4ba83a';
