import { defineAdapter, type AdapterParts, type AdapterPlugin, type ChainAdapter, type ChainDefinition, type UtxoSpending } from '@wcs/core';
import { BitcoinAddressCodec } from './address';
import { BitcoinBalanceReader } from './balances';
import { bitcoinKeySpec } from './keys';
import { resolveNetwork } from './network';
import { BitcoinBlockScanner } from './scanner';
import { BitcoinTransferNode } from './transfer-node';
import { BitcoinTransferCrafter } from './transfer';

export const PACKAGE_NAME = '@wcs/adapter-bitcoin';

/** The adapter for one bitcoin-family chain (mainnet, testnet or regtest). */
export const plugin: AdapterPlugin = defineAdapter({
  name: PACKAGE_NAME,
  family: 'bitcoin',
  curve: 'secp256k1',
  addressing: 'hd',
  // The utxo branch of the parts: its crafter a UtxoCrafter, its node a UtxoTransferNode.
  build(chain): AdapterParts & UtxoSpending {
    const network = resolveNetwork(chain);
    return {
      spendModel: 'utxo',
      keySpec: (purpose) => bitcoinKeySpec(network, purpose),
      address: new BitcoinAddressCodec(network),
      memo: null,
      createScanner: (endpoint) => new BitcoinBlockScanner(network, endpoint),
      transfers: new BitcoinTransferCrafter(network),
      createTransferNode: (endpoint) => new BitcoinTransferNode(network, endpoint),
      /** Balance reads for reconciliation: the UTXO set of many addresses at the node's head. */
      createBalanceReader: (endpoint) => new BitcoinBalanceReader(network, endpoint),
    };
  },
});

export const createBitcoinAdapter: (chain: ChainDefinition) => ChainAdapter = plugin.create;
