import { expect } from 'chai';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import type { ChainEndpoint, HistoryScanner, ObservedTransfer } from '@wcs/core';
import { fixtureReader, startReplayServer, testChain, type ReplayServer } from '@wcs/core/testing';
import { ChainRpcError, scanning } from '@wcs/core';
import { createXrpScanner, plugin } from './index';

/**
 * The scanner against recorded rippled responses (adapters/xrp/src/fixtures, sources in
 * SOURCE.md) replayed by a local HTTP server: no XRP node is reachable from the test
 * environment, and what is under test is the reading of real responses.
 */
const FIXTURES = fixtureReader(join(__dirname, '../src/fixtures'));
const fixture = (name: string): Record<string, unknown> => FIXTURES.json(name);
const fixtureText = FIXTURES.text;

/** A WebSocket response as the JSON-RPC API carries it: the same result, status inside it. */
function asJsonRpc(ws: Record<string, unknown>): string {
  return JSON.stringify({ result: { ...(ws.result as object), status: ws.status } });
}

/**
 * A recorded `tx` result (v1 shape: transaction fields, meta and validated side by side) as an
 * account_tx v1 entry ({meta, tx, validated}), inside an account_tx result for `account`.
 */
function accountTxOf(account: string, txResult: Record<string, unknown>): string {
  const { meta, validated, ...tx } = txResult;
  const ledger = tx.ledger_index as number;
  return JSON.stringify({
    result: { account, ledger_index_min: ledger, ledger_index_max: ledger, limit: 10, transactions: [{ meta, tx, validated }], validated: true, status: 'success' },
  });
}

interface Seen {
  readonly method: string;
  readonly params: Record<string, unknown>;
  readonly headers: IncomingHttpHeaders;
  readonly url: string;
}
type Reply = { status?: number; body: string; delayMs?: number };

class FakeRippled {
  readonly seen: Seen[] = [];
  private server: ReplayServer | undefined;
  constructor(private readonly answer: (req: Seen, n: number) => Reply) {}

  async start(): Promise<string> {
    this.server = await startReplayServer((req) => {
      const body = JSON.parse(req.body) as { method: string; params: Record<string, unknown>[] };
      const seen: Seen = { method: body.method, params: body.params[0]!, headers: req.headers, url: req.url };
      this.seen.push(seen);
      return this.answer(seen, this.seen.length);
    });
    return this.server.url;
  }

  async stop(): Promise<void> {
    await this.server?.close();
  }
}

const FAST = { attempts: 3, backoffMs: 1 };
const RLNAPO = 'rLNaPoKeeBjZe2qs6x52yVPZpZ8td4dc6w';
const R3PZ = 'r3pzYrVu7oruSJh1jhACmb6wRDkTWVw1JJ';

describe('xrp deposit scanner (recorded rippled responses)', () => {
  let node: FakeRippled | undefined;
  afterEach(async () => {
    await node?.stop();
    node = undefined;
  });

  async function scannerFor(answer: (req: Seen, n: number) => Reply, endpoint: Partial<ChainEndpoint> = {}): Promise<HistoryScanner> {
    node = new FakeRippled(answer);
    const url = await node.start();
    return createXrpScanner({ url, ...endpoint }, { retry: FAST });
  }

  it('reads the tip from a recorded `ledger` (validated) response', async () => {
    const scanner = await scannerFor(() => ({ body: fixtureText('rippled-ledger-validated.jsonrpc.json') }));
    expect(await scanner.tipHeight()).to.equal(100972465n);
    expect(node!.seen).to.have.length(1);
    expect(node!.seen[0]).to.deep.include({ method: 'ledger', params: { ledger_index: 'validated' } });
  });

  it('pages forward through recorded account_tx pages with rippled markers, without duplicates', async () => {
    const pages = new Map<string, string>([
      ['none', asJsonRpc(fixture('rippled-account_tx-rLNaPo-page1.ws.json'))],
      [JSON.stringify({ ledger: 57111981, seq: 16 }), fixtureText('rippled-account_tx-rLNaPo-page2.jsonrpc.json')],
      [JSON.stringify({ ledger: 57112007, seq: 13 }), fixtureText('rippled-account_tx-rLNaPo-v2.jsonrpc.json')],
    ]);
    const scanner = await scannerFor((req) => ({ body: pages.get(req.params.marker === undefined ? 'none' : JSON.stringify(req.params.marker))! }));

    const first = await scanner.transfersSince(RLNAPO, null, 2);
    expect(node!.seen[0]!.method).to.equal('account_tx');
    expect(node!.seen[0]!.params).to.deep.equal({ account: RLNAPO, ledger_index_min: -1, ledger_index_max: -1, binary: false, forward: true, limit: 2 });
    // The page also holds rLNaPo's own payment D58864C1… to r9dU6Z…: outgoing, not a deposit.
    expect(first.transfers).to.deep.equal([{
      txHash: '46BF0B576677B0DEA2D94591424A57A2DE8E3D89383631E16F40D09A513C656C',
      position: 0,
      fromAddress: 'rw2ciyaNshpHe7bCHo4bRWq6pqqynnWKQg',
      toAddress: RLNAPO,
      memo: '1',
      contract: null,
      amount: 19077487071n,
      blockHeight: 57111998n,
      blockHash: '57111998',
      succeeded: true,
    }]);

    const second = await scanner.transfersSince(RLNAPO, first.cursor, 2);
    expect(node!.seen[1]!.params).to.deep.include({ marker: { ledger: 57111981, seq: 16 }, ledger_index_min: 57111998, forward: true });
    // Outgoing 08EF5BDA… (to raLPjT…, tag 18240312) is ignored; the deposit tagged 1 is reported.
    expect(second.transfers.map(pick)).to.deep.equal([
      { txHash: '7C031FD5B710E3C048EEF31254089BEEC505900BCC9A842257A0319453333998', memo: '1', amount: 499500387n, blockHeight: 57112010n, position: 0, succeeded: true },
    ]);

    // API v2 page (tx_json, hash and ledger_hash beside it): TrustSets only, the cursor still moves on.
    const third = await scanner.transfersSince(RLNAPO, second.cursor, 2);
    expect(node!.seen[2]!.params).to.deep.include({ marker: { ledger: 57112007, seq: 13 }, ledger_index_min: 57112015 });
    expect(third.transfers).to.deep.equal([]);
    expect(JSON.parse(third.cursor!)).to.deep.equal({ v: 1, ledger: 98918111, index: 68, marker: { ledger: 98918099, seq: 20 } });

    const all = [...first.transfers, ...second.transfers, ...third.transfers].map((t) => `${t.txHash}:${t.position}`);
    expect(new Set(all).size).to.equal(all.length);
  });

  it('reports deposits with tag 0 and a real tag in ledger order, skips the account\'s own failed payment, and re-reads the last ledger without repeating', async () => {
    const page = asJsonRpc(fixture('rippled-account_tx-r3pz.ws.json'));
    const scanner = await scannerFor(() => ({ body: page }));
    const got = await scanner.transfersSince(R3PZ, null, 10);
    expect(got.transfers.map(pick)).to.deep.equal([
      { txHash: '7F47A8AE1A17EE6D7EF47E5732ED99F17D5514EEE29E5D77AD8AC56556B7390B', memo: '0', amount: 20000000n, blockHeight: 42594675n, position: 0, succeeded: true },
      { txHash: '198B475CFD2B0693966D684CD33C2950BFA235F25F68F78FB5797FF87B40E97F', memo: '4774246', amount: 212200n, blockHeight: 42935098n, position: 0, succeeded: true },
    ]);
    expect(got.transfers[0]!.fromAddress).to.equal('rfwPAYShmdM3BYeCwAN3kciKXuYG1XFiCp');
    expect(JSON.parse(got.cursor!)).to.deep.equal({ v: 1, ledger: 42935098, index: 0 });

    // No marker: the history ended; the next read starts at that ledger and skips what was seen.
    const again = await scanner.transfersSince(R3PZ, got.cursor, 10);
    expect(node!.seen[1]!.params).to.deep.include({ ledger_index_min: 42935098 });
    expect(node!.seen[1]!.params).to.not.have.property('marker');
    expect(again.transfers).to.deep.equal([]);
    expect(again.cursor).to.equal(got.cursor);
  });

  it('reports a failed payment (tecUNFUNDED_PAYMENT) to the address with succeeded false, its tag and requested amount', async () => {
    const page = asJsonRpc(fixture('rippled-account_tx-r3pz.ws.json'));
    const scanner = await scannerFor(() => ({ body: page }));
    const got = await scanner.transfersSince('r4EwBWxrx5HxYRyisfGzMto3AT8FZiYdWk', null, 10);
    expect(got.transfers).to.deep.equal([{
      txHash: 'D7D181E7F2BA66F5180806999EC105AF53D5108CF6EEBC4A5E5ABFB7A4268611',
      position: 0,
      fromAddress: R3PZ,
      toAddress: 'r4EwBWxrx5HxYRyisfGzMto3AT8FZiYdWk',
      memo: '855007911',
      contract: null,
      amount: 483480n,
      blockHeight: 42694215n,
      blockHash: '42694215',
      succeeded: false,
    }]);
  });

  it('credits a partial payment with meta.delivered_amount, not Amount, and no tag as memo null', async () => {
    const tx = fixture('xrpl-tx-partial-payment-2CE935CC.json');
    expect(tx.Amount).to.equal('100000000');
    const scanner = await scannerFor(() => ({ body: accountTxOf('rPdvC6ccq8hCdPKSPJkPmyZ4Mi1oG2FFkT', tx) }));
    const got = await scanner.transfersSince('rPdvC6ccq8hCdPKSPJkPmyZ4Mi1oG2FFkT', null, 10);
    expect(got.transfers).to.deep.equal([{
      txHash: '2CE935CC1FB07310E34DF373C95CE735FCB546577BA3C3E197F5F2CECAABB8B4',
      position: 0,
      fromAddress: 'rQHYSEyxX3GKK3F6sXRvdd2NHhUqaxtC6F',
      toAddress: 'rPdvC6ccq8hCdPKSPJkPmyZ4Mi1oG2FFkT',
      memo: null,
      contract: null,
      amount: 106294n,
      blockHeight: 63809286n,
      blockHash: '63809286',
      succeeded: true,
    }]);
    // The sender's view: its own payment is not a deposit.
    expect((await scanner.transfersSince('rQHYSEyxX3GKK3F6sXRvdd2NHhUqaxtC6F', null, 10)).transfers).to.deep.equal([]);
  });

  it('with outgoing: the address\'s own payments too (fromAddress the address, toAddress the Destination, its tag as memo)', async () => {
    const page = asJsonRpc(fixture('rippled-account_tx-rLNaPo-page1.ws.json'));
    const scanner = await scannerFor(() => ({ body: page }));
    const got = await scanner.transfersSince(RLNAPO, null, 10, { outgoing: true });
    expect(got.transfers.map((t) => [t.fromAddress, t.toAddress, t.amount, t.memo, t.succeeded])).to.deep.equal([
      [RLNAPO, 'r9dU6Z7P2i7MrDi1VUZ7uyq6J77eg86YtB', 550000000n, null, true],
      ['rw2ciyaNshpHe7bCHo4bRWq6pqqynnWKQg', RLNAPO, 19077487071n, '1', true],
    ]);
    expect(got.transfers[0]!.txHash).to.match(/^D58864C1/);
    expect(got.transfers[0]!.position).to.equal(0);

  });

  it('with outgoing: the address\'s own failed payment (tecUNFUNDED_PAYMENT) with succeeded false, its tag and requested amount', async () => {
    const r3pz = await scannerFor(() => ({ body: asJsonRpc(fixture('rippled-account_tx-r3pz.ws.json')) }));
    const out = (await r3pz.transfersSince(R3PZ, null, 10, { outgoing: true })).transfers.filter((t) => t.fromAddress === R3PZ);
    expect(out).to.deep.equal([{
      txHash: 'D7D181E7F2BA66F5180806999EC105AF53D5108CF6EEBC4A5E5ABFB7A4268611', position: 0, fromAddress: R3PZ,
      toAddress: 'r4EwBWxrx5HxYRyisfGzMto3AT8FZiYdWk', memo: '855007911', contract: null, amount: 483480n,
      blockHeight: 42694215n, blockHash: '42694215', succeeded: false,
    }]);
  });

  it('headCursor: the validated ledger, wholly read; nothing at or before it is reported', async () => {
    const scanner = await scannerFor((req) => ({
      body: req.method === 'ledger' ? fixtureText('rippled-ledger-validated.jsonrpc.json') : asJsonRpc(fixture('rippled-account_tx-rLNaPo-page1.ws.json')),
    }));
    const head = await scanner.headCursor!(RLNAPO);
    expect(JSON.parse(head!)).to.deep.equal({ v: 1, ledger: 100972465, index: Number.MAX_SAFE_INTEGER });
    // the node answers the recorded (older) page whatever is asked: every entry is before the head
    const got = await scanner.transfersSince(RLNAPO, head, 10, { outgoing: true });
    expect(node!.seen[1]!.params).to.deep.include({ ledger_index_min: 100972465 });
    expect(got.transfers).to.deep.equal([]);
    // the recorded page's marker is kept; the position read stays the head
    expect(JSON.parse(got.cursor!)).to.deep.include({ v: 1, ledger: 100972465, index: Number.MAX_SAFE_INTEGER });
    await scanner.headCursor!('not an address').then(() => expect.fail('accepted'), (e: unknown) => expect(e).to.be.instanceOf(TypeError));
  });

  it('treats actNotFound (an unfunded shared address) as no transfers and keeps the cursor', async () => {
    const scanner = await scannerFor(() => ({ body: fixtureText('rippled-error-actNotFound.jsonrpc.json') }));
    expect(await scanner.transfersSince('rKp7KgcYjdEQepQLc27ZHz76ukLwE4S1CN', null, 50)).to.deep.equal({ transfers: [], cursor: null });
    const cursor = JSON.stringify({ v: 1, ledger: 8629000, index: 3 });
    expect(await scanner.transfersSince('rKp7KgcYjdEQepQLc27ZHz76ukLwE4S1CN', cursor, 50)).to.deep.equal({ transfers: [], cursor });
    expect(node!.seen).to.have.length(2);
  });

  it('fails with RPC_ERROR on a node error, without retrying', async () => {
    const scanner = await scannerFor(() => ({ body: fixtureText('rippled-error-ledgerIndexMalformed.jsonrpc.json') }));
    const e = await scanner.transfersSince(RLNAPO, null, 10).then(() => null, (err: unknown) => err);
    expect(e).to.be.instanceOf(ChainRpcError).and.include({ errorName: 'RPC_ERROR' });
    expect((e as Error).message).to.contain('ledgerIndexMalformed');
    expect(node!.seen).to.have.length(1);
  });

  it('fails with RPC_UNAVAILABLE after the bounded retries on 5xx, and never shows credentials', async () => {
    const base = await (node = new FakeRippled(() => ({ status: 503, body: 'Service Unavailable' }))).start();
    const port = new URL(base).port;
    const secretScanner = createXrpScanner(
      { url: `http://alice:PASSWORD-123@127.0.0.1:${port}/v1/KEY-456?token=TOKEN-789`, headers: { 'x-api-key': 'HEADER-000' }, timeoutMs: 2000 },
      { retry: FAST },
    );
    const e = await secretScanner.transfersSince(RLNAPO, null, 10).then(() => null, (err: unknown) => err);
    expect(e).to.be.instanceOf(ChainRpcError).and.include({ errorName: 'RPC_UNAVAILABLE' });
    const message = (e as Error).message;
    expect(message).to.contain('HTTP 503').and.contain(`127.0.0.1:${port}`).and.contain('3 attempt');
    for (const secret of ['alice', 'PASSWORD-123', 'KEY-456', 'TOKEN-789', 'HEADER-000']) expect(message).to.not.contain(secret);
    expect(JSON.stringify(e)).to.not.match(/PASSWORD|KEY-456|TOKEN|HEADER-000/);
    expect(node.seen).to.have.length(3);
    // The credentials still reach the node: headers as configured, user info as Basic auth, path and query kept.
    expect(node.seen[0]!.headers['x-api-key']).to.equal('HEADER-000');
    expect(node.seen[0]!.headers.authorization).to.equal(`Basic ${Buffer.from('alice:PASSWORD-123').toString('base64')}`);
    expect(node.seen[0]!.url).to.equal('/v1/KEY-456?token=TOKEN-789');
  });

  it('retries a 429 and succeeds within the bound', async () => {
    const scanner = await scannerFor((_req, n) => (n < 3 ? { status: 429, body: '' } : { body: fixtureText('rippled-ledger-validated.jsonrpc.json') }));
    expect(await scanner.tipHeight()).to.equal(100972465n);
    expect(node!.seen).to.have.length(3);
  });

  it('honours endpoint.timeoutMs: a node that does not answer is RPC_UNAVAILABLE', async () => {
    const scanner = await scannerFor(() => ({ body: fixtureText('rippled-ledger-validated.jsonrpc.json'), delayMs: 400 }), { timeoutMs: 50 });
    const e = await scanner.tipHeight().then(() => null, (err: unknown) => err);
    expect(e).to.be.instanceOf(ChainRpcError).and.include({ errorName: 'RPC_UNAVAILABLE' });
    expect((e as Error).message).to.contain('no answer within 50 ms');
  });

  it('reports an unreachable node as RPC_UNAVAILABLE', async () => {
    const probe = new FakeRippled(() => ({ body: '' }));
    const url = await probe.start();
    await probe.stop();
    const e = await createXrpScanner({ url }, { retry: FAST }).tipHeight().then(() => null, (err: unknown) => err);
    expect(e).to.be.instanceOf(ChainRpcError).and.include({ errorName: 'RPC_UNAVAILABLE' });
    expect((e as Error).message).to.contain('connection failed');
  });

  it('refuses a cursor it did not write', async () => {
    const scanner = await scannerFor(() => ({ body: '{}' }));
    for (const bad of ['', 'abc', '{"v":2}', '{"v":1}', '{"v":1,"ledger":0,"index":0}']) {
      const e = await scanner.transfersSince(RLNAPO, bad, 10).then(() => null, (err: unknown) => err);
      expect(e, bad).to.be.instanceOf(TypeError);
    }
    expect(node!.seen).to.have.length(0);
  });

  it('is wired into the adapter as createScanner (history kind)', () => {
    const chain = testChain({ id: 6, code: 'XRP', name: 'XRP Ledger', family: 'xrp', environment: 'live', network: 'mainnet', nativeSymbol: 'XRP', decimals: 6, confirmations: 1 });
    const adapter = scanning(plugin.create(chain));
    expect(adapter.createScanner({ url: 'http://127.0.0.1:1/' }).kind).to.equal('history');
  });
});

function pick(t: ObservedTransfer) {
  return { txHash: t.txHash, memo: t.memo, amount: t.amount, blockHeight: t.blockHeight, position: t.position, succeeded: t.succeeded };
}
