import type { DelegatedSweeps } from '@wcs/core';
import { authorizationDigest, batchSweeperDeployment, CREATE2_DEPLOYER, forwarderDeployment, sweepBatchData, sweepOutcomes, BATCH_PER_CALL_GAS } from './delegation';

/**
 * The most gas one batch entry uses, from receipts on anvil (Prague; OpenZeppelin ERC-20s; the
 * delegation tests' gas table, adapters/evm/src/delegation/sweep-gas.test.ts) with about 40 %
 * headroom (a collector balance slot written for the first time costs 17,100 more once per token
 * and batch): an entry in a batch of 50 measured 13.2k gas (ERC-20) and 13.0k (native) once the
 * address is delegated; its first sweep adds the EIP-7702 authorization, 25,000 intrinsic (no
 * refund for an account holding only tokens) plus its calldata, 18.0k more measured in all.
 * Used to size batches and price sweeps for the cost guard; the batch's own gas limit is the
 * node's estimate.
 */
export const ENTRY_GAS = Object.freeze({
  token: 20_000n,
  native: 18_000n,
  authorization: 26_000n,
});

/** The batch's gas beyond its entries: the transaction's 21000, and the headroom the batch sweeper demands before each call (BATCH_PER_CALL_GAS, 63/64 rule), needed at the last one. */
export const BATCH_BASE_GAS = 21_000n + (BATCH_PER_CALL_GAS * 64n) / 63n + 5_000n;

/** The DelegatedSweeps part of an EVM chain (EIP-7702): `enabled` from the chain's `eip7702` option. */
export function evmDelegatedSweeps(chainId: number, enabled: boolean): DelegatedSweeps {
  const id = BigInt(chainId);
  const withDeployer = (d: { address: string; deployData: string }) => ({ address: d.address, deployer: CREATE2_DEPLOYER, deployData: d.deployData });
  const sweeper = withDeployer(batchSweeperDeployment());
  return Object.freeze({
    enabled,
    forwarder: (collector: string) => withDeployer(forwarderDeployment(collector)),
    batchSweeper: () => sweeper,
    batchData: (entries: ReadonlyArray<{ readonly account: string; readonly token: string | null }>) => sweepBatchData(entries),
    outcomes: (logs: ReadonlyArray<{ readonly address: string; readonly topics: readonly string[]; readonly data: string }>, batchSweeper: string) => sweepOutcomes(logs, batchSweeper),
    authorizationDigest: (delegate: string, nonce: bigint) => authorizationDigest({ chainId: id, address: delegate, nonce }),
    entryGas: (e: { readonly token: boolean; readonly authorize: boolean }) => (e.token ? ENTRY_GAS.token : ENTRY_GAS.native) + (e.authorize ? ENTRY_GAS.authorization : 0n),
    batchBaseGas: BATCH_BASE_GAS,
  });
}
