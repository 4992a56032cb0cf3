import { expect } from 'chai';
import { chainEventListQuery, idQuery, outflowListQuery, subscriptionCreateRequest, subscriptionDeleteRequest, subscriptionListQuery, subscriptionUpdateRequest } from './chain-event';
import { parseBody, parseQuery } from './parse';
import { refusal, q } from './test-support';

const sub = { appSubscriptionNo: 's-1', chainCode: 'ETH', addresses: ['0xa'] };

describe('contract/chain-event', () => {
  it('subscription/create: the smallest body, and every field; minAmount stays the decimal string it was', () => {
    expect(parseBody(subscriptionCreateRequest, sub)).to.deep.equal(sub);
    const full = { ...sub, direction: 'OUT', minAmount: '0.000000000000000001', chainTokenIds: [1, 2147483647], contractAddresses: ['0xc'] };
    expect(parseBody(subscriptionCreateRequest, full)).to.deep.equal(full);
    expect(parseBody(subscriptionCreateRequest, { ...sub, direction: null, minAmount: null, chainTokenIds: null, contractAddresses: null })).to.include({ direction: null, minAmount: null });
  });

  it('subscription/create: refusals with the same words as always', () => {
    for (const [body, msg] of [
      [{ chainCode: 'ETH', addresses: ['a'] }, 'appSubscriptionNo: is required'],
      [{ ...sub, appSubscriptionNo: 'a b' }, 'appSubscriptionNo: must be 1 to 64 characters of letters, digits and _ - . :'],
      [{ appSubscriptionNo: 'a', addresses: ['a'] }, 'chainCode: is required'],
      [{ appSubscriptionNo: 'a', chainCode: 'ETH' }, 'addresses: is required'],
      [{ ...sub, addresses: null }, 'addresses: is required'],
      [{ ...sub, addresses: [] }, 'addresses: must have at least 1 entry'],
      [{ ...sub, addresses: 'x' }, 'addresses: must be an array of strings'],
      [{ ...sub, addresses: Array.from({ length: 1001 }, (_, i) => `a${i}`) }, 'addresses: must have at most 1000 entries'],
      [{ ...sub, addresses: ['a', ''] }, 'addresses[1]: must be a string of 1 to 256 characters'],
      [{ ...sub, addresses: ['a', 5] }, 'addresses[1]: must be a string of 1 to 256 characters'],
      [{ ...sub, addresses: ['x'.repeat(257)] }, 'addresses[0]: must be a string of 1 to 256 characters'],
      [{ ...sub, direction: 'UP' }, 'direction: must be one of IN, OUT, BOTH'],
      [{ ...sub, minAmount: '0' }, 'minAmount: must be a decimal string greater than 0 with at most 18 decimals, such as "0.5"'],
      [{ ...sub, minAmount: '0.0000000000000000001' }, 'minAmount: must be a decimal string greater than 0 with at most 18 decimals, such as "0.5"'],
      [{ ...sub, minAmount: 5 }, 'minAmount: must be a decimal string such as "0.5", or null'],
      [{ ...sub, chainTokenIds: [] }, 'chainTokenIds: must have at least 1 entry (omit it, or send null, for every token)'],
      [{ ...sub, chainTokenIds: 'x' }, 'chainTokenIds: must be an array of integers'],
      [{ ...sub, chainTokenIds: [1, 0] }, 'chainTokenIds[1]: must be a positive integer'],
      [{ ...sub, chainTokenIds: [2 ** 31] }, 'chainTokenIds[0]: must be a positive integer'],
      [{ ...sub, chainTokenIds: Array.from({ length: 101 }, (_, i) => i + 1) }, 'chainTokenIds: must have at most 100 entries'],
      [{ ...sub, contractAddresses: [] }, 'contractAddresses: must have at least 1 entry'],
      [{ ...sub, webhook: 'x' }, 'webhook: is not a field of this operation'],
    ] as Array<[unknown, string]>) expect(refusal(() => parseBody(subscriptionCreateRequest, body)), JSON.stringify(body).slice(0, 80)).to.equal(`INVALID_PARAMETER ${msg}`);
  });

  it('subscription/update: only the fields given; null clears minAmount and the token filters', () => {
    expect(parseBody(subscriptionUpdateRequest, { id: 3, minAmount: null })).to.deep.equal({ id: 3, minAmount: null });
    expect(parseBody(subscriptionUpdateRequest, { id: 3, chainTokenIds: null })).to.deep.equal({ id: 3, chainTokenIds: null });
    expect(parseBody(subscriptionUpdateRequest, { id: 3, status: 'PAUSED', addAddresses: ['a'], removeAddresses: ['b'] })).to.deep.equal({ id: 3, status: 'PAUSED', addAddresses: ['a'], removeAddresses: ['b'] });
    for (const [body, msg] of [
      [{ id: 3 }, 'body: names no change: give at least one of direction, chainTokenIds, contractAddresses, minAmount, status, addAddresses, removeAddresses'],
      [{ direction: 'IN' }, 'id: is required'],
      [{ id: 3, status: 'DELETED' }, 'status: must be ACTIVE or PAUSED (use subscription/delete to end a subscription)'],
      [{ id: 3, direction: null }, 'direction: must be one of IN, OUT, BOTH'],
      [{ id: 3, minAmount: '-1' }, 'minAmount: must be a decimal string greater than 0 with at most 18 decimals, such as "0.5"'],
      [{ id: 3, addAddresses: null }, 'addAddresses: must be an array of strings'],
      [{ id: 3, removeAddresses: [] }, 'removeAddresses: must have at least 1 entry'],
      [{ id: 3, direction: 'IN', extra: 1 }, 'extra: is not a field of this operation'],
    ] as Array<[unknown, string]>) expect(refusal(() => parseBody(subscriptionUpdateRequest, body)), JSON.stringify(body)).to.equal(`INVALID_PARAMETER ${msg}`);
  });

  it('subscription/delete: id only', () => {
    expect(parseBody(subscriptionDeleteRequest, { id: 1 })).to.deep.equal({ id: 1 });
    expect(refusal(() => parseBody(subscriptionDeleteRequest, { id: 1, force: true }))).to.equal('INVALID_PARAMETER force: is not a field of this operation');
    expect(refusal(() => parseBody(subscriptionDeleteRequest, { id: 'x' }))).to.equal('INVALID_PARAMETER id: must be an integer');
  });

  it('the get and list queries', () => {
    expect(parseQuery(idQuery, q('id=5'))).to.deep.equal({ id: 5 });
    expect(parseQuery(subscriptionListQuery, q('status=ACTIVE'))).to.deep.equal({ status: 'ACTIVE', pageNo: 1, pageSize: 20 });
    expect(parseQuery(chainEventListQuery, q('subscriptionId=2&direction=IN&status=CONFIRMED&txHash=0xab&address=0xa&pageNo=2'))).to.deep.equal({
      subscriptionId: 2, direction: 'IN', status: 'CONFIRMED', txHash: '0xab', address: '0xa', pageNo: 2, pageSize: 20,
    });
    expect(parseQuery(outflowListQuery, q('addressKind=FEE&chainCode=ETH'))).to.deep.equal({ addressKind: 'FEE', chainCode: 'ETH', pageNo: 1, pageSize: 20 });
    for (const [schema, text, msg] of [
      [idQuery, 'id=abc', 'id: must be an integer'],
      [idQuery, '', 'id: is required'],
      [subscriptionListQuery, 'pageSize=201', 'pageSize: must be at most 200'],
      [subscriptionListQuery, 'status=DELETED', 'status: must be one of ACTIVE, PAUSED'],
      [chainEventListQuery, 'direction=SIDEWAYS', 'direction: must be one of IN, OUT'],
      [chainEventListQuery, 'status=SEEN', 'status: must be one of PENDING, CONFIRMED, DROPPED'],
      [chainEventListQuery, 'txHash=' + 'a'.repeat(129), 'txHash: must be at most 128 characters'],
      [outflowListQuery, 'addressKind=COLD', 'addressKind: must be one of DEPOSIT, HOT, FEE'],
    ] as const) expect(refusal(() => parseQuery(schema, q(text))), text).to.equal(`INVALID_PARAMETER ${msg}`);
  });
});
