import type { CallbackService } from '../callbacks/callback-service';
import type { EventFeed } from '../callbacks/event-feed';
import { callbackAttemptsQuery, callbackResendRequest, callbackTasksQuery, eventsQuery } from '../contract/callback';
import { parseBody, parseQuery } from '../contract/parse';
import type { ApiRoute } from './routes';

export function callbackRoutes(callbacks: CallbackService, feed: EventFeed): ApiRoute[] {
  return [
    {
      // the events feed (docs/events-feed.md)
      method: 'GET',
      path: '/wallet/events',
      body: 'none',
      handler: async ({ app, query }) => {
        const { after, limit } = parseQuery(eventsQuery, query);
        return feed.page(app.applicationId, after, limit);
      },
    },
    {
      method: 'GET',
      path: '/wallet/callback/tasks',
      body: 'none',
      handler: async ({ app, query }) => callbacks.listTasks(app.applicationId, parseQuery(callbackTasksQuery, query)),
    },
    {
      method: 'GET',
      path: '/wallet/callback/attempts',
      body: 'none',
      handler: async ({ app, query }) => callbacks.attempts(app.applicationId, parseQuery(callbackAttemptsQuery, query).callbackTaskId),
    },
    {
      method: 'POST',
      path: '/wallet/callback/resend',
      body: 'json',
      handler: async ({ app, body }) => {
        const { callbackTaskId } = parseBody(callbackResendRequest, body);
        return callbacks.resend(null, app.applicationId, callbackTaskId); // the merchant itself: not an operator's change, not audited
      },
    },
  ];
}
