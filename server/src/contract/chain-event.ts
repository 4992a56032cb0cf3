import { z } from 'zod';
import { SUBSCRIPTION_DIRECTIONS } from '../chain-events/matching';
import { APP_SUBSCRIPTION_NO_RE, MIN_AMOUNT_RE, SUBSCRIPTION_LIMITS } from '../chain-events/subscription-service';
import { CHAIN_EVENT_STATUSES, OUTFLOW_KINDS } from '../chain-events/event-service';
import { body, CHAIN_CODE, maxUnits, oneOfText, paging, query, queryEnum, queryInt, queryString, REQUIRED, requiredInt, requiredString } from './fields';

/** Chain event subscriptions, chain events and custody outflows (docs/chain-events.md). */

const MAX_ID = Number.MAX_SAFE_INTEGER;
export const CHAIN_EVENT_PAGE_SIZE_DEFAULT = 20;
export const CHAIN_EVENT_PAGE_SIZE_MAX = 200;
const PAGE = { default: CHAIN_EVENT_PAGE_SIZE_DEFAULT, max: CHAIN_EVENT_PAGE_SIZE_MAX };

const ENTRY_TEXT = 'must be a string of 1 to 256 characters';
/** A JSON array of 1..max strings (addresses, contracts), each 1..256 characters. */
function stringList(max: number, required = false) {
  const text = 'must be an array of strings';
  return z
    .array(maxUnits(z.string({ error: ENTRY_TEXT }).min(1, { error: ENTRY_TEXT }), 256, ENTRY_TEXT), {
      error: required ? (iss) => (iss.input === undefined || iss.input === null ? REQUIRED : text) : text,
    })
    .min(1, { error: 'must have at least 1 entry' })
    .max(max, { error: `must have at most ${max} entries` });
}

const TOKEN_ID_TEXT = 'must be a positive integer';
/** Catalogue token ids to filter by (omitted or null: every token). */
const chainTokenIds = z
  .array(z.int({ error: TOKEN_ID_TEXT }).min(1, { error: TOKEN_ID_TEXT }).max(2_147_483_647, { error: TOKEN_ID_TEXT }), { error: 'must be an array of integers' })
  .min(1, { error: 'must have at least 1 entry (omit it, or send null, for every token)' })
  .max(100, { error: 'must have at most 100 entries' });

const MIN_AMOUNT_TEXT = 'must be a decimal string greater than 0 with at most 18 decimals, such as "0.5"';
/** The smallest amount reported, an exact decimal string in token units (kept as a string); null: no minimum. */
const minAmount = z
  .string({ error: 'must be a decimal string such as "0.5", or null' })
  .regex(MIN_AMOUNT_RE, { error: MIN_AMOUNT_TEXT })
  .regex(/[1-9]/, { error: MIN_AMOUNT_TEXT });

const direction = z.enum(SUBSCRIPTION_DIRECTIONS, { error: oneOfText(SUBSCRIPTION_DIRECTIONS) });

/** POST chain-event/subscription/create (direction absent or null: BOTH; minAmount and the token filters absent or null: none). */
export const subscriptionCreateRequest = body({
  appSubscriptionNo: requiredString({ max: 64, pattern: APP_SUBSCRIPTION_NO_RE, patternText: 'must be 1 to 64 characters of letters, digits and _ - . :' }),
  chainCode: requiredString(CHAIN_CODE),
  addresses: stringList(SUBSCRIPTION_LIMITS.addressesPerRequest, true),
  direction: direction.nullish(),
  minAmount: minAmount.nullish(),
  chainTokenIds: chainTokenIds.nullish(),
  contractAddresses: stringList(100).nullish(),
});
export type SubscriptionCreateRequest = z.infer<typeof subscriptionCreateRequest>;

/** POST chain-event/subscription/update: the fields given are changed (minAmount null: none; both token filters null: every token). */
export const subscriptionUpdateRequest = body({
  id: requiredInt({ min: 1, max: MAX_ID }),
  direction: direction.optional(),
  minAmount: minAmount.nullable().optional(),
  chainTokenIds: chainTokenIds.nullish(),
  contractAddresses: stringList(100).nullish(),
  status: z.enum(['ACTIVE', 'PAUSED'], { error: 'must be ACTIVE or PAUSED (use subscription/delete to end a subscription)' }).optional(),
  addAddresses: stringList(SUBSCRIPTION_LIMITS.addressesPerRequest).optional(),
  removeAddresses: stringList(SUBSCRIPTION_LIMITS.addressesPerRequest).optional(),
}).refine((u) => Object.keys(u).some((k) => k !== 'id'), {
  error: 'names no change: give at least one of direction, chainTokenIds, contractAddresses, minAmount, status, addAddresses, removeAddresses',
});
export type SubscriptionUpdateRequest = z.infer<typeof subscriptionUpdateRequest>;

/** POST chain-event/subscription/delete. */
export const subscriptionDeleteRequest = body({
  id: requiredInt({ min: 1, max: MAX_ID }),
});
export type SubscriptionDeleteRequest = z.infer<typeof subscriptionDeleteRequest>;

/** GET chain-event/subscription/get, chain-event/get, outflow/get. */
export const idQuery = query({
  id: queryInt({ min: 1, max: MAX_ID }),
});
export type IdQuery = z.infer<typeof idQuery>;

/** GET chain-event/subscription/list. */
export const subscriptionListQuery = query({
  chainCode: queryString(CHAIN_CODE).optional(),
  status: queryEnum(['ACTIVE', 'PAUSED']).optional(),
  ...paging(PAGE),
});
export type SubscriptionListQuery = z.input<typeof subscriptionListQuery>;

/** GET chain-event/list. */
export const chainEventListQuery = query({
  subscriptionId: queryInt({ min: 1, max: MAX_ID }).optional(),
  chainCode: queryString(CHAIN_CODE).optional(),
  direction: queryEnum(['IN', 'OUT']).optional(),
  status: queryEnum(CHAIN_EVENT_STATUSES).optional(),
  txHash: queryString({ max: 128 }).optional(),
  address: queryString({ max: 256 }).optional(),
  ...paging(PAGE),
});
export type ChainEventListQuery = z.input<typeof chainEventListQuery>;

/** GET outflow/list. */
export const outflowListQuery = query({
  chainCode: queryString(CHAIN_CODE).optional(),
  addressKind: queryEnum(OUTFLOW_KINDS).optional(),
  ...paging(PAGE),
});
export type OutflowListQuery = z.input<typeof outflowListQuery>;
