import type { AddressingKind, ChainDefinition, ChainFamily, Curve } from './chain';
import type { KeyPurpose, KeySignature, KeySpec, PublicKey } from './keystore';

/** Version of the plugin API in this core. Plugins declare the version they were built for. */
export const PLUGIN_API_VERSION = 1;

/** Result of validating a target address (expected outcome: returned, never thrown). */
export type AddressValidation =
  | { readonly valid: true; readonly normalized: string; readonly memo: string | null }
  | { readonly valid: false; readonly reason: string };

/** Address derivation and validation: every adapter has these. */
export interface AddressCodec {
  /**
   * HD chains: the user's deposit address for its public key.
   * Memo chains: the application's shared deposit address for its account key.
   */
  addressFromPublicKey(publicKey: PublicKey): string;
  /**
   * Checks format, checksum and network, and returns the canonical form
   * (EIP-55 for EVM, lower-case bech32 for BTC, classic address for XRP X-addresses).
   * `memo` is the memo the caller intends to send with (if any); conflicts are invalid.
   */
  validate(address: string, memo?: string | null): AddressValidation;
}

/** Memo chains: how a user's deposit memo is written and checked. */
export interface MemoCodec {
  /** Largest memo index this chain can carry (XRP destination tags are uint32). */
  readonly maxIndex: bigint;
  /** The memo text for a user's memo index (index >= 1). */
  format(index: bigint): string;
  /** Whether text is a well-formed memo for this chain (for withdrawal targets too). */
  isValid(memo: string): boolean;
}

// ---- Capabilities declared for later issues (deposit scanning, transfers, status) ----

export interface ChainCursor {
  readonly height: bigint;
  readonly hash: string;
}

export interface ObservedTransfer {
  readonly txHash: string;
  /** Position of the transfer in the transaction (output index, log index, operation index). */
  readonly position: number;
  readonly toAddress: string;
  readonly memo: string | null;
  /** Token contract / mint / issuer; null for the native coin. */
  readonly contract: string | null;
  readonly amount: bigint;
  readonly blockHeight: bigint;
  readonly blockHash: string;
  readonly succeeded: boolean;
}

/** Deposit scanning: read blocks (or account history) and report transfers to watched addresses. */
export interface DepositScanner {
  tip(): Promise<ChainCursor>;
  blockHashAt(height: bigint): Promise<string | null>;
  transfersInRange(from: bigint, to: bigint, watched: ReadonlySet<string>): Promise<ObservedTransfer[]>;
}

export interface TransferRequest {
  readonly from: string;
  readonly fromPublicKey: PublicKey;
  readonly to: string;
  readonly memo: string | null;
  readonly contract: string | null;
  readonly amount: bigint;
}

/** The payloads an adapter asks the KeyStore to sign, and what it needs to finish the transaction. */
export interface UnsignedTransfer {
  readonly payloads: readonly Uint8Array[];
  readonly fee: bigint;
  /** Adapter-private serialisable state needed by combine(). */
  readonly state: unknown;
}

export interface SignedTransaction {
  readonly txHash: string;
  readonly raw: Uint8Array;
}

/** Transfer crafting: the adapter crafts payloads, the KeyStore signs, the adapter combines. */
export interface TransferCrafter {
  craft(request: TransferRequest): Promise<UnsignedTransfer>;
  combine(unsigned: UnsignedTransfer, signatures: readonly KeySignature[]): SignedTransaction;
}

export interface Broadcaster {
  broadcast(tx: SignedTransaction): Promise<{ readonly txHash: string }>;
}

export type TransactionState =
  | { readonly state: 'UNKNOWN' }
  | { readonly state: 'PENDING' }
  | { readonly state: 'MINED'; readonly blockHeight: bigint; readonly confirmations: number; readonly succeeded: boolean };

export interface TransactionStatusReader {
  status(txHash: string): Promise<TransactionState>;
}

/** One chain served by an adapter: the capabilities it has. Later capabilities are optional. */
export interface ChainAdapter {
  readonly chain: ChainDefinition;
  readonly addressing: AddressingKind;
  readonly curve: Curve;
  /** The key layout for a purpose (deposit keys now; hot/fee keys later). */
  keySpec(purpose: KeyPurpose): KeySpec;
  readonly address: AddressCodec;
  /** Present exactly on memo chains. */
  readonly memo: MemoCodec | null;
  readonly scanner?: DepositScanner;
  readonly transfers?: TransferCrafter;
  readonly broadcaster?: Broadcaster;
  readonly txStatus?: TransactionStatusReader;
}

/** What an adapter package exports (as `plugin`). */
export interface AdapterPlugin {
  /** The npm package name. */
  readonly name: string;
  readonly pluginApiVersion: number;
  readonly families: readonly ChainFamily[];
  /** Builds the adapter for one chain of its families; throws AdapterConfigError on bad chain options. */
  create(chain: ChainDefinition): ChainAdapter;
}

/** A chain's adapter-specific options are invalid (e.g. EOS without a deposit account). */
export class AdapterConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdapterConfigError';
  }
}
