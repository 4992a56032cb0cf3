import type { ChainDefinition, ChainFamily, Curve, FamilyTraits } from './chain';
import { WcsError } from './errors';
import type { KeyPurpose, KeySpec, PublicKey } from './keystore';
import type { BalanceReader } from './balances';
import type { ChainEndpoint, DepositScanner } from './scanning';
import type {
  AllocatedTransfer, CraftResult, ExpiringCrafter, SequenceCrafter, SequenceTransferNode, TransferInput, TransferNode, UtxoCrafter, UtxoTransferNode,
} from './transfers';

/**
 * The chain-adapter contract: what an adapter package's plugin builds for one chain (addresses and
 * memos here; deposit scanning in scanning.ts; withdrawals in transfers.ts; defineAdapter in
 * define-adapter.ts), and how callers narrow it to its capabilities.
 */

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

/** What every chain adapter has, whatever its addressing. Later capabilities are optional. */
export interface ChainAdapterBase {
  readonly chain: ChainDefinition;
  readonly curve: Curve;
  /** The key layout for a purpose (deposit keys now; hot/fee keys later). */
  keySpec(purpose: KeyPurpose): KeySpec;
  readonly address: AddressCodec;
  /** Deposit scanning over an RPC endpoint; absent when the adapter cannot scan yet. */
  createScanner?(endpoint: ChainEndpoint): DepositScanner;
  /** Balance reads for reconciliation (docs/reconciliation.md); absent when the adapter cannot read balances. */
  createBalanceReader?(endpoint: ChainEndpoint): BalanceReader;
  /**
   * Where a hot wallet's address comes from: 'derived' (the default) from its public key
   * (address.addressFromPublicKey); 'registered' on chains whose accounts are named and created
   * on chain (EOS): the operator creates the account, gives its active permission the hot key and
   * registers the name with the service (`wcs hotwallets register`).
   */
  readonly hotAddress?: 'derived' | 'registered';
  /**
   * Why this chain cannot issue deposit addresses with its configured options (e.g. EOS without
   * `options.depositAccount`); absent when it can. The service refuses to enable such a chain for
   * an application and answers CHAIN_NOT_CONFIGURED to an address request on it; the adapter's
   * address.addressFromPublicKey throws AdapterConfigError with this message.
   */
  readonly addressesUnavailable?: string;
}

/**
 * How the chain orders an account's transactions (what the service allocates), with the crafter
 * and node of that model: withdrawal crafting (`transfers`) and withdrawal I/O over an RPC
 * endpoint (`createTransferNode`), both absent when the adapter cannot pay out yet.
 */
export interface SequenceSpending {
  readonly spendModel: 'sequence';
  readonly transfers?: SequenceCrafter;
  createTransferNode?(endpoint: ChainEndpoint): SequenceTransferNode;
  /** Chains whose deposit addresses can delegate to a forwarder and be swept in batches (EVM, EIP-7702); absent elsewhere. */
  readonly delegatedSweeps?: DelegatedSweeps;
}

/** A contract the service deploys through the chain's deterministic deployment proxy: where it will live, and the call that deploys it. */
export interface ContractDeployment {
  readonly address: string;
  /** The proxy to call (the transaction's `to`) and the call data that deploys the contract there. */
  readonly deployer: string;
  readonly deployData: string;
}

/** One entry of a batch sweep's outcome, as the batch sweeper reported it in the receipt's logs. */
export type SweepEntryOutcome =
  | { readonly account: string; readonly token: string | null; readonly ok: true; readonly amount: bigint }
  | { readonly account: string; readonly token: string | null; readonly ok: false; readonly reason: string };

/**
 * Delegated sweeps (docs/collection.md, "Delegated sweeps"): offline, pure parts. A deposit
 * address delegates its code (EIP-7702) to a forwarder that can only send its whole balance of a
 * token to one immutable collector; one transaction calls the batch sweeper, which calls many
 * forwarders and reports each entry's outcome. The KeyStore signs each authorization's digest
 * with the deposit key; nothing here holds a key.
 */
export interface DelegatedSweeps {
  /** The catalogue's flag for this chain (option `eip7702`): off keeps the top-up path whatever the node runs. */
  readonly enabled: boolean;
  /** The forwarder whose code sends only to `collector` (one per collector). */
  forwarder(collector: string): ContractDeployment;
  /** The batch sweeper (one per chain). */
  batchSweeper(): ContractDeployment;
  /** The batch call's data for these entries (token null: the native coin). */
  batchData(entries: ReadonlyArray<{ readonly account: string; readonly token: string | null }>): string;
  /** Each entry's outcome from a mined batch's logs, in entry order (only the batch sweeper's own logs). */
  outcomes(logs: ReadonlyArray<{ readonly address: string; readonly topics: readonly string[]; readonly data: string }>, batchSweeper: string): SweepEntryOutcome[];
  /** The digest the delegating account's key signs: keccak256(0x05 || rlp([chainId, delegate, nonce])) for this chain. */
  authorizationDigest(delegate: string, nonce: bigint): Uint8Array;
  /** The gas an entry may use at most (an upper bound, for pricing and for sizing batches): with its authorization or without. */
  entryGas(e: { readonly token: boolean; readonly authorize: boolean }): bigint;
  /** The gas of the batch transaction beyond its entries (intrinsic, the call itself). */
  readonly batchBaseGas: bigint;
}
export interface UtxoSpending {
  readonly spendModel: 'utxo';
  readonly transfers?: UtxoCrafter;
  createTransferNode?(endpoint: ChainEndpoint): UtxoTransferNode;
}
export interface ExpiringSpending {
  readonly spendModel: 'expiring';
  readonly transfers?: ExpiringCrafter;
  createTransferNode?(endpoint: ChainEndpoint): TransferNode;
}
export type Spending = SequenceSpending | UtxoSpending | ExpiringSpending;

/** The spend model branches with their crafter and node present. */
export type PayingSpending =
  | { readonly spendModel: 'sequence'; readonly transfers: SequenceCrafter; createTransferNode(endpoint: ChainEndpoint): SequenceTransferNode }
  | { readonly spendModel: 'utxo'; readonly transfers: UtxoCrafter; createTransferNode(endpoint: ChainEndpoint): UtxoTransferNode }
  | { readonly spendModel: 'expiring'; readonly transfers: ExpiringCrafter; createTransferNode(endpoint: ChainEndpoint): TransferNode };

/** HD chains: one deposit address per user (its own key), no memo. */
export interface HdAddressing {
  readonly addressing: 'hd';
  readonly memo: null;
}

/** Memo chains: one shared deposit address per application, a memo per user. */
export interface MemoAddressing {
  readonly addressing: 'memo';
  readonly memo: MemoCodec;
}

export type HdChainAdapter = ChainAdapterBase & HdAddressing & Spending;
export type MemoChainAdapter = ChainAdapterBase & MemoAddressing & Spending;

/**
 * One chain served by an adapter: an HD chain or a memo chain (`addressing` tells which, and only
 * a memo chain has a MemoCodec), of one spend model (`spendModel` tells which, and the crafter
 * and node are that model's: only a sequence chain's node has nextSequence, only a utxo chain's
 * crafter selects inputs).
 */
export type ChainAdapter = HdChainAdapter | MemoChainAdapter;

/** A chain adapter that pays out: its spend model's crafter and node present. */
export type PayingAdapter = ChainAdapter & PayingSpending;

/** A chain adapter that scans deposits. */
export type ScanningAdapter = ChainAdapter & { createScanner(endpoint: ChainEndpoint): DepositScanner };

export function canPay(adapter: ChainAdapter): adapter is PayingAdapter {
  return adapter.transfers !== undefined && typeof adapter.createTransferNode === 'function';
}

export function canScan(adapter: ChainAdapter): adapter is ScanningAdapter {
  return typeof adapter.createScanner === 'function';
}

/** A chain's capability is missing where the service needs it (it checks before it offers the chain): a coded error, not a crash on undefined. */
export class CapabilityMissingError extends WcsError {
  constructor(chain: ChainDefinition, capability: 'withdrawals' | 'deposit scanning') {
    super('CHAIN_NOT_CONFIGURED', { message: `The adapter of chain ${chain.code} has no ${capability}`, details: { chainCode: chain.code } });
    this.name = 'CapabilityMissingError';
  }
}

/** The adapter as a paying one, for code that runs only for chains that pay out; CapabilityMissingError otherwise. */
export function paying(adapter: ChainAdapter): PayingAdapter {
  if (!canPay(adapter)) throw new CapabilityMissingError(adapter.chain, 'withdrawals');
  return adapter;
}

/** The adapter as a scanning one, for code that runs only for chains that scan; CapabilityMissingError otherwise. */
export function scanning(adapter: ChainAdapter): ScanningAdapter {
  if (!canScan(adapter)) throw new CapabilityMissingError(adapter.chain, 'deposit scanning');
  return adapter;
}

/**
 * Crafts a transfer at its allocation with the adapter's crafter of that spend model: the
 * transaction, or INSUFFICIENT_INPUTS as a typed result (utxo chains). A transfer allocated for
 * another spend model than the adapter's is a programming error (TypeError).
 */
export function craftTransfer(adapter: PayingAdapter, transfer: AllocatedTransfer, input: TransferInput): CraftResult {
  if (adapter.spendModel === 'utxo' && transfer.spendModel === 'utxo') return adapter.transfers.craft(transfer.request, input);
  if (adapter.spendModel === 'sequence' && transfer.spendModel === 'sequence') return { ok: true, unsigned: adapter.transfers.craft(transfer.request, input) };
  if (adapter.spendModel === 'expiring' && transfer.spendModel === 'expiring') return { ok: true, unsigned: adapter.transfers.craft(transfer.request, input) };
  throw new TypeError(`${adapter.chain.code} is a ${adapter.spendModel} chain; the transfer was allocated as ${transfer.spendModel}`);
}

/**
 * A paying adapter's node as its spend model's node (the one createTransferNode() of that adapter
 * made): for code that holds the node apart from the adapter. A node without the model's calls is
 * a coded CapabilityMissingError.
 */
export function sequenceNode(adapter: ChainAdapter, node: TransferNode): SequenceTransferNode {
  if (adapter.spendModel !== 'sequence' || typeof (node as Partial<SequenceTransferNode>).nextSequence !== 'function') {
    throw new CapabilityMissingError(adapter.chain, 'withdrawals');
  }
  return node as SequenceTransferNode;
}

export function utxoNode(adapter: ChainAdapter, node: TransferNode): UtxoTransferNode {
  if (adapter.spendModel !== 'utxo' || typeof (node as Partial<UtxoTransferNode>).unspentOutputs !== 'function') {
    throw new CapabilityMissingError(adapter.chain, 'withdrawals');
  }
  return node as UtxoTransferNode;
}

/** What an adapter package exports (as `plugin`). */
export interface AdapterPlugin {
  /** The npm package name. */
  readonly name: string;
  readonly pluginApiVersion: number;
  readonly families: readonly ChainFamily[];
  /**
   * The curve and addressing of each family served. Required for a family that is not built in
   * (core's FAMILY_TRAITS); for a built-in one it must agree with core. The service reads a
   * configured chain's curve and addressing from here.
   */
  readonly traits?: Readonly<Record<string, FamilyTraits>>;
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
