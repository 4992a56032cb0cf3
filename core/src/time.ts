/**
 * The spec's timestamps are ISO local date-times without zone (YYYY-MM-DDThh:mm:ss).
 * The service writes them in UTC; docs/api.md says so.
 */
export function formatLocalDateTime(d: Date): string;
export function formatLocalDateTime(d: Date | null | undefined): string | null;
export function formatLocalDateTime(d: Date | null | undefined): string | null {
  if (!d) return null;
  return d.toISOString().slice(0, 19);
}

const LOCAL_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/;

/** Parses YYYY-MM-DDThh:mm:ss as UTC; returns null when the text is not exactly that form or not a real date. */
export function parseLocalDateTime(text: string): Date | null {
  const m = LOCAL_RE.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const date = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  if (
    date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d ||
    date.getUTCHours() !== h || date.getUTCMinutes() !== mi || date.getUTCSeconds() !== s
  ) {
    return null;
  }
  return date;
}
