import {
  defineAdapter, type AddressCodec,
  type AdapterParts, type AdapterPlugin, type ChainAdapter, type ChainDefinition, type ExpiringSpending, type KeyPurpose, type KeySpec,
} from '@wcs/core';
import { solanaAddressFromPublicKey, validateSolanaAddress } from './address';
import { SolanaBalanceReader } from './balances';
import { createSolanaScanner } from './scanner';
import { SolanaTransferCrafter } from './transfer';
import { SolanaTransferNode } from './transfer-node';

export { solanaAddressFromPublicKey, validateSolanaAddress, isOnCurve } from './address';
export {
  createSolanaScanner, solanaTransfersInTransaction, solanaInnerPosition, SOLANA_TOKEN_POSITION_BASE,
  SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID, type SolanaScannerOptions,
} from './scanner';
export { solanaRpc, TRANSIENT_RPC_CODES, type SolanaRpcOptions } from './rpc';
export {
  SolanaTransferCrafter, associatedTokenAddress, base58Encode, ASSOCIATED_TOKEN_PROGRAM_ID, MEMO_PROGRAM_ID,
  SOLANA_MAX_TRANSACTION_BYTES, SOLANA_MAX_COMPUTE_UNITS, SOLANA_MAX_MEMO_BYTES, type SolanaTransferInput,
} from './transfer';
export { SolanaTransferNode, type SolanaTransferNodeOptions } from './transfer-node';
export { SolanaBalanceReader, MAX_ACCOUNTS_PER_CALL, type SolanaBalanceReaderOptions } from './balances';
export { parseJsonExact } from '@wcs/core';

/**
 * Key layout (SLIP-10 ed25519, every level hardened). Deposit keys have the shape of the common
 * wallet path m/44'/501'/n'/0' with n = the application's account and the last level = the
 * user's key index. Hot and fee keys add one more hardened level (1' and 2') below the index,
 * so they never coincide with a deposit key.
 */
export const SOLANA_KEY_SPECS: Readonly<Record<KeyPurpose, KeySpec>> = Object.freeze({
  deposit: Object.freeze({ namespace: 'sol', curve: 'ed25519', pathTemplate: "m/44'/501'/{account}'/{index}'" }),
  hot: Object.freeze({ namespace: 'sol', curve: 'ed25519', pathTemplate: "m/44'/501'/{account}'/{index}'/1'" }),
  fee: Object.freeze({ namespace: 'sol', curve: 'ed25519', pathTemplate: "m/44'/501'/{account}'/{index}'/2'" }),
});

export const plugin: AdapterPlugin = defineAdapter({
  name: '@wcs/adapter-solana',
  family: 'solana',
  curve: 'ed25519',
  addressing: 'hd',
  // an `expiring` chain (a recent blockhash): its crafter and node are the expiring model's
  build: (chain): AdapterParts & ExpiringSpending => ({
    spendModel: 'expiring',
    keySpec: SOLANA_KEY_SPECS,
    address: Object.freeze<AddressCodec>({
      addressFromPublicKey: solanaAddressFromPublicKey,
      validate: (address, memo) => validateSolanaAddress(address, memo ?? null),
    }),
    memo: null,
    createScanner: (endpoint) => createSolanaScanner(endpoint),
    transfers: new SolanaTransferCrafter(),
    // finalized transactions are reported with the chain's confirmations (at least 32)
    createTransferNode: (endpoint) => new SolanaTransferNode(endpoint, { confirmations: Math.max(1, chain.confirmations) }),
    // balance reads for reconciliation: getMultipleAccounts at finalized (native, associated token accounts)
    createBalanceReader: (endpoint) => new SolanaBalanceReader(endpoint),
  }),
});

export const createSolanaAdapter: (chain: ChainDefinition) => ChainAdapter = plugin.create;
