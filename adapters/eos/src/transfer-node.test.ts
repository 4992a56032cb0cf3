import { expect } from 'chai';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { secp256k1 } from '@noble/curves/secp256k1';
import { HDKey } from '@scure/bip32';
import { stringToPublicKey } from 'eosjs/dist/eosjs-numeric';
import type { KeySignature, PublicKey, SignedTransaction, TransferIntent } from '@wcs/core';
import { fillPath, fixtureReader, rejected, startReplayServer, testSeed, type Reply, type ReplayServer, type SeenRequest } from '@wcs/core/testing';
import { EOS_KEY_SPECS, eosPublicKeyToLegacyString, eosPublicKeyToString } from './index';
import { ChainRpcError } from '@wcs/core';
import { EosTransferCrafter } from './transfer';
import { EosTransferNode, type EosTransferNodeOptions } from './transfer-node';
import { decode, executedFor, hyperionMissing } from './transfer-node.test-helper';

// Recorded node answers in src/fixtures (read from dist); SOURCE.md says where each comes from.
const fx = fixtureReader(path.join(__dirname, '../src/fixtures'));
type Json = Record<string, any>;
const json = (name: string): Json => fx.json<Json>(name);
const text = (name: string): string => fx.text(name);

// Jungle 4 get_info (Spring 1.2): head 209672971 at 14:20:17.500, LIB 209672969 at 14:20:16.500.
const INFO = 'get_info.jungle4.209672971.json';
const LIB_ID = '0c7f5b09149217949634096d1994a923978260a212e254358924287c5bb983af';
const CHAIN_ID = '73e4385a2708e6d7048834fbc1079f2fabb17b3c125b146af438971e90716c4d';
const HOT = 'cordialsysaa'; // the recorded get_account's account
const RECORDED_KEY = 'EOS88T1B86LmH3GNhFfKx268N6LnFBVCGzLBWGLMZ9wAQDr6e3ezk'; // its active (and owner) key
const HYPERION_TRX = '4c66c16b364ba919281b0388f3048ec04afec2b5ed5704bb2169772783d84cc3';
const STATUS_TRX = '6438df82216dfaf46978f703fb818b49110dbfc5d9b521b5d08c342277438b29'; // the cleos docs' example id

/** The hot key (account 1, index 0) of the BIP-39 test mnemonic, as in transfer.test.ts. */
const hotPrivate = HDKey.fromMasterSeed(testSeed()).derive(fillPath(EOS_KEY_SPECS.hot.pathTemplate, 1, 0)).privateKey!;
const hotPublic = secp256k1.getPublicKey(hotPrivate, true);
const HOT_KEY: PublicKey = { curve: 'secp256k1', bytes: hotPublic };
const sign = (digest: Uint8Array): KeySignature => {
  const sig = secp256k1.sign(digest, hotPrivate, { lowS: true });
  return { curve: 'secp256k1', bytes: sig.toCompactRawBytes(), recovery: sig.recovery };
};

type Route = Reply | ((req: SeenRequest) => Reply);
/** A node answering each API path from `routes` (by the path's last segment); anything else 404. */
async function node(routes: Record<string, Route>): Promise<ReplayServer> {
  return startReplayServer((req) => {
    const name = req.path.split('/').pop()!;
    const r = routes[name];
    if (r === undefined) return { status: 404, body: 'not found', contentType: 'text/plain' };
    return typeof r === 'function' ? r(req) : r;
  });
}
const ok = (body: unknown, status = 200): Reply => ({ status, body: typeof body === 'string' ? body : JSON.stringify(body) });
const file = (name: string, status = 200): Reply => ({ status, body: text(name) });
const count = (s: ReplayServer, name: string): number => s.requests.filter((r) => r.path.endsWith(`/${name}`)).length;

function open(server: ReplayServer, options: EosTransferNodeOptions = {}, timeoutMs?: number): EosTransferNode {
  return new EosTransferNode({ url: `${server.url}chain-api/KEY123SECRET`, ...(timeoutMs ? { timeoutMs } : {}) }, { backoffMs: 1, attempts: 2, ...options });
}

const base = (contract: string | null = null): TransferIntent => ({
  from: HOT, fromPublicKey: HOT_KEY, to: 'crosschaino3', memo: '42', contract, amount: 12345n,
});

async function craftSigned(input: Json, contract: string | null = null): Promise<SignedTransaction> {
  const crafter = new EosTransferCrafter();
  const unsigned = crafter.craft({ ...base(contract) }, input);
  return crafter.combine(unsigned, unsigned.payloads.map(sign));
}

describe('EosTransferNode', () => {
  let server: ReplayServer;
  afterEach(async () => server?.close());

  describe('transferInput → craft → sign → combine', () => {
    it('native EOS: reference block = the recorded LIB, expiration = head time (whole s) + 300 s, precision from get_currency_stats', async () => {
      server = await node({ get_info: file(INFO), get_currency_stats: file('get_currency_stats.EOS.json') });
      const input = await open(server).transferInput(base());
      expect(input).to.deep.equal({
        chainId: CHAIN_ID, referenceBlockId: LIB_ID, expiration: '2025-06-23T14:25:17', account: HOT, permission: 'active', precision: 4, requireCanonicalSignature: true,
      });
      const stats = server.requests.find((r) => r.path.endsWith('get_currency_stats'))!;
      expect(JSON.parse(stats.body)).to.deep.equal({ code: 'eosio.token', symbol: 'EOS' });

      const signed = await craftSigned(input);
      const { trx, transfer, body } = decode(signed);
      expect(signed.txHash).to.equal(createHash('sha256').update(Buffer.from(body.packed_trx, 'hex')).digest('hex'));
      expect(trx.ref_block_num).to.equal(209672969 & 0xffff);
      expect(trx.ref_block_prefix).to.equal(Buffer.from(LIB_ID, 'hex').readUInt32LE(8));
      // a variant expires 0..15 s before the input's expiration
      const exp = Date.parse(`${trx.expiration}Z`);
      expect(exp).to.be.at.most(Date.parse('2025-06-23T14:25:17Z')).and.at.least(Date.parse('2025-06-23T14:25:02Z'));
      expect(trx.actions).to.have.length(1);
      expect(trx.actions[0].account).to.equal('eosio.token');
      expect(trx.actions[0].authorization).to.deep.equal([{ actor: HOT, permission: 'active' }]);
      expect(transfer).to.deep.equal({ from: HOT, to: 'crosschaino3', quantity: '1.2345 EOS', memo: '42' });
    });

    it('a token: its contract and symbol, the precision its stats give (recorded SYS, and a test-made 6-decimal token)', async () => {
      server = await node({
        get_info: file(INFO),
        get_currency_stats: (req) => (JSON.parse(req.body).symbol === 'SYS' ? file('get_currency_stats.SYS.cleos.json') : ok({ ABC: { supply: '5000.000000 ABC', max_supply: '1000000.000000 ABC', issuer: 'abctoken1111' } })),
      });
      const n = open(server);
      const sys = await n.transferInput(base('eosio.token:SYS'));
      expect(sys.precision).to.equal(4);
      const { trx, transfer } = decode(await craftSigned(sys, 'eosio.token:SYS'));
      expect(trx.actions[0].account).to.equal('eosio.token');
      expect(transfer.quantity).to.equal('1.2345 SYS');
      const abc = await n.transferInput(base('abctoken1111:ABC'));
      expect(abc.precision).to.equal(6);
      const decoded = decode(await craftSigned(abc, 'abctoken1111:ABC'));
      expect(decoded.trx.actions[0].account).to.equal('abctoken1111');
      expect(decoded.transfer.quantity).to.equal('0.012345 ABC');
    });

    it('transferInputs: get_info once, stats once per token, an Error per failing item', async () => {
      server = await node({
        get_info: file(INFO),
        get_currency_stats: (req) => (JSON.parse(req.body).symbol === 'EOS' ? file('get_currency_stats.EOS.json') : ok({})),
      });
      const out = await open(server).transferInputs([base(), base('nope'), base(), base('faketoken111:USDT')]);
      expect(out[0]).to.deep.equal(out[2]);
      expect((out[0] as Json).precision).to.equal(4);
      expect(out[1]).to.be.instanceOf(TypeError);
      expect(out[3]).to.be.instanceOf(ChainRpcError).and.include({ errorName: 'RPC_ERROR' });
      expect((out[3] as Error).message).to.match(/faketoken111 has no token USDT/);
      expect(count(server, 'get_info')).to.equal(1);
      expect(count(server, 'get_currency_stats')).to.equal(2);
    });

    it('a get_info fault is every item\'s error', async () => {
      server = await node({ get_info: ok('<html>busy</html>', 503) });
      const out = await open(server).transferInputs([base(), base()]);
      expect(out.map((e) => (e as ChainRpcError).errorName)).to.deep.equal(['RPC_UNAVAILABLE', 'RPC_UNAVAILABLE']);
      await rejected(open(server).transferInput(base()), ChainRpcError);
    });
  });

  describe('balance', () => {
    it('reads the recorded row exactly as base units', async () => {
      server = await node({ get_currency_balance: file('get_currency_balance.eosio.json') });
      expect(await open(server).balance('eosio', null)).to.equal(16670290n);
      expect(JSON.parse(server.requests[0]!.body)).to.deep.equal({ code: 'eosio.token', account: 'eosio', symbol: 'EOS' });
    });
    it('no row → 0n; a token by its contract and symbol; a large amount stays exact (test-made rows)', async () => {
      server = await node({ get_currency_balance: (req) => (JSON.parse(req.body).code === 'tethertether' ? ok(['461168601842738.7903 USDT']) : ok([])) });
      const n = open(server);
      expect(await n.balance('crosschaino3', null)).to.equal(0n);
      expect(await n.balance('crosschaino3', 'tethertether:USDT')).to.equal(4611686018427387903n);
    });
  });

  describe('controls', () => {
    const recordedKey: PublicKey = { curve: 'secp256k1', bytes: Uint8Array.from(stringToPublicKey(RECORDED_KEY).data) };
    it('true for the recorded active key (legacy EOS… form), and in the PUB_K1_ form (test-made)', async () => {
      expect(eosPublicKeyToLegacyString(recordedKey)).to.equal(RECORDED_KEY);
      server = await node({ get_account: file('get_account.jungle4.cordialsysaa.json') });
      expect(await open(server).controls(HOT, recordedKey)).to.equal(true);
      await server.close();
      const acct = json('get_account.jungle4.cordialsysaa.json');
      acct.permissions[0].required_auth.keys[0].key = eosPublicKeyToString(recordedKey);
      server = await node({ get_account: ok(acct) });
      expect(await open(server).controls(HOT, recordedKey)).to.equal(true);
    });
    it('false for another key, and when the key alone does not meet the threshold (test-made threshold 2)', async () => {
      server = await node({ get_account: file('get_account.jungle4.cordialsysaa.json') });
      expect(await open(server).controls(HOT, HOT_KEY)).to.equal(false);
      await server.close();
      const acct = json('get_account.jungle4.cordialsysaa.json');
      acct.permissions[0].required_auth.threshold = 2;
      acct.permissions[0].required_auth.keys.push({ key: eosPublicKeyToString(HOT_KEY), weight: 1 });
      server = await node({ get_account: ok(acct) });
      expect(await open(server).controls(HOT, recordedKey)).to.equal(false);
      expect(await open(server).controls(HOT, HOT_KEY)).to.equal(false);
    });
    it('false for a missing account (Leap 4+ 400 account_query_exception, Leap 3 500 "unknown key"); faults throw', async () => {
      for (const f of ['get_account.unknown.leap4.json', 'get_account.unknown.leap3.json']) {
        server = await node({ get_account: file(f, json(f).code) });
        expect(await open(server).controls('test', HOT_KEY), f).to.equal(false);
        expect(server.requests).to.have.length(1); // a node's answer, not retried
        await server.close();
      }
      server = await node({ get_account: ok('down', 503) });
      const e = await rejected(open(server).controls(HOT, HOT_KEY), ChainRpcError);
      expect(e).to.be.instanceOf(ChainRpcError).and.include({ errorName: 'RPC_UNAVAILABLE' });
    });
  });

  describe('broadcast', () => {
    let signed: SignedTransaction;
    before(async () => {
      signed = await craftSigned({ chainId: CHAIN_ID, referenceBlockId: LIB_ID, expiration: '2025-06-23T14:25:17', account: HOT, precision: 4 });
    });

    it('ACCEPTED: send_transaction with the crafter\'s body as is', async () => {
      server = await node({ send_transaction: ok(executedFor(signed.txHash)) });
      expect(await open(server).broadcast(signed)).to.deep.equal({ outcome: 'ACCEPTED', txHash: signed.txHash });
      expect(server.requests[0]!.body).to.equal(Buffer.from(signed.raw).toString('utf8'));
      expect(server.requests[0]!.path).to.equal('/chain-api/KEY123SECRET/v1/chain/send_transaction');
    });
    it('the recorded answer for another transaction is an error, not an acceptance', async () => {
      server = await node({ send_transaction: file('push_transaction.executed.0125cd2d.json') });
      const e = await rejected(open(server).broadcast(signed), ChainRpcError);
      expect(e).to.be.instanceOf(ChainRpcError).and.include({ errorName: 'RPC_ERROR' });
      expect(e.message).to.match(/transaction_id 0125cd2d/);
    });
    it('ALREADY_KNOWN: tx_duplicate (HTTP 409, 3040008)', async () => {
      server = await node({ send_transaction: file('push_transaction.tx_duplicate.409.json', 409) });
      expect(await open(server).broadcast(signed)).to.deep.equal({ outcome: 'ALREADY_KNOWN', txHash: signed.txHash });
    });
    const rejections: Array<[string, number, RegExp]> = [
      ['push_transaction.expired_tx_exception.400.json', 400, /^expired_tx_exception \(3040005\): Expired Transaction$/],
      ['push_transaction.unsatisfied_authorization.500.json', 500, /^unsatisfied_authorization \(3090003\): provided keys, permissions, and delays do not satisfy declared authorizations$/],
      ['push_transaction.overdrawn_balance.500.json', 500, /^eosio_assert_message_exception \(3050003\): eosio_assert_message assertion failure: assertion failure with message: overdrawn balance$/],
    ];
    for (const [f, status, reason] of rejections) {
      it(`REJECTED: ${f.split('.')[1]} (HTTP ${status}), not retried`, async () => {
        server = await node({ send_transaction: file(f, status) });
        const out = await open(server).broadcast(signed);
        expect(out.outcome).to.equal('REJECTED');
        expect((out as { reason: string }).reason).to.match(reason);
        expect(server.requests).to.have.length(1);
      });
    }
    it('REJECTED: a 200 answer with a failure trace (test-made except)', async () => {
      const answer = JSON.parse(executedFor(signed.txHash));
      answer.processed.except = { code: 3050003, name: 'eosio_assert_message_exception', message: 'eosio_assert_message assertion failure', stack: [] };
      server = await node({ send_transaction: ok(answer) });
      expect(await open(server).broadcast(signed)).to.deep.equal({ outcome: 'REJECTED', reason: 'eosio_assert_message_exception (3050003)' });
    });
    it('RPC_TRY_LATER: tx_cpu_usage_exceeded (recorded), deadline_exception (test-made)', async () => {
      server = await node({ send_transaction: file('push_transaction.tx_cpu_usage_exceeded.400.json', 400) });
      const e = await rejected(open(server).broadcast(signed), ChainRpcError);
      expect(e).to.be.instanceOf(ChainRpcError).and.include({ errorName: 'RPC_TRY_LATER', rpcCode: 3080004 });
      expect(e.message).to.include('billed CPU time (362 us)').and.include(server.url.slice(7, -1)).and.not.include('KEY123SECRET');
      await server.close();
      const deadline = json('push_transaction.tx_cpu_usage_exceeded.400.json');
      deadline.error = { code: 3080006, name: 'deadline_exception', what: 'Transaction took too long', details: [] };
      deadline.code = 500;
      server = await node({ send_transaction: ok(deadline, 500) });
      expect(await rejected(open(server).broadcast(signed), ChainRpcError)).to.include({ errorName: 'RPC_TRY_LATER', rpcCode: 3080006 });
      expect(server.requests).to.have.length(1);
    });
    it('RPC_ERROR: a node error that is no verdict on the transaction (test-made unknown_block_exception)', async () => {
      const answer = { code: 500, message: 'Internal Service Error', error: { code: 3100002, name: 'unknown_block_exception', what: 'Unknown block', details: [] } };
      server = await node({ send_transaction: ok(answer, 500) });
      expect(await rejected(open(server).broadcast(signed), ChainRpcError)).to.include({ errorName: 'RPC_ERROR', rpcCode: 3100002 });
    });
    it('refuses a body that is not the transaction it names', async () => {
      server = await node({});
      await rejected(open(server).broadcast({ txHash: '00'.repeat(32), raw: signed.raw }), TypeError);
      await rejected(open(server).broadcast({ txHash: signed.txHash, raw: Buffer.from('nope') }), TypeError);
      expect(server.requests).to.have.length(0);
    });
  });

  describe('status', () => {
    const EXPIRED_INPUT = { expiration: '2025-06-23T14:20:00' }; // before the recorded LIB time 14:20:16.500
    const LIVE_INPUT = { expiration: '2025-06-23T14:25:17' }; // after it
    it('IN_BLOCK (recorded get_transaction_status) → MINED, reversible: below the chain\'s confirmations', async () => {
      server = await node({ get_transaction_status: file('get_transaction_status.IN_BLOCK.json') });
      const expected = { state: 'MINED', blockHeight: 90n, blockHash: '0000005accfd59ba80a05380f60d51687406337b2aedd28b7daa33fdb8c16b5a', succeeded: true, fee: 0n };
      expect(await open(server).status(STATUS_TRX, LIVE_INPUT)).to.deep.equal({ ...expected, confirmations: 0 });
      expect(await open(server, { confirmations: 3 }).status(STATUS_TRX)).to.deep.equal({ ...expected, confirmations: 1 });
      expect(JSON.parse(server.requests[0]!.body)).to.deep.equal({ id: STATUS_TRX });
    });
    it('IRREVERSIBLE → MINED with the chain\'s confirmations; LOCALLY_APPLIED → PENDING (test-made states)', async () => {
      const answer = json('get_transaction_status.IN_BLOCK.json');
      answer.state = 'IRREVERSIBLE';
      server = await node({ get_transaction_status: ok(answer) });
      expect(await open(server, { confirmations: 2 }).status(STATUS_TRX)).to.include({ state: 'MINED', confirmations: 2, blockHeight: 90n });
      await server.close();
      answer.state = 'LOCALLY_APPLIED';
      server = await node({ get_transaction_status: ok(answer) });
      expect(await open(server).status(STATUS_TRX)).to.deep.equal({ state: 'PENDING' });
    });
    it('without get_transaction_status (404): the Hyperion record → MINED at its block, irreversible below Hyperion\'s lib', async () => {
      server = await node({ get_transaction: file('hyperion.get_transaction.4c66c16b.json') });
      expect(await open(server).status(HYPERION_TRX, LIVE_INPUT)).to.deep.equal({
        state: 'MINED', blockHeight: 209370387n, blockHash: '0c7abd131d6352acdc395ef6585a0f567dd10d22fc39d34fc75e3d5c7e5cec10', confirmations: 1, succeeded: true, fee: 0n,
      });
      const get = server.requests.find((r) => r.path.endsWith('/v2/history/get_transaction'))!;
      expect(get.method).to.equal('GET');
      expect(get.query.get('id')).to.equal(HYPERION_TRX);
    });
    it('not found anywhere (recorded UNKNOWN, Hyperion without it): EXPIRED only when the LIB and Hyperion\'s index are past the expiration', async () => {
      const id = 'ab'.repeat(32);
      server = await node({
        get_transaction_status: file('get_transaction_status.UNKNOWN.json'),
        get_transaction: ok(hyperionMissing(id, 'yes')),
        get_info: file(INFO),
      });
      const n = open(server);
      expect(await n.status(id, EXPIRED_INPUT)).to.deep.equal({ state: 'EXPIRED' });
      expect(await n.status(id, LIVE_INPUT)).to.deep.equal({ state: 'UNKNOWN' });
      expect(await n.status(id)).to.deep.equal({ state: 'UNKNOWN' });
      // the expiration equal to the LIB's second: a block at that time could still take it
      expect(await n.status(id, { expiration: '2025-06-23T14:20:16.500' })).to.deep.equal({ state: 'UNKNOWN' });
    });
    it('UNKNOWN, not EXPIRED, when Hyperion gives no last indexed block or get_info no LIB time (test-made)', async () => {
      const id = 'cd'.repeat(32);
      server = await node({ get_transaction: ok(hyperionMissing(id)), get_info: file(INFO) });
      expect(await open(server).status(id, EXPIRED_INPUT)).to.deep.equal({ state: 'UNKNOWN' });
      await server.close();
      const info = json(INFO);
      delete info.last_irreversible_block_time;
      server = await node({ get_transaction: ok(hyperionMissing(id, 'yes')), get_info: ok(info) });
      expect(await open(server).status(id, EXPIRED_INPUT)).to.deep.equal({ state: 'UNKNOWN' });
    });
    it('statusMany: one answer per item in order, a failing item hides nothing, get_info read once', async () => {
      const missing = 'ef'.repeat(32);
      const broken = '12'.repeat(32);
      server = await node({
        get_transaction: (req) => {
          const id = req.query.get('id');
          if (id === HYPERION_TRX) return file('hyperion.get_transaction.4c66c16b.json');
          if (id === broken) return ok('<html>gateway</html>', 502);
          return ok(hyperionMissing(id!, 'yes'));
        },
        get_info: file(INFO),
      });
      const out = await open(server).statusMany([HYPERION_TRX, missing, broken, missing], [LIVE_INPUT, EXPIRED_INPUT, EXPIRED_INPUT, undefined]);
      expect(out[0]).to.include({ state: 'MINED', blockHeight: 209370387n });
      expect(out[1]).to.deep.equal({ state: 'EXPIRED' });
      expect(out[2]).to.be.instanceOf(ChainRpcError).and.include({ errorName: 'RPC_UNAVAILABLE' });
      expect(out[3]).to.deep.equal({ state: 'UNKNOWN' });
      expect(count(server, 'get_info')).to.equal(1);
    });
  });

  describe('network faults', () => {
    it('closed port → RPC_UNAVAILABLE, naming the host only', async () => {
      server = await node({});
      const url = server.url;
      await server.close();
      const n = new EosTransferNode({ url: `${url}path/KEY123SECRET?apikey=SECRETVALUE` }, { backoffMs: 1, attempts: 2 });
      const e = await rejected(n.balance(HOT, null), ChainRpcError);
      expect(e).to.be.instanceOf(ChainRpcError).and.include({ errorName: 'RPC_UNAVAILABLE', attempts: 2 });
      expect(e.message).to.include(new URL(url).host).and.not.include('KEY123SECRET').and.not.include('SECRETVALUE');
      server = await node({});
    });
    it('HTTP 503 → RPC_UNAVAILABLE after the attempts', async () => {
      server = await node({ get_info: ok('<html>unavailable</html>', 503) });
      const e = await rejected(open(server).transferInput(base()), ChainRpcError);
      expect(e).to.include({ errorName: 'RPC_UNAVAILABLE', responseStatus: 503, attempts: 2 });
      expect(server.requests).to.have.length(2);
    });
    it('a node that never answers → RPC_UNAVAILABLE (timeout)', async () => {
      server = await node({ get_account: 'hang' });
      const e = await rejected(open(server, {}, 100).controls(HOT, HOT_KEY), ChainRpcError);
      expect(e).to.include({ errorName: 'RPC_UNAVAILABLE' });
      expect(e.message).to.match(/no answer within 100 ms/);
    });
  });
});
