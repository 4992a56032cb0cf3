import type { z } from 'zod';
import { BIZ_TYPES } from '../apps/applications';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX, TASK_STATUSES } from '../callbacks/callback-service';
import { FEED_LIMIT_DEFAULT, FEED_LIMIT_MAX } from '../callbacks/event-feed';
import { body, paging, query, queryEnum, queryInt, queryLocalTime, queryString, requiredInt } from './fields';

/** Callbacks (docs/callbacks.md) and the events feed (docs/events-feed.md). */

const MAX_ID = Number.MAX_SAFE_INTEGER;

/** GET events: the page after a cursor. */
export const eventsQuery = query({
  after: queryString({ max: 96 }).optional().meta({ description: "Cursor from a previous page (`nextCursor`) or an event's `cursor`. Omitted: from the oldest retained event.", example: 'ZTEuMS43NDgwMDEuMTI' }),
  limit: queryInt({ min: 1, max: FEED_LIMIT_MAX }).default(FEED_LIMIT_DEFAULT).meta({ description: 'Events per page, at most 500.', example: 1 }),
});
export type EventsQuery = z.input<typeof eventsQuery>;

/** GET callback/tasks: filters and paging; createTimeStart not after createTimeEnd. */
export const callbackTasksQuery = query({
  bizType: queryEnum(BIZ_TYPES).optional().meta({ description: 'Omitted: all types.', example: 'WITHDRAW' }),
  bizId: queryInt({ min: 0, max: MAX_ID }).optional().meta({ description: 'Business record id.', example: 0 }),
  status: queryEnum(TASK_STATUSES).optional().meta({ example: 'SUCCESS' }),
  createTimeStart: queryLocalTime().optional().meta({ description: 'Lower bound of creation time, inclusive (UTC).', example: '2025-01-01T00:00:00' }),
  createTimeEnd: queryLocalTime().optional().meta({ description: 'Upper bound of creation time, inclusive (UTC).', example: '2035-12-31T23:59:59' }),
  ...paging({ default: PAGE_SIZE_DEFAULT, max: PAGE_SIZE_MAX }),
}).refine((q) => !(q.createTimeStart && q.createTimeEnd && q.createTimeStart > q.createTimeEnd), { path: ['createTimeEnd'], error: 'must not be before createTimeStart' });
export type CallbackTasksQuery = z.input<typeof callbackTasksQuery>;

/** GET callback/attempts. */
export const callbackAttemptsQuery = query({
  callbackTaskId: queryInt({ min: 1, max: MAX_ID }).meta({ description: 'A task of the calling application; any other id answers 1005001001.', example: 1 }),
});
export type CallbackAttemptsQuery = z.input<typeof callbackAttemptsQuery>;

/** POST callback/resend. */
export const callbackResendRequest = body({
  callbackTaskId: requiredInt({ min: 1, max: MAX_ID }),
}).meta({ id: 'CallbackResendRequest' });
export type CallbackResendRequest = z.infer<typeof callbackResendRequest>;
