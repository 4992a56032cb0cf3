import { invalidParameter } from '@wcs/core';
import { BIZ_TYPES } from '../apps/applications';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX, TASK_STATUSES, type CallbackService } from '../callbacks/callback-service';
import { FEED_LIMIT_DEFAULT, FEED_LIMIT_MAX, type EventFeed } from '../callbacks/event-feed';
import { BodyReader } from './body';
import { localTimeParam as localTime } from './query';
import type { ApiRoute } from './routes';

const MAX_ID = Number.MAX_SAFE_INTEGER;

export function callbackRoutes(callbacks: CallbackService, feed: EventFeed): ApiRoute[] {
  return [
    {
      // the events feed (docs/events-feed.md)
      method: 'GET',
      path: '/wallet/events',
      body: 'none',
      handler: async ({ app, query }) => {
        const after = query.string('after', { max: 96 });
        const limit = query.int('limit', { min: 1, max: FEED_LIMIT_MAX }) ?? FEED_LIMIT_DEFAULT;
        query.noOthers();
        return feed.page(app.applicationId, after, limit);
      },
    },
    {
      method: 'GET',
      path: '/wallet/callback/tasks',
      body: 'none',
      handler: async ({ app, query }) => {
        const bizType = query.oneOf('bizType', BIZ_TYPES);
        const bizId = query.int('bizId', { min: 0, max: MAX_ID });
        const status = query.oneOf('status', TASK_STATUSES);
        const createTimeStart = localTime(query, 'createTimeStart');
        const createTimeEnd = localTime(query, 'createTimeEnd');
        const pageNo = query.int('pageNo', { min: 1, max: 1_000_000 }) ?? 1;
        const pageSize = query.int('pageSize', { min: 1, max: PAGE_SIZE_MAX }) ?? PAGE_SIZE_DEFAULT;
        query.noOthers();
        if (createTimeStart && createTimeEnd && createTimeStart > createTimeEnd) throw invalidParameter('createTimeEnd', 'must not be before createTimeStart');
        return callbacks.listTasks(app.applicationId, { bizType, bizId, status, createTimeStart, createTimeEnd, pageNo, pageSize });
      },
    },
    {
      method: 'GET',
      path: '/wallet/callback/attempts',
      body: 'none',
      handler: async ({ app, query }) => {
        const id = query.int('callbackTaskId', { min: 1, max: MAX_ID });
        query.noOthers();
        if (id === undefined) throw invalidParameter('callbackTaskId', 'is required');
        return callbacks.attempts(app.applicationId, id);
      },
    },
    {
      method: 'POST',
      path: '/wallet/callback/resend',
      body: 'json',
      handler: async ({ app, body }) => {
        const b = new BodyReader(body);
        const id = b.int('callbackTaskId', { required: true, min: 1, max: MAX_ID });
        b.noOthers();
        return callbacks.resend(null, app.applicationId, id); // the merchant itself: not an operator's change, not audited
      },
    },
  ];
}
