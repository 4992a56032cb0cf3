import { ChainRpcError, JsonRpcClient, jsonBigInt, parseJsonExact, type ChainEndpoint, type HistoryScanner, type ObservedTransfer } from '@wcs/core';
import type { DemoAddresses } from './address';

/**
 * The node API this adapter speaks (made up for the template: replace it with your chain's),
 * JSON-RPC 2.0 over HTTP:
 *
 * - `demo_finalHeight` → the height of the last final block (a decimal string or a number);
 * - `demo_transfersTo` `{ address, after, limit }` → `{ transfers, cursor }`: the transfers into
 *   `address` after the opaque `cursor` (null: from the first), oldest first, at most `limit`;
 *   each `{ hash, index, from, to, amount, height, blockHash, status }`, amounts in base units as
 *   decimal strings, `status` `"ok"` or `"failed"`. Only final blocks are served.
 */
export class DemoScanner implements HistoryScanner {
  readonly kind = 'history' as const;
  private readonly rpc: JsonRpcClient;

  constructor(endpoint: ChainEndpoint, private readonly addresses: DemoAddresses) {
    // parseJsonExact: integers beyond 2^53 stay exact (as decimal strings) instead of being rounded
    this.rpc = new JsonRpcClient(endpoint, { label: 'DEMO', parse: parseJsonExact });
  }

  async tipHeight(): Promise<bigint> {
    const h = jsonBigInt(await this.rpc.call('demo_finalHeight'));
    if (h === null || h < 0n) throw this.bad('demo_finalHeight', 'not a height');
    return h;
  }

  async transfersSince(address: string, cursor: string | null, limit: number): Promise<{ readonly transfers: readonly ObservedTransfer[]; readonly cursor: string | null }> {
    const answer = await this.rpc.call<unknown>('demo_transfersTo', { address, after: cursor, limit });
    if (typeof answer !== 'object' || answer === null || !Array.isArray((answer as { transfers?: unknown }).transfers)) throw this.bad('demo_transfersTo', 'no transfers list');
    const { transfers, cursor: next } = answer as { transfers: unknown[]; cursor?: unknown };
    if (next !== null && typeof next !== 'string') throw this.bad('demo_transfersTo', 'cursor is not a string');
    const out: ObservedTransfer[] = [];
    for (const item of transfers) {
      const t = this.transfer(item);
      // a transfer from the address to itself is never reported
      if (t.toAddress === address && t.fromAddress !== address) out.push(t);
    }
    return { transfers: out, cursor: next ?? cursor };
  }

  /** One listed transfer, every field checked: a node answer is outside input. */
  private transfer(item: unknown): ObservedTransfer {
    const t = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
    const what = 'demo_transfersTo';
    if (typeof t.hash !== 'string' || !/^[0-9a-f]{64}$/.test(t.hash)) throw this.bad(what, 'hash is not 64 lower-case hex digits');
    if (typeof t.index !== 'number' || !Number.isSafeInteger(t.index) || t.index < 0) throw this.bad(what, `transfer ${t.hash}: index`);
    if (typeof t.amount !== 'string' || !/^\d{1,40}$/.test(t.amount)) throw this.bad(what, `transfer ${t.hash}: amount is not a decimal string of base units`);
    const height = jsonBigInt(t.height);
    if (height === null || height < 0n) throw this.bad(what, `transfer ${t.hash}: height`);
    if (typeof t.blockHash !== 'string' || !/^[0-9a-f]{64}$/.test(t.blockHash)) throw this.bad(what, `transfer ${t.hash}: block hash`);
    if (t.status !== 'ok' && t.status !== 'failed') throw this.bad(what, `transfer ${t.hash}: status ${JSON.stringify(t.status)}`);
    const to = this.addresses.validate(String(t.to), null);
    if (!to.valid) throw this.bad(what, `transfer ${t.hash}: destination: ${to.reason}`);
    const from = t.from === null ? null : this.addresses.validate(String(t.from), null);
    if (from !== null && !from.valid) throw this.bad(what, `transfer ${t.hash}: sender: ${from.reason}`);
    return {
      txHash: t.hash, position: t.index, fromAddress: from === null ? null : from.normalized, toAddress: to.normalized, memo: null, contract: null,
      amount: BigInt(t.amount), blockHeight: height, blockHash: t.blockHash, succeeded: t.status === 'ok',
    };
  }

  private bad(method: string, why: string): ChainRpcError {
    return new ChainRpcError('RPC_BAD_RESPONSE', `${this.rpc.endpointName}: ${method}: ${why}`, { method });
  }
}
