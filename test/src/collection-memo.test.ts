/**
 * Collection on the memo chains (XRP, Stellar, EOS) through the service with its workers and the
 * software key store, against scripted nodes answering with recorded real answers
 * (support/recorded-nodes.ts: xrpCollectionNode, horizonCollectionNode, eosCollectionNode; what
 * each serves, where it was recorded and which fields were changed is said there). No XRP, Stellar
 * or EOS node is reachable from the test environment.
 *
 * Per chain (test chains 106 XRP, 107 XLM, 108 EOS Jungle with depositAccount crosschaino3), one
 * application and one user: the scanner credits the recorded deposit (adapted to the service's own
 * shared deposit account and the user's memo) to SETTLED; a native policy whose threshold is above
 * what the account can spend gives a skip with its reason; with the threshold lowered, the next
 * scheduled pass plans one HOT_GATHER item from the shared account (fromAddressId 0) to the hot
 * wallet (EOS: the registered hot account); the signed transaction the node received is decoded
 * with the chain's own library and checked: it moves exactly the planned amount (the spendable
 * balance above the reserve, as the recorded account answer says) less the crafted fee, from the
 * deposit account, signed by the deposit key; once the node answers it as validated / included /
 * irreversible the item ends SUCCESS and one `collect` callback carries every field.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { Keypair, Networks, TransactionBuilder, type Transaction } from '@stellar/stellar-sdk';
import { decode, encodeForSigning, hashes, verifyKeypairSignature } from 'xrpl';
import { SerialBuffer, createInitialTypes, createTransactionTypes, getTypesFromAbi } from 'eosjs/dist/eosjs-serialize';
import { Signature } from 'eosjs/dist/eosjs-key-conversions';
import { eosPublicKeyToLegacyString } from '@wcs/adapter-eos';
import type { ReplayServer } from '@wcs/core/testing';
import { formatLocalDateTime } from '@wcs/core';
import type { CreatedApplication } from '@wcs/server';
import { WcsService } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testEnv, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver, verifyCallback } from './support/callback-receiver';
import { expectOk, pollUntil, sleep } from './support/expect';
import { cliJson, runCli } from './support/processes';
import {
  EOS, EOS_FIXTURES, eosCollectionNode, fixtureJson, horizonCollectionNode, XLM_DEPOSIT_TX, XRP_DEPOSIT_TX, xrpCollectionNode,
  type EosCollectionNode, type HorizonCollectionNode, type XrpCollectionNode,
} from './support/recorded-nodes';
import { ADDRESS_CREATE } from './support/recharge-types';
import { scanState } from './support/scan-state';
import { tempDir } from './support/temp';

const XRP_CHAIN = 106;
const XLM_CHAIN = 107;
const EOS_CHAIN = 108;
const HOT_ACCOUNT = 'wcshotwallet';
const JUNGLE4 = '73e4385a2708e6d7048834fbc1079f2fabb17b3c125b146af438971e90716c4d';
/** A scheduled pass every 10 s (the least allowed): the pass after the skip looks at the skipped account again. */
const SCHEDULE_SECONDS = 10;
const COLLECT_FIELDS = [
  'amount', 'applicationId', 'chainId', 'chainTokenId', 'createdTime', 'event', 'failureReasonCode', 'failureReasonMessage', 'finishedTime', 'fromAddress', 'fromAddressId',
  'gasFee', 'gasFeeCurrency', 'gasFunding', 'id', 'itemId', 'relatedRechargeIds', 'requestId', 'retryTimes', 'stage', 'status', 'toAddress', 'txHash',
];

const eosTxType = getTypesFromAbi(createTransactionTypes()).get('transaction')!;
const eosTransferType = getTypesFromAbi(createInitialTypes(), {
  version: 'eosio::abi/1.1', types: [], actions: [], tables: [], ricardian_clauses: [], error_messages: [], abi_extensions: [], variants: [],
  structs: [{ name: 'transfer', base: '', fields: [{ name: 'from', type: 'name' }, { name: 'to', type: 'name' }, { name: 'quantity', type: 'asset' }, { name: 'memo', type: 'string' }] }],
} as never).get('transfer')!;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const eosDeserialize = (type: typeof eosTxType, bytes: Uint8Array): Record<string, any> =>
  type.deserialize(new SerialBuffer({ array: bytes, textEncoder: new TextEncoder(), textDecoder: new TextDecoder() }));

interface ItemRow {
  id: string; request_id: string; trigger: string; stage: string; status: string; from_address_id: number; from_address: string; to_address: string; amount: string;
  tx_hash: string | null; gas_fee: string | null; transfer_id: string | null; created_at: Date; finished_at: Date | null; failure_code: string | null;
}
interface CollectEvent { [field: string]: unknown }

describe('collection on the memo chains (XRP, Stellar, EOS) on recorded node answers: skip, sweep of the shared deposit account, signed transaction, SUCCESS, collect callback', function () {
  this.timeout(120_000);
  let xrp: XrpCollectionNode;
  let xlm: HorizonCollectionNode;
  let eos: EosCollectionNode;
  let db: TestDatabase;
  let svc: WcsService;
  let pool: Pool;
  let configFile: string;
  const receiver = new CallbackReceiver();
  const apps = new Map<number, CreatedApplication>();
  const deposits = new Map<number, { address: string; memo: string; publicKey: Buffer; keyIndex: number }>();
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];

  const items = (appId: number) => q<ItemRow>(
    `SELECT i.id::text AS id, i.request_id::text AS request_id, r.trigger, i.stage, i.status, i.from_address_id, i.from_address, i.to_address, i.amount::text AS amount,
            i.tx_hash, i.gas_fee::text AS gas_fee, i.transfer_id::text AS transfer_id, i.created_at, i.finished_at, i.failure_code
       FROM collection_items i JOIN collection_requests r ON r.id = i.request_id WHERE i.application_id = $1 ORDER BY i.id`, [appId]);
  const transferOf = async (id: string) => (await q<{ kind: string; key_purpose: string; key_index: number; from_address: string; to_address: string; memo: string | null; amount: string; sent_amount: string; fee: string; options: unknown; status: string; fee_final: boolean }>(
    `SELECT kind, key_purpose, key_index::int AS key_index, from_address, to_address, memo, amount::text AS amount, sent_amount::text AS sent_amount, fee::text AS fee, options, status, fee_final
       FROM transfers WHERE id = $1`, [id]))[0]!;
  const collectEvents = (appId: number): CollectEvent[] => receiver.received.filter((r) => r.target === `/collect/${appId}`).map((r) => JSON.parse(r.body.toString('utf8')) as CollectEvent);

  /** The user's deposit, credited by the scanner: SETTLED at once (validated ledgers / irreversible blocks are final). */
  async function credited(chainId: number, txHash: string) {
    const r = await pollUntil(() => q<{ id: string; tx_status: string; amount: string; address: string; memo: string | null }>(
      'SELECT id::text AS id, tx_status, amount::text AS amount, address, memo FROM recharges WHERE chain_id = $1 AND tx_hash = $2', [chainId, txHash]), (rows) => rows[0]?.tx_status === 'SETTLED', 60_000, 100);
    if (!r.ok) expect.fail(`deposit ${txHash} on chain ${chainId}: ${JSON.stringify(r.result)}; the scan: ${await scanState(pool, chainId, ({ [XRP_CHAIN]: xrp, [XLM_CHAIN]: xlm, [EOS_CHAIN]: eos } as Record<number, ReplayServer>)[chainId])}`);
    return r.result[0]!;
  }

  /**
   * The policy of the native coin, first with a threshold above what the account can spend: the
   * pass the deposit triggers records a skip with its reason (and no item); the threshold is then
   * lowered, and the next scheduled pass (the skip predates the schedule's last run) plans the item.
   */
  async function skipThenPlan(appId: number, tokenId: number, address: string, spendable: bigint): Promise<ItemRow> {
    await q(`INSERT INTO collection_policies (application_id, chain_token_id, threshold, max_fee_bps, on_confirmed, schedule_seconds) VALUES ($1, $2, $3::numeric, 1000, true, $4)`,
      [appId, tokenId, (spendable + 1n).toString(), SCHEDULE_SECONDS]);
    const skip = await pollUntil(() => q<{ amount: string; fee: string | null; reason: string; address: string }>(
      'SELECT amount::text AS amount, fee::text AS fee, reason, address FROM collection_skips WHERE application_id = $1 AND chain_token_id = $2', [appId, tokenId]), (rows) => rows.length > 0, 30_000, 100);
    expect(skip.ok, 'a skip is recorded').to.equal(true);
    // a threshold skip is decided before the sweep is priced: no fee recorded (the sweep's fee is checked on the signed transaction below)
    expect(skip.result).to.deep.equal([{ address, amount: spendable.toString(), fee: null, reason: `below the threshold of ${spendable + 1n}` }]);
    expect(await items(appId), 'nothing planned below the threshold').to.deep.equal([]);
    await q('UPDATE collection_policies SET threshold = $3::numeric, updated_at = now() WHERE application_id = $1 AND chain_token_id = $2', [appId, tokenId, (spendable / 2n).toString()]);
    const planned = await pollUntil(() => items(appId), (rows) => rows.length > 0 && rows[0]!.tx_hash !== null, 40_000, 100);
    expect(planned.ok, `an item planned and signed: ${JSON.stringify(planned.result)}`).to.equal(true);
    expect(planned.result).to.have.length(1);
    expect(await q('SELECT reason FROM collection_skips WHERE application_id = $1', [appId]), 'the skip is deleted once planned').to.deep.equal([]);
    return planned.result[0]!;
  }

  /** The item after the node answered its transaction as final: SUCCESS, and its one collect callback, every field. */
  async function succeeded(appId: number, chainId: number, tokenId: number, rechargeId: string, expected: { amount: string; gasFee: string; currency: string; from: string; to: string; txHash: string }) {
    const done = await pollUntil(() => items(appId), (rows) => rows[0]?.status === 'SUCCESS' || rows[0]?.status === 'FAILED', 30_000, 100);
    const item = done.result[0]!;
    expect(item, JSON.stringify(item)).to.include({ status: 'SUCCESS', failure_code: null, tx_hash: expected.txHash });
    const events = await pollUntil(async () => collectEvents(appId), (e) => e.length > 0, 20_000, 50);
    expect(events.result, 'one collect callback').to.have.length(1);
    const got = receiver.received.find((r) => r.target === `/collect/${appId}`)!;
    const app = apps.get(chainId)!;
    expect(app.id).to.equal(appId);
    expect(verifyCallback(got, app.apiKey, app.apiSecret, got.at), 'signed').to.equal(null);
    const e = events.result[0]!;
    expect(Object.keys(e).sort()).to.deep.equal(COLLECT_FIELDS);
    expect(e).to.deep.equal({
      event: 'collect', id: Number(item.id), itemId: Number(item.id), requestId: Number(item.request_id), applicationId: appId, chainId, chainTokenId: tokenId,
      stage: 'HOT_GATHER', fromAddressId: 0, fromAddress: expected.from, toAddress: expected.to, amount: expected.amount, txHash: expected.txHash, status: 'SUCCESS',
      failureReasonCode: null, failureReasonMessage: null, retryTimes: 0, gasFee: expected.gasFee, gasFeeCurrency: expected.currency, gasFunding: null,
      relatedRechargeIds: [Number(rechargeId)], createdTime: formatLocalDateTime(item.created_at), finishedTime: formatLocalDateTime(item.finished_at),
    });
    expect(await q<{ collection_item_id: string }>('SELECT collection_item_id::text AS collection_item_id FROM recharges WHERE id = $1', [rechargeId])).to.deep.equal([{ collection_item_id: item.id }]);
    // nothing else is planned: the account's deposit is collected
    await sleep(600);
    expect((await items(appId)).map((i) => i.id)).to.deep.equal([item.id]);
    return item;
  }

  before(async function () {
    this.timeout(90_000);
    xrp = await xrpCollectionNode();
    xlm = await horizonCollectionNode(Networks.TESTNET);
    eos = await eosCollectionNode();
    configFile = path.join(tempDir('wcs-collect-memo-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({
      chains: [{ id: EOS_CHAIN, code: 'EOS', name: 'EOS Jungle Testnet', family: 'eos', environment: 'test', network: 'jungle4', nativeSymbol: 'EOS', decimals: 4, confirmations: 1, evmChainId: null, options: { depositAccount: EOS.RECEIVER } }],
    }));
    await prepareTestKeystore();
    await receiver.start();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 3 });
    svc = await WcsService.start(testConfig(db.url, {
      WCS_RPC_TEST_XRP: xrp.url, WCS_RPC_TEST_XLM: xlm.url, WCS_RPC_TEST_EOS: eos.url, WCS_CONFIG: configFile,
      WCS_CALLBACK_POLL_MS: '50', WCS_CALLBACK_ALLOW_PRIVATE: '1',
      WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '200', WCS_COLLECT_PLAN_MS: '200',
    }), testLogger(), { api: true, workers: true });
    for (const [code, chainId] of [['XRP', XRP_CHAIN], ['XLM', XLM_CHAIN], ['EOS', EOS_CHAIN]] as const) {
      const app = await svc.storage.applications.create(TEST_ACTOR, { name: `collect-${code.toLowerCase()}`, environment: 'test', chains: [code] });
      await svc.storage.applications.setCallback(TEST_ACTOR, app.id, 'COLLECT', receiver.url(`/collect/${app.id}`));
      apps.set(chainId, app);
      const client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
      const a = expectOk(await client.post(ADDRESS_CREATE, { chainCode: code, externalUserId: `user-${code}` })) as { address: string; memo: string };
      const [row] = await q<{ address: string; key_index: number; public_key: Buffer }>('SELECT address, key_index::int AS key_index, public_key FROM deposit_accounts WHERE application_id = $1 AND chain_id = $2', [app.id, chainId]);
      expect(row!.address).to.equal(a.address);
      deposits.set(chainId, { address: a.address, memo: a.memo, publicKey: row!.public_key, keyIndex: row!.key_index });
    }
    xrp.deposit = { address: deposits.get(XRP_CHAIN)!.address, memo: deposits.get(XRP_CHAIN)!.memo };
    xlm.deposit = { address: deposits.get(XLM_CHAIN)!.address, memo: deposits.get(XLM_CHAIN)!.memo };
    eos.deposit = { address: deposits.get(EOS_CHAIN)!.address, memo: deposits.get(EOS_CHAIN)!.memo };
    // EOS: the operator's hot account, its active permission given the hot key (as withdrawals-eos.test.ts)
    const args = ['hotwallets', 'register', '--app', String(apps.get(EOS_CHAIN)!.id), '--chain', 'EOS', '--account', HOT_ACCOUNT, '--json'];
    const reg = cliJson(args, await runCli(args, { ...process.env, ...testEnv(db.url, { WCS_CONFIG: configFile }) })) as { publicKey: string };
    eos.activeKey = eosPublicKeyToLegacyString(Buffer.from(reg.publicKey, 'hex'));
  });

  after(async () => {
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await receiver.stop();
    await xrp?.close();
    await xlm?.close();
    await eos?.close();
  });

  it('XRP: the shared account\'s spendable XRP above the reserve, less the 10-drop fee, is paid to the hot wallet by a Payment signed with the deposit key; SUCCESS once validated', async () => {
    const appId = apps.get(XRP_CHAIN)!.id;
    const dep = deposits.get(XRP_CHAIN)!;
    const recharge = await credited(XRP_CHAIN, XRP_DEPOSIT_TX);
    expect(recharge).to.include({ amount: '212200', address: dep.address, memo: dep.memo });
    // recorded account_info: Balance 922913243 drops, OwnerCount 1; server_state: reserve 20000000 + 5000000 per object
    const spendable = 922_913_243n - 20_000_000n - 1n * 5_000_000n;
    const fee = 10n; // the recorded open_ledger_fee
    const item = await skipThenPlan(appId, 10600, dep.address, spendable);
    const [hot] = await q<{ address: string }>('SELECT address FROM hot_wallets WHERE application_id = $1 AND chain_id = $2', [appId, XRP_CHAIN]);
    expect(item).to.include({ stage: 'HOT_GATHER', status: 'SWEEPING', trigger: 'SCHEDULE', from_address_id: 0, from_address: dep.address, to_address: hot!.address, amount: spendable.toString() });
    const transfer = await transferOf(item.transfer_id!);
    expect(transfer).to.deep.include({ kind: 'SWEEP', key_purpose: 'deposit', key_index: dep.keyIndex, from_address: dep.address, to_address: hot!.address, memo: null, amount: spendable.toString(), sent_amount: (spendable - fee).toString(), fee: fee.toString(), options: { feeFromAmount: true } });

    // the signed Payment the node was sent, decoded with xrpl.js
    const sent = await pollUntil(async () => xrp.submitted, (s) => s.length > 0, 20_000, 50);
    expect(new Set(sent.result).size, 'one transaction').to.equal(1);
    const blob = sent.result[0]!;
    expect(hashes.hashSignedTx(blob)).to.equal(item.tx_hash);
    const tx = decode(blob) as Record<string, unknown>;
    expect(tx).to.deep.include({
      TransactionType: 'Payment', Account: dep.address, Destination: hot!.address, Amount: (spendable - fee).toString(), Fee: fee.toString(),
      Sequence: 23, LastLedgerSequence: 100972465 + 20, Flags: 0, SigningPubKey: dep.publicKey.toString('hex').toUpperCase(),
    });
    expect(tx).to.not.have.property('DestinationTag');
    const { TxnSignature, ...unsigned } = tx;
    expect(verifyKeypairSignature(encodeForSigning(unsigned as never), TxnSignature as string, dep.publicKey.toString('hex').toUpperCase()), 'signed by the deposit key').to.equal(true);
    // exactly the reserve stays: balance − amount − fee
    expect(922_913_243n - BigInt(tx.Amount as string) - BigInt(tx.Fee as string)).to.equal(25_000_000n);

    // not validated yet: the item waits
    await sleep(500);
    expect((await items(appId))[0]!.status).to.equal('SWEEPING');
    xrp.validated = true;
    await succeeded(appId, XRP_CHAIN, 10600, recharge.id, { amount: '897.913233', gasFee: '0.00001', currency: 'XRP', from: dep.address, to: hot!.address, txHash: item.tx_hash! });
    expect(await transferOf(item.transfer_id!)).to.include({ status: 'SUCCESS', fee: '10', fee_final: true });
  });

  it('Stellar: the shared account\'s XLM above its minimum balance, less the 199-stroop fee bid, creates the (unfunded) hot wallet; signed by the deposit key; re-sent after Horizon\'s timeout, SUCCESS once included (100 stroops charged)', async () => {
    const appId = apps.get(XLM_CHAIN)!.id;
    const dep = deposits.get(XLM_CHAIN)!;
    const recharge = await credited(XLM_CHAIN, XLM_DEPOSIT_TX);
    expect(recharge).to.include({ amount: '2000000000', address: dep.address, memo: dep.memo });
    // recorded account: 72.8563792 XLM, selling liabilities 0, 5 subentries; latest ledger: base reserve 5000000 stroops
    const spendable = 728_563_792n - 0n - (2n + 5n) * 5_000_000n;
    const fee = 199n; // fee_charged p99 of the recorded fee statistics
    const item = await skipThenPlan(appId, 10700, dep.address, spendable);
    const [hot] = await q<{ address: string }>('SELECT address FROM hot_wallets WHERE application_id = $1 AND chain_id = $2', [appId, XLM_CHAIN]);
    expect(item).to.include({ stage: 'HOT_GATHER', status: 'SWEEPING', trigger: 'SCHEDULE', from_address_id: 0, from_address: dep.address, to_address: hot!.address, amount: spendable.toString() });
    expect(await transferOf(item.transfer_id!)).to.deep.include({ kind: 'SWEEP', key_purpose: 'deposit', key_index: dep.keyIndex, amount: spendable.toString(), sent_amount: (spendable - fee).toString(), fee: fee.toString(), options: { feeFromAmount: true } });

    // Horizon timed out waiting for the ledger (recorded 504): the same envelope is posted again
    const sent = await pollUntil(async () => xlm.submitted, (s) => s.length >= 2, 20_000, 50);
    expect(new Set(sent.result).size, 'the same transaction each time').to.equal(1);
    const tx = TransactionBuilder.fromXDR(sent.result[0]!, Networks.TESTNET) as Transaction;
    expect(tx.hash().toString('hex')).to.equal(item.tx_hash);
    expect(tx.source).to.equal(dep.address);
    expect(tx.sequence).to.equal('120192344791187471');
    expect(tx.fee).to.equal(fee.toString());
    expect(tx.memo.type).to.equal('none');
    expect(tx.operations).to.have.length(1);
    // the hot wallet does not exist yet (404): the sweep creates it with the whole amount
    expect(tx.operations[0]).to.deep.include({ type: 'createAccount', destination: hot!.address, startingBalance: '69.3563593' });
    expect(693_563_593n).to.equal(spendable - fee);
    expect(tx.signatures).to.have.length(1);
    expect(Buffer.from(Keypair.fromPublicKey(dep.address).rawPublicKey()).equals(dep.publicKey)).to.equal(true);
    expect(Keypair.fromPublicKey(dep.address).verify(tx.hash(), tx.signatures[0]!.signature()), 'signed by the deposit key').to.equal(true);
    expect((await items(appId))[0]!.status).to.equal('SWEEPING');

    xlm.included = true;
    // what arrived: the amount less the fee bid; the fee: what the recorded ledger charged (100), so 99 stroops stay at the account
    await succeeded(appId, XLM_CHAIN, 10700, recharge.id, { amount: '69.3563593', gasFee: '0.00001', currency: 'XLM', from: dep.address, to: hot!.address, txHash: item.tx_hash! });
    expect(await transferOf(item.transfer_id!)).to.include({ status: 'SUCCESS', fee: '100', fee_final: true });
  });

  it('EOS: the deposit account\'s whole EOS balance (no fee: maxFee 0, CPU/NET are the account\'s resources) goes to the registered hot account by an eosio.token transfer signed with the deposit key; SUCCESS once irreversible', async () => {
    const appId = apps.get(EOS_CHAIN)!.id;
    const dep = deposits.get(EOS_CHAIN)!;
    expect(dep.address).to.equal(EOS.RECEIVER);
    const recharge = await credited(EOS_CHAIN, EOS.REAL_TRX);
    expect(recharge).to.include({ amount: '100', address: EOS.RECEIVER, memo: dep.memo });
    const quote = await pollUntil(() => q<{ max_fee: string }>('SELECT max_fee::text AS max_fee FROM withdraw_fee_quotes WHERE chain_token_id = 10800'), (rows) => rows.length === 1, 20_000, 100);
    expect(quote.result, 'EOS transfers cost no fee').to.deep.equal([{ max_fee: '0' }]);
    // the recorded get_currency_balance answer: 1667.0290 EOS (no reserve is kept in EOS)
    const spendable = 16_670_290n;
    const item = await skipThenPlan(appId, 10800, EOS.RECEIVER, spendable);
    expect(item).to.include({ stage: 'HOT_GATHER', status: 'SWEEPING', trigger: 'SCHEDULE', from_address_id: 0, from_address: EOS.RECEIVER, to_address: HOT_ACCOUNT, amount: spendable.toString() });
    expect(await transferOf(item.transfer_id!)).to.deep.include({ kind: 'SWEEP', key_purpose: 'deposit', key_index: dep.keyIndex, from_address: EOS.RECEIVER, to_address: HOT_ACCOUNT, amount: spendable.toString(), sent_amount: spendable.toString(), fee: '0', options: { feeFromAmount: true } });

    const sent = await pollUntil(async () => eos.sent, (s) => s.length > 0, 20_000, 50);
    expect(sent.result, 'one transaction').to.have.length(1);
    const [{ id, body }] = sent.result as [EosCollectionNode['sent'][number]];
    expect(id).to.equal(item.tx_hash);
    const packed = Buffer.from(body.packed_trx, 'hex');
    const trx = eosDeserialize(eosTxType, packed);
    const info = fixtureJson<{ last_irreversible_block_num: number; last_irreversible_block_id: string }>(EOS_FIXTURES, 'get_info.jungle4.209671574.json');
    expect(trx.ref_block_num).to.equal(info.last_irreversible_block_num & 0xffff);
    expect(trx.ref_block_prefix).to.equal(Buffer.from(info.last_irreversible_block_id, 'hex').readUInt32LE(8));
    expect(trx).to.include({ max_net_usage_words: 0, max_cpu_usage_ms: 0, delay_sec: 0 });
    expect(trx.actions).to.have.length(1);
    expect(trx.actions[0]).to.deep.include({ account: 'eosio.token', name: 'transfer', authorization: [{ actor: EOS.RECEIVER, permission: 'active' }] });
    expect(eosDeserialize(eosTransferType, Buffer.from(trx.actions[0].data, 'hex'))).to.deep.equal({ from: EOS.RECEIVER, to: HOT_ACCOUNT, quantity: '1667.0290 EOS', memo: '' });
    const digest = createHash('sha256').update(Buffer.concat([Buffer.from(JUNGLE4, 'hex'), packed, Buffer.alloc(32)])).digest();
    expect(body.signatures).to.have.length(1);
    expect(Signature.fromString(body.signatures[0]!).recover(digest, false).toLegacyString(), 'signed by the deposit key').to.equal(eosPublicKeyToLegacyString(dep.publicKey));

    await sleep(500);
    expect((await items(appId))[0]!.status, 'locally applied only: not final').to.equal('SWEEPING');
    eos.txState = 'IRREVERSIBLE';
    await succeeded(appId, EOS_CHAIN, 10800, recharge.id, { amount: '1667.029', gasFee: '0', currency: 'EOS', from: EOS.RECEIVER, to: HOT_ACCOUNT, txHash: item.tx_hash! });
    expect(await transferOf(item.transfer_id!)).to.include({ status: 'SUCCESS', fee: '0', fee_final: true });
  });
});
