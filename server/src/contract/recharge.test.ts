import { expect } from 'chai';
import { parseQuery } from './parse';
import { rechargeGetQuery, rechargeListQuery } from './recharge';
import { refusal, q } from './test-support';


describe('contract/recharge', () => {
  it('get: id required, a positive integer of at most 15 digits', () => {
    expect(parseQuery(rechargeGetQuery, q('id=999999999999999'))).to.deep.equal({ id: 999999999999999 });
    for (const [text, msg] of [
      ['', 'id: is required'],
      ['id=abc', 'id: must be an integer'],
      ['id=1.5', 'id: must be an integer'],
      ['id=1234567890123456', 'id: must be an integer'],
      ['id=-1', 'id: must be at least 1'],
      ['id=', 'id: must not be empty'],
      ['id=1&x=1', 'x: is not a parameter of this operation'],
      ['x=1', 'x: is not a parameter of this operation'],
    ]) expect(refusal(() => parseQuery(rechargeGetQuery, q(text!))), text).to.equal(`INVALID_PARAMETER ${msg}`);
  });

  it('list: defaults, filters and times read as UTC dates', () => {
    expect(parseQuery(rechargeListQuery, q(''))).to.deep.equal({ pageNo: 1, pageSize: 20 });
    expect(parseQuery(rechargeListQuery, q('startTime=2026-01-01T00:00:00&endTime=2026-01-02T00:00:00&txStatus=SETTLED&chainCode=ETH&address=0xa&externalUserId=u&pageNo=3&pageSize=200'))).to.deep.equal({
      startTime: new Date('2026-01-01T00:00:00Z'), endTime: new Date('2026-01-02T00:00:00Z'), txStatus: 'SETTLED', chainCode: 'ETH', address: '0xa', externalUserId: 'u', pageNo: 3, pageSize: 200,
    });
  });

  it('list: refusals with the same words as always', () => {
    for (const [text, msg] of [
      ['txStatus=DONE', 'txStatus: must be one of PENDING, CONFIRMED, SETTLED, FAILED'],
      ['startTime=2026-01-02T00:00:00&endTime=2026-01-01T00:00:00', 'endTime: must not be before startTime'],
      ['startTime=2026-13-01T00:00:00', 'startTime: must be an ISO 8601 local date-time YYYY-MM-DDThh:mm:ss (UTC)'],
      ['startTime=2026-01-01T00:00:00Z', 'startTime: must be at most 19 characters'],
      ['pageSize=201', 'pageSize: must be at most 200'],
      ['pageNo=0', 'pageNo: must be at least 1'],
      ['pageNo=1000001', 'pageNo: must be at most 1000000'],
      ['chainCode=eth', 'chainCode: must be an upper-case chain code such as ETH'],
      ['address=' + 'a'.repeat(129), 'address: must be at most 128 characters'],
      ['externalUserId=' + 'u'.repeat(65), 'externalUserId: must be at most 64 characters'],
      ['chainCode=ETH&chainCode=BTC', 'chainCode: must be given once'],
      // unknown parameters come before a check across parameters
      ['startTime=2026-01-02T00:00:00&endTime=2026-01-01T00:00:00&y=1', 'y: is not a parameter of this operation'],
    ]) expect(refusal(() => parseQuery(rechargeListQuery, q(text!))), text).to.equal(`INVALID_PARAMETER ${msg}`);
  });
});
