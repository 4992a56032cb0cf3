import type { RechargeService } from '../deposits/recharge-service';
import { rechargeGetQuery, rechargeListQuery } from '../contract/recharge';
import { parseQuery } from '../contract/parse';
import type { ApiRoute } from './routes';

export function rechargeRoutes(recharges: RechargeService): ApiRoute[] {
  return [
    {
      method: 'GET',
      path: '/wallet/recharge/get',
      body: 'none',
      handler: async ({ app, query }) => recharges.get(app.applicationId, parseQuery(rechargeGetQuery, query).id),
    },
    {
      method: 'GET',
      path: '/wallet/recharge/list',
      body: 'none',
      handler: async ({ app, query }) => recharges.list(app.applicationId, parseQuery(rechargeListQuery, query)),
    },
  ];
}
