import { AGREES, ChainRpcError, LruCache, type SenderCheck, type SenderLedger } from '@wcs/core';

/** Signatures of a sender read per check (one getSignaturesForAddress page). */
export const SIGNATURE_PAGE = 100;
/** (sender, transaction) pairs found not signed by the sender (received ones), remembered so each is read once. */
const FOREIGN_CACHE = 10_000;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A read through the node's client: the result of each call, in order; a call the node answered
 * with an error throws it, or (`perCall`) is that call's Error.
 */
export type SolanaReads = (calls: ReadonlyArray<{ readonly method: string; readonly params: unknown[] }>, perCall?: boolean) => Promise<unknown[]>;

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
    const [answer] = await this.checkMany([sender], ledger);
    if (answer instanceof Error) throw answer;
    return answer!;
  }

  /**
   * check for many senders in three round trips at most: every sender's signatures in one batch,
   * the database once for all of them, the unknown transactions in one batch. A sender whose
   * signatures the node did not give is that sender's Error.
   */
  async checkMany(senders: readonly string[], ledger: SenderLedger): Promise<Array<SenderCheck | Error>> {
    if (senders.length === 0) return [];
    const pages = await this.read(senders.map((s) => ({ method: 'getSignaturesForAddress', params: [s, { limit: SIGNATURE_PAGE, commitment: 'confirmed' }] })), true);
    const lists = pages.map((page): string[] | Error => {
      if (page instanceof Error) return page;
      if (!Array.isArray(page)) return this.bad('getSignaturesForAddress', 'no list of signatures');
      const out: string[] = [];
      for (const e of page) {
        if (!isObject(e) || typeof e.signature !== 'string') return this.bad('getSignaturesForAddress', 'an entry without a signature');
        out.push(e.signature);
      }
      return out;
    });
    const all = [...new Set(lists.flatMap((l) => (l instanceof Error ? [] : l)))];
    const known = all.length === 0 ? new Set<string>() : await ledger.knownTransactions(all);
    const mine = (sender: string, sig: string) => `${sender} ${sig}`;
    const open = [...new Set(senders.flatMap((sender, i) => {
      const list = lists[i]!;
      return list instanceof Error ? [] : list.filter((sig) => !known.has(sig) && this.foreign.get(mine(sender, sig)) === undefined);
    }))];
    const signers = new Map<string, Set<string>>();
    if (open.length > 0) {
      const txs = await this.read(open.map((sig) => ({ method: 'getTransaction', params: [sig, { encoding: 'jsonParsed', commitment: 'confirmed', maxSupportedTransactionVersion: 0 }] })));
      for (const [i, tx] of txs.entries()) {
        if (tx === null || tx === undefined) continue; // listed, not returned yet: the next check reads it
        signers.set(open[i]!, this.signersOf(tx, open[i]!));
      }
    }
    const answers = senders.map((sender, i): SenderCheck | Error => {
      const list = lists[i]!;
      if (list instanceof Error) return list;
      const sent: string[] = [];
      for (const sig of list) {
        const who = signers.get(sig);
        if (who === undefined) continue;
        if (who.has(sender)) sent.push(sig);
        else this.foreign.set(mine(sender, sig), true); // not the sender's (a payment received): not read again for it
      }
      if (sent.length > 0) {
        return {
          kind: 'AHEAD',
          evidence: { kind: 'UNKNOWN_TRANSACTIONS', transactions: sent },
          summary: `${sender} signed ${sent.length} transaction${sent.length === 1 ? '' : 's'} on chain that the database does not know (${sent.slice(0, 3).join(', ')}${sent.length > 3 ? ', …' : ''})`,
        };
      }
      if (list.length >= SIGNATURE_PAGE && !list.some((sig) => known.has(sig))) {
        return { kind: 'UNCHECKED', reason: `the latest ${SIGNATURE_PAGE} transactions naming ${sender} include none the database knows and none it signed; older ones are not read` };
      }
      return AGREES;
    });
    return answers;
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
