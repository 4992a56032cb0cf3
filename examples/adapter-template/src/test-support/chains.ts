import type { ChainDefinition } from '@wcs/core';
import { testChain } from '@wcs/core/testing';
import { DEMO_FAMILY, plugin } from '../index';

/**
 * A demo chain as the service's catalogue resolves a config entry (the fields of a `chains[]`
 * entry): `testChain` takes curve and addressing from the family's traits, which for a family core
 * does not know are the plugin's own (`plugin.traits[family]`).
 */
export function demoChain(overrides: { id?: number; code?: string; environment?: 'test' | 'live'; network?: string } = {}): ChainDefinition {
  return testChain({
    id: overrides.id ?? 9901, code: overrides.code ?? 'DEMO_TEST', name: 'Demo', family: DEMO_FAMILY, environment: overrides.environment ?? 'test',
    network: overrides.network ?? 'testnet', nativeSymbol: 'DMO', decimals: 6, confirmations: 1,
  }, plugin.traits?.[DEMO_FAMILY] ?? null);
}
