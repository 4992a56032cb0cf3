/**
 * Exact amounts: decimal strings at the edge, bigint base units inside.
 * No JS number ever carries an amount.
 */
const DECIMAL_RE = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;

export class AmountFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AmountFormatError';
  }
}

/**
 * Parses a plain decimal string ("12.5", "0.000001") into base units with `decimals`
 * fraction digits. Rejects signs, exponents, whitespace, leading zeros, a bare ".",
 * and more fraction digits than the token has (no silent rounding).
 */
export function parseUnits(value: string, decimals: number): bigint {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 36) {
    throw new RangeError(`decimals must be an integer in 0..36, got ${decimals}`);
  }
  if (typeof value !== 'string' || value.length === 0 || value.length > 100 || !DECIMAL_RE.test(value)) {
    throw new AmountFormatError('amount must be a plain decimal string such as "12.5"');
  }
  const [whole, frac = ''] = value.split('.') as [string, string?];
  const fraction = frac ?? '';
  if (fraction.length > decimals) {
    const extra = fraction.slice(decimals);
    if (/[^0]/.test(extra)) {
      throw new AmountFormatError(`amount has more than ${decimals} decimal places`);
    }
  }
  const padded = (fraction + '0'.repeat(decimals)).slice(0, decimals);
  return BigInt(whole + padded);
}

/** Formats base units as the shortest exact decimal string ("1.5", "0", "0.000001"). */
export function formatUnits(units: bigint, decimals: number): string {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 36) {
    throw new RangeError(`decimals must be an integer in 0..36, got ${decimals}`);
  }
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const s = abs.toString().padStart(decimals + 1, '0');
  const whole = s.slice(0, s.length - decimals);
  const frac = s.slice(s.length - decimals).replace(/0+$/, '');
  return (negative ? '-' : '') + whole + (frac ? '.' + frac : '');
}
