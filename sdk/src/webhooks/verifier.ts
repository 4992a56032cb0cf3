/**
 * Verifies the callbacks the service POSTs to a merchant (spec "Events", docs/callbacks.md):
 *
 *   X-Signature = lowercase hex HMAC-SHA256(API secret,
 *                   "POST" \n callback path without query \n X-Timestamp \n X-Nonce \n sha256hex(raw body))
 *
 * Rules applied, in this order (the first failure is reported):
 *   1. the four headers X-Api-Key, X-Timestamp, X-Nonce, X-Signature are present, once each
 *      (MISSING_HEADER, MALFORMED_HEADER);
 *   2. X-Timestamp is 13-digit UNIX ms, X-Signature 64 lowercase hex characters, X-Nonce 1 to 128
 *      characters (MALFORMED_HEADER); X-Api-Key is the expected one when `apiKey` is given
 *      (API_KEY_MISMATCH);
 *   3. the timestamp is within `toleranceMs` (default 5 minutes) of this clock, each way
 *      (STALE_TIMESTAMP, FUTURE_TIMESTAMP);
 *   4. the signature over the RAW bytes as received matches one of the secrets, compared in
 *      constant time (BAD_SIGNATURE) — during a secret rotation's grace period the service signs
 *      with the new secret: give both while you switch;
 *   5. with a replay store: the nonce was not seen before (REPLAYED);
 *   6. verify() only: the body is a JSON object with a string `event` (MALFORMED_BODY), one this
 *      SDK knows (UNKNOWN_EVENT).
 *
 * authenticate() does 1-5 (what the signature proves); verify() does 1-6 and returns the typed
 * event. Verify the raw bytes: JSON parsed and serialised again is not the same bytes.
 */
import { WEBHOOK_EVENTS, type WebhookEvent } from '../api.js';
import { decodeUtf8, getNodeCrypto, HmacKey, resolveBackend, sha256HexAsync, sha256HexNode, fromHex, type CryptoPreference, type NodeCryptoLike } from '../crypto.js';
import type { ReplayStore } from './stores.js';

/** Why a callback was refused. */
export type WebhookFailureReason =
  | 'MISSING_HEADER'
  | 'MALFORMED_HEADER'
  | 'API_KEY_MISMATCH'
  | 'STALE_TIMESTAMP'
  | 'FUTURE_TIMESTAMP'
  | 'BAD_SIGNATURE'
  | 'REPLAYED'
  | 'MALFORMED_BODY'
  | 'UNKNOWN_EVENT';

export const WEBHOOK_FAILURE_REASONS: readonly WebhookFailureReason[] = [
  'MISSING_HEADER', 'MALFORMED_HEADER', 'API_KEY_MISMATCH', 'STALE_TIMESTAMP', 'FUTURE_TIMESTAMP', 'BAD_SIGNATURE', 'REPLAYED', 'MALFORMED_BODY', 'UNKNOWN_EVENT',
];

/** Request headers: a fetch `Headers`, or an object (node's req.headers, any letter case). */
export type HeaderBag = { get(name: string): string | null } | Record<string, string | string[] | undefined | null>;

/** What a callback request consists of. */
export interface WebhookRequest {
  /** The body exactly as received: bytes (Buffer, Uint8Array) or a string holding them as UTF-8. */
  body: Uint8Array | string;
  headers: HeaderBag;
  /**
   * The path of the callback URL as the service called it (the request line's path; a query
   * string or a full URL is accepted and reduced to the path). Behind a proxy that rewrites
   * paths, give the path of the URL configured in the service.
   */
  path: string;
}

export interface Authenticated {
  ok: true;
  apiKey: string;
  /** X-Timestamp, epoch ms. */
  timestamp: number;
  nonce: string;
  signature: string;
}

export interface VerificationFailure {
  ok: false;
  reason: WebhookFailureReason;
  message: string;
  /** The header concerned, for header failures. */
  header?: string;
}

export type AuthenticateResult = Authenticated | VerificationFailure;

export interface Verified<E extends WebhookEvent = WebhookEvent> extends Authenticated {
  event: E;
}

export type VerifyResult = Verified | VerificationFailure;

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
  readonly reason: WebhookFailureReason;
  readonly header: string | undefined;

  constructor(f: VerificationFailure) {
    super(`${f.reason}: ${f.message}`);
    this.reason = f.reason;
    this.header = f.header;
  }
}

export interface WebhookVerifierOptions {
  /** The application's API secret, or several (e.g. the new and the old one during a rotation). */
  apiSecret: string | readonly string[];
  /** When given, X-Api-Key must equal it (API_KEY_MISMATCH otherwise). */
  apiKey?: string;
  /** Accepted clock difference each way, ms (default 300000: the spec's 5 minutes). */
  toleranceMs?: number;
  /** Refuse a nonce seen before (REPLAYED); e.g. new InMemoryReplayStore(). */
  replayStore?: ReplayStore;
  /** Clock, epoch ms (tests). */
  now?: () => number;
  /** node:crypto or WebCrypto (default auto: node:crypto where available). */
  crypto?: CryptoPreference;
}

const TIMESTAMP = /^\d{13}$/;
const SIGNATURE = /^[0-9a-f]{64}$/;
const KNOWN_EVENTS: ReadonlySet<string> = new Set(WEBHOOK_EVENTS);
const HEADER_NAMES = ['x-api-key', 'x-timestamp', 'x-nonce', 'x-signature'] as const;
const DISPLAY: Record<string, string> = { 'x-api-key': 'X-Api-Key', 'x-timestamp': 'X-Timestamp', 'x-nonce': 'X-Nonce', 'x-signature': 'X-Signature' };

function fail(reason: WebhookFailureReason, message: string, header?: string): VerificationFailure {
  return header === undefined ? { ok: false, reason, message } : { ok: false, reason, message, header };
}

/** A header's value from an object whose names are not all lower case (node lower-cases them; hand-built objects may not). */
function headerAnyCase(h: Record<string, string | string[] | undefined | null>, lower: string): string | string[] | null | undefined {
  for (const k in h) if (k.length === lower.length && k.toLowerCase() === lower) return h[k];
  return undefined;
}

/** The path of a request target or URL, without query or fragment. */
export function callbackPath(target: string): string {
  let p = target;
  if (p.charCodeAt(0) !== 47 /* / */ && /^[a-z][a-z0-9+.-]*:\/\//i.test(p)) p = new URL(p).pathname;
  const q = p.search(/[?#]/);
  return q === -1 ? p : p.slice(0, q);
}

/** Parses a verified body into an event: a JSON object with a known string `event`. */
export function parseWebhookEvent(body: Uint8Array | string): { ok: true; event: WebhookEvent } | VerificationFailure {
  let text: string;
  try {
    text = typeof body === 'string' ? body : bytesToString(body);
  } catch {
    return fail('MALFORMED_BODY', 'the body is not valid UTF-8');
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return fail('MALFORMED_BODY', 'the body is not JSON');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return fail('MALFORMED_BODY', 'the body is not a JSON object');
  const ev = (json as { event?: unknown }).event;
  if (typeof ev !== 'string') return fail('MALFORMED_BODY', 'the body has no string "event"');
  if (!KNOWN_EVENTS.has(ev)) return fail('UNKNOWN_EVENT', `unknown event "${ev}" (this SDK knows ${WEBHOOK_EVENTS.join(', ')})`);
  return { ok: true, event: json as WebhookEvent };
}

type BufferLike = Uint8Array & { toString(e: 'utf8'): string; write(s: string, o: number, e: 'hex'): number };
type BufferCtor = { from(a: ArrayBufferLike, o: number, l: number): BufferLike; isBuffer(b: unknown): b is BufferLike; alloc(n: number): BufferLike };
const NodeBuffer = (globalThis as { Buffer?: BufferCtor }).Buffer;

function bytesToString(b: Uint8Array): string {
  // node: Buffer's decoder (no copy); elsewhere TextDecoder, fatal on invalid UTF-8
  if (!NodeBuffer) return decodeUtf8(b);
  return (NodeBuffer.isBuffer(b) ? b : NodeBuffer.from(b.buffer, b.byteOffset, b.byteLength)).toString('utf8');
}

/** The checked headers, or why not. */
interface HeaderValues {
  apiKey: string;
  timestamp: string;
  ts: number;
  nonce: string;
  signature: string;
}

export class WebhookVerifier {
  private readonly keys: HmacKey[];
  private readonly toleranceMs: number;
  private readonly now: () => number;
  private readonly backend: 'node' | 'webcrypto';
  private readonly node: NodeCryptoLike | null;
  /** node backend: the decoded X-Signature of the call in progress (verification is synchronous there, so one buffer serves every call). */
  private readonly sigBytes: BufferLike | null;
  private lastPath = '';
  private lastPathResult = '';

  constructor(private readonly o: WebhookVerifierOptions) {
    const secrets = typeof o.apiSecret === 'string' ? [o.apiSecret] : [...(o.apiSecret ?? [])];
    if (secrets.length === 0) throw new TypeError('@wcs/sdk: WebhookVerifier needs apiSecret');
    this.backend = resolveBackend(o.crypto);
    this.node = this.backend === 'node' ? getNodeCrypto() : null;
    this.keys = secrets.map((s) => new HmacKey(s, this.backend));
    this.toleranceMs = o.toleranceMs ?? 300_000;
    if (!(this.toleranceMs >= 0)) throw new RangeError('toleranceMs must be >= 0');
    this.now = o.now ?? Date.now;
    this.sigBytes = this.node && NodeBuffer ? NodeBuffer.alloc(32) : null;
  }

  /** The crypto backend in use. */
  get cryptoBackend(): 'node' | 'webcrypto' {
    return this.backend;
  }

  private path(target: string): string {
    if (target !== this.lastPath) {
      this.lastPathResult = callbackPath(target);
      this.lastPath = target;
    }
    return this.lastPathResult;
  }

  /** The four headers, checked: present once each, well-formed, the expected key, a timestamp within the tolerance. */
  private headers(bag: HeaderBag): HeaderValues | VerificationFailure {
    let apiKey: unknown, timestamp: unknown, nonce: unknown, signature: unknown;
    if (typeof (bag as { get?: unknown }).get === 'function') {
      const g = bag as { get(n: string): string | null };
      apiKey = g.get('x-api-key');
      timestamp = g.get('x-timestamp');
      nonce = g.get('x-nonce');
      signature = g.get('x-signature');
    } else {
      const h = bag as Record<string, string | string[] | undefined | null>;
      apiKey = h['x-api-key'] ?? headerAnyCase(h, 'x-api-key');
      timestamp = h['x-timestamp'] ?? headerAnyCase(h, 'x-timestamp');
      nonce = h['x-nonce'] ?? headerAnyCase(h, 'x-nonce');
      signature = h['x-signature'] ?? headerAnyCase(h, 'x-signature');
    }
    if (typeof apiKey !== 'string' || typeof timestamp !== 'string' || typeof nonce !== 'string' || typeof signature !== 'string' || !apiKey || !timestamp || !nonce || !signature) {
      const values = [apiKey, timestamp, nonce, signature];
      for (let i = 0; i < 4; i++) {
        const x = values[i];
        const name = DISPLAY[HEADER_NAMES[i]!]!;
        if (x === undefined || x === null || x === '') return fail('MISSING_HEADER', `${name} is missing`, name);
        if (typeof x !== 'string') return fail('MALFORMED_HEADER', `${name} is given more than once`, name);
      }
    }
    const ts = timestamp as string;
    const sig = signature as string;
    if (ts.length !== 13 || !TIMESTAMP.test(ts)) return fail('MALFORMED_HEADER', 'X-Timestamp must be 13-digit UNIX milliseconds', 'X-Timestamp');
    if ((nonce as string).length > 128) return fail('MALFORMED_HEADER', 'X-Nonce is longer than 128 characters', 'X-Nonce');
    if (sig.length !== 64 || !SIGNATURE.test(sig)) return fail('MALFORMED_HEADER', 'X-Signature must be 64 lowercase hex characters', 'X-Signature');
    if (this.o.apiKey !== undefined && apiKey !== this.o.apiKey) return fail('API_KEY_MISMATCH', "X-Api-Key is not this application's API key", 'X-Api-Key');
    const t = +ts;
    const now = this.now();
    if (now - t > this.toleranceMs) return fail('STALE_TIMESTAMP', `X-Timestamp is ${now - t} ms old (tolerance ${this.toleranceMs} ms)`, 'X-Timestamp');
    if (t - now > this.toleranceMs) return fail('FUTURE_TIMESTAMP', `X-Timestamp is ${t - now} ms ahead of this clock (tolerance ${this.toleranceMs} ms)`, 'X-Timestamp');
    return { apiKey: apiKey as string, timestamp: ts, ts: t, nonce: nonce as string, signature: sig };
  }

  /** Signature check with node:crypto: synchronous, constant-time compare (crypto.timingSafeEqual), every key tried. */
  private signatureNode(c: NodeCryptoLike, h: HeaderValues, path: string, body: Uint8Array | string): boolean {
    const sts = `POST\n${path}\n${h.timestamp}\n${h.nonce}\n${sha256HexNode(c, body)}`;
    let expected: Uint8Array;
    if (this.sigBytes) {
      this.sigBytes.write(h.signature, 0, 'hex');
      expected = this.sigBytes;
    } else expected = fromHex(h.signature)!;
    let ok = false;
    // no early exit: the time does not say which secret matched
    for (let i = 0; i < this.keys.length; i++) if (c.timingSafeEqual(this.keys[i]!.macNode(c, sts), expected)) ok = true;
    return ok;
  }

  private async signatureWeb(h: HeaderValues, path: string, body: Uint8Array | string): Promise<boolean> {
    const sts = `POST\n${path}\n${h.timestamp}\n${h.nonce}\n${await sha256HexAsync(body, 'webcrypto')}`;
    const mac = fromHex(h.signature)!;
    let ok = false;
    for (const key of this.keys) if (await key.verifyWeb(sts, mac)) ok = true;
    return ok;
  }

  private static checkBody(body: unknown): void {
    if (typeof body !== 'string' && !(body instanceof Uint8Array)) {
      throw new TypeError('@wcs/sdk: the webhook body must be the raw bytes (Buffer/Uint8Array) or a string of them; a parsed object cannot be verified');
    }
  }

  /** Headers, time and signature, synchronously (node backend). */
  private authenticateNode(c: NodeCryptoLike, req: WebhookRequest): HeaderValues | VerificationFailure {
    const h = this.headers(req.headers);
    if ('ok' in h) return h;
    WebhookVerifier.checkBody(req.body);
    if (!this.signatureNode(c, h, this.path(req.path), req.body)) return BAD_SIGNATURE;
    return h;
  }

  private async authenticateWeb(req: WebhookRequest): Promise<HeaderValues | VerificationFailure> {
    const h = this.headers(req.headers);
    if ('ok' in h) return h;
    WebhookVerifier.checkBody(req.body);
    if (!(await this.signatureWeb(h, this.path(req.path), req.body))) return BAD_SIGNATURE;
    return h;
  }

  /** The nonce is new to the replay store (a synchronous store is not awaited). */
  private async fresh(h: HeaderValues): Promise<boolean> {
    const r = this.o.replayStore!.remember(h.nonce, h.ts + this.toleranceMs + 1);
    return typeof r === 'boolean' ? r : await r;
  }

  /** Checks headers, timestamp, signature and (with a store) the nonce; does not parse the body. */
  async authenticate(req: WebhookRequest): Promise<AuthenticateResult> {
    // node:crypto: one synchronous pass (the only await is the caller's)
    const h = this.node ? this.authenticateNode(this.node, req) : await this.authenticateWeb(req);
    if ('ok' in h) return h;
    if (this.o.replayStore && !(await this.fresh(h))) return REPLAYED;
    return { ok: true, apiKey: h.apiKey, timestamp: h.ts, nonce: h.nonce, signature: h.signature };
  }

  /** authenticate(), then the body parsed into a typed event. */
  async verify(req: WebhookRequest): Promise<VerifyResult> {
    const h = this.node ? this.authenticateNode(this.node, req) : await this.authenticateWeb(req);
    if ('ok' in h) return h;
    if (this.o.replayStore && !(await this.fresh(h))) return REPLAYED;
    const p = parseWebhookEvent(req.body);
    if (!p.ok) return p;
    return { ok: true, apiKey: h.apiKey, timestamp: h.ts, nonce: h.nonce, signature: h.signature, event: p.event };
  }

  /** verify(), throwing WebhookVerificationError on failure. */
  async verifyOrThrow(req: WebhookRequest): Promise<Verified> {
    const r = await this.verify(req);
    if (!r.ok) throw new WebhookVerificationError(r);
    return r;
  }
}

const BAD_SIGNATURE: VerificationFailure = Object.freeze(fail('BAD_SIGNATURE', 'X-Signature does not match the body, path, timestamp and nonce under the API secret', 'X-Signature'));
const REPLAYED: VerificationFailure = Object.freeze(fail('REPLAYED', 'X-Nonce was seen before: a replayed callback (the service signs every attempt with a new nonce)', 'X-Nonce'));
