import {
  defineAdapter, type AddressCodec, type AdapterParts,
  type AdapterPlugin, type ChainAdapter, type ChainDefinition, type KeyPurpose, type KeySpec, type SequenceSpending,
} from '@wcs/core';
import { stellarAddressFromPublicKey, validateStellarAddress } from './address';
import { StellarBalanceReader } from './balances';
import { memoIdCodec } from './memo';
import { createStellarScanner } from './scanner';
import { StellarTransferCrafter, stellarChainPassphrase } from './transfer';
import { StellarTransferNode } from './transfer-node';

export { stellarAddressFromPublicKey, validateStellarAddress } from './address';
export { StellarBalanceReader, type StellarBalanceReaderOptions } from './balances';
export { MAX_MEMO_ID, MAX_MEMO_TEXT_BYTES, isMemoId, isMemoText, memoIdCodec, withdrawalMemoType } from './memo';
export {
  FEE_QUOTE_SEQUENCE, StellarTransferCrafter, stellarChainPassphrase, stellarNetworkPassphrase, type StellarTransferInput,
} from './transfer';
export {
  StellarTransferNode, type StellarNodeTransferInput, type StellarTransferNodeOptions,
} from './transfer-node';
export {
  STELLAR_DECIMALS, createStellarScanner, decodeOperationId, memoOfTransaction, parsePaymentOperation,
  type PaymentOperation, type RetryPolicy, type StellarScannerOptions,
} from './scanner';

/**
 * Key layout (SLIP-10 ed25519, every level hardened). SEP-0005 uses m/44'/148'/x'; the deposit
 * template adds one hardened level for the key index, and the application's shared deposit
 * account is index 0: m/44'/148'/{account}'/0'. Hot and fee keys add 1' / 2' below the index.
 */
export const STELLAR_KEY_SPECS: Readonly<Record<KeyPurpose, KeySpec>> = Object.freeze({
  deposit: Object.freeze({ namespace: 'xlm', curve: 'ed25519', pathTemplate: "m/44'/148'/{account}'/{index}'" }),
  hot: Object.freeze({ namespace: 'xlm', curve: 'ed25519', pathTemplate: "m/44'/148'/{account}'/{index}'/1'" }),
  fee: Object.freeze({ namespace: 'xlm', curve: 'ed25519', pathTemplate: "m/44'/148'/{account}'/{index}'/2'" }),
});

export const plugin: AdapterPlugin = defineAdapter({
  name: '@wcs/adapter-stellar',
  family: 'stellar',
  curve: 'ed25519',
  addressing: 'memo',
  build(chain): AdapterParts & SequenceSpending {
    // Withdrawals sign for one network: without a known passphrase (a network name other than
    // pubnet / testnet / futurenet and no options.networkPassphrase) the adapter scans but cannot pay out.
    const passphrase = stellarChainPassphrase(chain);
    const payouts: Pick<SequenceSpending, 'transfers' | 'createTransferNode'> = passphrase === null ? {} : {
      transfers: new StellarTransferCrafter(passphrase),
      // closed ledgers are final: an ingested transaction has the chain's confirmations at once
      createTransferNode: (endpoint) => new StellarTransferNode(endpoint, passphrase, { confirmations: Math.max(1, chain.confirmations) }),
    };
    return {
      spendModel: 'sequence',
      keySpec: STELLAR_KEY_SPECS,
      address: Object.freeze<AddressCodec>({
        addressFromPublicKey: stellarAddressFromPublicKey,
        validate: (address, memo) => validateStellarAddress(address, memo ?? null),
      }),
      memo: memoIdCodec,
      createScanner: (endpoint) => createStellarScanner(endpoint),
      // balance reads for reconciliation: Horizon /accounts/{id} at its latest ingested ledger
      createBalanceReader: (endpoint) => new StellarBalanceReader(endpoint),
      ...payouts,
    };
  },
});

export const createStellarAdapter: (chain: ChainDefinition) => ChainAdapter = plugin.create;
