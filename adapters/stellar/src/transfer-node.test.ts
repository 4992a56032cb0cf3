import { expect } from 'chai';
import { join } from 'node:path';
import { Account, Keypair, Networks, Operation, TransactionBuilder, type Transaction } from '@stellar/stellar-sdk';
import type { ChainEndpoint, SequenceTransferRequest, SignedTransaction, TransferInput, UnsignedTransfer } from '@wcs/core';
import { fixtureReader, rejected, startReplayServer, testChain, type ReplayServer, type Reply, type SeenRequest } from '@wcs/core/testing';
import { ChainRpcError, craftTransfer, paying, sequenceNode } from '@wcs/core';
import { StellarTransferNode, plugin, type StellarTransferNodeOptions } from './index';
import { hotKey, intent, request, type TestKey } from './transfer.test-helper';

/**
 * The Stellar transfer node against recorded Horizon responses (src/fixtures, sources in
 * SOURCE.md) replayed by a local HTTP server: no Horizon is reachable from the test environment.
 * What the test changes in a recorded answer is said where it does it.
 */
const FIXTURES = fixtureReader(join(__dirname, '../src/fixtures'));
type Json = Record<string, unknown>;
const fixture = (name: string): Json => FIXTURES.json(name);

const ACCOUNT = fixture('horizon-account-GAYOLL.json'); // 72.8563792 XLM, 5 subentries, EURT 3, USD 4
const GAYOLL = 'GAYOLLLUIZE4DZMBB2ZBKGBUBZLIOYU6XFLW37GBP2VZD3ABNXCW4BVA';
const FEE_STATS = fixture('horizon-fee-stats.json'); // last_ledger_base_fee 100, fee_charged p99 199
const LEDGER = fixture('horizon-ledger-27146933.json'); // base reserve 5000000, closed 2019-12-06T22:39:32Z
/** GET /ledgers?order=desc&limit=1 is a page: the recorded ledger record as its one record (wrapped, unchanged). */
const LEDGER_PAGE = { _embedded: { records: [LEDGER] } };
const NOT_FOUND = fixture('horizon-not-found.json');
const SUBMITTED = fixture('horizon-submit-success-8ef0c6d6.json'); // testnet, GCIHAQ… sequence 599336916353025
const TX_RECORD = fixture('horizon-transaction-5ebd5c0a.json'); // fee_charged 100 (a number), ledger 27963785
const TIMEOUT = fixture('horizon-timeout.json');
const BAD_SEQ = fixture('horizon-submit-tx-bad-seq.json');
const INSUFFICIENT_FEE = fixture('horizon-submit-tx-insufficient-fee.json');
const NO_SOURCE = fixture('horizon-submit-tx-no-source-account.json');
const OP_NO_DESTINATION = fixture('horizon-submit-tx-failed-op-no-destination.json');
const CLOSED_AT = 1575671972; // 2019-12-06T22:39:32Z

const FAST = { attempts: 3, backoffMs: 1 };

/** A signed transaction from a recorded base64 envelope, hashed on `passphrase`. */
function fromEnvelope(envelope: string, passphrase = Networks.TESTNET): SignedTransaction {
  const tx = TransactionBuilder.fromXDR(envelope, passphrase);
  return { txHash: tx.hash().toString('hex'), raw: Uint8Array.from(Buffer.from(envelope, 'base64')) };
}

/** A bump-sequence transaction of GAYOLL at `sequence`, signed by a throwaway key (Horizon's refusal is replayed, not computed). */
function gayollTransaction(sequence: bigint): SignedTransaction {
  const tx = new TransactionBuilder(new Account(GAYOLL, (sequence - 1n).toString()), { fee: '100', networkPassphrase: Networks.TESTNET, timebounds: { minTime: 0, maxTime: 1_900_000_000 } })
    .addOperation(Operation.bumpSequence({ bumpTo: '0' })).build();
  tx.sign(Keypair.random());
  return { txHash: tx.hash().toString('hex'), raw: Uint8Array.from(tx.toEnvelope().toXDR()) };
}

type Answer = Json | Reply | ((req: SeenRequest) => Json | Reply);

describe('StellarTransferNode (recorded Horizon responses)', () => {
  let server: ReplayServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  /** A node on a fake Horizon answering "METHOD /path" keys (the query is not part of the key). */
  async function nodeFor(routes: Record<string, Answer>, endpoint: Partial<ChainEndpoint> = {}, options: StellarTransferNodeOptions = {}, fallback?: (req: SeenRequest) => Answer | undefined) {
    server = await startReplayServer((req) => {
      const a = routes[`${req.method} ${req.path}`] ?? fallback?.(req);
      if (a === undefined) return { status: 404, body: NOT_FOUND };
      const v = typeof a === 'function' ? a(req) : a;
      return v === 'hang' || (typeof (v as Json).status === 'number' && 'body' in v) ? (v as Reply) : { body: v };
    });
    return new StellarTransferNode({ url: server.url, ...endpoint }, Networks.TESTNET, { retry: FAST, now: () => 0, ...options });
  }
  const seen = () => server!.requests.map((r) => `${r.method} ${r.url}`);

  describe('transferInput', () => {
    it('bids the highest recent fee (at least the base fee), times out 300 s after the latest ledger, and finds the destination', async () => {
      const node = await nodeFor({ 'GET /fee_stats': FEE_STATS, 'GET /ledgers': LEDGER_PAGE, [`GET /accounts/${GAYOLL}`]: ACCOUNT });
      const input = await node.transferInput(intent(hotKey(0), GAYOLL, 1n));
      expect(input).to.deep.equal({ baseFee: '199', minTime: '0', maxTime: String(CLOSED_AT + 300), destinationExists: true, ledger: 27146933 });
      expect(seen()).to.deep.equal(['GET /fee_stats', 'GET /ledgers?order=desc&limit=1', `GET /accounts/${GAYOLL}`]);
    });

    it('uses the local clock when it is ahead of the latest ledger, and says a missing destination does not exist', async () => {
      const node = await nodeFor({ 'GET /fee_stats': FEE_STATS, 'GET /ledgers': LEDGER_PAGE }, {}, { now: () => 1_767_225_600_123, txTimeoutSeconds: 60 });
      const input = await node.transferInput(intent(hotKey(0), hotKey(1).address, 1n));
      expect(input).to.deep.include({ maxTime: String(1_767_225_600 + 60), destinationExists: false });
    });

    it('checks the account of a muxed destination', async () => {
      const node = await nodeFor({ 'GET /fee_stats': FEE_STATS, 'GET /ledgers': LEDGER_PAGE, [`GET /accounts/${GAYOLL}`]: ACCOUNT });
      const { StrKey } = await import('@stellar/stellar-sdk');
      const muxed = StrKey.encodeMed25519PublicKey(Buffer.concat([StrKey.decodeEd25519PublicKey(GAYOLL), Buffer.alloc(8, 7)]));
      expect((await node.transferInput(intent(hotKey(0), muxed, 1n))).destinationExists).to.equal(true);
    });

    it('caps a surge bid at maxBaseFee (test-made: the recorded max_fee percentiles served as fee_charged)', async () => {
      const surge = { ...FEE_STATS, fee_charged: FEE_STATS.max_fee };
      let node = await nodeFor({ 'GET /fee_stats': surge, 'GET /ledgers': LEDGER_PAGE });
      expect((await node.transferInput(intent(hotKey(0), GAYOLL, 1n))).baseFee).to.equal('8000');
      await server!.close();
      node = await nodeFor({ 'GET /fee_stats': surge, 'GET /ledgers': LEDGER_PAGE }, {}, { maxBaseFee: 1000n });
      expect((await node.transferInput(intent(hotKey(0), GAYOLL, 1n))).baseFee).to.equal('1000');
    });
  });

  describe('nextSequence and balance', () => {
    it('nextSequence is the account\'s sequence + 1; a missing account is RPC_ERROR', async () => {
      let node = await nodeFor({ [`GET /accounts/${GAYOLL}`]: ACCOUNT });
      expect(await node.nextSequence(GAYOLL)).to.equal(120192344791187471n);
      await server!.close();
      node = await nodeFor({});
      const e = await rejected(node.nextSequence(GAYOLL), ChainRpcError);
      expect(e.errorName).to.equal('RPC_ERROR');
      expect(e.message).to.match(/does not exist/);
    });

    it('XLM: balance − selling liabilities − (2 + subentries + sponsoring − sponsored) × base reserve', async () => {
      const node = await nodeFor({ [`GET /accounts/${GAYOLL}`]: ACCOUNT, 'GET /ledgers': LEDGER_PAGE });
      // 72.8563792 XLM − (2 + 5) × 0.5 XLM
      expect(await node.balance(GAYOLL, null)).to.equal(728_563_792n - 35_000_000n);
    });

    it('credit assets: the trustline\'s balance; 0 without one; 0 for a missing account', async () => {
      let node = await nodeFor({ [`GET /accounts/${GAYOLL}`]: ACCOUNT });
      expect(await node.balance(GAYOLL, 'EURT:GAP5LETOV6YIE62YAM56STDANPRDO7ZFDBGSNHJQIYGGKSMOZAHOOS2S')).to.equal(30_000_000n);
      expect(await node.balance(GAYOLL, 'USD:GDUKMGUGDZQK6YHYA5Z6AY2G4XDSZPSZ3SW5UN3ARVMO6QSRDWP5YLEX')).to.equal(40_000_000n);
      expect(await node.balance(GAYOLL, 'USDC:GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN')).to.equal(0n);
      await rejected(node.balance(GAYOLL, 'USD-GDUKMGUGDZQK6YHYA5Z6AY2G4XDSZPSZ3SW5UN3ARVMO6QSRDWP5YLEX'), TypeError);
      await server!.close();
      node = await nodeFor({});
      expect(await node.balance(GAYOLL, null)).to.equal(0n);
    });

    it('receivable: a credit asset needs the account and an authorized trustline to it; XLM needs nothing (recorded account, 404)', async () => {
      let node = await nodeFor({ [`GET /accounts/${GAYOLL}`]: ACCOUNT });
      expect(await node.receivable(GAYOLL, 'USD:GDUKMGUGDZQK6YHYA5Z6AY2G4XDSZPSZ3SW5UN3ARVMO6QSRDWP5YLEX')).to.deep.equal({ ok: true });
      expect(await node.receivable(GAYOLL, null)).to.deep.equal({ ok: true });
      const usdc = await node.receivable(GAYOLL, 'USDC:GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN');
      expect(usdc).to.deep.include({ ok: false, reason: 'NO_TRUSTLINE' });
      expect((usdc as { message: string }).message).to.match(/no trustline to USDC:GA5Z/);
      await server!.close();
      // TEST-MADE from the recorded account: the USD trustline's is_authorized set to false
      const unauthorized = { ...ACCOUNT, balances: (ACCOUNT.balances as Json[]).map((b) => (b.asset_code === 'USD' ? { ...b, is_authorized: false } : b)) };
      node = await nodeFor({ [`GET /accounts/${GAYOLL}`]: unauthorized });
      expect(await node.receivable(GAYOLL, 'USD:GDUKMGUGDZQK6YHYA5Z6AY2G4XDSZPSZ3SW5UN3ARVMO6QSRDWP5YLEX')).to.deep.include({ ok: false, reason: 'NOT_AUTHORIZED' });
      await server!.close();
      node = await nodeFor({});
      expect(await node.receivable(GAYOLL, 'USD:GDUKMGUGDZQK6YHYA5Z6AY2G4XDSZPSZ3SW5UN3ARVMO6QSRDWP5YLEX')).to.deep.include({ ok: false, reason: 'NO_ACCOUNT' });
      expect(await node.receivable(GAYOLL, null), 'XLM to a missing account is a CreateAccount').to.deep.equal({ ok: true });
    });

    it('is RPC_UNAVAILABLE after the bounded retries on 5xx (test-made), never showing credentials', async () => {
      await nodeFor({ [`GET /KEY-456/accounts/${GAYOLL}`]: { status: 503, body: 'Service Unavailable' } });
      const url = server!.url.replace('http://', 'http://alice:PASSWORD-123@') + 'KEY-456';
      const node = new StellarTransferNode({ url, headers: { 'x-api-key': 'HEADER-000' } }, Networks.TESTNET, { retry: FAST });
      const e = await rejected(node.balance(GAYOLL, null), ChainRpcError);
      expect(e.errorName).to.equal('RPC_UNAVAILABLE');
      expect(e.message).to.contain('HTTP 503').and.contain('3 attempt').and.not.contain('PASSWORD').and.not.contain('KEY-456').and.not.contain('HEADER');
      expect(server!.requests.map((r) => r.url)).to.deep.equal(Array(3).fill(`/KEY-456/accounts/${GAYOLL}`));
      expect(server!.requests[0]!.headers.authorization).to.equal(`Basic ${Buffer.from('alice:PASSWORD-123').toString('base64')}`);
    });
  });

  describe('broadcast', () => {
    it('POSTs the envelope as a form and is ACCEPTED with Horizon\'s transaction', async () => {
      const node = await nodeFor({ 'POST /transactions': SUBMITTED });
      const tx = fromEnvelope(SUBMITTED.envelope_xdr as string);
      expect(tx.txHash).to.equal(SUBMITTED.hash);
      expect(await node.broadcast(tx)).to.deep.equal({ outcome: 'ACCEPTED', txHash: SUBMITTED.hash });
      const [post] = server!.requests;
      expect(post!.headers['content-type']).to.equal('application/x-www-form-urlencoded');
      expect(new URLSearchParams(post!.body).get('tx')).to.equal(SUBMITTED.envelope_xdr);
      expect(server!.requests).to.have.length(1);
    });

    it('REJECTED with Horizon\'s result codes when the transaction is not in a ledger', async () => {
      const cases: Array<[Json, string]> = [
        [INSUFFICIENT_FEE, 'tx_insufficient_fee'], // fee 10 stroops: below the network minimum, never valid
        [NO_SOURCE, 'tx_no_source_account'],
        [OP_NO_DESTINATION, 'tx_failed (op_no_destination)'],
      ];
      for (const [answer, reason] of cases) {
        const tx = fromEnvelope((answer.extras as Json).envelope_xdr as string);
        const node = await nodeFor({ 'POST /transactions': { status: 400, body: answer } });
        expect(await node.broadcast(tx), reason).to.deep.equal({ outcome: 'REJECTED', reason });
        expect(seen(), reason).to.deep.equal(['POST /transactions', `GET /transactions/${tx.txHash}`]);
        await server!.close();
      }
    });

    it('tx_bad_seq: ALREADY_KNOWN when Horizon has this very transaction in a ledger', async () => {
      const tx = fromEnvelope(SUBMITTED.envelope_xdr as string);
      // GET /transactions/{hash} answers the same transaction resource POST /transactions did
      const node = await nodeFor({ 'POST /transactions': { status: 400, body: BAD_SEQ }, [`GET /transactions/${tx.txHash}`]: SUBMITTED });
      expect(await node.broadcast(tx)).to.deep.equal({ outcome: 'ALREADY_KNOWN', txHash: tx.txHash });
    });

    it('tx_bad_seq of an unknown transaction: REJECTED behind the account\'s sequence, RPC_TRY_LATER ahead of it (a gap)', async () => {
      let node = await nodeFor({ 'POST /transactions': { status: 400, body: BAD_SEQ }, [`GET /accounts/${GAYOLL}`]: ACCOUNT });
      // the account's sequence is 120192344791187470: the next valid one is …471
      expect(await node.broadcast(gayollTransaction(120192344791187470n))).to.deep.equal({ outcome: 'REJECTED', reason: 'tx_bad_seq' });
      expect(await node.broadcast(gayollTransaction(120192344791187471n))).to.deep.equal({ outcome: 'REJECTED', reason: 'tx_bad_seq' });
      const e = await rejected(node.broadcast(gayollTransaction(120192344791187473n)), ChainRpcError);
      expect(e).to.include({ errorName: 'RPC_TRY_LATER', nodeCode: 'tx_bad_seq' });
      await server!.close();
      node = await nodeFor({ 'POST /transactions': { status: 400, body: INSUFFICIENT_FEE } });
      // at least the network minimum per operation: the surge price, not the transaction, is the problem
      expect(await rejected(node.broadcast(gayollTransaction(120192344791187471n)), ChainRpcError)).to.include({ errorName: 'RPC_TRY_LATER', nodeCode: 'tx_insufficient_fee' });
    });

    it('504 (Horizon stopped waiting for the ledger) throws RPC_UNAVAILABLE after one POST; so does a Horizon that never answers', async () => {
      let node = await nodeFor({ 'POST /transactions': { status: 504, body: TIMEOUT } });
      const e = await rejected(node.broadcast(fromEnvelope(SUBMITTED.envelope_xdr as string)), ChainRpcError);
      expect(e.errorName).to.equal('RPC_UNAVAILABLE');
      expect(e.message).to.match(/may still be included/);
      expect(server!.requests).to.have.length(1);
      await server!.close();
      node = await nodeFor({ 'POST /transactions': 'hang' }, { timeoutMs: 100 });
      expect(await rejected(node.broadcast(fromEnvelope(SUBMITTED.envelope_xdr as string)), ChainRpcError)).to.include({ errorName: 'RPC_UNAVAILABLE' });
    });

    it('refuses an envelope of another network or with another hash before sending it, and RPC_ERROR for an answer about another transaction', async () => {
      let node = await nodeFor({ 'POST /transactions': TX_RECORD });
      const tx = fromEnvelope(SUBMITTED.envelope_xdr as string);
      await rejected(node.broadcast(fromEnvelope(SUBMITTED.envelope_xdr as string, Networks.PUBLIC)), TypeError);
      await rejected(node.broadcast({ ...tx, txHash: TX_RECORD.hash as string }), TypeError);
      expect(server!.requests).to.have.length(0);
      expect(await rejected(node.broadcast(tx), ChainRpcError)).to.include({ errorName: 'RPC_ERROR' });
      await server!.close();
      node = await nodeFor({});
      await rejected(node.broadcast({ txHash: '00'.repeat(32), raw: Uint8Array.from([1, 2, 3]) }), TypeError);
    });
  });

  describe('status', () => {
    it('MINED with the ledger, successful and fee_charged (a number in older Horizon, a string in newer)', async () => {
      const node = await nodeFor({ [`GET /transactions/${TX_RECORD.hash}`]: TX_RECORD, [`GET /transactions/${SUBMITTED.hash}`]: SUBMITTED }, {}, { confirmations: 2 });
      expect(await node.status((TX_RECORD.hash as string).toUpperCase())).to.deep.equal({ state: 'MINED', blockHeight: 27963785n, blockHash: '27963785', confirmations: 2, succeeded: true, fee: 100n });
      expect(await node.status(SUBMITTED.hash as string)).to.deep.equal({ state: 'MINED', blockHeight: 139575n, blockHash: '139575', confirmations: 2, succeeded: true, fee: 100n });
    });

    it('MINED and not succeeded for a failed transaction (test-made: the recorded record with successful false)', async () => {
      const node = await nodeFor({ [`GET /transactions/${TX_RECORD.hash}`]: { ...TX_RECORD, successful: false } });
      expect(await node.status(TX_RECORD.hash as string)).to.deep.include({ state: 'MINED', succeeded: false, fee: 100n });
    });

    it('UNKNOWN on 404; RPC_ERROR for a record of another transaction', async () => {
      const node = await nodeFor({ [`GET /transactions/${SUBMITTED.hash}`]: TX_RECORD });
      expect(await node.status(TX_RECORD.hash as string)).to.deep.equal({ state: 'UNKNOWN' });
      expect(await rejected(node.status(SUBMITTED.hash as string), ChainRpcError)).to.include({ errorName: 'RPC_ERROR' });
    });
  });

  describe('end to end: craft on the node\'s input, sign, combine, broadcast, status', () => {
    const chain = testChain({ id: 107, code: 'XLM', name: 'Stellar Testnet', family: 'stellar', environment: 'test', network: 'testnet', nativeSymbol: 'XLM', decimals: 7, confirmations: 1 });
    const adapter = paying(plugin.create(chain));
    const hot: TestKey = hotKey(0);

    /** The adapter's crafting as the service reaches it (craftTransfer): a sequence chain answers a transaction. */
    function craft(request: SequenceTransferRequest, input: TransferInput): UnsignedTransfer {
      const result = craftTransfer(adapter, { spendModel: 'sequence', request }, input);
      if (!result.ok) expect.fail(`Stellar crafting answered ${result.reason}`);
      return result.unsigned;
    }

    it('pays with the fee and time bounds the node read, at the allocated sequence; ACCEPTED, ALREADY_KNOWN on a re-send, then MINED', async () => {
      let envelope = '';
      let ourHash = '';
      let posts = 0;
      /** A recorded transaction resource as Horizon serves the transaction actually sent: hash, id and envelope_xdr replaced by its own. */
      const ours = (recorded: Json) => ({ ...recorded, id: ourHash, hash: ourHash, envelope_xdr: envelope });
      const node = await nodeFor({
        'GET /fee_stats': FEE_STATS,
        'GET /ledgers': LEDGER_PAGE,
        [`GET /accounts/${GAYOLL}`]: ACCOUNT,
        'POST /transactions': (req) => {
          envelope = new URLSearchParams(req.body).get('tx')!;
          ourHash = TransactionBuilder.fromXDR(envelope, Networks.TESTNET).hash().toString('hex');
          posts++;
          // first the recorded success, then (a re-send) the recorded tx_bad_seq refusal
          return posts === 1 ? ours(SUBMITTED) : { status: 400, body: BAD_SEQ };
        },
      }, {}, {}, (req) => (ourHash && req.method === 'GET' && req.path === `/transactions/${ourHash}` ? ours(TX_RECORD) : undefined));
      const created = adapter.createTransferNode({ url: server!.url });
      expect(created).to.be.instanceOf(StellarTransferNode);
      expect(sequenceNode(adapter, created)).to.equal(created);

      const base = intent(hot, GAYOLL, 25_000_000n, '4242');
      const input = await node.transferInput(base);
      const sequence = await node.nextSequence(GAYOLL); // the allocator's floor, as read from the recorded account
      const unsigned = craft({ ...base, sequence }, input);
      expect(unsigned.maxFee).to.equal(199n);
      const signed = adapter.transfers.combine(unsigned, unsigned.payloads.map((p) => hot.sign(p)));

      expect(await node.broadcast(signed)).to.deep.equal({ outcome: 'ACCEPTED', txHash: signed.txHash });
      expect(ourHash).to.equal(signed.txHash);
      const sent = TransactionBuilder.fromXDR(envelope, Networks.TESTNET) as Transaction;
      expect(sent.source).to.equal(hot.address);
      expect(sent.sequence).to.equal('120192344791187471');
      expect(sent.fee).to.equal('199');
      expect(sent.timeBounds).to.deep.equal({ minTime: '0', maxTime: String(CLOSED_AT + 300) });
      expect(sent.memo.type).to.equal('id');
      expect(sent.memo.value?.toString()).to.equal('4242');
      expect(sent.operations).to.have.length(1);
      expect(sent.operations[0]).to.deep.include({ type: 'payment', destination: GAYOLL, amount: '2.5000000' });
      expect(Keypair.fromPublicKey(hot.address).verify(sent.hash(), sent.signatures[0]!.signature())).to.equal(true);

      // the worker re-sends after a timeout: tx_bad_seq, and Horizon has this very transaction
      expect(await node.broadcast(signed)).to.deep.equal({ outcome: 'ALREADY_KNOWN', txHash: signed.txHash });
      expect(await node.status(signed.txHash)).to.deep.equal({ state: 'MINED', blockHeight: 27963785n, blockHash: '27963785', confirmations: 1, succeeded: true, fee: 100n });
    });

    it('quotes the fee the way the server does (sequence 0, to the hot wallet itself, not funded yet): maxFee from the node\'s input', async () => {
      const node = await nodeFor({ 'GET /fee_stats': FEE_STATS, 'GET /ledgers': LEDGER_PAGE });
      const q = { ...request(hot, hot.address, 1n, 0n) };
      const input = await node.transferInput(q);
      expect(input.destinationExists).to.equal(false);
      expect(craft(q, input).maxFee).to.equal(199n);
    });
  });
});
