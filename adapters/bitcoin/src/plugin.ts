import { AdapterConfigError, PLUGIN_API_VERSION, type AdapterPlugin, type ChainAdapter, type ChainDefinition } from '@wcs/core';
import { BitcoinAddressCodec } from './address';
import { bitcoinKeySpec } from './keys';
import { resolveNetwork } from './network';
import { BitcoinBlockScanner } from './scanner';
import { BitcoinTransferNode } from './transfer-node';
import { BitcoinTransferCrafter } from './transfer';

export const PACKAGE_NAME = '@wcs/adapter-bitcoin';

/** The adapter for one bitcoin-family chain (mainnet, testnet or regtest). */
export function createBitcoinAdapter(chain: ChainDefinition): ChainAdapter {
  if (chain.family !== 'bitcoin') throw new AdapterConfigError(`${chain.code}: ${PACKAGE_NAME} serves the bitcoin family, not ${chain.family}`);
  if (chain.curve !== 'secp256k1' || chain.addressing !== 'hd') {
    throw new AdapterConfigError(`${chain.code}: bitcoin chains are secp256k1 with hd addressing (got ${chain.curve}, ${chain.addressing})`);
  }
  const network = resolveNetwork(chain);
  return Object.freeze({
    chain,
    addressing: 'hd' as const,
    spendModel: 'utxo' as const,
    curve: 'secp256k1' as const,
    keySpec: (purpose) => bitcoinKeySpec(network, purpose),
    address: new BitcoinAddressCodec(network),
    memo: null,
    createScanner: (endpoint) => new BitcoinBlockScanner(network, endpoint),
    transfers: new BitcoinTransferCrafter(network),
    createTransferNode: (endpoint) => new BitcoinTransferNode(network, endpoint),
  } satisfies ChainAdapter);
}

export const plugin: AdapterPlugin = Object.freeze({
  name: PACKAGE_NAME,
  pluginApiVersion: PLUGIN_API_VERSION,
  families: Object.freeze(['bitcoin'] as const),
  create: createBitcoinAdapter,
});
