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
  appSubscriptionNo: requiredString({ max: 64, pattern: APP_SUBSCRIPTION_NO_RE, patternText: 'must be 1 to 64 characters of letters, digits and _ - . :' }).describe("The merchant's reference: create is idempotent on it. The same request again answers the existing subscription (created false); other settings under a reference in use are refused with 1008001002 CHAIN_SUBSCRIPTION_CONFLICT, changing nothing. Free again once its subscription is deleted."),
  chainCode: requiredString(CHAIN_CODE).describe('A chain enabled for the application and scanned by this service (EVM chains, BTC, SOL, XRP, XLM, EOS); 1008001005 CHAIN_EVENTS_UNSUPPORTED otherwise.'),
  addresses: stringList(SUBSCRIPTION_LIMITS.addressesPerRequest, true).describe("Addresses to monitor, any addresses of the chain (not only the service's), 1 to 1000 per request and at most 10000 per subscription; each must be valid for the chain and network (1008001004 SUBSCRIPTION_ADDRESS_INVALID naming the first invalid one). Stored canonical and without repeats."),
  direction: direction.nullish().describe('IN: transfers into a monitored address; OUT: out of one; BOTH (absent or null).'),
  minAmount: minAmount.nullish().describe("Least amount reported, as a decimal string greater than 0 with at most 18 decimals, in token units of each transfer's own token (\"1\" is 1 ETH for ETH transfers and 1 USDC for USDC transfers). Rounded up to the token's smallest unit. Absent or null: any amount above zero."),
  chainTokenIds: chainTokenIds.nullish().describe("Token filter: catalogue token ids of this chain (support/tokens; 1003001003 TOKEN_UNKNOWN for another chain's or an unknown id). With contractAddresses the filter is their union. Absent or null with contractAddresses absent or null: every token of the chain's catalogue."),
  contractAddresses: stringList(100).nullish().describe("Token filter by contract address (EVM: any letter case); each must be a token of the chain's catalogue (1003001003 TOKEN_UNKNOWN otherwise). Stored as catalogue ids."),
}).meta({ id: 'ChainSubscriptionCreateRequest' });
export type SubscriptionCreateRequest = z.infer<typeof subscriptionCreateRequest>;

/** POST chain-event/subscription/update: the fields given are changed (minAmount null: none; both token filters null: every token). */
export const subscriptionUpdateRequest = body({
  id: requiredInt({ min: 1, max: MAX_ID }),
  direction: direction.optional(),
  minAmount: minAmount.nullable().optional().describe('Replaces the minimum (decimal string greater than 0, at most 18 decimals, in token units); null removes it.'),
  chainTokenIds: chainTokenIds.nullish().describe('Replaces the whole token filter together with contractAddresses (either given: both are read, an absent one as null); both null: every token.'),
  contractAddresses: stringList(100).nullish().describe('Replaces the whole token filter together with chainTokenIds (see there).'),
  status: z.enum(['ACTIVE', 'PAUSED'], { error: 'must be ACTIVE or PAUSED (use subscription/delete to end a subscription)' }).optional().describe('PAUSED: nothing is matched until ACTIVE again (transfers meanwhile are not reported later). Use subscription/delete to end a subscription.'),
  addAddresses: stringList(SUBSCRIPTION_LIMITS.addressesPerRequest).optional().describe('Addresses to monitor as well (1 to 1000; ones already monitored are kept once). The subscription and application limits apply.'),
  removeAddresses: stringList(SUBSCRIPTION_LIMITS.addressesPerRequest).optional().describe('Addresses to stop monitoring (1 to 1000; ones not monitored are ignored). Removed before addAddresses are added; a subscription left without addresses is refused (1000001003): delete it instead.'),
}).refine((u) => Object.keys(u).some((k) => k !== 'id'), {
  error: 'names no change: give at least one of direction, chainTokenIds, contractAddresses, minAmount, status, addAddresses, removeAddresses',
}).meta({ id: 'ChainSubscriptionUpdateRequest', description: "The subscription's id and at least one change; fields left out stay as they are. The chain and appSubscriptionNo cannot change.", minProperties: 2 });
export type SubscriptionUpdateRequest = z.infer<typeof subscriptionUpdateRequest>;

/** POST chain-event/subscription/delete. */
export const subscriptionDeleteRequest = body({
  id: requiredInt({ min: 1, max: MAX_ID }),
}).meta({ id: 'ChainSubscriptionDeleteRequest' });
export type SubscriptionDeleteRequest = z.infer<typeof subscriptionDeleteRequest>;

/** GET chain-event/subscription/get, chain-event/get, outflow/get. */
export const idQuery = query({
  id: queryInt({ min: 1, max: MAX_ID }).meta({ description: 'Subscription id.', example: 1 }),
});
export type IdQuery = z.infer<typeof idQuery>;

/** GET chain-event/subscription/list. */
export const subscriptionListQuery = query({
  chainCode: queryString(CHAIN_CODE).optional().meta({ example: 'ETH' }),
  status: queryEnum(['ACTIVE', 'PAUSED']).optional().meta({ example: 'ACTIVE' }),
  ...paging(PAGE),
});
export type SubscriptionListQuery = z.input<typeof subscriptionListQuery>;

/** GET chain-event/list. */
export const chainEventListQuery = query({
  subscriptionId: queryInt({ min: 1, max: MAX_ID }).optional().meta({ example: 1 }),
  chainCode: queryString(CHAIN_CODE).optional().meta({ example: 'ETH' }),
  direction: queryEnum(['IN', 'OUT']).optional().meta({ example: 'IN' }),
  status: queryEnum(CHAIN_EVENT_STATUSES).optional().meta({ example: 'CONFIRMED' }),
  txHash: queryString({ max: 128 }).optional().meta({ description: 'Exact transaction hash.', example: '0x3b1f8e2a9c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7' }),
  address: queryString({ max: 256 }).optional().meta({ description: 'The monitored address that matched, in its canonical form (as subscription/get lists it).', example: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94' }),
  ...paging(PAGE),
});
export type ChainEventListQuery = z.input<typeof chainEventListQuery>;

/** GET outflow/list. */
export const outflowListQuery = query({
  chainCode: queryString(CHAIN_CODE).optional().meta({ example: 'ETH' }),
  addressKind: queryEnum(OUTFLOW_KINDS).optional().meta({ example: 'DEPOSIT' }),
  ...paging(PAGE),
});
export type OutflowListQuery = z.input<typeof outflowListQuery>;
