// @wcs/adapter-evm: every EVM chain by definition (chain.evmChainId), EIP-55 addresses.
export { plugin, createEvmAdapter, PACKAGE_NAME } from './plugin';
export { EvmAddressCodec } from './address';
export { evmKeySpec, EVM_KEY_NAMESPACE, CHANGE_LEVEL } from './keys';
export { EvmBlockScanner, ERC20_TRANSFER_TOPIC, type EvmScannerOptions } from './scanner';
export {
  EvmTransferCrafter, INPUT_FORMAT as EVM_TRANSFER_INPUT_FORMAT, MIN_FEE_BUMP_PERCENT, erc20TransferData, type EvmTransferInput,
} from './transfer';
export { EvmTransferNode, type EvmTransferNodeOptions } from './transfer-node';
export { EvmBalanceReader, MULTICALL3_ADDRESS, RECENT_STATE_DEPTH, type EvmBalanceReaderOptions } from './balances';
export * from './delegation';
