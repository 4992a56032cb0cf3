/**
 * The events feed's cursor (docs/events-feed.md): opaque to merchants, it names a position in
 * the feed's order, (writing transaction id, task id), and the application it was issued to.
 * base64url of `e1.<applicationId>.<txId>.<taskId>`; (0, 0) is before every event.
 */
export interface FeedPosition {
  readonly txId: bigint;
  readonly taskId: bigint;
}

export interface FeedCursor extends FeedPosition {
  readonly applicationId: number;
}

export const FEED_START: FeedPosition = Object.freeze({ txId: 0n, taskId: 0n });

const DIGITS = /^(0|[1-9]\d{0,19})$/;
const U64_MAX = (1n << 64n) - 1n;

export function encodeFeedCursor(c: FeedCursor): string {
  return Buffer.from(`e1.${c.applicationId}.${c.txId}.${c.taskId}`, 'utf8').toString('base64url');
}

/** The cursor's parts, or null for anything this service did not issue. */
export function decodeFeedCursor(text: string): FeedCursor | null {
  if (text.length === 0 || text.length > 96 || !/^[A-Za-z0-9_-]+$/.test(text)) return null;
  const parts = Buffer.from(text, 'base64url').toString('utf8').split('.');
  if (parts.length !== 4 || parts[0] !== 'e1') return null;
  const [, app, tx, id] = parts as [string, string, string, string];
  if (!DIGITS.test(app) || !DIGITS.test(tx) || !DIGITS.test(id)) return null;
  const applicationId = Number(app);
  const txId = BigInt(tx);
  const taskId = BigInt(id);
  if (!Number.isSafeInteger(applicationId) || applicationId < 1 || txId > U64_MAX || taskId > U64_MAX) return null;
  // the text must be the canonical encoding, so one position has one cursor
  if (encodeFeedCursor({ applicationId, txId, taskId }) !== text) return null;
  return { applicationId, txId, taskId };
}

/** Position a is before position b in the feed's order. */
export function before(a: FeedPosition, b: FeedPosition): boolean {
  return a.txId < b.txId || (a.txId === b.txId && a.taskId < b.taskId);
}
