import type { MemoCodec } from '@wcs/core';

/** Largest deposit memo index: 2^53-1, so memos stay exact as JavaScript numbers for merchants. */
export const MAX_EOS_MEMO_INDEX = 9007199254740991n;
/** eosio.token refuses memos over 256 bytes. */
export const MAX_EOS_MEMO_BYTES = 256;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /\p{Cs}/u;

/** Whether text is a transfer memo: 1..256 bytes of UTF-8, no control characters, no lone surrogates. */
export function isEosMemo(memo: string): boolean {
  return typeof memo === 'string' && memo.length > 0 && !CONTROL.test(memo) && !LONE_SURROGATE.test(memo)
    && Buffer.byteLength(memo, 'utf8') <= MAX_EOS_MEMO_BYTES;
}

/** EOS memos are text; a user's deposit memo is its memo index in decimal. */
export const eosMemoCodec: MemoCodec = Object.freeze({
  maxIndex: MAX_EOS_MEMO_INDEX,
  format(index: bigint): string {
    if (index < 0n || index > MAX_EOS_MEMO_INDEX) throw new RangeError(`EOS memo indices are 0..${MAX_EOS_MEMO_INDEX}, got ${index}`);
    return index.toString(10);
  },
  isValid: isEosMemo,
});
