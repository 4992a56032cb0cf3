import type { z } from 'zod';
import { BIZ_TYPES } from '../apps/applications';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX, TASK_STATUSES } from '../callbacks/callback-service';
import { FEED_LIMIT_DEFAULT, FEED_LIMIT_MAX } from '../callbacks/event-feed';
import { body, paging, query, queryEnum, queryInt, queryLocalTime, queryString, requiredInt } from './fields';

/** Callbacks (docs/callbacks.md) and the events feed (docs/events-feed.md). */

const MAX_ID = Number.MAX_SAFE_INTEGER;

/** GET events: the page after a cursor. */
export const eventsQuery = query({
  after: queryString({ max: 96 }).optional(),
  limit: queryInt({ min: 1, max: FEED_LIMIT_MAX }).default(FEED_LIMIT_DEFAULT),
});
export type EventsQuery = z.input<typeof eventsQuery>;

/** GET callback/tasks: filters and paging; createTimeStart not after createTimeEnd. */
export const callbackTasksQuery = query({
  bizType: queryEnum(BIZ_TYPES).optional(),
  bizId: queryInt({ min: 0, max: MAX_ID }).optional(),
  status: queryEnum(TASK_STATUSES).optional(),
  createTimeStart: queryLocalTime().optional(),
  createTimeEnd: queryLocalTime().optional(),
  ...paging({ default: PAGE_SIZE_DEFAULT, max: PAGE_SIZE_MAX }),
}).refine((q) => !(q.createTimeStart && q.createTimeEnd && q.createTimeStart > q.createTimeEnd), { path: ['createTimeEnd'], error: 'must not be before createTimeStart' });
export type CallbackTasksQuery = z.input<typeof callbackTasksQuery>;

/** GET callback/attempts. */
export const callbackAttemptsQuery = query({
  callbackTaskId: queryInt({ min: 1, max: MAX_ID }),
});
export type CallbackAttemptsQuery = z.input<typeof callbackAttemptsQuery>;

/** POST callback/resend. */
export const callbackResendRequest = body({
  callbackTaskId: requiredInt({ min: 1, max: MAX_ID }),
});
export type CallbackResendRequest = z.infer<typeof callbackResendRequest>;
