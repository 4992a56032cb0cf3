import {
  AdapterConfigError, PLUGIN_API_VERSION, type AddressCodec, type AdapterPlugin, type ChainAdapter, type ChainDefinition, type ChainEndpoint,
  type ChainFamily, type KeyPurpose, type KeySpec,
} from '@wcs/core';
import type { Address } from '@ton/core';
import { TonAddresses } from './address';
import { tonMemoCodec } from './memo';
import { TonScanner } from './scanner';
import { TonTransferCrafter } from './transfer';
import { TonTransferNode } from './transfer-node';

export { TonAddresses, canonicalJettonMaster, jettonMasterForm } from './address';
export { MAX_COMMENT_BYTES, MAX_MEMO_INDEX, isNumericMemo, isTonComment, tonMemoCodec } from './memo';
export { TonApi, TonNodeRefusal, type AccountInfo, type ApiTransaction, type StackItem } from './api';
export { TonScanner, formatCursor, type TonScannerOptions } from './scanner';
export { DEFAULT_FEE_RESERVE, DEFAULT_FORWARD_TON, DEFAULT_JETTON_GAS, TonTransferCrafter, externalMessage, walletOf, type TonTransferInput } from './transfer';
export { TonTransferNode, type TonNodeTransferInput, type TonTransferNodeOptions } from './transfer-node';
export * from './messages';
export { bodyFacts, bodyFactsByCore, bodyFactsLight, type BodyFacts } from './body';
export { listedTransaction, type ApiInMessage, type BouncePhase } from './api';

/**
 * The family this package serves. Core's ChainFamily does not list it (this package lives outside
 * the workspace and may not change core): the string is cast, and the registry takes it as it
 * takes any family. The service's config schema and catalogue need core to know 'ton' (its curve
 * ed25519 and memo addressing) before a catalogue entry can name it.
 */
export const TON_FAMILY = 'ton' as ChainFamily;

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

export function createTonAdapter(chain: ChainDefinition): ChainAdapter {
  if (chain.family !== TON_FAMILY || chain.curve !== 'ed25519' || chain.addressing !== 'memo') {
    throw new AdapterConfigError(`@wcs/adapter-ton serves family ton (ed25519, memo); chain ${chain.code} is ${chain.family} (${chain.curve}, ${chain.addressing})`);
  }
  const addresses = new TonAddresses(chain.network);
  const verifiedJettonWallets = new Map<string, Map<string, Address | null>>();
  return Object.freeze({
    chain,
    addressing: 'memo' as const,
    curve: 'ed25519' as const,
    spendModel: 'sequence' as const,
    keySpec: (purpose: KeyPurpose) => {
      const spec = TON_KEY_SPECS[purpose];
      if (!spec) throw new TypeError(`unknown key purpose ${String(purpose)}`);
      return spec;
    },
    address: Object.freeze<AddressCodec>({
      addressFromPublicKey: (publicKey) => addresses.addressFromPublicKey(publicKey),
      validate: (address, memo) => addresses.validate(address, memo ?? null),
    }),
    memo: tonMemoCodec,
    createScanner: (endpoint: ChainEndpoint) => {
      // what the jetton masters said stays true: the adapter's scanners of one endpoint share it
      let jettonWallets = verifiedJettonWallets.get(endpoint.url);
      if (!jettonWallets) verifiedJettonWallets.set(endpoint.url, (jettonWallets = new Map()));
      return new TonScanner(endpoint, addresses, { jettonWallets });
    },
    transfers: new TonTransferCrafter(addresses),
    createTransferNode: (endpoint: ChainEndpoint) => new TonTransferNode(endpoint, addresses, { confirmations: Math.max(1, chain.confirmations) }),
  } satisfies ChainAdapter);
}

export const plugin: AdapterPlugin = Object.freeze({
  name: '@wcs/adapter-ton',
  pluginApiVersion: PLUGIN_API_VERSION,
  families: Object.freeze([TON_FAMILY]),
  // the family's curve and addressing, for a core that takes families from their packages (core's FAMILY_TRAITS has no ton)
  traits: Object.freeze({ [TON_FAMILY]: Object.freeze({ curve: 'ed25519' as const, addressing: 'memo' as const }) }),
  create: createTonAdapter,
});
