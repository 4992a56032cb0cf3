import { AdapterConfigError, PLUGIN_API_VERSION, type AdapterPlugin, type ChainAdapter, type ChainDefinition, type ChainEndpoint } from '@wcs/core';
import { EvmAddressCodec } from './address';
import { evmKeySpec } from './keys';
import { EvmBlockScanner } from './scanner';
import { EvmTransferCrafter } from './transfer';
import { EvmTransferNode } from './transfer-node';

export const PACKAGE_NAME = '@wcs/adapter-evm';

/**
 * The adapter for any EVM chain, from its definition alone (chain.evmChainId):
 * adding an EVM chain is a catalogue entry, not code.
 */
export function createEvmAdapter(chain: ChainDefinition): ChainAdapter {
  if (chain.family !== 'evm') throw new AdapterConfigError(`${chain.code}: ${PACKAGE_NAME} serves the evm family, not ${chain.family}`);
  if (chain.curve !== 'secp256k1' || chain.addressing !== 'hd') {
    throw new AdapterConfigError(`${chain.code}: EVM chains are secp256k1 with hd addressing (got ${chain.curve}, ${chain.addressing})`);
  }
  const id = chain.evmChainId;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) {
    throw new AdapterConfigError(`${chain.code} (${chain.network}): evmChainId must be a positive integer (EIP-155), got ${JSON.stringify(id)}`);
  }
  return Object.freeze({
    chain,
    addressing: 'hd' as const,
    spendModel: 'sequence' as const,
    curve: 'secp256k1' as const,
    keySpec: evmKeySpec,
    address: new EvmAddressCodec(),
    memo: null,
    /** Deposit scanning over the chain's JSON-RPC endpoint; the node must serve this chain's evmChainId. */
    createScanner: (endpoint: ChainEndpoint) => new EvmBlockScanner(endpoint, { expectedChainId: id, label: chain.code }),
    /** Withdrawal crafting, offline: EIP-1559 or legacy EIP-155 transactions signed for evmChainId. */
    transfers: new EvmTransferCrafter(id),
    /** Withdrawal I/O over the chain's JSON-RPC endpoint; the node must serve this chain's evmChainId. */
    createTransferNode: (endpoint: ChainEndpoint) => new EvmTransferNode(endpoint, { expectedChainId: id, label: chain.code }),
  } satisfies ChainAdapter);
}

export const plugin: AdapterPlugin = Object.freeze({
  name: PACKAGE_NAME,
  pluginApiVersion: PLUGIN_API_VERSION,
  families: Object.freeze(['evm'] as const),
  create: createEvmAdapter,
});
