import type { MemoCodec } from '@wcs/core';

/** Largest MEMO_ID: memo ids are uint64. */
export const MAX_MEMO_ID = 18446744073709551615n;
/** MEMO_TEXT holds at most 28 bytes (XDR string<28>). */
export const MAX_MEMO_TEXT_BYTES = 28;

const DECIMAL = /^(0|[1-9][0-9]{0,19})$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /\p{Cs}/u;

/** Whether text is a MEMO_ID: decimal uint64 without sign, whitespace or leading zeros. */
export function isMemoId(memo: string): boolean {
  return typeof memo === 'string' && DECIMAL.test(memo) && BigInt(memo) <= MAX_MEMO_ID;
}

/** Whether text fits a MEMO_TEXT: 1..28 bytes of UTF-8, no control characters, no lone surrogates. */
export function isMemoText(memo: string): boolean {
  return typeof memo === 'string' && memo.length > 0 && !CONTROL.test(memo) && !LONE_SURROGATE.test(memo)
    && Buffer.byteLength(memo, 'utf8') <= MAX_MEMO_TEXT_BYTES;
}

/**
 * How a withdrawal memo is carried: canonical decimal uint64 text as MEMO_ID, any other valid
 * text as MEMO_TEXT; null when it is neither.
 */
export function withdrawalMemoType(memo: string): 'id' | 'text' | null {
  if (isMemoId(memo)) return 'id';
  if (isMemoText(memo)) return 'text';
  return null;
}

/** Deposit memos are MEMO_IDs: the user's memo index in decimal. */
export const memoIdCodec: MemoCodec = Object.freeze({
  maxIndex: MAX_MEMO_ID,
  format(index: bigint): string {
    if (index < 0n || index > MAX_MEMO_ID) throw new RangeError(`memo ids are 0..${MAX_MEMO_ID}, got ${index}`);
    return index.toString(10);
  },
  isValid: isMemoId,
});
