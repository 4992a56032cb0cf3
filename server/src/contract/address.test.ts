import { expect } from 'chai';
import { addressBatchCreateRequest, addressCreateRequest, addressListByUserQuery, addressValidateRequest } from './address';
import { parseBatch, parseBody, parseQuery } from './parse';
import { refusal, q } from './test-support';


describe('contract/address', () => {
  it('create: accepts a chain code and a user id; the values are kept as given', () => {
    expect(parseBody(addressCreateRequest, { chainCode: 'ETH', externalUserId: 'user_1.a@b:c+d=e-f' })).to.deep.equal({ chainCode: 'ETH', externalUserId: 'user_1.a@b:c+d=e-f' });
    expect(parseBody(addressCreateRequest, { externalUserId: 'u', chainCode: 'POLYGON' })).to.deep.equal({ chainCode: 'POLYGON', externalUserId: 'u' });
  });

  it('create: refusals name the field with the same words as always', () => {
    const bad: Array<[unknown, string]> = [
      [{ chainCode: 'eth', externalUserId: 'u' }, 'chainCode: must be an upper-case chain code such as ETH'],
      [{ chainCode: 'ETH', externalUserId: '' }, 'externalUserId: must not be empty'],
      [{ chainCode: 'ETH', externalUserId: 'x'.repeat(65) }, 'externalUserId: must be at most 64 characters'],
      [{ chainCode: 'ETH', externalUserId: 'has space' }, 'externalUserId: must be 1 to 64 characters of letters, digits and _ - . @ : + ='],
      [{ chainCode: 'ETH', externalUserId: 123 }, 'externalUserId: must be a string'],
      [{ chainCode: ['ETH'], externalUserId: 'u' }, 'chainCode: must be a string'],
      [{ chainCode: 'ETH' }, 'externalUserId: is required'],
      [{ chainCode: null, externalUserId: 'u' }, 'chainCode: is required'],
      [{ chainCode: 'ETH', externalUserId: 'u', memo: 'x' }, 'memo: is not a field of this operation'],
      [[{ chainCode: 'ETH', externalUserId: 'u' }], 'body: must be a JSON object'],
      ['ETH', 'body: must be a JSON object'],
      // the first problem in field order
      [{ chainCode: 'eth', externalUserId: '', foo: 1 }, 'chainCode: must be an upper-case chain code such as ETH'],
    ];
    for (const [body, msg] of bad) expect(refusal(() => parseBody(addressCreateRequest, body)), JSON.stringify(body)).to.equal(`INVALID_PARAMETER ${msg}`);
  });

  it('a length limit counts UTF-16 units, as it always has (an emoji is two)', () => {
    expect(refusal(() => parseBody(addressValidateRequest, { chainCode: 'ETH', address: '\u{1F600}'.repeat(129) }))).to.equal('INVALID_PARAMETER address: must be at most 256 characters');
    expect(parseBody(addressValidateRequest, { chainCode: 'ETH', address: '\u{1F600}'.repeat(128) }).address).to.have.length(256);
  });

  it('batch-create: 1 to 100 entries; a bad entry is its own error named items[i], the others are read', () => {
    const read = parseBatch(addressBatchCreateRequest, addressCreateRequest, {
      items: [{ chainCode: 'ETH', externalUserId: 'a' }, { chainCode: 'ETH' }, { chainCode: 'BTC', externalUserId: 'b', x: 1 }, null],
    });
    expect(read.map((r) => (r.ok ? r.value : r.error.message))).to.deep.equal([
      { chainCode: 'ETH', externalUserId: 'a' },
      'items[1].externalUserId: is required',
      'items[2].x: is not a field of this operation',
      'items[3]: must be a JSON object',
    ]);
    const item = { chainCode: 'ETH', externalUserId: 'u' };
    expect(refusal(() => parseBatch(addressBatchCreateRequest, addressCreateRequest, { items: [] }))).to.equal('INVALID_PARAMETER items: must have at least 1 entries');
    expect(refusal(() => parseBatch(addressBatchCreateRequest, addressCreateRequest, { items: Array(101).fill(item) }))).to.equal('INVALID_PARAMETER items: must have at most 100 entries');
    expect(refusal(() => parseBatch(addressBatchCreateRequest, addressCreateRequest, { items: [item], extra: 1 }))).to.equal('INVALID_PARAMETER extra: is not a field of this operation');
    expect(refusal(() => parseBatch(addressBatchCreateRequest, addressCreateRequest, {}))).to.equal('INVALID_PARAMETER items: is required');
    expect(refusal(() => parseBatch(addressBatchCreateRequest, addressCreateRequest, { items: item }))).to.equal('INVALID_PARAMETER items: must be an array');
  });

  it('list-by-user: externalUserId required (reported after the other problems), chainCode optional', () => {
    expect(parseQuery(addressListByUserQuery, q('externalUserId=u&chainCode=ETH'))).to.deep.equal({ externalUserId: 'u', chainCode: 'ETH' });
    expect(parseQuery(addressListByUserQuery, q('externalUserId=u'))).to.deep.equal({ externalUserId: 'u' });
    const bad: Array<[string, string]> = [
      ['', 'externalUserId: is required'],
      ['externalUserId=a%20b', 'externalUserId: must be 1 to 64 characters of letters, digits and _ - . @ : + ='],
      ['externalUserId=', 'externalUserId: must not be empty'],
      ['externalUserId=u&externalUserId=v', 'externalUserId: must be given once'],
      ['externalUserId=u&page=2', 'page: is not a parameter of this operation'],
      ['chainCode=eth', 'chainCode: must be an upper-case chain code such as ETH'],
      ['page=2', 'page: is not a parameter of this operation'],
    ];
    for (const [text, msg] of bad) expect(refusal(() => parseQuery(addressListByUserQuery, q(text))), text).to.equal(`INVALID_PARAMETER ${msg}`);
  });

  it('validate: memo optional (null is absent), each string at most 256', () => {
    expect(parseBody(addressValidateRequest, { chainCode: 'XRP', address: 'r1', memo: '42' })).to.deep.equal({ chainCode: 'XRP', address: 'r1', memo: '42' });
    expect(parseBody(addressValidateRequest, { chainCode: 'XRP', address: 'r1', memo: null }).memo).to.equal(null);
    expect(refusal(() => parseBody(addressValidateRequest, { chainCode: 'ETH' }))).to.equal('INVALID_PARAMETER address: is required');
    expect(refusal(() => parseBody(addressValidateRequest, { chainCode: 'ETH', address: 5 }))).to.equal('INVALID_PARAMETER address: must be a string');
    expect(refusal(() => parseBody(addressValidateRequest, { chainCode: 'ETH', address: 'a', memo: 'm'.repeat(257) }))).to.equal('INVALID_PARAMETER memo: must be at most 256 characters');
    expect(refusal(() => parseBody(addressValidateRequest, { chainCode: 'ETH', address: 'a', memo: 7 }))).to.equal('INVALID_PARAMETER memo: must be a string');
  });
});
