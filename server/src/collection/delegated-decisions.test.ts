import { expect } from 'chai';
import { delegatedSweepFee, delegationVerdict, feeShares, packBatches } from './delegated-decisions';

const FWD = '0x1111111111111111111111111111111111111111';
const OLD = '0x2222222222222222222222222222222222222222';
const OTHER = '0x3333333333333333333333333333333333333333';

describe('delegated sweeps: decisions', () => {
  it('an address with no code, or delegated to an older forwarder of ours, is authorized; our current forwarder is ready', () => {
    const ours = new Set([FWD, OLD]);
    expect(delegationVerdict({ kind: 'EMPTY' }, FWD, ours)).to.deep.equal({ kind: 'AUTHORIZE' });
    expect(delegationVerdict({ kind: 'DELEGATED', delegate: FWD.toUpperCase().replace('0X', '0x') }, FWD, ours)).to.deep.equal({ kind: 'READY' });
    expect(delegationVerdict({ kind: 'DELEGATED', delegate: OLD }, FWD, ours)).to.deep.equal({ kind: 'AUTHORIZE' });
  });

  it('a delegation to anything else, or contract code, is foreign', () => {
    const ours = new Set([FWD]);
    expect(delegationVerdict({ kind: 'DELEGATED', delegate: OTHER }, FWD, ours)).to.deep.equal({ kind: 'FOREIGN', found: 'DELEGATED', delegate: OTHER });
    expect(delegationVerdict({ kind: 'CONTRACT' }, FWD, ours)).to.deep.equal({ kind: 'FOREIGN', found: 'CONTRACT', delegate: null });
  });

  it('packs batches by entries and gas, keeping an address whole', () => {
    const e = (address: string, gas: bigint) => ({ item: address, address, authorize: true, gas });
    const list = [e('a', 10n), e('b', 10n), e('a', 10n), e('c', 10n), e('d', 10n)];
    const byEntries = packBatches(list, { maxEntries: 3, maxGas: 1000n, baseGas: 0n });
    expect(byEntries.map((b) => b.map((x) => x.address))).to.deep.equal([['a', 'a', 'b'], ['c', 'd']]);
    const byGas = packBatches(list, { maxEntries: 100, maxGas: 44n, baseGas: 5n });
    expect(byGas.map((b) => b.map((x) => x.address))).to.deep.equal([['a', 'a', 'b'], ['c', 'd']]);
    // an address above the bound alone still goes, alone
    const big = packBatches([e('a', 100n), e('b', 1n)], { maxEntries: 10, maxGas: 50n, baseGas: 0n });
    expect(big.map((b) => b.map((x) => x.address))).to.deep.equal([['a'], ['b']]);
  });

  it('shares a fee equally, the remainder to the last item', () => {
    expect(feeShares(10n, 3)).to.deep.equal([3n, 3n, 4n]);
    expect(feeShares(10n, 1)).to.deep.equal([10n]);
    expect(feeShares(10n, 0)).to.deep.equal([]);
    expect(feeShares(10n, 3).reduce((a, b) => a + b, 0n)).to.equal(10n);
  });

  it('prices a sweep as its entry and its part of the base gas, rounded up', () => {
    expect(delegatedSweepFee({ entryGas: 50_000n, baseGas: 21_001n, maxEntries: 100, pricePerGas: 2n })).to.equal((50_000n + 211n) * 2n);
  });
});
