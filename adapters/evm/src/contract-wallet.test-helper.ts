/**
 * Test-only (loaded by *.test.ts, never by index.ts): a small contract wallet, written here in
 * Solidity and compiled with npm solc, that pays with internal transfers (CALL with value from a
 * contract), as Safe and other smart-contract wallets, ERC-4337 accounts and exchanges' batch
 * payout contracts do.
 */
import { Interface } from 'ethers';
import { anvilRpc, waitForReceipt } from './devnet';

export const CONTRACT_WALLET_SOURCE = `// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

contract Wallet {
  receive() external payable {}

  /// Pays each (to[i], amount[i]) with a CALL; the whole transaction reverts if one fails.
  function pay(address payable[] calldata to, uint256[] calldata amount) external payable {
    for (uint256 i = 0; i < to.length; i++) {
      (bool ok, ) = to[i].call{value: amount[i]}("");
      require(ok, "pay failed");
    }
  }

  /// Pays, then reverts: nothing moves.
  function payThenRevert(address payable to, uint256 amount) external {
    (bool ok, ) = to.call{value: amount}("");
    require(ok, "pay failed");
    revert("undone");
  }

  /// Asks inner to pay and revert; its failure is ignored, so this transaction succeeds and nothing moves.
  function payThroughReverting(Wallet inner, address payable to, uint256 amount) external {
    (bool ok, ) = address(inner).call(abi.encodeCall(Wallet.payThenRevert, (to, amount)));
    ok;
  }

  /// A STATICCALL and a DELEGATECALL (no value of their own); the delegated code pays from this wallet.
  function payByDelegate(Wallet lib, address payable to, uint256 amount) external {
    (bool ok, ) = address(lib).staticcall(abi.encodeWithSignature("nothing()"));
    address payable[] memory tos = new address payable[](1);
    uint256[] memory amounts = new uint256[](1);
    tos[0] = to;
    amounts[0] = amount;
    (ok, ) = address(lib).delegatecall(abi.encodeCall(Wallet.pay, (tos, amounts)));
    require(ok, "delegate failed");
  }

  function nothing() external pure {}

  /// SELFDESTRUCT: since Cancun (EIP-6780) it sends the whole balance to 'to' and leaves the code.
  function destroy(address payable to) external {
    selfdestruct(to);
  }
}
`;

export interface CompiledContract {
  readonly abi: Interface;
  readonly bytecode: string;
}

let compiled: CompiledContract | null = null;

/** The wallet compiled once per process (solc-js, Cancun). Throws with solc's errors. */
export function contractWallet(): CompiledContract {
  if (compiled) return compiled;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const solc = require('solc') as { compile(input: string): string };
  const out = JSON.parse(solc.compile(JSON.stringify({
    language: 'Solidity',
    sources: { 'Wallet.sol': { content: CONTRACT_WALLET_SOURCE } },
    settings: { evmVersion: 'cancun', outputSelection: { '*': { Wallet: ['abi', 'evm.bytecode.object'] } } },
  }))) as { errors?: Array<{ severity: string; formattedMessage: string }>; contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>> };
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(`solc: ${errors.map((e) => e.formattedMessage).join('\n')}`);
  const c = out.contracts['Wallet.sol']!.Wallet!;
  compiled = { abi: new Interface(c.abi as never), bytecode: `0x${c.evm.bytecode.object}` };
  return compiled;
}

/** anvil's first dev account (unlocked: eth_sendTransaction signs for it). */
export const DEV_ACCOUNT = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';

type Receipt = { status: string; blockNumber: string; blockHash: string; transactionHash: string; contractAddress: string | null };

/** Sends from the dev account and waits for the receipt (automine or a block clock must be on). */
export async function devSend(url: string, tx: Record<string, string>): Promise<Receipt> {
  return waitForReceipt<Receipt>(url, await anvilRpc<string>(url, 'eth_sendTransaction', [{ from: DEV_ACCOUNT, ...tx }]));
}

/** Deploys a wallet and funds it with `funding` wei; resolves with its address (lower-case). */
export async function deployContractWallet(url: string, funding: bigint): Promise<string> {
  const r = await devSend(url, { data: contractWallet().bytecode });
  if (r.status !== '0x1' || !r.contractAddress) throw new Error('the contract wallet was not deployed');
  if (funding > 0n) await devSend(url, { to: r.contractAddress, value: `0x${funding.toString(16)}` });
  return r.contractAddress.toLowerCase();
}

/** Calldata of a wallet function. */
export function walletCall(fn: 'pay' | 'payThenRevert' | 'payThroughReverting' | 'payByDelegate' | 'destroy', args: readonly unknown[]): string {
  return contractWallet().abi.encodeFunctionData(fn, args);
}
