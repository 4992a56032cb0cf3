import { z } from 'zod';
import { APP_ORDER_NO_RE, REMARK_MAX } from '../withdrawals/withdraw-service';
import { AMOUNT_IS_A_NUMBER, atMostChars, body, CHAIN_CODE, maxUnits, NOT_EMPTY, optionalString, query, queryInt, queryString, REQUIRED, requiredArray, requiredInt, requiredString, type StringRule } from './fields';

/** Withdrawals (docs/withdrawals.md): create, batch-create, get. */

/** Hard maximum of items per batch-create request (50 recommended, as the spec says; docs/withdrawals.md). */
export const WITHDRAW_BATCH_MAX = 100;

const APP_ORDER_NO: StringRule = { max: 64, pattern: APP_ORDER_NO_RE, patternText: 'must be 1 to 64 characters of letters, digits and _ - . :' };

/** The amount in token units, an exact decimal string: kept as the string it is (the service reads it to base units). */
const amount = maxUnits(
  z
    .string({ error: (iss) => (iss.input === undefined || iss.input === null ? REQUIRED : typeof iss.input === 'number' ? AMOUNT_IS_A_NUMBER : 'must be a string') })
    .min(1, { error: NOT_EMPTY }),
  100,
);

/** At most REMARK_MAX characters, counted in Unicode code points (zod's max() counts them so). */
const remark = z.string({ error: 'must be a string' }).max(REMARK_MAX, { error: atMostChars(REMARK_MAX) }).nullish();

/** POST withdraw/create, and each item of batch-create. */
export const withdrawCreateRequest = body({
  appOrderNo: requiredString(APP_ORDER_NO),
  chainCode: requiredString(CHAIN_CODE),
  chainTokenId: requiredInt({ min: 1, max: 2_147_483_647 }),
  toAddress: requiredString({ max: 256 }),
  /** "" is no memo. */
  toMemo: optionalString({ max: 256 }),
  amount,
  callbackUrl: optionalString({ max: 2048 }),
  remark,
});
export type WithdrawCreateRequest = z.infer<typeof withdrawCreateRequest>;

/** POST withdraw/batch-create: 1 to 100 items, each accepted or refused on its own. */
export const withdrawBatchCreateRequest = body({
  items: requiredArray(withdrawCreateRequest, 1, WITHDRAW_BATCH_MAX),
});
export type WithdrawBatchCreateRequest = z.infer<typeof withdrawBatchCreateRequest>;

/** GET withdraw/get: exactly one of id and appOrderNo. */
export const withdrawGetQuery = query({
  id: queryInt({ min: 1, max: Number.MAX_SAFE_INTEGER }).optional(),
  appOrderNo: queryString(APP_ORDER_NO).optional(),
}).refine((q) => (q.id === undefined) !== (q.appOrderNo === undefined), { path: ['id'], error: 'give exactly one of id and appOrderNo' });
export type WithdrawGetQuery = z.infer<typeof withdrawGetQuery>;
