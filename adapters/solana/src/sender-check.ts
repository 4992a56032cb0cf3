import { AGREES, ChainRpcError, LruCache, type SenderCheck, type SenderLedger } from '@wcs/core';

/** Signatures of a sender read per check (one getSignaturesForAddress page). */
export const SIGNATURE_PAGE = 100;
/** Transactions found not signed by the sender (received ones), remembered so each is read once. */
const FOREIGN_CACHE = 10_000;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A read through the node's client: the result of each call, in order, or its error thrown. */
export type SolanaReads = (calls: ReadonlyArray<{ readonly method: string; readonly params: unknown[] }>) => Promise<unknown[]>;

/**
 * The Solana sender check (TransferNode.senderCheck; docs/transfers.md): Solana has no sequence,
 * so the sender's recent history is compared with the transactions the database has.
 *
 * getSignaturesForAddress (confirmed, newest first, SIGNATURE_PAGE) lists every transaction that
 * names the address, sent or received. The database's known ones are taken out
 * (`ledger.knownTransactions`, read after the node answered); each remaining one is read
 * (getTransaction, jsonParsed, one batch) to tell whether the sender signed it (a payment
 * received, signed by others, is not the sender's; such verdicts are remembered). A transaction
 * the sender signed that the database does not know: AHEAD. None: AGREES, unless the page is full
 * and holds nothing the database knows (where its knowledge ends is older than the page):
 * UNCHECKED. A transaction the node lists but cannot return yet is left for the next check.
 */
export class SolanaSenderCheck {
  private readonly foreign = new LruCache<string, true>(FOREIGN_CACHE);

  constructor(private readonly read: SolanaReads, private readonly label: string) {}

  async check(sender: string, ledger: SenderLedger): Promise<SenderCheck> {
    const [page] = await this.read([{ method: 'getSignaturesForAddress', params: [sender, { limit: SIGNATURE_PAGE, commitment: 'confirmed' }] }]);
    if (!Array.isArray(page)) throw this.bad('getSignaturesForAddress', 'no list of signatures');
    const signatures = page.map((e) => {
      if (!isObject(e) || typeof e.signature !== 'string') throw this.bad('getSignaturesForAddress', 'an entry without a signature');
      return e.signature;
    });
    if (signatures.length === 0) return AGREES;
    const known = await ledger.knownTransactions(signatures);
    const open = signatures.filter((s) => !known.has(s) && this.foreign.get(s) === undefined);
    const sent: string[] = [];
    if (open.length > 0) {
      const txs = await this.read(open.map((s) => ({ method: 'getTransaction', params: [s, { encoding: 'jsonParsed', commitment: 'confirmed', maxSupportedTransactionVersion: 0 }] })));
      for (const [i, tx] of txs.entries()) {
        if (tx === null || tx === undefined) continue; // listed, not returned yet: the next check reads it
        const signers = this.signersOf(tx, open[i]!);
        if (signers.has(sender)) sent.push(open[i]!);
        else this.foreign.set(open[i]!, true);
      }
    }
    if (sent.length > 0) {
      return {
        kind: 'AHEAD',
        evidence: { kind: 'UNKNOWN_TRANSACTIONS', transactions: sent },
        summary: `${sender} signed ${sent.length} transaction${sent.length === 1 ? '' : 's'} on chain that the database does not know (${sent.slice(0, 3).join(', ')}${sent.length > 3 ? ', …' : ''})`,
      };
    }
    if (signatures.length >= SIGNATURE_PAGE && known.size === 0) {
      return { kind: 'UNCHECKED', reason: `the latest ${SIGNATURE_PAGE} transactions naming ${sender} include none the database knows and none it signed; older ones are not read` };
    }
    return AGREES;
  }

  /** The signing accounts of a jsonParsed transaction (accountKeys with signer: true). */
  private signersOf(tx: unknown, signature: string): Set<string> {
    const message = isObject(tx) && isObject(tx.transaction) && isObject(tx.transaction.message) ? tx.transaction.message : null;
    const keys = message && Array.isArray(message.accountKeys) ? message.accountKeys : null;
    if (!keys) throw this.bad('getTransaction', `transaction ${signature} without jsonParsed accountKeys`);
    const out = new Set<string>();
    for (const k of keys) {
      if (!isObject(k) || typeof k.pubkey !== 'string' || typeof k.signer !== 'boolean') throw this.bad('getTransaction', `transaction ${signature} with an account key that is not {pubkey, signer}`);
      if (k.signer) out.add(k.pubkey);
    }
    return out;
  }

  private bad(method: string, why: string): ChainRpcError {
    return new ChainRpcError('RPC_ERROR', `${this.label} answered ${why}`, { method });
  }
}
