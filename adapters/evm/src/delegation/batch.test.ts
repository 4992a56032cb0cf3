import { expect } from 'chai';
import { AbiCoder, Interface, Wallet, concat, id, zeroPadValue } from 'ethers';
import { BATCH_MAX_REASON_BYTES, readableReason, sweepBatchData, sweepOutcomes } from './batch';

/** Written by hand from the Solidity source, not from the compiled ABI the module uses. */
const SWEEPER = new Interface([
  'function sweep((address account, address token)[] entries)',
  'event Swept(address indexed account, address indexed token, uint256 amount)',
  'event SweepFailed(address indexed account, address indexed token, bytes reason)',
  'error NoAnswer()',
  'error UnexpectedAnswer(uint256 size)',
  'error NotEnoughGasForEntry(uint256 index)',
]);
const ZERO = `0x${'00'.repeat(20)}`;
const coder = AbiCoder.defaultAbiCoder();
const address = () => Wallet.createRandom().address;
const errorString = (s: string) => concat([id('Error(string)').slice(0, 10), coder.encode(['string'], [s])]);

function log(emitter: string, event: 'Swept' | 'SweepFailed', account: string, token: string | null, value: bigint | string) {
  const { topics, data } = SWEEPER.encodeEventLog(event, [account, token ?? ZERO, value]);
  return { address: emitter, topics, data };
}

describe('delegation: batch calldata and outcomes (pure)', () => {
  it('encodes sweep(Entry[]) as the hand-written ABI does, the native coin as the zero address', () => {
    const entries = [
      { account: address(), token: address() },
      { account: address().toLowerCase(), token: null },
      { account: address(), token: address().toUpperCase().replace('0X', '0x') },
    ];
    const expected = SWEEPER.encodeFunctionData('sweep', [entries.map((e) => [e.account, e.token ?? ZERO])]);
    expect(sweepBatchData(entries)).to.equal(expected);
  });

  it('refuses no entries, malformed addresses, a zero account, and the native coin spelt as the zero address', () => {
    const a = address();
    expect(() => sweepBatchData([])).to.throw(TypeError, /no entries/);
    expect(() => sweepBatchData([{ account: '0x12', token: null }])).to.throw(TypeError, /entries\[0\]\.account/);
    expect(() => sweepBatchData([{ account: a, token: null }, { account: a, token: 'nope' }])).to.throw(TypeError, /entries\[1\]\.token/);
    expect(() => sweepBatchData([{ account: ZERO, token: null }])).to.throw(TypeError, /zero address/);
    expect(() => sweepBatchData([{ account: a, token: ZERO }])).to.throw(TypeError, /native coin is null/);
  });

  it('reads Swept and SweepFailed in log order, only from the batch sweeper', () => {
    const sweeper = address();
    const impostor = address();
    const [a1, a2, a3, t1] = [address(), address(), address(), address()];
    const logs = [
      { address: t1, topics: [id('Transfer(address,address,uint256)'), zeroPadValue(a1, 32), zeroPadValue(a2, 32)], data: coder.encode(['uint256'], [5n]) },
      log(sweeper.toLowerCase(), 'Swept', a1, t1, 5n),
      log(impostor, 'Swept', a2, t1, 1000n),
      log(sweeper, 'SweepFailed', a2, null, SWEEPER.encodeErrorResult('NoAnswer', [])),
      log(sweeper, 'Swept', a3, null, 0n),
    ];
    expect(sweepOutcomes(logs, sweeper)).to.deep.equal([
      { account: a1, token: t1, ok: true, amount: 5n },
      { account: a2, token: null, ok: false, reason: 'not delegated (no code answered)' },
      { account: a3, token: null, ok: true, amount: 0n },
    ]);
    expect(sweepOutcomes(logs, impostor)).to.deep.equal([{ account: a2, token: t1, ok: true, amount: 1000n }]);
    expect(sweepOutcomes([], sweeper)).to.deep.equal([]);
  });

  it('throws on a log from the sweeper that is not one of its events', () => {
    const sweeper = address();
    const bad = { address: sweeper, topics: [id('Other(address,address)'), zeroPadValue(address(), 32), zeroPadValue(address(), 32)], data: '0x' };
    expect(() => sweepOutcomes([bad], sweeper)).to.throw(/not a BatchSweeper event/);
    const dirty = log(sweeper, 'Swept', address(), null, 1n);
    const dirtyTopics = [dirty.topics[0]!, `0x01${dirty.topics[1]!.slice(4)}`, dirty.topics[2]!];
    expect(() => sweepOutcomes([{ ...dirty, topics: dirtyTopics }], sweeper)).to.throw(/malformed account topic/);
  });

  it('makes reasons readable', () => {
    expect(readableReason(errorString('ERC20Pausable: token transfer while paused'))).to.equal('ERC20Pausable: token transfer while paused');
    expect(readableReason(concat([id('Panic(uint256)').slice(0, 10), coder.encode(['uint256'], [0x11])]))).to.equal('panic 0x11 (arithmetic overflow or underflow)');
    expect(readableReason(SWEEPER.encodeErrorResult('NoAnswer', []))).to.equal('not delegated (no code answered)');
    expect(readableReason(SWEEPER.encodeErrorResult('UnexpectedAnswer', [3]))).to.equal('not the forwarder (its code answered 3 bytes, not 32)');
    expect(readableReason(id('NativeTransferFailed()').slice(0, 10))).to.match(/^NativeTransferFailed\(\): the collector refused/);
    expect(readableReason('0x')).to.match(/^reverted without data/);
    expect(readableReason(errorString(''))).to.equal('reverted with an empty message');
    const custom = concat([id('Unknown(uint256)').slice(0, 10), coder.encode(['uint256'], [7])]);
    expect(readableReason(custom)).to.equal(`revert data ${custom}`);
    expect(readableReason('0x1234')).to.equal('revert data 0x1234');
    expect(() => readableReason('nope')).to.throw(TypeError);
  });

  it('shows what arrived of an Error(string) cut at BATCH_MAX_REASON_BYTES', () => {
    const message = 'x'.repeat(400);
    const truncated = errorString(message).slice(0, 2 + 2 * BATCH_MAX_REASON_BYTES);
    expect(readableReason(truncated)).to.equal(`${'x'.repeat(BATCH_MAX_REASON_BYTES - 4 - 64)}… (truncated)`);
    // Invalid UTF-8 does not throw.
    expect(readableReason(concat([id('Error(string)').slice(0, 10), coder.encode(['bytes'], ['0xff'])]))).to.equal('\ufffd');
  });
});
