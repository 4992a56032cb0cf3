import { join } from 'node:path';
import { Networks, TransactionBuilder, type Transaction } from '@stellar/stellar-sdk';
import { parseUnits } from '@wcs/core';
import { fixtureReader, runChainConformance, signersByAddress, startReplayServer, testChain, type Reply } from '@wcs/core/testing';
import { plugin } from './index';
import { joinedGayollPayments, pageAfter } from './scanner.test-helper';
import { hotKey } from './transfer.test-helper';

/**
 * The shared chain suite on recorded Horizon answers (src/fixtures, sources in SOURCE.md),
 * replayed by a local HTTP server: no Horizon is reachable from the test environment.
 *
 * - deposit: GAYOLL…'s payments with join=transactions, built from the recorded operations and
 *   transactions pages as src/scanner.test.ts builds them (joinedGayollPayments): the
 *   create_account ef0fe04a… of 2 XLM with MEMO_TEXT "hello universe". Pages are served as
 *   Horizon does (ascending, after the cursor); past the last record the recorded empty page
 *   (horizon-empty-page.json) answers. GET / is the recorded root (tipHeight). **Changed:** its
 *   history_latest_ledger is 28105900 (recorded: 84959, a test network's root), a ledger after
 *   GAYOLL…'s recorded last_modified_ledger (28105812), so the balance reader, which checks that
 *   the entries it read are not newer than the ledger it reads at, reads GAYOLL… (balance section:
 *   72.8563792 XLM, its EURT trustline 3, and NO_ACCOUNT for an account without a record).
 * - transfer (offline: live false): 2.5 XLM with MEMO_ID 4242 from the crafter tests' hot key
 *   (hotKey(0), testnet) to GAYOLL… (recorded, it exists), on the recorded fee_stats (199),
 *   latest ledger 27146933 (a page around the recorded record, as the transfer-node tests do) and
 *   account record. **Changed:** the hot key's GET /accounts/{id} answers the recorded GAYOLL
 *   account with `id` and `account_id` swapped for the hot key's address (the node checks the
 *   record is the account asked; the sequence 120192344791187470 is the recorded one).
 *   The POST /transactions is answered by the recorded 8ef0c6d6… success, and GET
 *   /transactions/{hash}, once settled, by the recorded 5ebd5c0a… record, each with `hash`, `id`
 *   and `envelope_xdr` replaced by the transaction sent, as the end-to-end test of
 *   src/transfer-node.test.ts does. Before settle() (and for any other hash) the recorded 404.
 */
const FIXTURES = fixtureReader(join(__dirname, '../src/fixtures'));
type Json = Record<string, unknown>;
const fixture = (name: string): Json => FIXTURES.json(name);

const XLM = testChain({ id: 107, code: 'XLM', name: 'Stellar Testnet', family: 'stellar', environment: 'test', network: 'testnet', nativeSymbol: 'XLM', decimals: 7, confirmations: 1 });
const GAYOLL = 'GAYOLLLUIZE4DZMBB2ZBKGBUBZLIOYU6XFLW37GBP2VZD3ABNXCW4BVA';

const ACCOUNT = fixture('horizon-account-GAYOLL.json');
const NOT_FOUND: Reply = { status: 404, body: fixture('horizon-not-found.json') };
const SUBMITTED = fixture('horizon-submit-success-8ef0c6d6.json');
const TX_RECORD = fixture('horizon-transaction-5ebd5c0a.json');

const hot = hotKey(0);

runChainConformance({
  trustlines: true,
  balances: true,
  adapter: plugin.create(XLM),
  node: 'recorded Horizon answers (src/fixtures/SOURCE.md), replayed',
  async start() {
    const payments = joinedGayollPayments();
    let settled = false;
    let envelope = '';
    let sentHash = '';
    /** A recorded transaction resource as Horizon serves the transaction actually sent: hash, id and envelope_xdr replaced by its own. */
    const ours = (recorded: Json): Json => ({ ...recorded, id: sentHash, hash: sentHash, envelope_xdr: envelope });
    const server = await startReplayServer((req): Reply => {
      const route = `${req.method} ${req.path}`;
      switch (route) {
        case 'GET /':
          return { body: { ...fixture('horizon-root.json'), history_latest_ledger: 28105900 } };
        case `GET /accounts/${GAYOLL}/payments`: {
          const page = pageAfter(payments, req.query);
          return { body: page.length === 0 ? fixture('horizon-empty-page.json') : { _links: {}, _embedded: { records: page } } };
        }
        case 'GET /fee_stats':
          return { body: fixture('horizon-fee-stats.json') };
        case 'GET /ledgers':
          return { body: { _embedded: { records: [fixture('horizon-ledger-27146933.json')] } } };
        case `GET /accounts/${GAYOLL}`:
          return { body: ACCOUNT };
        case `GET /accounts/${hot.address}`:
          return { body: { ...ACCOUNT, id: hot.address, account_id: hot.address } };
        case 'POST /transactions':
          envelope = new URLSearchParams(req.body).get('tx')!;
          sentHash = TransactionBuilder.fromXDR(envelope, Networks.TESTNET).hash().toString('hex');
          return { body: ours(SUBMITTED) };
        case `GET /transactions/${sentHash}`:
          return settled && sentHash !== '' ? { body: ours(TX_RECORD) } : NOT_FOUND;
        default:
          return NOT_FOUND;
      }
    });
    return {
      endpoint: { url: server.url },
      deposit: {
        address: GAYOLL,
        expected: { txHash: 'ef0fe04ac3c7de7228ca2598886059868ad05c224a041e8b2d9ee2a8a9dd6894', toAddress: GAYOLL, memo: 'hello universe', contract: null, amount: 20_000_000n, succeeded: true },
      },
      transfer: {
        from: { address: hot.address, publicKey: { curve: 'ed25519', bytes: hot.publicKey } },
        to: GAYOLL, memo: '4242', contract: null, amount: 25_000_000n, live: false,
        // @stellar/stellar-sdk decodes the signed envelope
        verify(signed) {
          const tx = TransactionBuilder.fromXDR(Buffer.from(signed.raw).toString('base64'), Networks.TESTNET) as Transaction;
          const op = tx.operations[0];
          if (tx.operations.length !== 1 || op?.type !== 'payment') throw new Error(`not one payment: ${tx.operations.map((o) => o.type).join(', ')}`);
          const memo = tx.memo.type === 'none' ? null : String(tx.memo.value);
          return { from: tx.source, to: op.destination, amount: parseUnits(op.amount, 7), memo };
        },
      },
      balances: {
        expected: [
          { query: { address: GAYOLL, contract: null }, answer: { kind: 'AMOUNT', amount: 728_563_792n } },
          { query: { address: 'GADQOBYHA4DQOBYHA4DQOBYHA4DQOBYHA4DQOBYHA4DQOBYHA4DQOZPI', contract: null }, answer: { kind: 'NO_ACCOUNT' } },
          { query: { address: GAYOLL, contract: 'EURT:GAP5LETOV6YIE62YAM56STDANPRDO7ZFDBGSNHJQIYGGKSMOZAHOOS2S' }, answer: { kind: 'AMOUNT', amount: 30_000_000n } },
        ],
        badAddress: 'GAYOLL',
      },
      sign: signersByAddress([[hot.address, (p: Uint8Array) => hot.sign(p)]]),
      async settle() {
        settled = true;
      },
      close: () => server.close(),
    };
  },
});
