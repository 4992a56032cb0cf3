/**
 * Amounts are decimal strings everywhere in the API (never JSON numbers): this SDK never turns
 * them into JS numbers. The only arithmetic it needs is equality of two decimal strings
 * ("0.50" equals "0.5"), e.g. to recognise an order it already sent.
 */

const DECIMAL = /^(\d+)(?:\.(\d*))?$/;

/** The canonical form of a plain decimal string (no leading zeros, no trailing fraction zeros), or null when it is not one. */
export function normalizeDecimal(s: string): string | null {
  if (typeof s !== 'string') return null;
  const m = DECIMAL.exec(s.trim());
  if (!m) return null;
  const int = m[1]!.replace(/^0+(?=\d)/, '');
  const frac = (m[2] ?? '').replace(/0+$/, '');
  return frac ? `${int}.${frac}` : int;
}

/** Whether two plain decimal strings denote the same number ("1.50" and "1.5"); false when either is not one. */
export function decimalEquals(a: string, b: string): boolean {
  const x = normalizeDecimal(a);
  return x !== null && x === normalizeDecimal(b);
}
