import { Address, Cell } from '@ton/core';
import { OP_COMMENT, OP_JETTON_NOTIFICATION, readComment, readJettonNotification, type JettonNotification } from './messages';

/**
 * What the scanner needs of a message body (base64 BOC): its op, the jetton notification it is,
 * the comment it is. @ton/core's Cell.fromBoc builds every cell with its hashes (SHA-256 of each
 * cell: ~80 µs for a notification of two cells); the scanner needs no hash of a body, only its
 * bits. So a body in the common form (one root, ordinary cells, no index or with one, CRC32C
 * checked when present) is read here without building cells, and anything else (exotic cells,
 * anycast addresses, a read past the end, ...) goes to @ton/core's readers, which decide it:
 * both give the same answer by construction (the fast path only answers where it reads what
 * @ton/core reads; src/body.test.ts compares them).
 */
export interface BodyFacts {
  /** The first 32 bits, null when the body is shorter. */
  readonly op: number | null;
  readonly notification: JettonNotification | null;
  /** readComment of the body. */
  readonly comment: string | null;
}

interface Boc {
  readonly bytes: Buffer;
  /** Per cell: start of its data in bytes, its bit length, its ref indices. */
  readonly start: number[];
  readonly bits: number[];
  readonly refs: number[][];
}

/** A cursor in one cell. */
interface Cursor {
  cell: number;
  pos: number;
  ref: number;
}

/** Thrown inside the fast path: @ton/core decides the body. */
const FALLBACK = new Error('fallback');

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

function crc32c(b: Buffer, end: number): number {
  let c = 0xffffffff;
  for (let i = 0; i < end; i++) c = CRC_TABLE[(c ^ b[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function uintBE(b: Buffer, at: number, n: number): number {
  if (at + n > b.length) throw FALLBACK;
  let v = 0;
  for (let i = 0; i < n; i++) v = v * 256 + b[at + i]!;
  return v;
}

/** serialized_boc#b5ee9c72 with one root and ordinary cells only; else FALLBACK. */
function parseBoc(bytes: Buffer): Boc {
  if (bytes.length < 6 || bytes.readUInt32BE(0) !== 0xb5ee9c72) throw FALLBACK;
  const f = bytes[4]!;
  const hasIdx = (f & 0x80) !== 0;
  const hasCrc = (f & 0x40) !== 0;
  if ((f & 0x18) !== 0) throw FALLBACK; // flags must be 0
  const size = f & 7;
  const offBytes = bytes[5]!;
  if (size < 1 || size > 4 || offBytes < 1 || offBytes > 8) throw FALLBACK;
  let p = 6;
  const cells = uintBE(bytes, p, size);
  const roots = uintBE(bytes, p + size, size);
  const absent = uintBE(bytes, p + 2 * size, size);
  p += 3 * size;
  const total = uintBE(bytes, p, offBytes);
  p += offBytes;
  if (roots !== 1 || absent !== 0 || cells < 1 || cells > 1024) throw FALLBACK;
  if (uintBE(bytes, p, size) !== 0) throw FALLBACK; // the root is the first cell
  p += size;
  if (hasIdx) p += cells * offBytes;
  const end = p + total;
  if (end + (hasCrc ? 4 : 0) !== bytes.length) throw FALLBACK;
  if (hasCrc && crc32c(bytes, end) !== bytes.readUInt32LE(end)) throw FALLBACK;
  const start: number[] = [];
  const bits: number[] = [];
  const refs: number[][] = [];
  for (let i = 0; i < cells; i++) {
    if (p + 2 > end) throw FALLBACK;
    const d1 = bytes[p]!;
    const d2 = bytes[p + 1]!;
    const refCount = d1 & 7;
    // exotic, with hashes, a level mask, more than 4 refs: @ton/core's
    if ((d1 & 0xf8) !== 0 || refCount > 4) throw FALLBACK;
    const len = Math.ceil(d2 / 2);
    const s = p + 2;
    let n = len * 8;
    if (d2 & 1) {
      const last = bytes[s + len - 1];
      if (last === undefined || last === 0 || s + len > end) throw FALLBACK;
      let z = 0;
      while (((last >> z) & 1) === 0) z++;
      n -= z + 1;
    }
    p = s + len;
    const r: number[] = [];
    for (let k = 0; k < refCount; k++) {
      const idx = uintBE(bytes, p, size);
      if (idx <= i || idx >= cells) throw FALLBACK;
      r.push(idx);
      p += size;
    }
    if (p > end) throw FALLBACK;
    start.push(s);
    bits.push(n);
    refs.push(r);
  }
  if (p !== end) throw FALLBACK;
  return { bytes, start, bits, refs };
}

function remaining(b: Boc, c: Cursor): number {
  return b.bits[c.cell]! - c.pos;
}

function bit(b: Boc, cell: number, pos: number): number {
  return (b.bytes[b.start[cell]! + (pos >> 3)]! >> (7 - (pos & 7))) & 1;
}

/** n ≤ 48 bits as a number. */
function readUint(b: Boc, c: Cursor, n: number): number {
  if (n > remaining(b, c)) throw FALLBACK;
  let v = 0;
  for (let i = 0; i < n; i++) v = v * 2 + bit(b, c.cell, c.pos + i);
  c.pos += n;
  return v;
}

function readBytes(b: Boc, c: Cursor, n: number): Buffer {
  if (n * 8 > remaining(b, c)) throw FALLBACK;
  const out = Buffer.allocUnsafe(n);
  if ((c.pos & 7) === 0) {
    const at = b.start[c.cell]! + (c.pos >> 3);
    b.bytes.copy(out, 0, at, at + n);
    c.pos += n * 8;
  } else {
    for (let i = 0; i < n; i++) out[i] = readUint(b, c, 8);
  }
  return out;
}

function readRef(b: Boc, c: Cursor): Cursor {
  const r = b.refs[c.cell]![c.ref];
  if (r === undefined) throw FALLBACK;
  c.ref += 1;
  return { cell: r, pos: 0, ref: 0 };
}

/** readComment: op 0, then the string tail (whole bytes, one ref at most per cell); null when not one. */
function comment(b: Boc, c: Cursor): string | null {
  if (remaining(b, c) < 32 || readUint(b, c, 32) !== OP_COMMENT) return null;
  const parts: Buffer[] = [];
  let cur: Cursor | null = c;
  while (cur) {
    const left: number = remaining(b, cur);
    const refsLeft: number = b.refs[cur.cell]!.length - cur.ref;
    if (left % 8 !== 0 || (refsLeft !== 0 && refsLeft !== 1)) return null;
    parts.push(readBytes(b, cur, left / 8));
    cur = refsLeft === 1 ? readRef(b, cur) : null;
  }
  const text = Buffer.concat(parts).toString();
  return text.includes('\ufffd') ? null : text;
}

function notification(b: Boc, c: Cursor): JettonNotification {
  const queryId = BigInt(readUint(b, c, 32)) * 4294967296n + BigInt(readUint(b, c, 32));
  const len = readUint(b, c, 4);
  const amountBytes = readBytes(b, c, len);
  const amount = len === 0 ? 0n : BigInt(`0x${amountBytes.toString('hex')}`);
  const tag = readUint(b, c, 2);
  let sender: Address | null = null;
  if (tag === 2) {
    if (readUint(b, c, 1) !== 0) throw FALLBACK; // anycast
    const wc = readUint(b, c, 8);
    sender = new Address(wc >= 128 ? wc - 256 : wc, readBytes(b, c, 32));
  } else if (tag !== 0) {
    throw FALLBACK;
  }
  let text: string | null = null;
  if (remaining(b, c) > 0) {
    const payload = readUint(b, c, 1) === 1 ? readRef(b, c) : c;
    text = comment(b, payload);
  }
  return { queryId, amount, sender, comment: text };
}

/** The same facts by @ton/core's cells and readers (the reference; bodyFacts falls back to it). */
export function bodyFactsByCore(base64: string): BodyFacts {
  const cell = Cell.fromBase64(base64);
  const s = cell.beginParse();
  const op = s.remainingBits >= 32 ? s.preloadUint(32) : null;
  return { op, notification: readJettonNotification(cell.beginParse()), comment: readComment(cell.beginParse()) };
}

/** The facts of a body (base64 BOC) read without @ton/core's cells; undefined when it leaves the body to @ton/core. */
export function bodyFactsLight(base64: string): BodyFacts | undefined {
  try {
    const b = parseBoc(Buffer.from(base64, 'base64'));
    const op = b.bits[0]! >= 32 ? readUint(b, { cell: 0, pos: 0, ref: 0 }, 32) : null;
    if (op === OP_JETTON_NOTIFICATION) return { op, notification: notification(b, { cell: 0, pos: 32, ref: 0 }), comment: null };
    return { op, notification: null, comment: op === OP_COMMENT ? comment(b, { cell: 0, pos: 0, ref: 0 }) : null };
  } catch (e) {
    if (e === FALLBACK) return undefined;
    throw e;
  }
}

/** The facts of a body (base64 BOC); throws when it is not a BOC (@ton/core's error). */
export function bodyFacts(base64: string): BodyFacts {
  return bodyFactsLight(base64) ?? bodyFactsByCore(base64);
}
