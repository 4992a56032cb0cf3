import type { Verdict } from '@wcs/core';

/** rippled / Clio errors that mean "busy or not synced, ask again later". */
export const TRANSIENT_RPC_ERRORS: ReadonlySet<string> = new Set(['tooBusy', 'noNetwork', 'noCurrent', 'noClosed', 'slowDown', 'failedToForward']);

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The error code of a rippled result ("unknown" when it is not a plain name), or null when the result is not an error. */
export function rippledError(result: Record<string, unknown>): string | null {
  if (result.status !== 'error' && typeof result.error !== 'string') return null;
  return typeof result.error === 'string' && /^[A-Za-z_]{1,64}$/.test(result.error) ? result.error : 'unknown';
}

/** A JSON-RPC answer is usable with a result object; a busy rippled (TRANSIENT_RPC_ERRORS) is asked again. */
export function judgeRippled(body: unknown): Verdict {
  const result = isObject(body) ? body.result : undefined;
  if (!isObject(result)) return { ok: false, retry: false, message: 'answered without a result object' };
  const code = rippledError(result);
  return code !== null && TRANSIENT_RPC_ERRORS.has(code) ? { ok: false, retry: true, message: `rippled ${code}` } : { ok: true };
}

/** The validated ledger index of a `ledger` (ledger_index "validated") result, or null when it reports none. */
export function validatedLedgerIndex(result: Record<string, unknown>): number | null {
  const ledger = isObject(result.ledger) ? result.ledger : {};
  const index = result.ledger_index ?? ledger.ledger_index;
  const n = typeof index === 'number' ? index : typeof index === 'string' && /^[1-9][0-9]{0,15}$/.test(index) ? Number(index) : NaN;
  return result.validated === true && Number.isSafeInteger(n) && n >= 1 ? n : null;
}
