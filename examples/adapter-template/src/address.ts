import { createHash } from 'node:crypto';
import type { AddressValidation, PublicKey } from '@wcs/core';

/**
 * Addresses of the made-up `demo` chain (replace with your chain's): a network prefix (`dm` on
 * mainnet, `dt` on every other network), the 32-byte ed25519 public key in hex, and a checksum:
 * the first 4 bytes of SHA-256 over the prefix's ASCII bytes followed by the key bytes. Canonical
 * form: lower case. Upper-case hex is accepted and normalised; anything else is refused with a
 * reason (a returned result, never a throw).
 */
export class DemoAddresses {
  readonly prefix: 'dm' | 'dt';

  constructor(network: string) {
    this.prefix = network === 'mainnet' ? 'dm' : 'dt';
  }

  addressFromPublicKey(key: PublicKey): string {
    if (key.curve !== 'ed25519' || key.bytes.length !== 32) throw new TypeError(`a demo address needs a 32-byte ed25519 key, got ${key.curve} (${key.bytes.length} bytes)`);
    const body = Buffer.from(key.bytes).toString('hex');
    return `${this.prefix}${body}${this.checksum(key.bytes)}`;
  }

  validate(address: string, memo: string | null): AddressValidation {
    if (memo !== null && memo !== '') return { valid: false, reason: 'the demo chain has no memos' };
    if (typeof address !== 'string' || address.length !== 74) return { valid: false, reason: 'a demo address is 74 characters: a 2-letter prefix, 64 hex digits of key, 8 of checksum' };
    const lower = address.toLowerCase();
    const prefix = lower.slice(0, 2);
    if (prefix !== 'dm' && prefix !== 'dt') return { valid: false, reason: `unknown prefix ${JSON.stringify(address.slice(0, 2))}` };
    if (prefix !== this.prefix) return { valid: false, reason: prefix === 'dm' ? 'a mainnet address on a test network' : 'a test-network address on mainnet' };
    if (!/^[0-9a-f]{72}$/.test(lower.slice(2))) return { valid: false, reason: 'not hexadecimal' };
    const key = Buffer.from(lower.slice(2, 66), 'hex');
    if (lower.slice(66) !== this.checksum(key)) return { valid: false, reason: 'checksum mismatch' };
    return { valid: true, normalized: lower, memo: null };
  }

  private checksum(key: Uint8Array): string {
    return createHash('sha256').update(this.prefix, 'ascii').update(key).digest('hex').slice(0, 8);
  }
}
