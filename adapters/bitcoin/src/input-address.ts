/**
 * The address an input spends from, read from the input alone (its scriptSig and witness: a
 * block carries no previous outputs). What the input reveals is the preimage of the output's
 * hash: the public key (P2PKH, P2WPKH), the redeem script (P2SH) or the witness script (P2WSH).
 *
 * | input                                                    | kind     | address of            |
 * |----------------------------------------------------------|----------|-----------------------|
 * | scriptSig [sig, pubkey], no witness                      | `p2pkh`  | hash160(pubkey)       |
 * | scriptSig pushes ending with a redeem script             | `p2sh`   | hash160(redeem)       |
 * |   (P2SH-P2WPKH 0x0014…, P2SH-P2WSH 0x0020…, multisig …)  |          |                       |
 * | empty scriptSig, witness [sig, pubkey]                   | `p2wpkh` | hash160(pubkey)       |
 * | empty scriptSig, witness [..., witness script], ≥ 2 items | `p2wsh`  | sha256(script)        |
 *
 * Everything else is null: coinbase inputs (the caller skips them), taproot spends (a key-path
 * spend shows a signature only; a script-path one a leaf script and control block, from which
 * the output key would need elliptic-curve arithmetic), P2PK and bare multisig spends (their
 * outputs have no address), and inputs of non-standard shapes.
 *
 * The shapes are told apart as far as the input allows, with the rules the chain enforces:
 * a signature is DER (0x30, 9-73 bytes with the sighash byte), a key 33 bytes 0x02/0x03 or 65
 * bytes 0x04/0x06/0x07; a P2SH redeem script is at most 520 bytes (a push) and a P2WSH witness
 * script at most 10 000 bytes, both well-formed (every push inside the script); a taproot
 * script-path spend is recognised by its control block (33 + 32·m bytes, m ≤ 128, leaf version
 * 0xc0 or another of the versions BIP-341 recommends so that this very analysis works: values no
 * P2WSH script can start with) and its annex (0x50). What remains ambiguous is read as the common
 * case: two pushes [signature, key] are P2PKH, and a last push of a key's shape is never read as
 * a redeem script; a witness [signature, key] is P2WPKH. Non-standard scripts (an output with
 * a custom script spent by pushes of data) may be read as a P2SH of an address nobody holds.
 */
import { hash as nodeHash } from 'node:crypto';
import { address as btcAddress } from 'bitcoinjs-lib';
import type { BitcoinNetwork } from './network';

/** The output type an input spends, as far as the input tells (see the module comment). */
export type InputKind = 'p2pkh' | 'p2sh' | 'p2wpkh' | 'p2wsh';

/** An input's kind and the preimage its output's hash is taken of (a view into the input: not copied). */
export interface InputPreimage {
  readonly kind: InputKind;
  /** P2PKH / P2WPKH: the public key; P2SH: the redeem script; P2WSH: the witness script. */
  readonly preimage: Uint8Array;
}

/** An input's kind and its output's hash: hash160 (P2PKH, P2SH, P2WPKH) or sha256 (P2WSH), lower-case hex. */
export interface InputHash {
  readonly kind: InputKind;
  readonly hash: string;
}

/** Largest push (MAX_SCRIPT_ELEMENT_SIZE): a P2SH redeem script is pushed, so it is no longer. */
const MAX_PUSH = 520;
/** Largest witness script of P2WSH (MAX_SCRIPT_SIZE). */
const MAX_WITNESS_SCRIPT = 10_000;
/** Largest taproot control block: 33 + 32 × 128 (BIP-341). */
const MAX_CONTROL_BLOCK = 33 + 32 * 128;
/** First byte of a taproot annex (BIP-341). */
const ANNEX_TAG = 0x50;

/**
 * Leaf versions (c[0] & 0xfe) of taproot control blocks that no valid P2WPKH key or P2WSH script
 * can start with, v or v | 1 (BIP-341, "What constraints are there on the leaf version?"):
 * the 32 even values 0xc0-0xfe (0xc0 is tapscript, BIP-342) and 0x66, 0x7e, 0x80, 0x84, 0x96, 0x98,
 * 0xba, 0xbc, 0xbe.
 */
const TAPROOT_LEAF_VERSIONS: ReadonlySet<number> = (() => {
  const s = new Set<number>([0x66, 0x7e, 0x80, 0x84, 0x96, 0x98, 0xba, 0xbc, 0xbe]);
  for (let v = 0xc0; v <= 0xfe; v += 2) s.add(v);
  return s;
})();

/** A DER signature with its sighash byte (the shape: 0x30, 9-73 bytes; not verified). */
function isSignatureLike(b: Uint8Array): boolean {
  return b.length >= 9 && b.length <= 73 && b[0] === 0x30;
}

/** A secp256k1 public key's encoding: compressed (0x02/0x03, 33 bytes), uncompressed or hybrid (65 bytes). */
function isPublicKeyLike(b: Uint8Array): boolean {
  if (b.length === 33) return b[0] === 0x02 || b[0] === 0x03;
  if (b.length === 65) return b[0] === 0x04 || b[0] === 0x06 || b[0] === 0x07;
  return false;
}

/** A taproot script-path control block (BIP-341) of a leaf version no P2WSH script can start with. */
function isControlBlockLike(b: Uint8Array): boolean {
  const n = b.length;
  return n >= 33 && n <= MAX_CONTROL_BLOCK && (n - 33) % 32 === 0 && TAPROOT_LEAF_VERSIONS.has(b[0]! & 0xfe);
}

/**
 * The length of the push at `i` in `script`: [dataStart, dataEnd], or null when the opcode is
 * no push of data or the push runs past the end. OP_0 is an empty push.
 */
function pushAt(script: Uint8Array, i: number): [number, number] | null {
  const op = script[i]!;
  let start: number;
  let len: number;
  if (op <= 0x4b) {
    start = i + 1;
    len = op;
  } else if (op === 0x4c) {
    if (i + 1 >= script.length) return null;
    start = i + 2;
    len = script[i + 1]!;
  } else if (op === 0x4d) {
    if (i + 2 >= script.length) return null;
    start = i + 3;
    len = script[i + 1]! | (script[i + 2]! << 8);
  } else if (op === 0x4e) {
    if (i + 4 >= script.length) return null;
    start = i + 5;
    len = (script[i + 1]! | (script[i + 2]! << 8) | (script[i + 3]! << 16) | (script[i + 4]! << 24)) >>> 0;
  } else {
    return null;
  }
  const end = start + len;
  return end <= script.length ? [start, end] : null;
}

/** Whether every push of the script lies inside it (a script that is not fails when run). */
function isWellFormed(script: Uint8Array): boolean {
  for (let i = 0; i < script.length; ) {
    const op = script[i]!;
    if (op > 0x4e) {
      i++;
      continue;
    }
    const p = pushAt(script, i);
    if (p === null) return false;
    i = p[1];
  }
  return true;
}

/**
 * The data pushes of a push-only scriptSig, in order, or null when it has another opcode or a
 * push runs past its end. OP_1NEGATE and OP_1-OP_16 are pushes too (of numbers): they are given
 * as null entries, since no key or script of ours is one of them.
 */
function scriptSigPushes(script: Uint8Array): Array<Uint8Array | null> | null {
  const out: Array<Uint8Array | null> = [];
  for (let i = 0; i < script.length; ) {
    const op = script[i]!;
    if (op === 0x4f || (op >= 0x51 && op <= 0x60)) {
      out.push(null);
      i++;
      continue;
    }
    const p = pushAt(script, i);
    if (p === null) return null;
    out.push(script.subarray(p[0], p[1]));
    i = p[1];
  }
  return out;
}

/**
 * The kind of an input and the preimage of its output's hash (see InputKind), without hashing;
 * null when the input does not tell (coinbase inputs included: callers skip those).
 */
export function inputPreimage(scriptSig: Uint8Array, witness: readonly Uint8Array[]): InputPreimage | null {
  if (scriptSig.length > 0) {
    // P2PKH, or P2SH (its nested segwit forms included: one push of 0x0014… / 0x0020…, the witness beside).
    const pushes = scriptSigPushes(scriptSig);
    if (pushes === null || pushes.length === 0) return null;
    const last = pushes[pushes.length - 1]!;
    if (last === null) return null;
    if (pushes.length === 2 && isPublicKeyLike(last)) {
      const sig = pushes[0];
      return sig && isSignatureLike(sig) && witness.length === 0 ? { kind: 'p2pkh', preimage: last } : null;
    }
    if (last.length === 0 || last.length > MAX_PUSH || isSignatureLike(last) || isPublicKeyLike(last) || !isWellFormed(last)) return null;
    return { kind: 'p2sh', preimage: last };
  }
  const n = witness.length;
  // Taproot key path ([signature]) and inputs without a witness.
  if (n < 2) return null;
  const last = witness[n - 1]!;
  if (n === 2 && isPublicKeyLike(last) && isSignatureLike(witness[0]!)) return { kind: 'p2wpkh', preimage: last };
  // Taproot with an annex, or a script path ([..., script, control block]).
  if ((last.length > 0 && last[0] === ANNEX_TAG) || isControlBlockLike(last)) return null;
  if (last.length > MAX_WITNESS_SCRIPT || !isWellFormed(last)) return null;
  return { kind: 'p2wsh', preimage: last };
}

/** hash160 (RIPEMD-160 of SHA-256) or SHA-256, lower-case hex (node:crypto's one-shot hash: no hasher objects per input). */
function preimageHash(kind: InputKind, preimage: Uint8Array): string {
  if (kind === 'p2wsh') return nodeHash('sha256', preimage, 'hex');
  return nodeHash('ripemd160', nodeHash('sha256', preimage, 'buffer'), 'hex');
}

/** The kind of an input and its output's hash (hex), or null when the input does not tell. */
export function inputHash(scriptSig: Uint8Array, witness: readonly Uint8Array[]): InputHash | null {
  const p = inputPreimage(scriptSig, witness);
  return p === null ? null : { kind: p.kind, hash: preimageHash(p.kind, p.preimage) };
}

/** The address of a kind and hash on a network, in the codec's canonical form (as outputAddress writes it). */
export function encodeInputAddress(kind: InputKind, hash: Uint8Array, network: BitcoinNetwork): string {
  switch (kind) {
    case 'p2pkh':
      return btcAddress.toBase58Check(hash, network.p2pkhVersion);
    case 'p2sh':
      return btcAddress.toBase58Check(hash, network.p2shVersion);
    case 'p2wpkh':
    case 'p2wsh':
      return btcAddress.toBech32(hash, 0, network.hrp);
  }
}

/**
 * The address an input spends from (see InputKind), canonical for the network, or null when the
 * input alone does not tell (taproot, P2PK, bare multisig, coinbase, non-standard shapes).
 */
export function inputAddress(scriptSig: Uint8Array, witness: readonly Uint8Array[], network: BitcoinNetwork): string | null {
  const h = inputHash(scriptSig, witness);
  return h === null ? null : encodeInputAddress(h.kind, Buffer.from(h.hash, 'hex'), network);
}

/**
 * A set of addresses, indexed so that an input is matched against it by hash: no address is
 * encoded per input, and an input whose kind no address of the set has is not even hashed.
 * Addresses of the set that are not P2PKH, P2SH, P2WPKH or P2WSH of the network (P2TR among
 * them: their spends cannot be told) never match.
 */
export class InputAddressIndex {
  private readonly byKind = new Map<InputKind, Map<string, string>>();

  constructor(addresses: Iterable<string>, network: BitcoinNetwork) {
    for (const a of addresses) {
      const decoded = decodeAddress(a, network);
      if (decoded === null) continue;
      let m = this.byKind.get(decoded.kind);
      if (m === undefined) this.byKind.set(decoded.kind, (m = new Map()));
      if (!m.has(decoded.hash)) m.set(decoded.hash, a);
    }
  }

  /** Whether no input can match (no address of the set is of a kind an input tells). */
  get empty(): boolean {
    return this.byKind.size === 0;
  }

  /** The address of the set this input spends from, as the set spells it, or null. */
  match(scriptSig: Uint8Array, witness: readonly Uint8Array[]): string | null {
    const p = inputPreimage(scriptSig, witness);
    if (p === null) return null;
    const m = this.byKind.get(p.kind);
    if (m === undefined) return null;
    return m.get(preimageHash(p.kind, p.preimage)) ?? null;
  }
}

/** An address of the network as an input kind and hash (hex), or null (P2TR, other networks, invalid text). */
function decodeAddress(address: string, network: BitcoinNetwork): InputHash | null {
  if (typeof address !== 'string') return null;
  const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
  let segwit: { version: number; prefix: string; data: Uint8Array } | null = null;
  try {
    segwit = btcAddress.fromBech32(address);
  } catch {
    // not bech32: base58 below
  }
  if (segwit !== null) {
    if (segwit.prefix.toLowerCase() !== network.hrp || segwit.version !== 0) return null;
    if (segwit.data.length === 20) return { kind: 'p2wpkh', hash: hex(segwit.data) };
    if (segwit.data.length === 32) return { kind: 'p2wsh', hash: hex(segwit.data) };
    return null;
  }
  let legacy: { version: number; hash: Uint8Array };
  try {
    legacy = btcAddress.fromBase58Check(address);
  } catch {
    return null;
  }
  if (legacy.hash.length !== 20) return null;
  if (legacy.version === network.p2pkhVersion) return { kind: 'p2pkh', hash: hex(legacy.hash) };
  if (legacy.version === network.p2shVersion) return { kind: 'p2sh', hash: hex(legacy.hash) };
  return null;
}
