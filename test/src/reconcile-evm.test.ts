/**
 * Reconciliation on anvil (docs/reconciliation.md), through the service's scanner and pipeline
 * and `wcs reconcile`, Multicall3 deployed by the test, the deposit scan's traces off (the chain
 * option `traces: "off"`), passes run by the CLI (the schedule off):
 *
 * - a first full pass agrees to the wei; the hot wallet the operator funded is booked as its
 *   OPENING balance, not alerted;
 * - a balance raised with anvil_setBalance (as a validator withdrawal or SELFDESTRUCT would) is
 *   found, located to the block where the node first shows it, reported, alerted once (a second
 *   pass neither duplicates it nor alerts again), then assigned: a recharge at the located block
 *   with PENDING, CONFIRMED, SETTLED callbacks, the discrepancy CREDITED and audited;
 * - an ERC-20 outflow sent with anvil_impersonateAccount from a deposit address: its TRANSFER
 *   record explains it (an EXPLAINED discrepancy, the gas it took booked from the node's receipt),
 *   no open discrepancy;
 * - a contract wallet paying a deposit address with CALL while traces are off: no recharge;
 *   reconciliation finds it, located to the payment's block, held until an operator assigns it;
 * - a payout in flight (signed and broadcast, then mined but not yet seen by the pipeline) during
 *   passes: no false discrepancy;
 * - 1,000 deposit addresses holding two tokens: a full pass, zero unexplained;
 * - bad input to the commands: coded errors, nothing changed.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { Interface } from 'ethers';
import { anvilRpc, deployErc20, deployMulticall3, mine, mintErc20, sendNative, startAnvil, startBlockClock, waitForReceipt, type AnvilDevnet, type BlockClock } from '@wcs/adapter-evm/devnet';
import type { CreatedApplication } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testEnv, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver } from './support/callback-receiver';
import { expectOk, pollUntil } from './support/expect';
import { freshEvmAddress, waitForHotWallet } from './support/payouts';
import { cliJson, describeCli, runCli } from './support/processes';
import { ADDRESS_CREATE } from './support/recharge-types';
import { tempDir } from './support/temp';

const ETH_CHAIN = 102;
const ETH_TOKEN = 10200;
const TUSD = 10296;
const TEUR = 10295;
const ETHER = 10n ** 18n;
const DEV_ACCOUNT = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
/** A contract wallet's payment: forwards msg.value with CALL to the address in its calldata (runtime 6000600060006000346000355af15000). */
const FORWARDER_INIT = '0x6010600c60003960106000f36000600060006000346000355af15000';
const ERC20 = new Interface(['function transfer(address to, uint256 amount) returns (bool)', 'function mint(address to, uint256 amount)']);

interface Pass { id: number; chainCode: string; height: string; exact: boolean; compared: number; unexplained: number; opened: number; openings: number; outflowsRecorded: number }
interface DiscrepancyRow { id: string; status: string; amount: string; address: string; address_kind: string; located_height: string | null; located_hash: string | null; height: string; alert_id: string | null; outflow_id: string | null; recharge_id: string | null; known: Record<string, unknown> }

describe('reconciliation on anvil (wcs reconcile, Multicall3, traces off)', function () {
  this.timeout(600_000);
  let anvil: AnvilDevnet;
  let clock: BlockClock;
  let tusd: string;
  let teur: string;
  let db: TestDatabase;
  let svc: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  let pool: Pool;
  let env: Record<string, string>;
  let hot: string;
  const receiver = new CallbackReceiver();
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const wcs = async (args: string[], exit = 0) => {
    const r = await runCli([...args, '--json'], env, 300_000);
    expect(r.code, describeCli(args, r)).to.equal(exit);
    return cliJson(args, r);
  };
  const run = async (): Promise<Pass> => {
    const passes = (await wcs(['reconcile', 'run', '--chain', 'ETH', '--full'])) as Pass[];
    expect(passes).to.have.length(1);
    return passes[0]!;
  };
  const tip = async () => BigInt(await anvilRpc<string>(anvil.url, 'eth_blockNumber'));
  const caughtUp = async () => {
    const t = await tip();
    const r = await pollUntil(() => q<{ height: string | null }>('SELECT height::text AS height FROM scan_cursors WHERE chain_id = $1', [ETH_CHAIN]), (rows) => rows[0]?.height != null && BigInt(rows[0].height) >= t, 60_000, 50);
    expect(r.ok, `the scan reached ${t}`).to.equal(true);
  };
  const newAddress = async (user: string) => (expectOk(await client.post(ADDRESS_CREATE, { chainCode: 'ETH', externalUserId: user })) as { address: string }).address;
  const settled = async (address: string, n: number) => {
    const r = await pollUntil(() => q<{ tx_status: string }>('SELECT tx_status FROM recharges WHERE address = $1', [address]), (rows) => rows.length === n && rows.every((x) => x.tx_status === 'SETTLED'), 60_000, 100);
    expect(r.ok, `${address}: ${JSON.stringify(r.result)}`).to.equal(true);
  };
  const balanceAt = async (address: string, height: bigint) => BigInt(await anvilRpc<string>(anvil.url, 'eth_getBalance', [address, `0x${height.toString(16)}`]));
  const discrepancies = (where = 'true', params: unknown[] = []) => q<DiscrepancyRow>(
    `SELECT id::text AS id, status, amount::text AS amount, address, address_kind, located_height::text AS located_height, located_hash, height::text AS height,
            alert_id::text AS alert_id, outflow_id::text AS outflow_id, recharge_id::text AS recharge_id, known FROM reconcile_discrepancies WHERE ${where} ORDER BY id`, params);
  const balanceRow = async (address: string, token: number) => (await q<{ ledger: string; on_chain: string; unexplained: string; explained: string; explanations: Array<{ kind: string; amount: string; ref: string }> }>(
    'SELECT ledger::text AS ledger, on_chain::text AS on_chain, unexplained::text AS unexplained, explained::text AS explained, explanations FROM reconcile_balances WHERE chain_id = $1 AND chain_token_id = $2 AND address = $3',
    [ETH_CHAIN, token, address]))[0];
  const alerts = () => q<{ id: string; details: Record<string, unknown>; message: string }>(`SELECT id::text AS id, details, message FROM operator_alerts WHERE kind = 'RECONCILE_DISCREPANCY' ORDER BY id`);

  before(async () => {
    anvil = await startAnvil({ chainId: 11155111 });
    clock = await startBlockClock(anvil.url, 100);
    await deployMulticall3(anvil.url);
    tusd = await deployErc20(anvil.url, { name: 'Test USD', symbol: 'TUSD' });
    teur = await deployErc20(anvil.url, { name: 'Test EUR', symbol: 'TEUR' });
    const configFile = path.join(tempDir('wcs-reconcile-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({
      chains: [{ id: ETH_CHAIN, code: 'ETH', name: 'Ethereum Sepolia (anvil)', family: 'evm', environment: 'test', network: 'sepolia', nativeSymbol: 'ETH', decimals: 18, confirmations: 3, evmChainId: 11155111, options: { traces: 'off' } }],
      tokens: [
        { id: TUSD, chainCode: 'ETH', environment: 'test', symbol: 'TUSD', name: 'Test USD (anvil)', contract: tusd, decimals: 18 },
        { id: TEUR, chainCode: 'ETH', environment: 'test', symbol: 'TEUR', name: 'Test EUR (anvil)', contract: teur, decimals: 6 },
      ],
    }));
    await prepareTestKeystore();
    await receiver.start();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 3 });
    const vars = {
      WCS_RPC_TEST_ETH: anvil.url, WCS_CONFIG: configFile, WCS_SCAN_POLL_MS: '50', WCS_CALLBACK_POLL_MS: '50', WCS_CALLBACK_ALLOW_PRIVATE: '1',
      WCS_HOT_WALLET_REFRESH_MS: '300', WCS_WITHDRAW_POLL_MS: '3000', WCS_RECONCILE_INTERVAL_SECONDS: '0', WCS_RATE_LIMIT_RPS: '0',
    };
    env = { ...process.env, ...testEnv(db.url, vars) } as Record<string, string>;
    svc = await WcsService.start(testConfig(db.url, vars), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'reconcile', environment: 'test', chains: ['ETH'] });
    await svc.storage.applications.setCallback(TEST_ACTOR, app.id, 'RECHARGE', receiver.url('/merchant/recharge'));
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    hot = await waitForHotWallet(q, app.id, ETH_CHAIN, 30_000);
    // the operator funds the hot wallet from outside the service (docs/withdrawals.md)
    await sendNative(anvil.url, hot, 10n * ETHER, { wait: true });
  });

  after(async () => {
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await receiver.stop();
    await clock?.stop().catch(() => undefined);
    await anvil?.stop();
  });

  it('a first full pass agrees to the wei; the funded hot wallet is booked as its OPENING balance, not alerted', async () => {
    const alice = await newAddress('alice');
    await sendNative(anvil.url, alice, ETHER, { wait: true });
    await settled(alice, 1);
    await caughtUp();
    const p = await run();
    expect(p.exact, 'read at the scan cursor').to.equal(true);
    expect(p.unexplained, JSON.stringify(p)).to.equal(0);
    expect(p.opened).to.equal(0);
    expect(p.openings, 'the hot wallet\'s ETH').to.equal(1);
    const [opening] = await q<{ amount: string; kind: string; address: string }>(`SELECT amount::text AS amount, kind, address FROM reconcile_adjustments WHERE kind = 'OPENING'`);
    expect(opening).to.deep.equal({ amount: (10n * ETHER).toString(), kind: 'OPENING', address: hot });
    expect(await balanceRow(alice, ETH_TOKEN)).to.include({ ledger: ETHER.toString(), on_chain: ETHER.toString(), unexplained: '0' });
    expect(await alerts()).to.deep.equal([]);
  });

  it('a balance raised with anvil_setBalance is found, located to its block, reported, alerted once, then assigned: a recharge with PENDING, CONFIRMED, SETTLED callbacks', async () => {
    const [{ address: alice }] = await q<{ address: string }>(`SELECT address FROM addresses WHERE external_user_id = 'alice'`) as [{ address: string }];
    const before = await tip();
    const raised = ETHER + ETHER / 4n;
    await anvilRpc(anvil.url, 'anvil_setBalance', [alice, `0x${raised.toString(16)}`]);
    await mine(anvil.url, 2);
    const after = await tip();
    // the truth: the first block at which the node reports the new balance
    let first: bigint | null = null;
    for (let h = before; h <= after && first === null; h++) if ((await balanceAt(alice, h)) === raised) first = h;
    expect(first, 'anvil shows the raised balance').to.not.equal(null);
    const block = await anvilRpc<{ hash: string }>(anvil.url, 'eth_getBlockByNumber', [`0x${first!.toString(16)}`, false]);
    await caughtUp();
    const p = await run();
    expect(p.opened).to.equal(1);
    const [d] = await discrepancies(`status = 'OPEN'`);
    expect(d).to.include({ status: 'OPEN', amount: (ETHER / 4n).toString(), address: alice, address_kind: 'DEPOSIT', located_height: first!.toString(), located_hash: block.hash });
    const [a] = await alerts();
    expect(a!.id).to.equal(d!.alert_id);
    expect(a!.details).to.include({ discrepancyId: Number(d!.id), address: alice, amount: (ETHER / 4n).toString(), locatedHeight: first!.toString() });
    expect(a!.message).to.match(/holds 0\.25 ETH more than the ledger/).and.to.match(/wcs reconcile assign/);
    const report = await wcs(['reconcile', 'report', '--chain', 'ETH']);
    expect(report.discrepancies.map((x: { id: number }) => x.id)).to.deep.equal([Number(d!.id)]);
    const eth = report.balances.find((b: { chainTokenId: number; applicationId: number }) => b.chainTokenId === ETH_TOKEN && b.applicationId === app.id);
    expect(eth.unexplained).to.equal('0.25');
    // a second pass: the same discrepancy, not a second one, no second alert
    await run();
    expect((await discrepancies(`status = 'OPEN'`)).map((x) => x.id)).to.deep.equal([d!.id]);
    expect(await alerts()).to.have.length(1);

    const assigned = await wcs(['reconcile', 'assign', d!.id]);
    expect(assigned).to.include({ discrepancyId: Number(d!.id), externalUserId: 'alice', amount: '0.25', token: 'ETH', txHash: block.hash, blockHeight: Number(first) });
    const [rec] = await q<{ tx_hash: string; position: number; amount: string; block_height: string }>('SELECT tx_hash, position, amount::text AS amount, block_height::text AS block_height FROM recharges WHERE id = $1', [assigned.rechargeId]);
    expect(rec).to.deep.equal({ tx_hash: block.hash, position: -(10_000_000 + Number(d!.id)), amount: (ETHER / 4n).toString(), block_height: first!.toString() });
    const callbacks = await pollUntil(async () => receiver.received.map((r) => JSON.parse(r.body.toString('utf8')) as { event: string; id: number; txStatus: string; txHash: string })
      .filter((e) => e.event === 'recharge' && e.id === assigned.rechargeId), (evs) => evs.some((e) => e.txStatus === 'SETTLED'), 30_000, 100);
    expect(callbacks.result.map((e) => e.txStatus)).to.deep.equal(['PENDING', 'CONFIRMED', 'SETTLED']);
    expect(callbacks.result.every((e) => e.txHash === block.hash)).to.equal(true);
    const [audit] = await q<{ actor_role: string; before: { status: string }; after: { status: string; rechargeId: number } }>(`SELECT actor_role, before, after FROM audit_log WHERE action = 'reconcile.assign'`);
    expect(audit!.before.status).to.equal('OPEN');
    expect(audit!.after).to.include({ status: 'CREDITED', rechargeId: assigned.rechargeId });
    // settled: the ledger now holds it
    await caughtUp();
    const again = await run();
    expect(again.unexplained).to.equal(0);
    expect((await discrepancies('id = $1', [d!.id]))[0]).to.include({ status: 'CREDITED', recharge_id: String(assigned.rechargeId) });
  });

  it('an ERC-20 outflow sent with anvil_impersonateAccount from a deposit address is explained by its TRANSFER record; its gas booked from the node', async () => {
    const bob = await newAddress('bob');
    await mintErc20(anvil.url, tusd, bob, 5n * ETHER, { wait: true });
    await sendNative(anvil.url, bob, ETHER / 10n, { wait: true });
    await settled(bob, 2);
    await anvilRpc(anvil.url, 'anvil_impersonateAccount', [bob]);
    const hash = await anvilRpc<string>(anvil.url, 'eth_sendTransaction', [{ from: bob, to: tusd, data: ERC20.encodeFunctionData('transfer', [freshEvmAddress(), 2n * ETHER]) }]);
    await anvilRpc(anvil.url, 'anvil_stopImpersonatingAccount', [bob]);
    const receipt = await waitForReceipt<{ gasUsed: string; effectiveGasPrice: string; blockNumber: string }>(anvil.url, hash, 30_000);
    const gas = BigInt(receipt.gasUsed) * BigInt(receipt.effectiveGasPrice);
    const outflow = await pollUntil(() => q<{ id: string }>('SELECT id::text AS id FROM custody_outflows WHERE tx_hash = $1', [hash]), (r) => r.length === 1, 30_000, 100);
    expect(outflow.ok, 'the scan recorded the outflow (TRANSFER)').to.equal(true);
    await caughtUp();
    const p = await run();
    expect(p.opened, JSON.stringify(p)).to.equal(0);
    expect(p.outflowsRecorded).to.equal(1);
    const [d] = await discrepancies('outflow_id = $1', [outflow.result[0]!.id]);
    expect(d).to.include({ status: 'EXPLAINED', amount: (-2n * ETHER).toString(), address: bob, located_height: BigInt(receipt.blockNumber).toString() });
    const [fee] = await q<{ amount: string; ref: string }>(`SELECT amount::text AS amount, ref FROM reconcile_adjustments WHERE kind = 'OUTFLOW_FEE' AND address = $1`, [bob]);
    expect(fee).to.deep.equal({ amount: (-gas).toString(), ref: hash });
    expect(await balanceRow(bob, TUSD)).to.include({ ledger: (3n * ETHER).toString(), on_chain: (3n * ETHER).toString(), unexplained: '0' });
    expect(await balanceRow(bob, ETH_TOKEN)).to.include({ ledger: (ETHER / 10n - gas).toString(), on_chain: (ETHER / 10n - gas).toString(), unexplained: '0' });
    expect(await discrepancies(`status = 'OPEN'`)).to.deep.equal([]);
  });

  it('a contract wallet paying a deposit address with CALL, traces off: no recharge; reconciliation finds it, located to its block, held until assigned', async () => {
    const carol = await newAddress('carol');
    const deployed = await anvilRpc<string>(anvil.url, 'eth_sendTransaction', [{ from: DEV_ACCOUNT, data: FORWARDER_INIT }]);
    const wallet = (await waitForReceipt<{ contractAddress: string }>(anvil.url, deployed, 30_000)).contractAddress;
    const pay = await anvilRpc<string>(anvil.url, 'eth_sendTransaction', [{ from: DEV_ACCOUNT, to: wallet, value: `0x${(3n * ETHER / 10n).toString(16)}`, data: `0x${carol.slice(2).toLowerCase().padStart(64, '0')}` }]);
    const receipt = await waitForReceipt<{ blockNumber: string; blockHash: string; status: string }>(anvil.url, pay, 30_000);
    expect(receipt.status).to.equal('0x1');
    expect(await balanceAt(carol, BigInt(receipt.blockNumber)), 'the contract paid carol').to.equal(3n * ETHER / 10n);
    await mine(anvil.url, 4);
    await caughtUp();
    expect(await q('SELECT id FROM recharges WHERE address = $1', [carol]), 'no transaction to carol: the scan (traces off) credits nothing').to.deep.equal([]);
    const p = await run();
    expect(p.opened).to.equal(1);
    const [d] = await discrepancies(`status = 'OPEN'`);
    expect(d).to.include({ address: carol, amount: (3n * ETHER / 10n).toString(), located_height: BigInt(receipt.blockNumber).toString(), located_hash: receipt.blockHash });
    // held: a later pass neither credits it nor opens another
    await run();
    expect(await q('SELECT id FROM recharges WHERE address = $1', [carol])).to.deep.equal([]);
    expect((await discrepancies(`status = 'OPEN'`)).map((x) => x.id)).to.deep.equal([d!.id]);
    const assigned = await wcs(['reconcile', 'assign', d!.id]);
    expect(assigned).to.include({ externalUserId: 'carol', amount: '0.3', txHash: receipt.blockHash });
  });

  it('a payout in flight during passes (broadcast, then mined before the pipeline saw it) gives no false discrepancy', async () => {
    await clock.pause();
    try {
      const order = expectOk(await client.post('/api/v1/wallet/withdraw/create', { appOrderNo: 'rc-1', chainCode: 'ETH', chainTokenId: ETH_TOKEN, toAddress: freshEvmAddress(), amount: '0.5' })) as { id: number };
      const broadcast = await pollUntil(() => q<{ status: string; transfer_id: string | null }>('SELECT x.status, x.id::text AS transfer_id FROM withdrawals w JOIN transfers x ON x.id = w.transfer_id WHERE w.id = $1', [order.id]),
        (r) => r[0]?.status === 'BROADCASTED', 60_000, 50);
      expect(broadcast.ok, JSON.stringify(broadcast.result)).to.equal(true);
      // in the pool, not mined: neither the chain nor the ledger has it
      await caughtUp();
      const p1 = await run();
      expect(p1.opened).to.equal(0);
      expect(await balanceRow(hot, ETH_TOKEN)).to.include({ unexplained: '0' });
      // mined; the pipeline (polling every 3 s) may not have seen it yet
      await mine(anvil.url, 1);
      await caughtUp();
      const p2 = await run();
      const [x] = await q<{ status: string }>('SELECT status FROM transfers WHERE id = $1', [broadcast.result[0]!.transfer_id]);
      const row = await balanceRow(hot, ETH_TOKEN);
      expect(p2.opened, `transfer ${x!.status} during the pass: ${JSON.stringify(row)}`).to.equal(0);
      expect(row!.unexplained).to.equal('0');
      if (x!.status === 'BROADCASTED') expect(row!.explanations.map((e) => e.kind)).to.deep.equal(['TRANSFER_IN_FLIGHT']);
    } finally {
      clock.resume();
    }
    const done = await pollUntil(() => q<{ status: string }>(`SELECT status FROM withdrawals WHERE app_order_no = 'rc-1'`), (r) => r[0]?.status === 'SUCCESS', 60_000, 200);
    expect(done.ok).to.equal(true);
    await caughtUp();
    const p3 = await run();
    expect(p3.unexplained).to.equal(0);
    expect(await balanceRow(hot, ETH_TOKEN)).to.include({ explained: '0', unexplained: '0' });
    expect(await discrepancies(`status = 'OPEN'`)).to.deep.equal([]);
  });

  it('1,000 deposit addresses holding two tokens: a full pass, zero unexplained', async () => {
    const users = Array.from({ length: 1000 }, (_, i) => `many-${i}`);
    const addresses: string[] = [];
    for (let i = 0; i < users.length; i += 20) addresses.push(...(await Promise.all(users.slice(i, i + 20).map((u) => newAddress(u)))));
    await clock.pause();
    try {
      let nonce = BigInt(await anvilRpc<string>(anvil.url, 'eth_getTransactionCount', [DEV_ACCOUNT, 'pending']));
      const sends = addresses.flatMap((a, i) => [
        { to: tusd, data: ERC20.encodeFunctionData('mint', [a, BigInt(i + 1) * 10n ** 15n]) },
        { to: teur, data: ERC20.encodeFunctionData('mint', [a, BigInt(i + 1) * 1000n]) },
      ]).map((tx) => ({ ...tx, from: DEV_ACCOUNT, nonce: `0x${(nonce++).toString(16)}`, gas: '0x186a0' }));
      for (let i = 0; i < sends.length; i += 50) await Promise.all(sends.slice(i, i + 50).map((tx) => anvilRpc(anvil.url, 'eth_sendTransaction', [tx])));
      for (let left = sends.length; left > 0;) {
        await mine(anvil.url, 1);
        left = Number(BigInt((await anvilRpc<{ pending: string }>(anvil.url, 'txpool_status')).pending));
      }
    } finally {
      clock.resume();
    }
    const credited = await pollUntil(() => q<{ n: number }>(`SELECT count(*)::int AS n FROM recharges WHERE external_user_id LIKE 'many-%' AND tx_status = 'SETTLED'`), (r) => r[0]!.n === 2000, 120_000, 250);
    expect(credited.result[0]!.n).to.equal(2000);
    await caughtUp();
    const p = await run();
    // deposit addresses, the hot wallet and the fee wallet (made at the first planning pass)
    const custody = (await q<{ n: number }>(
      `SELECT ((SELECT count(*) FROM addresses WHERE chain_id = $1) + (SELECT count(*) FROM hot_wallets WHERE chain_id = $1) + (SELECT count(*) FROM fee_wallets WHERE chain_id = $1))::int AS n`,
      [ETH_CHAIN]))[0]!.n;
    expect((await q<{ n: number }>('SELECT count(*)::int AS n FROM fee_wallets WHERE chain_id = $1', [ETH_CHAIN]))[0]!.n, 'the fee wallet').to.equal(1);
    expect(p.compared, 'every custody address x (ETH, TUSD, TEUR)').to.equal(custody * 3);
    expect(p.unexplained, JSON.stringify(p)).to.equal(0);
    const sums = await q<{ chain_token_id: number; ledger: string; on_chain: string }>(
      `SELECT chain_token_id, sum(ledger)::text AS ledger, sum(on_chain)::text AS on_chain FROM reconcile_balances WHERE address = ANY($1::text[]) GROUP BY chain_token_id ORDER BY chain_token_id`, [addresses]);
    const n = 1000n;
    expect(sums.find((s) => s.chain_token_id === TUSD)).to.deep.equal({ chain_token_id: TUSD, ledger: ((n * (n + 1n)) / 2n * 10n ** 15n).toString(), on_chain: ((n * (n + 1n)) / 2n * 10n ** 15n).toString() });
    expect(sums.find((s) => s.chain_token_id === TEUR)).to.deep.equal({ chain_token_id: TEUR, ledger: ((n * (n + 1n)) / 2n * 1000n).toString(), on_chain: ((n * (n + 1n)) / 2n * 1000n).toString() });
  });

  it('bad input: coded errors, exit codes, nothing changed', async () => {
    const before = await q<{ n: number }>('SELECT (SELECT count(*) FROM reconcile_passes) + (SELECT count(*) FROM audit_log) + (SELECT count(*) FROM reconcile_adjustments) AS n');
    const err = async (args: string[], exit: number) => (await wcs(args, exit)).error as { code: unknown; name: string; msg: string };
    expect(await err(['reconcile', 'run', '--chain', 'NOPE'], 2)).to.include({ name: 'UsageError' });
    expect(await err(['reconcile', 'run', '--chain', 'BTC'], 1)).to.include({ name: 'RECONCILE_CHAIN_UNAVAILABLE' });
    expect(await err(['reconcile', 'assign', 'abc'], 2)).to.include({ name: 'UsageError' });
    expect(await err(['reconcile', 'assign', '999999'], 1)).to.include({ name: 'RECONCILE_DISCREPANCY_NOT_FOUND' });
    const [credited] = await discrepancies(`status = 'CREDITED'`);
    expect(await err(['reconcile', 'assign', credited!.id], 1)).to.include({ name: 'RECONCILE_DISCREPANCY_NOT_OPEN' });
    expect(await err(['reconcile', 'book', credited!.id, '--note', 'x'], 1)).to.include({ name: 'RECONCILE_DISCREPANCY_NOT_OPEN' });
    expect(await err(['reconcile', 'book', credited!.id], 2)).to.include({ code: 'commander.missingMandatoryOptionValue' });
    expect(await err(['reconcile', 'book', credited!.id, '--note', '  '], 2)).to.include({ name: 'UsageError' });
    expect(await err(['reconcile', 'report', '--app', '999'], 1)).to.include({ name: 'APPLICATION_NOT_FOUND' });
    const [explained] = await discrepancies(`status = 'EXPLAINED'`);
    expect(await err(['reconcile', 'assign', explained!.id], 1)).to.include({ name: 'RECONCILE_DISCREPANCY_NOT_OPEN' });
    const after = await q<{ n: number }>('SELECT (SELECT count(*) FROM reconcile_passes) + (SELECT count(*) FROM audit_log) + (SELECT count(*) FROM reconcile_adjustments) AS n');
    expect(after).to.deep.equal(before);
    const status = await wcs(['reconcile', 'status']);
    expect(status.intervalSeconds).to.equal(0);
    const eth = status.chains.find((c: { chainCode: string }) => c.chainCode === 'ETH');
    expect(eth).to.include({ neverCompared: 0, openDiscrepancies: 0 });
  });
});
