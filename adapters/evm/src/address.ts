import { keccak_256 } from '@noble/hashes/sha3';
import { LruCache, secp256k1Uncompressed, type AddressCodec, type AddressValidation, type PublicKey } from '@wcs/core';

const MAX_INPUT = 100;
const invalid = (reason: string): AddressValidation => ({ valid: false, reason });

/**
 * EIP-55 checksummed form of 40 hex digits (any case): a letter is upper-case where the
 * matching nibble of keccak256(lower-case hex as ASCII) is 8 or more.
 */
export function checksummed(hex40: string): string {
  const lower = hex40.toLowerCase();
  // a service checks the same few thousand addresses over and over (its deposit, hot and fee addresses): one keccak each
  const known = CHECKSUMMED.get(lower);
  if (known !== undefined) return known;
  const out = eip55(lower);
  CHECKSUMMED.set(lower, out);
  return out;
}

const CHECKSUMMED = new LruCache<string, string>(16_384);
/** Public key (hex, as given) → address: every transfer checks its key against its sender. */
const KEY_ADDRESSES = new LruCache<string, string>(16_384);

function eip55(lower: string): string {
  const hash = keccak_256(Buffer.from(lower, 'latin1'));
  let out = '0x';
  for (let i = 0; i < 40; i++) {
    const c = lower[i]!;
    const nibble = i % 2 === 0 ? hash[i >> 1]! >> 4 : hash[i >> 1]! & 0x0f;
    out += nibble >= 8 && c >= 'a' ? c.toUpperCase() : c;
  }
  return out;
}

/** Why text that is not `0x` + 40 hex digits was refused. */
function shapeReason(address: string): string {
  if (/^0X[0-9a-fA-F]{40}$/.test(address)) return 'address prefix must be lower-case "0x"';
  if (/^[0-9a-fA-F]{40}$/.test(address)) return 'address lacks the "0x" prefix';
  if (/^XE[0-9]{2}[0-9A-Z]{30,31}$/i.test(address)) return 'ICAP (IBAN-style) addresses are not accepted: use the 0x form';
  if (/^[^.\s]+(\.[^.\s]+)+$/.test(address) && !address.startsWith('0x')) return 'names (ENS) are not accepted: resolve to a 0x address first';
  if (address.startsWith('0x')) {
    const digits = address.slice(2);
    if (!/^[0-9a-fA-F]*$/.test(digits)) return 'address has non-hex characters after "0x"';
    return `address has ${digits.length} hex digits after "0x", not 40`;
  }
  return 'not an EVM address ("0x" + 40 hex digits)';
}

/** EVM addresses: EIP-55 checksummed, the same on every EVM chain. */
export class EvmAddressCodec implements AddressCodec {
  /** keccak256 of the uncompressed key, last 20 bytes, EIP-55; accepts 33-byte compressed and 65-byte uncompressed keys. */
  addressFromPublicKey(publicKey: PublicKey): string {
    if (publicKey.curve !== 'secp256k1') throw new Error(`EVM keys are secp256k1, not ${publicKey.curve}`);
    const b = publicKey.bytes;
    const shapeOk = (b.length === 33 && (b[0] === 0x02 || b[0] === 0x03)) || (b.length === 65 && b[0] === 0x04);
    if (!shapeOk) throw new Error(`EVM addresses need a secp256k1 public key, 33 bytes compressed or 65 bytes uncompressed (got ${b.length} bytes)`);
    const id = Buffer.from(b).toString('hex');
    const known = KEY_ADDRESSES.get(id);
    if (known !== undefined) return known;
    let uncompressed: Uint8Array;
    try {
      uncompressed = secp256k1Uncompressed(publicKey);
    } catch (e) {
      throw new Error(`not a secp256k1 public key: ${(e as Error).message}`);
    }
    const address = checksummed(Buffer.from(keccak_256(uncompressed.subarray(1)).subarray(12)).toString('hex'));
    KEY_ADDRESSES.set(id, address);
    return address;
  }

  validate(address: string, memo?: string | null): AddressValidation {
    if (typeof address !== 'string' || address.length === 0) return invalid('address is empty');
    if (/\s/.test(address)) return invalid('address contains whitespace');
    if (address.length > MAX_INPUT) return invalid('address is too long');
    if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return invalid(shapeReason(address));
    const hex = address.slice(2);
    const normalized = checksummed(hex);
    const singleCase = hex === hex.toLowerCase() || hex === hex.toUpperCase();
    // The reason never shows the checksummed form: that would hand a mistyped address a valid checksum.
    if (!singleCase && address !== normalized) return invalid('EIP-55 checksum mismatch: a mixed-case address must carry a valid checksum (check for a typo)');
    if (/^0{40}$/.test(hex)) return invalid('zero address: no one holds its key, coins sent there are lost');
    if (memo !== undefined && memo !== null) return invalid('EVM chains have no memo: send without one');
    return { valid: true, normalized, memo: null };
  }
}
