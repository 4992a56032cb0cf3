import type { Sequelize } from 'sequelize';
import { CHAIN_CODE_RE } from '@wcs/core';
import { ADDRESS_KINDS, tokenTotals, totalsView } from '../reconciliation/totals';
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
        const chainCode = query.string('chainCode', { pattern: CHAIN_CODE_RE, patternText: 'must be an upper-case chain code such as ETH' });
        const addressKind = query.oneOf('addressKind', ADDRESS_KINDS);
        query.noOthers();
        const totals = await tokenTotals(sequelize, { applicationId: app.applicationId, chainCode, addressKind });
        return { list: totals.map(totalsView) };
      },
    },
  ];
}
