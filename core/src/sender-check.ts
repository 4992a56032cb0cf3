// ---------------------------------------------------------------------------------------------
// The chain check before signing (docs/transfers.md, "The chain check before signing"): does the
// chain hold transactions from a sender that the service's database does not know? After a
// database restore the database is behind the chain; signing then could pay an order a second
// time, or reuse a sequence. A TransferNode answers for its chain (TransferNode.senderCheck).

/** An output of a utxo chain: its transaction and index. */
export interface Outpoint {
  readonly txHash: string;
  readonly vout: number;
}

/** The key of an outpoint in the sets a SenderLedger answers: `txHash:vout`. */
export function outpointKey(o: Outpoint): string {
  return `${o.txHash}:${o.vout}`;
}

/**
 * What the service's database knows of the transactions it made, as a sender check reads it.
 * Each method reads the database when it is called. A check reads the chain first and the
 * database after: the service stores a transaction (its signed bytes, its sequence, the outputs it
 * spends) before it sends it, so whatever of the service's own the node shows is in the database
 * by then, and a transaction the node shows that the database still does not know is someone
 * else's (or one a restore lost).
 */
export interface SenderLedger {
  /**
   * `sequence` chains: the next sequence the service would give each sender, one past the highest
   * it has signed (its allocator's next); null for a sender it has signed nothing from.
   */
  nextSequences(senders: readonly string[]): Promise<ReadonlyMap<string, bigint | null>>;
  /** `utxo` chains: the sender's outputs the database believes unspent (its hot wallet's outputs no transaction of the service spends, and the fixed inputs of its unsigned transfers: a deposit address's planned consolidation). */
  unspentOutputs(sender: string): Promise<readonly Outpoint[]>;
  /** `utxo` chains: which of these outputs a transaction the service signed spends (outpointKey). */
  spentByService(outputs: readonly Outpoint[]): Promise<ReadonlySet<string>>;
  /** Which of these transaction hashes the service made (any transfer of the chain, any of its transactions), as given. */
  knownTransactions(txHashes: readonly string[]): Promise<ReadonlySet<string>>;
}

/** What the chain shows that the database does not know. */
export type SenderEvidence =
  /** `sequence` chains: the chain's next sequence (mined; and with the node's pool, when it has one) is past the database's. */
  | {
    readonly kind: 'SEQUENCE';
    /** The database's next (null: it signed nothing from the sender). */
    readonly databaseNext: bigint | null;
    /** The chain's next sequence in its latest (or validated) state. */
    readonly chainNext: bigint;
    /** With the transactions waiting in the node's pool (null: the node has no pool view). */
    readonly pendingNext: bigint | null;
  }
  /** `utxo` chains: outputs the database believes unspent are spent on chain (or in the node's mempool). */
  | { readonly kind: 'SPENT_OUTPUTS'; readonly outputs: readonly Outpoint[] }
  /** History chains: transactions the sender signed that the database does not have. */
  | { readonly kind: 'UNKNOWN_TRANSACTIONS'; readonly transactions: readonly string[] };

/**
 * A sender check's answer, typed (a node fault is thrown, as for every TransferNode call):
 * - AGREES: the chain holds nothing from the sender that the database does not know;
 * - AHEAD: it does (evidence, and a sentence for the operator);
 * - UNCHECKED: the node cannot tell for this sender (the reason says why); the service signs as
 *   without a check and says so in its log.
 */
export type SenderCheck =
  | { readonly kind: 'AGREES' }
  | { readonly kind: 'AHEAD'; readonly evidence: SenderEvidence; readonly summary: string }
  | { readonly kind: 'UNCHECKED'; readonly reason: string };

export const AGREES: SenderCheck = Object.freeze({ kind: 'AGREES' });

/**
 * `sequence` chains' rule: AHEAD when the chain's next sequence (latest, or with the pool) is past
 * the database's. `fresh` is the next sequence of an account that never sent (EVM nonce 0, a TON
 * wallet's seqno 0), used when the database signed nothing from the sender; null where a fresh
 * account's sequence is not known in advance (XRP, Stellar: from the ledger it was created in):
 * the caller then decides from the account's history, and this answers null.
 */
export function sequenceVerdict(sender: string, databaseNext: bigint | null, chainNext: bigint, pendingNext: bigint | null, fresh: bigint | null): SenderCheck | null {
  const known = databaseNext ?? fresh;
  if (known === null) return null;
  const ahead = chainNext > known || (pendingNext !== null && pendingNext > known);
  if (!ahead) return AGREES;
  const chain = pendingNext !== null && pendingNext !== chainNext ? `${chainNext} (${pendingNext} with the node's pool)` : `${chainNext}`;
  const db = databaseNext === null ? 'the database has signed nothing from it' : `the database's next is ${databaseNext}`;
  return {
    kind: 'AHEAD',
    evidence: { kind: 'SEQUENCE', databaseNext, chainNext, pendingNext },
    summary: `${sender}'s next sequence on chain is ${chain}; ${db}`,
  };
}

/** The evidence as JSON (bigints as decimal strings), for an alert's details and the hold's record. */
export function evidenceJson(e: SenderEvidence): { readonly [key: string]: string | null | ReadonlyArray<string | { txHash: string; vout: number }> } {
  switch (e.kind) {
    case 'SEQUENCE':
      return { kind: e.kind, databaseNext: e.databaseNext?.toString() ?? null, chainNext: e.chainNext.toString(), pendingNext: e.pendingNext?.toString() ?? null };
    case 'SPENT_OUTPUTS':
      return { kind: e.kind, outputs: e.outputs.map((o) => ({ txHash: o.txHash, vout: o.vout })) };
    case 'UNKNOWN_TRANSACTIONS':
      return { kind: e.kind, transactions: [...e.transactions] };
  }
}

/**
 * History rule of an account chain whose database knows the account signed nothing yet (XRP,
 * Stellar): of the transactions the account sent (hashes as the database stores them), those the
 * database does not know make it AHEAD; null when it knows every one.
 */
export async function unknownSentVerdict(account: string, sent: readonly string[], ledger: SenderLedger): Promise<SenderCheck | null> {
  const known = await ledger.knownTransactions(sent);
  const unknown = sent.filter((h) => !known.has(h));
  if (unknown.length === 0) return null;
  return {
    kind: 'AHEAD',
    evidence: { kind: 'UNKNOWN_TRANSACTIONS', transactions: unknown },
    summary: `${account} sent ${unknown.length} transaction${unknown.length === 1 ? '' : 's'} the database does not know (${unknown.slice(0, 3).join(', ')}${unknown.length > 3 ? ', …' : ''}); the database has signed nothing from it`,
  };
}
