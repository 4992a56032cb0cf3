import { expect } from 'chai';
import { parseBatch, parseBody, parseQuery } from './parse';
import { withdrawBatchCreateRequest, withdrawCreateRequest, withdrawGetQuery } from './withdraw';
import { refusal, q } from './test-support';

const item = { appOrderNo: 'o-1', chainCode: 'ETH', chainTokenId: 10200, toAddress: '0xabc', amount: '12.500000000000000001' };

describe('contract/withdraw', () => {
  it('create: the amount stays the exact decimal string it was sent as; optional fields absent, null or given', () => {
    expect(parseBody(withdrawCreateRequest, item)).to.deep.equal(item);
    const full = { ...item, toMemo: '', callbackUrl: 'https://m.example/cb', remark: 'r' };
    expect(parseBody(withdrawCreateRequest, full)).to.deep.equal(full);
    expect(parseBody(withdrawCreateRequest, { ...item, toMemo: null, callbackUrl: null, remark: null })).to.include({ toMemo: null, callbackUrl: null, remark: null });
    expect(parseBody(withdrawCreateRequest, { ...item, amount: '123456789012345678901234567890.123456789012345678' }).amount).to.equal('123456789012345678901234567890.123456789012345678');
  });

  it('create: refusals, in field order, with the same words as always', () => {
    const bad: Array<[unknown, string]> = [
      [{ ...item, appOrderNo: undefined }, 'INVALID_PARAMETER appOrderNo: is required'],
      [{ ...item, appOrderNo: 'a b' }, 'INVALID_PARAMETER appOrderNo: must be 1 to 64 characters of letters, digits and _ - . :'],
      [{ ...item, appOrderNo: 'x'.repeat(65) }, 'INVALID_PARAMETER appOrderNo: must be at most 64 characters'],
      [{ ...item, chainCode: 'Eth' }, 'INVALID_PARAMETER chainCode: must be an upper-case chain code such as ETH'],
      [{ ...item, chainTokenId: '10200' }, 'INVALID_PARAMETER chainTokenId: must be an integer'],
      [{ ...item, chainTokenId: 1.5 }, 'INVALID_PARAMETER chainTokenId: must be an integer'],
      [{ ...item, chainTokenId: 2 ** 53 }, 'INVALID_PARAMETER chainTokenId: must be an integer'],
      [{ ...item, chainTokenId: 0 }, 'INVALID_PARAMETER chainTokenId: must be at least 1'],
      [{ ...item, chainTokenId: 2 ** 31 }, 'INVALID_PARAMETER chainTokenId: must be at most 2147483647'],
      [{ ...item, toAddress: '' }, 'INVALID_PARAMETER toAddress: must not be empty'],
      [{ ...item, toMemo: 'm'.repeat(257) }, 'INVALID_PARAMETER toMemo: must be at most 256 characters'],
      [{ ...item, amount: 12.5 }, 'WITHDRAW_AMOUNT_INVALID amount must be a decimal string such as "12.5", not a JSON number'],
      [{ ...item, amount: null }, 'INVALID_PARAMETER amount: is required'],
      [{ ...item, amount: true }, 'INVALID_PARAMETER amount: must be a string'],
      [{ ...item, amount: '' }, 'INVALID_PARAMETER amount: must not be empty'],
      [{ ...item, amount: '1'.repeat(101) }, 'INVALID_PARAMETER amount: must be at most 100 characters'],
      [{ ...item, callbackUrl: 'x'.repeat(2049) }, 'INVALID_PARAMETER callbackUrl: must be at most 2048 characters'],
      [{ ...item, remark: 5 }, 'INVALID_PARAMETER remark: must be a string'],
      [{ ...item, memo: 'x' }, 'INVALID_PARAMETER memo: is not a field of this operation'],
      [{ ...item, appOrderNo: 'a b', amount: 5 }, 'INVALID_PARAMETER appOrderNo: must be 1 to 64 characters of letters, digits and _ - . :'],
      [{ ...item, amount: 5, remark: 5 }, 'WITHDRAW_AMOUNT_INVALID amount must be a decimal string such as "12.5", not a JSON number'],
      [null, 'INVALID_PARAMETER body: must be a JSON object'],
    ];
    for (const [body, msg] of bad) expect(refusal(() => parseBody(withdrawCreateRequest, body)), JSON.stringify(body)).to.equal(msg);
  });

  it('remark: at most 200 characters counted in code points (an emoji is one)', () => {
    expect(parseBody(withdrawCreateRequest, { ...item, remark: '\u{1F600}'.repeat(200) }).remark).to.have.length(400);
    expect(refusal(() => parseBody(withdrawCreateRequest, { ...item, remark: '\u{1F600}'.repeat(201) }))).to.equal('INVALID_PARAMETER remark: must be at most 200 characters');
  });

  it('batch-create: every item read on its own, errors named items[i] (the amount one keeps its code)', () => {
    const read = parseBatch(withdrawBatchCreateRequest, withdrawCreateRequest, { items: [item, { ...item, amount: 1 }, { ...item, chainTokenId: undefined }, 'x'] });
    expect(read.map((r) => (r.ok ? r.value.amount : `${r.error.errorName} ${r.error.message}`))).to.deep.equal([
      '12.500000000000000001',
      'WITHDRAW_AMOUNT_INVALID items[1].amount must be a decimal string such as "12.5", not a JSON number',
      'INVALID_PARAMETER items[2].chainTokenId: is required',
      'INVALID_PARAMETER items[3]: must be a JSON object',
    ]);
    expect(read.map((r) => (r.ok ? null : r.error.details))).to.deep.equal([null, { field: 'amount' }, { field: 'items[2].chainTokenId' }, { field: 'items[3]' }]);
    const fifty = parseBatch(withdrawBatchCreateRequest, withdrawCreateRequest, { items: Array.from({ length: 50 }, (_, i) => ({ ...item, appOrderNo: `o-${i}` })) });
    expect(fifty.every((r) => r.ok)).to.equal(true);
    expect(refusal(() => parseBatch(withdrawBatchCreateRequest, withdrawCreateRequest, { items: Array(101).fill(item) }))).to.equal('INVALID_PARAMETER items: must have at most 100 entries');
    expect(refusal(() => parseBatch(withdrawBatchCreateRequest, withdrawCreateRequest, { items: [] }))).to.equal('INVALID_PARAMETER items: must have at least 1 entries');
    expect(refusal(() => parseBatch(withdrawBatchCreateRequest, withdrawCreateRequest, { items: [item], extra: 1 }))).to.equal('INVALID_PARAMETER extra: is not a field of this operation');
    expect(refusal(() => parseBatch(withdrawBatchCreateRequest, withdrawCreateRequest, [item]))).to.equal('INVALID_PARAMETER body: must be a JSON object');
  });

  it('get: exactly one of id and appOrderNo', () => {
    expect(parseQuery(withdrawGetQuery, q('id=12'))).to.deep.equal({ id: 12 });
    expect(parseQuery(withdrawGetQuery, q('appOrderNo=o-1'))).to.deep.equal({ appOrderNo: 'o-1' });
    const bad: Array<[string, string]> = [
      ['', 'id: give exactly one of id and appOrderNo'],
      ['id=1&appOrderNo=o-1', 'id: give exactly one of id and appOrderNo'],
      ['id=abc', 'id: must be an integer'],
      ['id=0', 'id: must be at least 1'],
      ['id=1&id=2', 'id: must be given once'],
      ['appOrderNo=a%20b', 'appOrderNo: must be 1 to 64 characters of letters, digits and _ - . :'],
      ['id=1&x=1', 'x: is not a parameter of this operation'],
    ];
    for (const [text, msg] of bad) expect(refusal(() => parseQuery(withdrawGetQuery, q(text))), text).to.equal(`INVALID_PARAMETER ${msg}`);
  });
});
