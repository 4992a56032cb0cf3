import { builtInTraits, type ChainDefinition, type FamilyTraits } from '../chain';

/**
 * What a catalogue entry gives (the fields of a chains[] entry in the server config): curve and
 * addressing are not listed, they follow from the family; evmChainId (default null) and options
 * (default {}) may be left out.
 */
export type TestChainInput = Omit<ChainDefinition, 'curve' | 'addressing' | 'evmChainId' | 'options'> & Partial<Pick<ChainDefinition, 'evmChainId' | 'options'>>;

/**
 * A chain definition for tests, built the way the server's catalogue resolves one: curve and
 * addressing from core's FAMILY_TRAITS for a built-in family, else from `traits` (what the
 * family's adapter package declares: pass its plugin.traits[family]); evmChainId null unless
 * given, options a frozen copy ({} unless given).
 */
export function testChain(c: TestChainInput, traits: FamilyTraits | null = builtInTraits(c.family)): ChainDefinition {
  if (!traits) throw new TypeError(`testChain: family ${c.family} is not built in: pass its traits (the plugin's traits[family])`);
  return {
    id: c.id, code: c.code, name: c.name, family: c.family, environment: c.environment, network: c.network,
    curve: traits.curve, addressing: traits.addressing,
    nativeSymbol: c.nativeSymbol, decimals: c.decimals, confirmations: c.confirmations, evmChainId: c.evmChainId ?? null,
    options: Object.freeze({ ...(c.options ?? {}) }),
  };
}
