import type { z } from 'zod';
import { ADDRESS_KINDS } from '../reconciliation/totals';
import { CHAIN_CODE, query, queryEnum, queryString } from './fields';

/** GET reconciliation/balances (docs/reconciliation.md): the application's totals, optionally of one chain and one kind of address. */
export const reconciliationBalancesQuery = query({
  chainCode: queryString(CHAIN_CODE).optional().meta({ description: "Only this chain (of the application's environment).", example: 'ETH' }),
  addressKind: queryEnum(ADDRESS_KINDS).optional().meta({ description: "Only this kind of custody address: users' deposit addresses, the shared deposit account of a memo chain, the hot wallet, the fee wallet. Absent: all of them.", example: 'DEPOSIT' }),
});
export type ReconciliationBalancesQuery = z.infer<typeof reconciliationBalancesQuery>;
