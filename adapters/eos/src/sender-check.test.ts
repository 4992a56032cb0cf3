import { expect } from 'chai';
import path from 'node:path';
import { ChainRpcError, type SenderCheck } from '@wcs/core';
import { fixtureReader, memoryLedger, rejected, startReplayServer, type ReplayServer } from '@wcs/core/testing';
import { ACTION_PAGE } from './sender-check';
import { EosTransferNode } from './transfer-node';
import { hyperion } from './scanner.test-helper';

// Recorded node answers in src/fixtures (read from dist); SOURCE.md says where each comes from.
type Json = Record<string, any>;
const RECORDED = fixtureReader(path.join(__dirname, '../src/fixtures')).json<Json>('hyperion.get_transaction.4c66c16b.json');
/** The recorded action: crosschaino2 → crosschaino3, 0.0100 EOS, authorized by crosschaino2 and cordialsysaa. */
const ACTION = RECORDED.actions[0] as Json;
const TRX = ACTION.trx_id as string;
const INFO = 'get_info.jungle4.209672971.json';

/** Test-made: the recorded action as another transaction (trx_id and global_sequence changed, nothing else). */
const variant = (n: number): Json => ({ ...ACTION, trx_id: n.toString(16).padStart(64, '0'), global_sequence: ACTION.global_sequence + n });

describe('EosTransferNode.senderCheck (recorded Hyperion action documents)', () => {
  let server: ReplayServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  async function nodeOver(actions: Json[]): Promise<EosTransferNode> {
    server = await startReplayServer(hyperion({ info: INFO, actions }));
    return new EosTransferNode({ url: server.url }, { backoffMs: 1, attempts: 2 });
  }
  const ahead = (c: SenderCheck) => {
    expect(c.kind, JSON.stringify(c)).to.equal('AHEAD');
    return c as Extract<SenderCheck, { kind: 'AHEAD' }>;
  };

  it('an action the account authorized in a transaction the database does not know is AHEAD (each authorizer); the receiver\'s is not its own', async () => {
    const node = await nodeOver([ACTION]);
    const found = ahead(await node.senderCheck('crosschaino2', memoryLedger()));
    expect(found.evidence).to.deep.equal({ kind: 'UNKNOWN_TRANSACTIONS', transactions: [TRX] });
    expect(found.summary).to.contain('crosschaino2').and.contain(TRX);
    expect(ahead(await node.senderCheck('cordialsysaa', memoryLedger())).evidence).to.deep.equal({ kind: 'UNKNOWN_TRANSACTIONS', transactions: [TRX] });
    expect(await node.senderCheck('crosschaino3', memoryLedger())).to.deep.equal({ kind: 'AGREES' });
    const asked = new URL(server!.requests.at(-1)!.url, 'http://x').searchParams;
    expect(Object.fromEntries(asked)).to.deep.equal({ account: 'crosschaino3', sort: 'desc', limit: String(ACTION_PAGE) });
  });

  it('AGREES when the database knows the transaction, and for an account with no history', async () => {
    const node = await nodeOver([ACTION, variant(1)]);
    const ledger = memoryLedger({ known: new Set([TRX, variant(1).trx_id]) });
    expect(await node.senderCheck('crosschaino2', ledger)).to.deep.equal({ kind: 'AGREES' });
    expect(ledger.calls).to.deep.equal(['knownTransactions']);
    expect(ahead(await node.senderCheck('crosschaino2', memoryLedger({ known: new Set([TRX]) }))).evidence.kind).to.equal('UNKNOWN_TRANSACTIONS');
    expect(await node.senderCheck('nobodyhere11', memoryLedger())).to.deep.equal({ kind: 'AGREES' });
  });

  it(`a full page (${ACTION_PAGE}) of actions the account received, none known to the database, is UNCHECKED; one known makes it AGREES`, async () => {
    const page = Array.from({ length: ACTION_PAGE }, (_, i) => variant(i + 10));
    const node = await nodeOver(page);
    const unchecked = await node.senderCheck('crosschaino3', memoryLedger());
    expect(unchecked.kind).to.equal('UNCHECKED');
    expect((unchecked as Extract<SenderCheck, { kind: 'UNCHECKED' }>).reason).to.contain('older ones are not read');
    expect(await node.senderCheck('crosschaino3', memoryLedger({ known: new Set([page[50]!.trx_id]) }))).to.deep.equal({ kind: 'AGREES' });
  });

  it('an endpoint without Hyperion\'s history API is UNCHECKED; an unreadable answer is RPC_ERROR; a bad account name TypeError', async () => {
    server = await startReplayServer(() => ({ status: 404, body: '{"statusCode":404,"error":"Not Found","message":"Route not found"}' }));
    const bare = new EosTransferNode({ url: server.url }, { backoffMs: 1, attempts: 2 });
    const unchecked = await bare.senderCheck('crosschaino2', memoryLedger());
    expect(unchecked.kind).to.equal('UNCHECKED');
    expect((unchecked as Extract<SenderCheck, { kind: 'UNCHECKED' }>).reason).to.contain('no Hyperion history API');
    await server.close();
    server = await startReplayServer(() => ({ status: 200, body: JSON.stringify({ actions: [{ act: {} }] }) }));
    await rejected(new EosTransferNode({ url: server.url }, { backoffMs: 1, attempts: 2 }).senderCheck('crosschaino2', memoryLedger()), ChainRpcError);
    await rejected(bare.senderCheck('Not An Account', memoryLedger()), TypeError);
  });
});
