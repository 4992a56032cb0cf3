import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import type { HistoryScanner, ObservedTransfer } from '@wcs/core';
import path from 'node:path';
import { fixtureReader, startReplayServer, testChain, type ReplayServer } from '@wcs/core/testing';
import { plugin } from './index';
import { ChainRpcError, scanning } from '@wcs/core';
import { createEosScanner, eosAccountNature, parseEosQuantity, type EosScannerOptions } from './scanner';
import { hyperion } from './scanner.test-helper';

// Recorded responses in src/fixtures (read from dist); see src/fixtures/SOURCE.md for where each came from.
const fixture = fixtureReader(path.join(__dirname, '../src/fixtures')).json;

type Json = Record<string, any>;

// Recorded Jungle 4 responses (src/fixtures/SOURCE.md): get_info at two moments, and a Hyperion
// answer holding one eosio.token transfer of 0.0100 EOS from crosschaino2 to crosschaino3.
const INFO_EARLY = 'get_info.jungle4.209671574.json'; // last irreversible block 209671572
const INFO_LATE = 'get_info.jungle4.209672971.json'; // last irreversible block 209672969
const RECORDED = fixture<Json>('hyperion.get_transaction.4c66c16b.json');
const REAL: Json = RECORDED.actions[0];
const REAL_TRX = '4c66c16b364ba919281b0388f3048ec04afec2b5ed5704bb2169772783d84cc3';
const REAL_BLOCK_ID = '0c7abd131d6352acdc395ef6585a0f567dd10d22fc39d34fc75e3d5c7e5cec10';
const RECEIVER = 'crosschaino3';
const SENDER = 'crosschaino2';
const MAX = '9223372036854775807';

/**
 * Test-made variants of the recorded action document: a copy of it with only the named fields
 * changed (and, for a new transaction, a made-up trx_id). One real transfer cannot show memos,
 * other tokens, inline actions or non-final blocks; these variants do, in the recorded shape.
 */
function variant(label: string, changes: { gs: number; block: number; ordinal?: number; trx?: string; account?: string; from?: string; to?: string; quantity?: string; memo?: string }): Json {
  const a = JSON.parse(JSON.stringify(REAL)) as Json;
  a.global_sequence = changes.gs;
  a.block_num = changes.block;
  a.block_id = createHash('sha256').update(`block:${changes.block}`).digest('hex');
  a.trx_id = changes.trx ?? createHash('sha256').update(`trx:${label}`).digest('hex');
  a.action_ordinal = changes.ordinal ?? 1;
  if (changes.account) a.act.account = changes.account;
  if (changes.from) a.act.data.from = changes.from;
  if (changes.to) a.act.data.to = changes.to;
  if (changes.quantity) a.act.data.quantity = changes.quantity;
  if (changes.memo !== undefined) a.act.data.memo = changes.memo;
  return a;
}

const MEMO = variant('memo', { gs: 279446600, block: 209370500, quantity: '1.2345 EOS', memo: '42' });
const MEMO_INLINE = variant('memo', { gs: 279446601, block: 209370500, ordinal: 2, quantity: '0.5000 EOS', memo: '43' });
const FAKE = variant('fake', { gs: 279446700, block: 209370600, account: 'faketoken111', quantity: '5.0000 EOS', memo: '42' });
const USDT = variant('usdt', { gs: 279446800, block: 209370700, account: 'tethertether', quantity: '12.3400 USDT', memo: '7' });
const OUTGOING = variant('out', { gs: 279446900, block: 209370800, from: RECEIVER, to: SENDER, memo: '' });
const NONFINAL = variant('late', { gs: 279447000, block: 209671573, quantity: '3.0000 EOS', memo: '44' }); // 1 above INFO_EARLY's LIB
const ALL = [REAL, MEMO, MEMO_INLINE, FAKE, USDT, OUTGOING, NONFINAL];

const expected = (a: Json, amount: bigint, contract: string | null, memo: string | null): ObservedTransfer => ({
  txHash: a.trx_id, position: a.action_ordinal, fromAddress: a.act.data.from, toAddress: RECEIVER, memo, contract, amount,
  blockHeight: BigInt(a.block_num), blockHash: a.block_id, succeeded: true,
});

describe('EOS history scanner (Hyperion, recorded Jungle 4 responses)', function () {
  let server: ReplayServer;
  const scanner = (options: EosScannerOptions = {}): HistoryScanner => createEosScanner({ url: server.url, timeoutMs: 2000 }, { backoffMs: 0, ...options });
  const actionQueries = () => server.requests.filter((r) => r.url.includes('/v2/history/get_actions')).map((r) => Object.fromEntries(new URL(r.url, 'http://x').searchParams));

  describe('reading', () => {
    afterEach(async () => server.close());

    it('tipHeight is the last irreversible block of get_info', async () => {
      server = await startReplayServer(hyperion({ info: INFO_EARLY, actions: [] }));
      assert.equal(await scanner().tipHeight(), 209671572n);
      assert.equal(server.requests[0]!.method, 'POST');
      assert.equal(server.requests[0]!.url, '/v1/chain/get_info');
    });

    it('the recorded eosio.token transfer: native EOS, empty memo as null, block id as hash', async () => {
      server = await startReplayServer(hyperion({ info: INFO_EARLY, actions: [REAL] }));
      const got = await scanner().transfersSince(RECEIVER, null, 100);
      assert.deepEqual(got.transfers, [{
        txHash: REAL_TRX, position: 1, fromAddress: SENDER, toAddress: RECEIVER, memo: null, contract: null,
        amount: 100n, blockHeight: 209370387n, blockHash: REAL_BLOCK_ID, succeeded: true,
      } satisfies ObservedTransfer]);
      assert.equal(got.cursor, '279446531');
      assert.deepEqual(actionQueries(), [{ account: RECEIVER, filter: '*:transfer', sort: 'asc', global_sequence: `0-${MAX}`, block_num: '0-209671572', limit: '100' }]);
    });

    it('the sender of the recorded transfer sees no deposit, and its cursor moves past it', async () => {
      server = await startReplayServer(hyperion({ info: INFO_EARLY, actions: [REAL] }));
      assert.deepEqual(await scanner().transfersSince(SENDER, null, 100), { transfers: [], cursor: '279446531' });
    });

    it('memos, inline actions, other contracts; outgoing ignored; nothing above the last irreversible block', async () => {
      const state = { info: INFO_EARLY, actions: ALL };
      server = await startReplayServer(hyperion(state));
      const s = scanner();
      const first = await s.transfersSince(RECEIVER, null, 100);
      assert.deepEqual(first.transfers, [
        expected(REAL, 100n, null, null),
        expected(MEMO, 12345n, null, '42'),
        expected(MEMO_INLINE, 5000n, null, '43'),
        // Same symbol, another contract: reported as its own contract, so the catalogue ignores it.
        expected(FAKE, 50000n, 'faketoken111:EOS', '42'),
        expected(USDT, 123400n, 'tethertether:USDT', '7'),
      ]);
      assert.equal(first.transfers[1]!.txHash, first.transfers[2]!.txHash);
      assert.equal(first.cursor, '279446900'); // the outgoing transfer was read too
      assert.deepEqual(await s.transfersSince(RECEIVER, first.cursor, 100), { transfers: [], cursor: '279446900' });
      assert.equal(actionQueries()[1]!.global_sequence, `279446901-${MAX}`);

      state.info = INFO_LATE; // the block became irreversible
      const later = await s.transfersSince(RECEIVER, first.cursor, 100);
      assert.deepEqual(later, { transfers: [expected(NONFINAL, 30000n, null, '44')], cursor: '279447000' });
      assert.equal(actionQueries()[2]!.block_num, '0-209672969');
    });

    it('with outgoing: the recorded transfer from the sender\'s side, and the receiver\'s own transfer out', async () => {
      server = await startReplayServer(hyperion({ info: INFO_EARLY, actions: ALL }));
      const sender = await scanner().transfersSince(SENDER, null, 100, { outgoing: true });
      // the sender sees REAL, MEMO, MEMO_INLINE, FAKE and USDT leave it (to RECEIVER), and OUTGOING arrive
      assert.deepEqual(sender.transfers.map((t) => [t.txHash.slice(0, 8), t.fromAddress, t.toAddress, t.amount, t.contract]), [
        [REAL_TRX.slice(0, 8), SENDER, RECEIVER, 100n, null],
        [MEMO.trx_id.slice(0, 8), SENDER, RECEIVER, 12345n, null],
        [MEMO_INLINE.trx_id.slice(0, 8), SENDER, RECEIVER, 5000n, null],
        [FAKE.trx_id.slice(0, 8), SENDER, RECEIVER, 50000n, 'faketoken111:EOS'],
        [USDT.trx_id.slice(0, 8), SENDER, RECEIVER, 123400n, 'tethertether:USDT'],
        [OUTGOING.trx_id.slice(0, 8), RECEIVER, SENDER, 100n, null],
      ]);
      assert.deepEqual(sender.transfers[0], { ...expected(REAL, 100n, null, null), fromAddress: SENDER, toAddress: RECEIVER });
      const receiver = await scanner().transfersSince(RECEIVER, null, 100, { outgoing: true });
      assert.deepEqual(receiver.transfers.at(-1), {
        txHash: OUTGOING.trx_id, position: 1, fromAddress: RECEIVER, toAddress: SENDER, memo: null, contract: null, amount: 100n,
        blockHeight: 209370800n, blockHash: OUTGOING.block_id, succeeded: true,
      } satisfies ObservedTransfer);
      assert.equal(receiver.transfers.length, 6);
    });

    it('headCursor: the global sequence of the account\'s newest transfer in an irreversible block; a read from it returns only what follows', async () => {
      const state = { info: INFO_EARLY, actions: ALL };
      server = await startReplayServer(hyperion(state));
      const s = scanner();
      // NONFINAL (gs 279447000) is one block above the early LIB: the head is OUTGOING's 279446900
      assert.equal(await s.headCursor!(RECEIVER), '279446900');
      assert.deepEqual(actionQueries()[0], { account: RECEIVER, filter: '*:transfer', sort: 'desc', block_num: '0-209671572', limit: '1' });
      assert.deepEqual(await s.transfersSince(RECEIVER, '279446900', 100, { outgoing: true }), { transfers: [], cursor: '279446900' });
      state.info = INFO_LATE;
      assert.deepEqual((await s.transfersSince(RECEIVER, '279446900', 100, { outgoing: true })).transfers, [expected(NONFINAL, 30000n, null, '44')]);
      assert.equal(await s.headCursor!(RECEIVER), '279447000');
      assert.equal(await s.headCursor!('nobodyhere11'), '0');
      await assert.rejects(s.headCursor!('Not.An.Account'), TypeError);
    });

    it('addressNatures from get_account: code set (eosio, recorded) is CONTRACT, never set (cordialsysaa, recorded) EOA; asked once', async () => {
      const replay = hyperion({ info: INFO_EARLY, actions: [] });
      const accounts: Record<string, string> = { eosio: 'get_account.eosio.cleos.json', cordialsysaa: 'get_account.jungle4.cordialsysaa.json' };
      server = await startReplayServer((req) => {
        if (req.url.endsWith('/v1/chain/get_account')) return { status: 200, body: JSON.stringify(fixture(accounts[JSON.parse(req.body).account_name]!)) };
        return replay(req);
      });
      const s = scanner();
      assert.deepEqual(await s.addressNatures!(['eosio', 'cordialsysaa', 'eosio']), ['CONTRACT', 'EOA', 'CONTRACT']);
      assert.deepEqual(await s.addressNatures!(['cordialsysaa', 'eosio']), ['EOA', 'CONTRACT']);
      assert.equal(server.requests.filter((r) => r.url.endsWith('/v1/chain/get_account')).length, 2);
      assert.throws(() => eosAccountNature({ account_name: 'x' }), ChainRpcError);
    });

    it('a node that ignores the block range still yields nothing above the last irreversible block', async () => {
      const state = { info: INFO_EARLY, actions: ALL, honourBlockRange: false };
      server = await startReplayServer(hyperion(state));
      const got = await scanner().transfersSince(RECEIVER, '279446800', 100);
      assert.deepEqual(got, { transfers: [], cursor: '279446900' });
      state.info = INFO_LATE;
      assert.equal((await scanner().transfersSince(RECEIVER, got.cursor, 100)).transfers.length, 1);
    });

    it('pages by limit from the cursor without repeating or skipping', async () => {
      server = await startReplayServer(hyperion({ info: INFO_LATE, actions: ALL }));
      const s = scanner();
      const seen: ObservedTransfer[] = [];
      let cursor: string | null = null;
      const cursors: (string | null)[] = [];
      for (let i = 0; i < 10; i++) {
        const got = await s.transfersSince(RECEIVER, cursor, 2);
        if (got.cursor === cursor) break;
        seen.push(...got.transfers);
        cursor = got.cursor;
        cursors.push(cursor);
      }
      assert.deepEqual(cursors, ['279446600', '279446700', '279446900', '279447000']);
      assert.deepEqual(seen.map((t) => `${t.txHash}:${t.position}`), [REAL, MEMO, MEMO_INLINE, FAKE, USDT, NONFINAL].map((a) => `${a.trx_id}:${a.action_ordinal}`));
    });

    it('refuses malformed arguments', async () => {
      server = await startReplayServer(hyperion({ info: INFO_EARLY, actions: [] }));
      await assert.rejects(scanner().transfersSince('Not.An.Account', null, 1), TypeError);
      await assert.rejects(scanner().transfersSince(RECEIVER, 'abc', 1), TypeError);
      await assert.rejects(scanner().transfersSince(RECEIVER, null, 0), TypeError);
      assert.equal(server.requests.length, 0);
    });
  });

  describe('failures', () => {
    afterEach(async () => server?.close());

    it('HTTP 5xx is retried a bounded number of times, then RPC_UNAVAILABLE', async () => {
      server = await startReplayServer(() => ({ status: 502, body: '<html>Bad Gateway</html>' }));
      const e = await scanner({ attempts: 3 }).tipHeight().then(() => null, (x: unknown) => x);
      assert.ok(e instanceof ChainRpcError);
      assert.equal(e.errorName, 'RPC_UNAVAILABLE');
      assert.equal(e.responseStatus, 502);
      assert.equal(server.requests.length, 3);
    });

    it('a refused request is RPC_ERROR with the node\'s message, not retried', async () => {
      // Hyperion's own wording for an unbounded ascending query (get_actions/functions.ts).
      const message = 'sort=asc requires a valid "after"/"before" (ISO date or block number) or a global_sequence/block_num range or value to bound the search';
      const replay = hyperion({ info: INFO_EARLY, actions: [] });
      server = await startReplayServer((req) => (req.url.includes('get_actions') ? { status: 400, body: JSON.stringify({ statusCode: 400, error: 'Bad Request', message }) } : replay(req)));
      const e = await scanner().transfersSince(RECEIVER, null, 10).then(() => null, (x: unknown) => x);
      assert.ok(e instanceof ChainRpcError);
      assert.equal(e.errorName, 'RPC_ERROR');
      assert.equal(e.message, `EOS API get_actions: HTTP 400: ${message}`);
      assert.equal(server.requests.filter((r) => r.url.includes('get_actions')).length, 1);
    });

    it('an answer that is not a history page is RPC_ERROR', async () => {
      const replay = hyperion({ info: INFO_EARLY, actions: [] });
      server = await startReplayServer((req) => (req.url.includes('get_actions') ? { status: 200, body: '{"query_time_ms":1}' } : replay(req)));
      const e = await scanner().transfersSince(RECEIVER, null, 10).then(() => null, (x: unknown) => x);
      assert.ok(e instanceof ChainRpcError);
      assert.equal(e.errorName, 'RPC_ERROR');
    });

    it('a timeout is RPC_UNAVAILABLE', async () => {
      server = await startReplayServer(() => 'hang');
      const e = await createEosScanner({ url: server.url, timeoutMs: 100 }, { attempts: 2, backoffMs: 0 }).tipHeight().then(() => null, (x: unknown) => x);
      assert.ok(e instanceof ChainRpcError);
      assert.equal(e.errorName, 'RPC_UNAVAILABLE');
      assert.match(e.message, /no answer within 100 ms/);
    });

    it('endpoint headers, user info, path and query are used but never appear in errors', async () => {
      const replay = hyperion({ info: INFO_EARLY, actions: [] });
      server = await startReplayServer((req) => (req.url.includes('get_actions')
        ? { status: 401, body: JSON.stringify({ statusCode: 401, message: 'api_key SECRET-KEY-123 is not valid for TOKEN-IN-PATH' }) }
        : replay(req)));
      const url = server.url.replace('http://', 'http://alice:s3cr3t-pass@') + 'TOKEN-IN-PATH/?api_key=SECRET-KEY-123';
      const s = createEosScanner({ url, headers: { 'X-Api-Key': 'HEADER-SECRET-456' } }, { backoffMs: 0 });
      const e = await s.transfersSince(RECEIVER, null, 10).then(() => null, (x: unknown) => x);
      assert.ok(e instanceof ChainRpcError);
      assert.equal(e.errorName, 'RPC_ERROR');
      const [info, actions] = server.requests;
      assert.equal(info!.url, '/TOKEN-IN-PATH/v1/chain/get_info?api_key=SECRET-KEY-123');
      assert.ok(actions!.url.startsWith('/TOKEN-IN-PATH/v2/history/get_actions?api_key=SECRET-KEY-123&account=crosschaino3'));
      assert.equal(actions!.headers['x-api-key'], 'HEADER-SECRET-456');
      assert.equal(actions!.headers.authorization, `Basic ${Buffer.from('alice:s3cr3t-pass').toString('base64')}`);
      const shown = [e.message, e.stack ?? '', JSON.stringify(e)].join('\n');
      for (const secret of ['s3cr3t-pass', 'alice', 'SECRET-KEY-123', 'TOKEN-IN-PATH', 'HEADER-SECRET-456', '127.0.0.1']) {
        assert.ok(!shown.includes(secret), `error text includes ${secret}`);
      }
      assert.match(e.message, /HTTP 401: api_key \*\*\* is not valid for \*\*\*/);
    });
  });

  describe('quantities', () => {
    it('reads base units exactly from the asset text', () => {
      assert.deepEqual(parseEosQuantity('1.2345 EOS'), { amount: 12345n, symbol: 'EOS', decimals: 4 });
      assert.deepEqual(parseEosQuantity('0.0100 EOS'), { amount: 100n, symbol: 'EOS', decimals: 4 });
      assert.deepEqual(parseEosQuantity('100 SYS'), { amount: 100n, symbol: 'SYS', decimals: 0 });
      assert.deepEqual(parseEosQuantity('461168601842738.7903 EOS'), { amount: 4611686018427387903n, symbol: 'EOS', decimals: 4 });
      assert.deepEqual(parseEosQuantity('0.00000001 BTC'), { amount: 1n, symbol: 'BTC', decimals: 8 });
      for (const bad of ['1.2345EOS', '-1.0000 EOS', '1.0000 eos', ' 1.0000 EOS', '1. EOS', '.5 EOS', '1.0000 TOOLONGS', 12345, null]) {
        assert.equal(parseEosQuantity(bad), null, String(bad));
      }
    });
  });

  it('the adapter creates the scanner', () => {
    const chain = testChain({ id: 108, code: 'EOS', name: 'EOS Jungle Testnet', family: 'eos', environment: 'test', network: 'jungle4', nativeSymbol: 'EOS', decimals: 4, confirmations: 1 });
    assert.equal(scanning(plugin.create(chain)).createScanner({ url: 'https://jungle4.cryptolions.io' }).kind, 'history');
  });
});
