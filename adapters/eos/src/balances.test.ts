import { expect } from 'chai';
import { join } from 'node:path';
import { ChainRpcError } from '@wcs/core';
import { fixtureReader, startReplayServer, testChain, type ReplayServer, type Reply } from '@wcs/core/testing';
import { EosBalanceReader } from './balances';
import { plugin } from './index';

/**
 * The EOS balance reader on recorded nodeos answers (src/fixtures, SOURCE.md "Balance reader"):
 * get_info (Jungle 4), eosio's EOS balance row, get_account of cordialsysaa and of a missing
 * account. Test-made (said in SOURCE.md): `[]` for a (token, account) without a row, as nodeos
 * answers get_currency_balance then.
 */
const FIXTURES = fixtureReader(join(__dirname, '../src/fixtures'));
type Json = Record<string, unknown>;
const fixture = (name: string): Json => FIXTURES.json(name);
const INFO = fixture('get_info.jungle4.209671574.json'); // head 209671574 0c7f5596…, LIB 209671572 0c7f5594…
const EOSIO_EOS = FIXTURES.json<unknown[]>('get_currency_balance.eosio.json'); // ["1667.0290 EOS"]
const CORDIAL = fixture('get_account.jungle4.cordialsysaa.json');
const UNKNOWN_LEAP4 = fixture('get_account.unknown.leap4.json'); // HTTP 400, account_query_exception
const UNKNOWN_LEAP3 = fixture('get_account.unknown.leap3.json'); // HTTP 500, "unknown key"

const HEAD = { height: 209671574n, blockHash: '0c7f55960e5abdad44bb04734a992848ddef624f58b83cb5c8c9040a4832f764' };
const LIB = { height: 209671572n, blockHash: '0c7f5594163655e89089f38432cef53c7dbc0ad5c9abe268fbf74335e977f7e9' };

describe('EosBalanceReader (recorded nodeos answers)', () => {
  let server: ReplayServer;
  let info: Json = INFO;
  const calls = (since: number) => server.requests.slice(since).map((r) => `${r.path.replace('/v1/chain/', '')} ${r.body}`);

  before(async () => {
    server = await startReplayServer((req): Reply => {
      const body = JSON.parse(req.body || '{}') as Json;
      switch (req.path) {
        case '/v1/chain/get_info': return { body: info };
        case '/v1/chain/get_currency_balance':
          return { body: body.account === 'eosio' && body.code === 'eosio.token' && body.symbol === 'EOS' ? EOSIO_EOS : [] };
        case '/v1/chain/get_account':
          if (body.account_name === 'cordialsysaa') return { body: CORDIAL };
          if (body.account_name === 'oldleapnode1') return { status: 500, body: UNKNOWN_LEAP3 };
          return { status: 400, body: UNKNOWN_LEAP4 };
        default: return { status: 404, body: { code: 404, message: 'Not Found', error: { code: 0, name: 'exception', what: 'unknown', details: [] } } };
      }
    });
  });
  after(async () => server?.close());

  const reader = () => new EosBalanceReader({ url: server.url }, { attempts: 1 });

  it('the plugin builds it', () => {
    const chain = testChain({ id: 108, code: 'EOS', name: 'EOS Jungle Testnet', family: 'eos', environment: 'test', network: 'jungle4', nativeSymbol: 'EOS', decimals: 4, confirmations: 1, options: { depositAccount: 'cordialsysaa' } });
    expect(plugin.create(chain).createBalanceReader!({ url: server.url })).to.be.instanceOf(EosBalanceReader);
  });

  it('head is the last irreversible block', async () => {
    const r = reader();
    expect(r.history).to.deep.equal({ kind: 'head' });
    expect(await r.head()).to.deep.equal(LIB);
  });

  it('balances in order, exact; an account without a row is 0 if it exists, NO_ACCOUNT if not (Leap 4 and Leap 3 answers); answered at the head block', async () => {
    const since = server.requests.length;
    const { at, answers } = await reader().balancesAt([
      { address: 'cordialsysaa', contract: 'tethertether:USDT' }, { address: 'eosio', contract: null }, { address: 'nosuchacct11', contract: null },
      { address: 'cordialsysaa', contract: null }, { address: 'oldleapnode1', contract: 'tethertether:USDT' }, { address: 'eosio', contract: null },
    ], LIB);
    expect(at).to.deep.equal(HEAD);
    expect(answers).to.deep.equal([
      { kind: 'AMOUNT', amount: 0n }, { kind: 'AMOUNT', amount: 16_670_290n }, { kind: 'NO_ACCOUNT' },
      { kind: 'AMOUNT', amount: 0n }, { kind: 'NO_ACCOUNT' }, { kind: 'AMOUNT', amount: 16_670_290n },
    ]);
    const asked = calls(since);
    // one read per (token, account); get_account only for the accounts without any row; eosio never
    expect(asked.filter((c) => c.startsWith('get_currency_balance'))).to.have.length(5);
    expect(asked.filter((c) => c.startsWith('get_account')).sort()).to.deep.equal([
      'get_account {"account_name":"cordialsysaa"}', 'get_account {"account_name":"nosuchacct11"}', 'get_account {"account_name":"oldleapnode1"}',
    ]);
  });

  it('a node reading irreversible state (head = LIB) answers at the LIB', async () => {
    info = { ...INFO, head_block_num: INFO.last_irreversible_block_num, head_block_id: INFO.last_irreversible_block_id };
    const { at } = await reader().balancesAt([{ address: 'eosio', contract: null }], LIB);
    expect(at).to.deep.equal(LIB);
    info = INFO;
  });

  it('refuses a bad account or token before any request; a node error is a ChainRpcError', async () => {
    const r = reader();
    const since = server.requests.length;
    for (const q of [{ address: 'UPPER', contract: null }, { address: 'eosio', contract: 'USDT' }, { address: 'eosio', contract: 'tethertether:usdt' }]) {
      const e = await r.balancesAt([q], LIB).then(() => null, (x: unknown) => x);
      expect(e, JSON.stringify(q)).to.be.instanceOf(TypeError);
    }
    expect(await r.balancesAt([], LIB)).to.deep.equal({ at: LIB, answers: [] });
    expect(server.requests.length).to.equal(since);
    info = { code: 500, message: 'Internal Service Error', error: { code: 3100008, name: 'unsupported_feature', what: 'Unsupported feature', details: [] } };
    const e = await r.head().then(() => null, (x: unknown) => x);
    info = INFO;
    expect(e).to.be.instanceOf(ChainRpcError);
  });
});
