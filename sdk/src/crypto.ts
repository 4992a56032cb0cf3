/**
 * SHA-256, HMAC-SHA256 and constant-time comparison on two backends:
 *
 *   - `node`: node:crypto, synchronous and the fastest on Node. Registered by the package's `node`
 *     export condition (src/node.ts imports node:crypto statically), or found at first use through
 *     `process.getBuiltinModule('node:crypto')` (Node >= 20.16, Deno, Bun) without a static import
 *     that an edge bundler would trip over.
 *   - `webcrypto`: globalThis.crypto.subtle (browsers, Next.js edge, Cloudflare Workers, Deno,
 *     Node too), asynchronous.
 *
 * Nothing here is exported from the package except the backend names.
 */

/** Which crypto implementation to use: `auto` (node:crypto when available, else WebCrypto), or one of them. */
export type CryptoPreference = 'auto' | 'node' | 'webcrypto';

/** The part of node:crypto the SDK uses (structural, so the package's types need no @types/node). */
export interface NodeCryptoLike {
  createHmac(algorithm: string, key: unknown): { update(data: string | Uint8Array): { digest(): Uint8Array; digest(encoding: 'hex'): string } };
  createHash(algorithm: string): { update(data: string | Uint8Array): { digest(encoding: 'hex'): string } };
  createSecretKey(key: Uint8Array): unknown;
  timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean;
  /** One-shot hash (Node >= 20.12). */
  hash?: (algorithm: string, data: string | Uint8Array, outputEncoding?: 'hex') => string;
}

/** The part of WebCrypto's SubtleCrypto the SDK uses (structural: no DOM types needed). */
export interface CryptoKeyLike {
  readonly type: string;
}
export interface SubtleLike {
  digest(algorithm: 'SHA-256', data: Uint8Array): Promise<ArrayBuffer>;
  importKey(format: 'raw', key: Uint8Array, algorithm: { name: 'HMAC'; hash: 'SHA-256' }, extractable: boolean, usages: Array<'sign' | 'verify'>): Promise<CryptoKeyLike>;
  sign(algorithm: 'HMAC', key: CryptoKeyLike, data: Uint8Array): Promise<ArrayBuffer>;
  verify(algorithm: 'HMAC', key: CryptoKeyLike, signature: Uint8Array, data: Uint8Array): Promise<boolean>;
}

let nodeCrypto: NodeCryptoLike | null | undefined;

/** Makes node:crypto the `auto` backend (the `node` entry point calls this with its static import). */
export function registerNodeCrypto(mod: NodeCryptoLike): void {
  nodeCrypto = mod;
}

/** node:crypto when this runtime has it, else null. Probed once. */
export function getNodeCrypto(): NodeCryptoLike | null {
  if (nodeCrypto === undefined) {
    nodeCrypto = null;
    try {
      const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
      const mod = typeof proc?.getBuiltinModule === 'function' ? proc.getBuiltinModule('node:crypto') : undefined;
      if (mod && typeof (mod as NodeCryptoLike).createHmac === 'function') nodeCrypto = mod as NodeCryptoLike;
    } catch {
      nodeCrypto = null;
    }
  }
  return nodeCrypto;
}

export function getSubtle(): SubtleLike {
  const subtle = (globalThis as { crypto?: { subtle?: SubtleLike } }).crypto?.subtle;
  if (!subtle) throw new Error('@wcs/sdk: no crypto available (neither node:crypto nor globalThis.crypto.subtle)');
  return subtle;
}

/** The backend a preference resolves to on this runtime. */
export function resolveBackend(pref: CryptoPreference = 'auto'): 'node' | 'webcrypto' {
  if (pref === 'webcrypto') return 'webcrypto';
  const node = getNodeCrypto();
  if (node) return 'node';
  if (pref === 'node') throw new Error('@wcs/sdk: crypto "node" requested but node:crypto is not available in this runtime');
  return 'webcrypto';
}

export const utf8: { encode(input: string): Uint8Array } = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

export function toBytes(data: Uint8Array | string): Uint8Array {
  return typeof data === 'string' ? utf8.encode(data) : data;
}

/** Decodes UTF-8 (throws on invalid sequences). */
export function decodeUtf8(bytes: Uint8Array): string {
  return utf8Decoder.decode(bytes);
}

const HEX_DIGITS = '0123456789abcdef';
export function toHex(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += HEX_DIGITS[bytes[i]! >> 4]! + HEX_DIGITS[bytes[i]! & 15]!;
  return s;
}

/** Lowercase hex to bytes; null when it is not an even-length string of 0-9 a-f. */
export function fromHex(hex: string): Uint8Array | null {
  if (hex.length % 2 !== 0) return null;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) {
    const hi = HEX_DIGITS.indexOf(hex[2 * i]!);
    const lo = HEX_DIGITS.indexOf(hex[2 * i + 1]!);
    if (hi < 0 || lo < 0) return null;
    out[i] = (hi << 4) | lo;
  }
  return out;
}

/** Constant-time equality of two byte strings of the same length (false at once when the lengths differ). */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** Random lowercase hex of `bytes` random bytes (WebCrypto's getRandomValues: every runtime has it). */
export function randomHex(bytes: number): string {
  const c = (globalThis as { crypto?: { getRandomValues?: <T extends Uint8Array>(a: T) => T } }).crypto;
  if (!c?.getRandomValues) throw new Error('@wcs/sdk: crypto.getRandomValues is not available');
  return toHex(c.getRandomValues(new Uint8Array(bytes)));
}

export async function sha256HexAsync(data: Uint8Array | string, backend: 'node' | 'webcrypto'): Promise<string> {
  if (backend === 'node') return sha256HexNode(getNodeCrypto()!, data);
  return toHex(new Uint8Array(await getSubtle().digest('SHA-256', toBytes(data))));
}

export function sha256HexNode(c: NodeCryptoLike, data: Uint8Array | string): string {
  return c.hash ? c.hash('sha256', data, 'hex') : c.createHash('sha256').update(data).digest('hex');
}

/**
 * An HMAC-SHA256 key made once from an API secret (the secret's UTF-8 bytes, as the service
 * uses it) and reused for every signature: a node KeyObject, or a WebCrypto CryptoKey.
 */
export class HmacKey {
  private nodeKey: unknown;
  private webKey: Promise<CryptoKeyLike> | undefined;
  readonly backend: 'node' | 'webcrypto';

  constructor(readonly secret: string, pref: CryptoPreference = 'auto') {
    if (typeof secret !== 'string' || secret.length === 0) throw new TypeError('@wcs/sdk: the API secret must be a non-empty string');
    this.backend = resolveBackend(pref);
    if (this.backend === 'node') this.nodeKey = getNodeCrypto()!.createSecretKey(utf8.encode(secret));
  }

  private cryptoKey(): Promise<CryptoKeyLike> {
    this.webKey ??= getSubtle().importKey('raw', utf8.encode(this.secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
    return this.webKey!;
  }

  /** node backend only: the raw 32-byte MAC. */
  macNode(c: NodeCryptoLike, message: string): Uint8Array {
    return c.createHmac('sha256', this.nodeKey).update(message).digest();
  }

  /** Lowercase hex HMAC-SHA256 of the message. */
  async signHex(message: string): Promise<string> {
    if (this.backend === 'node') return toHexNode(this.macNode(getNodeCrypto()!, message));
    return toHex(new Uint8Array(await getSubtle().sign('HMAC', await this.cryptoKey(), utf8.encode(message))));
  }

  /** Whether `mac` (32 bytes) is the HMAC of the message, compared in constant time (WebCrypto's verify is constant-time). */
  async verifyWeb(message: string, mac: Uint8Array): Promise<boolean> {
    return getSubtle().verify('HMAC', await this.cryptoKey(), mac, utf8.encode(message));
  }
}

function toHexNode(b: Uint8Array): string {
  const B = (globalThis as { Buffer?: { from(a: ArrayBufferLike, o: number, l: number): { toString(e: 'hex'): string } } }).Buffer;
  return B ? B.from(b.buffer, b.byteOffset, b.byteLength).toString('hex') : toHex(b);
}
