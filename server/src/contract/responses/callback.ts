import { z } from 'zod';
import { localTime } from './common';

/** Callbacks (docs/callbacks.md): the task and attempt records of callback/list and callback/attempts, and the acknowledgement a merchant answers a callback with. */

export const CallbackTask = z.strictObject({
  id: z.int().describe('Task id; used for attempt history and resend.'),
  bizType: z.enum(['RECHARGE', 'WITHDRAW', 'COLLECT', 'TRANSFER', 'CHAIN_EVENT']),
  bizId: z.int().describe('Id of the related business record (0 for test events).'),
  url: z.string().describe('Target URL of the push; "" while no URL is configured for the bizType.'),
  status: z.enum(['WAITING', 'PROCESSING', 'SUCCESS', 'FAILED']),
  retryTimes: z.int().describe('Retries made so far, not counting the first delivery.'),
  maxRetryTimes: z.int().describe('Maximum retries; 10.'),
  nextRetryTime: localTime.nullable().describe('Planned next retry (UTC); null when terminal, queued for immediate delivery or being delivered.'),
  lastResponseSummary: z.string().nullable().describe('Last response body, at most 1000 characters, then ...[truncated].'),
  lastError: z.string().nullable(),
  createTime: localTime,
  updateTime: localTime,
}).meta({ id: 'CallbackTask' });
export type CallbackTask = z.infer<typeof CallbackTask>;

export const CallbackAttempt = z.strictObject({
  id: z.int(),
  callbackTaskId: z.int(),
  attemptNo: z.int().min(1).describe('1 = first delivery, 2 and above = retries (numbering continues after a resend).'),
  requestHeadersSummary: z.record(z.string(), z.string()).describe('Headers sent: :method and :url pseudo-entries, Content-Type, X-Api-Key (masked), X-Timestamp, X-Nonce, X-Signature (masked).'),
  requestBodySummary: z.string().nullable(),
  requestBodyLength: z.int(),
  requestBodySha256: z.string().regex(/^[0-9a-f]{64}$/),
  responseStatus: z.int().nullable(),
  responseContentType: z.string().nullable(),
  responseBodySummary: z.string().nullable(),
  responseBodyLength: z.int().nullable().describe('Bytes read; at most WCS_CALLBACK_MAX_RESPONSE_BYTES (64 KiB by default).'),
  responseBodySha256: z.string().nullable(),
  accepted: z.boolean(),
  latencyMs: z.int(),
  errorReason: z.string().nullable(),
  nextRetryTime: localTime.nullable(),
  createTime: localTime,
}).meta({ id: 'CallbackAttempt' });
export type CallbackAttempt = z.infer<typeof CallbackAttempt>;

export const CallbackAck = z.union([
  z.object({
    code: z.literal([0, "0"]),
  }),
  z.string().regex(/^\s*("\s*)?([Ss][Uu][Cc][Cc][Ee][Ss][Ss]|[Oo][Kk])(\s*")?\s*$/),
]).meta({ id: 'CallbackAck', description: 'A body that acknowledges a callback: a JSON object whose code is 0 (other members are ignored), or the word success or ok in any case, surrounding whitespace allowed, bare or as a JSON string. A JSON object with any other code is a rejection, whatever else it says; marker words inside longer text are not an ACK.' });
export type CallbackAck = z.infer<typeof CallbackAck>;
