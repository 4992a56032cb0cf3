import type { KeyPurpose, KeySpec } from '@wcs/core';
import type { BitcoinNetwork } from './network';

/**
 * BIP-84 change level per key purpose, under the application's account:
 * deposit keys on the external chain (0); the hot wallet on 1 and the fee wallet on 2
 * (this service's convention: its own wallets, not BIP-84 change addresses).
 */
export const CHANGE_LEVEL: Readonly<Record<KeyPurpose, number>> = Object.freeze({ deposit: 0, hot: 1, fee: 2 });

/** m/84'/<coin>'/{account}'/<change>/{index}: P2WPKH keys, coin 0 on mainnet and 1 on test networks. */
export function bitcoinKeySpec(network: BitcoinNetwork, purpose: KeyPurpose): KeySpec {
  const change = CHANGE_LEVEL[purpose];
  if (change === undefined) throw new Error(`unknown key purpose ${JSON.stringify(purpose)}`);
  return Object.freeze({
    namespace: network.keyNamespace,
    curve: 'secp256k1',
    pathTemplate: `m/84'/${network.coinType}'/{account}'/${change}/{index}`,
  });
}
