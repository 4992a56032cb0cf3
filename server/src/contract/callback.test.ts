import { expect } from 'chai';
import { callbackAttemptsQuery, callbackResendRequest, callbackTasksQuery, eventsQuery } from './callback';
import { parseBody, parseQuery } from './parse';
import { refusal, q } from './test-support';


describe('contract/callback', () => {
  it('events: after (at most 96) and limit (1 to 500, default 100)', () => {
    expect(parseQuery(eventsQuery, q(''))).to.deep.equal({ limit: 100 });
    expect(parseQuery(eventsQuery, q('after=abc&limit=500'))).to.deep.equal({ after: 'abc', limit: 500 });
    for (const [text, msg] of [
      ['limit=501', 'limit: must be at most 500'],
      ['limit=0', 'limit: must be at least 1'],
      ['limit=x', 'limit: must be an integer'],
      ['after=' + 'a'.repeat(97), 'after: must be at most 96 characters'],
      ['after=', 'after: must not be empty'],
      ['cursor=1', 'cursor: is not a parameter of this operation'],
    ]) expect(refusal(() => parseQuery(eventsQuery, q(text!))), text).to.equal(`INVALID_PARAMETER ${msg}`);
  });

  it('callback/tasks: filters, times and paging', () => {
    expect(parseQuery(callbackTasksQuery, q('bizType=WITHDRAW&bizId=0&status=FAILED&createTimeStart=2026-01-01T00:00:00&pageSize=5'))).to.deep.equal({
      bizType: 'WITHDRAW', bizId: 0, status: 'FAILED', createTimeStart: new Date('2026-01-01T00:00:00Z'), pageNo: 1, pageSize: 5,
    });
    for (const [text, msg] of [
      ['bizType=PAYOUT', 'bizType: must be one of RECHARGE, WITHDRAW, COLLECT, TRANSFER, CHAIN_EVENT'],
      ['status=DONE', 'status: must be one of WAITING, PROCESSING, SUCCESS, FAILED'],
      ['bizId=-1', 'bizId: must be at least 0'],
      ['createTimeStart=2026-01-02T00:00:00&createTimeEnd=2026-01-01T00:00:00', 'createTimeEnd: must not be before createTimeStart'],
      ['createTimeEnd=yesterday', 'createTimeEnd: must be an ISO 8601 local date-time YYYY-MM-DDThh:mm:ss (UTC)'],
      ['pageSize=201', 'pageSize: must be at most 200'],
    ]) expect(refusal(() => parseQuery(callbackTasksQuery, q(text!))), text).to.equal(`INVALID_PARAMETER ${msg}`);
  });

  it('callback/attempts: callbackTaskId required', () => {
    expect(parseQuery(callbackAttemptsQuery, q('callbackTaskId=4'))).to.deep.equal({ callbackTaskId: 4 });
    expect(refusal(() => parseQuery(callbackAttemptsQuery, q('')))).to.equal('INVALID_PARAMETER callbackTaskId: is required');
    expect(refusal(() => parseQuery(callbackAttemptsQuery, q('id=4')))).to.equal('INVALID_PARAMETER id: is not a parameter of this operation');
  });

  it('callback/resend: callbackTaskId a JSON integer from 1', () => {
    expect(parseBody(callbackResendRequest, { callbackTaskId: 4 })).to.deep.equal({ callbackTaskId: 4 });
    for (const [body, msg] of [
      [{}, 'callbackTaskId: is required'],
      [{ callbackTaskId: null }, 'callbackTaskId: is required'],
      [{ callbackTaskId: '4' }, 'callbackTaskId: must be an integer'],
      [{ callbackTaskId: 0 }, 'callbackTaskId: must be at least 1'],
      [{ callbackTaskId: 2 ** 53 }, 'callbackTaskId: must be an integer'],
      [{ callbackTaskId: 4, force: true }, 'force: is not a field of this operation'],
      [4, 'body: must be a JSON object'],
    ] as Array<[unknown, string]>) expect(refusal(() => parseBody(callbackResendRequest, body)), JSON.stringify(body)).to.equal(`INVALID_PARAMETER ${msg}`);
  });
});
