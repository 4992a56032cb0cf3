import { TransactionBuilder, type Transaction } from '@stellar/stellar-sdk';
import { startReplayServer, type ReplayServer } from '@wcs/core/testing';
import { horizonRecordings, XLM_DEPOSIT_TX, type SharedDeposit } from './recorded-nodes';

type Json = Record<string, unknown>;

/** The recorded USD trustline of GAYOLL… (4.0000000 USD issued by GDUKMG…), the credit asset these tests collect. */
export const RECORDED_USD = 'USD:GDUKMGUGDZQK6YHYA5Z6AY2G4XDSZPSZ3SW5UN3ARVMO6QSRDWP5YLEX';
const [USD_CODE, USD_ISSUER] = RECORDED_USD.split(':') as [string, string];

/**
 * A Horizon for the first sweep of a credit asset into a hot wallet without a trustline (test
 * network), from the adapter's recorded answers (STELLAR_FIXTURES, SOURCE.md). What is changed in
 * each recorded answer is said here:
 * - GET /: horizon-root.json with history_latest_ledger and core_latest_ledger raised to 27984467
 *   (the deposit's ledger), as horizonCollectionNode does.
 * - GET /accounts/{deposit}/payments: one record, the recorded `payment` c1cb850f… (GBVFTZ… →
 *   GAYOLL…, ledger 27984467) joined with its recorded transaction, with `to` (→ the deposit
 *   account), the transaction's memo (→ id / the user's memo) and the asset (native 200.0000000 →
 *   credit_alphanum4 USD of GDUKMG…, 4.0000000: the amount of GAYOLL's recorded USD trustline)
 *   changed. Any other account's payments: an empty page.
 * - GET /accounts/{deposit}: horizon-account-GAYOLL.json with id and account_id changed (its
 *   recorded balances: 72.8563792 XLM, EURT 3.0000000, USD 4.0000000, 5 subentries); once the sweep
 *   of USD is submitted, the USD line's balance is 0.0000000.
 * - GET /accounts/{hot} and /accounts/{cold without}: the same record with id and account_id
 *   changed and the USD line REMOVED (subentry_count 4): no trustline to USD. The hot wallet's
 *   gets the USD line back (balance 0.0000000, subentry_count 5) once its changeTrust of USD was
 *   submitted, and the swept amount less what it paid out once the sweep (and a cold transfer) was.
 * - GET /accounts/{cold with}: the same record with id and account_id changed, the USD line kept.
 * - GET /accounts/{any other}: the recorded 404.
 * - GET /accounts/{any}/transactions (the chain check before signing, read while the database has
 *   signed nothing from the account): the two recorded GBVFTZ… transactions paying GAYOLL…
 *   (horizon-account-transactions-GBVFTZ-excerpt.json), newest first, in a page envelope
 *   (TEST-MADE): payments received, none the account sent.
 * - GET /fee_stats (fee_charged p99 199), GET /ledgers (the recorded ledger 27146933, base reserve
 *   5000000) as recorded.
 * - POST /transactions: the recorded success (horizon-submit-success-8ef0c6d6.json) with hash, id
 *   and envelope_xdr replaced by the submitted transaction's; each envelope is kept, decoded. A
 *   changeTrust while `holdTrust` is set: the recorded 504 (horizon-timeout.json), not applied.
 * - GET /transactions/{hash} of a submitted transaction: the recorded record 5ebd5c0a… with hash,
 *   id and envelope_xdr replaced; any other: the recorded 404.
 */
export type HorizonTrustNode = ReplayServer & {
  deposit: SharedDeposit | null;
  hot: string | null;
  coldWithout: string;
  coldWith: string;
  /** While true, a changeTrust is answered with the recorded 504 timeout (not applied; the service sends it again). */
  holdTrust: boolean;
  /** Hashes of the changeTrust posts answered with the 504 while held. */
  readonly held: string[];
  readonly submitted: Transaction[];
};

export async function horizonTrustNode(networkPassphrase: string, cold: { without: string; with: string }): Promise<HorizonTrustNode> {
  const { root, notFound, timeout, account, feeStats, ledgerPage, submitted: submittedAnswer, record, txs, payment } = horizonRecordings();
  const balances = account.balances as Json[];
  const isUsd = (b: Json) => b.asset_code === USD_CODE && b.asset_issuer === USD_ISSUER;
  const state = { deposit: null as SharedDeposit | null, hot: null as string | null, holdTrust: false, held: [] as string[], submitted: [] as Transaction[], envelopes: new Map<string, string>() };
  const ops$ = () => state.submitted.flatMap((t) => t.operations.map((op) => ({ tx: t, op: op as unknown as Json })));
  const hotTrusts = () => ops$().some(({ tx, op }) => op.type === 'changeTrust' && tx.source === state.hot && (op.line as { code?: string }).code === USD_CODE);
  const usdPaid = (keep: (tx: Transaction, op: Json) => boolean) => ops$().filter(({ tx, op }) => op.type === 'payment' && (op.asset as { code?: string }).code === USD_CODE && keep(tx, op))
    .reduce((s, { op }) => s + BigInt((op.amount as string).replace('.', '')), 0n);
  const swept = () => usdPaid((_tx, op) => op.destination === state.hot);
  /** The hot wallet's USD: what was swept in less what it paid out (a cold transfer). */
  const hotUsd = () => swept() - usdPaid((tx) => tx.source === state.hot);
  const stroops = (n: bigint) => `${n / 10_000_000n}.${(n % 10_000_000n).toString().padStart(7, '0')}`;
  const accountAs = (id: string, usd: string | null) => JSON.stringify({
    ...account, id, account_id: id, subentry_count: usd === null ? 4 : 5,
    balances: usd === null ? balances.filter((b) => !isUsd(b)) : balances.map((b) => (isUsd(b) ? { ...b, balance: usd } : b)),
  });

  const server = await startReplayServer((req) => {
    const d = state.deposit;
    if (req.method === 'GET' && req.path === '/') return { status: 200, body: root };
    if (req.method === 'GET' && req.path === '/fee_stats') return { status: 200, body: feeStats };
    if (req.method === 'GET' && req.path === '/ledgers') return { status: 200, body: ledgerPage };
    const pays = /^\/accounts\/(G[A-Z2-7]{55})\/payments$/.exec(req.path);
    if (req.method === 'GET' && pays) {
      const joined: Json = {
        ...payment, to: d?.address, asset_type: 'credit_alphanum4', asset_code: USD_CODE, asset_issuer: USD_ISSUER, amount: '4.0000000',
        transaction: { ...txs.get(XLM_DEPOSIT_TX)!, memo_type: 'id', memo: d?.memo },
      };
      const after = req.query.get('cursor');
      const mine = d !== null && pays[1] === d.address && (after === null || BigInt(joined.paging_token as string) > BigInt(after));
      return { status: 200, body: JSON.stringify({ _links: {}, _embedded: { records: mine ? [joined] : [] } }) };
    }
    if (req.method === 'GET' && /^\/accounts\/G[A-Z2-7]{55}\/transactions$/.test(req.path)) return { status: 200, body: JSON.stringify({ _links: {}, _embedded: { records: [...txs.values()].reverse() } }) };
    const acct = /^\/accounts\/(G[A-Z2-7]{55})$/.exec(req.path);
    if (req.method === 'GET' && acct) {
      const id = acct[1]!;
      if (d !== null && id === d.address) return { status: 200, body: accountAs(id, swept() > 0n ? '0.0000000' : '4.0000000') };
      if (state.hot !== null && id === state.hot) return { status: 200, body: accountAs(id, hotTrusts() ? stroops(hotUsd()) : null) };
      if (id === cold.without) return { status: 200, body: accountAs(id, null) };
      if (id === cold.with) return { status: 200, body: accountAs(id, '0.0000000') };
      return { status: 404, body: notFound };
    }
    if (req.method === 'POST' && req.path === '/transactions') {
      const envelope = new URLSearchParams(req.body).get('tx')!;
      const tx = TransactionBuilder.fromXDR(envelope, networkPassphrase) as Transaction;
      const hash = tx.hash().toString('hex');
      if (state.holdTrust && tx.operations.some((op) => op.type === 'changeTrust')) {
        state.held.push(hash);
        return { status: 504, body: timeout };
      }
      if (!state.envelopes.has(hash)) {
        state.envelopes.set(hash, envelope);
        state.submitted.push(tx);
      }
      return { status: 200, body: JSON.stringify({ ...submittedAnswer, id: hash, hash, envelope_xdr: envelope }) };
    }
    const m = /^\/transactions\/([0-9a-f]{64})$/.exec(req.path);
    const envelope = m ? state.envelopes.get(m[1]!) : undefined;
    if (req.method === 'GET' && m && envelope !== undefined) return { status: 200, body: JSON.stringify({ ...record, id: m[1], hash: m[1], envelope_xdr: envelope }) };
    return { status: 404, body: notFound };
  });
  return Object.defineProperties(server, {
    deposit: { get: () => state.deposit, set: (v: SharedDeposit | null) => { state.deposit = v; } },
    hot: { get: () => state.hot, set: (v: string | null) => { state.hot = v; } },
    holdTrust: { get: () => state.holdTrust, set: (v: boolean) => { state.holdTrust = v; } },
    held: { get: () => state.held },
    coldWithout: { value: cold.without },
    coldWith: { value: cold.with },
    submitted: { get: () => state.submitted },
  }) as HorizonTrustNode;
}
