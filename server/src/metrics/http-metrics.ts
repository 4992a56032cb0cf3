import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Counter, Histogram, type Registry } from 'prom-client';
import { ErrorCodes } from '@wcs/core';
import { API_PREFIX, type ApiRoute } from '../http/routes';
import { ENVELOPE_CODE } from '../http/envelope';
import { METRIC_PREFIX } from './registry';

/** The unauthenticated paths of the HTTP app (server/src/http/app.ts). */
export const PUBLIC_PATHS = ['/healthz', '/readyz', '/openapi.json'] as const;
const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);
/** Envelope code -> error name; 0 is success. The catalogue is fixed, so the `code` label is bounded. */
const CODE_NAMES = new Map<number, string>(Object.values(ErrorCodes).map((e) => [e.code, e.name]));
/** Errors counted as authentication failures: the AUTH class, and the rate limit on failed authentications. */
export const AUTH_FAILURE_REASONS: readonly string[] = Object.values(ErrorCodes).filter((e) => e.name.startsWith('AUTH_')).map((e) => e.name);
const AUTH_REASONS = new Set(AUTH_FAILURE_REASONS);
/** Seconds; from 1 ms (a cached signed GET) to 10 s (a slow database or node). */
export const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type Child = { inc(): void };
type Timer = { observe(v: number): void };

/**
 * Request counts and latency of the API, by route template (an unknown path is `other`: no raw
 * URL ever becomes a label), method, HTTP status and envelope code, and authentication failures
 * by reason. One middleware, no I/O: per request a clock read, a listener and two
 * cached-series updates when the response is finished (the envelope code is read from
 * res.locals, where http/envelope.ts leaves it).
 */
export class HttpMetrics {
  private readonly requests: Counter<'route' | 'method' | 'status' | 'code'>;
  private readonly duration: Histogram<'route' | 'method'>;
  private readonly authFailures: Counter<'reason'>;
  private readonly routes: Set<string>;
  private readonly counterChildren = new Map<string, Child>();
  private readonly timerChildren = new Map<string, Timer>();

  constructor(registry: Registry, apiRoutes: readonly ApiRoute[]) {
    this.routes = new Set<string>([...PUBLIC_PATHS, ...apiRoutes.map((r) => API_PREFIX + r.path)]);
    this.requests = new Counter({
      name: `${METRIC_PREFIX}http_requests_total`,
      help: 'HTTP requests answered, by route template (other: unknown path), method, HTTP status and envelope code (none: not an envelope)',
      labelNames: ['route', 'method', 'status', 'code'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: `${METRIC_PREFIX}http_request_duration_seconds`,
      help: 'Time from receiving a request to finishing its response, by route template and method',
      labelNames: ['route', 'method'],
      buckets: HTTP_BUCKETS,
      registers: [registry],
    });
    this.authFailures = new Counter({
      name: `${METRIC_PREFIX}auth_failures_total`,
      help: 'Signed API requests refused by authentication, by reason (the error name)',
      labelNames: ['reason'],
      registers: [registry],
    });
    for (const reason of AUTH_FAILURE_REASONS) this.authFailures.inc({ reason }, 0); // every reason exported from the start, at 0
  }

  /** Route template of a path: itself when it is a route of the app, else `other`. */
  routeOf(path: string): string {
    return this.routes.has(path) ? path : 'other';
  }

  readonly middleware: RequestHandler = (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    // every answer of the app is an envelope sent by http/envelope.ts, which leaves its code in res.locals
    res.once('finish', () => this.record(req, res, res.locals[ENVELOPE_CODE], started));
    next();
  };

  private record(req: Request, res: Response, code: unknown, started: bigint): void {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const route = this.routeOf(req.path);
    const method = METHODS.has(req.method) ? req.method : 'other';
    const name = typeof code === 'number' ? CODE_NAMES.get(code) : undefined;
    const codeLabel = code === undefined ? 'none' : code === 0 || name !== undefined ? String(code) : 'other';
    const key = `${route} ${method} ${res.statusCode} ${codeLabel}`;
    let counter = this.counterChildren.get(key);
    if (!counter) {
      counter = this.requests.labels(route, method, String(res.statusCode), codeLabel);
      this.counterChildren.set(key, counter);
    }
    counter.inc();
    const timerKey = `${route} ${method}`;
    let timer = this.timerChildren.get(timerKey);
    if (!timer) {
      timer = this.duration.labels(route, method);
      this.timerChildren.set(timerKey, timer);
    }
    timer.observe(seconds);
    if (name !== undefined && AUTH_REASONS.has(name)) this.authFailures.labels(name).inc();
  }
}
