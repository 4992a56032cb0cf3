import type { MemoCodec } from '@wcs/core';

/**
 * Deposit memos are numeric text comments (a transfer's body: op 0, then the text), as exchanges
 * take TON deposits: the user's memo index in decimal, uint64. Withdrawal comments may be any
 * text comment that fits one cell: 1 to 120 bytes of UTF-8 without control characters.
 */
export const MAX_MEMO_INDEX = 18446744073709551615n;
export const MAX_COMMENT_BYTES = 120;

const DECIMAL = /^(0|[1-9][0-9]{0,19})$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /\p{Cs}/u;

export function isNumericMemo(memo: string): boolean {
  return typeof memo === 'string' && DECIMAL.test(memo) && BigInt(memo) <= MAX_MEMO_INDEX;
}

/** Whether text can be sent as a comment: 1..120 bytes of UTF-8, no control characters, no lone surrogates, not blank. */
export function isTonComment(memo: string): boolean {
  return typeof memo === 'string' && memo.trim().length > 0 && !CONTROL.test(memo) && !LONE_SURROGATE.test(memo)
    && Buffer.byteLength(memo, 'utf8') <= MAX_COMMENT_BYTES;
}

export const tonMemoCodec: MemoCodec = Object.freeze({
  maxIndex: MAX_MEMO_INDEX,
  format(index: bigint): string {
    if (typeof index !== 'bigint' || index < 0n || index > MAX_MEMO_INDEX) throw new RangeError(`TON memo indices are 0..${MAX_MEMO_INDEX}, got ${String(index)}`);
    return index.toString(10);
  },
  isValid: isTonComment,
});
