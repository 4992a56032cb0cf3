import { CHAIN_CODE_RE, invalidParameter } from '@wcs/core';
import { SUBSCRIPTION_DIRECTIONS, type SubscriptionDirection } from '../chain-events/matching';
import { APP_SUBSCRIPTION_NO_RE, MIN_AMOUNT_RE, SUBSCRIPTION_LIMITS, type SubscriptionService, type SubscriptionUpdate } from '../chain-events/subscription-service';
import { CHAIN_EVENT_STATUSES, OUTFLOW_KINDS, type ChainEventService } from '../chain-events/event-service';
import { BodyReader } from './body';
import type { QueryReader } from './query';
import type { ApiRoute, RequestContext } from './routes';

const MAX_ID = Number.MAX_SAFE_INTEGER;
export const CHAIN_EVENT_PAGE_SIZE_DEFAULT = 20;
export const CHAIN_EVENT_PAGE_SIZE_MAX = 200;
const CHAIN_CODE = { pattern: CHAIN_CODE_RE, patternText: 'must be an upper-case chain code such as ETH' };

/** A body field holding a JSON array of strings (1..max entries), each 1..256 characters. */
function stringArray(body: Record<string, unknown>, field: string, max: number): string[] {
  const v = body[field];
  if (!Array.isArray(v)) throw invalidParameter(field, 'must be an array of strings');
  if (v.length === 0) throw invalidParameter(field, 'must have at least 1 entry');
  if (v.length > max) throw invalidParameter(field, `must have at most ${max} entries`);
  return v.map((x, i) => {
    if (typeof x !== 'string' || x.length === 0 || x.length > 256) throw invalidParameter(`${field}[${i}]`, 'must be a string of 1 to 256 characters');
    return x;
  });
}

function intArray(body: Record<string, unknown>, field: string): number[] {
  const v = body[field];
  if (!Array.isArray(v)) throw invalidParameter(field, 'must be an array of integers');
  if (v.length === 0) throw invalidParameter(field, 'must have at least 1 entry (omit it, or send null, for every token)');
  if (v.length > 100) throw invalidParameter(field, 'must have at most 100 entries');
  return v.map((x, i) => {
    if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < 1 || x > 2_147_483_647) throw invalidParameter(`${field}[${i}]`, 'must be a positive integer');
    return x;
  });
}

/** Refuses a field the operation does not take. */
function onlyFields(body: Record<string, unknown>, fields: readonly string[]): void {
  for (const k of Object.keys(body)) if (!fields.includes(k)) throw invalidParameter(k, 'is not a field of this operation');
}

/** An optional field that may also be null: undefined (absent), null, or its value. */
function present(body: Record<string, unknown>, field: string): boolean {
  return Object.prototype.hasOwnProperty.call(body, field);
}

function minAmountOf(body: Record<string, unknown>): string | null {
  const v = body.minAmount;
  if (v === null) return null;
  if (typeof v !== 'string') throw invalidParameter('minAmount', 'must be a decimal string such as "0.5", or null');
  if (!MIN_AMOUNT_RE.test(v) || !/[1-9]/.test(v)) throw invalidParameter('minAmount', 'must be a decimal string greater than 0 with at most 18 decimals, such as "0.5"');
  return v;
}

function directionOf(v: unknown): SubscriptionDirection {
  if (typeof v !== 'string' || !(SUBSCRIPTION_DIRECTIONS as readonly string[]).includes(v)) throw invalidParameter('direction', `must be one of ${SUBSCRIPTION_DIRECTIONS.join(', ')}`);
  return v as SubscriptionDirection;
}

function tokenFilterOf(body: Record<string, unknown>): { chainTokenIds: number[] | null; contractAddresses: string[] | null } {
  return {
    chainTokenIds: body.chainTokenIds === undefined || body.chainTokenIds === null ? null : intArray(body, 'chainTokenIds'),
    contractAddresses: body.contractAddresses === undefined || body.contractAddresses === null ? null : stringArray(body, 'contractAddresses', 100),
  };
}

function paging(query: QueryReader): { pageNo: number; pageSize: number } {
  return {
    pageNo: query.int('pageNo', { min: 1, max: 1_000_000 }) ?? 1,
    pageSize: query.int('pageSize', { min: 1, max: CHAIN_EVENT_PAGE_SIZE_MAX }) ?? CHAIN_EVENT_PAGE_SIZE_DEFAULT,
  };
}

function idParam(query: QueryReader): number {
  const id = query.int('id', { min: 1, max: MAX_ID });
  query.noOthers();
  if (id === undefined) throw invalidParameter('id', 'is required');
  return id;
}

function caller(ctx: RequestContext) {
  return { applicationId: ctx.app.applicationId, environment: ctx.app.environment, enabledChains: ctx.app.enabledChains };
}

/** Chain event subscriptions, chain events and custody outflows (docs/chain-events.md). */
export function chainEventRoutes(subscriptions: SubscriptionService, events: ChainEventService): ApiRoute[] {
  return [
    {
      method: 'POST',
      path: '/wallet/chain-event/subscription/create',
      body: 'json',
      handler: async (ctx) => {
        const r = new BodyReader(ctx.body);
        const appSubscriptionNo = r.string('appSubscriptionNo', { required: true, max: 64, pattern: APP_SUBSCRIPTION_NO_RE, patternText: 'must be 1 to 64 characters of letters, digits and _ - . :' });
        const chainCode = r.string('chainCode', { required: true, ...CHAIN_CODE });
        const body = ctx.body as Record<string, unknown>;
        onlyFields(body, ['appSubscriptionNo', 'chainCode', 'addresses', 'direction', 'chainTokenIds', 'contractAddresses', 'minAmount']);
        if (body.addresses === undefined || body.addresses === null) throw invalidParameter('addresses', 'is required');
        const addresses = stringArray(body, 'addresses', SUBSCRIPTION_LIMITS.addressesPerRequest);
        const direction = body.direction === undefined || body.direction === null ? 'BOTH' : directionOf(body.direction);
        const minAmount = body.minAmount === undefined ? null : minAmountOf(body);
        const tokens = tokenFilterOf(body);
        return subscriptions.create(caller(ctx), { appSubscriptionNo, chainCode, addresses, direction, minAmount, ...tokens });
      },
    },
    {
      method: 'GET',
      path: '/wallet/chain-event/subscription/get',
      body: 'none',
      handler: async ({ app, query }) => subscriptions.get(app.applicationId, idParam(query)),
    },
    {
      method: 'GET',
      path: '/wallet/chain-event/subscription/list',
      body: 'none',
      handler: async ({ app, query }) => {
        const chainCode = query.string('chainCode', CHAIN_CODE);
        const status = query.oneOf('status', ['ACTIVE', 'PAUSED'] as const);
        const page = paging(query);
        query.noOthers();
        return subscriptions.list(app.applicationId, { chainCode, status, ...page });
      },
    },
    {
      method: 'POST',
      path: '/wallet/chain-event/subscription/update',
      body: 'json',
      handler: async (ctx) => {
        const r = new BodyReader(ctx.body);
        const id = r.int('id', { required: true, min: 1, max: MAX_ID });
        const body = ctx.body as Record<string, unknown>;
        onlyFields(body, ['id', 'direction', 'chainTokenIds', 'contractAddresses', 'minAmount', 'status', 'addAddresses', 'removeAddresses']);
        const u: { -readonly [K in keyof SubscriptionUpdate]: SubscriptionUpdate[K] } = { id };
        if (present(body, 'direction')) u.direction = directionOf(body.direction);
        if (present(body, 'minAmount')) u.minAmount = minAmountOf(body);
        if (present(body, 'chainTokenIds') || present(body, 'contractAddresses')) u.tokens = tokenFilterOf(body);
        if (present(body, 'status')) {
          if (body.status !== 'ACTIVE' && body.status !== 'PAUSED') throw invalidParameter('status', 'must be ACTIVE or PAUSED (use subscription/delete to end a subscription)');
          u.status = body.status;
        }
        if (present(body, 'addAddresses')) u.addAddresses = stringArray(body, 'addAddresses', SUBSCRIPTION_LIMITS.addressesPerRequest);
        if (present(body, 'removeAddresses')) u.removeAddresses = stringArray(body, 'removeAddresses', SUBSCRIPTION_LIMITS.addressesPerRequest);
        if (Object.keys(u).length === 1) throw invalidParameter('body', 'names no change: give at least one of direction, chainTokenIds, contractAddresses, minAmount, status, addAddresses, removeAddresses');
        return subscriptions.update(caller(ctx), u);
      },
    },
    {
      method: 'POST',
      path: '/wallet/chain-event/subscription/delete',
      body: 'json',
      handler: async (ctx) => {
        const r = new BodyReader(ctx.body);
        const id = r.int('id', { required: true, min: 1, max: MAX_ID });
        r.noOthers();
        return subscriptions.delete(ctx.app.applicationId, id);
      },
    },
    {
      method: 'GET',
      path: '/wallet/chain-event/get',
      body: 'none',
      handler: async ({ app, query }) => events.getEvent(app.applicationId, idParam(query)),
    },
    {
      method: 'GET',
      path: '/wallet/chain-event/list',
      body: 'none',
      handler: async ({ app, query }) => {
        const subscriptionId = query.int('subscriptionId', { min: 1, max: MAX_ID });
        const chainCode = query.string('chainCode', CHAIN_CODE);
        const direction = query.oneOf('direction', ['IN', 'OUT'] as const);
        const status = query.oneOf('status', CHAIN_EVENT_STATUSES);
        const txHash = query.string('txHash', { max: 128 });
        const address = query.string('address', { max: 256 });
        const page = paging(query);
        query.noOthers();
        return events.listEvents(app.applicationId, { subscriptionId, chainCode, direction, status, txHash, address, ...page });
      },
    },
    {
      method: 'GET',
      path: '/wallet/outflow/get',
      body: 'none',
      handler: async ({ app, query }) => events.getOutflow(app.applicationId, idParam(query)),
    },
    {
      method: 'GET',
      path: '/wallet/outflow/list',
      body: 'none',
      handler: async ({ app, query }) => {
        const chainCode = query.string('chainCode', CHAIN_CODE);
        const addressKind = query.oneOf('addressKind', OUTFLOW_KINDS);
        const page = paging(query);
        query.noOthers();
        return events.listOutflows(app.applicationId, { chainCode, addressKind, ...page });
      },
    },
  ];
}
