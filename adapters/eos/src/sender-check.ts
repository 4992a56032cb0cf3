import { AGREES, ChainRpcError, type SenderCheck, type SenderLedger } from '@wcs/core';

/** Actions of the sender read per check (one Hyperion get_actions page, newest first). */
export const ACTION_PAGE = 100;
const HEX64 = /^[0-9a-f]{64}$/;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The EOS sender check (TransferNode.senderCheck; docs/transfers.md): an Antelope account has no
 * sequence, so its recent history is compared with the transactions the database has. `page` is
 * Hyperion's get_actions answer for the account, newest first (ACTION_PAGE actions): the actions
 * the account authorized (an `act.authorization` actor) are its own; their transactions that
 * the database does not know (`ledger.knownTransactions`, read after the node answered) make it
 * AHEAD. None: AGREES, unless the page is full and holds no transaction the database knows
 * (where its knowledge ends is older than the page): UNCHECKED.
 */
export async function eosSenderCheck(sender: string, page: unknown, ledger: SenderLedger, bad: (why: string) => ChainRpcError): Promise<SenderCheck> {
  if (!isObject(page) || !Array.isArray(page.actions)) throw bad('no actions list');
  const all = new Set<string>();
  const sent = new Set<string>();
  for (const a of page.actions as unknown[]) {
    const act = isObject(a) && isObject(a.act) ? a.act : null;
    const trx = isObject(a) && typeof a.trx_id === 'string' ? a.trx_id.toLowerCase() : null;
    if (!act || trx === null || !HEX64.test(trx) || !Array.isArray(act.authorization)) throw bad('an action without trx_id and act.authorization');
    all.add(trx);
    if (act.authorization.some((x) => isObject(x) && x.actor === sender)) sent.add(trx);
  }
  if (all.size === 0) return AGREES;
  const known = await ledger.knownTransactions([...all]);
  const unknown = [...sent].filter((t) => !known.has(t));
  if (unknown.length > 0) {
    return {
      kind: 'AHEAD',
      evidence: { kind: 'UNKNOWN_TRANSACTIONS', transactions: unknown },
      summary: `${sender} authorized ${unknown.length} transaction${unknown.length === 1 ? '' : 's'} on chain that the database does not know (${unknown.slice(0, 3).join(', ')}${unknown.length > 3 ? ', …' : ''})`,
    };
  }
  if ((page.actions as unknown[]).length >= ACTION_PAGE && known.size === 0) {
    return { kind: 'UNCHECKED', reason: `the latest ${ACTION_PAGE} actions of ${sender} include no transaction the database knows and none it authorized; older ones are not read` };
  }
  return AGREES;
}
