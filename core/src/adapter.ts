import type { AddressingKind, ChainDefinition, ChainFamily, Curve, FamilyTraits } from './chain';
import { ChainTransferError } from './chain-errors';
import { WcsError } from './errors';
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

// ---- Deposit scanning ----

/** Where a scanner reads the chain: the operator's RPC endpoint for one chain (WCS_RPC_<CODE>). */
export interface ChainEndpoint {
  /** HTTP(S) JSON-RPC or REST base URL (never logged with its credentials). */
  readonly url: string;
  /** Extra request headers (API keys of RPC providers). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Per-request timeout, ms. */
  readonly timeoutMs?: number;
}

/** A block as the reorg tracker needs it: the engine keeps recent ones with parent links. */
export interface BlockRef {
  readonly height: bigint;
  readonly hash: string;
  readonly parentHash: string;
}

/** One transfer into a watched address, as the chain reports it. */
export interface ObservedTransfer {
  readonly txHash: string;
  /**
   * Position of the transfer in the transaction: output index (BTC), log index (ERC-20 logs;
   * native EVM value transfers use -1), operation / action index (memo chains), instruction
   * index (SOL). (chain, txHash, position) identifies a deposit: a re-scan never duplicates one.
   */
  readonly position: number;
  readonly fromAddress: string | null;
  /** Canonical form (as AddressCodec.validate normalises it). */
  readonly toAddress: string;
  readonly memo: string | null;
  /** Token contract / mint / issuer in the form the catalogue uses; null for the native coin. */
  readonly contract: string | null;
  /** Base units of the token. */
  readonly amount: bigint;
  readonly blockHeight: bigint;
  readonly blockHash: string;
  /** False when the transaction failed on chain (its transfers are recorded as FAILED, never credited). */
  readonly succeeded: boolean;
}

/** Where a transaction stands now (used for deposits whose block left the chain). */
export type TransactionLookup =
  | { readonly state: 'MINED'; readonly blockHeight: bigint; readonly blockHash: string; readonly succeeded: boolean }
  /** Known to the node but not in a block (mempool). */
  | { readonly state: 'PENDING' }
  /** The node does not know it. */
  | { readonly state: 'UNKNOWN' };

/**
 * Block chains (EVM, BTC): the engine walks heights from its cursor, keeps recent block hashes
 * with parent links, and on a mismatch rolls back to the fork point and re-scans.
 */
export interface BlockScanner {
  readonly kind: 'blocks';
  /** Height of the chain's current tip. */
  tipHeight(): Promise<bigint>;
  /** The block at a height on the node's current best chain, or null above the tip. */
  blockAt(height: bigint): Promise<BlockRef | null>;
  /**
   * Every block in [from, to] (ascending, parent links intact) and the transfers in them to the
   * watched addresses (canonical forms), and from `options.senders`. A range that straddles a reorg may come back with broken
   * parent links: the engine checks them and asks again. The set is treated as immutable: a
   * scanner may keep a derived form of it (e.g. lower-cased) for as long as it is handed the same
   * set object, so a caller whose watched addresses change passes a new set.
   */
  scanRange(from: bigint, to: bigint, watched: ReadonlySet<string>, options?: ScanRangeOptions): Promise<{ readonly blocks: readonly BlockRef[]; readonly transfers: readonly ObservedTransfer[] }>;
  lookupTransaction(txHash: string): Promise<TransactionLookup>;
  /**
   * What kind of account each address is (the counterparty's `addressNature` of a chain event),
   * one answer per address, in order: `CONTRACT` when code or a script controls it (EVM: code at
   * the address; Bitcoin: a script-hash output), else `EOA`. Absent: every address is `EOA`.
   */
  addressNatures?(addresses: readonly string[]): Promise<readonly AddressNature[]>;
}

/** A counterparty as a chain event reports it: a key-controlled account, or code / a script. */
export type AddressNature = 'EOA' | 'CONTRACT';

/** What a block scan looks for besides transfers into the watched addresses. */
export interface ScanRangeOptions {
  /**
   * Addresses whose outgoing transfers are wanted too (canonical forms): every transfer whose
   * `fromAddress` is one of them is returned, whatever its destination, with `fromAddress` set
   * to that address. Same rules as `watched`: treated as immutable while the same set object is
   * handed in. UTXO chains: a transaction spending an output of a sender gives one transfer per
   * output that does not go back to that sender (its change), `position` the output index.
   */
  readonly senders?: ReadonlySet<string>;
}

/**
 * Account-history chains (SOL, XRP, XLM, EOS): the chain is read per watched address through its
 * history API, final data only (finalized / validated ledgers / irreversible blocks), so nothing
 * read is ever taken back. The cursor is opaque to the engine and stored per address.
 */
export interface HistoryScanner {
  readonly kind: 'history';
  /** Height of the last final block / ledger / slot (for confirmations and reporting). */
  tipHeight(): Promise<bigint>;
  /**
   * Transfers into `address` after `cursor` (null: from the address's first transaction), oldest
   * first, at most about `limit` transactions' worth, and the cursor to continue from (the same
   * cursor when there is nothing new).
   */
  transfersSince(address: string, cursor: string | null, limit: number): Promise<{ readonly transfers: readonly ObservedTransfer[]; readonly cursor: string | null }>;
}

export type DepositScanner = BlockScanner | HistoryScanner;

// ---------------------------------------------------------------------------------------------
// Withdrawals: the adapter crafts payloads, only the KeyStore signs, the adapter combines.

/** A JSON value (bigints are written as decimal strings). */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/**
 * How a chain orders one account's transactions, i.e. what the service allocates before crafting:
 * - `sequence`: EVM nonce, XRP Sequence, Stellar sequence number: one per transaction, allocated
 *   by the service in order with no gaps; a stuck transaction is replaced at the same sequence.
 * - `utxo`: Bitcoin: the service chooses unspent outputs of the hot wallet, each spent by one
 *   transaction only, and takes the change back.
 * - `expiring`: Solana (recent blockhash), EOS (reference block and expiration): nothing is
 *   allocated; a transaction not included before it expires can never be, and is re-crafted.
 */
export type SpendModel = 'sequence' | 'utxo' | 'expiring';

/** A key that signs (part of) a transfer: its address on the chain and its public key. */
export interface TransferKey {
  readonly address: string;
  readonly publicKey: PublicKey;
}

/** An unspent output (utxo chains): of the hot wallet, or of a deposit address being collected. */
export interface SpendableOutput {
  readonly txHash: string;
  readonly vout: number;
  /** Base units. */
  readonly amount: bigint;
  /**
   * The key that spends this output when it is not the request's `from` (a consolidation of
   * many deposit addresses into one transaction). Absent: `from`'s key.
   */
  readonly owner?: TransferKey;
}

/**
 * One outgoing transfer (a payout, a sweep, a gas top-up, a cold transfer) from a key the KeyStore
 * holds, before the spend model's part: what every chain's request says. The crafter of each spend
 * model takes it with that model's part (SequenceTransferRequest, UtxoTransferRequest; an
 * `expiring` chain takes it as it is).
 */
export interface TransferIntent {
  /** The sending account's address and public key (a hot, fee or deposit key). */
  readonly from: string;
  readonly fromPublicKey: PublicKey;
  /** Destination, in the chain's canonical form (AddressCodec.validate). */
  readonly to: string;
  /** Destination tag / memo (memo chains), canonical (MemoCodec); null for none. */
  readonly memo: string | null;
  /** Token contract / mint / issuer; null for the native coin. */
  readonly contract: string | null;
  /** Base units, > 0. */
  readonly amount: bigint;
  /**
   * Chains where another account may pay the fee (Solana): that account, whose key signs too. A
   * sweep out of a deposit address that holds no native coin for fees. Crafters of chains without
   * a separate fee payer refuse a request that has one.
   */
  readonly feePayer?: TransferKey;
  /**
   * Solana token transfers: close `from`'s token account after the transfer (it must be emptied
   * by it: amount is its whole balance), its rent going to the fee payer (else `from`).
   */
  readonly closeTokenAccount?: boolean;
}

/**
 * For the crafters of chains where the sender pays its own fee and there are no token accounts to
 * close (all but Solana): refuses a request naming a fee payer or asking to close a token account
 * (INVALID_REQUEST), rather than crafting a transaction that ignores it.
 */
export function requireSenderPays(request: TransferIntent, chainName: string): void {
  if (request.feePayer !== undefined && request.feePayer !== null) {
    throw new ChainTransferError('INVALID_REQUEST', `${chainName} has no separate fee payer: the sender pays the fee (feePayer must be absent)`);
  }
  if (request.closeTokenAccount !== undefined && request.closeTokenAccount !== false) {
    throw new ChainTransferError('INVALID_REQUEST', `${chainName} has no token accounts to close (closeTokenAccount must be absent)`);
  }
}

/** `sequence` chains: the transfer at the sequence / nonce the service allocated to it. */
export interface SequenceTransferRequest extends TransferIntent {
  readonly sequence: bigint;
}

/** `utxo` chains, a payment: the inputs chosen for it, the change going back to `changeAddress`. */
export interface UtxoPaymentRequest extends TransferIntent {
  readonly inputs: readonly SpendableOutput[];
  readonly changeAddress: string;
  readonly subtractFee?: false;
}

/**
 * `utxo` chains, a consolidation: the fee comes out of `amount`, which must equal the sum of the
 * inputs; no change output. The payment is `amount` less the fee; the crafter refuses when that
 * is dust.
 */
export interface UtxoConsolidationRequest extends TransferIntent {
  readonly inputs: readonly SpendableOutput[];
  readonly subtractFee: true;
  readonly changeAddress?: undefined;
}

export type UtxoTransferRequest = UtxoPaymentRequest | UtxoConsolidationRequest;

/** `expiring` chains: nothing is allocated, the intent is the request. */
export type ExpiringTransferRequest = TransferIntent;

/**
 * A transfer at its spend model's allocation, as the service hands it to craftTransfer(): the
 * model says which request it is.
 */
export type AllocatedTransfer =
  | { readonly spendModel: 'sequence'; readonly request: SequenceTransferRequest }
  | { readonly spendModel: 'utxo'; readonly request: UtxoTransferRequest }
  | { readonly spendModel: 'expiring'; readonly request: ExpiringTransferRequest };

/** Any spend model's request (what the service stores and reads back). */
export type TransferRequest = AllocatedTransfer['request'];

/**
 * What the node says a transfer should be built on, read just before crafting: fee rates, a
 * recent blockhash or reference block, the account's next sequence on chain (the allocator's
 * floor), token details. Adapter-defined and JSON, so it is stored with the order: re-crafting
 * from the same request and input gives the same transaction (idempotent re-signing after a crash).
 */
export type TransferInput = { readonly [key: string]: JsonValue };

/** The payloads an adapter asks the KeyStore to sign, and what it needs to finish the transaction. */
export interface UnsignedTransfer {
  /** secp256k1: 32-byte digests; ed25519: the messages. One signature each, in order. */
  readonly payloads: readonly Uint8Array[];
  /** The most this transaction can cost in fees, base units of the native coin. */
  readonly maxFee: bigint;
  /** The transaction's hash / id once signed, when it does not depend on the signature (else null). */
  readonly txHash: string | null;
  /** Adapter-private, JSON: what combine() needs. */
  readonly state: JsonValue;
  /**
   * The address whose key signs each payload, in order (`from`, a fee payer's, an input owner's).
   * Absent: every payload is signed by `from`'s key.
   */
  readonly signers?: readonly string[];
}

export interface SignedTransaction {
  readonly txHash: string;
  /** The bytes to broadcast. */
  readonly raw: Uint8Array;
}

/** What an adapter's input selection found: the outputs to spend, or how much is missing. */
export type InputSelectionResult =
  | { readonly ok: true; readonly inputs: readonly SpendableOutput[] }
  | { readonly ok: false; readonly shortfall: bigint };

/**
 * What crafting a `utxo` transfer gave: the transaction to sign, or the expected outcome that the
 * inputs fall short of amount and fee (the service then waits for more confirmed outputs). Any
 * other refusal (a dust amount, an invalid destination) is thrown: it ends the order.
 */
export type CraftResult =
  | { readonly ok: true; readonly unsigned: UnsignedTransfer }
  | { readonly ok: false; readonly reason: 'INSUFFICIENT_INPUTS'; readonly shortfall: bigint };

/** What every crafter has: offline (no I/O), deterministic for a (request, input). */
interface CrafterBase {
  combine(unsigned: UnsignedTransfer, signatures: readonly KeySignature[]): SignedTransaction;
}

/** `sequence` chains' crafting: EVM, XRP, Stellar, TON. */
export interface SequenceCrafter extends CrafterBase {
  /** Throws when the request cannot be made (a refusal ends the order). */
  craft(request: SequenceTransferRequest, input: TransferInput): UnsignedTransfer;
  /**
   * Chains with a fee market: the input for a replacement of a stuck transaction at the same
   * sequence, its fee raised by at least `percent` and capped at `cap` per unit (base units, the
   * adapter's fee unit); null when the cap does not allow a valid replacement.
   */
  bumpFee?(input: TransferInput, percent: number, cap: bigint): TransferInput | null;
  /**
   * Chains whose charged fee can be below maxFee (EVM under EIP-1559): the same input made so
   * that the fee charged is exactly `maxFee` of craft(), at most `maxFeePerUnit` per unit
   * (base units, the adapter's fee unit; null: the input's own). Used where nothing may be left
   * behind: a sweep of a whole native balance, a token sweep paid by a measured top-up. Absent:
   * the chain charges maxFee exactly (or the adapter's sweeps account for it themselves).
   */
  exactFee?(input: TransferInput, maxFeePerUnit: bigint | null): TransferInput;
  /**
   * craft(request, input).maxFee without crafting, for chains where it does not depend on the
   * amount (EVM: gasLimit x the fee per gas): what a whole balance leaving pays, taken off it
   * before the transfer is crafted. Absent: the caller crafts once to learn it.
   */
  maxFeeOf?(request: TransferIntent, input: TransferInput): bigint;
}

/** `utxo` chains' crafting: Bitcoin. */
export interface UtxoCrafter extends CrafterBase {
  /** The transaction, or INSUFFICIENT_INPUTS as a typed result; throws on any other refusal. */
  craft(request: UtxoTransferRequest, input: TransferInput): CraftResult;
  /**
   * The adapter's own input selection for a payment at this input's fees, from `available`
   * (each output spent at most once): the inputs to give craft(), or the shortfall when the
   * outputs cannot cover amount and fee. Throws when the request itself is invalid. Absent: the
   * service tries the outputs largest first until craft() accepts them.
   */
  selectInputs?(available: readonly SpendableOutput[], request: Pick<UtxoPaymentRequest, 'to' | 'amount' | 'changeAddress'>, input: TransferInput): InputSelectionResult;
}

/** `expiring` chains' crafting: Solana, EOS. */
export interface ExpiringCrafter extends CrafterBase {
  /** Throws when the request cannot be made (a refusal ends the order). */
  craft(request: ExpiringTransferRequest, input: TransferInput): UnsignedTransfer;
}

/** Any spend model's crafter. */
export type TransferCrafter = SequenceCrafter | UtxoCrafter | ExpiringCrafter;

/** What the node answered to a broadcast. */
export type BroadcastOutcome =
  | { readonly outcome: 'ACCEPTED'; readonly txHash: string }
  /** The node already has this very transaction (a re-broadcast after a timeout): not an error. */
  | { readonly outcome: 'ALREADY_KNOWN'; readonly txHash: string }
  /** Refused for good (bad signature, spent input, nonce too low, insufficient funds): the reason is the node's. */
  | { readonly outcome: 'REJECTED'; readonly reason: string };

/** A transaction as the node sees it now. */
export type TransactionState =
  /** Unknown to the node (never received, dropped, or expired). */
  | { readonly state: 'UNKNOWN' }
  /** Received, not in a block. */
  | { readonly state: 'PENDING' }
  | { readonly state: 'MINED'; readonly blockHeight: bigint; readonly blockHash: string; readonly confirmations: number; readonly succeeded: boolean; readonly fee: bigint | null }
  /**
   * `expiring` chains: in no block, and it never can be: the node's irreversible view is past the
   * transaction's validity (Solana: its blockhash's last valid block height; EOS: its expiration).
   * Only a node that can tell this for certain answers it; otherwise UNKNOWN. The service may
   * then craft the transfer anew.
   */
  | { readonly state: 'EXPIRED' };

/** Withdrawal I/O against a chain's node; network faults are thrown (coded errors), node answers returned. */
export interface TransferNode {
  /** What craft() needs for this request now (fees, recent block, on-chain sequence, ...). */
  transferInput(request: TransferIntent): Promise<TransferInput>;
  /** The account's spendable balance of a token (null contract: native), base units. */
  balance(address: string, contract: string | null): Promise<bigint>;
  /**
   * What a sweep of this account may move when another account pays the fee (a deposit address
   * swept with a fee payer), base units. Solana native: every lamport (the account is removed at
   * 0, which the runtime allows for an account that is not the fee payer), where `balance`
   * withholds the rent-exempt minimum a fee payer must keep. Absent: `balance` is that amount.
   */
  sweepableBalance?(address: string, contract: string | null): Promise<bigint>;
  broadcast(tx: SignedTransaction): Promise<BroadcastOutcome>;
  /**
   * The height of the node's newest block (chains with blocks): the service's tracker counts a
   * mined transaction's confirmations from it and reads the transaction again only once it can
   * be final (which is also when a reorg under it is found). Absent: every open transaction is
   * read each step.
   */
  tipHeight?(): Promise<bigint>;
  /**
   * `input`: the input the transaction was crafted on, when the caller has it (the service always
   * passes it): `expiring` chains read its validity (last valid block height, expiration) to tell
   * EXPIRED from UNKNOWN; other chains ignore it.
   */
  status(txHash: string, input?: TransferInput): Promise<TransactionState>;
  /**
   * Optional, set-based forms of the three above, for nodes that take many requests in one
   * round trip (JSON-RPC batches). Each answers one entry per item, in order: what the single
   * call returns, or the Error it would throw, so one item's fault never hides the others'.
   * `broadcastMany` may hand the transactions to the node in any order: only chains whose nodes
   * hold a later sequence until the earlier one arrives (EVM pools) implement it. The service
   * falls back to the single calls (broadcasts one at a time, in sequence order) without them.
   */
  /**
   * 'registered' hot addresses: whether `publicKey` alone can sign transfers of `address` (its
   * active permission, threshold met by this key). The service pays out of a registered account
   * only after this answered true.
   */
  controls?(address: string, publicKey: PublicKey): Promise<boolean>;
  transferInputs?(requests: readonly TransferIntent[]): Promise<Array<TransferInput | Error>>;
  /** balance for many (address, contract) pairs in one round trip (one answer or Error per pair, in order). */
  balances?(pairs: ReadonlyArray<{ readonly address: string; readonly contract: string | null }>): Promise<Array<bigint | Error>>;
  broadcastMany?(txs: readonly SignedTransaction[]): Promise<Array<BroadcastOutcome | Error>>;
  statusMany?(txHashes: readonly string[], inputs?: ReadonlyArray<TransferInput | undefined>): Promise<Array<TransactionState | Error>>;
}

/** `sequence` chains' node: where the allocator's floor comes from. */
export interface SequenceTransferNode extends TransferNode {
  /** The account's next sequence on chain: the allocator's floor. */
  nextSequence(address: string): Promise<bigint>;
  /** nextSequence for many accounts in one round trip (one answer or Error per address, in order). */
  nextSequences?(addresses: readonly string[]): Promise<Array<bigint | Error>>;
}

/** An unspent output as the node lists it, with its confirmations (0: in the mempool). */
export type ListedOutput = SpendableOutput & { readonly confirmations: number };

/** `utxo` chains' node: the outputs a wallet can spend. */
export interface UtxoTransferNode extends TransferNode {
  unspentOutputs(address: string): Promise<readonly ListedOutput[]>;
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

/** The same allocated transfer for another amount. */
export function withAmount(transfer: AllocatedTransfer, amount: bigint): AllocatedTransfer {
  switch (transfer.spendModel) {
    case 'sequence':
      return { spendModel: 'sequence', request: { ...transfer.request, amount } };
    case 'utxo':
      return { spendModel: 'utxo', request: { ...transfer.request, amount } };
    case 'expiring':
      return { spendModel: 'expiring', request: { ...transfer.request, amount } };
  }
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

/**
 * The one answer of a set-based TransferNode call made for a single item (transferInputs,
 * broadcastMany, statusMany): its value, or its Error thrown. How a node's single call is its
 * set-based call for one item.
 */
export async function singleAnswer<T>(answers: Promise<ReadonlyArray<T | Error>>): Promise<T> {
  const all = await answers;
  if (all.length !== 1) throw new Error(`a set-based call for one item answered ${all.length} items`);
  const a = all[0]!;
  if (a instanceof Error) throw a;
  return a;
}

/** What one chain's adapter adds to the parts defineAdapter fills in. */
export type AdapterParts = Omit<ChainAdapterBase, 'chain' | 'curve' | 'keySpec'> & Spending & {
  /** The memo codec on a memo chain, null on an HD chain (create() refuses a mismatch). */
  readonly memo: MemoCodec | null;
  /** The key layout: a function, or one KeySpec per purpose. */
  readonly keySpec: ChainAdapter['keySpec'] | Readonly<Record<KeyPurpose, KeySpec>>;
};

/** An adapter package, as defineAdapter takes it. */
export interface AdapterDefinition {
  /** The npm package name. */
  readonly name: string;
  /** The family served (one per package here), with its curve and addressing. */
  readonly family: ChainFamily;
  readonly curve: Curve;
  readonly addressing: AddressingKind;
  /**
   * The parts for one chain of the family (already checked for family, curve and addressing);
   * throws AdapterConfigError on bad chain options.
   */
  build(chain: ChainDefinition): AdapterParts;
}

/**
 * The AdapterPlugin of an adapter package (its `plugin` export): create() refuses chains of
 * another family, curve or addressing with AdapterConfigError, builds the chain's parts, turns a
 * keySpec record into the function (an unknown purpose is a TypeError) and freezes the adapter.
 */
export function defineAdapter(def: AdapterDefinition): AdapterPlugin {
  const create = (chain: ChainDefinition): ChainAdapter => {
    if (chain.family !== def.family || chain.curve !== def.curve || chain.addressing !== def.addressing) {
      throw new AdapterConfigError(
        `${def.name} serves family ${def.family} (${def.curve}, ${def.addressing}); chain ${chain.code} is ${chain.family} (${chain.curve}, ${chain.addressing})`,
      );
    }
    const parts = def.build(chain);
    const specs = parts.keySpec;
    const keySpec = typeof specs === 'function' ? specs : (purpose: KeyPurpose): KeySpec => {
      const spec = Object.prototype.hasOwnProperty.call(specs, purpose) ? specs[purpose] : undefined;
      if (!spec) throw new TypeError(`unknown key purpose ${String(purpose)}`);
      return spec;
    };
    if ((parts.transfers === undefined) !== (parts.createTransferNode === undefined)) {
      throw new AdapterConfigError(`${def.name}: a transfer crafter and a transfer node come together`);
    }
    if (!['sequence', 'utxo', 'expiring'].includes(parts.spendModel)) throw new AdapterConfigError(`${def.name}: unknown spend model ${String(parts.spendModel)}`);
    // `parts` keeps its spend model's branch: only keySpec, chain, curve and the addressing are set here
    const common = { ...parts, chain, curve: def.curve, keySpec } as ChainAdapterBase & Spending & { memo: MemoCodec | null };
    if (def.addressing === 'memo') {
      const memo = common.memo;
      if (memo === null) throw new AdapterConfigError(`${def.name}: a memo chain's adapter needs a memo codec`);
      return Object.freeze<MemoChainAdapter>({ ...common, addressing: 'memo', memo });
    }
    if (common.memo !== null) throw new AdapterConfigError(`${def.name}: an HD chain's adapter has no memo codec`);
    return Object.freeze<HdChainAdapter>({ ...common, addressing: 'hd', memo: null });
  };
  return Object.freeze({
    name: def.name,
    pluginApiVersion: PLUGIN_API_VERSION,
    families: Object.freeze([def.family]),
    traits: Object.freeze({ [def.family]: Object.freeze({ curve: def.curve, addressing: def.addressing }) }),
    create,
  });
}
