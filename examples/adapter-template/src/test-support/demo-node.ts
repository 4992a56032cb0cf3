import { createHash } from 'node:crypto';
import { startReplayServer, type ReplayServer, type Reply, type SeenRequest } from '@wcs/core/testing';

/**
 * The template's stand-in for a chain node: an in-memory ledger of the made-up `demo` chain behind
 * the JSON-RPC API the adapter speaks (src/scanner.ts), on a local port. Each payment is mined in
 * a block of its own, final at once.
 *
 * Replace it with your chain's own node, run locally by the tests (anvil, bcoin regtest, litesvm,
 * @ton/sandbox: see docs/adapters.md, "Where the node comes from"), or with recorded answers of a
 * real node replayed by `startReplayServer`, each fixture file's source written in a SOURCE.md.
 */
export interface DemoPayment {
  readonly hash: string;
  readonly height: bigint;
  readonly blockHash: string;
}

interface LedgerEntry {
  readonly seq: number;
  readonly hash: string;
  readonly from: string;
  readonly to: string;
  readonly amount: bigint;
  readonly height: bigint;
  readonly blockHash: string;
  readonly status: 'ok' | 'failed';
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

export class DemoNode {
  private readonly ledger: LedgerEntry[] = [];
  private height = 0n;
  /** Answers to give instead of the ledger's, by method (a node misbehaving, for the scanner's own tests). */
  readonly overrides = new Map<string, unknown>();

  private constructor(private readonly server: ReplayServer) {}

  static async start(): Promise<DemoNode> {
    let node: DemoNode | null = null;
    const server = await startReplayServer((req) => (node as DemoNode).answer(req));
    node = new DemoNode(server);
    return node;
  }

  get url(): string {
    return this.server.url;
  }

  /** Mines a block with one payment of `amount` base units; `failed`: the transaction is in the block but failed. */
  pay(from: string, to: string, amount: bigint, failed = false): DemoPayment {
    this.height += 1n;
    const blockHash = sha256(`block ${this.height}`);
    const hash = sha256(`${this.height} ${from} ${to} ${amount} ${this.ledger.length}`);
    this.ledger.push({ seq: this.ledger.length + 1, hash, from, to, amount, height: this.height, blockHash, status: failed ? 'failed' : 'ok' });
    return { hash, height: this.height, blockHash };
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private answer(req: SeenRequest): Reply {
    const body = JSON.parse(req.body) as unknown;
    const one = (call: { id?: unknown; method?: unknown; params?: unknown }) => {
      try {
        return { jsonrpc: '2.0', id: call.id, result: this.result(String(call.method), call.params) };
      } catch (e) {
        return { jsonrpc: '2.0', id: call.id, error: { code: -32602, message: (e as Error).message } };
      }
    };
    return { body: Array.isArray(body) ? body.map(one) : one(body as { id?: unknown }) };
  }

  private result(method: string, params: unknown): unknown {
    if (this.overrides.has(method)) return this.overrides.get(method);
    switch (method) {
      case 'demo_finalHeight':
        return this.height.toString();
      case 'demo_transfersTo': {
        const { address, after, limit } = params as { address: string; after: string | null; limit: number };
        if (after !== null && !/^\d+$/.test(after)) throw new Error(`bad cursor ${JSON.stringify(after)}`);
        const from = after === null ? 0 : Number(after);
        const page = this.ledger.filter((e) => e.seq > from && e.to === address).slice(0, Math.max(1, limit));
        return {
          transfers: page.map((e) => ({
            hash: e.hash, index: 0, from: e.from, to: e.to, amount: e.amount.toString(), height: e.height.toString(), blockHash: e.blockHash, status: e.status,
          })),
          cursor: page.length > 0 ? String(page[page.length - 1]!.seq) : after,
        };
      }
      default:
        throw new Error(`unknown method ${method}`);
    }
  }
}
