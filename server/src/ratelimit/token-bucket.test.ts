import { expect } from 'chai';
import { leaseSize, msUntilToken, policyHeader, refill, remainingHeader, retryAfterSeconds } from './token-bucket';

describe('token bucket arithmetic', () => {
  const p = { ratePerSecond: 100, burst: 200 };

  it('refills at the rate, never above the burst, never backwards', () => {
    expect(refill(0, 500, p)).to.equal(50);
    expect(refill(190, 1000, p)).to.equal(200);
    expect(refill(10, -5000, p)).to.equal(10);
    expect(refill(0.5, 5, { ratePerSecond: 100, burst: 10 })).to.equal(1);
  });

  it('leases a twentieth of a second of the rate, at least 1, at most a tenth of the bucket', () => {
    expect(leaseSize(p)).to.equal(5);
    expect(leaseSize({ ratePerSecond: 1, burst: 20 })).to.equal(1);
    expect(leaseSize({ ratePerSecond: 1_000_000, burst: 1_000_000 })).to.equal(50_000);
    expect(leaseSize({ ratePerSecond: 10_000, burst: 30 })).to.equal(3);
  });

  it('waits until one whole token is back', () => {
    expect(msUntilToken(1, p)).to.equal(0);
    expect(msUntilToken(0, p)).to.equal(10);
    expect(msUntilToken(0.25, { ratePerSecond: 0.5, burst: 5 })).to.equal(1500);
    expect(retryAfterSeconds(10)).to.equal(1);
    expect(retryAfterSeconds(1500)).to.equal(2);
    expect(retryAfterSeconds(0)).to.equal(1);
  });

  it('formats the IETF RateLimit-Policy and RateLimit fields', () => {
    expect(policyHeader(p)).to.equal('"api-key";q=200;w=2');
    expect(policyHeader({ ratePerSecond: 3, burst: 10 })).to.equal('"api-key";q=10;w=4');
    expect(remainingHeader(150.7, p)).to.equal('"api-key";r=150;t=1');
    expect(remainingHeader(-3, p)).to.equal('"api-key";r=0;t=2');
    expect(remainingHeader(200, p)).to.equal('"api-key";r=200;t=0');
  });
});
