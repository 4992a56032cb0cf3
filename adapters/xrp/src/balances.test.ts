import { expect } from 'chai';
import { join } from 'node:path';
import { ChainRpcError } from '@wcs/core';
import { fixtureReader, startReplayServer, testChain, type ReplayServer, type Reply, type SeenRequest } from '@wcs/core/testing';
import { XrpBalanceReader, historyOfCompleteLedgers } from './balances';
import { plugin } from './index';
import { asJsonRpc, type Json } from './rippled.test-helper';

/**
 * The XRP balance reader on recorded rippled answers (src/fixtures, SOURCE.md "Balance reader"):
 * account_info of rG1QQ… at validated ledger 56843712 (9986 drops), of r9cZA… (922913243 drops),
 * actNotFound, the validated `ledger` and server_info (complete_ledgers 32570-82521761: a
 * full-history server).
 */
const FIXTURES = fixtureReader(join(__dirname, '../src/fixtures'));
const fixture = (name: string): Json => FIXTURES.json(name);
const LEDGER = fixture('rippled-ledger-validated.jsonrpc.json'); // validated 100972465, 9DAAAE85…
const SERVER_INFO = fixture('rippled-server_info.jsonrpc.json'); // complete_ledgers 32570-82521761, validated 82521761
const INFO_RG1 = fixture('rippled-account_info-validated.cli.json'); // rG1QQ…, 9986 drops, ledger 56843712 8169428E…
const INFO_R9C = asJsonRpc(fixture('xrpl-account_info.ws.json')); // r9cZA…, 922913243 drops, ledger_index 9592219, no `validated`
const NOT_FOUND = fixture('rippled-error-actNotFound.jsonrpc.json'); // rKp7K…

const RG1 = 'rG1QQv2nh2gr7RCZ1P8YYcBUKCCN633jCn';
const R9C = 'r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59';
const RKP = 'rKp7KgcYjdEQepQLc27ZHz76ukLwE4S1CN';
const AT = { height: 56843712n, blockHash: '8169428EDF7F046F817CE44F5F1DF23AD9FAEFFA2CBA7645C3254D66AA79B46E' };

describe('XrpBalanceReader (recorded rippled answers)', () => {
  let server: ReplayServer;
  let serverInfo: Json = SERVER_INFO;
  const calls = (since: number) => server.requests.slice(since).map((r) => JSON.parse(r.body) as { method: string; params: [Json] });

  before(async () => {
    server = await startReplayServer((req: SeenRequest): Reply => {
      const { method, params } = JSON.parse(req.body) as { method: string; params: [Json] };
      const p = params[0];
      if (method === 'ledger') return { body: LEDGER };
      if (method === 'server_info') return { body: serverInfo };
      if (method === 'account_info') {
        // test-made, rippled's documented lgrNotFound error (error-formatting.md): a ledger this server does not hold
        if (p.ledger_index === 5) return { body: { result: { error: 'lgrNotFound', error_code: 21, error_message: 'ledgerNotFound', status: 'error', request: { command: 'account_info', ...p } } } };
        if (p.account === RG1) return { body: INFO_RG1 };
        // test-made: the xrpl.js recording (ledger 9592219, no `validated`) as the answer of the ledger asked
        if (p.account === R9C) return { body: { result: { ...(INFO_R9C.result as Json), ledger_index: p.ledger_index, ledger_hash: AT.blockHash, validated: true } } };
        return { body: NOT_FOUND };
      }
      return { body: { result: { error: 'unknownCmd', status: 'error' } } };
    });
  });
  after(async () => server?.close());

  const reader = () => new XrpBalanceReader({ url: server.url }, { retry: { attempts: 1, backoffMs: 0 } });

  it('the plugin builds it', () => {
    const chain = testChain({ id: 106, code: 'XRP', name: 'XRP Ledger Testnet', family: 'xrp', environment: 'test', network: 'testnet', nativeSymbol: 'XRP', decimals: 6, confirmations: 1 });
    expect(plugin.create(chain).createBalanceReader!({ url: server.url })).to.be.instanceOf(XrpBalanceReader);
  });

  it('head: the validated ledger and its hash; history from server_info complete_ledgers', async () => {
    const r = reader();
    expect(r.history).to.deep.equal({ kind: 'recent', depth: 0n });
    expect(await r.head()).to.deep.equal({ height: 100972465n, blockHash: '9DAAAE85FC0D64E95506608FDB48E8B77706EF64FF144F18EEBC2FC4366D9B20' });
    expect(r.history).to.deep.equal({ kind: 'archive' });
    // test-made: the same answer from a server with online_delete (2000 ledgers held)
    serverInfo = { result: { ...(SERVER_INFO.result as Json), info: { ...((SERVER_INFO.result as Json).info as Json), complete_ledgers: '82519761-82521761' } } };
    await r.head();
    expect(r.history).to.deep.equal({ kind: 'recent', depth: 2000n });
    serverInfo = SERVER_INFO;
  });

  it('whole balances in drops at exactly the ledger asked, in order, each account asked once; an unfunded account is NO_ACCOUNT', async () => {
    const since = server.requests.length;
    const { at, answers } = await reader().balancesAt([
      { address: R9C, contract: null }, { address: RKP, contract: null }, { address: RG1, contract: null }, { address: R9C, contract: null },
    ], AT);
    expect(at).to.deep.equal(AT);
    expect(answers).to.deep.equal([{ kind: 'AMOUNT', amount: 922_913_243n }, { kind: 'NO_ACCOUNT' }, { kind: 'AMOUNT', amount: 9986n }, { kind: 'AMOUNT', amount: 922_913_243n }]);
    const asked = calls(since);
    expect(asked.map((c) => c.params[0].account).sort()).to.deep.equal([R9C, RKP, RG1].sort());
    for (const c of asked) {
      expect(c.method).to.equal('account_info');
      expect(c.params[0].ledger_index).to.equal(56843712);
    }
  });

  it('an answer of another ledger, or a ledger the server does not hold, is an error, never a balance', async () => {
    const r = reader();
    const other = await r.balancesAt([{ address: RG1, contract: null }], { height: 56843713n, blockHash: null }).then(() => null, (e: unknown) => e);
    expect((other as ChainRpcError).errorName).to.equal('RPC_BAD_RESPONSE');
    const old = await r.balancesAt([{ address: RG1, contract: null }], { height: 5n, blockHash: null }).then(() => null, (e: unknown) => e);
    expect(old).to.be.instanceOf(ChainRpcError);
    expect((old as ChainRpcError).nodeCode).to.equal('lgrNotFound');
  });

  it('refuses a bad address or a token before any request', async () => {
    const r = reader();
    const since = server.requests.length;
    for (const q of [{ address: 'rNOPE', contract: null }, { address: RG1, contract: 'USD:rhub8VRN55s94qWKDv6jmDy1pUykJzF3wq' }, { address: 'XV5sbjUmgPpvXv4ixFWZ5ptAYZ6PD28Sq49uo34VyjnmK5H', contract: null }]) {
      const e = await r.balancesAt([q], AT).then(() => null, (x: unknown) => x);
      expect(e, q.address).to.be.instanceOf(TypeError);
    }
    expect(await r.balancesAt([], AT)).to.deep.equal({ at: AT, answers: [] });
    expect(server.requests.length).to.equal(since);
  });

  it('historyOfCompleteLedgers', () => {
    expect(historyOfCompleteLedgers('32570-82521761', 82521761)).to.deep.equal({ kind: 'archive' });
    expect(historyOfCompleteLedgers('1-10,20000-40000', 40000)).to.deep.equal({ kind: 'archive' });
    expect(historyOfCompleteLedgers('1-10,40000-50000', 45000)).to.deep.equal({ kind: 'recent', depth: 5000n });
    expect(historyOfCompleteLedgers('50000-60000,70000-90000', 80000)).to.deep.equal({ kind: 'recent', depth: 10000n });
    expect(historyOfCompleteLedgers('empty', 8000)).to.deep.equal({ kind: 'recent', depth: 0n });
  });
});
