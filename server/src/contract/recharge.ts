import type { z } from 'zod';
import { TX_STATUSES } from '../deposits/recharges';
import { CHAIN_CODE, paging, query, queryEnum, queryInt, queryLocalTime, queryString } from './fields';

/** Deposits (docs/deposits.md): recharge/get, recharge/list. */

export const RECHARGE_PAGE_SIZE_DEFAULT = 20;
export const RECHARGE_PAGE_SIZE_MAX = 200;

/** GET recharge/get. */
export const rechargeGetQuery = query({
  id: queryInt({ min: 1, max: Number.MAX_SAFE_INTEGER }).meta({ description: 'Recharge record id (from the recharge event).', example: 1 }),
});
export type RechargeGetQuery = z.infer<typeof rechargeGetQuery>;

/** GET recharge/list: filters and paging; startTime and endTime in UTC, start not after end. */
export const rechargeListQuery = query({
  startTime: queryLocalTime().optional().meta({ description: 'Lower bound of createTime, inclusive (UTC).', example: '2025-01-01T00:00:00' }),
  endTime: queryLocalTime().optional().meta({ description: 'Upper bound of createTime, inclusive at whole seconds (UTC).', example: '2035-12-31T23:59:59' }),
  txStatus: queryEnum(TX_STATUSES).optional().meta({ example: 'CONFIRMED' }),
  chainCode: queryString(CHAIN_CODE).optional().meta({ example: 'ETH' }),
  address: queryString({ max: 128 }).optional().meta({ description: 'Receiving address, exactly as returned by address create.', example: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94' }),
  externalUserId: queryString({ max: 64 }).optional().meta({ example: 'user-42' }),
  ...paging({ default: RECHARGE_PAGE_SIZE_DEFAULT, max: RECHARGE_PAGE_SIZE_MAX }),
}).refine((q) => !(q.startTime && q.endTime && q.startTime > q.endTime), { path: ['endTime'], error: 'must not be before startTime' });
export type RechargeListQuery = z.input<typeof rechargeListQuery>;
