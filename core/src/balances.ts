import type { ListedOutput } from './transfers';

/**
 * Balance reads for reconciliation (docs/reconciliation.md): what the node says custody
 * addresses hold, every answer of one pass read at one fixed point of the chain, so the
 * service can compare them with its ledger at that same point.
 *
 * Notes for callers (refinements, the shape unchanged):
 * - `history` may be learnt from the node: a reader that probes it (EVM) reports the
 *   conservative answer until its first head() has resolved. Read it after head().
 * - When `at` is no longer on the node's chain (a reorg under the read), balancesAt throws
 *   ChainRpcError RPC_INCONSISTENT: never a mix of two blocks. Take a new head() and read again.
 * - A malformed query (address or contract not in the chain's canonical form) rejects with a
 *   TypeError before any node call; an empty query list answers [] without a node call.
 * - Node failures are ChainRpcErrors (RPC_UNAVAILABLE: try later; RPC_BAD_RESPONSE: e.g. a
 *   token contract that does not answer balanceOf at that point).
 */

/** One balance wanted: an address's holding of a token (contract null: the chain's native coin). */
export interface BalanceQuery {
  /** Canonical form (as AddressCodec.validate normalises it). */
  readonly address: string;
  /** Token contract / mint / issuer in the form the catalogue uses; null for the native coin. */
  readonly contract: string | null;
}

/** The one point of the chain a pass reads at. */
export interface BalancePoint {
  /** Block height / ledger index / slot. */
  readonly height: bigint;
  /** Its hash where the chain has one the node reports (EVM, BTC, XRP ledger hash); null otherwise. */
  readonly blockHash: string | null;
}

/**
 * What an address's balance is at a point: the amount (base units), or that the account does not
 * exist there (an unfunded Stellar / XRP account, a Solana token account never created), which
 * counts as zero but is reported as such. Expected outcomes are typed, never thrown.
 */
export type BalanceAnswer =
  | { readonly kind: 'AMOUNT'; readonly amount: bigint }
  | { readonly kind: 'NO_ACCOUNT' };

/**
 * How far back a node answers balances: 'archive' at any past height (binary search locates the
 * block where an unexplained change happened); 'recent' only within `recentDepth` heights below
 * the head; 'head' only at the head.
 */
export type BalanceHistory =
  | { readonly kind: 'archive' }
  | { readonly kind: 'recent'; readonly depth: bigint }
  | { readonly kind: 'head' };

/**
 * Reads balances of many addresses at one point, economical with the node: batched (JSON-RPC
 * batches; EVM token balances through a Multicall3 contract where the chain has one).
 */
export interface BalanceReader {
  /** How far back balancesAt may be asked. */
  readonly history: BalanceHistory;
  /**
   * The point a pass reads at now: the node's latest block (EVM, BTC), validated ledger (XRP),
   * latest ledger (XLM), finalized slot (SOL), last irreversible block (EOS).
   */
  head(): Promise<BalancePoint>;
  /**
   * One answer per query, in order, all at `at`. A chain whose node can only answer at its head
   * ('head' history) reads at the head and returns the point it actually read at, which may be
   * above `at`; every other reader answers at exactly `at`.
   */
  balancesAt(queries: readonly BalanceQuery[], at: BalancePoint): Promise<{ readonly at: BalancePoint; readonly answers: readonly BalanceAnswer[] }>;
  /**
   * UTXO chains: the unspent outputs of each address (one list per address, in order), at the
   * node's head, so the service can compare the output set itself, not only its sum.
   */
  unspentOutputs?(addresses: readonly string[]): Promise<{ readonly at: BalancePoint; readonly outputs: ReadonlyArray<readonly ListedOutput[]> }>;
  /**
   * Chains where a transaction moves native coin that no transfer record holds (Solana: the rent of
   * a token account the transaction creates, paid by its fee payer, or closes, refunded to it): the
   * native balance change of each (transaction, address) as the node reports it at its final
   * commitment, in base units, fee included; 0n for an address the transaction does not touch;
   * null while the node does not hold the transaction as final. One answer per item, in order.
   */
  nativeChanges?(items: ReadonlyArray<{ readonly txHash: string; readonly address: string }>): Promise<ReadonlyArray<bigint | null>>;
}
