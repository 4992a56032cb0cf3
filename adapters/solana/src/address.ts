import { PublicKey as SolanaPublicKey } from '@solana/web3.js';
import type { AddressValidation, PublicKey } from '@wcs/core';

/** Base58 (Bitcoin alphabet), the length range of a 32-byte value. */
const BASE58_32 = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/**
 * Valid base58 keys that are not anyone's wallet: funds sent there are lost or the transfer fails.
 * The all-zero key is the System Program id; the incinerator is the runtime's burn address.
 */
const NOT_A_WALLET: ReadonlyMap<string, string> = new Map([
  ['11111111111111111111111111111111', 'the all-zero key is the System Program id, not a wallet'],
  ['1nc1nerator11111111111111111111111111111111', 'the incinerator is a burn address'],
]);

/** A user's deposit address: the 32-byte ed25519 public key in base58. */
export function solanaAddressFromPublicKey(key: PublicKey): string {
  if (key.curve !== 'ed25519') throw new TypeError(`Solana keys are ed25519, got ${key.curve}`);
  // web3.js zero-pads short input and accepts 33 bytes with a leading zero, so check the length here.
  if (key.bytes.length !== 32) throw new TypeError(`a Solana public key is 32 bytes, got ${key.bytes.length}`);
  const pk = new SolanaPublicKey(key.bytes);
  // A deposit key comes from a key store, so it is a curve point; anything else could never sign.
  if (!SolanaPublicKey.isOnCurve(pk.toBytes())) throw new TypeError('the public key is not a point on ed25519');
  return pk.toBase58();
}

/**
 * A Solana target: base58 that decodes to exactly 32 bytes and re-encodes to the same text.
 * Off-curve keys (program derived addresses) are valid targets (see README). No network check:
 * addresses are the same on every cluster. Solana addresses take no memo.
 */
export function validateSolanaAddress(address: string, memo: string | null = null): AddressValidation {
  if (memo !== null) return { valid: false, reason: 'Solana addresses take no memo' };
  if (typeof address !== 'string' || !BASE58_32.test(address)) {
    return { valid: false, reason: 'not a Solana address: expected 32 to 44 base58 characters' };
  }
  let key: SolanaPublicKey;
  try {
    key = new SolanaPublicKey(address);
  } catch {
    return { valid: false, reason: 'not a Solana address: does not decode to a 32-byte key' };
  }
  const canonical = key.toBase58();
  if (canonical !== address) return { valid: false, reason: 'not a canonical base58 encoding of a 32-byte key' };
  const special = NOT_A_WALLET.get(canonical);
  if (special) return { valid: false, reason: special };
  return { valid: true, normalized: canonical, memo: null };
}

/** Whether a 32-byte key is a point on ed25519 (a wallet key) rather than a program derived address. */
export function isOnCurve(address: string): boolean {
  return SolanaPublicKey.isOnCurve(new SolanaPublicKey(address).toBytes());
}
