import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Address, Cell, beginCell, loadMessage, storeMessage, type Message, type Transaction, type TupleItem } from '@ton/core';
import { Blockchain } from '@ton/sandbox';
import type { StackItem } from '../api';
import { readComment } from '../messages';

/**
 * The node API of api.ts served over @ton/sandbox: the real TVM and transaction executor,
 * in-process. The sandbox keeps no blocks: every batch of transactions it ran since the last
 * request is one "masterchain block" (seqno + 1), and each transaction records the seqno it was
 * first seen at. Transactions are read from the sandbox's own list as they are appended.
 */
interface Recorded {
  readonly tx: Transaction;
  readonly lt: bigint;
  readonly hash: string;
  readonly seqno: bigint;
  readonly data: string;
  /** The getTransactions item (toncenter's fields, see api.ts). */
  readonly json: Record<string, unknown>;
}

function messageHash(m: Message): string {
  return beginCell().store(storeMessage(m)).endCell().hash().toString('hex');
}

/** The toncenter fields of a transaction: in_msg as v2's raw.message (raw addresses, hex hashes), description / prev as v3. */
export function transactionJson(tx: Transaction, seqno: bigint): Record<string, unknown> {
  const m = tx.inMessage;
  let inMsg: Record<string, unknown> | null = null;
  if (m) {
    const text = readComment(m.body.beginParse());
    const internal = m.info.type === 'internal' ? m.info : null;
    inMsg = {
      source: m.info.type === 'external-in' ? '' : (m.info.src as Address).toRawString(),
      destination: Address.isAddress(m.info.dest) ? m.info.dest.toRawString() : '',
      value: (internal?.value.coins ?? 0n).toString(),
      bounce: internal?.bounce ?? false,
      bounced: internal?.bounced ?? false,
      hash: messageHash(m),
      msg_data: text !== null
        ? { '@type': 'msg.dataText', text: Buffer.from(text, 'utf8').toString('base64') }
        : { '@type': 'msg.dataRaw', body: m.body.toBoc().toString('base64'), init_state: '' },
      message: text ?? '',
    };
  }
  const d = tx.description;
  return {
    transaction_id: { lt: tx.lt.toString(), hash: tx.hash().toString('hex') },
    prev_transaction_id: { lt: tx.prevTransactionLt.toString(), hash: tx.prevTransactionHash.toString(16).padStart(64, '0') },
    utime: tx.now,
    mc_block_seqno: seqno.toString(),
    description: {
      type: d.type,
      aborted: 'aborted' in d ? d.aborted : false,
      bounce: d.type === 'generic' && d.bouncePhase ? d.bouncePhase.type : null,
    },
    in_msg: inMsg,
    data: tx.raw.toBoc().toString('base64'),
  };
}

export class TonSandboxNode {
  readonly requests: string[] = [];
  private seqno = 1n;
  private seen = 0;
  private readonly byAccount = new Map<string, Recorded[]>();
  private server: ReturnType<typeof createServer> | null = null;
  url = '';

  private constructor(readonly blockchain: Blockchain) {}

  static async start(): Promise<TonSandboxNode> {
    const node = new TonSandboxNode(await Blockchain.create());
    await node.listen();
    return node;
  }

  /** The sandbox's transactions not recorded yet, as one new block. */
  sync(): void {
    const all = (this.blockchain as unknown as { transactions: Transaction[] }).transactions;
    if (all.length === this.seen) return;
    this.seqno += 1n;
    for (; this.seen < all.length; this.seen++) {
      const tx = all[this.seen]!;
      const dest = tx.inMessage?.info.dest;
      if (!Address.isAddress(dest)) continue;
      const key = dest.toRawString();
      let list = this.byAccount.get(key);
      if (!list) this.byAccount.set(key, (list = []));
      const json = transactionJson(tx, this.seqno);
      list.push({ tx, lt: tx.lt, hash: tx.hash().toString('hex'), seqno: this.seqno, data: json.data as string, json });
    }
  }

  /** Transactions of an account, oldest first. */
  transactionsOf(address: Address): readonly Recorded[] {
    this.sync();
    return this.byAccount.get(address.toRawString()) ?? [];
  }

  private async listen(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.handle(req, Buffer.concat(chunks).toString('utf8'))
          .then(([status, body]) => reply(res, status, body))
          .catch((e: unknown) => reply(res, 500, { ok: false, error: String((e as Error)?.message ?? e) }));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = null;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, body: string): Promise<[number, unknown]> {
    const u = new URL(req.url ?? '/', 'http://localhost');
    this.requests.push(u.pathname);
    this.sync();
    const q = u.searchParams;
    const ok = (result: unknown): [number, unknown] => [200, { ok: true, result }];
    switch (`${req.method} ${u.pathname}`) {
      case 'GET /getMasterchainInfo':
        return ok({ last: { seqno: this.seqno.toString() } });
      case 'GET /getAddressInformation': {
        const c = await this.blockchain.getContract(Address.parse(q.get('address') ?? ''));
        const t = c.accountState?.type;
        const state = t === 'active' ? 'active' : t === 'frozen' ? 'frozen' : 'uninitialized';
        const last = c.lastTransactionLt > 0n ? { lt: c.lastTransactionLt.toString(), hash: c.lastTransactionHash.toString(16).padStart(64, '0') } : null;
        const init = c.accountState?.type === 'active' ? c.accountState.state : null;
        return ok({
          balance: c.balance.toString(), state, last_transaction_id: last,
          code: init?.code ? init.code.toBoc().toString('base64') : '', data: init?.data ? init.data.toBoc().toString('base64') : '',
        });
      }
      case 'GET /getTransactions': {
        const list = this.transactionsOf(Address.parse(q.get('address') ?? ''));
        const limit = Math.min(1000, Math.max(1, Number(q.get('limit') ?? '10')));
        const lt = q.get('lt');
        const hash = q.get('hash');
        const toLt = q.get('to_lt');
        let end = list.length; // exclusive index, walking down
        if (lt !== null && hash !== null) {
          const i = list.findIndex((r) => r.lt === BigInt(lt) && r.hash === hash);
          if (i < 0) return [404, { ok: false, error: `transaction ${lt}:${hash} not found` }];
          end = i + 1;
        }
        const out: unknown[] = [];
        for (let i = end - 1; i >= 0 && out.length < limit; i--) {
          const r = list[i]!;
          if (toLt !== null && r.lt <= BigInt(toLt)) break;
          out.push(r.json);
        }
        return ok(out);
      }
      case 'POST /sendBocReturnHash': {
        const { boc } = JSON.parse(body) as { boc: string };
        const cell = Cell.fromBase64(boc);
        const message = loadMessage(cell.beginParse());
        const hash = messageHash(message);
        try {
          await this.blockchain.sendMessage(message);
        } catch (e) {
          return [400, { ok: false, error: `cannot apply external message to current state: ${String((e as Error)?.message ?? e).split('\n')[0]}` }];
        }
        this.sync();
        return ok({ hash });
      }
      case 'POST /runGetMethod': {
        const r = JSON.parse(body) as { address: string; method: string; stack?: StackItem[] };
        const address = Address.parse(r.address);
        const c = await this.blockchain.getContract(address);
        if (c.accountState?.type !== 'active') return ok({ exit_code: -13, stack: [] });
        try {
          const res = await this.blockchain.runGetMethod(address, r.method, (r.stack ?? []).map(toTuple));
          return ok({ exit_code: res.exitCode, stack: res.stack.map(fromTuple) });
        } catch (e) {
          const code = (e as { exitCode?: number }).exitCode;
          return ok({ exit_code: typeof code === 'number' ? code : -1, stack: [] });
        }
      }
      default:
        return [404, { ok: false, error: 'not found' }];
    }
  }
}

function toTuple(s: StackItem): TupleItem {
  if (s.type === 'num') return { type: 'int', value: BigInt(s.value) };
  return { type: s.type, cell: Cell.fromBase64(s.value) };
}

function fromTuple(t: TupleItem): StackItem {
  switch (t.type) {
    case 'int':
      return { type: 'num', value: t.value.toString() };
    case 'cell':
    case 'slice':
      return { type: t.type, value: t.cell.toBoc().toString('base64') };
    case 'builder':
      return { type: 'cell', value: t.cell.toBoc().toString('base64') };
    default:
      return { type: 'num', value: '0' };
  }
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
