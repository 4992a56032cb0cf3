import type { AddressValidation, PublicKey } from '@wcs/core';
import { withdrawalMemoType } from './memo';
import { StrKey } from './strkey';

const ZERO_KEY_REASON = 'the all-zero key is a burn address, not an account';

function isZero(bytes: Uint8Array, length: number): boolean {
  for (let i = 0; i < length; i++) if (bytes[i] !== 0) return false;
  return true;
}

/** The application's shared deposit account: the 32-byte ed25519 public key as a G… StrKey. */
export function stellarAddressFromPublicKey(key: PublicKey): string {
  if (key.curve !== 'ed25519') throw new TypeError(`Stellar keys are ed25519, got ${key.curve}`);
  if (key.bytes.length !== 32) throw new TypeError(`a Stellar public key is 32 bytes, got ${key.bytes.length}`);
  if (isZero(key.bytes, 32)) throw new TypeError(ZERO_KEY_REASON);
  return StrKey.encodeEd25519PublicKey(Buffer.from(key.bytes));
}

/** Why a string that is not a G… or M… account is refused (never echoes the input). */
function refusal(address: string): string {
  if (address !== address.toUpperCase() && isAccount(address.toUpperCase())) return 'Stellar addresses are upper case';
  switch (address[0]) {
    case 'S':
      if (StrKey.isValidEd25519SecretSeed(address)) return 'this is a secret seed, not an address: it must never be shared';
      break;
    case 'C':
      if (StrKey.isValidContract(address)) return 'a contract (C…) address: payments go to G… or M… accounts only';
      break;
    case 'T':
    case 'X':
    case 'P':
      return 'a signer key (pre-auth transaction, hash-x or signed payload), not an account';
    case 'L':
    case 'B':
      return 'a liquidity pool or claimable balance id, not an account';
  }
  return 'not a Stellar account address (G… or M…): wrong length, checksum or encoding';
}

function isAccount(address: string): boolean {
  return StrKey.isValidEd25519PublicKey(address) || StrKey.isValidMed25519PublicKey(address);
}

/**
 * A target: a G… account (normalized = itself, memo = the given memo) or an M… muxed account
 * (SEP-23; normalized = itself, memo must be absent since the muxed id identifies the recipient).
 * A given memo must be a MEMO_ID (decimal uint64) or a MEMO_TEXT (1..28 UTF-8 bytes). Addresses
 * are the same on every network, so there is no network check.
 */
export function validateStellarAddress(address: string, memo: string | null = null): AddressValidation {
  if (typeof address !== 'string' || address.length === 0) return { valid: false, reason: 'empty address' };
  if (StrKey.isValidEd25519PublicKey(address)) {
    if (isZero(StrKey.decodeEd25519PublicKey(address), 32)) return { valid: false, reason: ZERO_KEY_REASON };
    if (memo !== null && withdrawalMemoType(memo) === null) {
      return { valid: false, reason: 'the memo must be a MEMO_ID (decimal 0 to 2^64-1) or a MEMO_TEXT of 1 to 28 UTF-8 bytes without control characters' };
    }
    return { valid: true, normalized: address, memo };
  }
  if (StrKey.isValidMed25519PublicKey(address)) {
    if (memo !== null) return { valid: false, reason: 'a muxed (M…) address carries its own id: send it without a memo' };
    if (isZero(StrKey.decodeMed25519PublicKey(address), 32)) return { valid: false, reason: ZERO_KEY_REASON };
    return { valid: true, normalized: address, memo: null };
  }
  return { valid: false, reason: refusal(address) };
}
