/**
 * The slice of autocannon's programmatic API (v8) the benchmarks use. autocannon ships
 * no type declarations and there is no @types package in the tree, so it is typed here.
 */

export interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /**
   * Called before every request is (re)built; return the request to send (mutated or a new
   * object). Every request it builds is sent. Set the body and the headers that depend on
   * it here together.
   */
  setupRequest?: (
    req: { method: string; path: string; headers: Record<string, string>; body?: string | Buffer },
    context: Record<string, unknown>,
  ) => unknown;
  /** Called with every complete response to this request (status, body as text), before the next request is built. */
  onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, unknown>) => void;
}

export interface AutocannonOptions {
  url: string;
  connections?: number;
  pipelining?: number;
  duration?: number;
  timeout?: number;
  title?: string;
  requests?: AutocannonRequest[];
  verifyBody?: (body: string) => boolean;
}

export interface Histogram {
  average: number;
  mean: number;
  stddev: number;
  min: number;
  max: number;
  total: number;
  sent?: number;
  p2_5: number;
  p50: number;
  p90: number;
  p97_5: number;
  p99: number;
  p99_9: number;
}

export interface AutocannonResult {
  title?: string;
  url: string;
  requests: Histogram;
  latency: Histogram;
  throughput: Histogram;
  duration: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  non2xx: number;
  resets: number;
  statusCodeStats: Record<string, { count: number }>;
  start: Date;
  finish: Date;
}

export interface AutocannonInstance {
  stop(): void;
}

type AutocannonFn = (opts: AutocannonOptions, cb: (err: Error | null, result: AutocannonResult) => void) => AutocannonInstance;

// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannonFn = require('autocannon') as AutocannonFn;

// eslint-disable-next-line @typescript-eslint/no-require-imports
export const AUTOCANNON_VERSION = (require('autocannon/package.json') as { version: string }).version;

/** Runs one autocannon load; `onStart` receives the instance so a signal handler can stop it. */
export function runAutocannon(opts: AutocannonOptions, onStart?: (i: AutocannonInstance) => void): Promise<AutocannonResult> {
  return new Promise((resolve, reject) => {
    const inst = autocannonFn(opts, (err, result) => (err ? reject(err) : resolve(result)));
    onStart?.(inst);
  });
}
