import { expect } from 'chai';
import { decideRisk, type RiskInput } from './risk-decision';

const base: RiskInput = {
  amount: 5_000_000n, decimals: 6, usedToday: 0n,
  perOrderMax: null, dailyMax: null, approvalThreshold: null,
  destinationBlocked: false, destinationAllowed: false, allowlistOnly: false,
};
const with_ = (x: Partial<RiskInput>): RiskInput => ({ ...base, ...x });

describe('withdrawal risk decision (pure)', () => {
  it('no rule: LOW', () => {
    expect(decideRisk(base)).to.deep.equal({ level: 'LOW', reason: null });
  });

  it('a blocked destination fails, whatever else holds (the blocklist comes first)', () => {
    expect(decideRisk(with_({ destinationBlocked: true, destinationAllowed: true, approvalThreshold: 1n }))).to.deep.equal({
      level: 'BLOCKED', reason: 'DESTINATION_BLOCKED', message: "risk: the destination is on the application's blocklist",
    });
  });

  it('allowlist-only: an allowlisted destination passes, any other fails', () => {
    expect(decideRisk(with_({ allowlistOnly: true, destinationAllowed: true })).level).to.equal('LOW');
    expect(decideRisk(with_({ allowlistOnly: true })).reason).to.equal('DESTINATION_NOT_ALLOWED');
  });

  it('per-order limit: equal passes, one base unit more fails, the message in token units', () => {
    expect(decideRisk(with_({ perOrderMax: 5_000_000n })).level).to.equal('LOW');
    expect(decideRisk(with_({ perOrderMax: 4_999_999n }))).to.deep.equal({
      level: 'BLOCKED', reason: 'PER_ORDER_LIMIT_EXCEEDED', message: 'risk: the amount is above the per-order limit of 4.999999',
    });
  });

  it('daily limit counts what is already committed today: exactly at the limit passes, above fails', () => {
    expect(decideRisk(with_({ dailyMax: 10_000_000n, usedToday: 5_000_000n })).level).to.equal('LOW');
    expect(decideRisk(with_({ dailyMax: 10_000_000n, usedToday: 5_000_001n }))).to.deep.equal({
      level: 'BLOCKED', reason: 'DAILY_LIMIT_EXCEEDED', message: 'risk: 10.000001 today would exceed the daily limit of 10',
    });
  });

  it('over the approval threshold: HIGH (held for an operator), never when a limit already failed it', () => {
    expect(decideRisk(with_({ approvalThreshold: 4_000_000n }))).to.deep.equal({ level: 'HIGH', reason: 'AMOUNT_OVER_APPROVAL_THRESHOLD' });
    expect(decideRisk(with_({ approvalThreshold: 5_000_000n })).level).to.equal('LOW');
    expect(decideRisk(with_({ approvalThreshold: 1n, perOrderMax: 1n })).reason).to.equal('PER_ORDER_LIMIT_EXCEEDED');
  });

  it('amounts beyond 2^53 are compared exactly (bigint, never a float)', () => {
    const big = 2n ** 80n;
    expect(decideRisk(with_({ amount: big + 1n, perOrderMax: big, decimals: 18 })).reason).to.equal('PER_ORDER_LIMIT_EXCEEDED');
    expect(decideRisk(with_({ amount: big, perOrderMax: big, decimals: 18 })).level).to.equal('LOW');
  });
});
