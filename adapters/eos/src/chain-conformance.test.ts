import { createHash } from 'node:crypto';
import path from 'node:path';
import { parseUnits } from '@wcs/core';
import { fixtureReader, runChainConformance, signersByAddress, startReplayServer, testChain, type Reply } from '@wcs/core/testing';
import { plugin } from './index';
import { hotPrivateKey, keyFromPrivate } from './keys.test-helper';
import { hyperion } from './scanner.test-helper';
import { decode, executedFor, hyperionMissing } from './transfer-node.test-helper';

/**
 * The shared chain suite on recorded Jungle 4 answers (src/fixtures, sources in SOURCE.md),
 * replayed by a local HTTP server: no Antelope node or Hyperion is reachable from the test
 * environment.
 *
 * - deposit: the recorded eosio.token transfer 4c66c16b… of 0.0100 EOS to crosschaino3 (memo "",
 *   i.e. none), served by Hyperion get_actions in its envelope as src/scanner.test.ts does
 *   (`hyperion()`: the recorded action document, filtered by the query; nothing past the cursor).
 *   get_info is the recorded 209672971 answer (LIB 209672969), which also gives transferInput its
 *   chain id, reference block and expiration; get_currency_stats the recorded EOS stats.
 * - transfer (offline: live false): 1.2345 EOS with memo "42" from the recorded hot account
 *   cordialsysaa to crosschaino2, signed with the crafter tests' hot key (account 1, index 0),
 *   as src/transfer-node.test.ts does (the recorded account's own key is not ours: the crafter
 *   does not read the account's permissions, `controls` does and is not part of the suite).
 *   send_transaction is answered by the recorded executed answer with its transaction id
 *   replaced by the sent one's (`executedFor`, the transfer-node tests' substitution). Status:
 *   get_transaction_status answers the recorded UNKNOWN throughout (a node's finality tracking
 *   forgets a transaction soon; the node then reads Hyperion). Hyperion get_transaction answers
 *   "not found" (the recorded envelope with executed false and no actions, test-made as in the
 *   transfer-node tests: `hyperionMissing`) before settle() and for any other id; after settle()
 *   the recorded 4c66c16b… record with its `trx_id` (top level and action) replaced by the sent
 *   transaction's id: MINED at block 209370387, at or below Hyperion's lib, so irreversible.
 */
const fixtures = fixtureReader(path.join(__dirname, '../src/fixtures'));
type Json = Record<string, any>;

const EOS = testChain({
  id: 108, code: 'EOS', name: 'EOS Jungle Testnet', family: 'eos', environment: 'test', network: 'jungle4', nativeSymbol: 'EOS', decimals: 4, confirmations: 1,
  options: { depositAccount: 'crosschaino3' },
});
const RECORDED = fixtures.json<Json>('hyperion.get_transaction.4c66c16b.json');
const HOT = 'cordialsysaa'; // the recorded get_account's account
const hot = keyFromPrivate(hotPrivateKey(0));

const json = (body: unknown, status = 200): Reply => ({ status, body: typeof body === 'string' ? body : JSON.stringify(body) });

/** The recorded Hyperion record with the transaction id replaced by `id` (see the header). */
function recordOf(id: string): Json {
  return { ...RECORDED, trx_id: id, actions: RECORDED.actions.map((a: Json) => ({ ...a, trx_id: id })) };
}

runChainConformance({
  // an EOS transfer pays no fee (staked or rented CPU / NET pays): maxFee 0, which the suite takes
  adapter: plugin.create(EOS),
  node: 'recorded Jungle 4 nodeos / Hyperion answers (src/fixtures/SOURCE.md), replayed',
  balances: true,
  async start() {
    const history = hyperion({ info: 'get_info.jungle4.209672971.json', actions: [RECORDED.actions[0]] });
    let settled = false;
    let sent = '';
    const server = await startReplayServer((req): Reply => {
      switch (`${req.method} ${req.path}`) {
        case 'POST /v1/chain/get_info':
        case 'GET /v2/history/get_actions':
          return history(req);
        case 'POST /v1/chain/get_currency_stats':
          return json(fixtures.text('get_currency_stats.EOS.json'));
        // balance section: eosio's recorded EOS row; any other (token, account) no row (`[]`, test-made as nodeos answers it)
        case 'POST /v1/chain/get_currency_balance': {
          const b = JSON.parse(req.body) as Json;
          return json(b.account === 'eosio' && b.code === 'eosio.token' && b.symbol === 'EOS' ? fixtures.text('get_currency_balance.eosio.json') : []);
        }
        // the recorded get_account of cordialsysaa, and the recorded Leap 4 answer for any other account
        case 'POST /v1/chain/get_account':
          return JSON.parse(req.body).account_name === HOT ? json(fixtures.text('get_account.jungle4.cordialsysaa.json')) : json(fixtures.text('get_account.unknown.leap4.json'), 400);
        case 'POST /v1/chain/send_transaction':
          sent = createHash('sha256').update(Buffer.from(JSON.parse(req.body).packed_trx, 'hex')).digest('hex');
          return json(executedFor(sent));
        case 'POST /v1/chain/get_transaction_status':
          return json(fixtures.text('get_transaction_status.UNKNOWN.json'));
        case 'GET /v2/history/get_transaction': {
          const id = req.query.get('id') ?? '';
          return json(settled && id === sent ? recordOf(id) : hyperionMissing(id, 'yes'));
        }
        default:
          return { status: 404, body: 'not found', contentType: 'text/plain' };
      }
    });
    return {
      endpoint: { url: server.url },
      deposit: {
        address: 'crosschaino3',
        expected: { txHash: RECORDED.trx_id, toAddress: 'crosschaino3', memo: null, contract: null, amount: 100n, succeeded: true },
      },
      transfer: {
        from: { address: HOT, publicKey: { curve: 'secp256k1', bytes: hot.publicKey } },
        to: 'crosschaino2', memo: '42', contract: null, amount: 12_345n, live: false,
        // eosjs' own serializers decode the packed transaction and its transfer action
        verify(signed) {
          const { trx, transfer } = decode(signed);
          if (trx.actions.length !== 1 || trx.actions[0].account !== 'eosio.token' || trx.actions[0].name !== 'transfer') throw new Error('not one eosio.token transfer');
          const [amount, symbol] = String(transfer.quantity).split(' ');
          if (symbol !== 'EOS') throw new Error(`not EOS: ${transfer.quantity}`);
          return { from: transfer.from, to: transfer.to, amount: parseUnits(amount!, 4), memo: transfer.memo === '' ? null : transfer.memo };
        },
      },
      balances: {
        expected: [
          { query: { address: 'eosio', contract: null }, answer: { kind: 'AMOUNT', amount: 16_670_290n } },
          { query: { address: 'nosuchacct11', contract: null }, answer: { kind: 'NO_ACCOUNT' } },
        ],
        badAddress: 'Not-An-Account',
      },
      sign: signersByAddress([[HOT, (p: Uint8Array) => hot.sign(p)]]),
      async settle() {
        settled = true;
      },
      close: () => server.close(),
    };
  },
});
