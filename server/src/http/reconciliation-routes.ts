import type { Sequelize } from 'sequelize';
import { tokenTotals, totalsView } from '../reconciliation/totals';
import { reconciliationBalancesQuery } from '../contract/reconciliation';
import { parseQuery } from '../contract/parse';
import type { ApiRoute } from './routes';

/**
 * reconciliation/balances: the calling application's own totals per chain and token from the
 * latest reconciliation of each of its custody addresses (docs/reconciliation.md): what the
 * ledger expects, what the node holds, the difference and how much of it is explained, with the
 * block the balances were read at. Read-only; another application's figures are never included.
 */
export function reconciliationRoutes(sequelize: Sequelize): ApiRoute[] {
  return [
    {
      method: 'GET',
      path: '/wallet/reconciliation/balances',
      body: 'none',
      handler: async ({ app, query }) => {
        const { chainCode, addressKind } = parseQuery(reconciliationBalancesQuery, query);
        const totals = await tokenTotals(sequelize, { applicationId: app.applicationId, chainCode, addressKind });
        return { list: totals.map(totalsView) };
      },
    },
  ];
}
