import { collectDefaultMetrics, Registry } from 'prom-client';

/** Every metric this service exports starts with it, the process defaults included. */
export const METRIC_PREFIX = 'wcs_';

/**
 * A registry of one service instance (never prom-client's global one, so that several services in
 * one process, as in tests, do not share series), with the Node.js process metrics
 * (collectDefaultMetrics: CPU, memory, event loop lag, GC, handles) under the wcs_ prefix.
 */
export function createRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
  return registry;
}

/** Label values outside `allowed` become `other`: a label never takes an unbounded set of values. */
export function bounded(value: string, allowed: ReadonlySet<string>): string {
  return allowed.has(value) ? value : 'other';
}
