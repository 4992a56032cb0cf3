import { z } from 'zod';
import { callbackAttemptsQuery, callbackResendRequest, callbackTasksQuery, eventsQuery } from '../../callback';
import { FeedPage } from '../../events';
import { CallbackAttempt, CallbackTask } from '../../responses/callback';
import type { OperationDoc } from '../document';

/** The operations of callbacks and the events feed. */
export const CALLBACK_OPERATIONS: readonly OperationDoc[] = [
  {
    method: 'get',
    path: '/api/v1/wallet/callback/tasks',
    operationId: 'listCallbackTasks',
    summary: 'Pages through the callback tasks of the calling application, newest first',
    signed: true,
    query: callbackTasksQuery,
    data: z.object({
      list: z.array(CallbackTask),
      total: z.int(),
    }),
    business: true,
    description200: 'Envelope with data = {list, total}. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "page": {
        "summary": "One page of tasks",
        "value": {
          "code": 0,
          "data": {
            "list": [
              {
                "id": 1,
                "bizType": "WITHDRAW",
                "bizId": 0,
                "url": "https://merchant.example.com/wcs/callbacks",
                "status": "SUCCESS",
                "retryTimes": 0,
                "maxRetryTimes": 10,
                "nextRetryTime": null,
                "lastResponseSummary": "success",
                "lastError": null,
                "createTime": "2025-01-15T08:30:00",
                "updateTime": "2025-01-15T08:30:12"
              }
            ],
            "total": 1
          },
          "msg": ""
        }
      }
    },
  },
  {
    method: 'get',
    path: '/api/v1/wallet/callback/attempts',
    operationId: 'listCallbackAttempts',
    summary: 'The delivery attempts of one callback task, in attempt order',
    signed: true,
    query: callbackAttemptsQuery,
    data: z.array(CallbackAttempt),
    business: true,
    description200: 'Envelope with data = array of CallbackAttempt. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "attempts": {
        "summary": "One accepted delivery",
        "value": {
          "code": 0,
          "data": [
            {
              "id": 1,
              "callbackTaskId": 1,
              "attemptNo": 1,
              "requestHeadersSummary": {
                ":method": "POST",
                ":url": "https://merchant.example.com/wcs/callbacks",
                "Content-Type": "application/json",
                "X-Api-Key": "pk_t****9c1e",
                "X-Timestamp": "1736929800000",
                "X-Nonce": "6f1c2a9e-3b7d-4c55-9a0e-2d41b8f7c301",
                "X-Signature": "3f9a****b21c"
              },
              "requestBodySummary": "{\"event\":\"test\",\"applicationId\":1,\"bizType\":\"WITHDRAW\"}",
              "requestBodyLength": 56,
              "requestBodySha256": "9f2c7e5b1d4a3f6e8c0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a4c",
              "responseStatus": 200,
              "responseContentType": "text/plain",
              "responseBodySummary": "success",
              "responseBodyLength": 7,
              "responseBodySha256": "a5a09f4bd0d5a6e1c1a33a4f0b2b7e1e9ab9a27b3e8a8b3c5d3d0c1f25e3b1a0",
              "accepted": true,
              "latencyMs": 12,
              "errorReason": null,
              "nextRetryTime": null,
              "createTime": "2025-01-15T08:30:12"
            }
          ],
          "msg": ""
        }
      }
    },
  },
  {
    method: 'post',
    path: '/api/v1/wallet/callback/resend',
    operationId: 'resendCallback',
    summary: 'Re-queues a FAILED (also exhausted) or SUCCESS task with a fresh retry budget',
    description: "WAITING or PROCESSING tasks answer 1005001002; unknown or another application's task 1005001001; a task whose bizType has no callback URL configured 1002001003.",
    signed: true,
    body: callbackResendRequest,
    bodyExamples: {
      "task": {
        "summary": "Resend task 1",
        "value": {
          "callbackTaskId": 1
        }
      }
    },
    data: CallbackTask,
    business: true,
    description200: 'Envelope with data = the re-queued CallbackTask (status WAITING). HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "requeued": {
        "summary": "The task, queued again",
        "value": {
          "code": 0,
          "data": {
            "id": 1,
            "bizType": "WITHDRAW",
            "bizId": 0,
            "url": "https://merchant.example.com/wcs/callbacks",
            "status": "WAITING",
            "retryTimes": 0,
            "maxRetryTimes": 10,
            "nextRetryTime": null,
            "lastResponseSummary": "success",
            "lastError": null,
            "createTime": "2025-01-15T08:30:00",
            "updateTime": "2025-01-15T09:00:00"
          },
          "msg": ""
        }
      },
      "taskNotFound": {
        "summary": "Business error: no such task of this application",
        "value": {
          "code": 1005001001,
          "data": null,
          "msg": "Callback task not found"
        }
      }
    },
  },
  {
    method: 'get',
    path: '/api/v1/wallet/events',
    operationId: 'listEvents',
    summary: 'The events feed: every callback event of the calling application after a cursor, in commit order, gap-free',
    description: "Lists the application's callback events (the same events its webhooks carry, delivered or not) after the opaque cursor `after`, oldest first. An event is listed only once every transaction that began before the one that wrote it has ended, so an event can never appear behind a cursor a client already passed, and an event of a rolled-back change never appears. Events are kept for the retention period (WCS_EVENTS_RETENTION_DAYS, default 90 days). Errors: 1005002001 EVENT_CURSOR_INVALID, 1005002002 EVENT_CURSOR_FOREIGN (a cursor issued to another application), 1005002003 EVENT_CURSOR_EXPIRED (events after the cursor were removed by retention: start again without `after` and reconcile). See docs/events-feed.md.",
    signed: true,
    query: eventsQuery,
    data: FeedPage,
    business: true,
    description200: 'Envelope with data = {list, nextCursor, hasMore}. HTTP 200 also carries business errors (code of the BUSINESS class, data null; docs/errors.md).',
    examples: {
      "page": {
        "summary": "One event (a test event), more listable",
        "value": {
          "code": 0,
          "data": {
            "list": [
              {
                "id": 12,
                "cursor": "ZTEuMS43NDgwMDEuMTI",
                "bizType": "WITHDRAW",
                "bizId": 0,
                "createTime": "2025-01-15T09:00:05",
                "payload": {
                  "event": "test",
                  "applicationId": 1,
                  "bizType": "WITHDRAW",
                  "message": "Test callback from the wallet custody service: verify the signature, then answer HTTP 200 with {\"code\":0}, \"success\" or \"ok\".",
                  "createTime": "2025-01-15T09:00:05"
                }
              }
            ],
            "nextCursor": "ZTEuMS43NDgwMDEuMTI",
            "hasMore": true
          },
          "msg": ""
        }
      },
      "foreign": {
        "summary": "Business error: the cursor was issued to another application",
        "value": {
          "code": 1005002002,
          "data": null,
          "msg": "The cursor was issued to another application"
        }
      }
    },
  },
];
