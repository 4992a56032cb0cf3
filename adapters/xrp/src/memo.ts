import type { MemoCodec } from '@wcs/core';

/** Largest destination tag: tags are uint32. */
export const MAX_DESTINATION_TAG = 4294967295n;

/** Decimal without sign, whitespace or leading zeros ("0" itself is allowed). */
const DECIMAL = /^(0|[1-9][0-9]{0,9})$/;

/** Whether text is a destination tag: decimal uint32 in canonical form. */
export function isDestinationTag(memo: string): boolean {
  return typeof memo === 'string' && DECIMAL.test(memo) && BigInt(memo) <= MAX_DESTINATION_TAG;
}

/** XRP memos are destination tags: the user's memo index as a decimal uint32. */
export const destinationTagCodec: MemoCodec = Object.freeze({
  maxIndex: MAX_DESTINATION_TAG,
  format(index: bigint): string {
    if (index < 0n || index > MAX_DESTINATION_TAG) throw new RangeError(`destination tags are 0..${MAX_DESTINATION_TAG}, got ${index}`);
    return index.toString(10);
  },
  isValid: isDestinationTag,
});
