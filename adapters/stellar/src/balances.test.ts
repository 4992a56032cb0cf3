import { expect } from 'chai';
import { join } from 'node:path';
import { ChainRpcError } from '@wcs/core';
import { fixtureReader, startReplayServer, testChain, type ReplayServer, type Reply } from '@wcs/core/testing';
import { StellarBalanceReader } from './balances';
import { plugin } from './index';

/**
 * The Stellar balance reader on recorded Horizon answers (src/fixtures, SOURCE.md): GAYOLL…'s
 * account record (72.8563792 XLM, EURT 3 and USD 4 trustlines) and Horizon's 404 problem
 * document. Test-made (said in SOURCE.md): the root's history_latest_ledger is the one the test
 * chooses, since the recorded root (84959) is of another network than the recorded account.
 */
const FIXTURES = fixtureReader(join(__dirname, '../src/fixtures'));
const ACCOUNT = FIXTURES.json<Record<string, unknown>>('horizon-account-GAYOLL.json');
const ROOT = FIXTURES.json<Record<string, unknown>>('horizon-root.json');
const NOT_FOUND = FIXTURES.json<Record<string, unknown>>('horizon-not-found.json');
const GAYOLL = 'GAYOLLLUIZE4DZMBB2ZBKGBUBZLIOYU6XFLW37GBP2VZD3ABNXCW4BVA';
const EURT = 'EURT:GAP5LETOV6YIE62YAM56STDANPRDO7ZFDBGSNHJQIYGGKSMOZAHOOS2S';
const USD = 'USD:GDUKMGUGDZQK6YHYA5Z6AY2G4XDSZPSZ3SW5UN3ARVMO6QSRDWP5YLEX';
const USDC = 'USDC:GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN';
/** A valid account with no record on the recorded network. */
const UNFUNDED = 'GADQOBYHA4DQOBYHA4DQOBYHA4DQOBYHA4DQOBYHA4DQOBYHA4DQOZPI'; // the key of 32 bytes 0x07

describe('StellarBalanceReader (recorded Horizon answers)', () => {
  let server: ReplayServer;
  /** history_latest_ledger of the next root answers (the last one stays). */
  let roots: number[] = [];

  before(async () => {
    server = await startReplayServer((req): Reply => {
      if (req.path === '/') return { body: { ...ROOT, history_latest_ledger: roots.length > 1 ? roots.shift()! : roots[0]! } };
      if (req.path === `/accounts/${GAYOLL}`) return { body: ACCOUNT };
      if (req.path.startsWith('/accounts/')) return { status: 404, body: NOT_FOUND, contentType: 'application/problem+json' };
      return { status: 404, body: NOT_FOUND };
    });
  });
  after(async () => server?.close());

  const reader = () => new StellarBalanceReader({ url: server.url }, { retry: { attempts: 1, backoffMs: 0 } });

  it('the plugin builds it', () => {
    const chain = testChain({ id: 107, code: 'XLM', name: 'Stellar Testnet', family: 'stellar', environment: 'test', network: 'testnet', nativeSymbol: 'XLM', decimals: 7, confirmations: 1 });
    expect(plugin.create(chain).createBalanceReader!({ url: server.url })).to.be.instanceOf(StellarBalanceReader);
  });

  it('XLM and trustline balances in order; an unfunded account and a missing trustline are NO_ACCOUNT; the account read once', async () => {
    roots = [28105900];
    const r = reader();
    expect(r.history).to.deep.equal({ kind: 'head' });
    const head = await r.head();
    expect(head).to.deep.equal({ height: 28105900n, blockHash: null });
    const before = server.requests.length;
    const { at, answers } = await r.balancesAt([
      { address: GAYOLL, contract: USD }, { address: GAYOLL, contract: null }, { address: UNFUNDED, contract: null },
      { address: GAYOLL, contract: USDC }, { address: GAYOLL, contract: EURT }, { address: UNFUNDED, contract: USD },
    ], head);
    expect(at).to.deep.equal(head);
    expect(answers).to.deep.equal([
      { kind: 'AMOUNT', amount: 40_000_000n }, { kind: 'AMOUNT', amount: 728_563_792n }, { kind: 'NO_ACCOUNT' },
      { kind: 'NO_ACCOUNT' }, { kind: 'AMOUNT', amount: 30_000_000n }, { kind: 'NO_ACCOUNT' },
    ]);
    expect(server.requests.slice(before).map((q) => q.path).sort()).to.deep.equal(['/', `/accounts/${GAYOLL}`, `/accounts/${UNFUNDED}`].sort());
  });

  it('an entry modified after the ledger read first is read again at a later ledger; always so: RPC_INCONSISTENT', async () => {
    // GAYOLL's account was last modified in ledger 28105812, its trustlines in 27984507 and 27985131
    roots = [28105811, 28105812];
    const r = reader();
    const { at } = await r.balancesAt([{ address: GAYOLL, contract: EURT }], { height: 1n, blockHash: null });
    expect(at.height).to.equal(28105812n);
    roots = [27985130];
    const e = await r.balancesAt([{ address: GAYOLL, contract: null }], { height: 1n, blockHash: null }).then(() => null, (x: unknown) => x);
    expect(e).to.be.instanceOf(ChainRpcError);
    expect((e as ChainRpcError).errorName).to.equal('RPC_INCONSISTENT');
  });

  it('refuses a bad account or asset before any request', async () => {
    const r = reader();
    const before = server.requests.length;
    for (const q of [
      { address: 'GAYOLL', contract: null }, { address: GAYOLL, contract: 'USD' }, { address: GAYOLL, contract: 'USD:GABC' },
      { address: `M${GAYOLL.slice(1)}`, contract: null },
    ]) {
      const e = await r.balancesAt([q], { height: 1n, blockHash: null }).then(() => null, (x: unknown) => x);
      expect(e, JSON.stringify(q)).to.be.instanceOf(TypeError);
    }
    expect(await r.balancesAt([], { height: 5n, blockHash: null })).to.deep.equal({ at: { height: 5n, blockHash: null }, answers: [] });
    expect(server.requests.length).to.equal(before);
  });
});
