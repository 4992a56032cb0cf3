import { CHAIN_CODE_RE, invalidParameter } from '@wcs/core';
import { TX_STATUSES } from '../deposits/recharges';
import type { RechargeService } from '../deposits/recharge-service';
import { localTimeParam as localTime } from './query';
import type { ApiRoute } from './routes';

const MAX_ID = Number.MAX_SAFE_INTEGER;
export const RECHARGE_PAGE_SIZE_DEFAULT = 20;
export const RECHARGE_PAGE_SIZE_MAX = 200;

export function rechargeRoutes(recharges: RechargeService): ApiRoute[] {
  return [
    {
      method: 'GET',
      path: '/wallet/recharge/get',
      body: 'none',
      handler: async ({ app, query }) => {
        const id = query.int('id', { min: 1, max: MAX_ID });
        query.noOthers();
        if (id === undefined) throw invalidParameter('id', 'is required');
        return recharges.get(app.applicationId, id);
      },
    },
    {
      method: 'GET',
      path: '/wallet/recharge/list',
      body: 'none',
      handler: async ({ app, query }) => {
        const startTime = localTime(query, 'startTime');
        const endTime = localTime(query, 'endTime');
        const txStatus = query.oneOf('txStatus', TX_STATUSES);
        const chainCode = query.string('chainCode', { pattern: CHAIN_CODE_RE, patternText: 'must be an upper-case chain code such as ETH' });
        const address = query.string('address', { max: 128 });
        const externalUserId = query.string('externalUserId', { max: 64 });
        const pageNo = query.int('pageNo', { min: 1, max: 1_000_000 }) ?? 1;
        const pageSize = query.int('pageSize', { min: 1, max: RECHARGE_PAGE_SIZE_MAX }) ?? RECHARGE_PAGE_SIZE_DEFAULT;
        query.noOthers();
        if (startTime && endTime && startTime > endTime) throw invalidParameter('endTime', 'must not be before startTime');
        return recharges.list(app.applicationId, { startTime, endTime, txStatus, chainCode, address, externalUserId, pageNo, pageSize });
      },
    },
  ];
}
