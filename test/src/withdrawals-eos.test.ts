/**
 * EOS withdrawals through the service (API and workers in process, software key store) against a
 * scripted Antelope node: no nodeos or Hyperion is reachable from the test environment, so a
 * local server answers the EOS transfer node and the deposit scanner. What it serves, and why:
 * - get_info, get_currency_stats (EOS): the adapter's recorded Jungle 4 answers, verbatim
 *   (adapters/eos/src/fixtures, provenance in SOURCE.md).
 * - get_account: the recorded Jungle 4 account document (get_account.jungle4.cordialsysaa.json)
 *   with only account_name and the `active` key changed: first a key that is not the hot key,
 *   then the application's hot key, so the ledger's controls check is seen both ways.
 * - get_currency_balance: the recorded answer's form, with 100.0000 EOS (test-made amount).
 * - send_transaction: the packed transaction is decoded with eosjs and its signature recovered;
 *   the answer is the recorded executed push_transaction answer with the transaction id replaced
 *   by sha256(packed_trx) (what nodeos answers for the transaction sent).
 * - get_transaction_status: the recorded IN_BLOCK answer with state, block and expiration
 *   replaced: LOCALLY_APPLIED, then IN_BLOCK, then IRREVERSIBLE, as the test moves it.
 * - Hyperion get_actions (the deposit scanner): an empty page in the form the deposit e2e test
 *   serves; get_transaction (history): Hyperion's not-found answer.
 * The hot account is registered with `wcs hotwallets register`; the chain is EOS Jungle Testnet
 * (test chain 108, 1 confirmation, native token 10800) with depositAccount crosschaino3 from a
 * WCS_CONFIG file, as in deposits-sol-eos.test.ts.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { SerialBuffer, createInitialTypes, createTransactionTypes, getTypesFromAbi } from 'eosjs/dist/eosjs-serialize';
import { Signature } from 'eosjs/dist/eosjs-key-conversions';
import { startReplayServer, type ReplayServer } from '@wcs/core/testing';
import { eosPublicKeyToLegacyString } from '@wcs/adapter-eos';
import type { CreatedApplication } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testEnv, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver, verifyCallback } from './support/callback-receiver';
import { expectOk, pollUntil } from './support/expect';
import { cliJson, describeCli, runCli } from './support/processes';
import { EOS, EOS_FIXTURES, fixtureJson, fixtureText } from './support/recorded-nodes';
import type { BatchResult, Withdraw, WithdrawEvent } from './support/payouts';
import { tempDir } from './support/temp';

const BATCH = '/api/v1/wallet/withdraw/batch-create';
const GET = '/api/v1/wallet/withdraw/get';
const CHAIN_ID = 108;
const TOKEN_ID = 10800;
const HOT_ACCOUNT = 'wcshotwallet';
/** Merchant-facing code, as a literal (a renumbering must break the test). */
const CHAIN_UNAVAILABLE = 1007004001;
const JUNGLE4 = '73e4385a2708e6d7048834fbc1079f2fabb17b3c125b146af438971e90716c4d';


const txType = getTypesFromAbi(createTransactionTypes()).get('transaction')!;
const transferType = getTypesFromAbi(createInitialTypes(), {
  version: 'eosio::abi/1.1', types: [], actions: [], tables: [], ricardian_clauses: [], error_messages: [], abi_extensions: [], variants: [],
  structs: [{ name: 'transfer', base: '', fields: [{ name: 'from', type: 'name' }, { name: 'to', type: 'name' }, { name: 'quantity', type: 'asset' }, { name: 'memo', type: 'string' }] }],
} as never).get('transfer')!;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const deserialize = (type: typeof txType, bytes: Uint8Array): Record<string, any> =>
  type.deserialize(new SerialBuffer({ array: bytes, textEncoder: new TextEncoder(), textDecoder: new TextDecoder() }));

/** The scripted node (see the header): what it was sent, and the knobs the test turns. */
interface EosPayoutNode extends ReplayServer {
  activeKey: string;
  txState: 'LOCALLY_APPLIED' | 'IN_BLOCK' | 'IRREVERSIBLE';
  sent: Array<{ id: string; body: { packed_trx: string; signatures: string[] } }>;
}

async function eosPayoutNode(): Promise<EosPayoutNode> {
  const info = fixtureText(EOS_FIXTURES, 'get_info.jungle4.209671574.json');
  const stats = fixtureText(EOS_FIXTURES, 'get_currency_stats.EOS.json');
  const account = fixtureJson<{ account_name: string; permissions: Array<{ perm_name: string; required_auth: { keys: Array<{ key: string; weight: number }> } }> }>(EOS_FIXTURES, 'get_account.jungle4.cordialsysaa.json');
  const executed = fixtureJson<{ transaction_id: string; processed: { id: string } }>(EOS_FIXTURES, 'push_transaction.executed.0125cd2d.json');
  const inBlock = fixtureJson<Record<string, unknown>>(EOS_FIXTURES, 'get_transaction_status.IN_BLOCK.json');
  const lib = JSON.parse(info) as { last_irreversible_block_num: number; last_irreversible_block_id: string };
  const state = { activeKey: '', txState: 'LOCALLY_APPLIED' as EosPayoutNode['txState'], sent: [] as EosPayoutNode['sent'] };
  const server = await startReplayServer((req) => {
    const body = req.body ? (JSON.parse(req.body) as Record<string, unknown>) : {};
    switch (req.path) {
      case '/v1/chain/get_info': return { body: info };
      case '/v1/chain/get_currency_stats': return { body: stats };
      case '/v1/chain/get_currency_balance': return { body: body.account === HOT_ACCOUNT ? '["100.0000 EOS"]' : '[]' };
      case '/v1/chain/get_account': {
        const doc = JSON.parse(JSON.stringify(account)) as typeof account;
        doc.account_name = String(body.account_name);
        doc.permissions.find((p) => p.perm_name === 'active')!.required_auth.keys = [{ key: state.activeKey, weight: 1 }];
        return { body: JSON.stringify(doc) };
      }
      case '/v1/chain/send_transaction': {
        const trx = body as { packed_trx: string; signatures: string[] };
        const id = createHash('sha256').update(Buffer.from(trx.packed_trx, 'hex')).digest('hex');
        state.sent.push({ id, body: trx });
        return { body: JSON.stringify({ ...executed, transaction_id: id, processed: { ...executed.processed, id } }) };
      }
      case '/v1/chain/get_transaction_status': {
        const known = state.sent.find((s) => s.id === body.id);
        if (!known) return { body: JSON.stringify({ ...inBlock, state: 'UNKNOWN' }) };
        const height = lib.last_irreversible_block_num + 10;
        return { body: JSON.stringify({ ...inBlock, state: state.txState, block_number: height, block_id: createHash('sha256').update(`block:${height}`).digest('hex') }) };
      }
      case '/v2/history/get_actions': return { body: JSON.stringify({ query_time_ms: 1, cached: false, lib: lib.last_irreversible_block_num, total: { value: 0, relation: 'eq' }, actions: [] }) };
      default: return { status: 404, body: '{"statusCode":404,"error":"Not Found","message":"Route not found"}' };
    }
  });
  return Object.defineProperties(server, {
    activeKey: { get: () => state.activeKey, set: (v: string) => { state.activeKey = v; } },
    txState: { get: () => state.txState, set: (v: EosPayoutNode['txState']) => { state.txState = v; } },
    sent: { get: () => state.sent },
  }) as EosPayoutNode;
}

describe('EOS withdrawals through the service (registered hot account, controls check, payout to IRREVERSIBLE, callbacks) on a scripted node', function () {
  this.timeout(120_000);
  let node: EosPayoutNode;
  let db: TestDatabase;
  let svc: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  let pool: Pool;
  let configFile: string;
  let hotKey = '';
  const receiver = new CallbackReceiver();

  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const batch = async (items: unknown[]): Promise<BatchResult> => expectOk(await client.post(BATCH, { items })) as BatchResult;
  const item = (over: Record<string, unknown> = {}) => ({ appOrderNo: `e-${Math.random().toString(36).slice(2)}`, chainCode: 'EOS', chainTokenId: TOKEN_ID, toAddress: EOS.RECEIVER, toMemo: '42', amount: '1.2345', ...over });
  const get = async (id: number): Promise<Withdraw> => expectOk(await client.get(`${GET}?id=${id}`)) as Withdraw;
  const cli = async (args: string[]) => runCli(args, { ...process.env, ...testEnv(db.url, { WCS_CONFIG: configFile }) });

  before(async function () {
    this.timeout(60_000);
    node = await eosPayoutNode();
    node.activeKey = 'EOS88T1B86LmH3GNhFfKx268N6LnFBVCGzLBWGLMZ9wAQDr6e3ezk'; // the recorded account's own key: not the hot key
    configFile = path.join(tempDir('wcs-wd-eos-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({
      chains: [{ id: CHAIN_ID, code: 'EOS', name: 'EOS Jungle Testnet', family: 'eos', environment: 'test', network: 'jungle4', nativeSymbol: 'EOS', decimals: 4, confirmations: 1, evmChainId: null, options: { depositAccount: EOS.RECEIVER } }],
    }));
    await prepareTestKeystore();
    await receiver.start();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 2 });
    svc = await WcsService.start(testConfig(db.url, {
      WCS_RPC_TEST_EOS: node.url, WCS_CONFIG: configFile, WCS_CALLBACK_POLL_MS: '50', WCS_CALLBACK_ALLOW_PRIVATE: '1',
      WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '500',
    }), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'eos-payouts', environment: 'test', chains: ['EOS'] });
    await svc.storage.applications.setCallback(TEST_ACTOR, app.id, 'WITHDRAW', receiver.url('/merchant/withdraw'));
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
  });

  after(async () => {
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await receiver.stop();
    await node?.close();
  });

  it('without a registered hot account EOS withdrawals are unavailable (1007004001), nothing persisted; register refuses a malformed name and the deposit account', async () => {
    await new Promise((r) => setTimeout(r, 600)); // a few ledger passes
    const r = await batch([item()]);
    expect(r).to.include({ total: 1, successCount: 0, failedCount: 1 });
    expect(r.items[0]).to.include({ success: false, errorCode: CHAIN_UNAVAILABLE });
    expect(await q('SELECT id FROM withdrawals')).to.deep.equal([]);
    expect(await q('SELECT id FROM hot_wallets')).to.deep.equal([]);

    const bad = await cli(['hotwallets', 'register', '--app', String(app.id), '--chain', 'EOS', '--account', 'Not.An.Account']);
    expect(bad.code, describeCli(['register'], bad)).to.not.equal(0);
    expect(bad.stderr).to.match(/not a EOS account: not an EOS account name/);
    const dep = await cli(['hotwallets', 'register', '--app', String(app.id), '--chain', 'EOS', '--account', EOS.RECEIVER]);
    expect(dep.code).to.not.equal(0);
    expect(dep.stderr).to.contain(`${EOS.RECEIVER} is EOS's deposit account`);
    expect(await q('SELECT id FROM hot_wallets')).to.deep.equal([]);
  });

  it('registered, but its active permission holds another key: still unavailable, one HOT_ACCOUNT_NOT_CONTROLLED alert naming the hot key', async () => {
    const args = ['hotwallets', 'register', '--app', String(app.id), '--chain', 'EOS', '--account', HOT_ACCOUNT, '--json'];
    const done = cliJson(args, await cli(args)) as { address: string; publicKey: string; replaced: string | null };
    expect(done).to.include({ address: HOT_ACCOUNT, replaced: null });
    expect(done.publicKey).to.match(/^0[23][0-9a-f]{64}$/);
    hotKey = eosPublicKeyToLegacyString(Buffer.from(done.publicKey, 'hex'));
    expect(await q('SELECT application_id, address FROM hot_wallets')).to.deep.equal([{ application_id: app.id, address: HOT_ACCOUNT }]);
    // an operator's change: audited with the shell's actor; the refusals above wrote nothing
    const audit = await q<{ actor: string; action: string; target: string; before: unknown; after: unknown }>(`SELECT actor, action, target, before, after FROM audit_log WHERE action = 'hotwallet.register'`);
    expect(audit).to.have.length(1);
    expect(audit[0]).to.deep.include({ action: 'hotwallet.register', target: `app:${app.id}/EOS`, before: null, after: { address: HOT_ACCOUNT } });
    expect(audit[0]!.actor).to.match(/^cli:/);

    const alert = await pollUntil(() => q<{ kind: string; message: string }>(`SELECT kind, message FROM operator_alerts WHERE kind = 'HOT_ACCOUNT_NOT_CONTROLLED'`), (rows) => rows.length > 0, 20_000, 100);
    expect(alert.ok, 'the ledger alerted').to.equal(true);
    expect(alert.result[0]!.message).to.contain(`hot account ${HOT_ACCOUNT} cannot be signed for by its hot key ${done.publicKey}`);
    await new Promise((r) => setTimeout(r, 600));
    expect(await q(`SELECT count(*)::int AS n FROM operator_alerts WHERE kind = 'HOT_ACCOUNT_NOT_CONTROLLED'`), 'alerted once').to.deep.equal([{ n: 1 }]);
    expect(await q('SELECT * FROM hot_wallet_balances')).to.deep.equal([]);
    expect((await batch([item()])).items[0]).to.include({ errorCode: CHAIN_UNAVAILABLE });
  });

  it('with the hot key in the active permission: the balance is read, an order is signed by the hot key, sent, and ends SUCCESS at IRREVERSIBLE with verified BROADCASTED, CONFIRMING, SUCCESS callbacks', async () => {
    node.activeKey = hotKey;
    const funded = await pollUntil(() => q<{ on_chain: string }>('SELECT b.on_chain::text AS on_chain FROM hot_wallet_balances b WHERE b.chain_token_id = $1', [TOKEN_ID]), (rows) => rows[0]?.on_chain === '1000000', 20_000, 100);
    expect(funded.ok, `the ledger read 100.0000 EOS: ${JSON.stringify(funded.result)}`).to.equal(true);
    const quote = await pollUntil(() => q<{ max_fee: string }>('SELECT max_fee::text AS max_fee FROM withdraw_fee_quotes WHERE chain_token_id = $1', [TOKEN_ID]), (rows) => rows.length === 1, 20_000, 100);
    expect(quote.result).to.deep.equal([{ max_fee: '0' }]);

    const r = await batch([item({ appOrderNo: 'eos-1' })]);
    expect(r.items[0], JSON.stringify(r.items[0])).to.include({ success: true, errorCode: null });
    const order = r.items[0]!.withdraw!;
    expect(order).to.include({ fromAddress: HOT_ACCOUNT, toAddress: EOS.RECEIVER, memo: '42', amount: '1.2345', fee: '0', status: 'PROCESSING' });

    const broadcast = await pollUntil(() => get(order.id), (w) => w.status === 'BROADCASTED', 20_000, 50);
    expect(broadcast.result.status).to.equal('BROADCASTED');
    expect(node.sent).to.have.length(1);
    const [{ id, body }] = node.sent as [EosPayoutNode['sent'][number]];
    expect(broadcast.result.txHash).to.equal(id);
    const packed = Buffer.from(body.packed_trx, 'hex');
    const trx = deserialize(txType, packed);
    const info = fixtureJson<{ last_irreversible_block_num: number; last_irreversible_block_id: string; head_block_time: string }>(EOS_FIXTURES, 'get_info.jungle4.209671574.json');
    expect(trx.ref_block_num).to.equal(info.last_irreversible_block_num & 0xffff);
    expect(trx.ref_block_prefix).to.equal(Buffer.from(info.last_irreversible_block_id, 'hex').readUInt32LE(8));
    const expiresIn = Date.parse(`${trx.expiration}Z`) - Date.parse(`${info.head_block_time}Z`);
    expect(expiresIn).to.be.within(285_000, 300_000);
    expect(trx.actions).to.have.length(1);
    expect(trx.actions[0]).to.deep.include({ account: 'eosio.token', name: 'transfer', authorization: [{ actor: HOT_ACCOUNT, permission: 'active' }] });
    expect(deserialize(transferType, Buffer.from(trx.actions[0].data, 'hex'))).to.deep.equal({ from: HOT_ACCOUNT, to: EOS.RECEIVER, quantity: '1.2345 EOS', memo: '42' });
    const digest = createHash('sha256').update(Buffer.concat([Buffer.from(JUNGLE4, 'hex'), packed, Buffer.alloc(32)])).digest();
    expect(body.signatures).to.have.length(1);
    expect(Signature.fromString(body.signatures[0]!).recover(digest, false).toLegacyString(), 'signed by the hot key').to.equal(hotKey);

    node.txState = 'IN_BLOCK';
    const confirming = await pollUntil(() => get(order.id), (w) => w.status === 'CONFIRMING', 20_000, 50);
    expect(confirming.result.status, 'in a reversible block: not final at 1 confirmation').to.equal('CONFIRMING');
    await new Promise((r) => setTimeout(r, 500));
    expect((await get(order.id)).status).to.equal('CONFIRMING');
    node.txState = 'IRREVERSIBLE';
    const done = await pollUntil(() => get(order.id), (w) => w.status === 'SUCCESS' || w.status === 'FAILED', 20_000, 50);
    expect(done.result).to.include({ status: 'SUCCESS', txHash: id, fee: '0' });
    expect(node.sent, 'one transaction sent').to.have.length(1);

    const events = await pollUntil(async () => receiver.received.map((x) => JSON.parse(x.body.toString('utf8')) as WithdrawEvent).filter((e) => e.id === order.id), (e) => e.length >= 3, 20_000, 50);
    expect(events.result.map((e) => e.status)).to.deep.equal(['BROADCASTED', 'CONFIRMING', 'SUCCESS']);
    for (const e of events.result) expect(e).to.include({ event: 'withdraw', appOrderNo: 'eos-1', chainId: CHAIN_ID, chainTokenId: TOKEN_ID, toAddress: EOS.RECEIVER, amount: '1.2345', txHash: id });
    for (const req of receiver.received) expect(verifyCallback(req, app.apiKey, app.apiSecret)).to.equal(null);
  });
});
