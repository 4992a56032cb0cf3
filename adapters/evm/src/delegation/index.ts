/**
 * EIP-7702 delegated deposit addresses, swept in batches: each deposit EOA delegates its code to
 * DepositForwarder (which can only send the account's balance to its fixed COLLECTOR), and one
 * transaction calls BatchSweeper, which calls many delegated deposit addresses at once. Pure
 * helpers only: deployment data and addresses, the batch calldata and its outcome from the
 * logs, the authorization digest, and reading an account's delegation. The compiled contracts
 * are committed (artifacts.ts): nothing here needs solc or OpenZeppelin.
 */
export { CREATE2_DEPLOYER, DEPLOYMENT_SALT, forwarderDeployment, batchSweeperDeployment, type Deployment } from './deployment';
export {
  BATCH_PER_CALL_GAS, BATCH_MAX_REASON_BYTES, sweepBatchData, sweepOutcomes, readableReason, type SweepEntry, type SweepOutcome, type LogLike,
} from './batch';
export { authorizationDigest, codeAtAccount, type AuthorizationRequest, type CodeAtAccount } from './authorization';
export { DEPOSIT_FORWARDER_ARTIFACT, BATCH_SWEEPER_ARTIFACT, type ContractArtifact } from './artifacts';
