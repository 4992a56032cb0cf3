/**
 * Deposit scanning: what an adapter's scanner reads from its node (block chains walked by height,
 * account-history chains read per address) and what it reports.
 */

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
  /**
   * EVM: how native coin moved inside transactions (internal transfers) is read, as detected
   * from the node once (the first call probes it; a node that cannot be reached throws): a trace
   * API, 'off' when the chain's settings turned traces off, 'unavailable' when the node serves
   * none (internal transfers are then not seen by the scan). Absent: the scanner reads no traces.
   */
  traceMode?(): Promise<'debug_traceBlockByNumber' | 'trace_block' | 'off' | 'unavailable'>;
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
   * cursor when there is nothing new). With `options.outgoing`, the transfers out of `address`
   * too (`fromAddress` the address, whatever the destination). A transfer from the address to
   * itself is never reported. Each (txHash, position) comes at most once per answer.
   */
  transfersSince(address: string, cursor: string | null, limit: number, options?: HistoryReadOptions): Promise<{ readonly transfers: readonly ObservedTransfer[]; readonly cursor: string | null }>;
  /**
   * A cursor at the chain's current final head for `address`: reading from it returns only what
   * happens after this call (an address the service does not own is watched from "now", never
   * from its first transaction). Present on scanners that serve chain events and custody
   * outflows (they also honour `options.outgoing`); absent: the chain has neither.
   */
  headCursor?(address: string): Promise<string | null>;
  /** As BlockScanner.addressNatures: the counterparty's nature per address, in order (absent: every address is `EOA`). */
  addressNatures?(addresses: readonly string[]): Promise<readonly AddressNature[]>;
}

/** What a history read looks for besides transfers into the address. */
export interface HistoryReadOptions {
  /** Transfers out of the address too (chain events OUT, custody outflows). */
  readonly outgoing?: boolean;
}

/** Whether a scanner can serve chain events and custody outflows: every block scanner, and a history scanner with head cursors. */
export function servesChainEvents(scanner: DepositScanner): boolean {
  return scanner.kind === 'blocks' || typeof scanner.headCursor === 'function';
}

export type DepositScanner = BlockScanner | HistoryScanner;
