import { JsonRpcClient, isTransientStatus, networkErrorCode, type ChainEndpoint, type RetryOptions } from '@wcs/core';

/** The bitcoin scanner's and transfer node's RPC settings: the kit's retry spelling and the requests in flight. */
export interface BitcoinRpcOptions extends RetryOptions {
  /** Most HTTP requests in flight at once for one batch (default 4). */
  readonly concurrency?: number;
}

/**
 * A raw JSON fragment written as-is into a request body (exact decimal amounts: bcoin's RPC reads
 * amounts only as JSON numbers, and the decimal text must not pass through a float on our side).
 */
export class RawJson {
  constructor(readonly text: string) {
    if (!/^-?\d+(\.\d+)?$/.test(text)) throw new Error('RawJson only carries a plain decimal number');
  }
}

function stringifyWithRaw(value: unknown): string {
  const raws: string[] = [];
  const json = JSON.stringify(value, (_k, v: unknown) => {
    if (v instanceof RawJson) {
      raws.push(v.text);
      return `\u0000RAW${raws.length - 1}\u0000`;
    }
    return typeof v === 'bigint' ? v.toString() : v;
  });
  if (raws.length === 0) return json;
  // JSON.stringify escapes U+0000 as \u0000, so a placeholder cannot collide with real string content.
  return json.replace(/"\\u0000RAW(\d+)\\u0000"/g, (_m, i: string) => raws[Number(i)]!);
}

function unreachable(e: unknown): string {
  const code = networkErrorCode(e);
  return code ? `unreachable (${code})` : 'unreachable';
}

/**
 * Core's JsonRpcClient set for a Bitcoin Core–style node (bitcoind, bcoin): JSON-RPC 1.0, the
 * JSON-RPC body over the HTTP status (Bitcoin Core answers errors with HTTP 500 / 404), single
 * calls for good when the node refuses batches, RawJson amounts written as they are, 408 / 429 /
 * 5xx asked again (3 attempts, 100 ms back-off by default). The endpoint URL may carry
 * credentials (http://user:pass@host:port): sent as Basic auth, never in errors.
 */
export function bitcoinRpc(endpoint: ChainEndpoint, options: BitcoinRpcOptions = {}): JsonRpcClient {
  return new JsonRpcClient(endpoint, {
    label: 'bitcoin',
    version: '1.0',
    bodyOverStatus: true,
    batchFallback: true,
    attempts: options.attempts ?? 3,
    backoffMs: options.backoffMs ?? 100,
    honourRetryAfter: false,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    maxBatch: 100,
    concurrency: options.concurrency ?? 4,
    transientStatus: isTransientStatus,
    stringify: stringifyWithRaw,
    describeNetworkError: unreachable,
  });
}
