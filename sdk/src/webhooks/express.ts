/**
 * Express (4 or 5) middleware for the service's callbacks. It needs the raw body bytes, and gets
 * them in whichever of these set-ups it finds:
 *
 *   1. mounted before any body parser (route-level, or app.use(path, ...) ahead of a global
 *      express.json()): it reads the request stream itself, then sets req.rawBody and req.body
 *      (the parsed JSON), so a later express.json() leaves the request alone;
 *   2. express.json() ran first with the hook this module exports:
 *        app.use(express.json({ verify: captureRawBody }))
 *      which keeps the bytes as req.rawBody;
 *   3. express.raw({ type: 'application/json' }) ran first: req.body is the bytes.
 *
 * If a parser consumed the body without keeping the bytes, the middleware does not re-serialise
 * req.body (that is not the signed bytes): it fails loudly with a WebhookConfigurationError,
 * passed to next(), so the app's error handler (and the service's attempt log, HTTP 500) shows it.
 *
 * The request is answered with the service's ACK (200 {"code":0}) once onEvent resolves, 401 when
 * the verification fails, 500 when onEvent throws (the service retries). Works on node's plain
 * http server too (no next): the configuration error is then answered 500.
 */
import { processWebhook, verifierFrom, type WebhookHandlerOptions } from './handler.js';

/** The part of an express / node http request the middleware uses. */
export interface ExpressLikeRequest {
  method?: string;
  originalUrl?: string;
  url?: string;
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
  rawBody?: unknown;
  readableEnded?: boolean;
  complete?: boolean;
  readable?: boolean;
  _body?: boolean;
  on(event: string, listener: (...args: never[]) => void): unknown;
  removeListener?(event: string, listener: (...args: never[]) => void): unknown;
  resume?(): unknown;
}

/** The part of an express / node http response the middleware uses. */
export interface ExpressLikeResponse {
  statusCode: number;
  headersSent?: boolean;
  setHeader(name: string, value: string): unknown;
  end(body?: string): unknown;
}

export type NextFunctionLike = (err?: unknown) => void;

/** The raw body was consumed by a parser that did not keep it: the app must be set up differently. */
export class WebhookConfigurationError extends Error {
  override name = 'WebhookConfigurationError';
}

export interface ExpressWebhookOptions<R extends ExpressLikeRequest = ExpressLikeRequest> extends WebhookHandlerOptions<R> {
  /**
   * The signed path (the callback URL's path as configured in the service). Default: the request's
   * originalUrl (mount path included) without its query. Give it when a proxy rewrites paths.
   */
  path?: string | ((req: R) => string);
  /** Largest body read by the middleware itself (default 1 MiB); larger is refused with 413. */
  limitBytes?: number;
}

type BufferLike = { concat(list: readonly Uint8Array[], total: number): Uint8Array };
const NodeBuffer = (globalThis as { Buffer?: BufferLike }).Buffer;

/**
 * The `verify` hook of express.json() / body-parser that keeps the raw bytes as req.rawBody:
 *   app.use(express.json({ verify: captureRawBody }))
 */
export function captureRawBody(req: object, _res: unknown, buf: Uint8Array): void {
  (req as { rawBody?: unknown }).rawBody = buf;
}

function consumed(req: ExpressLikeRequest): boolean {
  return req._body === true || req.readableEnded === true || (req.complete === true && req.readable === false);
}

function readStream(req: ExpressLikeRequest, limit: number): Promise<Uint8Array | 'too large'> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let total = 0;
    let tooLarge = false;
    const onData = (c: Uint8Array | string) => {
      const b = typeof c === 'string' ? new TextEncoder().encode(c) : c;
      total += b.length;
      if (total > limit) tooLarge = true;
      if (!tooLarge) chunks.push(b);
    };
    const onEnd = () => {
      cleanup();
      if (tooLarge) return resolve('too large');
      if (NodeBuffer) return resolve(NodeBuffer.concat(chunks, total));
      const out = new Uint8Array(total);
      let o = 0;
      for (const c of chunks) {
        out.set(c, o);
        o += c.length;
      }
      resolve(out);
    };
    const onError = (e: unknown) => {
      cleanup();
      reject(e);
    };
    const cleanup = () => {
      req.removeListener?.('data', onData as never);
      req.removeListener?.('end', onEnd as never);
      req.removeListener?.('error', onError as never);
    };
    req.on('data', onData as never);
    req.on('end', onEnd as never);
    req.on('error', onError as never);
    req.resume?.();
  });
}

function send(res: ExpressLikeResponse, status: number, body: string): void {
  if (res.headersSent) return;
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(body);
}

/**
 * The middleware:
 *
 *   app.post('/wcs/callbacks', expressWebhook({ apiSecret, onEvent: async (event) => { ... } }));
 */
export function expressWebhook<R extends ExpressLikeRequest = ExpressLikeRequest>(o: ExpressWebhookOptions<R>) {
  const verifier = verifierFrom(o);
  const limit = o.limitBytes ?? 1024 * 1024;
  return async function wcsWebhook(req: R, res: ExpressLikeResponse, next?: NextFunctionLike): Promise<void> {
    try {
      let raw: Uint8Array | string;
      if (req.rawBody instanceof Uint8Array || typeof req.rawBody === 'string') raw = req.rawBody;
      else if (req.body instanceof Uint8Array) raw = req.body;
      else if (!consumed(req)) {
        const r = await readStream(req, limit);
        if (r === 'too large') return send(res, 413, JSON.stringify({ code: 1, msg: `body larger than ${limit} bytes` }));
        raw = r;
        req.rawBody = r;
        // leave the parsed body for the app, and mark the request as parsed for body parsers that run later
        if (r.length > 0) {
          try {
            req.body = JSON.parse(new TextDecoder().decode(r));
          } catch {
            /* left to the verifier: MALFORMED_BODY */
          }
        }
        req._body = true;
      } else {
        throw new WebhookConfigurationError(
          '@wcs/sdk: the raw body of this callback is not available: a body parser (express.json()?) consumed it before the webhook ' +
            'middleware and did not keep the bytes. The signature covers the exact bytes, so parsed JSON cannot be verified. ' +
            'Either mount the webhook middleware before express.json(), or keep the bytes: app.use(express.json({ verify: captureRawBody })).',
        );
      }
      const path = typeof o.path === 'function' ? o.path(req) : (o.path ?? req.originalUrl ?? req.url ?? '/');
      const outcome = await processWebhook(verifier, { body: raw, headers: req.headers, path }, req, o);
      send(res, outcome.status, outcome.body);
    } catch (e) {
      if (next) return next(e);
      if (e instanceof WebhookConfigurationError) console.error(e.message);
      send(res, 500, JSON.stringify({ code: 1, msg: 'webhook receiver error' }));
    }
  };
}
