/**
 * Chain metadata as data (after BitGo statics): one record per chain and network.
 * Adapters serve families; adding an EVM chain is a new definition, not new code.
 */
export const CHAIN_FAMILIES = ['bitcoin', 'evm', 'solana', 'xrp', 'stellar', 'eos'] as const;
export type ChainFamily = (typeof CHAIN_FAMILIES)[number];

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

/** Per-family facts that do not vary by network. */
export const FAMILY_TRAITS: Readonly<Record<ChainFamily, { curve: Curve; addressing: AddressingKind }>> = Object.freeze({
  bitcoin: { curve: 'secp256k1', addressing: 'hd' },
  evm: { curve: 'secp256k1', addressing: 'hd' },
  solana: { curve: 'ed25519', addressing: 'hd' },
  xrp: { curve: 'secp256k1', addressing: 'memo' },
  stellar: { curve: 'ed25519', addressing: 'memo' },
  eos: { curve: 'secp256k1', addressing: 'memo' },
});

/** Chain codes: upper-case letters, digits and underscore, 2 to 16 characters. */
export const CHAIN_CODE_RE = /^[A-Z][A-Z0-9_]{1,15}$/;
