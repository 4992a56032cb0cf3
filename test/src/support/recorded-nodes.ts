/**
 * Local HTTP servers that answer a deposit scanner's requests with recorded real RPC responses,
 * for e2e tests of chains whose nodes are not reachable from the test environment. The fixture
 * files are the adapters' own (adapters/<chain>/src/fixtures, provenance in their SOURCE.md),
 * read by path; what is served is the recorded text, or an envelope built from recorded records
 * where a function's comment says so. The routing follows the adapters' scanner tests.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';

type Json = Record<string, unknown>;

function fixtureDir(pkg: string): string {
  return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), 'src', 'fixtures');
}
export const XRP_FIXTURES = fixtureDir('@wcs/adapter-xrp');
export const STELLAR_FIXTURES = fixtureDir('@wcs/adapter-stellar');

export function fixtureText(dir: string, name: string): string {
  return readFileSync(path.join(dir, name), 'utf8');
}
export function fixtureJson<T = Json>(dir: string, name: string): T {
  return JSON.parse(fixtureText(dir, name)) as T;
}

export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly body: string;
  readonly at: number;
}
type Reply = { status: number; body: string };

/** A replay server: every request is recorded in `seen`. */
export class ReplayServer {
  readonly seen: SeenRequest[] = [];
  private server: Server | null = null;
  constructor(private readonly answer: (req: SeenRequest) => Reply) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const seen: SeenRequest = { method: req.method ?? '', url: req.url ?? '', body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
        this.seen.push(seen);
        let reply: Reply;
        try {
          reply = this.answer(seen);
        } catch (e) {
          reply = { status: 500, body: String(e) };
        }
        res.writeHead(reply.status, { 'content-type': 'application/json' });
        res.end(reply.body);
      });
    });
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return this.url;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/`;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
    this.server = null;
  }
}

// ---------------------------------------------------------------------------------------------
// XRP Ledger (rippled JSON-RPC)

/** The mainnet accounts of the recorded XRP data. */
export const XRP = {
  /** r3pz…: the recorded account_tx page (deposits tagged 0 and 4774246, its own failed payment). */
  R3PZ: 'r3pzYrVu7oruSJh1jhACmb6wRDkTWVw1JJ',
  /** r4Ew…: the destination (tag 855007911) of r3pz's failed payment (tecUNFUNDED_PAYMENT). */
  R4EW: 'r4EwBWxrx5HxYRyisfGzMto3AT8FZiYdWk',
  /** rPdv…: the recipient of the recorded partial payment 2CE935CC… (no DestinationTag). */
  RPDV: 'rPdvC6ccq8hCdPKSPJkPmyZ4Mi1oG2FFkT',
  /** The recorded validated ledger (`ledger` answer). */
  TIP: 100972465,
} as const;

export interface XrpAccountTxRequest {
  readonly account: string;
  readonly ledger_index_min: number;
  readonly marker?: unknown;
}

/**
 * A rippled JSON-RPC endpoint replaying recorded mainnet answers:
 * - `ledger` (validated): rippled-ledger-validated.jsonrpc.json as recorded (ledger 100972465).
 * - `account_tx` for r3pz: the recorded WebSocket page in its JSON-RPC form (status inside
 *   result), the adapter test's conversion; entries below ledger_index_min left out, as rippled
 *   does (the recorded page has no marker: it is the whole history).
 * - `account_tx` for r4Ew: test-made envelope around the recorded failed-payment entry
 *   D7D181E7… (r3pz → r4Ew, tag 855007911, tecUNFUNDED_PAYMENT), the page the adapter's own test
 *   serves for that account. The recording is r3pz's history; whether rippled lists a tec
 *   payment under a destination it did not change is not shown by it.
 * - `account_tx` for rPdv: the recorded partial payment `tx` result as an API v1 account_tx
 *   entry, as in the adapter test (SOURCE.md).
 * - any other account: the recorded actNotFound error (an unfunded account: no transfers).
 */
export function xrpReplay(): ReplayServer & { accountTx(): XrpAccountTxRequest[] } {
  const ledger = fixtureText(XRP_FIXTURES, 'rippled-ledger-validated.jsonrpc.json');
  const notFound = fixtureText(XRP_FIXTURES, 'rippled-error-actNotFound.jsonrpc.json');
  const r3pzWs = fixtureJson(XRP_FIXTURES, 'rippled-account_tx-r3pz.ws.json');
  const r3pz: Json = { ...(r3pzWs.result as Json), status: r3pzWs.status };
  const r3pzEntries = r3pz.transactions as Array<{ tx: Json; meta: Json; validated: boolean }>;
  const failedEntry = r3pzEntries.find((e) => e.tx.Destination === XRP.R4EW)!;
  const partial = fixtureJson(XRP_FIXTURES, 'xrpl-tx-partial-payment-2CE935CC.json');
  const { meta: pMeta, validated: pValidated, ...pTx } = partial;
  const pLedger = pTx.ledger_index as number;

  const ledgerOf = (e: { tx: Json }) => e.tx.ledger_index as number;
  const page = (account: string, entries: Array<{ tx: Json }>, min: number, base: Json) => JSON.stringify({
    result: { ...base, account, transactions: min < 0 ? entries : entries.filter((e) => ledgerOf(e) >= min) },
  });

  const server = new ReplayServer((req) => {
    const body = JSON.parse(req.body) as { method: string; params: Json[] };
    const p = body.params[0] ?? {};
    if (body.method === 'ledger') return { status: 200, body: ledger };
    if (body.method !== 'account_tx') return { status: 200, body: JSON.stringify({ result: { status: 'error', error: 'unknownCmd' } }) };
    const min = typeof p.ledger_index_min === 'number' ? p.ledger_index_min : -1;
    switch (p.account) {
      case XRP.R3PZ:
        return { status: 200, body: page(XRP.R3PZ, r3pzEntries, min, r3pz) };
      case XRP.R4EW:
        return {
          status: 200,
          body: page(XRP.R4EW, [failedEntry], min, { ledger_index_min: ledgerOf(failedEntry), ledger_index_max: XRP.TIP, limit: p.limit, validated: true, status: 'success' }),
        };
      case XRP.RPDV:
        return {
          status: 200,
          body: page(XRP.RPDV, [{ meta: pMeta, tx: pTx, validated: pValidated } as { tx: Json }], min, {
            ledger_index_min: pLedger, ledger_index_max: pLedger, limit: p.limit, validated: true, status: 'success',
          }),
        };
      default:
        return { status: 200, body: notFound };
    }
  });
  return Object.assign(server, {
    accountTx: () => server.seen
      .map((s) => JSON.parse(s.body) as { method: string; params: XrpAccountTxRequest[] })
      .filter((b) => b.method === 'account_tx')
      .map((b) => b.params[0]!),
  });
}

// ---------------------------------------------------------------------------------------------
// Stellar (Horizon REST)

export const STELLAR = {
  /** GAYOLL…: recipient of the recorded create_account (MEMO_TEXT "hello universe") and payment (no memo). */
  GAYOLL: 'GAYOLLLUIZE4DZMBB2ZBKGBUBZLIOYU6XFLW37GBP2VZD3ABNXCW4BVA',
  GBVFTZ: 'GBVFTZL5HIPT4PFQVTZVIWR77V7LWYCXU4CLYWWHHOEXB64XPG5LDMTU',
  /** The newest ledger of the served history (the memo-less payment c1cb850f…). */
  TIP: 27984467,
} as const;

const PAYMENT_TYPES = new Set(['create_account', 'payment', 'path_payment', 'path_payment_strict_receive', 'path_payment_strict_send', 'account_merge']);

/**
 * A Horizon replaying recorded pubnet records:
 * - GET /: horizon-root.json with `history_latest_ledger` (and `core_latest_ledger`) raised to
 *   27984467, the newest ledger of the payments served. Modified copy: the recorded root is a
 *   testnet root at ledger 84959, below the recorded pubnet payments; a Horizon never serves
 *   payments above its own latest ledger.
 * - GET /accounts/GAYOLL…/payments?join=transactions: GAYOLL's payment-type operations joined
 *   with their recorded transaction resources, built exactly as the adapter test builds it
 *   (SOURCE.md), served like Horizon: ascending, strictly after `cursor`, at most `limit`.
 * - any other account: the recorded 404 problem document (an account that does not exist).
 */
export function horizonReplay(): ReplayServer & { paymentRequests(account: string): URLSearchParams[] } {
  const root = { ...fixtureJson(STELLAR_FIXTURES, 'horizon-root.json'), history_latest_ledger: STELLAR.TIP, core_latest_ledger: STELLAR.TIP };
  const notFound = fixtureText(STELLAR_FIXTURES, 'horizon-not-found.json');
  const txs = new Map(fixtureJson<Json[]>(STELLAR_FIXTURES, 'horizon-account-transactions-GBVFTZ-excerpt.json').map((t) => [t.hash as string, t]));
  const ops = (fixtureJson(STELLAR_FIXTURES, 'horizon-account-operations-GAYOLL.json')._embedded as { records: Json[] }).records;
  const joined: Json[] = ops.filter((r) => PAYMENT_TYPES.has(r.type as string)).map((r) => ({ ...r, transaction: txs.get(r.transaction_hash as string)! }));

  const server = new ReplayServer((req) => {
    const u = new URL(req.url, 'http://localhost');
    if (u.pathname === '/') return { status: 200, body: JSON.stringify(root) };
    const m = /^\/accounts\/([A-Z0-9]+)\/payments$/.exec(u.pathname);
    if (!m) return { status: 404, body: notFound };
    if (m[1] !== STELLAR.GAYOLL) return { status: 404, body: notFound };
    const after = u.searchParams.get('cursor');
    const limit = Number(u.searchParams.get('limit') ?? '10');
    const records = joined.filter((r) => after === null || BigInt(r.paging_token as string) > BigInt(after)).slice(0, limit);
    return { status: 200, body: JSON.stringify({ _links: {}, _embedded: { records } }) };
  });
  return Object.assign(server, {
    paymentRequests: (account: string) => server.seen
      .map((s) => new URL(s.url, 'http://localhost'))
      .filter((u) => u.pathname === `/accounts/${account}/payments`)
      .map((u) => u.searchParams),
  });
}
