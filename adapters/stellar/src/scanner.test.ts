import { expect } from 'chai';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import type { ChainEndpoint, HistoryScanner } from '@wcs/core';
import { fixtureReader, startReplayServer, testChain, type ReplayServer } from '@wcs/core/testing';
import { ChainRpcError, scanning } from '@wcs/core';
import { createStellarScanner, decodeOperationId, memoOfTransaction, parsePaymentOperation, plugin } from './index';
import { joinedGayollPayments, pageAfter } from './scanner.test-helper';

/**
 * The scanner against recorded Horizon responses (adapters/stellar/src/fixtures, sources in
 * SOURCE.md) served by a local HTTP server: no Horizon is reachable from the test environment,
 * and what is under test is the reading of real responses.
 */
type Json = Record<string, unknown>;
const FIXTURES = fixtureReader(join(__dirname, '../src/fixtures'));
const fixture = <T = Json>(name: string): T => FIXTURES.json<T>(name);
const records = (page: Json): Json[] => (page._embedded as { records: Json[] }).records;

const GAYOLL = 'GAYOLLLUIZE4DZMBB2ZBKGBUBZLIOYU6XFLW37GBP2VZD3ABNXCW4BVA';
const GBVFTZ = 'GBVFTZL5HIPT4PFQVTZVIWR77V7LWYCXU4CLYWWHHOEXB64XPG5LDMTU';
const GCC3L = 'GCC3LGXHBZ6NSJOJCETNRRYTNDQJGCRC3P7YC2ZQ2ER3YWVJJQ2YDUL7';
const GD7PZ = 'GD7PZVW3WXKEWT4XQPV57K3DARCAQ5XZE5ZWFSDTGHBMQ4U7ZWYWZLPC';
const GCNL55 = 'GCNL55IJTH2HX26HLNIGYD2JIQLTBAQL3SVPNZA6PXK7NAVHU423WOTE';

interface Seen {
  readonly path: string;
  readonly query: URLSearchParams;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}
type Reply = { status?: number; body: unknown; delayMs?: number };

class FakeHorizon {
  readonly seen: Seen[] = [];
  private server: ReplayServer | undefined;
  constructor(private readonly answer: (req: Seen, n: number) => Reply) {}

  /** Serves a list of records like Horizon: ascending, strictly after `cursor`, at most `limit`. */
  static paging(list: readonly Json[]): (req: Seen) => Reply {
    return (req) => ({ body: { _links: {}, _embedded: { records: pageAfter(list, req.query) } } });
  }

  async start(prefix = ''): Promise<string> {
    this.server = await startReplayServer((req) => {
      const seen: Seen = { path: req.path, query: req.query, url: req.url, headers: req.headers };
      this.seen.push(seen);
      return { ...this.answer(seen, this.seen.length), contentType: 'application/hal+json' };
    });
    return this.server.url.replace(/\/$/, prefix);
  }

  async stop(): Promise<void> {
    await this.server?.close();
  }
}

const FAST = { attempts: 3, backoffMs: 1 };

describe('stellar deposit scanner (recorded Horizon responses)', () => {
  let horizon: FakeHorizon | undefined;
  afterEach(async () => {
    await horizon?.stop();
    horizon = undefined;
  });

  async function scannerFor(answer: (req: Seen, n: number) => Reply, endpoint: Partial<ChainEndpoint> = {}): Promise<HistoryScanner> {
    horizon = new FakeHorizon(answer);
    const url = await horizon.start();
    return createStellarScanner({ url, ...endpoint }, { retry: FAST });
  }

  it('reads the tip from the recorded Horizon root (history_latest_ledger)', async () => {
    const scanner = await scannerFor(() => ({ body: fixture('horizon-root.json') }));
    expect(await scanner.tipHeight()).to.equal(84959n);
    expect(horizon!.seen[0]!.path).to.equal('/');
  });

  it('reports a create_account with a MEMO_TEXT and a payment without memo, one page at a time, cursor = paging token', async () => {
    const scanner = await scannerFor(FakeHorizon.paging(joinedGayollPayments()));
    const first = await scanner.transfersSince(GAYOLL, null, 1);
    const q = horizon!.seen[0]!;
    expect(q.path).to.equal(`/accounts/${GAYOLL}/payments`);
    expect(Object.fromEntries(q.query)).to.deep.equal({ order: 'asc', limit: '1', join: 'transactions', include_failed: 'true' });
    expect(first).to.deep.equal({
      transfers: [{
        txHash: 'ef0fe04ac3c7de7228ca2598886059868ad05c224a041e8b2d9ee2a8a9dd6894',
        position: 0,
        fromAddress: GBVFTZ,
        toAddress: GAYOLL,
        memo: 'hello universe',
        contract: null,
        amount: 20000000n,
        blockHeight: 27984461n,
        blockHash: '27984461',
        succeeded: true,
      }],
      cursor: '120192344791343105',
    });

    const second = await scanner.transfersSince(GAYOLL, first.cursor, 1);
    expect(horizon!.seen[1]!.query.get('cursor')).to.equal('120192344791343105');
    expect(second).to.deep.equal({
      transfers: [{
        txHash: 'c1cb850f413e4038c4120bd9badc07bb8ef85a46649a4d5c9c16e578a2d30589',
        position: 0,
        fromAddress: GBVFTZ,
        toAddress: GAYOLL,
        memo: null,
        contract: null,
        amount: 2000000000n,
        blockHeight: 27984467n,
        blockHash: '27984467',
        succeeded: true,
      }],
      cursor: '120192370561220609',
    });

    const third = await scanner.transfersSince(GAYOLL, second.cursor, 1);
    expect(third).to.deep.equal({ transfers: [], cursor: '120192370561220609' });
  });

  it('with outgoing: the sender\'s side of the same payments, each with its destination and the transaction memo', async () => {
    const scanner = await scannerFor(FakeHorizon.paging(joinedGayollPayments()));
    const got = await scanner.transfersSince(GBVFTZ, null, 10, { outgoing: true });
    expect(got.transfers.map((t) => [t.txHash.slice(0, 8), t.fromAddress, t.toAddress, t.amount, t.memo, t.contract])).to.deep.equal([
      ['ef0fe04a', GBVFTZ, GAYOLL, 20000000n, 'hello universe', null],
      ['c1cb850f', GBVFTZ, GAYOLL, 2000000000n, null, null],
    ]);
    expect(got.cursor).to.equal('120192370561220609');
  });

  it('headCursor: the last position of the newest ingested ledger; addressNatures by StrKey kind', async () => {
    const scanner = await scannerFor(() => ({ body: fixture('horizon-root.json') }));
    const head = await scanner.headCursor!(GAYOLL);
    // history_latest_ledger 84959: every operation of ledgers up to it has a smaller id
    expect(head).to.equal((((84959n + 1n) << 32n) - 1n).toString());
    expect(BigInt(head!) >> 32n).to.equal(84959n);
    await scanner.headCursor!('not-an-account').then(() => expect.fail('accepted'), (e: unknown) => expect(e).to.be.instanceOf(TypeError));
    expect(await scanner.addressNatures!([GAYOLL, 'CA3D5KRYM6CB7OWQ6TWYRR3Z4T7GNZLKERYNZGGA5SOAOPIFY6YQGAXE'])).to.deep.equal(['EOA', 'CONTRACT']);
  });

  it('ignores the sender\'s side of the same payments but still moves its cursor', async () => {
    const scanner = await scannerFor(FakeHorizon.paging(joinedGayollPayments()));
    expect(await scanner.transfersSince(GBVFTZ, null, 10)).to.deep.equal({ transfers: [], cursor: '120192370561220609' });
  });

  it('reads a recorded joined path payment of a credit asset: CODE:ISSUER, exact amount, operation index 5, empty text memo as null', async () => {
    const page = fixture('horizon-operations-join-transactions.json');
    const scanner = await scannerFor(() => ({ body: page }));
    expect(await scanner.transfersSince(GCC3L, null, 10)).to.deep.equal({
      transfers: [{
        txHash: 'de8ca055af7972f817e9d3f7c7a0b480de82593bc378f0e48f83b8e31985e4e5',
        position: 5,
        fromAddress: GD7PZ,
        toAddress: GCC3L,
        memo: null,
        contract: 'USD:GBXGR3C3VKWAJCWLF7LX5TLS4KWQKPKJ4KUOJ6T6NEBROA62TTUUM6GD',
        amount: 100000000000n,
        blockHeight: 679846n,
        blockHash: '679846',
        succeeded: true,
      }],
      cursor: '2919916336320518',
    });
    expect((await scanner.transfersSince(GD7PZ, null, 10)).transfers).to.deep.equal([]);
  });

  it('reports a failed transaction with succeeded false (a recorded record with its success flags set to false)', async () => {
    // Modified copy: no recorded joined page with a failed payment was found, so the recorded
    // c1cb850f… payment is served with transaction_successful / successful set to false.
    const failed = joinedGayollPayments().map((r) => (r.type === 'payment'
      ? { ...r, transaction_successful: false, transaction: { ...(r.transaction as Json), successful: false } }
      : r));
    const scanner = await scannerFor(FakeHorizon.paging(failed));
    const got = await scanner.transfersSince(GAYOLL, null, 10);
    expect(got.transfers.map((t) => [t.txHash.slice(0, 8), t.succeeded, t.amount])).to.deep.equal([['ef0fe04a', true, 20000000n], ['c1cb850f', false, 2000000000n]]);
  });

  it('refuses a page whose records come without their transaction (the memo would be unknown)', async () => {
    const page = fixture('horizon-account-payments-GCNL55.json');
    const scanner = await scannerFor(() => ({ body: page }));
    const e = await scanner.transfersSince(GCNL55, null, 10).then(() => null, (err: unknown) => err);
    expect(e).to.be.instanceOf(ChainRpcError).and.include({ errorName: 'RPC_ERROR' });
    expect((e as Error).message).to.contain('join=transactions');
  });

  it('treats Horizon 404 (an account that does not exist yet) as no transfers, and an empty page as nothing new', async () => {
    const notFound = await scannerFor(() => ({ status: 404, body: fixture('horizon-not-found.json') }));
    expect(await notFound.transfersSince(GAYOLL, null, 10)).to.deep.equal({ transfers: [], cursor: null });
    expect(await notFound.transfersSince(GAYOLL, '120192370561220609', 10)).to.deep.equal({ transfers: [], cursor: '120192370561220609' });
    await horizon!.stop();
    const empty = await scannerFor(() => ({ body: fixture('horizon-empty-page.json') }));
    expect(await empty.transfersSince(GAYOLL, '661424967682', 10)).to.deep.equal({ transfers: [], cursor: '661424967682' });
    expect(await empty.transfersSince(GAYOLL, null, 10)).to.deep.equal({ transfers: [], cursor: null });
  });

  it('fails with RPC_UNAVAILABLE after the bounded retries on 5xx, keeps the base path and query, and never shows credentials', async () => {
    horizon = new FakeHorizon(() => ({ status: 502, body: 'Bad Gateway' }));
    const base = await horizon.start();
    const port = new URL(base).port;
    const scanner = createStellarScanner(
      { url: `http://bob:PASSWORD-123@127.0.0.1:${port}/v1/KEY-456?token=TOKEN-789`, headers: { authorization: 'Bearer HEADER-000' }, timeoutMs: 2000 },
      { retry: FAST },
    );
    const e = await scanner.transfersSince(GAYOLL, null, 10).then(() => null, (err: unknown) => err);
    expect(e).to.be.instanceOf(ChainRpcError).and.include({ errorName: 'RPC_UNAVAILABLE' });
    const message = (e as Error).message;
    expect(message).to.contain('HTTP 502').and.contain(`127.0.0.1:${port}`).and.contain('3 attempt');
    for (const secret of ['bob', 'PASSWORD-123', 'KEY-456', 'TOKEN-789', 'HEADER-000']) expect(message).to.not.contain(secret);
    expect(horizon.seen).to.have.length(3);
    expect(horizon.seen[0]!.path).to.equal(`/v1/KEY-456/accounts/${GAYOLL}/payments`);
    expect(horizon.seen[0]!.query.get('token')).to.equal('TOKEN-789');
    // A configured Authorization header wins over the URL's user info.
    expect(horizon.seen[0]!.headers.authorization).to.equal('Bearer HEADER-000');
  });

  it('honours endpoint.timeoutMs and recovers from a 503 within the bound', async () => {
    const slow = await scannerFor(() => ({ body: fixture('horizon-root.json'), delayMs: 400 }), { timeoutMs: 50 });
    const e = await slow.tipHeight().then(() => null, (err: unknown) => err);
    expect(e).to.be.instanceOf(ChainRpcError).and.include({ errorName: 'RPC_UNAVAILABLE' });
    expect((e as Error).message).to.contain('no answer within 50 ms');
    await horizon!.stop();
    const flaky = await scannerFor((_r, n) => (n === 1 ? { status: 503, body: '' } : { body: fixture('horizon-root.json') }));
    expect(await flaky.tipHeight()).to.equal(84959n);
    expect(horizon!.seen).to.have.length(2);
  });

  it('fails with RPC_ERROR, without retrying, when the root is missing', async () => {
    const scanner = await scannerFor(() => ({ status: 404, body: fixture('horizon-not-found.json') }));
    const e = await scanner.tipHeight().then(() => null, (err: unknown) => err);
    expect(e).to.be.instanceOf(ChainRpcError).and.include({ errorName: 'RPC_ERROR' });
    expect(horizon!.seen).to.have.length(1);
  });

  it('refuses a cursor that is not a paging token', async () => {
    const scanner = await scannerFor(() => ({ body: fixture('horizon-empty-page.json') }));
    for (const bad of ['', 'now', '-1', '0x10', '12 ']) {
      const e = await scanner.transfersSince(GAYOLL, bad, 10).then(() => null, (err: unknown) => err);
      expect(e, bad).to.be.instanceOf(TypeError);
    }
    expect(horizon!.seen).to.have.length(0);
  });

  it('is wired into the adapter as createScanner (history kind)', () => {
    const chain = testChain({ id: 7, code: 'XLM', name: 'Stellar', family: 'stellar', environment: 'live', network: 'pubnet', nativeSymbol: 'XLM', decimals: 7, confirmations: 1 });
    const adapter = scanning(plugin.create(chain));
    expect(adapter.createScanner({ url: 'http://127.0.0.1:1/' }).kind).to.equal('history');
  });
});

describe('stellar payment records (recorded Horizon records)', () => {
  const gcnl = records(fixture('horizon-account-payments-GCNL55.json'));
  const byId = (id: string) => gcnl.find((r) => r.id === id)!;

  it('reads create_account (starting_balance), payments (exact stroops, operation index from the id), and skips account_merge', () => {
    expect(parsePaymentOperation(byId('110694007436259329'), GCNL55)).to.deep.equal({
      txHash: '26c996aa6afb299b6761f2335277196715160ade6aa001a755116448b145d3a7', position: 0, ledger: 25772957n,
      fromAddress: 'GB44UMO65PK5NWMRP4S2OSZA5BD4ACOW5KQ6TWLLO2MP7S7N5MJ2MJVI', toAddress: GCNL55, contract: null, amount: 10000000n, succeeded: true, toMuxedId: null,
    });
    expect(parsePaymentOperation(byId('110694007436259330'), GCNL55)).to.equal(null);
    expect(parsePaymentOperation(byId('115354197276323841'), GCNL55)).to.deep.include({ amount: 6884065454n, position: 0, ledger: 26857992n });
    expect(parsePaymentOperation(byId('147350483860869151'), GCNL55)).to.deep.include({ amount: 1n, position: 30, ledger: 34307708n });
  });

  it('skips the address\'s own payment, which is a deposit (CODE:ISSUER) for its recipient', () => {
    expect(parsePaymentOperation(byId('119400713599217665'), GCNL55)).to.equal(null);
    expect(parsePaymentOperation(byId('119400713599217665'), 'GASWJWFRYE55KC7MGANZMMRBK5NPXT3HMPDQ6SEXZN6ZPWYXVVYBFRTE')).to.deep.include({
      contract: 'USD:GDUKMGUGDZQK6YHYA5Z6AY2G4XDSZPSZ3SW5UN3ARVMO6QSRDWP5YLEX', amount: 849410878n, fromAddress: GCNL55,
    });
  });

  it('with outgoing: the address\'s own payment, to its destination; a path payment by what left the sender (source_amount of the source asset)', () => {
    expect(parsePaymentOperation(byId('119400713599217665'), GCNL55, true)).to.deep.include({
      fromAddress: GCNL55, toAddress: 'GASWJWFRYE55KC7MGANZMMRBK5NPXT3HMPDQ6SEXZN6ZPWYXVVYBFRTE',
      contract: 'USD:GDUKMGUGDZQK6YHYA5Z6AY2G4XDSZPSZ3SW5UN3ARVMO6QSRDWP5YLEX', amount: 849410878n, position: 0,
    });
    // the incoming ones read the same with or without the option
    expect(parsePaymentOperation(byId('115354197276323841'), GCNL55, true)).to.deep.equal(parsePaymentOperation(byId('115354197276323841'), GCNL55));
    const path = records(fixture('horizon-operations-join-transactions.json'))[0]!;
    // the test's edit of the recorded record: the sender paid 9.9 XLM (source side) for the 10000 USD delivered
    const edited = { ...path, source_amount: '9.9000000', source_asset_type: 'native', source_asset_code: undefined, source_asset_issuer: undefined };
    expect(parsePaymentOperation(edited, GD7PZ, true)).to.deep.include({ fromAddress: GD7PZ, toAddress: GCC3L, contract: null, amount: 99000000n, position: 5 });
    expect(parsePaymentOperation(edited, GCC3L, true)).to.deep.include({ fromAddress: GD7PZ, toAddress: GCC3L, contract: 'USD:GBXGR3C3VKWAJCWLF7LX5TLS4KWQKPKJ4KUOJ6T6NEBROA62TTUUM6GD', amount: 100000000000n });
    expect(parsePaymentOperation(edited, GD7PZ)).to.equal(null);
  });

  it('skips operations that are not payments', () => {
    for (const r of records(fixture('horizon-account-operations-GAYOLL.json')).filter((x) => x.type === 'change_trust' || x.type === 'manage_buy_offer')) {
      expect(parsePaymentOperation(r, GAYOLL), r.id as string).to.equal(null);
    }
  });

  it('reads the muxed id of a payment to an M… address', () => {
    expect(parsePaymentOperation(fixture('horizon-payment-muxed-op.json'), 'GDQJVHV2EGSV2P7EETRKKY6VRFGIEP5MICKDWIR3ZWSJSYM7LAEXUIN6')).to.deep.equal({
      txHash: '015097334b0d70476831d819db2a07c003da336cdcd90e810885e062c3e908b2', position: 0, ledger: 2120670n,
      fromAddress: 'GDRNOJXOSJNN6XYO5WTFTOSDPJ2YHPWGTK76XIFWW4MITYVHXP2QMB6Y', toAddress: 'GDQJVHV2EGSV2P7EETRKKY6VRFGIEP5MICKDWIR3ZWSJSYM7LAEXUIN6', contract: null, amount: 3501234567n, succeeded: true, toMuxedId: '987654321',
    });
  });

  it('derives the operation index and ledger from the TOID, and refuses transaction ids', () => {
    expect(decodeOperationId('2919916336320518')).to.deep.equal({ ledger: 679846n, applicationOrder: 1, position: 5 });
    expect(decodeOperationId('120192344791343105')).to.deep.equal({ ledger: 27984461n, applicationOrder: 38, position: 0 });
    expect(() => decodeOperationId('120192344791343104')).to.throw(RangeError, /transaction id/);
    expect(() => decodeOperationId('-1')).to.throw(RangeError);
  });

  it('reads memos of recorded transaction resources: MEMO_ID, MEMO_TEXT, empty text and none', () => {
    const [text, none] = fixture<Json[]>('horizon-account-transactions-GBVFTZ-excerpt.json');
    expect(memoOfTransaction(fixture('horizon-transaction-memo-id-fragment.json'))).to.equal('2354354356');
    expect(memoOfTransaction(text!)).to.equal('hello universe');
    expect(memoOfTransaction(none!)).to.equal(null);
    const joined = records(fixture('horizon-operations-join-transactions.json'))[0]!.transaction as Json;
    expect(memoOfTransaction(joined)).to.equal(null);
  });
});
