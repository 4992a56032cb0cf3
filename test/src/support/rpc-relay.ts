/**
 * A JSON-RPC relay in front of a node (anvil) for crash tests: every request is passed on, except
 * `eth_sendRawTransaction` requests (single or batched) that `hold` picks: those are either never
 * forwarded and never answered ('hold-send': the crash comes while the send is in flight, the node
 * never got it) or forwarded with the answer withheld ('send-then-hang': the node has it, the
 * caller never hears). The same idea as the relay of withdrawals-crash.test.ts, with a predicate
 * on the transactions so one kind of transfer can be held while the others pass.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { keccak_256 } from '@noble/hashes/sha3';

export type RelayHoldMode = 'hold-send' | 'send-then-hang';

/** A held eth_sendRawTransaction request: the hashes of the transactions in it, and whether the node got them. */
export interface HeldSend {
  readonly hashes: readonly string[];
  readonly forwarded: boolean;
}

/** keccak256 of the raw signed transaction: its hash (typed envelopes included). */
export function rawTxHash(raw: string): string {
  return `0x${Buffer.from(keccak_256(Buffer.from(raw.replace(/^0x/, ''), 'hex'))).toString('hex')}`;
}

export class RpcRelay {
  mode: RelayHoldMode = 'hold-send';
  /** Picks the sends to hold by the hashes of their transactions; null: everything passes. */
  hold: ((hashes: readonly string[]) => boolean | Promise<boolean>) | null = null;
  /** The sends held so far. */
  readonly held: HeldSend[] = [];
  /** The hashes of every transaction passed on to the node in a send that was answered. */
  readonly passed: string[] = [];
  private readonly waiting: ServerResponse[] = [];
  private server: Server | null = null;

  constructor(private readonly target: string) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res).catch(() => res.destroy()));
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    let calls: Array<{ method?: string; params?: unknown[] }> = [];
    try {
      const parsed = JSON.parse(body) as unknown;
      calls = (Array.isArray(parsed) ? parsed : [parsed]) as typeof calls;
    } catch {
      /* forwarded as it is */
    }
    const hashes = calls.filter((c) => c.method === 'eth_sendRawTransaction').map((c) => rawTxHash(String(c.params?.[0] ?? '')));
    const mode = this.mode;
    const holding = hashes.length > 0 && this.hold !== null && (await this.hold(hashes));
    if (holding && mode === 'hold-send') {
      this.held.push({ hashes, forwarded: false });
      this.waiting.push(res); // never forwarded, never answered
      return;
    }
    const answer = await fetch(this.target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const text = await answer.text();
    if (holding) {
      this.held.push({ hashes, forwarded: true });
      this.waiting.push(res); // the node has them; the caller never hears
      return;
    }
    this.passed.push(...hashes);
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(text);
  }

  /** Drops the held requests' connections (their caller is gone by then). */
  dropHeld(): void {
    for (const r of this.waiting.splice(0)) r.destroy();
  }

  async stop(): Promise<void> {
    this.dropHeld();
    if (!this.server) return;
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }
}
