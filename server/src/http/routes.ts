import type { AppCredentials } from '../auth/credentials';

export interface RequestContext {
  readonly app: AppCredentials;
  /** The query parameters as parsed (a repeated one is an array): read them with a schema (contract/parse.ts parseQuery). */
  readonly query: Readonly<Record<string, unknown>>;
  /** Parsed JSON body for body: 'json' routes; undefined otherwise. */
  readonly body: unknown;
  readonly requestId: string;
}

/** One signed API operation. Handlers return the envelope's data or throw a WcsError. */
export interface ApiRoute {
  readonly method: 'GET' | 'POST';
  /** Path below /api/v1, e.g. /wallet/support/chains. */
  readonly path: string;
  readonly body: 'none' | 'json';
  readonly handler: (ctx: RequestContext) => Promise<unknown> | unknown;
}

export const API_PREFIX = '/api/v1';
