import type { KeyPurpose, KeySpec } from '@wcs/core';

/**
 * Every EVM chain shares one key namespace: an application's deposit address for a user is
 * the same on ETH, BSC, POLYGON and any EVM chain added by configuration.
 */
export const EVM_KEY_NAMESPACE = 'evm';

/** BIP-44 change level per key purpose: deposit 0, hot wallet 1, fee wallet 2 (this service's convention). */
export const CHANGE_LEVEL: Readonly<Record<KeyPurpose, number>> = Object.freeze({ deposit: 0, hot: 1, fee: 2 });

/** m/44'/60'/{account}'/<change>/{index} (SLIP-44 coin type 60 on every EVM chain). */
export function evmKeySpec(purpose: KeyPurpose): KeySpec {
  const change = CHANGE_LEVEL[purpose];
  if (change === undefined) throw new Error(`unknown key purpose ${JSON.stringify(purpose)}`);
  return Object.freeze({ namespace: EVM_KEY_NAMESPACE, curve: 'secp256k1', pathTemplate: `m/44'/60'/{account}'/${change}/{index}` });
}
