import { join } from 'node:path';
import { fixtureReader } from '@wcs/core/testing';

/** Test support for replaying recorded Horizon pages (src/fixtures, SOURCE.md). */
type Json = Record<string, unknown>;
const FIXTURES = fixtureReader(join(__dirname, '../src/fixtures'));
const fixture = <T = Json>(name: string): T => FIXTURES.json<T>(name);
const records = (page: Json): Json[] => (page._embedded as { records: Json[] }).records;

const PAYMENT_TYPES = new Set(['create_account', 'payment', 'path_payment', 'path_payment_strict_receive', 'path_payment_strict_send', 'account_merge']);

/**
 * GAYOLL's payments with join=transactions, built from two recorded pages the way Horizon builds
 * it: the payment-type records of GAYOLL's operations page, each with the transaction resource of
 * its transaction_hash (from GBVFTZ's transactions page) under `transaction`.
 */
export function joinedGayollPayments(): Json[] {
  const txs = new Map(fixture<Json[]>('horizon-account-transactions-GBVFTZ-excerpt.json').map((t) => [t.hash as string, t]));
  return records(fixture('horizon-account-operations-GAYOLL.json'))
    .filter((r) => PAYMENT_TYPES.has(r.type as string))
    .map((r) => ({ ...r, transaction: txs.get(r.transaction_hash as string)! }));
}

/** The records of `list` Horizon pages out for a query: ascending, strictly after `cursor`, at most `limit` (default 10). */
export function pageAfter(list: readonly Json[], query: URLSearchParams): Json[] {
  const after = query.get('cursor');
  const limit = Number(query.get('limit') ?? '10');
  return list.filter((r) => after === null || BigInt(r.paging_token as string) > BigInt(after)).slice(0, limit);
}
