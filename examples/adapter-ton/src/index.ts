import {
  AdapterConfigError, defineAdapter, parseUnits, scanning, type AdapterParts, type AdapterPlugin, type ChainAdapter, type ChainDefinition, type ChainEndpoint,
  type ChainFamily, type KeyPurpose, type KeySpec, type SequenceSpending,
} from '@wcs/core';
import type { Address } from '@ton/core';
import { TonAddresses } from './address';
import { tonMemoCodec } from './memo';
import { TonScanner } from './scanner';
import { TonTransferCrafter } from './transfer';
import { DEFAULT_DEPOSIT_FLOAT, TonTransferNode } from './transfer-node';

export { TonAddresses, canonicalJettonMaster, jettonMasterForm } from './address';
export { MAX_COMMENT_BYTES, MAX_MEMO_INDEX, isNumericMemo, isTonComment, tonMemoCodec } from './memo';
export { TonApi, TonNodeRefusal, type AccountInfo, type ApiTransaction, type StackItem } from './api';
export { TonScanner, formatCursor, type TonScannerOptions } from './scanner';
export { DEFAULT_FEE_RESERVE, DEFAULT_FORWARD_TON, DEFAULT_JETTON_GAS, TonTransferCrafter, externalMessage, walletOf, type TonTransferInput } from './transfer';
export { DEFAULT_DEPOSIT_FLOAT, TonTransferNode, walletFee, type TonNodeTransferInput, type TonTransferNodeOptions } from './transfer-node';
export * from './messages';
export { bodyFacts, bodyFactsByCore, bodyFactsLight, type BodyFacts } from './body';
export { listedTransaction, type ApiInMessage, type BouncePhase } from './api';

/**
 * The family this package serves. Core does not list it among its built-in families; the package
 * declares the family's curve and addressing (`plugin.traits`, filled in by defineAdapter), and the
 * service reads them from here: no change to core or the server names TON.
 */
export const TON_FAMILY: ChainFamily = 'ton';

/**
 * Key layout (SLIP-10 ed25519, every level hardened), after the TON wallets' m/44'/607'/x':
 * the application's shared deposit wallet is index 0 of the deposit template; hot and fee keys
 * add 1' / 2' below the index.
 */
export const TON_KEY_SPECS: Readonly<Record<KeyPurpose, KeySpec>> = Object.freeze({
  deposit: Object.freeze({ namespace: 'ton', curve: 'ed25519', pathTemplate: "m/44'/607'/{account}'/{index}'" }),
  hot: Object.freeze({ namespace: 'ton', curve: 'ed25519', pathTemplate: "m/44'/607'/{account}'/{index}'/1'" }),
  fee: Object.freeze({ namespace: 'ton', curve: 'ed25519', pathTemplate: "m/44'/607'/{account}'/{index}'/2'" }),
});

/**
 * The chain option `depositFloat`: Toncoin (a decimal, at most 9 places) that a collection sweep of
 * Toncoin leaves in the shared deposit account to pay its jetton sweeps; default 0.1.
 */
function depositFloatOf(chain: ChainDefinition): bigint {
  const v = chain.options?.depositFloat;
  if (v === undefined) return DEFAULT_DEPOSIT_FLOAT;
  try {
    return parseUnits(v, 9);
  } catch (e) {
    throw new AdapterConfigError(`TON chain ${chain.code}: option depositFloat must be a Toncoin amount such as "0.1" (${(e as Error).message})`);
  }
}

/**
 * The package's plugin, made with core's defineAdapter: a memo chain (one shared wallet per
 * application, a numeric comment per user) of the `sequence` spend model (the wallet's seqno).
 */
export const plugin: AdapterPlugin = defineAdapter({
  name: '@wcs/adapter-ton',
  family: TON_FAMILY,
  curve: 'ed25519',
  addressing: 'memo',
  build(chain): AdapterParts & SequenceSpending {
    const addresses = new TonAddresses(chain.network);
    const depositFloat = depositFloatOf(chain);
    const verifiedJettonWallets = new Map<string, Map<string, Address | null>>();
    return {
      spendModel: 'sequence',
      keySpec: TON_KEY_SPECS,
      address: {
        addressFromPublicKey: (publicKey) => addresses.addressFromPublicKey(publicKey),
        validate: (address, memo) => addresses.validate(address, memo ?? null),
      },
      memo: tonMemoCodec,
      createScanner: (endpoint: ChainEndpoint) => {
        // what the jetton masters said stays true: the adapter's scanners of one endpoint share it
        let jettonWallets = verifiedJettonWallets.get(endpoint.url);
        if (!jettonWallets) verifiedJettonWallets.set(endpoint.url, (jettonWallets = new Map()));
        return new TonScanner(endpoint, addresses, { jettonWallets });
      },
      transfers: new TonTransferCrafter(addresses),
      createTransferNode: (endpoint: ChainEndpoint) => new TonTransferNode(endpoint, addresses, { confirmations: Math.max(1, chain.confirmations), depositFloat }),
    };
  },
});

/** A TON adapter's deposit scanner for an endpoint, as the TonScanner it is (cursor helpers, options). */
export function tonScanner(adapter: ChainAdapter, endpoint: ChainEndpoint): TonScanner {
  const scanner = scanning(adapter).createScanner(endpoint);
  if (!(scanner instanceof TonScanner)) throw new TypeError(`${adapter.chain.code}: not a TON adapter's scanner`);
  return scanner;
}

/** The adapter of one TON chain (AdapterConfigError for a chain of another family, curve or addressing). */
export function createTonAdapter(chain: ChainDefinition): ChainAdapter {
  return plugin.create(chain);
}
