import { expect } from 'chai';
import { nativeReads, type UnreadTransfer } from './native-reads';

const RENT = 2_039_280n;
const x = (id: string, fee: bigint): UnreadTransfer => ({ id, applicationId: 1, txHash: `sig${id}`, payer: 'Hot', fee, blockHeight: 10n });

describe('reconciliation nativeReads (token-account rent beyond a transfer\'s record)', () => {
  it('a closing sweep: the payer paid the fee and got the closed account\'s rent back: +rent booked', () => {
    expect(nativeReads([x('1', 10_000n)], [RENT - 10_000n])).to.deep.equal([{ transferId: '1', txHash: 'sig1', address: 'Hot', change: RENT - 10_000n, adjustment: RENT }]);
  });
  it('a token payout creating the recipient\'s account: -rent booked', () => {
    expect(nativeReads([x('2', 5_000n)], [-RENT - 5_000n])[0]!.adjustment).to.equal(-RENT);
  });
  it('a closing sweep that also created the payer\'s own token account: the change is the fee, read and kept with no adjustment', () => {
    expect(nativeReads([x('3', 10_000n)], [-10_000n])).to.deep.equal([{ transferId: '3', txHash: 'sig3', address: 'Hot', change: -10_000n, adjustment: null }]);
  });
  it('a transaction the node does not hold as final yet: nothing kept (read again at a later pass)', () => {
    expect(nativeReads([x('4', 5_000n), x('5', 5_000n)], [null, -5_000n]).map((r) => r.transferId)).to.deep.equal(['5']);
  });
  it('answers that do not match the transfers are refused', () => {
    expect(() => nativeReads([x('6', 1n)], [])).to.throw(/1 transfers/);
  });
});
