import { decodeAccountID, deriveAddress, encodeAccountID, isValidXAddress, xAddressToClassicAddress } from 'xrpl';
import { secp256k1Uncompressed, type AddressValidation, type PublicKey } from '@wcs/core';
import { isDestinationTag } from './memo';

/**
 * Well-formed classic addresses that are black holes (xrpl.org "Addresses: Special addresses"):
 * XRP sent there is lost (or, for ACCOUNT_ZERO, the payment is refused as having no destination).
 */
const BLACK_HOLES: ReadonlyMap<string, string> = new Map([
  ['rrrrrrrrrrrrrrrrrrrrrhoLvTp', 'ACCOUNT_ZERO is a black hole, not an account'],
  ['rrrrrrrrrrrrrrrrrrrrBZbvji', 'ACCOUNT_ONE is a black hole (trust line placeholder), not an account'],
  ['rrrrrrrrrrrrrrrrrNAMEtxvNvQ', 'the name reservation address is a black hole'],
  ['rrrrrrrrrrrrrrrrrrrn5RM1rHd', 'the NaN address is a black hole'],
]);

/** The classic r-address of a 33-byte compressed secp256k1 public key (RIPEMD160(SHA256(key))). */
export function xrpAddressFromPublicKey(key: PublicKey): string {
  if (key.curve !== 'secp256k1') throw new TypeError(`XRP deposit keys are secp256k1, got ${key.curve}`);
  const b = key.bytes;
  if (b.length !== 33 || (b[0] !== 2 && b[0] !== 3)) throw new TypeError('an XRP secp256k1 key is a 33-byte compressed point (02/03 prefix)');
  secp256k1Uncompressed(key); // throws a TypeError when the point is not on the curve
  // deriveAddress takes any hex (it also serves ed25519 "ED…" keys), hence the checks above.
  return deriveAddress(Buffer.from(b).toString('hex').toUpperCase());
}

function checkClassic(address: string): string | null {
  let id: Uint8Array;
  try {
    id = decodeAccountID(address);
  } catch (e) {
    return /checksum/i.test((e as Error).message) ? 'bad checksum' : 'not an XRP classic address (base58 account id)';
  }
  if (encodeAccountID(id) !== address) return 'not the canonical encoding of an account id';
  return BLACK_HOLES.get(address) ?? null;
}

/**
 * A target: a classic address (network-agnostic; normalized = itself, memo = the given tag) or an
 * X-address (XLS-5d: normalized = its classic address, memo = its tag). X-addresses carry the
 * network: `X…` for mainnet, `T…` for test networks. An X-address tag that differs from a given
 * memo, a memo that is not a destination tag, and a black hole are invalid.
 */
export function validateXrpAddress(address: string, memo: string | null, testNetwork: boolean): AddressValidation {
  if (typeof address !== 'string' || address.length === 0) return { valid: false, reason: 'empty address' };
  if (memo !== null && !isDestinationTag(memo)) {
    return { valid: false, reason: 'the memo is not a destination tag (decimal 0 to 4294967295, no leading zeros)' };
  }
  if (address.startsWith('r')) {
    const problem = checkClassic(address);
    if (problem) return { valid: false, reason: problem };
    return { valid: true, normalized: address, memo };
  }
  if (address.startsWith('X') || address.startsWith('T')) {
    if (!isValidXAddress(address)) return { valid: false, reason: 'not a valid X-address (bad checksum, prefix or tag)' };
    const x = xAddressToClassicAddress(address);
    if (x.test !== testNetwork) {
      return { valid: false, reason: testNetwork ? 'a mainnet X-address on a test network' : 'a test-network X-address on mainnet' };
    }
    const tag = x.tag === false ? null : String(x.tag);
    if (tag !== null && memo !== null && memo !== tag) return { valid: false, reason: 'the X-address tag conflicts with the given memo' };
    const problem = checkClassic(x.classicAddress);
    if (problem) return { valid: false, reason: problem };
    return { valid: true, normalized: x.classicAddress, memo: tag ?? memo };
  }
  return { valid: false, reason: 'not an XRP classic address (r…) or X-address (X… / T…)' };
}
