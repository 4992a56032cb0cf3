import { JsonRpcClient, isTransientStatus, parseJsonExact, type ChainEndpoint, type JsonRpcItemError, type RetryOptions } from '@wcs/core';

/**
 * Transient JSON-RPC errors (asked again, then RPC_UNAVAILABLE): -32004 block not available,
 * -32005 node unhealthy / behind, -32014 block status not yet available, -32016 minimum context
 * slot not reached. Any other node error is RPC_ERROR.
 */
export const TRANSIENT_RPC_CODES: ReadonlySet<number> = new Set([-32004, -32005, -32014, -32016]);

/** A node error worth asking again for: the transient codes, and rate limiting. */
const transientItem = (e: JsonRpcItemError): boolean => TRANSIENT_RPC_CODES.has(e.code) || e.code === 429;

/** The Solana scanner's and transfer node's RPC settings (the kit's retry spelling). */
export interface SolanaRpcOptions extends RetryOptions {
  readonly fetch?: typeof fetch;
}

/**
 * Core's JsonRpcClient set for a Solana JSON-RPC endpoint: integers above 2^53 kept exact,
 * 408 / 429 / 5xx and the transient node errors asked again (3 attempts, 250 ms back-off by
 * default), then RPC_UNAVAILABLE; 15 s per request unless the endpoint says; one HTTP request at a time. Errors (ChainRpcError) name the
 * endpoint as "Solana RPC scheme://host[:port]", never its user info, path, query or headers.
 */
export function solanaRpc(endpoint: ChainEndpoint, options: SolanaRpcOptions = {}, extra: { readonly maxBatch?: number; readonly redirect?: 'follow' | 'error' } = {}): JsonRpcClient {
  return new JsonRpcClient(endpoint, {
    label: 'Solana',
    ...(options.attempts === undefined ? {} : { attempts: options.attempts }),
    ...(options.backoffMs === undefined ? {} : { backoffMs: options.backoffMs }),
    timeoutMs: options.timeoutMs ?? 15_000,
    honourRetryAfter: false,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(extra.redirect === undefined ? {} : { redirect: extra.redirect }),
    parse: parseJsonExact,
    transientStatus: isTransientStatus,
    retryItem: transientItem,
    itemRetriesUnavailable: true,
    maxBatch: extra.maxBatch ?? 100,
    concurrency: 1,
  });
}
