import { AdapterConfigError, defineAdapter, type AdapterParts, type AdapterPlugin, type ChainAdapter, type ChainDefinition, type ChainEndpoint, type SequenceSpending } from '@wcs/core';
import { EvmAddressCodec } from './address';
import { EvmBalanceReader } from './balances';
import { evmKeySpec } from './keys';
import { EvmBlockScanner } from './scanner';
import { EvmTransferCrafter } from './transfer';
import { EvmTransferNode } from './transfer-node';
import { evmDelegatedSweeps } from './delegated-sweeps';

export const PACKAGE_NAME = '@wcs/adapter-evm';

/**
 * The adapter for any EVM chain, from its definition alone (chain.evmChainId):
 * adding an EVM chain is a catalogue entry, not code.
 */
export const plugin: AdapterPlugin = defineAdapter({
  name: PACKAGE_NAME,
  family: 'evm',
  curve: 'secp256k1',
  addressing: 'hd',
  /** A `sequence` chain (EIP-155 nonces): its crafter and node are the sequence model's. */
  build(chain): AdapterParts & SequenceSpending {
    const id = chain.evmChainId;
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) {
      throw new AdapterConfigError(`${chain.code} (${chain.network}): evmChainId must be a positive integer (EIP-155), got ${JSON.stringify(id)}`);
    }
    const traces = chain.options.traces ?? 'auto';
    if (traces !== 'auto' && traces !== 'off') {
      throw new AdapterConfigError(`${chain.code} (${chain.network}): option traces must be "auto" or "off", got ${JSON.stringify(traces)}`);
    }
    const eip7702 = chain.options.eip7702 ?? 'on';
    if (eip7702 !== 'on' && eip7702 !== 'off') {
      throw new AdapterConfigError(`${chain.code} (${chain.network}): option eip7702 must be "on" or "off", got ${JSON.stringify(eip7702)}`);
    }
    return {
      spendModel: 'sequence',
      keySpec: evmKeySpec,
      address: new EvmAddressCodec(),
      memo: null,
      /**
       * Deposit scanning over the chain's JSON-RPC endpoint; the node must serve this chain's
       * evmChainId. Option `traces` ("auto", the default, or "off"): internal transfers from call traces.
       */
      createScanner: (endpoint: ChainEndpoint) => new EvmBlockScanner(endpoint, { expectedChainId: id, label: chain.code, traces }),
      /** Withdrawal crafting, offline: EIP-1559 or legacy EIP-155 transactions signed for evmChainId. */
      transfers: new EvmTransferCrafter(id),
      /** Withdrawal I/O over the chain's JSON-RPC endpoint; the node must serve this chain's evmChainId. */
      createTransferNode: (endpoint: ChainEndpoint) => new EvmTransferNode(endpoint, { expectedChainId: id, label: chain.code }),
      /** Balance reads for reconciliation: eth_getBalance and ERC-20 balanceOf through Multicall3 where the chain has it, pinned to one block. */
      createBalanceReader: (endpoint: ChainEndpoint) => new EvmBalanceReader(endpoint, { expectedChainId: id, label: chain.code }),
      /**
       * Delegated sweeps (EIP-7702): option `eip7702` ("on", the default, or "off"). On, a policy in
       * delegated mode sweeps through the service's forwarder once the node is found to run
       * EIP-7702 (TransferNode.delegation.support); off keeps every sweep on the top-up path.
       */
      delegatedSweeps: evmDelegatedSweeps(id, eip7702 === 'on'),
    };
  },
});

export const createEvmAdapter: (chain: ChainDefinition) => ChainAdapter = plugin.create;
