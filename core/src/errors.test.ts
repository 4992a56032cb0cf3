import { expect } from 'chai';
import { allErrorSpecs, ErrorCodes, WcsError, invalidParameter } from './errors';

describe('errors: catalogue', () => {
  it('has unique 10-digit codes in the spec scheme, with the spec-given code present', () => {
    const specs = allErrorSpecs();
    const codes = specs.map((s) => s.code);
    expect(new Set(codes).size).to.equal(codes.length);
    for (const s of specs) expect(String(s.code)).to.match(/^1\d{9}$/);
    expect(ErrorCodes.HOT_WALLET_BALANCE_TOO_LOW.code).to.equal(1007004002);
    const names = specs.map((s) => s.name);
    expect(new Set(names).size).to.equal(names.length);
  });

  it('WcsError keeps its code, status and cause chain', () => {
    const root = new Error('socket hang up');
    const e = new WcsError('SERVICE_UNAVAILABLE', { cause: root });
    expect(e.code).to.equal(1000009002);
    expect(e.httpStatus).to.equal(503);
    expect(e.walk((x) => x === root)).to.equal(root);
    const p = invalidParameter('pageSize', 'must be at most 200');
    expect(p.message).to.equal('pageSize: must be at most 200');
    expect(p.details).to.deep.equal({ field: 'pageSize' });
  });
});
