import { expect } from 'chai';
import { join } from 'node:path';
import { decode, encode } from 'xrpl';
import type { ChainEndpoint, SequenceTransferRequest, SignedTransaction, TransactionState, TransferInput, UnsignedTransfer } from '@wcs/core';
import { fixtureReader, rejected, startReplayServer, testChain, type ReplayServer, type Reply, type SeenRequest } from '@wcs/core/testing';
import { ChainRpcError, craftTransfer, paying, sequenceNode } from '@wcs/core';
import { XrpTransferNode, plugin, type XrpTransferNodeOptions } from './index';
import { asJsonRpc, submitAnswerFor, txAnswerFor, type Json } from './rippled.test-helper';
import { hotKey, intent, type TestKey } from './transfer.test-helper';

/**
 * The XRP transfer node against recorded rippled responses (src/fixtures, sources in SOURCE.md)
 * replayed by a local HTTP server: no XRP node is reachable from the test environment. What the
 * test changes in a recorded answer is said where it does it.
 */
const FIXTURES = fixtureReader(join(__dirname, '../src/fixtures'));
const fixture = (name: string): Record<string, unknown> => FIXTURES.json(name);

const FEE_LOW = asJsonRpc(fixture('rippled-fee.ws.json')); // open_ledger_fee 10
const FEE_ESCALATED = fixture('rippled-fee-escalated.jsonrpc.json'); // open_ledger_fee 2653937
const LEDGER = fixture('rippled-ledger-validated.jsonrpc.json'); // validated 100972465
const SERVER_STATE = fixture('rippled-server_state.jsonrpc.json'); // reserve 20000000 + 5000000 per object
const ACCOUNT_QUEUE = fixture('rippled-account_info-queue.jsonrpc.json'); // rG1QQ…, Sequence 6, queued up to 10
const ACCOUNT_CLI = fixture('rippled-account_info-validated.cli.json'); // rG1QQ…, Balance 9986 drops
const ACCOUNT_XRPLJS = asJsonRpc(fixture('xrpl-account_info.ws.json')); // r9cZA…, Balance 922913243, OwnerCount 1, Sequence 23
const ACT_NOT_FOUND = fixture('rippled-error-actNotFound.jsonrpc.json');
const SUBMIT_OK = fixture('rippled-submit-tesSUCCESS.jsonrpc.json'); // 5B31A751…
const SUBMIT_PAST_SEQ = fixture('rippled-submit-tefPAST_SEQ.jsonrpc.json'); // 82230B9D…
const TX_V2 = fixture('rippled-tx-OfferCreate-C53ECF83.jsonrpc.json'); // validated tesSUCCESS, API v2
const TX_V1 = { result: { ...fixture('xrpl-tx-partial-payment-2CE935CC.json'), status: 'success' } }; // validated tesSUCCESS, API v1
const TX_NOT_FOUND = fixture('rippled-error-txnNotFound.jsonrpc.json');

/** rLNaPo's account_tx page holds a validated tecUNFUNDED_PAYMENT (D7D181E7…), in the API v1 entry shape {meta, tx, validated}. */
const FAILED_ENTRY = ((fixture('rippled-account_tx-r3pz.ws.json').result as Json).transactions as Json[])
  .find((e) => (e.meta as Json).TransactionResult !== 'tesSUCCESS')!;
/**
 * The same record as rippled's API v1 `tx` method lays it out: the transaction's fields (hash,
 * ledger_index, inLedger, date among them) with meta and validated beside them. Only the nesting
 * changes; every field and value is the recorded one.
 */
const TX_TEC = { result: { ...(FAILED_ENTRY.tx as Json), meta: FAILED_ENTRY.meta, validated: FAILED_ENTRY.validated, status: 'success' } };

const R_QUEUE = 'rG1QQv2nh2gr7RCZ1P8YYcBUKCCN633jCn';
const R_XRPLJS = 'r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59';
const FAST = { attempts: 3, backoffMs: 1 };

interface Call {
  readonly method: string;
  readonly params: Json;
}

/** A recorded signed transaction: the blob rippled echoed, and its hash. */
function recorded(answer: Json): SignedTransaction {
  const r = answer.result as Json;
  return { txHash: (r.tx_json as Json).hash as string, raw: Uint8Array.from(Buffer.from(r.tx_blob as string, 'hex')) };
}

/** A recorded engine result with another code (test-made: the code is replaced and the message dropped). */
function engineResult(code: string): Json {
  const { engine_result_message: _, ...r } = SUBMIT_PAST_SEQ.result as Json;
  return { result: { ...r, engine_result: code } };
}

describe('XrpTransferNode (recorded rippled responses)', () => {
  let server: ReplayServer | undefined;
  let calls: Call[] = [];
  afterEach(async () => {
    await server?.close();
    server = undefined;
    calls = [];
  });

  /** A node whose fake rippled answers each method with `answers[method]` (a JSON body, a Reply, or a function of the call). */
  async function nodeFor(answers: Record<string, Json | Reply | ((c: Call, n: number) => Json | Reply)>, endpoint: Partial<ChainEndpoint> = {}, options: XrpTransferNodeOptions = {}) {
    server = await startReplayServer((req: SeenRequest) => {
      const body = JSON.parse(req.body) as { method: string; params: Json[] };
      const call = { method: body.method, params: body.params[0]! };
      calls.push(call);
      const a = answers[call.method];
      if (a === undefined) return { status: 500, body: `no answer for ${call.method}` };
      const v = typeof a === 'function' ? a(call, calls.filter((c) => c.method === call.method).length) : a;
      // a Reply has a numeric status beside its body; anything else is a JSON-RPC body
      return v === 'hang' || (typeof (v as Json).status === 'number' && 'body' in v) ? (v as Reply) : { body: v };
    });
    return new XrpTransferNode({ url: server.url, ...endpoint }, { retry: FAST, ...options });
  }

  describe('transferInput', () => {
    it('offers the open-ledger fee and LastLedgerSequence = the validated ledger + 20', async () => {
      const node = await nodeFor({ fee: FEE_LOW, ledger: LEDGER });
      const input = await node.transferInput({ from: R_QUEUE, fromPublicKey: pk(hotKey(0)), to: R_XRPLJS, memo: null, contract: null, amount: 1n });
      expect(input).to.deep.equal({ fee: '10', lastLedgerSequence: 100972485, validatedLedger: 100972465 });
      expect(calls).to.deep.equal([{ method: 'fee', params: {} }, { method: 'ledger', params: { ledger_index: 'validated' } }]);
    });

    it('caps an escalated open-ledger fee at maxFeeDrops (default 2 XRP), and follows it below the cap', async () => {
      let node = await nodeFor({ fee: FEE_ESCALATED, ledger: LEDGER });
      expect((await node.transferInput(quote())).fee).to.equal('2000000');
      await server!.close();
      node = await nodeFor({ fee: FEE_ESCALATED, ledger: LEDGER }, {}, { maxFeeDrops: 3_000_000n, ledgerMargin: 40 });
      expect(await node.transferInput(quote())).to.deep.include({ fee: '2653937', lastLedgerSequence: 100972505 });
    });

    it('refuses a token (XRP has none in the catalogue) before asking the node', async () => {
      const node = await nodeFor({});
      await rejected(node.transferInput({ ...quote(), contract: 'USD.rf1BiGeXwwQoi8Z2ueFYTEXSwuJYfV2Jpn' }), TypeError);
      expect(calls).to.have.length(0);
    });

    it('is RPC_ERROR when the ledger answer has no validated index', async () => {
      const node = await nodeFor({ fee: FEE_LOW, ledger: { result: { ...(LEDGER.result as Json), validated: false } } });
      expect(await rejected(node.transferInput(quote()), ChainRpcError)).to.include({ errorName: 'RPC_ERROR' });
    });
  });

  describe('nextSequence', () => {
    it('takes the open ledger\'s Sequence, or past the highest queued transaction', async () => {
      let node = await nodeFor({ account_info: ACCOUNT_QUEUE });
      // Sequence 6 in the open ledger, this server holds 6..10 in its queue: the next is 11
      expect(await node.nextSequence(R_QUEUE)).to.equal(11n);
      expect(calls).to.deep.equal([{ method: 'account_info', params: { account: R_QUEUE, ledger_index: 'current', queue: true } }]);
      await server!.close();
      node = await nodeFor({ account_info: ACCOUNT_XRPLJS });
      expect(await node.nextSequence(R_XRPLJS)).to.equal(23n);
    });

    it('is RPC_ERROR for an account that does not exist yet (an unfunded hot wallet), and for another account\'s record', async () => {
      let node = await nodeFor({ account_info: ACT_NOT_FOUND });
      const e = await rejected(node.nextSequence(R_QUEUE), ChainRpcError);
      expect(e).to.include({ errorName: 'RPC_ERROR', nodeCode: 'actNotFound' });
      expect(e.message).to.match(/does not exist/);
      await server!.close();
      node = await nodeFor({ account_info: ACCOUNT_XRPLJS });
      expect(await rejected(node.nextSequence(R_QUEUE), ChainRpcError)).to.include({ errorName: 'RPC_ERROR' });
    });

    it('refuses a malformed address before asking the node', async () => {
      const node = await nodeFor({});
      await rejected(node.nextSequence('XVLhHMPHU98es4dbozjVtdWzVrDjtV5fdx1mHp98tDMoQXb'), TypeError);
      await rejected(node.nextSequence('rG1QQv2nh2gr7RCZ1P8YYcBUKCCN633jCN'), TypeError);
      expect(calls).to.have.length(0);
    });
  });

  describe('balance', () => {
    it('is the validated Balance less the base reserve and the owner reserve per object', async () => {
      let node = await nodeFor({ account_info: ACCOUNT_XRPLJS, server_state: SERVER_STATE });
      // 922913243 − 20000000 − 1 × 5000000
      expect(await node.balance(R_XRPLJS, null)).to.equal(897_913_243n);
      expect(calls).to.deep.equal([
        { method: 'account_info', params: { account: R_XRPLJS, ledger_index: 'validated' } },
        { method: 'server_state', params: { ledger_index: 'current' } },
      ]);
      await server!.close();
      node = await nodeFor({ account_info: ACCOUNT_QUEUE, server_state: SERVER_STATE });
      expect(await node.balance(R_QUEUE, null)).to.equal(999_979_999_960n); // OwnerCount 0
    });

    it('is 0 below the reserve and for an account that does not exist yet', async () => {
      let node = await nodeFor({ account_info: ACCOUNT_CLI, server_state: SERVER_STATE });
      expect(await node.balance(R_QUEUE, null)).to.equal(0n); // 9986 drops
      await server!.close();
      node = await nodeFor({ account_info: ACT_NOT_FOUND });
      expect(await node.balance(R_QUEUE, null)).to.equal(0n);
    });

    it('refuses a token balance (native XRP only)', async () => {
      const node = await nodeFor({});
      await rejected(node.balance(R_QUEUE, 'USD.rf1BiGeXwwQoi8Z2ueFYTEXSwuJYfV2Jpn'), TypeError);
    });
  });

  describe('broadcast', () => {
    it('is ACCEPTED for tesSUCCESS, sending the blob as upper-case hex', async () => {
      const node = await nodeFor({ submit: SUBMIT_OK });
      const tx = recorded(SUBMIT_OK);
      expect(await node.broadcast(tx)).to.deep.equal({ outcome: 'ACCEPTED', txHash: '5B31A7518DC304D5327B4887CD1F7DC2C38D5F684170097020C7C9758B973847' });
      expect(calls).to.deep.equal([{ method: 'submit', params: { tx_blob: (SUBMIT_OK.result as Json).tx_blob } }]);
    });

    it('tefPAST_SEQ: REJECTED with rippled\'s code and message when `tx` does not know the transaction', async () => {
      const node = await nodeFor({ submit: SUBMIT_PAST_SEQ, tx: TX_NOT_FOUND });
      expect(await node.broadcast(recorded(SUBMIT_PAST_SEQ))).to.deep.equal({ outcome: 'REJECTED', reason: 'tefPAST_SEQ: This sequence number has already passed.' });
      expect(calls.map((c) => c.method)).to.deep.equal(['submit', 'tx']);
      expect(calls[1]!.params).to.deep.equal({ transaction: '82230B9D489370504B39BC2CE46216176CAC9E752E5C1774A8CBEC9FBB819208', binary: false });
    });

    it('maps the other engine results (test-made variants of the recorded answer: code replaced, message dropped)', async () => {
      const tx = recorded(SUBMIT_PAST_SEQ);
      const cases: Array<[string, BroadcastExpectation]> = [
        ['terQUEUED', { outcome: 'ACCEPTED', txHash: tx.txHash }],
        ['tecUNFUNDED_PAYMENT', { outcome: 'ACCEPTED', txHash: tx.txHash }],
        ['tefALREADY', { outcome: 'ALREADY_KNOWN', txHash: tx.txHash }],
        ['temBAD_FEE', { outcome: 'REJECTED', reason: 'temBAD_FEE' }],
        ['telBAD_PUBLIC_KEY', { outcome: 'REJECTED', reason: 'telBAD_PUBLIC_KEY' }],
        ['tefMAX_LEDGER', { outcome: 'REJECTED', reason: 'tefMAX_LEDGER' }],
        ['terPRE_SEQ', 'RPC_TRY_LATER'],
        ['terINSUF_FEE_B', 'RPC_TRY_LATER'],
        ['telCAN_NOT_QUEUE_FULL', 'RPC_TRY_LATER'],
        ['telINSUF_FEE_P', 'RPC_TRY_LATER'],
      ];
      for (const [code, expected] of cases) {
        const node = await nodeFor({ submit: engineResult(code), tx: TX_NOT_FOUND });
        if (typeof expected === 'string') {
          const e = await rejected(node.broadcast(tx), ChainRpcError);
          expect(e, code).to.include({ errorName: expected, nodeCode: code });
        } else {
          expect(await node.broadcast(tx), code).to.deep.equal(expected);
        }
        await server!.close();
      }
    });

    it('is REJECTED when rippled cannot parse or verify the blob (test-made error in the recorded error format)', async () => {
      const node = await nodeFor({ submit: { result: { error: 'invalidTransaction', error_exception: 'fails local checks: Invalid signature.', status: 'error', request: {} } } });
      expect(await node.broadcast(recorded(SUBMIT_OK))).to.deep.equal({ outcome: 'REJECTED', reason: 'invalidTransaction: fails local checks: Invalid signature.' });
    });

    it('refuses a transaction whose hash is not its blob\'s, before sending it', async () => {
      const node = await nodeFor({});
      await rejected(node.broadcast({ ...recorded(SUBMIT_OK), txHash: '82230B9D489370504B39BC2CE46216176CAC9E752E5C1774A8CBEC9FBB819208' }), TypeError);
      await rejected(node.broadcast({ txHash: '00'.repeat(32), raw: new Uint8Array(0) }), TypeError);
      expect(calls).to.have.length(0);
    });

    it('is RPC_ERROR when rippled echoes another transaction', async () => {
      const node = await nodeFor({ submit: SUBMIT_OK });
      expect(await rejected(node.broadcast(recorded(SUBMIT_PAST_SEQ)), ChainRpcError)).to.include({ errorName: 'RPC_ERROR' });
    });

    it('is RPC_UNAVAILABLE after the bounded retries on 5xx (test-made), and when the node does not answer in time', async () => {
      let node = await nodeFor({ submit: { status: 503, body: 'Service Unavailable' } });
      const e = await rejected(node.broadcast(recorded(SUBMIT_OK)), ChainRpcError);
      expect(e.errorName).to.equal('RPC_UNAVAILABLE');
      expect(e.message).to.contain('HTTP 503').and.contain('3 attempt');
      expect(calls).to.have.length(3);
      await server!.close();
      node = await nodeFor({ submit: 'hang' }, { timeoutMs: 100 }, { retry: { attempts: 1, backoffMs: 0 } });
      expect(await rejected(node.broadcast(recorded(SUBMIT_OK)), ChainRpcError)).to.include({ errorName: 'RPC_UNAVAILABLE' });
    });

    it('asks a busy rippled again (tooBusy, test-made in the recorded error format)', async () => {
      const node = await nodeFor({ submit: (_c, n) => (n === 1 ? { result: { error: 'tooBusy', status: 'error', request: {} } } : SUBMIT_OK) });
      expect(await node.broadcast(recorded(SUBMIT_OK))).to.include({ outcome: 'ACCEPTED' });
      expect(calls).to.have.length(2);
    });
  });

  describe('status', () => {
    it('MINED for a validated success (API v2: ledger_hash given), fee = Fee', async () => {
      const node = await nodeFor({ tx: TX_V2 });
      expect(await node.status('c53ecf838647fa5a4c780377025fec7999ab4182590510ca461444b207ab74a9')).to.deep.equal({
        state: 'MINED', blockHeight: 56865245n, blockHash: '793E56131D8D4ABFB27FA383BFC44F2978B046E023FF46C588D7E0C874C2472A', confirmations: 1, succeeded: true, fee: 12n,
      });
      expect(calls).to.deep.equal([{ method: 'tx', params: { transaction: 'C53ECF838647FA5A4C780377025FEC7999AB4182590510CA461444B207AB74A9', binary: false } }]);
    });

    it('MINED for a validated success in the API v1 shape (block hash: the ledger index, as the scanner)', async () => {
      const node = await nodeFor({ tx: TX_V1 });
      expect(await node.status('2CE935CC1FB07310E34DF373C95CE735FCB546577BA3C3E197F5F2CECAABB8B4')).to.deep.equal({
        state: 'MINED', blockHeight: 63809286n, blockHash: '63809286', confirmations: 1, succeeded: true, fee: 12n,
      });
    });

    it('MINED and not succeeded for a validated tec* (the fee was still charged)', async () => {
      const node = await nodeFor({ tx: TX_TEC }, {}, { confirmations: 3 });
      const hash = (FAILED_ENTRY.tx as Json).hash as string;
      const s = await node.status(hash);
      expect(s).to.deep.equal({ state: 'MINED', blockHeight: BigInt((FAILED_ENTRY.tx as Json).ledger_index as number), blockHash: String((FAILED_ENTRY.tx as Json).ledger_index), confirmations: 3, succeeded: false, fee: 12n });
    });

    it('UNKNOWN for txnNotFound, PENDING when not validated (test-made: the recorded answer with validated false)', async () => {
      let node = await nodeFor({ tx: TX_NOT_FOUND });
      expect(await node.status('E08D6E9754025BA2534A78707605E0601F03ACE063687A0CA1BDDACFCD1698C7')).to.deep.equal({ state: 'UNKNOWN' });
      await server!.close();
      node = await nodeFor({ tx: { result: { ...(TX_V2.result as Json), validated: false } } });
      expect(await node.status('C53ECF838647FA5A4C780377025FEC7999AB4182590510CA461444B207AB74A9')).to.deep.equal({ state: 'PENDING' });
    });

    it('is RPC_ERROR when the node answers with another transaction', async () => {
      const node = await nodeFor({ tx: TX_V2 });
      expect(await rejected(node.status('2CE935CC1FB07310E34DF373C95CE735FCB546577BA3C3E197F5F2CECAABB8B4'), ChainRpcError)).to.include({ errorName: 'RPC_ERROR' });
    });
  });

  describe('end to end: craft on the node\'s input, sign, combine, broadcast, status', () => {
    const live = testChain({ id: 6, code: 'XRP', name: 'XRP Ledger', family: 'xrp', environment: 'live', network: 'mainnet', nativeSymbol: 'XRP', decimals: 6, confirmations: 1 });
    const adapter = paying(plugin.create(live));
    const hot = hotKey(0);
    const to = hotKey(1).address;

    /** The adapter's crafting as the service reaches it (craftTransfer): a sequence chain answers a transaction. */
    function craft(request: SequenceTransferRequest, input: TransferInput): UnsignedTransfer {
      const result = craftTransfer(adapter, { spendModel: 'sequence', request }, input);
      if (!result.ok) expect.fail(`XRP crafting answered ${result.reason}`);
      return result.unsigned;
    }

    it('pays with the fee and LastLedgerSequence the node read, at the allocated sequence; ACCEPTED, then ALREADY_KNOWN on a re-broadcast, then MINED', async () => {
      let blob = '';
      let submits = 0;
      const node = await nodeFor({
        fee: FEE_LOW,
        ledger: LEDGER,
        account_info: ACCOUNT_QUEUE,
        submit: (c) => {
          blob = c.params.tx_blob as string;
          submits++;
          return submitAnswerFor(submits === 1 ? SUBMIT_OK : SUBMIT_PAST_SEQ, blob);
        },
        tx: () => txAnswerFor(TX_V2, blob),
      });
      const created = adapter.createTransferNode({ url: server!.url });
      expect(created).to.be.instanceOf(XrpTransferNode);
      expect(sequenceNode(adapter, created)).to.equal(created);

      const base = intent(hot, to, 25_000_000n, '4294967295');
      const input = await node.transferInput(base);
      const sequence = await node.nextSequence(R_QUEUE); // the allocator's floor: 11
      const unsigned = craft({ ...base, sequence }, input);
      expect(unsigned.maxFee).to.equal(10n);
      const signed = adapter.transfers.combine(unsigned, unsigned.payloads.map((p) => hot.sign(p)));

      expect(await node.broadcast(signed)).to.deep.equal({ outcome: 'ACCEPTED', txHash: signed.txHash });
      const sent = decode(blob) as Json;
      expect(sent).to.deep.include({
        TransactionType: 'Payment', Account: hot.address, Destination: to, Amount: '25000000', Fee: '10',
        Sequence: 11, LastLedgerSequence: 100972485, DestinationTag: 4294967295,
      });
      expect(encode(sent as never)).to.equal(blob);
      expect(Buffer.from(signed.raw).toString('hex').toUpperCase()).to.equal(blob);

      // the worker re-sends after a timeout: rippled says tefPAST_SEQ and `tx` finds this very transaction
      expect(await node.broadcast(signed)).to.deep.equal({ outcome: 'ALREADY_KNOWN', txHash: signed.txHash });
      const state: TransactionState = await node.status(signed.txHash);
      expect(state).to.deep.equal({ state: 'MINED', blockHeight: 56865245n, blockHash: '793E56131D8D4ABFB27FA383BFC44F2978B046E023FF46C588D7E0C874C2472A', confirmations: 1, succeeded: true, fee: 10n });
    });

    it('quotes the fee the way the server does (sequence 0, to the hot wallet itself): maxFee from the node\'s input', async () => {
      const node = await nodeFor({ fee: FEE_ESCALATED, ledger: LEDGER });
      const q = { from: hot.address, fromPublicKey: pk(hot), to: hot.address, memo: null, contract: null, amount: 1n, sequence: 0n };
      expect(craft(q, await node.transferInput(q)).maxFee).to.equal(2_000_000n);
    });
  });
});

type BroadcastExpectation = { outcome: 'ACCEPTED' | 'ALREADY_KNOWN'; txHash: string } | { outcome: 'REJECTED'; reason: string } | 'RPC_TRY_LATER';

function pk(key: TestKey) {
  return { curve: 'secp256k1' as const, bytes: key.publicKey };
}

/** The shape of the server's fee quote request. */
function quote() {
  const hot = hotKey(0);
  return { from: hot.address, fromPublicKey: pk(hot), to: hot.address, memo: null, contract: null, amount: 1n, sequence: 0n };
}
