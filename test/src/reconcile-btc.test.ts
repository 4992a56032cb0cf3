/**
 * Reconciliation on a bcoin regtest node (docs/reconciliation.md), through the service (scanner,
 * collection, pipeline in process) and `wcs reconcile` (separate processes, the schedule off). The
 * bitcoin reader answers at the node's head only, from its UTXO set (bcoin's address index), so a
 * difference is a suspicion until a second pass confirms it. Checked, per custody address (the
 * deposit addresses and the hot wallet), both the worker's figures and the outputs themselves: the
 * node's unspent outputs of each address are exactly those the ledger's records leave there
 * (deposits not consolidated, deposits the scan ignored; the hot wallet ledger's unspent outputs).
 *
 * - deposits (one address with two outputs, one with an output below the token's minimum) and the
 *   hot wallet funded by the test before any pass: the first pass agrees; the hot wallet's funding
 *   is its OPENING balance; the output below the minimum is explained as DEPOSIT_IGNORED;
 * - a collection consolidating five deposit outputs into the hot wallet, broadcast and not mined
 *   during a pass (bcoin lists the inputs as spent and the new output as unconfirmed): nothing
 *   unexplained, the inputs explained by the consolidation in flight; then mined (a pass before the
 *   pipeline could see it, and after it is final): zero unexplained, no explanation left but the
 *   ignored output;
 * - the hot wallet funded again after its first comparison: a suspicion at the first pass, a
 *   discrepancy at the second (alerted once), booked as FUNDING by the operator, then agreed.
 *
 * BTCREG (id 150, 2 confirmations, hrp "rb") comes from a WCS_CONFIG file, as in the collection test.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { address as btcAddress, Transaction } from 'bitcoinjs-lib';
import type { BalanceReader } from '@wcs/core';
import { createBitcoinAdapter } from '@wcs/adapter-bitcoin';
import { startRegtest, type RegtestNode } from '@wcs/adapter-bitcoin/regtest';
import type { CreatedApplication } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testEnv, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { SigningClient } from './client/signing-client';
import { expectOk, pollUntil } from './support/expect';
import { waitForHotWallet } from './support/payouts';
import { cliJson, describeCli, runCli } from './support/processes';
import { ADDRESS_CREATE } from './support/recharge-types';
import { sendOutputs } from './support/regtest-wallet';
import { tempDir } from './support/temp';

const CHAIN_ID = 150;
const CODE = 'BTCREG';
const TOKEN_ID = CHAIN_ID * 100;
const MIN_CONF = 2;
const HRP = 'rb';
/** The token's minimum deposit: 0.001 BTC. */
const MIN_DEPOSIT = 100_000n;
const NETWORK = { bech32: HRP, pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef, messagePrefix: '', bip32: { public: 0, private: 0 } };

interface Pass { id: number; chainCode: string; height: string; exact: boolean; addresses: number; compared: number; unexplained: number; opened: number; openings: number }
interface BalanceRow { address: string; address_kind: string; ledger: string; on_chain: string; explained: string; unexplained: string; explanations: Array<{ kind: string; amount: string; ref: string }>; suspect_height: string | null }

const outpoint = (txid: string, vout: number) => `${txid}:${vout}`;
const sum = (xs: readonly bigint[]) => xs.reduce((s, v) => s + v, 0n);

describe('reconciliation on a bcoin regtest node: the UTXO set of every custody address against the ledger, a consolidation in flight, outputs the ledger does not know', function () {
  this.timeout(600_000);
  let node: RegtestNode;
  let db: TestDatabase;
  let svc: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  let pool: Pool;
  let env: Record<string, string>;
  let hot: string;
  let reader: BalanceReader;
  /** The deposit addresses by user. */
  const dep: Record<string, string> = {};
  /** Every output paid to a deposit address (txid:vout → sats) and the one below the minimum. */
  const paid = new Map<string, bigint>();
  let dust = '';
  let funding = 0n;

  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const wcs = async (args: string[], exit = 0) => {
    const r = await runCli([...args, '--json'], env, 300_000);
    expect(r.code, describeCli(args, r)).to.equal(exit);
    return cliJson(args, r);
  };
  const run = async (): Promise<Pass> => {
    const passes = (await wcs(['reconcile', 'run', '--chain', CODE, '--full'])) as Pass[];
    expect(passes).to.have.length(1);
    return passes[0]!;
  };
  const newAddress = async (user: string) => (expectOk(await client.post(ADDRESS_CREATE, { chainCode: CODE, externalUserId: user })) as { address: string }).address;
  const outputsTo = async (txid: string, address: string): Promise<Map<string, bigint>> => {
    const script = Buffer.from(btcAddress.toOutputScript(address, NETWORK));
    const t = Transaction.fromHex(await node.rpc<string>('getrawtransaction', [txid, false]));
    const out = new Map<string, bigint>();
    t.outs.forEach((o, vout) => {
      if (Buffer.from(o.script).equals(script)) out.set(outpoint(txid, vout), BigInt(o.value));
    });
    return out;
  };
  const caughtUp = async () => {
    const tip = BigInt(await node.rpc<number>('getblockcount'));
    const r = await pollUntil(() => q<{ height: string | null }>('SELECT height::text AS height FROM scan_cursors WHERE chain_id = $1', [CHAIN_ID]), (rows) => rows[0]?.height != null && BigInt(rows[0].height) >= tip, 60_000, 50);
    expect(r.ok, `the scan reached ${tip}`).to.equal(true);
  };
  const balances = async (): Promise<Map<string, BalanceRow>> => new Map((await q<BalanceRow>(
    `SELECT address, address_kind, ledger::text AS ledger, on_chain::text AS on_chain, explained::text AS explained, unexplained::text AS unexplained, explanations, suspect_height::text AS suspect_height
       FROM reconcile_balances WHERE chain_id = $1 AND chain_token_id = $2`, [CHAIN_ID, TOKEN_ID])).map((r) => [r.address, r]));
  const alerts = () => q<{ id: string; details: Record<string, unknown> }>(`SELECT id::text AS id, details FROM operator_alerts WHERE kind = 'RECONCILE_DISCREPANCY' ORDER BY id`);
  /** The node's unspent outputs of an address (txid:vout → sats, confirmations). */
  const unspent = async (address: string) => {
    const { outputs } = await reader.unspentOutputs!([address]);
    return outputs[0]!.map((o) => ({ key: outpoint(o.txHash, o.vout), amount: o.amount, confirmations: o.confirmations }));
  };
  /**
   * The outputs the ledger's records leave at a deposit address: its deposits not taken by a
   * consolidation the pipeline has seen mined, and the deposits the scan ignored.
   */
  const ledgerOutputs = async (address: string): Promise<Map<string, bigint>> => {
    const rows = await q<{ k: string; amount: string }>(
      `SELECT r.tx_hash || ':' || r.position AS k, r.amount::text AS amount FROM recharges r
        WHERE r.chain_id = $1 AND r.address = $2 AND r.tx_status <> 'FAILED'
          AND NOT EXISTS (SELECT 1 FROM transfers x CROSS JOIN LATERAL jsonb_array_elements(x.options->'inputs') i
                           WHERE x.chain_id = $1 AND x.status IN ('CONFIRMING','SUCCESS') AND i->>'txHash' = r.tx_hash AND (i->>'vout')::int = r.position)
       UNION ALL SELECT i.tx_hash || ':' || i.position, i.amount::text FROM ignored_deposits i WHERE i.chain_id = $1 AND i.address = $2`, [CHAIN_ID, address]);
    return new Map(rows.map((r) => [r.k, BigInt(r.amount)]));
  };
  /** The hot wallet ledger's unspent outputs (hot_wallet_utxos). */
  const hotLedgerOutputs = async (): Promise<Map<string, bigint>> => new Map((await q<{ k: string; amount: string }>(
    `SELECT u.tx_hash || ':' || u.vout AS k, u.amount::text AS amount FROM hot_wallet_utxos u JOIN hot_wallets h ON h.id = u.hot_wallet_id
      WHERE h.application_id = $1 AND h.chain_id = $2 AND u.spent_by IS NULL`, [app.id, CHAIN_ID])).map((r) => [r.k, BigInt(r.amount)]));
  const asMap = (list: Array<{ key: string; amount: bigint }>) => new Map(list.map((o) => [o.key, o.amount]));

  before(async function () {
    this.timeout(180_000);
    node = await startRegtest();
    const scanStart = String(Number(await node.rpc<number>('getblockcount')) + 1);
    const chain = { id: CHAIN_ID, code: CODE, name: 'Bitcoin regtest (bcoin)', family: 'bitcoin', environment: 'test', network: 'regtest', nativeSymbol: 'BTC', decimals: 8, confirmations: MIN_CONF, options: { bech32Hrp: HRP } };
    const configFile = path.join(tempDir('wcs-reconcile-btc-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({
      chains: [chain],
      tokens: [{ id: TOKEN_ID, chainCode: CODE, environment: 'test', symbol: 'BTC', name: 'Bitcoin regtest native coin', contract: null, decimals: 8, minDeposit: '0.001' }],
    }));
    reader = createBitcoinAdapter({ ...chain, curve: 'secp256k1', addressing: 'hd' } as never).createBalanceReader!({ url: node.url });
    await prepareTestKeystore();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 3 });
    const vars = {
      [`WCS_RPC_TEST_${CODE}`]: node.url, [`WCS_SCAN_START_TEST_${CODE}`]: scanStart, WCS_CONFIG: configFile, WCS_SCAN_POLL_MS: '100',
      WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100', WCS_COLLECT_PLAN_MS: '200', [`WCS_COLLECT_MAX_FEE_RATE_TEST_${CODE}`]: '1000',
      WCS_RECONCILE_INTERVAL_SECONDS: '0', WCS_RATE_LIMIT_RPS: '0',
    };
    env = { ...process.env, ...testEnv(db.url, vars) } as Record<string, string>;
    svc = await WcsService.start(testConfig(db.url, vars), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'reconcile-btc', environment: 'test', chains: [CODE] });
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    hot = await waitForHotWallet(q, app.id, CHAIN_ID, 30_000);
  });

  after(async () => {
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await node?.stop();
  });

  it('deposits, an output below the minimum and the hot wallet funded by the operator: the first pass agrees, the funding is the OPENING balance, the small output DEPOSIT_IGNORED; the UTXO sets are the ledger\'s', async () => {
    for (const u of ['alice', 'bob', 'carol', 'dave']) dep[u] = await newAddress(u);
    const tx = await sendOutputs(node, [
      { address: dep['alice']!, sats: 1_000_000n }, { address: dep['alice']!, sats: 300_000n }, { address: dep['bob']!, sats: 2_000_000n },
      { address: dep['carol']!, sats: 1_500_000n }, { address: dep['dave']!, sats: 700_000n }, { address: dep['dave']!, sats: MIN_DEPOSIT / 2n },
    ]);
    for (const a of Object.values(dep)) for (const [k, v] of await outputsTo(tx, a)) paid.set(k, v);
    expect(paid.size).to.equal(6);
    dust = [...paid].find(([, v]) => v === MIN_DEPOSIT / 2n)![0];
    // the operator funds the hot wallet from outside the service
    funding = 50_000_000n;
    await node.send(hot, funding);
    await node.mine(MIN_CONF);
    const credited = await pollUntil(() => q<{ tx_status: string }>('SELECT tx_status FROM recharges WHERE application_id = $1', [app.id]), (rows) => rows.length === 5 && rows.every((r) => r.tx_status === 'SETTLED'), 60_000, 100);
    expect(credited.ok, `five deposits settled: ${JSON.stringify(credited.result)}`).to.equal(true);
    await caughtUp();
    const [ignored] = await q<{ k: string; amount: string; reason: string }>('SELECT tx_hash || \':\' || position AS k, amount::text AS amount, reason FROM ignored_deposits WHERE chain_id = $1', [CHAIN_ID]);
    expect(ignored).to.deep.equal({ k: dust, amount: (MIN_DEPOSIT / 2n).toString(), reason: 'BELOW_MINIMUM' });

    const p = await run();
    expect(p.exact, 'the UTXO set is read at the head').to.equal(false);
    expect(p).to.include({ addresses: 5, compared: 5, unexplained: 0, opened: 0, openings: 1 });
    const b = await balances();
    expect(b.get(hot)).to.include({ address_kind: 'HOT', ledger: funding.toString(), on_chain: funding.toString(), unexplained: '0' });
    const [opening] = await q<{ amount: string; address: string }>(`SELECT amount::text AS amount, address FROM reconcile_adjustments WHERE kind = 'OPENING'`);
    expect(opening).to.deep.equal({ amount: funding.toString(), address: hot });
    expect(b.get(dep['alice']!)).to.include({ ledger: '1300000', on_chain: '1300000', unexplained: '0' });
    expect(b.get(dep['dave']!)).to.include({ ledger: '700000', on_chain: (700_000n + MIN_DEPOSIT / 2n).toString(), explained: (MIN_DEPOSIT / 2n).toString(), unexplained: '0' });
    const [txid, vout] = dust.split(':');
    expect(b.get(dep['dave']!)!.explanations).to.deep.equal([{ kind: 'DEPOSIT_IGNORED', amount: (MIN_DEPOSIT / 2n).toString(), ref: `tx:${txid}#${vout}` }]);
    for (const a of Object.values(dep)) {
      const chain = await unspent(a);
      expect(asMap(chain), `${a}: the node's outputs are the ledger's`).to.deep.equal(await ledgerOutputs(a));
      expect(sum(chain.map((o) => o.amount)).toString()).to.equal(b.get(a)!.on_chain);
    }
    const hotChain = await unspent(hot);
    expect(hotChain.map((o) => o.amount)).to.deep.equal([funding]);
    const hotLedger = await pollUntil(hotLedgerOutputs, (m) => m.size === 1, 30_000, 100);
    expect(asMap(hotChain), 'the hot wallet ledger holds the funding output').to.deep.equal(hotLedger.result);
    expect(await alerts()).to.deep.equal([]);
  });

  it('a consolidation of five deposit outputs broadcast and not mined during a pass: nothing unexplained; mined, before and after the pipeline sees it: zero unexplained, the UTXO sets the ledger\'s', async () => {
    await q(`INSERT INTO collection_policies (application_id, chain_token_id, threshold, max_fee_bps, native_value, on_confirmed, schedule_seconds)
             VALUES ($1, $2, $3::numeric, $4, NULL, true, NULL)`, [app.id, TOKEN_ID, '100000', 5000]);
    const launched = await pollUntil(() => q<{ id: string; status: string; tx_hash: string; sent_amount: string; fee: string; options: { inputs: Array<{ txHash: string; vout: number; amount: string; owner: { address: string } }> } }>(
      `SELECT id::text AS id, status, tx_hash, sent_amount::text AS sent_amount, fee::text AS fee, options FROM transfers WHERE application_id = $1 AND kind = 'SWEEP'`, [app.id]),
    (rows) => rows.length > 0 && rows.every((r) => r.status === 'BROADCASTED') && sum(rows.map((r) => BigInt(r.options.inputs.length))) === 5n, 60_000, 100);
    expect(launched.ok, `consolidations broadcast: ${JSON.stringify(launched.result.map((r) => [r.status, r.options?.inputs?.length]))}`).to.equal(true);
    const sweeps = launched.result;
    const mempool = await node.rpc<string[]>('getrawmempool');
    for (const s of sweeps) expect(mempool, 'broadcast, not mined').to.include(s.tx_hash);
    const inputs = sweeps.flatMap((s) => s.options.inputs.map((i) => outpoint(i.txHash, i.vout)));
    expect(inputs.sort()).to.deep.equal([...paid.keys()].filter((k) => k !== dust).sort());
    const arrived = sum(sweeps.map((s) => BigInt(s.sent_amount)));

    // a pass while they sit in the mempool
    const inFlight = await run();
    expect(inFlight).to.include({ unexplained: 0, opened: 0, openings: 0 });
    let b = await balances();
    for (const u of ['alice', 'bob', 'carol']) {
      const row = b.get(dep[u]!)!;
      expect(row, `${u}: the chain no longer lists what the consolidation spends`).to.include({ on_chain: '0', unexplained: '0' });
      expect(row.explanations.map((e) => e.kind), u).to.include('TRANSFER_IN_FLIGHT').and.not.include('DEPOSIT_IGNORED');
      expect(sum(row.explanations.map((e) => BigInt(e.amount))), `${u}: the consolidation takes all it holds`).to.equal(-BigInt(row.ledger));
    }
    expect(b.get(dep['dave']!)!.explanations.map((e) => e.kind).sort()).to.deep.equal(['DEPOSIT_IGNORED', 'TRANSFER_IN_FLIGHT']);
    expect(b.get(dep['dave']!)).to.include({ on_chain: (MIN_DEPOSIT / 2n).toString(), unexplained: '0' });
    expect(b.get(hot), 'the new output is unconfirmed: not in the balance yet').to.include({ on_chain: funding.toString(), ledger: funding.toString(), unexplained: '0' });
    const hotPending = await unspent(hot);
    expect(hotPending.filter((o) => o.confirmations === 0).map((o) => o.key).sort()).to.deep.equal(sweeps.map((s) => outpoint(s.tx_hash, 0)).sort());
    for (const u of ['alice', 'bob', 'carol']) expect(await unspent(dep[u]!), `${u}: its outputs are spent in the mempool`).to.deep.equal([]);
    expect(asMap(await unspent(dep['dave']!))).to.deep.equal(new Map([[dust, MIN_DEPOSIT / 2n]]));

    // mined: a pass right away (the pipeline may not have seen the block yet), then once final
    await node.mine(1);
    const justMined = await run();
    expect(justMined).to.include({ unexplained: 0, opened: 0 });
    b = await balances();
    expect(BigInt(b.get(hot)!.on_chain), 'the consolidated outputs are in the hot wallet').to.equal(funding + arrived);
    await node.mine(MIN_CONF);
    const done = await pollUntil(() => q<{ status: string }>(`SELECT status FROM transfers WHERE application_id = $1 AND kind = 'SWEEP'`, [app.id]), (rows) => rows.every((r) => r.status === 'SUCCESS'), 60_000, 100);
    expect(done.ok, JSON.stringify(done.result)).to.equal(true);
    await caughtUp();
    const final = await run();
    expect(final).to.include({ compared: 5, unexplained: 0, opened: 0, openings: 0 });
    b = await balances();
    for (const u of ['alice', 'bob', 'carol']) expect(b.get(dep[u]!)).to.include({ ledger: '0', on_chain: '0', explained: '0', unexplained: '0' });
    expect(b.get(dep['dave']!)).to.include({ ledger: '0', on_chain: (MIN_DEPOSIT / 2n).toString(), unexplained: '0' });
    expect(b.get(dep['dave']!)!.explanations.map((e) => e.kind)).to.deep.equal(['DEPOSIT_IGNORED']);
    expect(b.get(hot)).to.include({ ledger: (funding + arrived).toString(), on_chain: (funding + arrived).toString(), explained: '0', unexplained: '0' });
    // what arrived is what was deposited less the consolidations' fees
    expect(arrived).to.equal(sum([...paid].filter(([k]) => k !== dust).map(([, v]) => v)) - sum(sweeps.map((s) => BigInt(s.fee))));
    // the UTXO set of every custody address against the ledger's records
    for (const a of Object.values(dep)) expect(asMap(await unspent(a)), a).to.deep.equal(await ledgerOutputs(a));
    const hotLedger = await pollUntil(hotLedgerOutputs, (m) => m.size === 1 + sweeps.length, 30_000, 100);
    expect(asMap(await unspent(hot)), 'the hot wallet: the funding and the consolidations\' outputs').to.deep.equal(hotLedger.result);
    expect(await q(`SELECT id FROM reconcile_discrepancies`)).to.deep.equal([]);
    expect(await alerts()).to.deep.equal([]);
  });

  it('the hot wallet funded again after its first comparison: a suspicion, then a discrepancy alerted once, booked as FUNDING by the operator, then agreed', async () => {
    const more = 20_000_000n;
    const tx = await node.send(hot, more);
    await node.mine(1);
    const [k] = [...(await outputsTo(tx, hot)).keys()];
    expect(asMap(await unspent(hot)).get(k!)).to.equal(more);
    const first = await run();
    expect(first, 'a head-only read: a suspicion, no discrepancy yet').to.include({ unexplained: 1, opened: 0 });
    expect((await balances()).get(hot)).to.include({ unexplained: more.toString() });
    expect((await balances()).get(hot)!.suspect_height).to.not.equal(null);
    expect(await alerts()).to.deep.equal([]);
    await caughtUp();
    const second = await run();
    expect(second).to.include({ unexplained: 1, opened: 1 });
    const [d] = await q<{ id: string; status: string; amount: string; address_kind: string; alert_id: string | null }>(
      `SELECT id::text AS id, status, amount::text AS amount, address_kind, alert_id::text AS alert_id FROM reconcile_discrepancies`);
    expect(d).to.include({ status: 'OPEN', amount: more.toString(), address_kind: 'HOT' });
    const [a] = await alerts();
    expect(a!.id).to.equal(d!.alert_id);
    expect(a!.details).to.include({ address: hot, amount: more.toString(), addressKind: 'HOT' });
    // the same difference at the next pass: the same discrepancy, no second alert
    expect(await run()).to.include({ opened: 0 });
    expect(await alerts()).to.have.length(1);
    // a deposit address's surplus can be assigned; a hot wallet's cannot
    await wcs(['reconcile', 'assign', d!.id], 1);
    const booked = await wcs(['reconcile', 'book', d!.id, '--note', 'operator funding of the hot wallet']);
    expect(booked).to.include({ discrepancyId: Number(d!.id), adjustment: 'FUNDING', amount: '0.2', token: 'BTC' });
    const last = await run();
    expect(last).to.include({ unexplained: 0, opened: 0 });
    expect((await balances()).get(hot)).to.include({ ledger: (BigInt((await balances()).get(hot)!.on_chain)).toString(), unexplained: '0' });
    expect((await q<{ status: string }>('SELECT status FROM reconcile_discrepancies WHERE id = $1', [d!.id]))[0]!.status).to.equal('BOOKED');
    expect(await q<{ kind: string; amount: string }>(`SELECT kind, amount::text AS amount FROM reconcile_adjustments WHERE kind = 'FUNDING'`)).to.deep.equal([{ kind: 'FUNDING', amount: more.toString() }]);
  });
});
