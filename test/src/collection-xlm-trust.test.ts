/**
 * The first sweep of a Stellar credit asset into a hot wallet that has no trustline to it, through
 * the service with its workers and the software key store, against a scripted Horizon answering
 * with recorded answers (support/horizon-trust-node.ts says what each serves and what was changed;
 * no Stellar node is reachable from the test environment). The asset is the recorded USD of
 * GDUKMG… (added by config as a catalogue token).
 *
 * - a USD deposit to the application's shared deposit account is credited; with a collection policy
 *   for USD, the service first sends the hot wallet's changeTrust of USD (decoded from what Horizon
 *   received: the one operation, source the hot wallet, signed by the hot key, a TRUSTLINE transfer
 *   of the pipeline), the item waiting meanwhile with that reason; once Horizon shows the trustline
 *   the sweep pays exactly the planned 4.0000000 USD from the deposit account to the hot wallet
 *   (after the changeTrust, never before), and the item ends SUCCESS;
 * - `wcs collect address set --kind COLD` refuses an account without a trustline to USD with the
 *   reason and writes nothing; an account with one is set.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { Keypair, Networks } from '@stellar/stellar-sdk';
import type { CreatedApplication } from '@wcs/server';
import { WcsService } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testEnv, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { expectOk, pollUntil } from './support/expect';
import { horizonTrustNode, RECORDED_USD, type HorizonTrustNode } from './support/horizon-trust-node';
import { cliJson, describeCli, runCli } from './support/processes';
import { XLM_DEPOSIT_TX } from './support/recorded-nodes';
import { ADDRESS_CREATE } from './support/recharge-types';
import { tempDir } from './support/temp';

const XLM_CHAIN = 107;
const USD_TOKEN = 10798;

describe('Stellar: the hot wallet\'s trustline opened before the first sweep of an asset; a cold address without one refused (recorded Horizon answers)', function () {
  this.timeout(120_000);
  let node: HorizonTrustNode;
  let db: TestDatabase;
  let svc: WcsService;
  let pool: Pool;
  let app: CreatedApplication;
  let env: Record<string, string>;
  let deposit: { address: string; memo: string };
  const coldWithout = Keypair.random().publicKey();
  const coldWith = Keypair.random().publicKey();
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const wcs = async (args: string[], exit = 0) => {
    const r = await runCli([...args, '--json'], env);
    expect(r.code, describeCli(args, r)).to.equal(exit);
    return cliJson(args, r);
  };

  before(async () => {
    node = await horizonTrustNode(Networks.TESTNET, { without: coldWithout, with: coldWith });
    const configFile = path.join(tempDir('wcs-xlm-trust-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({ tokens: [{ id: USD_TOKEN, chainCode: 'XLM', environment: 'test', symbol: 'USD', name: 'USD (recorded issuer GDUKMG…)', contract: RECORDED_USD, decimals: 7 }] }));
    await prepareTestKeystore();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 3 });
    const vars = {
      WCS_RPC_TEST_XLM: node.url, WCS_CONFIG: configFile, WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '200', WCS_COLLECT_PLAN_MS: '200',
    };
    env = { ...process.env, ...testEnv(db.url, vars) } as Record<string, string>;
    svc = await WcsService.start(testConfig(db.url, vars), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'xlm-trust', environment: 'test', chains: ['XLM'] });
    const client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    deposit = expectOk(await client.post(ADDRESS_CREATE, { chainCode: 'XLM', externalUserId: 'user-usd' })) as { address: string; memo: string };
    node.deposit = deposit;
    const hot = await pollUntil(() => q<{ address: string }>('SELECT address FROM hot_wallets WHERE application_id = $1 AND chain_id = $2', [app.id, XLM_CHAIN]), (r) => r.length === 1, 30_000, 100);
    expect(hot.ok, 'the hot wallet').to.equal(true);
    node.hot = hot.result[0]!.address;
  });

  after(async () => {
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await node?.close();
  });

  it('a USD deposit, a policy: the hot wallet\'s changeTrust first (signed by the hot key, through the pipeline), then the sweep of every unit; SUCCESS', async () => {
    const credited = await pollUntil(() => q<{ tx_status: string; amount: string; chain_token_id: number }>('SELECT tx_status, amount::text AS amount, chain_token_id FROM recharges WHERE tx_hash = $1', [XLM_DEPOSIT_TX]),
      (r) => r[0]?.tx_status === 'SETTLED', 60_000, 100);
    expect(credited.result).to.deep.equal([{ tx_status: 'SETTLED', amount: '40000000', chain_token_id: USD_TOKEN }]);
    // Horizon times out on the changeTrust until released: the item must wait for it, whatever the timing
    node.holdTrust = true;
    // the operator's part: a policy (1 XLM = 0.1 USD: the 199-stroop fee is far below 10 % of 4 USD)
    await wcs(['collect', 'policy', 'set', '--app', String(app.id), '--chain', 'XLM', '--token', 'USD', '--threshold', '1', '--native-value', '0.1', '--schedule-seconds', 'off']);
    // the item waits, named, while the trustline is opened; one TRUSTLINE transfer from the hot key, sent
    const waiting = await pollUntil(async () => ({
      items: await q<{ status: string; waiting_reason: string | null }>('SELECT status, waiting_reason FROM collection_items WHERE application_id = $1', [app.id]),
      held: node.held.length,
    }), (r) => r.items[0]?.waiting_reason?.includes('(transfer ') === true && r.held >= 2, 30_000, 50);
    expect(waiting.result.items[0]!.status, JSON.stringify(waiting.result)).to.equal('PLANNED');
    expect(waiting.result.items[0]!.waiting_reason).to.match(new RegExp(`^opening the hot wallet's trustline to ${RECORDED_USD} \\(transfer \\d+\\) before the first sweep$`));
    expect(new Set(node.held).size, 'the same changeTrust sent again, never a second one').to.equal(1);
    expect(node.submitted, 'no sweep while the hot wallet cannot receive').to.deep.equal([]);
    node.holdTrust = false;
    const done = await pollUntil(() => q<{ status: string; tx_hash: string | null; amount: string; to_address: string }>('SELECT status, tx_hash, amount::text AS amount, to_address FROM collection_items WHERE application_id = $1', [app.id]),
      (r) => r[0]?.status === 'SUCCESS' || r[0]?.status === 'FAILED', 60_000, 100);
    expect(done.result[0], JSON.stringify(done.result)).to.deep.include({ status: 'SUCCESS', amount: '40000000', to_address: node.hot });

    const trust = await q<{ kind: string; key_purpose: string; from_address: string; to_address: string; amount: string; status: string; options: unknown; tx_hash: string }>(
      `SELECT kind, key_purpose, from_address, to_address, amount::text AS amount, status, options, tx_hash FROM transfers WHERE application_id = $1 AND kind = 'TRUSTLINE'`, [app.id]);
    expect(trust, 'one trustline transfer').to.have.length(1);
    expect(trust[0]).to.deep.include({ key_purpose: 'hot', from_address: node.hot, to_address: node.hot, amount: '1', status: 'SUCCESS', options: { trustline: true } });
    // what Horizon received, in order: the changeTrust, then the sweep
    const sent = node.submitted;
    expect(sent.map((t) => t.operations[0]!.type)).to.deep.equal(['changeTrust', 'payment']);
    const [changeTrust, sweep] = sent as [typeof sent[number], typeof sent[number]];
    expect(changeTrust.hash().toString('hex')).to.equal(trust[0]!.tx_hash);
    expect(changeTrust.source).to.equal(node.hot);
    // the hot wallet's next sequence (its served account: sequence 120192344791187470) and the recorded fee statistics' fee_charged p99 (199 stroops, one operation): the hot wallet pays it
    expect(changeTrust.sequence).to.equal('120192344791187471');
    expect(changeTrust.fee).to.equal('199');
    expect(changeTrust.operations).to.have.length(1);
    const line = (changeTrust.operations[0] as unknown as { line: { code: string; issuer: string } }).line;
    expect(`${line.code}:${line.issuer}`).to.equal(RECORDED_USD);
    expect(Keypair.fromPublicKey(node.hot!).verify(changeTrust.hash(), changeTrust.signatures[0]!.signature()), 'signed by the hot key').to.equal(true);
    expect(sweep.source).to.equal(deposit.address);
    expect(sweep.fee, 'the sweep is paid by the deposit account, as every memo-chain sweep').to.equal('199');
    expect(sweep.operations[0]).to.deep.include({ type: 'payment', destination: node.hot, amount: '4.0000000' });
    expect(Keypair.fromPublicKey(deposit.address).verify(sweep.hash(), sweep.signatures[0]!.signature()), 'signed by the deposit key').to.equal(true);
    expect(sweep.hash().toString('hex')).to.equal(done.result[0]!.tx_hash);
  });

  it('wcs collect address set --kind COLD: an account without a trustline to USD is refused with the reason, nothing written; one with it is set', async () => {
    const refused = await wcs(['collect', 'address', 'set', '--app', String(app.id), '--chain', 'XLM', '--kind', 'COLD', '--address', coldWithout], 2);
    expect(refused.error.msg).to.match(new RegExp(`${coldWithout} cannot receive USD \\(${RECORDED_USD}\\) on XLM: NO_TRUSTLINE`));
    expect(await q('SELECT address FROM collection_addresses WHERE application_id = $1', [app.id])).to.deep.equal([]);
    expect(await q(`SELECT 1 FROM audit_log WHERE action = 'collect.address.set'`)).to.deep.equal([]);
    const missing = Keypair.random().publicKey();
    const absent = await wcs(['collect', 'address', 'set', '--app', String(app.id), '--chain', 'XLM', '--kind', 'MERCHANT', '--address', missing], 2);
    expect(absent.error.msg).to.match(/NO_ACCOUNT/);
    const set = await wcs(['collect', 'address', 'set', '--app', String(app.id), '--chain', 'XLM', '--kind', 'COLD', '--address', coldWith]);
    expect(set).to.deep.include({ kind: 'COLD', address: coldWith });
    expect(await q<{ address: string }>('SELECT address FROM collection_addresses WHERE application_id = $1', [app.id])).to.deep.equal([{ address: coldWith }]);
  });

  it('the surplus above the high watermark waits for a cold address that cannot receive USD (one alert, no transfer), and goes once the cold address can', async () => {
    // a cold address that lost its trustline after it was set (or was set before the policy): written as such
    await q(`UPDATE collection_addresses SET address = $2 WHERE application_id = $1 AND kind = 'COLD'`, [app.id, coldWithout]);
    await wcs(['collect', 'policy', 'set', '--app', String(app.id), '--chain', 'XLM', '--token', 'USD', '--hot-high', '1', '--hot-target', '0.5']);
    const alert = await pollUntil(() => q<{ message: string; details: { addresses: string[] } }>(`SELECT message, details FROM operator_alerts WHERE kind = 'COLLECTION_WAITING'`), (r) => r.length > 0, 30_000, 100);
    expect(alert.result, 'one alert').to.have.length(1);
    expect(alert.result[0]!.message).to.match(new RegExp(`cold address ${coldWithout} cannot receive it \\(NO_TRUSTLINE`));
    expect(alert.result[0]!.details.addresses).to.deep.equal([coldWithout]);
    expect(await q(`SELECT 1 FROM collection_items WHERE application_id = $1 AND stage = 'COLD_TRANSFER'`, [app.id]), 'no cold transfer').to.deep.equal([]);
    expect(node.submitted.filter((t) => t.source === node.hot && t.operations[0]!.type === 'payment')).to.deep.equal([]);
    // the operator sets a cold address that can receive it: the surplus goes down to the target
    await wcs(['collect', 'address', 'set', '--app', String(app.id), '--chain', 'XLM', '--kind', 'COLD', '--address', coldWith]);
    const moved = await pollUntil(() => q<{ status: string; amount: string; to_address: string }>(`SELECT status, amount::text AS amount, to_address FROM collection_items WHERE application_id = $1 AND stage = 'COLD_TRANSFER'`, [app.id]),
      (r) => r[0]?.status === 'SUCCESS', 30_000, 100);
    expect(moved.result[0], JSON.stringify(moved.result)).to.deep.include({ status: 'SUCCESS', amount: '35000000', to_address: coldWith });
    const out = node.submitted.filter((t) => t.source === node.hot && t.operations[0]!.type === 'payment');
    expect(out.map((t) => t.operations[0])).to.deep.include.members([{ ...out[0]!.operations[0], type: 'payment', destination: coldWith, amount: '3.5000000' }]);
  });
});
