import * as querystring from 'node:querystring';
import { isWcsError } from '@wcs/core';

/** For the contract's tests: what a parse refuses with ("CODE_NAME message"); throws if it accepts. */
export function refusal(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (isWcsError(e)) return `${e.errorName} ${e.message}`;
    throw e;
  }
  throw new Error('accepted');
}

/** A query string as Express hands it to a route. */
export const q = (text: string) => querystring.parse(text) as Record<string, unknown>;
