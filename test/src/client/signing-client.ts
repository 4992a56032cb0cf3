/**
 * A merchant-side client for the signed API, written from the spec
 * (/work/shared/spec/wallet-custody-api.md, "Authentication") and nothing else:
 * it deliberately does not import the server's signing helpers.
 *
 *   stringToSign = METHOD (upper case) \n path (no query) \n X-Timestamp \n X-Nonce \n sha256hex(raw body)
 *   X-Signature  = lowercase hex HMAC-SHA256(key = API secret string, message = stringToSign)
 *
 * Every part is overridable so tests can build wrong requests on purpose: the method and
 * path that are signed versus sent, the timestamp, the nonce, the body bytes that are
 * signed versus sent, the content type, and any header (set or omitted).
 */
import * as crypto from 'node:crypto';
import * as http from 'node:http';

export interface MerchantCredentials {
  readonly apiKey: string;
  readonly apiSecret: string;
}

export function sha256Hex(data: Buffer | string): string {
  return crypto.createHash('sha256').update(typeof data === 'string' ? Buffer.from(data, 'utf8') : data).digest('hex');
}

export const EMPTY_BODY_SHA256 = sha256Hex(Buffer.alloc(0));

export function buildStringToSign(method: string, pathWithoutQuery: string, timestamp: string, nonce: string, bodySha256: string): string {
  return [method.toUpperCase(), pathWithoutQuery, timestamp, nonce, bodySha256].join('\n');
}

export function hmacSha256Hex(secret: string, message: string): string {
  return crypto.createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.from(message, 'utf8')).digest('hex');
}

export function stripQuery(target: string): string {
  const q = target.indexOf('?');
  return q === -1 ? target : target.slice(0, q);
}

export function newNonce(): string {
  return crypto.randomUUID();
}

function toBytes(b: Buffer | string | undefined): Buffer {
  if (b === undefined) return Buffer.alloc(0);
  return typeof b === 'string' ? Buffer.from(b, 'utf8') : b;
}

export interface RequestSpec {
  /** HTTP method sent on the wire; default GET (POST when a body or json is given). */
  method?: string;
  /** Request target sent on the wire, path plus optional query, e.g. /api/v1/wallet/support/tokens?chainCode=ETH. */
  path: string;
  /** Raw body bytes sent. */
  body?: Buffer | string;
  /** Convenience: JSON.stringify(json) becomes the body. */
  json?: unknown;
  /** Content-Type header; default application/json when a body is sent; null omits it. */
  contentType?: string | null;
  /** Credentials for this request; default the client's. */
  credentials?: MerchantCredentials;
  /** X-Timestamp value; default Date.now() (13-digit milliseconds). */
  timestamp?: string | number;
  /** X-Nonce value; default a random UUID v4. */
  nonce?: string;
  /** What goes into stringToSign, when it should differ from what is sent. */
  sign?: {
    method?: string;
    path?: string;
    body?: Buffer | string;
    timestamp?: string;
    nonce?: string;
    /** HMAC key; default credentials.apiSecret. */
    secret?: string;
  };
  /** Replaces the computed X-Signature value. */
  signature?: string;
  /** Final header overrides, applied case-insensitively; null removes the header. */
  headers?: Record<string, string | null>;
}

/** The exact request that will be (or was) sent; send() can replay it byte for byte. */
export interface PreparedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  readonly stringToSign: string;
  readonly signature: string;
  readonly nonce: string;
  readonly timestamp: string;
}

export interface ClientResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
  /** Parsed body, or undefined when the body is not JSON. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly json: any;
}

export interface SignedResponse extends ClientResponse {
  readonly sent: PreparedRequest;
}

function setHeader(headers: Record<string, string>, name: string, value: string | null): void {
  for (const k of Object.keys(headers)) if (k.toLowerCase() === name.toLowerCase()) delete headers[k];
  if (value !== null) headers[name] = value;
}

/** Sends one HTTP request with exactly the given method, target, headers and body bytes. */
export function rawRequest(
  baseUrl: string,
  req: { method: string; path: string; headers?: Record<string, string>; body?: Buffer },
  timeoutMs = 20_000,
): Promise<ClientResponse> {
  const base = new URL(baseUrl);
  const body = req.body ?? Buffer.alloc(0);
  return new Promise<ClientResponse>((resolve, reject) => {
    let settled = false;
    const done = (err: Error | null, res?: ClientResponse) => {
      if (settled) return;
      settled = true;
      if (err) reject(err);
      else resolve(res!);
    };
    const r = http.request(
      {
        protocol: base.protocol,
        hostname: base.hostname,
        port: base.port,
        method: req.method,
        path: req.path,
        headers: req.headers ?? {},
        agent: false,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (e) => done(e));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          done(null, { status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    r.on('timeout', () => r.destroy(new Error(`request ${req.method} ${req.path} timed out after ${timeoutMs} ms`)));
    // The server may answer (413) and close before it has read the whole body; the
    // response still arrives, so write errors are only fatal when no response comes.
    r.on('error', (e) => setTimeout(() => done(e), 200));
    r.end(body);
  });
}

export class SigningClient {
  constructor(
    readonly baseUrl: string,
    readonly credentials?: MerchantCredentials,
  ) {}

  withCredentials(credentials: MerchantCredentials): SigningClient {
    return new SigningClient(this.baseUrl, credentials);
  }

  withBaseUrl(baseUrl: string): SigningClient {
    return new SigningClient(baseUrl, this.credentials);
  }

  /** Builds the signed request without sending it. */
  prepare(spec: RequestSpec): PreparedRequest {
    const creds = spec.credentials ?? this.credentials;
    if (!creds) throw new Error('SigningClient: no credentials');
    let body: Buffer;
    if (spec.json !== undefined) body = Buffer.from(JSON.stringify(spec.json), 'utf8');
    else body = toBytes(spec.body);
    const method = spec.method ?? (body.length > 0 ? 'POST' : 'GET');
    const timestamp = spec.timestamp === undefined ? String(Date.now()) : String(spec.timestamp);
    const nonce = spec.nonce ?? newNonce();
    const s = spec.sign ?? {};
    const sts = buildStringToSign(
      s.method ?? method,
      s.path ?? stripQuery(spec.path),
      s.timestamp ?? timestamp,
      s.nonce ?? nonce,
      sha256Hex(s.body !== undefined ? toBytes(s.body) : body),
    );
    const signature = spec.signature ?? hmacSha256Hex(s.secret ?? creds.apiSecret, sts);
    const headers: Record<string, string> = {
      'X-Api-Key': creds.apiKey,
      'X-Timestamp': timestamp,
      'X-Nonce': nonce,
      'X-Signature': signature,
    };
    const contentType = spec.contentType === undefined ? (body.length > 0 ? 'application/json' : null) : spec.contentType;
    if (contentType !== null) headers['Content-Type'] = contentType;
    if (body.length > 0 || method.toUpperCase() === 'POST') headers['Content-Length'] = String(body.length);
    for (const [k, v] of Object.entries(spec.headers ?? {})) setHeader(headers, k, v);
    return { method, path: spec.path, headers, body, stringToSign: sts, signature, nonce, timestamp };
  }

  /** Sends (or re-sends) a prepared request exactly as prepared. */
  async send(prepared: PreparedRequest, baseUrl: string = this.baseUrl): Promise<SignedResponse> {
    const res = await rawRequest(baseUrl, { method: prepared.method, path: prepared.path, headers: { ...prepared.headers }, body: prepared.body });
    return { ...res, sent: prepared };
  }

  request(spec: RequestSpec): Promise<SignedResponse> {
    return this.send(this.prepare(spec));
  }

  get(path: string, spec: Omit<RequestSpec, 'path'> = {}): Promise<SignedResponse> {
    return this.request({ method: 'GET', ...spec, path });
  }

  /** POSTs raw bytes (string/Buffer) as given, or JSON.stringify of any other value. */
  post(path: string, body: unknown, spec: Omit<RequestSpec, 'path' | 'body' | 'json'> = {}): Promise<SignedResponse> {
    const bytes = typeof body === 'string' || Buffer.isBuffer(body) ? { body } : { json: body };
    return this.request({ method: 'POST', ...spec, ...bytes, path });
  }
}
