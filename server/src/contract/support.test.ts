import { expect } from 'chai';
import { parseQuery } from './parse';
import { reconciliationBalancesQuery } from './reconciliation';
import { supportChainsQuery, supportTokensQuery } from './support';
import { refusal, q } from './test-support';


describe('contract/support and contract/reconciliation', () => {
  it('support/chains takes no parameter', () => {
    expect(parseQuery(supportChainsQuery, q(''))).to.deep.equal({});
    expect(refusal(() => parseQuery(supportChainsQuery, q('foo=1')))).to.equal('INVALID_PARAMETER foo: is not a parameter of this operation');
  });

  it('support/tokens: an optional chain code, given once', () => {
    expect(parseQuery(supportTokensQuery, q('chainCode=ETH'))).to.deep.equal({ chainCode: 'ETH' });
    expect(refusal(() => parseQuery(supportTokensQuery, q('chainCode=ETH&chainCode=BTC')))).to.equal('INVALID_PARAMETER chainCode: must be given once');
    expect(refusal(() => parseQuery(supportTokensQuery, q('chainCode=E')))).to.equal('INVALID_PARAMETER chainCode: must be an upper-case chain code such as ETH');
  });

  it('reconciliation/balances: optional chain code and address kind', () => {
    expect(parseQuery(reconciliationBalancesQuery, q('chainCode=BTC&addressKind=HOT'))).to.deep.equal({ chainCode: 'BTC', addressKind: 'HOT' });
    expect(refusal(() => parseQuery(reconciliationBalancesQuery, q('addressKind=COLD')))).to.equal('INVALID_PARAMETER addressKind: must be one of DEPOSIT, SHARED, HOT, FEE');
    expect(refusal(() => parseQuery(reconciliationBalancesQuery, q('chain=BTC')))).to.equal('INVALID_PARAMETER chain: is not a parameter of this operation');
  });
});
