import { expect } from 'chai';
import { AbiCoder, Interface, getAddress, hexlify, randomBytes } from 'ethers';
import { decodeAggregate3, decodeBalanceWord, encodeAggregate3, encodeBalanceOf } from './multicall3';

/** The hand-written ABI of the balance reader against ethers' coder. */
const MULTICALL3 = new Interface([
  'function aggregate3((address target, bool allowFailure, bytes callData)[] calls) payable returns ((bool success, bytes returnData)[] returnData)',
]);
const ERC20 = new Interface(['function balanceOf(address owner) view returns (uint256)']);
const bad = (why: string) => new Error(why);

describe('Multicall3 / balanceOf ABI', () => {
  const pairs = Array.from({ length: 7 }, () => ({ address: getAddress(hexlify(randomBytes(20))), contract: getAddress(hexlify(randomBytes(20))) }));

  it('encodes balanceOf and aggregate3 as ethers does', () => {
    expect(encodeBalanceOf(pairs[0]!.address)).to.equal(ERC20.encodeFunctionData('balanceOf', [pairs[0]!.address]));
    const calls = pairs.map((p) => [p.contract, true, ERC20.encodeFunctionData('balanceOf', [p.address])]);
    expect(encodeAggregate3(pairs)).to.equal(MULTICALL3.encodeFunctionData('aggregate3', [calls]));
    expect(encodeAggregate3([])).to.equal(MULTICALL3.encodeFunctionData('aggregate3', [[]]));
  });

  it('decodes aggregate3 results of any length, success or not', () => {
    const results: Array<[boolean, string]> = [
      [true, AbiCoder.defaultAbiCoder().encode(['uint256'], [123456789n])],
      [false, '0x'],
      [false, `0x08c379a0${'00'.repeat(100)}`],
      [true, AbiCoder.defaultAbiCoder().encode(['uint256'], [(1n << 256n) - 1n])],
    ];
    const data = MULTICALL3.encodeFunctionResult('aggregate3', [results]);
    const decoded = decodeAggregate3(data, results.length, bad);
    expect(decoded).to.deep.equal(results.map(([success, returnData]) => ({ success, returnData })));
    expect(decodeBalanceWord(decoded[0]!.returnData)).to.equal(123456789n);
    expect(decodeBalanceWord(decoded[3]!.returnData)).to.equal((1n << 256n) - 1n);
    expect(decodeBalanceWord(decoded[1]!.returnData)).to.equal(null);
  });

  it('refuses a malformed answer', () => {
    const data = MULTICALL3.encodeFunctionResult('aggregate3', [[[true, '0x' + '00'.repeat(32)]]]);
    expect(() => decodeAggregate3(data, 2, bad)).to.throw(/1 results for 2 calls/);
    expect(() => decodeAggregate3(data.slice(0, data.length - 64), 1, bad)).to.throw(/past the end/);
    expect(() => decodeAggregate3('0x', 1, bad)).to.throw(/past the end/);
    expect(() => decodeAggregate3('nope', 1, bad)).to.throw(/not hex/);
  });
});
