import { ChainTransferError } from './chain-errors';
import type { KeySignature, PublicKey } from './keystore';
import type { SenderCheck, SenderLedger } from './sender-check';

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
  /**
   * Chains whose accounts hold an asset only through a trustline (Stellar credit assets): this
   * transaction opens `from`'s own trustline to `contract` (Stellar changeTrust) instead of paying.
   * `to` is `from`, `memo` null and `amount` 1 (nothing moves). Crafters of chains without
   * trustlines refuse it (refuseTrustline).
   */
  readonly trustline?: true;
  /**
   * Chains with contracts and EIP-7702 (EVM): the transaction calls the contract `to` with
   * `call.data` instead of paying it; `amount` is the native value sent with the call (0 allowed
   * here only), `contract` null. Its authorizations, already signed by the KeyStore with the keys
   * of the accounts that delegate, make it an EIP-7702 (type 4) transaction. Crafters of chains
   * without contract calls refuse it (refuseContractCall).
   */
  readonly call?: ContractCall;
}

/**
 * An EIP-7702 authorization as signed: the authority (the delegating account) delegates its code
 * to `address` on chain `chainId` (never 0: an authorization valid on every chain is never
 * signed) at its account nonce `nonce`. yParity, r, s: the authority's signature of
 * keccak256(0x05 || rlp([chainId, address, nonce])), low-S. Integers as decimal strings, r and s
 * as 0x + 64 hex digits (the request is stored as JSON with the transfer).
 */
export interface SignedAuthorization {
  readonly authority: string;
  readonly chainId: string;
  readonly address: string;
  readonly nonce: string;
  readonly yParity: 0 | 1;
  readonly r: string;
  readonly s: string;
}

/** A contract call (TransferIntent.call): its call data (0x-hex) and the EIP-7702 authorizations it carries (none: an ordinary call). */
export interface ContractCall {
  readonly data: string;
  readonly authorizations: readonly SignedAuthorization[];
}

/** Refuses a contract call on a chain whose crafter makes none (INVALID_REQUEST). */
export function refuseContractCall(request: TransferIntent, chainName: string): void {
  if (request.call !== undefined && request.call !== null) {
    throw new ChainTransferError('INVALID_REQUEST', `${chainName} makes no contract calls: call must be absent`);
  }
}

/** Refuses a request that opens a trustline on a chain that has none (INVALID_REQUEST). */
export function refuseTrustline(request: TransferIntent, chainName: string): void {
  if (request.trustline !== undefined && request.trustline !== null) {
    throw new ChainTransferError('INVALID_REQUEST', `${chainName} has no trustlines: a transfer cannot open one (trustline must be absent)`);
  }
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

/** requireSenderPays, no trustline and no contract call: what every crafter of a chain without either asks of a request. */
export function requirePlainTransfer(request: TransferIntent, chainName: string): void {
  requireSenderPays(request, chainName);
  refuseTrustline(request, chainName);
  refuseContractCall(request, chainName);
}

/**
 * Whether an account can receive a token now (TransferNode.receivable): an expected outcome, typed.
 * - NO_ACCOUNT: the account does not exist on chain (Stellar: never funded);
 * - NO_TRUSTLINE: it exists but holds no trustline to the asset;
 * - NOT_AUTHORIZED: the trustline exists and the issuer has not authorized it (or revoked it).
 */
export type Receivability =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: 'NO_ACCOUNT' | 'NO_TRUSTLINE' | 'NOT_AUTHORIZED'; readonly message: string };

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

/** One event log of a mined transaction (EVM receipts): the emitting contract, its topics and data, 0x-hex. */
export interface TransactionLog {
  readonly address: string;
  readonly topics: readonly string[];
  readonly data: string;
}

/** A transaction as the node sees it now. */
export type TransactionState =
  /** Unknown to the node (never received, dropped, or expired). */
  | { readonly state: 'UNKNOWN' }
  /** Received, not in a block. */
  | { readonly state: 'PENDING' }
  | {
      readonly state: 'MINED'; readonly blockHeight: bigint; readonly blockHash: string; readonly confirmations: number; readonly succeeded: boolean; readonly fee: bigint | null;
      /** Chains with event logs (EVM): the receipt's logs, in order; what a contract call reported (a batch sweep's outcome per entry). Absent where the chain has none. */
      readonly logs?: readonly TransactionLog[];
    }
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
  /**
   * Chains where an account must opt in before it can hold a token (Stellar trustlines): whether
   * `address` can receive `contract` now (null contract: the native coin, which needs the account
   * only). Absent: any valid address can receive any token (EVM, Solana: the sender creates the
   * token account). A node fault is thrown; the answer is typed.
   */
  receivable?(address: string, contract: string | null): Promise<Receivability>;
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
  /**
   * The chain check before signing (sender-check.ts): whether the chain holds transactions from
   * `sender` that the service's database does not know (`ledger`; read the chain first, then the
   * ledger). The service asks before each signing round for the senders it is about to sign for
   * and at start, and stops signing for a sender found AHEAD. A node fault is thrown. Absent: the
   * chain is unchecked (the service signs and says so once in its log).
   */
  senderCheck?(sender: string, ledger: SenderLedger): Promise<SenderCheck>;
  /** senderCheck for many senders in one round trip (one answer or Error per sender, in order). */
  senderChecks?(senders: readonly string[], ledger: SenderLedger): Promise<Array<SenderCheck | Error>>;
  transferInputs?(requests: readonly TransferIntent[]): Promise<Array<TransferInput | Error>>;
  /** balance for many (address, contract) pairs in one round trip (one answer or Error per pair, in order). */
  balances?(pairs: ReadonlyArray<{ readonly address: string; readonly contract: string | null }>): Promise<Array<bigint | Error>>;
  broadcastMany?(txs: readonly SignedTransaction[]): Promise<Array<BroadcastOutcome | Error>>;
  statusMany?(txHashes: readonly string[], inputs?: ReadonlyArray<TransferInput | undefined>): Promise<Array<TransactionState | Error>>;

  /** Chains where a key-derived account can delegate its code (EVM, EIP-7702): reading what accounts hold and whether the chain runs it. */
  readonly delegation?: DelegationNode;
}

/** What an account holds as code now (EVM): none, an EIP-7702 delegation designator (0xef0100 || delegate), or contract code. */
export type AccountCode =
  | { readonly kind: 'EMPTY' }
  | { readonly kind: 'DELEGATED'; readonly delegate: string }
  | { readonly kind: 'CONTRACT' };

/** Whether a chain's node runs EIP-7702 delegated sweeps now, or why not (typed: an expected outcome). */
export type DelegationSupport = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** TransferNode.delegation (EVM): the reads delegated sweeps need beside the transfer pipeline's. */
export interface DelegationNode {
  /** eth_getCode at the latest block for each account, in one round trip (one answer or Error each, in order); delegates EIP-55. */
  codes(accounts: readonly string[]): Promise<Array<AccountCode | Error>>;
  /**
   * Whether the chain accepts EIP-7702 (type 4) transactions now and has the deterministic
   * deployment proxy the service deploys its contracts through; checked against the node, not
   * only the catalogue's flag.
   */
  support(): Promise<DelegationSupport>;
  /** The accounts' current nonces (eth_getTransactionCount at latest: what an authorization signs), one round trip. */
  nonces(accounts: readonly string[]): Promise<Array<bigint | Error>>;
}

/** `sequence` chains' node: where the allocator's floor comes from. */
export interface SequenceTransferNode extends TransferNode {
  /** The account's next sequence on chain: the allocator's floor. */
  nextSequence(address: string): Promise<bigint>;
  /**
   * Optional: the account's next sequence as of the block at `height` (its mined transactions up
   * to and including that block). The recovery after a restore finds with it the block where the
   * transactions the database lost begin. A node without that block's state (pruned) throws.
   */
  sequenceAt?(address: string, height: bigint): Promise<bigint>;
  /** nextSequence for many accounts in one round trip (one answer or Error per address, in order). */
  nextSequences?(addresses: readonly string[]): Promise<Array<bigint | Error>>;
}

/** An unspent output as the node lists it, with its confirmations (0: in the mempool). */
export type ListedOutput = SpendableOutput & { readonly confirmations: number };

/** `utxo` chains' node: the outputs a wallet can spend. */
export interface UtxoTransferNode extends TransferNode {
  unspentOutputs(address: string): Promise<readonly ListedOutput[]>;
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
