/**
 * Chain metadata as data (after BitGo statics): one record per chain and network.
 * Adapters serve families; adding an EVM chain is a new definition, not new code.
 */
/** The families whose adapters ship with this repository (their traits: FAMILY_TRAITS). */
export const CHAIN_FAMILIES = ['bitcoin', 'evm', 'solana', 'xrp', 'stellar', 'eos'] as const;
export type BuiltInFamily = (typeof CHAIN_FAMILIES)[number];
/**
 * A chain family: one of the built-in ones, or any family an adapter package declares (its
 * `traits`): a chain team adds a family by publishing a package, with no change to core.
 */
// eslint-disable-next-line @typescript-eslint/ban-types
export type ChainFamily = BuiltInFamily | (string & {});
/** What a family name looks like (config files, adapter packages): lower case, 2 to 16 characters (the catalogue's column). */
export const CHAIN_FAMILY_RE = /^[a-z][a-z0-9_-]{1,15}$/;

export const CURVES = ['secp256k1', 'ed25519'] as const;
export type Curve = (typeof CURVES)[number];

/** hd: one address per user; memo: one shared address, a memo per user. */
export type AddressingKind = 'hd' | 'memo';

/** test applications see test networks; live applications see live ones. */
export type Environment = 'test' | 'live';
export const ENVIRONMENTS: readonly Environment[] = ['test', 'live'];

export interface ChainDefinition {
  /** Internal chain id (the spec's chainId in callbacks); stable per (code, environment). */
  readonly id: number;
  readonly code: string;
  readonly name: string;
  readonly family: ChainFamily;
  readonly environment: Environment;
  readonly network: string;
  readonly curve: Curve;
  readonly addressing: AddressingKind;
  readonly nativeSymbol: string;
  readonly decimals: number;
  readonly confirmations: number;
  /** EIP-155 chain id for EVM chains, null otherwise. */
  readonly evmChainId: number | null;
  /** Adapter-specific settings (e.g. EOS `depositAccount`); validated by the adapter. */
  readonly options: Readonly<Record<string, string>>;
}

export interface TokenDefinition {
  /** Stable chainTokenId. */
  readonly id: number;
  readonly chainCode: string;
  readonly environment: Environment;
  readonly symbol: string;
  readonly name: string;
  /** Contract / mint / issuer identifier; null for the chain's native coin. */
  readonly contract: string | null;
  readonly decimals: number;
}

/** Per-family facts that do not vary by network: the key curve, and one address per user or a shared one with memos. */
export interface FamilyTraits {
  readonly curve: Curve;
  readonly addressing: AddressingKind;
}

/** The traits of the built-in families. Other families' traits come from their adapter package (AdapterPlugin.traits). */
export const FAMILY_TRAITS: Readonly<Record<BuiltInFamily, FamilyTraits>> = Object.freeze({
  bitcoin: { curve: 'secp256k1', addressing: 'hd' },
  evm: { curve: 'secp256k1', addressing: 'hd' },
  solana: { curve: 'ed25519', addressing: 'hd' },
  xrp: { curve: 'secp256k1', addressing: 'memo' },
  stellar: { curve: 'ed25519', addressing: 'memo' },
  eos: { curve: 'secp256k1', addressing: 'memo' },
});

/** Chain codes: upper-case letters, digits and underscore, 2 to 16 characters. */
export const CHAIN_CODE_RE = /^[A-Z][A-Z0-9_]{1,15}$/;

/** The traits of a built-in family, or null for a family an adapter package brings. */
export function builtInTraits(family: ChainFamily): FamilyTraits | null {
  return Object.prototype.hasOwnProperty.call(FAMILY_TRAITS, family) ? FAMILY_TRAITS[family as BuiltInFamily] : null;
}
