import { getAddress } from 'ethers';

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * EIP-55 form of `value`, which must be 0x + 40 hex digits (all-lower, all-upper or a correct
 * EIP-55 checksum); throws TypeError naming `what` otherwise. Stricter than ethers' getAddress,
 * which also takes ICAP.
 */
export function checkedAddress(what: string, value: string): string {
  if (typeof value !== 'string' || !ADDRESS.test(value)) throw new TypeError(`${what}: ${JSON.stringify(value)} is not an address (0x + 40 hex digits)`);
  try {
    return getAddress(value);
  } catch {
    throw new TypeError(`${what}: ${value} has a wrong EIP-55 checksum`);
  }
}

export const ZERO_ADDRESS = `0x${'00'.repeat(20)}`;
