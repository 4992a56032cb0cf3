import * as crypto from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import { guardedLookup, isForbiddenAddress } from './target-guard';

/** Summaries of bodies: at most this many characters, then the marker. */
export const SUMMARY_MAX_CHARS = 1000;
export const TRUNCATION_MARKER = '...[truncated]';
export const USER_AGENT = 'wcs-callback/1';

export interface DeliveryRequest {
  readonly url: string;
  readonly apiKey: string;
  /** The application's current API secret: the HMAC key. Never logged. */
  readonly secret: Buffer;
  /** The exact body bytes; the same on every attempt of a task. */
  readonly body: Buffer;
  /** sha256hex(body), when the caller has it already. */
  readonly bodySha256?: string;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  /** Refuse loopback/private/link-local/metadata targets (live applications). */
  readonly guardTargets: boolean;
}

export interface DeliveryResult {
  /** Headers as sent, secrets masked, with :method and :url pseudo-entries. */
  readonly requestHeadersSummary: Record<string, string>;
  readonly responseStatus: number | null;
  readonly responseContentType: string | null;
  /** The bytes read (at most maxResponseBytes). */
  readonly responseBody: Buffer | null;
  readonly accepted: boolean;
  readonly latencyMs: number;
  readonly errorReason: string | null;
}

/** Text of at most SUMMARY_MAX_CHARS characters, with the marker when longer. */
export function summarize(text: string): string {
  // at most SUMMARY_MAX_CHARS UTF-16 units is at most that many characters: nothing to cut
  if (text.length <= SUMMARY_MAX_CHARS) return text;
  const chars = Array.from(text);
  return chars.length <= SUMMARY_MAX_CHARS ? text : chars.slice(0, SUMMARY_MAX_CHARS).join('') + TRUNCATION_MARKER;
}

export function sha256Hex(b: Buffer | string): string {
  return crypto.createHash('sha256').update(b).digest('hex');
}

/** pk_test_ab…wxyz style: enough to recognise, not to use. */
export function mask(value: string, keepStart: number, keepEnd = 4): string {
  if (value.length <= keepStart + keepEnd) return '*'.repeat(value.length);
  return `${value.slice(0, keepStart)}****${value.slice(-keepEnd)}`;
}

/**
 * The spec's callback signature: HMAC-SHA256 (API secret) over
 * POST \n path \n timestamp \n nonce \n sha256hex(body); the path is the URL's path without query.
 */
export function signCallback(secret: Buffer, path: string, timestamp: string, nonce: string, body: Buffer, bodySha256 = sha256Hex(body)): string {
  const stringToSign = ['POST', path, timestamp, nonce, bodySha256].join('\n');
  return crypto.createHmac('sha256', secret).update(stringToSign).digest('hex');
}

/**
 * The ACK rule (docs/callbacks.md): HTTP 200 and a body that is either a JSON object whose
 * `code` is 0, or the word `success` or `ok` (any case, optionally JSON-quoted, surrounding
 * whitespace allowed). A JSON object with a non-zero `code` is a rejection, whatever else it
 * says. Returns null on ACK, else why not.
 */
export function judgeAck(status: number, body: Buffer): string | null {
  if (status !== 200) return status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}`;
  const text = body.toString('utf8').trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) && 'code' in parsed) {
    const code = (parsed as { code: unknown }).code;
    if (code === 0 || code === '0') return null;
    return `receiver rejected the callback: code ${JSON.stringify(code)}`;
  }
  const word = typeof parsed === 'string' ? parsed.trim() : text;
  if (/^(success|ok)$/i.test(word)) return null;
  return 'no ACK marker in the response body';
}

function describeError(e: NodeJS.ErrnoException, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `timeout after ${timeoutMs} ms`;
  const code = e.code ?? '';
  if (code === 'ETARGETFORBIDDEN') return `target refused: ${e.message}`;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET') return 'connection reset by the receiver';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `DNS lookup failed (${code})`;
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return `host unreachable (${code})`;
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/i.test(code) || /ssl|tls|certificate/i.test(e.message)) return `TLS error: ${code || e.message}`;
  return `network error: ${code || e.message}`;
}

/**
 * Keep-alive connection pools. Guarded and unguarded requests never share a pool, so a
 * connection opened without the address check is never reused for a live application.
 */
export class DeliveryAgents {
  private readonly agents = {
    guarded: { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) },
    open: { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) },
  };

  constructor(maxSocketsPerEndpoint: number) {
    for (const pair of Object.values(this.agents)) {
      pair.http.maxSockets = maxSocketsPerEndpoint;
      pair.https.maxSockets = maxSocketsPerEndpoint;
    }
  }

  for(protocol: string, guarded: boolean): http.Agent {
    const pair = guarded ? this.agents.guarded : this.agents.open;
    return protocol === 'https:' ? pair.https : pair.http;
  }

  destroy(): void {
    for (const pair of Object.values(this.agents)) {
      pair.http.destroy();
      pair.https.destroy();
    }
  }
}

/**
 * One delivery attempt: a fresh timestamp and nonce, the signed POST, redirects not
 * followed, one deadline for connect + send + answer, the answer read up to a cap.
 */
export function deliver(req: DeliveryRequest, agents?: DeliveryAgents): Promise<DeliveryResult> {
  const url = new URL(req.url);
  const timestamp = String(Date.now());
  const nonce = crypto.randomBytes(16).toString('hex');
  const signature = signCallback(req.secret, url.pathname, timestamp, nonce, req.body, req.bodySha256 ?? sha256Hex(req.body));
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'Content-Length': String(req.body.length),
    'User-Agent': USER_AGENT,
    'X-Api-Key': req.apiKey,
    'X-Timestamp': timestamp,
    'X-Nonce': nonce,
    'X-Signature': signature,
  };
  const requestHeadersSummary: Record<string, string> = {
    ':method': 'POST',
    ':url': req.url,
    'Content-Type': headers['Content-Type']!,
    'X-Api-Key': mask(req.apiKey, req.apiKey.startsWith('pk_') ? 10 : 4),
    'X-Timestamp': timestamp,
    'X-Nonce': nonce,
    'X-Signature': mask(signature, 4),
  };
  const started = process.hrtime.bigint();
  const elapsed = () => Math.round(Number(process.hrtime.bigint() - started) / 1e6);

  return new Promise<DeliveryResult>((resolve) => {
    let settled = false;
    let timedOut = false;
    let status: number | null = null;
    let contentType: string | null = null;
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (r: Omit<DeliveryResult, 'requestHeadersSummary' | 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...r, requestHeadersSummary, latencyMs: elapsed() });
    };
    const fail = (reason: string) =>
      finish({ responseStatus: status, responseContentType: contentType, responseBody: status === null ? null : Buffer.concat(chunks), accepted: false, errorReason: reason });

    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (req.guardTargets && net.isIP(host) && isForbiddenAddress(host)) {
      resolve({ requestHeadersSummary, responseStatus: null, responseContentType: null, responseBody: null, accepted: false, latencyMs: 0, errorReason: `target refused: ${host} is a loopback, private, link-local or metadata address` });
      return;
    }
    const mod = url.protocol === 'https:' ? https : http;
    const request = mod.request(
      url,
      { method: 'POST', headers, agent: agents ? agents.for(url.protocol, req.guardTargets) : false, ...(req.guardTargets ? { lookup: guardedLookup } : {}) },
      (res) => {
        status = res.statusCode ?? null;
        const ct = res.headers['content-type'];
        contentType = typeof ct === 'string' ? ct.slice(0, 256) : null;
        res.on('data', (chunk: Buffer) => {
          if (settled) return;
          received += chunk.length;
          if (received > req.maxResponseBytes) {
            chunks.push(chunk.subarray(0, chunk.length - (received - req.maxResponseBytes)));
            fail(`response body larger than ${req.maxResponseBytes} bytes (not read further)`);
            res.destroy();
            request.destroy();
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          const why = judgeAck(status!, body);
          finish({ responseStatus: status, responseContentType: contentType, responseBody: body, accepted: why === null, errorReason: why });
        });
        res.on('error', (e: NodeJS.ErrnoException) => fail(describeError(e, timedOut, req.timeoutMs)));
      },
    );
    const timer = setTimeout(() => {
      timedOut = true;
      fail(`timeout after ${req.timeoutMs} ms`);
      request.destroy();
    }, req.timeoutMs);
    request.on('error', (e: NodeJS.ErrnoException) => fail(describeError(e, timedOut, req.timeoutMs)));
    request.end(req.body);
  });
}
