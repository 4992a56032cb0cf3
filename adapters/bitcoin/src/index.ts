// @wcs/adapter-bitcoin: native segwit P2WPKH (BIP-84) on mainnet, testnet and regtest.
export { plugin, createBitcoinAdapter, PACKAGE_NAME } from './plugin';
export { BitcoinAddressCodec } from './address';
export { bitcoinKeySpec, CHANGE_LEVEL } from './keys';
export { resolveNetwork, DEFAULT_REGTEST_HRP, type BitcoinNetwork } from './network';
export { BitcoinBlockScanner, outputAddress, type BitcoinScannerOptions } from './scanner';
export { bitcoinRpc, RawJson, type BitcoinRpcOptions } from './rpc';
export {
  parseFeeRate, formatFeeRate, p2wpkhSpendWeight, p2wpkhSpendVsize, feeForVsize, dustThreshold, addressScript,
  MAX_MONEY, RBF_SEQUENCE, P2WPKH_INPUT_VBYTES, MAX_STANDARD_WEIGHT,
} from './spend';
export { selectInputs, type InputSelection, type SelectionOptions, type SpendPlan } from './select';
export { BitcoinTransferCrafter, transferChange } from './transfer';
export { consolidationVsize, maxConsolidationInputs, P2WPKH_SCRIPT_LENGTH } from './consolidate';
export { BitcoinTransferNode, classifyBroadcastRefusal, btcToSats, type AddressUnspent, type BitcoinTransferNodeOptions } from './transfer-node';
export { verifyDigest } from './ecdsa';
export { BitcoinBalanceReader, type BitcoinBalanceReaderOptions } from './balances';
