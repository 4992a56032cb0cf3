/**
 * Test-only (loaded by *.test.ts, never by index.ts): this package's test chains. Entries of
 * server/src/catalogue/default-catalogue.ts, and a regtest chain like our bcoin test node's.
 */
import type { ChainDefinition } from '@wcs/core';
import { testChain } from '@wcs/core/testing';

export const BTC_MAINNET = testChain({ id: 1, code: 'BTC', name: 'Bitcoin', family: 'bitcoin', environment: 'live', network: 'mainnet', nativeSymbol: 'BTC', decimals: 8, confirmations: 2 });
export const BTC_TESTNET = testChain({ id: 101, code: 'BTC', name: 'Bitcoin Testnet', family: 'bitcoin', environment: 'test', network: 'testnet', nativeSymbol: 'BTC', decimals: 8, confirmations: 1 });
export const BTC_REGTEST_RB = testChain({ id: 901, code: 'BTC', name: 'Bitcoin Regtest (bcoin)', family: 'bitcoin', environment: 'test', network: 'regtest', nativeSymbol: 'BTC', decimals: 8, confirmations: 1, options: { bech32Hrp: 'rb' } });

/** Each test chain with the bech32 human-readable part wallet-core is given for it. */
export const BTC_CHAINS: ReadonlyArray<readonly [ChainDefinition, string]> = [[BTC_MAINNET, 'bc'], [BTC_TESTNET, 'tb'], [BTC_REGTEST_RB, 'rb']];
