import {
  defineAdapter, type AddressCodec, type AdapterParts,
  type AdapterPlugin, type ChainAdapter, type ChainDefinition, type KeyPurpose, type KeySpec, type SequenceSpending,
} from '@wcs/core';
import { validateXrpAddress, xrpAddressFromPublicKey } from './address';
import { XrpBalanceReader } from './balances';
import { destinationTagCodec } from './memo';
import { createXrpScanner } from './scanner';
import { XrpTransferCrafter } from './transfer';
import { XrpTransferNode } from './transfer-node';

export { validateXrpAddress, xrpAddressFromPublicKey } from './address';
export { MAX_DESTINATION_TAG, destinationTagCodec, isDestinationTag } from './memo';
export { XrpTransferCrafter, derSignature, FEE_QUOTE_SEQUENCE, MAX_XRP_DROPS, XRP_LEGACY_NETWORK_ID_MAX, type XrpTransferInput } from './transfer';
export { XrpTransferNode, type XrpNodeTransferInput, type XrpTransferNodeOptions } from './transfer-node';
export { createXrpScanner, type RetryPolicy, type XrpScannerOptions } from './scanner';
export { XrpBalanceReader, historyOfCompleteLedgers, FIRST_MAINNET_LEDGER, type XrpBalanceReaderOptions } from './balances';

/**
 * Key layout (BIP-32 secp256k1, unhardened below the account so keys come from the account xpub).
 * The application's shared deposit account is deposit index 0: m/44'/144'/{account}'/0/0.
 * Hot and fee keys use the next chain levels (1 and 2).
 */
export const XRP_KEY_SPECS: Readonly<Record<KeyPurpose, KeySpec>> = Object.freeze({
  deposit: Object.freeze({ namespace: 'xrp', curve: 'secp256k1', pathTemplate: "m/44'/144'/{account}'/0/{index}" }),
  hot: Object.freeze({ namespace: 'xrp', curve: 'secp256k1', pathTemplate: "m/44'/144'/{account}'/1/{index}" }),
  fee: Object.freeze({ namespace: 'xrp', curve: 'secp256k1', pathTemplate: "m/44'/144'/{account}'/2/{index}" }),
});

/** Network "mainnet" takes X… X-addresses; every other network name is a test network (T…). */
export function isTestNetwork(chain: ChainDefinition): boolean {
  return chain.network !== 'mainnet';
}

export const plugin: AdapterPlugin = defineAdapter({
  name: '@wcs/adapter-xrp',
  family: 'xrp',
  curve: 'secp256k1',
  addressing: 'memo',
  build(chain): AdapterParts & SequenceSpending {
    const test = isTestNetwork(chain);
    return {
      spendModel: 'sequence',
      keySpec: XRP_KEY_SPECS,
      address: Object.freeze<AddressCodec>({
        addressFromPublicKey: xrpAddressFromPublicKey,
        validate: (address, memo) => validateXrpAddress(address, memo ?? null, test),
      }),
      memo: destinationTagCodec,
      createScanner: (endpoint) => createXrpScanner(endpoint),
      transfers: new XrpTransferCrafter(test),
      // validated ledgers are final: a validated transaction has the chain's confirmations at once
      createTransferNode: (endpoint) => new XrpTransferNode(endpoint, { confirmations: Math.max(1, chain.confirmations) }),
      // balance reads for reconciliation: account_info at one validated ledger
      createBalanceReader: (endpoint) => new XrpBalanceReader(endpoint),
    };
  },
});

export const createXrpAdapter: (chain: ChainDefinition) => ChainAdapter = plugin.create;
