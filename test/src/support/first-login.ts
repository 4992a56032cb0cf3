import { Client } from 'pg';

/**
 * Test fixture: the named operators count as past their first login, as if they had changed the
 * password `wcs operator create` generated (the flag cleared, the password left as printed so the
 * test keeps using it). For console tests about other pages: until the generated password is
 * changed the console serves nothing else (docs/console.md, "The first login"), and that rule is
 * tested on its own in console-first-login-browser.test.ts.
 */
export async function pastFirstLogin(databaseUrl: string, usernames: readonly string[]): Promise<void> {
  const c = new Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const r = await c.query('UPDATE operators SET must_change_password = false WHERE username = ANY($1::text[])', [usernames]);
    if (r.rowCount !== usernames.length) throw new Error(`pastFirstLogin: ${r.rowCount} of ${usernames.length} operators found`);
  } finally {
    await c.end();
  }
}
