import type { SubscriptionService, SubscriptionUpdate } from '../chain-events/subscription-service';
import type { ChainEventService } from '../chain-events/event-service';
import {
  chainEventListQuery, idQuery, outflowListQuery, subscriptionCreateRequest, subscriptionDeleteRequest, subscriptionListQuery, subscriptionUpdateRequest,
} from '../contract/chain-event';
import { parseBody, parseQuery } from '../contract/parse';
import type { ApiRoute, RequestContext } from './routes';

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
        const r = parseBody(subscriptionCreateRequest, ctx.body);
        return subscriptions.create(caller(ctx), {
          appSubscriptionNo: r.appSubscriptionNo,
          chainCode: r.chainCode,
          addresses: r.addresses,
          direction: r.direction ?? 'BOTH',
          minAmount: r.minAmount ?? null,
          chainTokenIds: r.chainTokenIds ?? null,
          contractAddresses: r.contractAddresses ?? null,
        });
      },
    },
    {
      method: 'GET',
      path: '/wallet/chain-event/subscription/get',
      body: 'none',
      handler: async ({ app, query }) => subscriptions.get(app.applicationId, parseQuery(idQuery, query).id),
    },
    {
      method: 'GET',
      path: '/wallet/chain-event/subscription/list',
      body: 'none',
      handler: async ({ app, query }) => subscriptions.list(app.applicationId, parseQuery(subscriptionListQuery, query)),
    },
    {
      method: 'POST',
      path: '/wallet/chain-event/subscription/update',
      body: 'json',
      handler: async (ctx) => {
        const r = parseBody(subscriptionUpdateRequest, ctx.body);
        const u: { -readonly [K in keyof SubscriptionUpdate]: SubscriptionUpdate[K] } = { id: r.id };
        if (r.direction !== undefined) u.direction = r.direction;
        if (r.minAmount !== undefined) u.minAmount = r.minAmount;
        if (r.chainTokenIds !== undefined || r.contractAddresses !== undefined) u.tokens = { chainTokenIds: r.chainTokenIds ?? null, contractAddresses: r.contractAddresses ?? null };
        if (r.status !== undefined) u.status = r.status;
        if (r.addAddresses !== undefined) u.addAddresses = r.addAddresses;
        if (r.removeAddresses !== undefined) u.removeAddresses = r.removeAddresses;
        return subscriptions.update(caller(ctx), u);
      },
    },
    {
      method: 'POST',
      path: '/wallet/chain-event/subscription/delete',
      body: 'json',
      handler: async (ctx) => subscriptions.delete(ctx.app.applicationId, parseBody(subscriptionDeleteRequest, ctx.body).id),
    },
    {
      method: 'GET',
      path: '/wallet/chain-event/get',
      body: 'none',
      handler: async ({ app, query }) => events.getEvent(app.applicationId, parseQuery(idQuery, query).id),
    },
    {
      method: 'GET',
      path: '/wallet/chain-event/list',
      body: 'none',
      handler: async ({ app, query }) => events.listEvents(app.applicationId, parseQuery(chainEventListQuery, query)),
    },
    {
      method: 'GET',
      path: '/wallet/outflow/get',
      body: 'none',
      handler: async ({ app, query }) => events.getOutflow(app.applicationId, parseQuery(idQuery, query).id),
    },
    {
      method: 'GET',
      path: '/wallet/outflow/list',
      body: 'none',
      handler: async ({ app, query }) => events.listOutflows(app.applicationId, parseQuery(outflowListQuery, query)),
    },
  ];
}
