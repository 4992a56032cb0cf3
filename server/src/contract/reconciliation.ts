import type { z } from 'zod';
import { ADDRESS_KINDS } from '../reconciliation/totals';
import { CHAIN_CODE, query, queryEnum, queryString } from './fields';

/** GET reconciliation/balances (docs/reconciliation.md): the application's totals, optionally of one chain and one kind of address. */
export const reconciliationBalancesQuery = query({
  chainCode: queryString(CHAIN_CODE).optional(),
  addressKind: queryEnum(ADDRESS_KINDS).optional(),
});
export type ReconciliationBalancesQuery = z.infer<typeof reconciliationBalancesQuery>;
