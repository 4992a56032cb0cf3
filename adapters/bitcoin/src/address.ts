import { address as btcAddress, crypto as btcCrypto } from 'bitcoinjs-lib';
import { secp256k1Uncompressed, type AddressCodec, type AddressValidation, type PublicKey } from '@wcs/core';
import { KNOWN_BASE58_VERSIONS, KNOWN_HRPS, type BitcoinNetwork } from './network';

/** Longer than any address we accept (a bech32 string is at most 90 characters). */
const MAX_INPUT = 100;
/** Longest string worth base58-decoding: a 25-byte legacy address is at most 35 characters. */
const MAX_BASE58 = 64;
/** Bech32 data characters, in value order (BIP-173); only read to name the witness version in a refusal. */
const BECH32_CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const BASE58_RE = /^[1-9A-HJ-NP-Za-km-z]+$/;

const invalid = (reason: string): AddressValidation => ({ valid: false, reason });

/**
 * A decoded address, or why not; checksumOk when the checksum matched (the text is in that
 * format, but what it carries is wrong).
 */
type Decoded<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string; readonly checksumOk: boolean };
const fail = (reason: string, checksumOk: boolean): { ok: false; reason: string; checksumOk: boolean } => ({ ok: false, reason, checksumOk });

interface WitnessProgram {
  readonly hrp: string;
  readonly version: number;
  readonly program: Uint8Array;
  /** Lower-case, re-encoded by bitcoinjs-lib. */
  readonly canonical: string;
}

/**
 * Decodes a native segwit address (any hrp) per BIP-173 as amended by BIP-350 with bitcoinjs-lib's
 * address.fromBech32, which checks the checksum (bech32 for v0, bech32m for v1+), case mixing,
 * the 90-character limit and the program's padding. What it does not check is done here:
 * characters outside US-ASCII, witness version 0-16, program length 2-40 (20 or 32 for v0),
 * an empty data part, and (re-encoding with address.toBech32) that the text is the canonical
 * encoding of what was decoded. Which versions a wallet may pay to is the caller's policy.
 */
function decodeSegwit(address: string): Decoded<WitnessProgram> {
  // bech32@2 (under bitcoinjs-lib) lower-cases before it checks characters, so a non-ASCII letter
  // that lower-cases to an ASCII one (U+212A KELVIN SIGN -> "k") would pass.
  if (!/^[\x21-\x7e]*$/.test(address)) return fail('contains a character outside US-ASCII 33-126', false);
  let decoded: { version: number; prefix: string; data: Uint8Array };
  try {
    decoded = btcAddress.fromBech32(address);
  } catch (e) {
    return fromBech32Failure(address, e);
  }
  const { version, prefix, data } = decoded;
  // A bech32m string with no data decodes with version undefined.
  if (typeof version !== 'number' || !Number.isInteger(version)) return fail('has an empty data part', true);
  if (version > 16) return fail(`has witness version ${version} (0-16 allowed)`, true);
  if (data.length < 2 || data.length > 40) return fail(`has a ${data.length}-byte witness program (2-40 allowed)`, true);
  if (version === 0 && data.length !== 20 && data.length !== 32) {
    return fail(`has a ${data.length}-byte version 0 program (20 or 32 per BIP-141)`, true);
  }
  // Belt and braces for BIP-350: toBech32 picks the checksum by version, so the input must come back.
  const canonical = btcAddress.toBech32(data, version, prefix);
  if (canonical !== address.toLowerCase()) return fail(`is not the canonical encoding of witness version ${version} (${version === 0 ? 'bech32' : 'bech32m'}, BIP-350)`, true);
  return { ok: true, value: { hrp: prefix, version, program: Uint8Array.from(data), canonical } };
}

/** Says in words why address.fromBech32 refused a string (its messages come from bitcoinjs-lib and bech32@2). */
function fromBech32Failure(address: string, e: unknown): Decoded<WitnessProgram> {
  const msg = e instanceof Error ? e.message : String(e);
  if (/ uses wrong encoding$/.test(msg) || msg === 'Excess padding' || msg === 'Non-zero padding') {
    // A checksum matched: the data part is well-formed bech32, so its first character is the witness version.
    const lower = address.toLowerCase();
    const pos = lower.lastIndexOf('1');
    if (pos < 0 || lower.length - pos - 1 <= 6) return fail('has an empty data part', true);
    const version = BECH32_CHARSET.indexOf(lower[pos + 1]!);
    if (version > 16) return fail(`has witness version ${version} (0-16 allowed)`, true);
    if (msg === 'Excess padding') return fail('has more than 4 bits of padding in its witness program', true);
    if (msg === 'Non-zero padding') return fail('has non-zero padding in its witness program', true);
    // fromBech32 found the checksum BIP-350 does not prescribe for this version.
    return fail(
      version === 0
        ? 'is witness version 0 with a bech32m checksum (v0 uses bech32, BIP-350)'
        : `is witness version ${version} with a bech32 checksum (v1+ uses bech32m, BIP-350)`,
      true,
    );
  }
  if (/^Mixed-case string /.test(msg)) return fail('mixes upper and lower case (BIP-173)', false);
  if (/^Invalid checksum for /.test(msg)) return fail('has an invalid bech32/bech32m checksum', false);
  if (msg === 'Exceeds length limit') return fail('is longer than 90 characters', false);
  if (msg === 'Data too short') return fail('has a checksum shorter than 6 characters', false);
  if (/ too short$/.test(msg)) return fail('is shorter than 8 characters', false);
  if (/^No separator character for /.test(msg)) return fail('has no bech32 separator "1"', false);
  if (/^Missing prefix for /.test(msg)) return fail('has an empty human-readable part', false);
  if (/^Invalid prefix /.test(msg)) return fail('has a human-readable part outside US-ASCII 33-126', false);
  const unknown = /^Unknown character (.)$/u.exec(msg);
  if (unknown) return fail(`contains ${JSON.stringify(unknown[1])}, not a bech32 data character`, false);
  return fail(`is not valid bech32/bech32m (${msg})`, false);
}

/** Legacy base58check with bitcoinjs-lib's address.fromBase58Check (version byte + 20-byte hash, checksum verified). */
function decodeBase58(address: string): Decoded<{ version: number; hash: Uint8Array }> {
  if (address.length > MAX_BASE58) return fail('is not a base58 address of plausible length', false);
  try {
    return { ok: true, value: btcAddress.fromBase58Check(address) };
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    const bad = /[^1-9A-HJ-NP-Za-km-z]/u.exec(address);
    if (bad) return fail(`contains ${JSON.stringify(bad[0])}, not a base58 character`, false);
    if (msg === 'Invalid checksum') return fail('has an invalid base58check checksum', false);
    // fromBase58Check verifies the checksum before it looks at the length.
    if (/ is too short$/.test(msg)) return fail('is base58check but carries less than a version byte and a 20-byte hash', true);
    if (/ is too long$/.test(msg)) return fail('is base58check but carries more than a version byte and a 20-byte hash', true);
    return fail(`is not valid base58check (${msg})`, false);
  }
}

/**
 * Bitcoin addresses of one network: P2WPKH deposit addresses; withdrawal targets may be
 * P2WPKH, P2WSH, P2TR (lower-case bech32/bech32m) or legacy P2PKH/P2SH (base58, as given).
 * Encoding, decoding and hashing are bitcoinjs-lib's.
 */
export class BitcoinAddressCodec implements AddressCodec {
  constructor(private readonly network: BitcoinNetwork) {}

  /** P2WPKH (BIP-84) for a 33-byte compressed secp256k1 key: uncompressed keys are not standard in segwit (BIP-143). */
  addressFromPublicKey(publicKey: PublicKey): string {
    if (publicKey.curve !== 'secp256k1') throw new Error(`bitcoin keys are secp256k1, not ${publicKey.curve}`);
    // bitcoinjs-lib's own pubkey check (payments.p2wpkh) only range-checks x, so the curve check stays ours.
    const n = publicKey.bytes.length;
    if (n !== 33) throw new Error(`bitcoin P2WPKH needs a 33-byte compressed secp256k1 public key (got ${n} bytes)`);
    try {
      secp256k1Uncompressed(publicKey);
    } catch (e) {
      throw new Error(`bitcoin P2WPKH needs a 33-byte compressed secp256k1 public key (got ${n} bytes not on the curve: ${(e as Error).message})`);
    }
    return btcAddress.toBech32(btcCrypto.hash160(publicKey.bytes), 0, this.network.hrp);
  }

  validate(address: string, memo?: string | null): AddressValidation {
    if (typeof address !== 'string' || address.length === 0) return invalid('address is empty');
    if (/\s/.test(address)) return invalid('address contains whitespace');
    if (address.length > MAX_INPUT) return invalid('address is too long');
    const r = this.check(address);
    if (!r.valid) return r;
    if (memo !== undefined && memo !== null) return invalid('BTC has no memo: send without one');
    return r;
  }

  private check(address: string): AddressValidation {
    const net = this.network;
    const seg = decodeSegwit(address);
    if (seg.ok) {
      const { hrp, version, program, canonical } = seg.value;
      if (hrp !== net.hrp) return invalid(this.foreignHrp(hrp));
      if (version === 0) return { valid: true, normalized: canonical, memo: null };
      if (version === 1 && program.length === 32) return { valid: true, normalized: canonical, memo: null };
      // BIP-350 asks senders to accept future versions; a custodian paying to one today would burn the coins.
      return invalid(`address has witness version ${version} and a ${program.length}-byte program: not an output type we pay to (P2WPKH, P2WSH and P2TR only)`);
    }
    const b58 = decodeBase58(address);
    if (!b58.ok && b58.checksumOk) return invalid(`address ${b58.reason}`);
    if (b58.ok) {
      const { version } = b58.value;
      if (version === net.p2pkhVersion || version === net.p2shVersion) return { valid: true, normalized: address, memo: null };
      const kind = KNOWN_BASE58_VERSIONS.get(version);
      return invalid(kind ? `address is a ${kind} address, not ${net.name}` : `address has base58 version byte 0x${version.toString(16).padStart(2, '0')}, not a ${net.name} address`);
    }
    // Neither decodes: explain in the terms of the format the text looks like.
    if (this.looksBech32(address, seg.checksumOk)) return invalid(`bech32 address ${seg.reason}`);
    if (BASE58_RE.test(address)) return invalid(`base58 address ${b58.reason}`);
    return invalid(`not a ${net.name} bitcoin address (neither bech32 nor base58check)`);
  }

  private looksBech32(address: string, checksumOk: boolean): boolean {
    const lower = address.toLowerCase();
    const pos = lower.lastIndexOf('1');
    if (pos < 1) return false;
    const hrp = lower.slice(0, pos);
    if (hrp === this.network.hrp || KNOWN_HRPS.has(hrp)) return true;
    // A valid bech32/bech32m string, or a segwit-looking prefix with another hrp (e.g. "tc1q…", "ltc1q…").
    return checksumOk || /^[a-z]{1,8}1[qpzry9x8gf2tvdw0s3jn54khce6mua7l]{6,}$/.test(lower);
  }

  private foreignHrp(hrp: string): string {
    const owner = KNOWN_HRPS.get(hrp);
    const expected = `this chain is ${this.network.name} (hrp "${this.network.hrp}")`;
    return owner ? `address is for ${owner} (hrp "${hrp}"); ${expected}` : `address has human-readable part "${hrp}"; ${expected}`;
  }
}
