/**
 * The ABI of the two calls the balance reader makes, written out (the reader encodes thousands of
 * them a pass): ERC-20 `balanceOf(address)` and Multicall3's
 * `aggregate3((address target, bool allowFailure, bytes callData)[]) returns ((bool success, bytes returnData)[])`
 * (mds1/multicall, src/Multicall3.sol). Checked against ethers' ABI coder in multicall3.test.ts.
 */

/** keccak256("balanceOf(address)")[0..4]. */
export const BALANCE_OF_SELECTOR = '70a08231';
/** keccak256("aggregate3((address,bool,bytes)[])")[0..4]. */
export const AGGREGATE3_SELECTOR = '82ad56cb';

const word = (n: number | bigint) => n.toString(16).padStart(64, '0');
const addressWord = (address: string) => address.slice(2).toLowerCase().padStart(64, '0');

/** balanceOf(owner) call data. */
export function encodeBalanceOf(owner: string): string {
  return `0x${BALANCE_OF_SELECTOR}${addressWord(owner)}`;
}

/**
 * aggregate3 call data for balanceOf(address) of each pair on its token, allowFailure true.
 * Each Call3 tuple is dynamic (it holds bytes): target, allowFailure, offset of callData (0x60),
 * its length (36) and the 36 bytes padded to 64.
 */
export function encodeAggregate3(pairs: ReadonlyArray<{ readonly address: string; readonly contract: string }>): string {
  const n = pairs.length;
  const TUPLE = 6 * 32; // 3 head words + length word + 2 words of data
  const parts: string[] = [`0x${AGGREGATE3_SELECTOR}`, word(0x20), word(n)];
  for (let i = 0; i < n; i++) parts.push(word(n * 32 + i * TUPLE));
  for (const p of pairs) {
    const data = `${BALANCE_OF_SELECTOR}${addressWord(p.address)}`; // 36 bytes
    parts.push(addressWord(p.contract), word(1), word(0x60), word(36), data.padEnd(128, '0'));
  }
  return parts.join('');
}

export interface Call3Result {
  readonly success: boolean;
  /** 0x-prefixed hex. */
  readonly returnData: string;
}

/**
 * aggregate3's answer: `expected` (success, returnData) tuples. Anything malformed (offsets
 * outside the data, a count other than expected) is refused through `bad`.
 */
export function decodeAggregate3(data: unknown, expected: number, bad: (why: string) => Error): Call3Result[] {
  if (typeof data !== 'string' || !/^0x(?:[0-9a-fA-F]{2})*$/.test(data)) throw bad('the answer is not hex bytes');
  const hex = data.slice(2);
  const bytes = hex.length / 2;
  const readWord = (at: number): bigint => {
    if (at < 0 || at + 32 > bytes) throw bad(`word at ${at} is past the end (${bytes} bytes)`);
    return BigInt(`0x${hex.slice(at * 2, at * 2 + 64)}`);
  };
  const small = (at: number): number => {
    const v = readWord(at);
    if (v > BigInt(bytes)) throw bad(`offset or length ${v} at ${at} is past the end`);
    return Number(v);
  };
  const array = small(0);
  const count = small(array);
  if (count !== expected) throw bad(`${count} results for ${expected} calls`);
  const base = array + 32;
  const out: Call3Result[] = [];
  for (let i = 0; i < count; i++) {
    const tuple = base + small(base + i * 32);
    const flag = readWord(tuple);
    if (flag > 1n) throw bad(`result ${i} success flag is ${flag}`);
    const bytesAt = tuple + small(tuple + 32);
    const length = small(bytesAt);
    if (bytesAt + 32 + length > bytes) throw bad(`result ${i} returnData runs past the end`);
    out.push({ success: flag === 1n, returnData: `0x${hex.slice((bytesAt + 32) * 2, (bytesAt + 32 + length) * 2)}` });
  }
  return out;
}

/** A balanceOf answer: exactly one uint256; null for anything else (no contract there answers 0x). */
export function decodeBalanceWord(data: unknown): bigint | null {
  if (typeof data !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(data)) return null;
  return BigInt(data);
}
