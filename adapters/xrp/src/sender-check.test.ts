import { expect } from 'chai';
import { join } from 'node:path';
import type { SenderCheck } from '@wcs/core';
import { ChainRpcError } from '@wcs/core';
import { fixtureReader, memoryLedger, rejected, startReplayServer, type ReplayServer, type SeenRequest } from '@wcs/core/testing';
import { XrpTransferNode } from './index';
import { asJsonRpc, type Json } from './rippled.test-helper';

/**
 * XrpTransferNode.senderCheck against recorded rippled answers (src/fixtures, sources in
 * SOURCE.md) replayed by a local HTTP server. What the test changes in a recorded answer is said
 * where it does it.
 */
const FIXTURES = fixtureReader(join(__dirname, '../src/fixtures'));
const fixture = (name: string): Json => FIXTURES.json(name);
const ACCOUNT_QUEUE = fixture('rippled-account_info-queue.jsonrpc.json'); // rG1QQ…, Sequence 6 in the open ledger, queued 6..10
const ACCOUNT_XRPLJS = asJsonRpc(fixture('xrpl-account_info.ws.json')); // r9cZA…, Sequence 23, no queue data
const ACT_NOT_FOUND = fixture('rippled-error-actNotFound.jsonrpc.json');
const TX_R3PZ = asJsonRpc(fixture('rippled-account_tx-r3pz.ws.json')); // three entries, one sent by r3pz (D7D181E7…, tec), no marker
const TX_RLNAPO = asJsonRpc(fixture('rippled-account_tx-rLNaPo-page1.ws.json')); // a deposit, one sent by rLNaPo (D58864C1…), a marker
const TX_RLNAPO_V2 = fixture('rippled-account_tx-rLNaPo-v2.jsonrpc.json'); // API v2: two TrustSets by another account, a marker
const R_QUEUE = 'rG1QQv2nh2gr7RCZ1P8YYcBUKCCN633jCn';
const R_XRPLJS = 'r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59';
const R3PZ = 'r3pzYrVu7oruSJh1jhACmb6wRDkTWVw1JJ';
const RLNAPO = 'rLNaPoKeeBjZe2qs6x52yVPZpZ8td4dc6w';

/** Test-made: the recorded account_info answer of r9cZA… (Sequence 23) as if for `account` (only account_data.Account changed), to pair with that account's recorded history. */
function accountInfoOf(account: string): Json {
  const r = ACCOUNT_XRPLJS.result as Json;
  return { result: { ...r, account_data: { ...(r.account_data as Json), Account: account } } };
}
const sentHash = (page: Json, account: string) => ((page.result as Json).transactions as Json[]).map((e) => (e.tx ?? e.tx_json) as Json).filter((t) => t.Account === account).map((t) => t.hash as string);

describe('XrpTransferNode.senderCheck (recorded rippled answers)', () => {
  let server: ReplayServer | undefined;
  let methods: string[] = [];
  afterEach(async () => {
    await server?.close();
    server = undefined;
    methods = [];
  });
  async function nodeFor(answers: Record<string, Json>): Promise<XrpTransferNode> {
    server = await startReplayServer((req: SeenRequest) => {
      const body = JSON.parse(req.body) as { method: string; params: Json[] };
      methods.push(body.method);
      const a = answers[body.method];
      return a === undefined ? { status: 500, body: `no answer for ${body.method}` } : { body: a };
    });
    return new XrpTransferNode({ url: server.url }, { retry: { attempts: 2, backoffMs: 1 } });
  }
  const ahead = (c: SenderCheck) => {
    expect(c.kind).to.equal('AHEAD');
    return c as Extract<SenderCheck, { kind: 'AHEAD' }>;
  };

  it('the account\'s Sequence and its queue against the database\'s next: AGREES at or past them, AHEAD below', async () => {
    const node = await nodeFor({ account_info: ACCOUNT_QUEUE });
    const at = (n: bigint) => memoryLedger({ nextSequences: new Map([[R_QUEUE, n]]) });
    expect(await node.senderCheck(R_QUEUE, at(11n))).to.deep.equal({ kind: 'AGREES' });
    expect(await node.senderCheck(R_QUEUE, at(14n))).to.deep.equal({ kind: 'AGREES' });
    // the database's next is 6: the open ledger agrees, but this server queues 6..10 that the database does not know
    const queued = ahead(await node.senderCheck(R_QUEUE, at(6n)));
    expect(queued.evidence).to.deep.equal({ kind: 'SEQUENCE', databaseNext: 6n, chainNext: 6n, pendingNext: 11n });
    expect(queued.summary).to.contain(R_QUEUE).and.contain("6 (11 with the node's pool)");
    expect(ahead(await node.senderCheck(R_QUEUE, at(4n))).evidence).to.deep.include({ chainNext: 6n, databaseNext: 4n });
    expect(methods.every((m) => m === 'account_info'), 'with an allocator, no history is read').to.equal(true);
  });

  it('without queue data the Sequence alone; an account that does not exist has sent nothing', async () => {
    let node = await nodeFor({ account_info: ACCOUNT_XRPLJS });
    expect(await node.senderCheck(R_XRPLJS, memoryLedger({ nextSequences: new Map([[R_XRPLJS, 23n]]) }))).to.deep.equal({ kind: 'AGREES' });
    expect(ahead(await node.senderCheck(R_XRPLJS, memoryLedger({ nextSequences: new Map([[R_XRPLJS, 22n]]) }))).evidence)
      .to.deep.equal({ kind: 'SEQUENCE', databaseNext: 22n, chainNext: 23n, pendingNext: null });
    await server!.close();
    node = await nodeFor({ account_info: ACT_NOT_FOUND });
    expect(await node.senderCheck(R_XRPLJS, memoryLedger())).to.deep.equal({ kind: 'AGREES' });
  });

  it('nothing signed from the account: its latest transactions; one it sent that the database does not know is AHEAD, all known AGREES', async () => {
    const node = await nodeFor({ account_info: accountInfoOf(R3PZ), account_tx: TX_R3PZ });
    const [sent] = sentHash(TX_R3PZ, R3PZ);
    const lost = ahead(await node.senderCheck(R3PZ, memoryLedger()));
    expect(lost.evidence).to.deep.equal({ kind: 'UNKNOWN_TRANSACTIONS', transactions: [sent] });
    expect(lost.summary).to.contain(R3PZ).and.contain(sent!);
    expect(methods).to.deep.equal(['account_info', 'account_tx']);
    // the same transaction known (a released hold accepted it): the whole history is read, nothing unknown
    expect(await node.senderCheck(R3PZ, memoryLedger({ known: new Set([sent!]) }))).to.deep.equal({ kind: 'AGREES' });
  });

  it('nothing signed: a page with older history beyond holding nothing the account sent is UNCHECKED; one holding a sent transaction is AHEAD (API v1 and v2 shapes)', async () => {
    let node = await nodeFor({ account_info: accountInfoOf(RLNAPO), account_tx: TX_RLNAPO_V2 });
    const unchecked = await node.senderCheck(RLNAPO, memoryLedger());
    expect(unchecked.kind).to.equal('UNCHECKED');
    expect((unchecked as Extract<SenderCheck, { kind: 'UNCHECKED' }>).reason).to.contain('older ones are not read');
    await server!.close();
    node = await nodeFor({ account_info: accountInfoOf(RLNAPO), account_tx: TX_RLNAPO });
    expect(ahead(await node.senderCheck(RLNAPO, memoryLedger())).evidence).to.deep.equal({ kind: 'UNKNOWN_TRANSACTIONS', transactions: sentHash(TX_RLNAPO, RLNAPO) });
  });

  it('refuses an address that is not a classic XRP address; a node error is thrown', async () => {
    const node = await nodeFor({ account_info: fixture('rippled-error-ledgerIndexMalformed.jsonrpc.json') });
    await rejected(node.senderCheck('not-an-account', memoryLedger()), TypeError);
    await rejected(node.senderCheck(R_QUEUE, memoryLedger()), ChainRpcError);
  });
});
