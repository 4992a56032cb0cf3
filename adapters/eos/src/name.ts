/**
 * EOS account names: 1 to 12 characters of a-z, 1-5 and '.', not ending with '.'. The name
 * encoding (64 bits) allows a 13th character, but the chain refuses to create accounts with
 * names longer than 12 characters, and a trailing '.' does not survive the encoding (it decodes
 * without it), so such text never names an account.
 */
const ACCOUNT_NAME = /^[a-z1-5.]{0,11}[a-z1-5]$/;

export function isEosAccountName(name: string): boolean {
  return typeof name === 'string' && ACCOUNT_NAME.test(name);
}

export const ACCOUNT_NAME_RULE = "1 to 12 characters of a-z, 1-5 and '.', not ending with '.'";
