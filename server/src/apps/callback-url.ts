import { WcsError, type Environment } from '@wcs/core';

/**
 * Checks a merchant callback URL at configuration time: absolute http(s), no
 * credentials or fragment, https for live applications. The target check (a live
 * application's URL must not reach loopback, private or metadata addresses) follows it:
 * guardCallbackTarget (callbacks/target-guard), and again at every delivery's connect.
 */
export function validateCallbackUrl(raw: string, environment: Environment): string {
  const fail = (why: string) => new WcsError('CALLBACK_URL_INVALID', { message: `Callback URL ${why}` });
  if (typeof raw !== 'string' || raw.length === 0) throw fail('is required');
  if (raw.length > 2048) throw fail('is longer than 2048 characters');
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw fail('is not an absolute URL');
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw fail('must use https (or http for test applications)');
  if (environment === 'live' && u.protocol !== 'https:') throw fail('must use https for live applications');
  if (u.username || u.password) throw fail('must not contain credentials');
  if (u.hash) throw fail('must not contain a fragment');
  return u.toString();
}
