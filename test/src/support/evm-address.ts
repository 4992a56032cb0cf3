/**
 * EVM addresses for tests, written from the EIPs rather than taken from the service: EIP-55
 * checksums, the address of a secp256k1 key, random addresses.
 */
import * as crypto from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3';
import { secp256k1 } from '@noble/curves/secp256k1';

/** EIP-55 form of a 0x address. */
export function eip55(a: string): string {
  const lower = a.slice(2).toLowerCase();
  const hash = Buffer.from(keccak_256(Buffer.from(lower, 'ascii'))).toString('hex');
  return '0x' + [...lower].map((ch, i) => (parseInt(hash[i]!, 16) >= 8 ? ch.toUpperCase() : ch)).join('');
}

/** The address of a secp256k1 private key (0x hex). */
export function addressOfKey(key: string): string {
  const pub = secp256k1.getPublicKey(key.slice(2), false).slice(1);
  return eip55('0x' + Buffer.from(keccak_256(pub)).subarray(12).toString('hex'));
}

/** A random address nobody holds a key for. */
export function randomAddress(): string {
  return eip55('0x' + crypto.randomBytes(20).toString('hex'));
}
