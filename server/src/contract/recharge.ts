import type { z } from 'zod';
import { TX_STATUSES } from '../deposits/recharges';
import { CHAIN_CODE, paging, query, queryEnum, queryInt, queryLocalTime, queryString } from './fields';

/** Deposits (docs/deposits.md): recharge/get, recharge/list. */

export const RECHARGE_PAGE_SIZE_DEFAULT = 20;
export const RECHARGE_PAGE_SIZE_MAX = 200;

/** GET recharge/get. */
export const rechargeGetQuery = query({
  id: queryInt({ min: 1, max: Number.MAX_SAFE_INTEGER }),
});
export type RechargeGetQuery = z.infer<typeof rechargeGetQuery>;

/** GET recharge/list: filters and paging; startTime and endTime in UTC, start not after end. */
export const rechargeListQuery = query({
  startTime: queryLocalTime().optional(),
  endTime: queryLocalTime().optional(),
  txStatus: queryEnum(TX_STATUSES).optional(),
  chainCode: queryString(CHAIN_CODE).optional(),
  address: queryString({ max: 128 }).optional(),
  externalUserId: queryString({ max: 64 }).optional(),
  ...paging({ default: RECHARGE_PAGE_SIZE_DEFAULT, max: RECHARGE_PAGE_SIZE_MAX }),
}).refine((q) => !(q.startTime && q.endTime && q.startTime > q.endTime), { path: ['endTime'], error: 'must not be before startTime' });
export type RechargeListQuery = z.input<typeof rechargeListQuery>;
