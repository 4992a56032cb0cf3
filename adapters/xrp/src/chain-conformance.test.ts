import { join } from 'node:path';
import { decode, hashes } from 'xrpl';
import { fixtureReader, runChainConformance, signersByAddress, startReplayServer, testChain, type Reply } from '@wcs/core/testing';
import { plugin } from './index';
import { asJsonRpc, submitAnswerFor, txAnswerFor, type Json } from './rippled.test-helper';
import { hotKey } from './transfer.test-helper';

/**
 * The shared chain suite on recorded rippled answers (src/fixtures, sources in SOURCE.md),
 * replayed by a local JSON-RPC server: no XRP node is reachable from the test environment.
 *
 * - deposit: the recorded mainnet account_tx page of r3pz… (`rippled-account_tx-r3pz.ws.json`,
 *   served in its JSON-RPC form as the scanner tests do): payment 7F47A8AE… of 20 XRP with
 *   DestinationTag 0. The server keeps the entries at or above `ledger_index_min` as rippled does
 *   (the recorded page has no marker: the history ends there), so the read after the scanner's
 *   cursor answers only the cursor's own ledger, which the scanner skips.
 * - transfer (offline: live false): a payment from the crafter tests' hot key (hotKey(0)) to
 *   r3pz… with tag 4774246 (both recorded), on the recorded `fee` (10 drops), validated `ledger`
 *   (100972465) and `account_info` (rippled-account_info-queue: Sequence 6, queued up to 10).
 *   **Changed:** account_info's `account_data.Account` is the hot key's address (the recorded
 *   record belongs to rG1QQ…; the node checks it answers for the account asked).
 *   The submit is answered by the recorded tesSUCCESS answer and the status, once settled, by the
 *   recorded validated C53ECF83… `tx` answer, each with tx_blob / tx_json / hash replaced by the
 *   transaction sent, exactly as the end-to-end test of src/transfer-node.test.ts does (its
 *   helpers, shared in rippled.test-helper.ts). Before settle() the same `tx` answer with
 *   `validated: false` (PENDING, test-made as in the transfer-node tests); any other hash is the
 *   recorded txnNotFound.
 */
const FIXTURES = fixtureReader(join(__dirname, '../src/fixtures'));
const fixture = (name: string): Json => FIXTURES.json(name);

const XRP = testChain({ id: 6, code: 'XRP', name: 'XRP Ledger', family: 'xrp', environment: 'live', network: 'mainnet', nativeSymbol: 'XRP', decimals: 6, confirmations: 1 });
const R3PZ = 'r3pzYrVu7oruSJh1jhACmb6wRDkTWVw1JJ';

const ACCOUNT_TX = asJsonRpc(fixture('rippled-account_tx-r3pz.ws.json'));
const FEE = asJsonRpc(fixture('rippled-fee.ws.json'));
const LEDGER = fixture('rippled-ledger-validated.jsonrpc.json');
const ACCOUNT_QUEUE = fixture('rippled-account_info-queue.jsonrpc.json');
const SUBMIT_OK = fixture('rippled-submit-tesSUCCESS.jsonrpc.json');
const TX_V2 = fixture('rippled-tx-OfferCreate-C53ECF83.jsonrpc.json');
const TX_NOT_FOUND = fixture('rippled-error-txnNotFound.jsonrpc.json');

const hot = hotKey(0);
/** Balance section: rG1QQ… (recorded account_info at validated ledger 56843712, 9986 drops) and rKp7K… (recorded actNotFound). */
const RG1 = 'rG1QQv2nh2gr7RCZ1P8YYcBUKCCN633jCn';
const RKP = 'rKp7KgcYjdEQepQLc27ZHz76ukLwE4S1CN';

/**
 * account_info at a validated ledger (the balance reader): rG1QQ…'s recorded answer as the answer
 * of the ledger asked (**changed:** ledger_index and ledger_hash, recorded at 56843712, are the
 * ledger asked and the recorded validated ledger's hash); any other account the recorded actNotFound.
 */
function accountInfoAt(p: Json): Json {
  if (p.account !== RG1) return fixture('rippled-error-actNotFound.jsonrpc.json');
  const recorded = fixture('rippled-account_info-validated.cli.json').result as Json;
  return { result: { ...recorded, ledger_index: p.ledger_index, ledger_hash: (LEDGER.result as Json).ledger_hash } };
}

/** The recorded account_tx page as rippled answers `ledger_index_min`: its entries in that ledger or later. */
function accountTx(params: Json): Json {
  const result = ACCOUNT_TX.result as Json;
  const min = typeof params.ledger_index_min === 'number' ? params.ledger_index_min : -1;
  const entries = (result.transactions as Json[]).filter((e) => min === -1 || ((e.tx as Json).ledger_index as number) >= min);
  return { result: { ...result, transactions: entries } };
}

/** The recorded account_info with the account swapped for the hot key's (see the header). */
function accountInfo(): Json {
  const result = ACCOUNT_QUEUE.result as Json;
  return { result: { ...result, account_data: { ...(result.account_data as Json), Account: hot.address } } };
}

runChainConformance({
  adapter: plugin.create(XRP),
  node: 'recorded rippled answers (src/fixtures/SOURCE.md), replayed',
  balances: true,
  async start() {
    let settled = false;
    let sent: string | null = null; // the blob submitted
    const server = await startReplayServer((req): Reply => {
      const { method, params } = JSON.parse(req.body) as { method: string; params: Json[] };
      const p = params[0] ?? {};
      switch (method) {
        case 'account_tx':
          return { body: accountTx(p) };
        case 'ledger':
          return { body: LEDGER };
        case 'fee':
          return { body: FEE };
        case 'account_info':
          if (typeof p.ledger_index === 'number') return { body: accountInfoAt(p) };
          return p.account === hot.address ? { body: accountInfo() } : { body: fixture('rippled-error-actNotFound.jsonrpc.json') };
        case 'server_info':
          return { body: fixture('rippled-server_info.jsonrpc.json') };
        case 'submit':
          sent = p.tx_blob as string;
          return { body: submitAnswerFor(SUBMIT_OK, sent) };
        case 'tx': {
          if (sent === null || String(p.transaction).toUpperCase() !== hashes.hashSignedTx(sent)) return { body: TX_NOT_FOUND };
          const answer = txAnswerFor(TX_V2, sent);
          return { body: settled ? answer : { result: { ...(answer.result as Json), validated: false } } };
        }
        default:
          return { status: 500, body: `no recorded answer for ${method}` };
      }
    });
    return {
      endpoint: { url: server.url },
      deposit: {
        address: R3PZ,
        expected: { txHash: '7F47A8AE1A17EE6D7EF47E5732ED99F17D5514EEE29E5D77AD8AC56556B7390B', toAddress: R3PZ, memo: '0', contract: null, amount: 20_000_000n, succeeded: true },
      },
      transfer: {
        from: { address: hot.address, publicKey: { curve: 'secp256k1', bytes: hot.publicKey } },
        to: R3PZ, memo: '4774246', contract: null, amount: 25_000_000n, live: false,
        // xrpl.js decodes the signed blob
        verify(signed) {
          const tx = decode(Buffer.from(signed.raw).toString('hex').toUpperCase()) as Json;
          return { from: tx.Account as string, to: tx.Destination as string, amount: BigInt(tx.Amount as string), memo: tx.DestinationTag === undefined ? null : String(tx.DestinationTag) };
        },
      },
      balances: {
        expected: [
          { query: { address: RG1, contract: null }, answer: { kind: 'AMOUNT', amount: 9986n } },
          { query: { address: RKP, contract: null }, answer: { kind: 'NO_ACCOUNT' } },
        ],
        badAddress: 'rNOTANADDRESS',
      },
      sign: signersByAddress([[hot.address, (p: Uint8Array) => hot.sign(p)]]),
      async settle() {
        settled = true;
      },
      close: () => server.close(),
    };
  },
});
