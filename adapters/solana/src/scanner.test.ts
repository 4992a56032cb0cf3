import { strict as assert } from 'node:assert';
import type { HistoryScanner, ObservedTransfer } from '@wcs/core';
import path from 'node:path';
import { fixtureReader, startReplayServer, testChain, type Reply, type ReplayServer, type SeenRequest } from '@wcs/core/testing';
import { parseJsonExact, plugin } from './index';
import { ChainRpcError, scanning } from '@wcs/core';
import { createSolanaScanner, solanaAccountNature, solanaTransfersInTransaction, SYSTEM_PROGRAM_ID, type SolanaScannerOptions } from './scanner';

// Recorded responses in src/fixtures (read from dist); see src/fixtures/SOURCE.md for where each came from.
const fixture = fixtureReader(path.join(__dirname, '../src/fixtures')).json;

type Json = Record<string, any>;

// Recorded mainnet-beta responses (src/fixtures/SOURCE.md).
const SPL_SIG = '2S2rTZjaqzxYRw9mnqzwtyqitKtSsnE8GVqLn1KrD5R2YpXZnU4GdjppsgfSAbrzJfaqadfi8CtrqEBy588WVQ3E';
const SOL_SIG = '5QMfuqThWSMMpLCRe3tk7qn7iSwWKfJV8EvD1ZPvyqAWa7Z2JftZ4rPq8YCxCwzSykX7dMkDB8RrovQMoL9ZZWKY';
const FAILED_SIG = '5D3kshpCeGwhxBBPRQXmD48XvENJKXSwR79v6ceZBRAS41d2JeqMv3d2Yy9aZ1LADwQdDiop4ErRihnfYudfRJBy';
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const USDC_OWNER = '3i476kTBBTy7pBGx4CXwJpJ6phuwLQgcwLTdHhU3c7ui'; // receives 0.001 USDC in SPL_SIG
const USDC_ATA = 'H51DXRt3ubThhdhNeDMScfkbC5X4AWzYfHaZS3JKEfPh'; // its token account, created in SPL_SIG
const USDC_SENDER = '8fusVwhgo4oS1fGpZKeRaXrJXQk9auKnAgcj9A97wR3t';
const SOL_RECEIVER = '2b7iQq3PbWwWTotRSDFNXT9DauU418aCHK4jcAzETUem'; // receives 0.001 SOL in SOL_SIG
const SOL_SENDER = 'DT1mBDFsNBc1UXa25RdxNvnjL5Lro7su7gX1zpLyCmWe';
const FEE_PAYER = 'FG4Y3yX4AAchp1HvNZ7LfzFTewF2f6nDoMDCohTFrdpT'; // fee payer of SPL_SIG and SOL_SIG
const FAILED_RECEIVER = '7NcXXsn5MBUi3nfaE8VMJeZEUFnzcc9btHCFTHBoyrzG'; // inner transfer of the failed FAILED_SIG
const FAILED_SENDER = 'L9xDD9dUAcM8r5NHF6SJZRtd4FBpiDUJCbkKF2msWeL';
/** Where the test's node serves the recorded vines1 USDC token account (any address would do: the nature is read from the account). */
const VINES1_USDC_ACCOUNT = 'H51DXRt3ubThhdhNeDMScfkbC5X4AWzYfHaZS3JKEfPh';

/** The recorded getTransaction results, by signature. */
function recordedTransactions(): Map<string, Json> {
  const txs = new Map<string, Json>();
  txs.set(SPL_SIG, fixture<Json>('getTransaction.2S2rTZ.spl-usdc.json').result);
  txs.set(SOL_SIG, fixture<Json>('getTransaction.5QMfuq.sol.json').result);
  txs.set(FAILED_SIG, fixture<Json>('getTransaction.5D3ksh.failed.result.json')); // recorded without the JSON-RPC envelope
  return txs;
}

const keysOf = (tx: Json): string[] => tx.transaction.message.accountKeys.map((k: Json | string) => (typeof k === 'string' ? k : k.pubkey));

/**
 * A node replaying the recorded transactions. getSignaturesForAddress lists, newest first, the
 * recorded transactions whose account keys hold the address (what a node does), honouring limit,
 * before and until; the entry is the recorded one where one was recorded (SPL_SIG) and otherwise
 * made from the recorded transaction (slot, blockTime, err). getTokenAccountsByOwner answers the
 * recorded Token-program answer for USDC_OWNER and an empty list otherwise.
 */
function ledger(txs = recordedTransactions()) {
  const recordedEntries = new Map<string, Json>((fixture<Json>('getSignaturesForAddress.2S2rTZ.json').result as Json[]).map((e) => [e.signature, e]));
  const entryOf = (sig: string, tx: Json): Json => recordedEntries.get(sig)
    ?? { blockTime: tx.blockTime, confirmationStatus: 'finalized', err: tx.meta.err, memo: null, signature: sig, slot: tx.slot };
  const answer = (call: Json): Json => {
    const [a, b] = call.params ?? [];
    switch (call.method) {
      case 'getSlot':
        return { ...fixture<Json>('getSlot.docs-example.json'), id: call.id };
      case 'getTokenAccountsByOwner':
        if (a === USDC_OWNER && b.programId === 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA') return { ...fixture<Json>('getTokenAccountsByOwner.3i476k.json'), id: call.id };
        return { jsonrpc: '2.0', result: { context: { slot: 185442861 }, value: [] }, id: call.id };
      case 'getSignaturesForAddress': {
        let list = [...txs].filter(([, tx]) => keysOf(tx).includes(a)).sort(([, x], [, y]) => y.slot - x.slot).map(([sig, tx]) => entryOf(sig, tx));
        if (b?.before) list = list.slice(list.findIndex((e) => e.signature === b.before) + 1);
        if (b?.until) { const u = list.findIndex((e) => e.signature === b.until); if (u >= 0) list = list.slice(0, u); }
        return { jsonrpc: '2.0', result: list.slice(0, b?.limit ?? 1000), id: call.id };
      }
      case 'getTransaction':
        return { jsonrpc: '2.0', result: txs.get(a) ?? null, id: call.id };
      case 'getMultipleAccounts': {
        // assembled from the recorded getAccountInfo values: the USDC mint and the vines1 token account at their addresses, anything else the recorded null
        const recorded: Record<string, Json> = {
          [USDC]: fixture<Json>('getAccountInfo.usdc-mint.json').result.value,
          [VINES1_USDC_ACCOUNT]: fixture<Json>('getAccountInfo.usdc-token-account.vines1.json').result.value,
        };
        const value = (a as string[]).map((k) => recorded[k] ?? fixture<Json>('getAccountInfo.null.json').result.value);
        return { jsonrpc: '2.0', result: { context: { slot: 261686915 }, value }, id: call.id };
      }
      default:
        return { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: call.id };
    }
  };
  return (req: SeenRequest): Reply => {
    const body = JSON.parse(req.body);
    return { status: 200, body: JSON.stringify(Array.isArray(body) ? body.map(answer) : answer(body)) };
  };
}

const calls = (server: ReplayServer): Json[] => server.requests.flatMap((r) => {
  const b = JSON.parse(r.body);
  return Array.isArray(b) ? b : [b];
});

describe('Solana history scanner (recorded mainnet-beta responses)', function () {
  let server: ReplayServer;
  const scanner = (options: SolanaScannerOptions = {}): HistoryScanner => createSolanaScanner({ url: server.url, timeoutMs: 2000 }, { backoffMs: 0, ...options });

  describe('reading', () => {
    beforeEach(async () => { server = await startReplayServer(ledger()); });
    afterEach(async () => server.close());

    it('tipHeight is getSlot at finalized commitment', async () => {
      assert.equal(await scanner().tipHeight(), 1234n);
      assert.deepEqual(calls(server)[0]!.params, [{ commitment: 'finalized' }]);
    });

    it('a native SOL transfer (system transfer, outer instruction 0)', async () => {
      const got = await scanner().transfersSince(SOL_RECEIVER, null, 10);
      assert.deepEqual(got.transfers, [{
        txHash: SOL_SIG, position: 0, fromAddress: SOL_SENDER, toAddress: SOL_RECEIVER, memo: null, contract: null,
        amount: 1_000_000n, blockHeight: 185471096n, blockHash: '185471096', succeeded: true,
      } satisfies ObservedTransfer]);
      assert.equal(got.cursor, '185471096');
      const tx = calls(server).find((c) => c.method === 'getTransaction')!;
      assert.deepEqual(tx.params, [SOL_SIG, { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0, commitment: 'finalized' }]);
      for (const c of calls(server).filter((x) => x.method === 'getSignaturesForAddress')) assert.equal(c.params[1].commitment, 'finalized');
    });

    it('an SPL deposit from the owner\'s token balances, listed through owner and token account once', async () => {
      const got = await scanner().transfersSince(USDC_OWNER, null, 10);
      assert.deepEqual(got.transfers, [{
        txHash: SPL_SIG, position: 1_000_002, fromAddress: USDC_SENDER, toAddress: USDC_OWNER, memo: null, contract: USDC,
        amount: 1000n, blockHeight: 184930610n, blockHash: '184930610', succeeded: true,
      } satisfies ObservedTransfer]);
      assert.equal(got.cursor, '184930610');
      const listed = calls(server).filter((c) => c.method === 'getSignaturesForAddress').map((c) => c.params[0]);
      assert.deepEqual(listed, [USDC_OWNER, USDC_ATA]);
      assert.equal(calls(server).filter((c) => c.method === 'getTransaction').length, 1);
      const programs = calls(server).filter((c) => c.method === 'getTokenAccountsByOwner').map((c) => c.params[1].programId);
      assert.deepEqual(programs, ['TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb']);
    });

    it('a failed transaction: its inner SOL transfer is reported with succeeded false', async () => {
      const got = await scanner().transfersSince(FAILED_RECEIVER, null, 10);
      assert.deepEqual(got.transfers, [{
        txHash: FAILED_SIG, position: 1001, fromAddress: FAILED_SENDER, toAddress: FAILED_RECEIVER, memo: null, contract: null,
        amount: 199_000_000_000n, blockHeight: 124028515n, blockHash: '124028515', succeeded: false,
      } satisfies ObservedTransfer]);
    });

    it('outgoing transfers are not deposits', async () => {
      for (const [sender, slot] of [[USDC_SENDER, '184930610'], [SOL_SENDER, '185471096'], [FAILED_SENDER, '124028515']] as const) {
        const got = await scanner().transfersSince(sender, null, 10);
        assert.deepEqual(got.transfers, [], sender);
        assert.equal(got.cursor, slot);
      }
    });

    it('outgoing transfers when asked: native SOL from the source, SPL from the owner\'s falling balance, a failed one with succeeded false', async () => {
      const sol = await scanner().transfersSince(SOL_SENDER, null, 10, { outgoing: true });
      assert.deepEqual(sol.transfers, [{
        txHash: SOL_SIG, position: 0, fromAddress: SOL_SENDER, toAddress: SOL_RECEIVER, memo: null, contract: null,
        amount: 1_000_000n, blockHeight: 185471096n, blockHash: '185471096', succeeded: true,
      } satisfies ObservedTransfer]);
      // 5847 → 4847 in the sender's token account (index 3); the one other owner whose balance rose is the receiver
      const spl = await scanner().transfersSince(USDC_SENDER, null, 10, { outgoing: true });
      assert.deepEqual(spl.transfers, [{
        txHash: SPL_SIG, position: 1_000_003, fromAddress: USDC_SENDER, toAddress: USDC_OWNER, memo: null, contract: USDC,
        amount: 1000n, blockHeight: 184930610n, blockHash: '184930610', succeeded: true,
      } satisfies ObservedTransfer]);
      const failed = await scanner().transfersSince(FAILED_SENDER, null, 10, { outgoing: true });
      assert.deepEqual(failed.transfers, [{
        txHash: FAILED_SIG, position: 1001, fromAddress: FAILED_SENDER, toAddress: FAILED_RECEIVER, memo: null, contract: null,
        amount: 199_000_000_000n, blockHeight: 124028515n, blockHash: '124028515', succeeded: false,
      } satisfies ObservedTransfer]);
      // the receivers' reads are unchanged by the option: IN only
      const into = await scanner().transfersSince(USDC_OWNER, null, 10, { outgoing: true });
      assert.deepEqual(into.transfers.map((t) => [t.fromAddress, t.toAddress, t.amount]), [[USDC_SENDER, USDC_OWNER, 1000n]]);
    });

    it('a transfer from the address to itself is neither IN nor OUT', () => {
      const tx = fixture<Json>('getTransaction.5QMfuq.sol.json').result;
      tx.transaction.message.instructions[0].parsed.info.destination = SOL_SENDER; // the test's edit of the recorded transfer
      assert.deepEqual(solanaTransfersInTransaction(tx, SOL_SENDER, SOL_SIG, { outgoing: true }), []);
      assert.deepEqual(solanaTransfersInTransaction(tx, SOL_SENDER, SOL_SIG), []);
    });

    it('an SPL fall with no other owner rising (a burn) goes to ""', () => {
      const tx = fixture<Json>('getTransaction.2S2rTZ.spl-usdc.json').result;
      tx.meta.postTokenBalances = tx.meta.postTokenBalances.filter((b: Json) => b.owner !== USDC_OWNER); // the test's edit: nobody receives
      assert.deepEqual(solanaTransfersInTransaction(tx, USDC_SENDER, SPL_SIG, { outgoing: true }).map((t) => [t.toAddress, t.amount]), [['', 1000n]]);
    });

    it('headCursor is the finalized slot: a read from it sees nothing of the history before', async () => {
      const s = scanner();
      const head = await s.headCursor!(SOL_RECEIVER);
      assert.equal(head, '1234');
      assert.deepEqual(calls(server).at(-1)!.params, [{ commitment: 'finalized' }]);
      // the recorded transfers are in slots above 1234: a head above them hides them
      assert.deepEqual(await s.transfersSince(SOL_RECEIVER, '185471096', 10, { outgoing: true }), { transfers: [], cursor: '185471096' });
      await assert.rejects(s.headCursor!('not-an-address'), TypeError);
    });

    it('addressNatures: no account or a system-owned one is EOA; a program-owned account is CONTRACT (getMultipleAccounts, cached)', async () => {
      const s = scanner();
      const got = await s.addressNatures!([USDC, SOL_RECEIVER, VINES1_USDC_ACCOUNT, USDC]);
      assert.deepEqual(got, ['CONTRACT', 'EOA', 'CONTRACT', 'CONTRACT']);
      const asked = calls(server).filter((c) => c.method === 'getMultipleAccounts');
      assert.equal(asked.length, 1);
      assert.deepEqual(asked[0]!.params, [[USDC, SOL_RECEIVER, VINES1_USDC_ACCOUNT], { commitment: 'finalized', encoding: 'base64', dataSlice: { offset: 0, length: 0 } }]);
      assert.deepEqual(await s.addressNatures!([USDC, SOL_RECEIVER]), ['CONTRACT', 'EOA']);
      assert.equal(calls(server).filter((c) => c.method === 'getMultipleAccounts').length, 1);
    });

    it('pages signatures with before, continues from the cursor, never repeats a transaction', async () => {
      const s = scanner({ signaturePageSize: 1 });
      const first = await s.transfersSince(FEE_PAYER, null, 1);
      assert.deepEqual(first, { transfers: [], cursor: '184930610' });
      const befores = calls(server).filter((c) => c.method === 'getSignaturesForAddress').map((c) => c.params[1].before ?? null);
      assert.deepEqual(befores, [null, SOL_SIG, SPL_SIG]);
      const second = await s.transfersSince(FEE_PAYER, first.cursor, 1);
      assert.deepEqual(second, { transfers: [], cursor: '185471096' });
      const fetched = calls(server).filter((c) => c.method === 'getTransaction').map((c) => c.params[0]);
      assert.deepEqual(fetched, [SPL_SIG, SOL_SIG]);
      const n = server.requests.length;
      assert.deepEqual(await s.transfersSince(FEE_PAYER, second.cursor, 1), { transfers: [], cursor: '185471096' });
      assert.equal(calls(server).slice(n).filter((c) => c.method === 'getTransaction').length, 0);

      // The deposit read once is not read again from its cursor.
      const dep = await s.transfersSince(USDC_OWNER, null, 5);
      assert.equal(dep.transfers.length, 1);
      assert.deepEqual(await s.transfersSince(USDC_OWNER, dep.cursor, 5), { transfers: [], cursor: dep.cursor });
    });

    it('batches getTransaction requests', async () => {
      const got = await scanner({ batchSize: 2 }).transfersSince(FEE_PAYER, null, 10);
      assert.equal(got.cursor, '185471096');
      const batches = server.requests.map((r) => JSON.parse(r.body)).filter((b) => Array.isArray(b));
      assert.equal(batches.length, 1);
      assert.deepEqual(batches[0].map((c: Json) => c.params[0]), [SPL_SIG, SOL_SIG]);
    });

    it('nothing new: the same cursor and no transaction read', async () => {
      assert.deepEqual(await scanner().transfersSince(SOL_RECEIVER, '185471096', 10), { transfers: [], cursor: '185471096' });
      assert.deepEqual(await scanner().transfersSince('HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk', null, 10), { transfers: [], cursor: null });
      assert.equal(calls(server).filter((c) => c.method === 'getTransaction').length, 0);
    });

    it('refuses malformed arguments', async () => {
      await assert.rejects(scanner().transfersSince('not-an-address', null, 1), TypeError);
      await assert.rejects(scanner().transfersSince(SOL_RECEIVER, SOL_SIG, 1), TypeError);
      await assert.rejects(scanner().transfersSince(SOL_RECEIVER, null, 0), TypeError);
    });
  });

  describe('failures', () => {
    afterEach(async () => server?.close());

    it('a node error is RPC_ERROR, not retried (recorded error answer)', async () => {
      server = await startReplayServer(() => ({ status: 200, body: JSON.stringify(fixture('error.invalid-param.json')) }));
      const e = await scanner().tipHeight().then(() => null, (x: unknown) => x);
      assert.ok(e instanceof ChainRpcError);
      assert.equal(e.errorName, 'RPC_ERROR');
      assert.equal(e.rpcCode, -32602);
      assert.match(e.message, /getSlot failed: Invalid param: WrongSize \(JSON-RPC error -32602\)/);
      assert.equal(server.requests.length, 1);
    });

    it('HTTP 503 is retried a bounded number of times, then RPC_UNAVAILABLE', async () => {
      server = await startReplayServer(() => ({ status: 503, body: '{}' }));
      const e = await scanner({ attempts: 3 }).tipHeight().then(() => null, (x: unknown) => x);
      assert.ok(e instanceof ChainRpcError);
      assert.equal(e.errorName, 'RPC_UNAVAILABLE');
      assert.equal(e.responseStatus, 503);
      assert.equal(server.requests.length, 3);
    });

    it('429 and transient node errors are retried and then succeed', async () => {
      const replay = ledger();
      let n = 0;
      server = await startReplayServer((req) => {
        n++;
        if (n === 1) return { status: 429, body: '{"jsonrpc":"2.0","error":{"code":429,"message":"Too many requests"},"id":1}' };
        if (n === 2) return { status: 200, body: '{"jsonrpc":"2.0","error":{"code":-32005,"message":"Node is behind by 42 slots"},"id":1}' };
        return replay(req);
      });
      assert.equal(await scanner({ attempts: 3 }).tipHeight(), 1234n);
      assert.equal(server.requests.length, 3);
    });

    it('a timeout is RPC_UNAVAILABLE', async () => {
      server = await startReplayServer(() => 'hang');
      const s = createSolanaScanner({ url: server.url, timeoutMs: 100 }, { attempts: 2, backoffMs: 0 });
      const e = await s.tipHeight().then(() => null, (x: unknown) => x);
      assert.ok(e instanceof ChainRpcError);
      assert.equal(e.errorName, 'RPC_UNAVAILABLE');
      assert.match(e.message, /no answer within 100 ms/);
    });

    it('a refused connection is RPC_UNAVAILABLE', async () => {
      server = await startReplayServer(() => ({ status: 200, body: '{}' }));
      const url = server.url;
      await server.close();
      const e = await createSolanaScanner({ url }, { attempts: 2, backoffMs: 0 }).tipHeight().then(() => null, (x: unknown) => x);
      assert.ok(e instanceof ChainRpcError);
      assert.equal(e.errorName, 'RPC_UNAVAILABLE');
      assert.match(e.message, /ECONNREFUSED/);
    });

    it('a listed transaction the node does not return is RPC_ERROR (never skipped)', async () => {
      const txs = recordedTransactions();
      const replay = ledger(txs);
      server = await startReplayServer((req) => {
        const b = JSON.parse(req.body);
        if (!Array.isArray(b) && b.method === 'getTransaction') return { status: 200, body: JSON.stringify({ jsonrpc: '2.0', result: null, id: b.id }) };
        return replay(req);
      });
      const e = await scanner().transfersSince(SOL_RECEIVER, null, 10).then(() => null, (x: unknown) => x);
      assert.ok(e instanceof ChainRpcError);
      assert.equal(e.errorName, 'RPC_ERROR');
    });

    it('endpoint headers, user info, path and query are used but never appear in errors (scheme://host:port does)', async () => {
      server = await startReplayServer(() => ({ status: 503, body: 'upstream down' }));
      const url = server.url.replace('http://', 'http://alice:s3cr3t-pass@') + 'rpc/TOKEN-IN-PATH?api-key=SECRET-KEY-123';
      const s = createSolanaScanner({ url, headers: { 'x-api-key': 'HEADER-SECRET-456' }, timeoutMs: 1000 }, { attempts: 2, backoffMs: 0 });
      const e = await s.tipHeight().then(() => null, (x: unknown) => x);
      assert.ok(e instanceof ChainRpcError);
      const seen = server.requests[0]!;
      assert.equal(seen.url, '/rpc/TOKEN-IN-PATH?api-key=SECRET-KEY-123');
      assert.equal(seen.headers['x-api-key'], 'HEADER-SECRET-456');
      assert.equal(seen.headers.authorization, `Basic ${Buffer.from('alice:s3cr3t-pass').toString('base64')}`);
      const shown = [e.message, e.stack ?? '', JSON.stringify(e), String(e.cause ?? '')].join('\n');
      for (const secret of ['s3cr3t-pass', 'alice', 'SECRET-KEY-123', 'TOKEN-IN-PATH', 'HEADER-SECRET-456']) {
        assert.ok(!shown.includes(secret), `error text includes ${secret}`);
      }
    });

    it('a URL that is not http(s) is refused without repeating it', () => {
      assert.throws(() => createSolanaScanner({ url: 'ftp://user:pw@host/x' }), (e: Error) => e instanceof ChainRpcError && e.errorName === 'RPC_CONFIG' && !e.message.includes('pw'));
      assert.throws(() => createSolanaScanner({ url: 'not a url with SECRET' }), (e: Error) => !e.message.includes('SECRET'));
    });
  });

  describe('account natures', () => {
    // getMultipleAccounts entries made by the test in the node's shape (owner, executable, lamports)
    it('system-owned and not executable: EOA; executable or owned by a program: CONTRACT; absent: EOA', () => {
      assert.equal(solanaAccountNature({ owner: SYSTEM_PROGRAM_ID, executable: false, lamports: 1, data: ['', 'base64'] }), 'EOA');
      assert.equal(solanaAccountNature(null), 'EOA');
      assert.equal(solanaAccountNature({ owner: 'BPFLoaderUpgradeab1e11111111111111111111111', executable: true, lamports: 1 }), 'CONTRACT');
      assert.equal(solanaAccountNature(fixture<Json>('getAccountInfo.usdc-token-account.vines1.json').result.value), 'CONTRACT');
      assert.throws(() => solanaAccountNature({ lamports: 1 }), ChainRpcError);
    });
  });

  describe('parsing', () => {
    it('keeps u64 integers exact', () => {
      const v = parseJsonExact('{"lamports":18446744073709551615,"small":9007199254740991,"s":"12345678901234567890 \\"x\\"","f":1.5e20,"n":-9007199254740993}') as Json;
      assert.equal(v.lamports, '18446744073709551615');
      assert.equal(v.small, 9007199254740991);
      assert.equal(v.s, '12345678901234567890 "x"');
      assert.equal(v.f, 1.5e20);
      assert.equal(v.n, '-9007199254740993');
      const tx = fixture<Json>('getTransaction.5QMfuq.sol.json').result;
      tx.transaction.message.instructions[0].parsed.info.lamports = '18446744073709551615';
      assert.equal(solanaTransfersInTransaction(tx, SOL_RECEIVER)[0]!.amount, 18446744073709551615n);
    });
  });

  it('the adapter creates the scanner', () => {
    const chain = testChain({ id: 5, code: 'SOL', name: 'Solana', family: 'solana', environment: 'live', network: 'mainnet-beta', nativeSymbol: 'SOL', decimals: 9, confirmations: 32 });
    const adapter = plugin.create(chain);
    assert.equal(scanning(adapter).createScanner({ url: 'https://api.mainnet-beta.solana.com' }).kind, 'history');
  });
});
