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
  appOrderNo: requiredString(APP_ORDER_NO).describe('Merchant order number, unique per application across all orders; a repeat is refused with 1007001001 WITHDRAW_ORDER_DUPLICATE and never changes the existing order.'),
  chainCode: requiredString(CHAIN_CODE).describe('Chain code, enabled for the application.'),
  chainTokenId: requiredInt({ min: 1, max: 2_147_483_647 }).describe('Token id of that chain (support/tokens).'),
  toAddress: requiredString({ max: 256 }).describe('Destination, valid for the chain and network (EIP-55 case is checked when mixed; XRP X-addresses carry their tag).'),
  /** "" is no memo. */
  toMemo: optionalString({ max: 256 }).describe('Memo chains only (XRP destination tag, Stellar memo, EOS memo); refused on other chains.'),
  amount: amount.describe('Decimal string greater than 0 with no more decimal places than the token has (a JSON number is refused).'),
  callbackUrl: optionalString({ max: 2048 }).describe("This order's withdraw callbacks go here instead of the application's WITHDRAW URL (https for live applications). For a live application a URL whose host is, or resolves to, a loopback, private, link-local or cloud metadata target is refused with 1002001004 (docs/callbacks.md, Target safety)."),
  remark: remark.describe('At most 200 characters; kept for the operator.'),
}).meta({ id: 'WithdrawItem' });
export type WithdrawCreateRequest = z.infer<typeof withdrawCreateRequest>;

/** POST withdraw/batch-create: 1 to 100 items, each accepted or refused on its own. */
export const withdrawBatchCreateRequest = body({
  items: requiredArray(withdrawCreateRequest, 1, WITHDRAW_BATCH_MAX).describe('50 items recommended; 100 at most (a longer array fails the whole request, nothing persisted).'),
}).meta({ id: 'WithdrawBatchRequest' });
export type WithdrawBatchCreateRequest = z.infer<typeof withdrawBatchCreateRequest>;

/** GET withdraw/get: exactly one of id and appOrderNo. */
export const withdrawGetQuery = query({
  id: queryInt({ min: 1, max: Number.MAX_SAFE_INTEGER }).optional().meta({ description: 'Withdrawal record id. Give exactly one of id and appOrderNo.', example: 1 }),
  appOrderNo: queryString(APP_ORDER_NO).optional().meta({ description: 'Merchant order number.', example: 'order-1001' }),
}).refine((q) => (q.id === undefined) !== (q.appOrderNo === undefined), { path: ['id'], error: 'give exactly one of id and appOrderNo' });
export type WithdrawGetQuery = z.infer<typeof withdrawGetQuery>;
