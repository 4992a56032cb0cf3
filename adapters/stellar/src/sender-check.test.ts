import { expect } from 'chai';
import { join } from 'node:path';
import { Networks } from '@stellar/stellar-sdk';
import { ChainRpcError, type SenderCheck } from '@wcs/core';
import { fixtureReader, memoryLedger, rejected, startReplayServer, type ReplayServer } from '@wcs/core/testing';
import { StellarTransferNode } from './index';

/**
 * StellarTransferNode.senderCheck against recorded Horizon answers (src/fixtures, sources in
 * SOURCE.md) replayed by a local HTTP server. What the test changes in a recorded answer is said
 * where it does it.
 */
const FIXTURES = fixtureReader(join(__dirname, '../src/fixtures'));
type Json = Record<string, unknown>;
const ACCOUNT = FIXTURES.json<Json>('horizon-account-GAYOLL.json'); // sequence 120192344791187470
const NOT_FOUND = FIXTURES.json<Json>('horizon-not-found.json');
/** The two recorded transactions of GBVFTZ… paying GAYOLL… (source GBVFTZ…), newest first as Horizon pages them. */
const GBVFTZ_TXS = FIXTURES.json<Json[]>('horizon-account-transactions-GBVFTZ-excerpt.json').slice().reverse();
const GAYOLL = 'GAYOLLLUIZE4DZMBB2ZBKGBUBZLIOYU6XFLW37GBP2VZD3ABNXCW4BVA';
const GBVFTZ = 'GBVFTZL5HIPT4PFQVTZVIWR77V7LWYCXU4CLYWWHHOEXB64XPG5LDMTU';
const NEXT = 120192344791187471n;
/** A page of records as Horizon serves one (test-made envelope: the recorded records inside `_embedded`). */
const page = (records: Json[]) => ({ _links: {}, _embedded: { records } });
/** Test-made: GAYOLL…'s recorded account record as if of `account` (account_id and id replaced, nothing else). */
const accountOf = (account: string) => ({ ...ACCOUNT, account_id: account, id: account });

describe('StellarTransferNode.senderCheck (recorded Horizon answers)', () => {
  let server: ReplayServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  async function nodeFor(routes: Record<string, Json>): Promise<StellarTransferNode> {
    server = await startReplayServer((req) => {
      const a = routes[`${req.method} ${req.path}`];
      return a === undefined ? { status: 404, body: NOT_FOUND } : { body: a };
    });
    return new StellarTransferNode({ url: server.url }, Networks.TESTNET, { retry: { attempts: 2, backoffMs: 1 } });
  }
  const paths = () => server!.requests.map((r) => r.path);
  const ahead = (c: SenderCheck) => {
    expect(c.kind).to.equal('AHEAD');
    return c as Extract<SenderCheck, { kind: 'AHEAD' }>;
  };

  it('the account\'s sequence + 1 against the database\'s next: AGREES at or past it, AHEAD below', async () => {
    const node = await nodeFor({ [`GET /accounts/${GAYOLL}`]: ACCOUNT });
    const at = (n: bigint) => memoryLedger({ nextSequences: new Map([[GAYOLL, n]]) });
    expect(await node.senderCheck(GAYOLL, at(NEXT))).to.deep.equal({ kind: 'AGREES' });
    expect(await node.senderCheck(GAYOLL, at(NEXT + 3n))).to.deep.equal({ kind: 'AGREES' });
    const found = ahead(await node.senderCheck(GAYOLL, at(NEXT - 2n)));
    expect(found.evidence).to.deep.equal({ kind: 'SEQUENCE', databaseNext: NEXT - 2n, chainNext: NEXT, pendingNext: null });
    expect(found.summary).to.contain(GAYOLL).and.contain(String(NEXT));
    expect(paths().every((p) => p === `/accounts/${GAYOLL}`)).to.equal(true);
  });

  it('an account that does not exist has sent nothing', async () => {
    const node = await nodeFor({});
    expect(await node.senderCheck(GAYOLL, memoryLedger())).to.deep.equal({ kind: 'AGREES' });
  });

  it('nothing signed from the account: its latest transactions; one it is the source of that the database does not know is AHEAD', async () => {
    const node = await nodeFor({ [`GET /accounts/${GBVFTZ}`]: accountOf(GBVFTZ), [`GET /accounts/${GBVFTZ}/transactions`]: page(GBVFTZ_TXS) });
    const hashes = GBVFTZ_TXS.map((r) => r.hash as string);
    const found = ahead(await node.senderCheck(GBVFTZ, memoryLedger()));
    expect(found.evidence).to.deep.equal({ kind: 'UNKNOWN_TRANSACTIONS', transactions: hashes });
    expect(found.summary).to.contain('2 transactions');
    expect(server!.requests.at(-1)!.url).to.contain('order=desc').and.contain('limit=20');
    expect(ahead(await node.senderCheck(GBVFTZ, memoryLedger({ known: new Set([hashes[0]!]) }))).evidence).to.deep.equal({ kind: 'UNKNOWN_TRANSACTIONS', transactions: [hashes[1]] });
    expect(await node.senderCheck(GBVFTZ, memoryLedger({ known: new Set(hashes) }))).to.deep.equal({ kind: 'AGREES' });
  });

  it('nothing signed: a whole history of payments received only is AGREES; a full page of them is UNCHECKED', async () => {
    // the same two records are GAYOLL…'s history: it received both
    let node = await nodeFor({ [`GET /accounts/${GAYOLL}`]: ACCOUNT, [`GET /accounts/${GAYOLL}/transactions`]: page(GBVFTZ_TXS) });
    expect(await node.senderCheck(GAYOLL, memoryLedger())).to.deep.equal({ kind: 'AGREES' });
    await server!.close();
    // test-made: a full page (20 records: the two recorded ones repeated) of payments received
    node = await nodeFor({ [`GET /accounts/${GAYOLL}`]: ACCOUNT, [`GET /accounts/${GAYOLL}/transactions`]: page(Array.from({ length: 20 }, (_, i) => GBVFTZ_TXS[i % 2]!)) });
    const unchecked = await node.senderCheck(GAYOLL, memoryLedger());
    expect(unchecked.kind).to.equal('UNCHECKED');
    expect((unchecked as Extract<SenderCheck, { kind: 'UNCHECKED' }>).reason).to.contain('older ones are not read');
  });

  it('refuses an address that is not a Stellar account; an unreadable answer is RPC_ERROR', async () => {
    const node = await nodeFor({ [`GET /accounts/${GAYOLL}`]: ACCOUNT, [`GET /accounts/${GAYOLL}/transactions`]: { _embedded: {} } });
    await rejected(node.senderCheck('GNOTANACCOUNT', memoryLedger()), TypeError);
    await rejected(node.senderCheck(GAYOLL, memoryLedger()), ChainRpcError);
  });
});
