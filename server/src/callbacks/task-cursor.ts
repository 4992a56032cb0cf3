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
