/**
 * The keyset position of a callback task in the listing order (created_at DESC, id DESC): the
 * console pages by it (docs/console.md, "Listings"), so page 1,000 costs what page 1 does.
 * Encoded as `<created_at in microseconds since the epoch>.<id>`; anything else is no cursor.
 */
export interface TaskCursor {
  readonly createdMicros: bigint;
  readonly id: bigint;
}

const CURSOR = /^(\d{1,19})\.([1-9]\d{0,18})$/;
const MAX = (1n << 63n) - 1n;

export function encodeTaskCursor(c: TaskCursor): string {
  return `${c.createdMicros}.${c.id}`;
}

/** The cursor in `text`, or null when it is not one (a refusal for the caller to word). */
export function decodeTaskCursor(text: string | null | undefined): TaskCursor | null {
  if (typeof text !== 'string') return null;
  const m = CURSOR.exec(text);
  if (!m) return null;
  const createdMicros = BigInt(m[1]!);
  const id = BigInt(m[2]!);
  if (createdMicros > MAX || id > MAX) return null;
  return { createdMicros, id };
}

/**
 * Which rows page `pageNo` of `pageSize` is, over `total` rows listed newest first, read from the
 * nearer end: newest first skipping `offset`, or oldest first skipping `offset` (then reversed).
 * limit 0: the page is past the end.
 */
export function pageWindow(total: number, pageNo: number, pageSize: number): { newestFirst: boolean; limit: number; offset: number } {
  const skip = (pageNo - 1) * pageSize;
  if (skip >= total) return { newestFirst: true, limit: 0, offset: 0 };
  const older = total - skip - pageSize; // rows after the page (negative: the page is cut short)
  if (older >= skip) return { newestFirst: true, limit: pageSize, offset: skip };
  return { newestFirst: false, limit: pageSize + Math.min(0, older), offset: Math.max(0, older) };
}
