export { runAdapterConformance, type AdapterFixture, type AdapterConformanceOptions } from './adapter-conformance';
export { adapterPackageRequire } from './package-loader';
export { runKeyStoreConformance, type KeyStoreConformanceOptions } from './keystore-conformance';
export { testChain, type TestChainInput } from './chains';
export {
  TEST_MNEMONIC, KEY_PURPOSES, signAsKeyStore, toHex, fromHex, fillPath, layoutPaths, testSeed, slip10Ed25519, testPublicKey,
  walletCore, walletCoreAddress, walletCoreVectors, expectWalletCoreAddresses,
  type KeyLayout, type WalletCoreCoin, type WalletCoreKey, type WalletCoreAddressOptions, type WalletCoreGrid, type OracleVector,
} from './oracle';
export { startReplayServer, fixtureReader, type ReplayServer, type Reply, type SeenRequest } from './replay-server';
export { rejected } from './rejected';
export { runChainConformance, signersByAddress, type PayloadSigner, type ChainHarness, type HarnessSession, type DepositCase, type TransferCase, type SweepCase } from './chain-conformance';
export { memoryLedger, type MemoryLedgerState } from './sender-ledger';
