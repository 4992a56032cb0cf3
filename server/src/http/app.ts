import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import { TextDecoder } from 'node:util';
import { WcsError, isChainError, isWcsError, isKeyStoreError, ErrorCodes, KEYSTORE_UNAVAILABLE_CODES, type KeyStoreError } from '@wcs/core';
import type { Logger } from '../config/logger';
import type { Authenticator } from '../auth/authenticate';
import type { AppCredentials } from '../auth/credentials';
import { sendError, sendOk } from './envelope';
import { DATABASE_RETRY_AFTER_SECONDS, databaseUnavailable } from '../db/unavailable';
import { API_PREFIX, type ApiRoute } from './routes';
import type { ApiKeyLimiter } from '../ratelimit/api-key-limiter';
import type { AuthFailureLimiter } from '../ratelimit/auth-failure-limiter';
import { policyHeader, remainingHeader, retryAfterSeconds, type BucketPolicy } from '../ratelimit/token-bucket';

export interface ReadyReport {
  ready: boolean;
  checks: Record<string, string>;
}

export interface HttpAppOptions {
  authenticator: Authenticator;
  logger: Logger;
  bodyLimitBytes: number;
  routes: readonly ApiRoute[];
  readiness: () => Promise<ReadyReport>;
  /** Counts API handlers still running (shutdown waits for it to reach 0). */
  inFlight?: { count: number };
  /** Rate limits (docs/api.md "Rate limits"); absent: none. */
  rateLimits?: HttpRateLimits;
  /** Prometheus request metrics (server/src/metrics), when metrics are on: one middleware ahead of everything. */
  metrics?: { readonly middleware: express.RequestHandler };
}

export interface HttpRateLimits {
  /** Express `trust proxy`: which X-Forwarded-For hops name the source address. */
  readonly trustProxy: boolean | number | string;
  /** Failed authentications per source address, checked before any database work. */
  readonly authFailures: AuthFailureLimiter | null;
  /** Per API key; the policy is the application's own when it has one, else this default (null: no default limit). */
  readonly apiKey: { readonly limiter: ApiKeyLimiter; readonly defaultPolicy: BucketPolicy | null } | null;
}

const policyHeaders = new WeakMap<BucketPolicy, string>();
/** RateLimit-Policy of a policy object (policies are long-lived: the default, or an application's cached credentials). */
function cachedPolicyHeader(policy: BucketPolicy): string {
  let h = policyHeaders.get(policy);
  if (h === undefined) policyHeaders.set(policy, (h = policyHeader(policy)));
  return h;
}

/** Authentication failures that do not prove the caller holds the secret (those with a valid signature are not counted). */
const COUNTED_AUTH_FAILURES = new Set<string>([
  'AUTH_HEADER_MISSING', 'AUTH_TIMESTAMP_INVALID', 'AUTH_TIMESTAMP_EXPIRED', 'AUTH_NONCE_INVALID',
  'AUTH_API_KEY_UNKNOWN', 'AUTH_SIGNATURE_INVALID', 'AUTH_SIGNATURE_MALFORMED',
]);

const OPENAPI_TEXT = fs.readFileSync(path.resolve(__dirname, '../../openapi.json'), 'utf8');
const utf8 = new TextDecoder('utf-8', { fatal: true });
const JSON_TYPE_RE = /^application\/json\s*(;|$)/i;

function isJsonContentType(req: Request): boolean {
  const ct = req.headers['content-type'];
  return typeof ct === 'string' && JSON_TYPE_RE.test(ct);
}

function parseJson(req: Request, raw: Buffer): unknown {
  if (raw.length === 0) throw new WcsError('INVALID_JSON', { message: 'Request body is required' });
  if (!isJsonContentType(req)) throw new WcsError('UNSUPPORTED_MEDIA_TYPE');
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw new WcsError('INVALID_JSON', { message: 'Request body is not valid UTF-8' });
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new WcsError('INVALID_JSON', { message: `Request body is not valid JSON: ${(e as Error).message}` });
  }
}

/** The first KeyStoreError in err's cause chain (err included) whose code means "cannot serve now, retry later". */
export function keyStoreUnavailableCause(err: unknown): KeyStoreError | undefined {
  const seen = new Set<unknown>();
  for (let cur = err; cur && typeof cur === 'object' && !seen.has(cur) && seen.size < 16; cur = (cur as { cause?: unknown }).cause) {
    if (isKeyStoreError(cur) && KEYSTORE_UNAVAILABLE_CODES.has(cur.code)) return cur;
    seen.add(cur);
  }
  return undefined;
}

/** The Retry-After of a SERVICE_UNAVAILABLE answer that names none (a database outage, a shared rate bucket away). */
const UNAVAILABLE_HEADERS = Object.freeze({ 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) });

/**
 * Maps any thrown value to (httpStatus, WcsError); unknown faults become INTERNAL_ERROR. A key
 * store that cannot serve now (locked, device away, wrong PIN...) is KEYSTORE_UNAVAILABLE (503);
 * a database that cannot be reached (down, restarting, no connection to be had: db/unavailable.ts)
 * is SERVICE_UNAVAILABLE (503) with Retry-After, wherever it surfaced (a handler, the key or nonce
 * lookups of authentication, the rate-limit bucket).
 */
export function toWcsError(err: unknown): { error: WcsError; fault: boolean } {
  if (isWcsError(err) && err.errorClass !== 'INTERNAL') return { error: err, fault: false };
  if (keyStoreUnavailableCause(err)) return { error: new WcsError('KEYSTORE_UNAVAILABLE', { cause: err }), fault: true };
  if (databaseUnavailable(err)) return { error: new WcsError('SERVICE_UNAVAILABLE', { cause: err, headers: UNAVAILABLE_HEADERS }), fault: true };
  if (isWcsError(err) && err.errorName === 'SERVICE_UNAVAILABLE' && !err.headers?.['Retry-After']) {
    return { error: new WcsError('SERVICE_UNAVAILABLE', { message: err.message, cause: err, headers: { ...err.headers, ...UNAVAILABLE_HEADERS } }), fault: true };
  }
  // An adapter's error (a node down, a crafter's refusal) is a fault with no API code of its own.
  if (isChainError(err)) return { error: new WcsError('INTERNAL_ERROR', { cause: err }), fault: true };
  if (isWcsError(err)) return { error: err, fault: true };
  const e = err as { type?: string; status?: number; name?: string };
  switch (e?.type) {
    case 'entity.too.large':
      return { error: new WcsError('BODY_TOO_LARGE', { cause: err }), fault: false };
    case 'encoding.unsupported':
      return { error: new WcsError('UNSUPPORTED_MEDIA_TYPE', { message: 'Content-Encoding is not supported', cause: err }), fault: false };
    case 'charset.unsupported':
      return { error: new WcsError('UNSUPPORTED_MEDIA_TYPE', { message: 'Only UTF-8 bodies are accepted', cause: err }), fault: false };
    case 'request.size.invalid':
    case 'request.aborted':
      return { error: new WcsError('INVALID_PARAMETER', { message: 'Request body was incomplete', cause: err }), fault: false };
  }
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
    return { error: new WcsError('INVALID_PARAMETER', { message: 'Malformed request', cause: err }), fault: false };
  }
  return { error: new WcsError('INTERNAL_ERROR', { cause: err }), fault: true };
}

/**
 * The HTTP surface: /healthz and /readyz (unauthenticated) and the signed API under /api/v1.
 * Every response, errors included, is the {code, data, msg} envelope.
 */
export function createHttpApp(opts: HttpAppOptions): express.Express {
  const { logger } = opts;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  app.set('query parser', 'simple');
  app.set('trust proxy', opts.rateLimits?.trustProxy ?? false);
  const authFailures = opts.rateLimits?.authFailures ?? null;
  const apiKeyLimit = opts.rateLimits?.apiKey ?? null;
  if (opts.metrics) app.use(opts.metrics.middleware);

  app.use((_req: Request, res: Response, next: NextFunction) => {
    const id = crypto.randomUUID();
    res.locals.requestId = id;
    res.locals.started = process.hrtime.bigint();
    res.setHeader('X-Request-Id', id);
    res.setHeader('Cache-Control', 'no-store');
    next();
  });

  app.get('/openapi.json', (_req: Request, res: Response) => {
    res.status(200).type('application/json').send(OPENAPI_TEXT);
  });
  app.get('/healthz', (_req: Request, res: Response) => sendOk(res, { status: 'ok' }));
  app.get('/readyz', async (_req, res) => {
    const report = await opts.readiness().catch((e: unknown) => ({ ready: false, checks: { readiness: String((e as Error)?.message ?? e) } }));
    if (report.ready) sendOk(res, { status: 'ready', checks: report.checks });
    else sendError(res, 503, ErrorCodes.SERVICE_UNAVAILABLE.code, 'Service is not ready', { status: 'not_ready', checks: report.checks });
  });

  const rawBody = express.raw({ type: () => true, limit: opts.bodyLimitBytes });
  const byPath = new Map<string, ApiRoute[]>();
  for (const r of opts.routes) {
    const full = API_PREFIX + r.path;
    byPath.set(full, [...(byPath.get(full) ?? []), r]);
  }

  for (const [full, routes] of byPath) {
    for (const route of routes) {
      app[route.method === 'GET' ? 'get' : 'post'](full, rawBody, async (req: Request, res: Response, next: NextFunction) => {
        const inFlight = opts.inFlight;
        if (inFlight) inFlight.count++;
        try {
          const raw: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
          req.body = undefined;
          const source = req.ip ?? req.socket.remoteAddress ?? '';
          if (authFailures) {
            const wait = authFailures.waitMs(source);
            if (wait > 0) throw new WcsError('AUTH_RATE_LIMITED', { headers: { 'Retry-After': String(retryAfterSeconds(wait)) } });
          }
          // the per-key limit runs inside authentication: after the signature, before the nonce is claimed
          const admit = apiKeyLimit
            ? async (app: AppCredentials) => {
                const policy = app.rateLimit ?? apiKeyLimit.defaultPolicy;
                if (!policy) return;
                const d = await apiKeyLimit.limiter.take(app.apiKey, policy);
                res.setHeader('RateLimit-Policy', cachedPolicyHeader(policy));
                res.setHeader('RateLimit', remainingHeader(d.allowed ? d.remaining : 0, policy));
                if (!d.allowed) throw new WcsError('RATE_LIMITED', { headers: { 'Retry-After': String(retryAfterSeconds(d.waitMs)) } });
              }
            : undefined;
          let credentials: AppCredentials;
          try {
            credentials = await opts.authenticator.authenticate(req, raw, admit);
          } catch (e) {
            if (authFailures && isWcsError(e) && COUNTED_AUTH_FAILURES.has(e.errorName)) authFailures.recordFailure(source);
            throw e;
          }
          res.locals.applicationId = credentials.applicationId;
          let body: unknown;
          if (route.body === 'json') body = parseJson(req, raw);
          else if (raw.length > 0) throw new WcsError('BODY_NOT_ALLOWED');
          const data = await route.handler({
            app: credentials,
            query: req.query as Record<string, unknown>,
            body,
            requestId: res.locals.requestId as string,
          });
          sendOk(res, data ?? null);
        } catch (e) {
          next(e);
        } finally {
          if (inFlight) inFlight.count--;
        }
      });
    }
  }

  // Unknown path: 404; known path, other method: 405 with Allow.
  app.use((req: Request, _res: Response, next: NextFunction) => {
    const routes = byPath.get(req.path);
    if (routes) {
      const allow = [...new Set(routes.map((r) => r.method))].join(', ');
      next(new WcsError('METHOD_NOT_ALLOWED', { message: `Method ${req.method} is not allowed; use ${allow}`, headers: { Allow: allow } }));
    } else {
      next(new WcsError('NOT_FOUND', { message: `No endpoint ${req.method} ${req.path}` }));
    }
  });

  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const { error, fault } = toWcsError(err);
    const requestId = res.locals.requestId as string | undefined;
    if (fault) {
      const ks = keyStoreUnavailableCause(err);
      const db = ks ? null : databaseUnavailable(err);
      // a key-store or database outage: its code and message (never secret), not a stack per request
      if (ks) logger.error('request failed: key store unavailable', { requestId, method: req.method, path: req.path, code: error.code, keystoreCode: ks.code, reason: ks.message });
      else if (db) logger.error('request failed: database unavailable', { requestId, method: req.method, path: req.path, code: error.code, databaseCode: db.code, reason: db.reason });
      else logger.error('request failed', { requestId, method: req.method, path: req.path, code: error.code, error: err });
    } else {
      logger.debug('request rejected', { requestId, method: req.method, path: req.path, code: error.code, reason: error.message });
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    if (error.headers) for (const [k, v] of Object.entries(error.headers)) res.setHeader(k, v);
    // Faults never reveal their cause; input problems say exactly what is wrong.
    const msg = fault ? ErrorCodes[error.errorName as keyof typeof ErrorCodes]?.message ?? 'Internal error' : error.message;
    sendError(res, error.httpStatus, error.code, msg);
  });

  return app;
}
