/**
 * What an attempt's outcome does to its task (the spec's "Retry": nextRetryTime = now + 60 x
 * 2^retryTimes seconds, at most maxRetryTimes retries), as a pure decision.
 */
export interface TaskCounters {
  /** Retries made before this attempt. */
  readonly retryTimes: number;
  readonly maxRetryTimes: number;
  /** This attempt is a retry (the task had failed before): it counts as one. */
  readonly isRetry: boolean;
}

export type AttemptOutcome =
  | { readonly status: 'SUCCESS'; readonly retryTimes: number; readonly nextRetryTime: null }
  /** A retry is queued at nextRetryTime. */
  | { readonly status: 'FAILED'; readonly retryTimes: number; readonly nextRetryTime: Date }
  /** No retry left: the task stays FAILED until resent. */
  | { readonly status: 'FAILED'; readonly retryTimes: number; readonly nextRetryTime: null; readonly exhausted: true };

export function planAfterAttempt(task: TaskCounters, accepted: boolean, now: Date, retryBaseSeconds: number): AttemptOutcome {
  const retryTimes = task.isRetry ? task.retryTimes + 1 : task.retryTimes;
  if (accepted) return { status: 'SUCCESS', retryTimes, nextRetryTime: null };
  if (retryTimes >= task.maxRetryTimes) return { status: 'FAILED', retryTimes, nextRetryTime: null, exhausted: true };
  return { status: 'FAILED', retryTimes, nextRetryTime: new Date(now.getTime() + retryBaseSeconds * 1000 * 2 ** retryTimes) };
}
