import { expect } from 'chai';
import { z } from 'zod';
import { WcsError } from '@wcs/core';
import { AMOUNT_IS_A_NUMBER, body, query, queryInt, queryString, requiredArray, requiredString } from './fields';
import { fieldName, issueError, parseBatch, parseBody, parseQuery, readBody } from './parse';
import { refusal } from './test-support';

/** The error a call throws, as "<errorName> <message>" (the envelope's code and msg). */

describe('contract/parse: zod issues to the API errors', () => {
  it('names fields from the issue path: nested entries, arrays, the body itself', () => {
    expect(fieldName('', [])).to.equal('body');
    expect(fieldName('', ['chainCode'])).to.equal('chainCode');
    expect(fieldName('', ['items', 3, 'externalUserId'])).to.equal('items[3].externalUserId');
    expect(fieldName('', ['addresses', 2])).to.equal('addresses[2]');
    expect(fieldName('items[3]', [])).to.equal('items[3]');
    expect(fieldName('items[3]', ['amount'])).to.equal('items[3].amount');
  });

  it('the first problem in field order is the answer, with its field and the schema message; details.field names it', () => {
    const s = body({ a: requiredString({ max: 3 }), b: requiredString() });
    expect(refusal(() => parseBody(s, { a: 'abcd' }))).to.equal('INVALID_PARAMETER a: must be at most 3 characters');
    expect(refusal(() => parseBody(s, { a: 'ab', c: 1, b: 5 }))).to.equal('INVALID_PARAMETER b: must be a string');
    expect(refusal(() => parseBody(s, { a: 'ab', b: 'x', c: 1, d: 2 }))).to.equal('INVALID_PARAMETER c: is not a field of this operation');
    expect(refusal(() => parseBody(s, [1]))).to.equal('INVALID_PARAMETER body: must be a JSON object');
    const r = readBody(s, { b: 'x' });
    expect(r.ok).to.equal(false);
    if (!r.ok) expect(r.error.details).to.deep.equal({ field: 'a' });
  });

  it('an unknown field of a nested entry is named with its entry', () => {
    const s = body({ items: requiredArray(body({ x: requiredString() }), 1, 2) });
    const r = s.safeParse({ items: [{ x: 'a', y: 1 }] });
    expect(r.success).to.equal(false);
    expect(issueError(r.error!.issues[0]!).message).to.equal('items[0].y: is not a field of this operation');
  });

  it('a JSON number where an amount belongs keeps its own code and wording, naming the bare field in details', () => {
    const s = body({ amount: z.string({ error: AMOUNT_IS_A_NUMBER }) });
    const r = readBody(s, { amount: 5 }, 'items[2]');
    expect(r.ok).to.equal(false);
    if (!r.ok) expect([r.error.errorName, r.error.message, r.error.details]).to.deep.equal(['WITHDRAW_AMOUNT_INVALID', 'items[2].amount must be a decimal string such as "12.5", not a JSON number', { field: 'amount' }]);
    expect(readBody(s, { amount: '1' })).to.deep.equal({ ok: true, value: { amount: '1' } });
  });

  it('a query reports a missing required parameter after every other problem', () => {
    const s = query({ id: queryInt({ min: 1 }), name: queryString({ max: 2 }).optional() });
    expect(refusal(() => parseQuery(s, {}))).to.equal('INVALID_PARAMETER id: is required');
    expect(refusal(() => parseQuery(s, { name: 'abc' }))).to.equal('INVALID_PARAMETER name: must be at most 2 characters');
    expect(refusal(() => parseQuery(s, { zz: '1' }))).to.equal('INVALID_PARAMETER zz: is not a parameter of this operation');
    expect(parseQuery(s, { id: '7' })).to.deep.equal({ id: 7 });
  });

  describe('parseBatch', () => {
    const item = body({ no: requiredString({ max: 4 }) });
    const batch = body({ items: requiredArray(item, 1, 3) });

    it('a valid batch: every entry read', () => {
      expect(parseBatch(batch, item, { items: [{ no: 'a' }, { no: 'b' }] })).to.deep.equal([
        { ok: true, value: { no: 'a' } },
        { ok: true, value: { no: 'b' } },
      ]);
    });

    it('a bad entry is that entry\'s error, named with its index; the others are still read', () => {
      const r = parseBatch(batch, item, { items: [{ no: 'a' }, { no: 'abcde' }, 7] });
      expect(r.map((p) => (p.ok ? p.value : p.error.message))).to.deep.equal([{ no: 'a' }, 'items[1].no: must be at most 4 characters', 'items[2]: must be a JSON object']);
      expect(r.every((p) => p.ok || p.error instanceof WcsError)).to.equal(true);
      const unknown = parseBatch(batch, item, { items: [{ no: 'c', x: 1 }] });
      expect(unknown[0]!.ok ? null : unknown[0]!.error.message).to.equal('items[0].x: is not a field of this operation');
    });

    it('a problem of the body itself is thrown, before any entry is looked at', () => {
      expect(refusal(() => parseBatch(batch, item, { items: [] }))).to.equal('INVALID_PARAMETER items: must have at least 1 entries');
      expect(refusal(() => parseBatch(batch, item, { items: [7, 7, 7, 7] }))).to.equal('INVALID_PARAMETER items: must have at most 3 entries');
      expect(refusal(() => parseBatch(batch, item, { items: [7], extra: 1 }))).to.equal('INVALID_PARAMETER extra: is not a field of this operation');
      expect(refusal(() => parseBatch(batch, item, { items: null }))).to.equal('INVALID_PARAMETER items: is required');
      expect(refusal(() => parseBatch(batch, item, { items: {} }))).to.equal('INVALID_PARAMETER items: must be an array');
      expect(refusal(() => parseBatch(batch, item, [{ no: 'a' }]))).to.equal('INVALID_PARAMETER body: must be a JSON object');
    });
  });
});
