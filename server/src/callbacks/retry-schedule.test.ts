import { expect } from 'chai';
import { planAfterAttempt } from './retry-schedule';

describe('callback retry schedule (pure)', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const at = (s: number) => new Date(now.getTime() + s * 1000);

  it('an ACK settles the task; a retry that succeeds counts as a retry', () => {
    expect(planAfterAttempt({ retryTimes: 0, maxRetryTimes: 10, isRetry: false }, true, now, 60)).to.deep.equal({ status: 'SUCCESS', retryTimes: 0, nextRetryTime: null });
    expect(planAfterAttempt({ retryTimes: 2, maxRetryTimes: 10, isRetry: true }, true, now, 60)).to.deep.equal({ status: 'SUCCESS', retryTimes: 3, nextRetryTime: null });
  });

  it('a failure queues the next retry at now + 60 x 2^retryTimes seconds', () => {
    expect(planAfterAttempt({ retryTimes: 0, maxRetryTimes: 10, isRetry: false }, false, now, 60).nextRetryTime).to.deep.equal(at(60));
    expect(planAfterAttempt({ retryTimes: 0, maxRetryTimes: 10, isRetry: true }, false, now, 60)).to.deep.equal({ status: 'FAILED', retryTimes: 1, nextRetryTime: at(120) });
    expect(planAfterAttempt({ retryTimes: 8, maxRetryTimes: 10, isRetry: true }, false, now, 60)).to.deep.equal({ status: 'FAILED', retryTimes: 9, nextRetryTime: at(60 * 512) });
  });

  it('the tenth failed retry leaves the task FAILED with nothing queued', () => {
    expect(planAfterAttempt({ retryTimes: 9, maxRetryTimes: 10, isRetry: true }, false, now, 60)).to.deep.equal({ status: 'FAILED', retryTimes: 10, nextRetryTime: null, exhausted: true });
  });
});
