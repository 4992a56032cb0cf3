/**
 * Delegated sweeps (EIP-7702) on anvil (Prague) through the service with its workers and the
 * software key store: deposit addresses delegate their code to the service's forwarder and are
 * swept in batches by one transaction of the fee wallet each. 200 ERC-20 and 50 native addresses:
 * every unit reaches the hot wallet, no top-up, each address's authorization sent once; a later
 * deposit to a delegated address is swept without a new authorization; each item's `collect`
 * event carries the batch's hash, its share of the gas, and no gas funding.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { anvilRpc, deployErc20, erc20Balance, mintErc20, sendNative, startAnvil, startBlockClock, type AnvilDevnet, type BlockClock } from '@wcs/adapter-evm/devnet';
import { batchSweeperDeployment, forwarderDeployment } from '@wcs/adapter-evm';
import type { CreatedApplication } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testEnv, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { SigningClient } from './client/signing-client';
import { waitForHotWallet } from './support/payouts';
import { CallbackReceiver, verifyCallback } from './support/callback-receiver';
import { expectOk, pollUntil } from './support/expect';
import { ADDRESS_CREATE } from './support/recharge-types';
import { cliJson, describeCli, runCli } from './support/processes';
import { tempDir } from './support/temp';

const ETH_CHAIN = 102;
const ETH_TOKEN_ID = 10200;
const TOKEN_ID = 10299;
const ETHER = 10n ** 18n;
const GWEI = 10n ** 9n;
const TOKEN_ADDRESSES = Number(process.env.WCS_TEST_DELEGATED_TOKENS ?? 200);
const NATIVE_ADDRESSES = Number(process.env.WCS_TEST_DELEGATED_NATIVES ?? 50);

interface CollectEvent {
  id: number; status: string; txHash: string | null; gasFee: string | null; gasFeeCurrency: string | null; gasFunding: unknown; amount: string; fromAddress: string; toAddress: string;
  failureReasonCode: string | null; failureReasonMessage: string | null;
}

describe('delegated sweeps (EIP-7702) on anvil: batches, one authorization per address, no top-ups', function () {
  this.timeout(600_000);
  let anvil: AnvilDevnet;
  let clock: BlockClock;
  let token: string;
  let db: TestDatabase;
  let svc: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  let pool: Pool;
  let hot: string;
  let fee: string;
  let env: Record<string, string>;
  const receiver = new CallbackReceiver();
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const newAddress = async (c: SigningClient, user: string) => (expectOk(await c.post(ADDRESS_CREATE, { chainCode: 'ETH', externalUserId: user })) as { address: string }).address;
  const balance = (a: string) => anvilRpc<string>(anvil.url, 'eth_getBalance', [a, 'latest']).then(BigInt);
  const collectEvents = (appId: number): CollectEvent[] => receiver.received.filter((r) => r.target.startsWith(`/collect/${appId}`)).map((r) => JSON.parse(r.body.toString('utf8')) as CollectEvent);
  const setPolicy = (appId: number, tokenId: number, p: { threshold: string; nativeValue?: string; mode?: string }) => q(
    `INSERT INTO collection_policies (application_id, chain_token_id, threshold, max_fee_bps, native_value, on_confirmed, schedule_seconds, sweep_mode)
     VALUES ($1, $2, $3::numeric, 1000, $4::numeric, true, NULL, $5)
     ON CONFLICT (application_id, chain_token_id) DO UPDATE SET threshold = EXCLUDED.threshold, native_value = EXCLUDED.native_value, sweep_mode = EXCLUDED.sweep_mode, updated_at = now()`,
    [appId, tokenId, p.threshold, p.nativeValue ?? null, p.mode ?? 'DELEGATED']);
  const items = (appId: number) => q<{ id: string; from_address: string; chain_token_id: number; status: string; amount: string; failure_code: string | null; waiting_reason: string | null; transfer_id: string | null; tx_hash: string | null; gas_fee: string | null; to_address: string }>(
    `SELECT id::text AS id, from_address, chain_token_id, status, amount::text AS amount, failure_code, waiting_reason, transfer_id::text AS transfer_id, tx_hash, gas_fee::text AS gas_fee, to_address
       FROM collection_items WHERE application_id = $1 ORDER BY collection_items.id`, [appId]);
  const settled = async (appId: number, n: number, timeoutMs = 300_000) => {
    const r = await pollUntil(() => items(appId), (rows) => rows.length >= n && rows.every((i) => i.status === 'SUCCESS' || i.status === 'FAILED'), timeoutMs, 250);
    expect(r.ok, `items of app ${appId}: ${r.result.length} of ${n}; ${JSON.stringify(r.result.filter((i) => i.status !== 'SUCCESS').slice(0, 3))}`).to.equal(true);
    return r.result;
  };
  /** The authorizations every SWEEP_BATCH of the application carried, by authority (lowercase). */
  const authorizations = async (appId: number) => {
    const rows = await q<{ authority: string }>(
      `SELECT lower(a->>'authority') AS authority FROM transfers x CROSS JOIN LATERAL jsonb_array_elements(x.options->'call'->'authorizations') a
        WHERE x.application_id = $1 AND x.kind = 'SWEEP_BATCH' AND x.status <> 'FAILED'`, [appId]);
    const by = new Map<string, number>();
    for (const r of rows) by.set(r.authority, (by.get(r.authority) ?? 0) + 1);
    return by;
  };

  before(async () => {
    anvil = await startAnvil({ chainId: 11155111, extraArgs: ['--hardfork', 'prague'] });
    clock = await startBlockClock(anvil.url, 200);
    token = await deployErc20(anvil.url, { name: 'Test USD', symbol: 'TUSD' });
    const configFile = path.join(tempDir('wcs-delegated-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({ tokens: [{ id: TOKEN_ID, chainCode: 'ETH', environment: 'test', symbol: 'TUSD', name: 'Test USD (anvil)', contract: token, decimals: 18 }] }));
    await prepareTestKeystore();
    await receiver.start();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 3 });
    const vars = {
      WCS_RPC_TEST_ETH: anvil.url, WCS_CONFIG: configFile, WCS_CALLBACK_POLL_MS: '50', WCS_CALLBACK_ALLOW_PRIVATE: '1',
      WCS_HOT_WALLET_REFRESH_MS: '300', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '200', WCS_COLLECT_PLAN_MS: '300', WCS_RECONCILE_INTERVAL_SECONDS: '0',
    };
    env = { ...process.env, ...testEnv(db.url, vars) } as Record<string, string>;
    svc = await WcsService.start(testConfig(db.url, vars), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'delegated', environment: 'test', chains: ['ETH'] });
    await svc.storage.applications.setCallback(TEST_ACTOR, app.id, 'COLLECT', receiver.url(`/collect/${app.id}`));
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    hot = await waitForHotWallet(q, app.id, ETH_CHAIN, 30_000);
    const fw = await pollUntil(() => q<{ address: string }>('SELECT address FROM fee_wallets WHERE application_id = $1 AND chain_id = $2', [app.id, ETH_CHAIN]), (r) => r.length === 1, 30_000, 100);
    fee = fw.result[0]!.address;
    // the operator funds the fee wallet (it pays every batch and the contracts' deployments); never the deposit addresses or the hot wallet
    await sendNative(anvil.url, fee, 10n * ETHER);
  });

  after(async () => {
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await receiver.stop();
    await clock?.stop();
    await anvil?.stop();
  });

  it(`${TOKEN_ADDRESSES} ERC-20 and ${NATIVE_ADDRESSES} native deposit addresses swept in batches: every unit at the collector, no top-up, each authorization sent once`, async () => {
    const tokenAddrs: string[] = [];
    const nativeAddrs: string[] = [];
    for (let i = 0; i < TOKEN_ADDRESSES; i++) tokenAddrs.push(await newAddress(client, `t-${i}`));
    for (let i = 0; i < NATIVE_ADDRESSES; i++) nativeAddrs.push(await newAddress(client, `n-${i}`));
    const tokenAmounts = tokenAddrs.map((_a, i) => 5n * ETHER + BigInt(i));
    const nativeAmounts = nativeAddrs.map((_a, i) => ETHER / 100n + BigInt(i) * GWEI);
    for (const [i, a] of tokenAddrs.entries()) await mintErc20(anvil.url, token, a, tokenAmounts[i]!);
    for (const [i, a] of nativeAddrs.entries()) await sendNative(anvil.url, a, nativeAmounts[i]!);
    const hotNativeBefore = await balance(hot);
    await setPolicy(app.id, TOKEN_ID, { threshold: ETHER.toString(), nativeValue: (3000n * ETHER).toString() });
    await setPolicy(app.id, ETH_TOKEN_ID, { threshold: (ETHER / 1000n).toString() });

    const done = await settled(app.id, TOKEN_ADDRESSES + NATIVE_ADDRESSES);
    expect(done.filter((i) => i.status !== 'SUCCESS'), 'all SUCCESS').to.deep.equal([]);
    // every unit reached the collector; every deposit address is empty
    expect(await erc20Balance(anvil.url, token, hot)).to.equal(tokenAmounts.reduce((s, v) => s + v, 0n));
    for (const a of tokenAddrs) expect(await erc20Balance(anvil.url, token, a), a).to.equal(0n);
    for (const a of nativeAddrs) expect(await balance(a), a).to.equal(0n);
    expect(await balance(hot) - hotNativeBefore, 'every wei of the native deposits').to.equal(nativeAmounts.reduce((s, v) => s + v, 0n));
    // no top-up; the contracts deployed once each; each address delegated to the forwarder of its collector
    const kinds = await q<{ kind: string; n: number }>(`SELECT kind, count(*)::int AS n FROM transfers WHERE application_id = $1 GROUP BY kind ORDER BY kind`, [app.id]);
    expect(Object.fromEntries(kinds.map((k) => [k.kind, k.n]))).to.not.have.property('TOP_UP');
    expect(Object.fromEntries(kinds.map((k) => [k.kind, k.n]))).to.include({ DEPLOY: 2 });
    const forwarder = forwarderDeployment(hot).address;
    for (const a of [...tokenAddrs.slice(0, 5), ...nativeAddrs.slice(0, 5)]) {
      expect(await anvilRpc<string>(anvil.url, 'eth_getCode', [a, 'latest']), a).to.equal(`0xef0100${forwarder.slice(2).toLowerCase()}`);
    }
    const auths = await authorizations(app.id);
    expect(auths.size, 'one authorization per address').to.equal(TOKEN_ADDRESSES + NATIVE_ADDRESSES);
    expect([...auths.values()].every((n) => n === 1), 'each sent once').to.equal(true);
    // items share batches; each item's hash is its batch's, its gas a share of the batch's fee
    const batches = await q<{ id: string; tx_hash: string; fee: string; to_address: string; from_address: string; n: number; gas: string }>(
      `SELECT x.id::text AS id, x.tx_hash, x.fee::text AS fee, x.to_address, x.from_address, count(i.id)::int AS n, sum(i.gas_fee)::text AS gas
         FROM transfers x JOIN collection_items i ON i.transfer_id = x.id WHERE x.application_id = $1 AND x.kind = 'SWEEP_BATCH' GROUP BY x.id ORDER BY x.id`, [app.id]);
    expect(batches.length, 'fewer batches than items').to.be.below(done.length);
    for (const b of batches) {
      expect(b.gas, `batch ${b.id}: the items' gas adds up to its fee`).to.equal(b.fee);
      expect(b.to_address).to.equal(batchSweeperDeployment().address);
      expect(b.from_address).to.equal(fee);
      expect(done.filter((i) => i.transfer_id === b.id).every((i) => i.tx_hash === b.tx_hash)).to.equal(true);
    }
  });

  it('collect callbacks: one SUCCESS per item, signed, txHash the batch transaction, gasFee its share, gasFunding null', async () => {
    const all = await items(app.id);
    const r = await pollUntil(async () => collectEvents(app.id), (e) => e.length >= all.length, 60_000, 200);
    expect(r.result.length).to.equal(all.length);
    for (const got of receiver.received.filter((x) => x.target.startsWith(`/collect/${app.id}`))) expect(verifyCallback(got, app.apiKey, app.apiSecret, got.at)).to.equal(null);
    for (const e of r.result) {
      const item = all.find((i) => i.id === String(e.id))!;
      expect(e).to.include({ status: 'SUCCESS', gasFunding: null, gasFeeCurrency: 'ETH', failureReasonCode: null, txHash: item.tx_hash });
      expect(e.gasFee).to.match(/^0\.\d+$/);
      expect(e.toAddress).to.equal(hot);
    }
  });

  it('a later deposit to an already delegated address is swept without a new authorization', async () => {
    const [first] = await items(app.id);
    const again = 3n * ETHER;
    const before = await q<{ n: number }>('SELECT count(*)::int AS n FROM collection_items WHERE application_id = $1', [app.id]);
    await mintErc20(anvil.url, token, first!.from_address, again);
    const done = await settled(app.id, before[0]!.n + 1);
    const last = done[done.length - 1]!;
    expect(last).to.include({ status: 'SUCCESS', from_address: first!.from_address, amount: again.toString() });
    const [batch] = await q<{ n: number }>(`SELECT jsonb_array_length(options->'call'->'authorizations')::int AS n FROM transfers WHERE id = $1`, [last.transfer_id]);
    expect(batch!.n, 'no authorization in the later batch').to.equal(0);
    const auths = await authorizations(app.id);
    expect(auths.get(first!.from_address.toLowerCase())).to.equal(1);
  });

  it('reconciliation agrees with the chain: every deposit address, the hot wallet and the fee wallet, with the batches\' items in the ledger', async () => {
    // nothing in flight, and the scan past the last batch
    const open = await pollUntil(() => q<{ n: number }>(`SELECT count(*)::int AS n FROM transfers WHERE status NOT IN ('SUCCESS','FAILED')`), (r) => r[0]!.n === 0, 60_000, 200);
    expect(open.ok).to.equal(true);
    const r = await runCli(['reconcile', 'run', '--chain', 'ETH', '--full', '--json'], env, 300_000);
    expect(r.code, describeCli(['reconcile', 'run'], r)).to.equal(0);
    const [pass] = cliJson(['reconcile', 'run'], r) as Array<{ opened: number; compared: number }>;
    expect(pass!.opened, 'no discrepancy opened').to.equal(0);
    expect(pass!.compared, 'the deposit addresses, hot and fee wallets were compared').to.be.greaterThan(TOKEN_ADDRESSES);
    expect(await q(`SELECT id, address, amount::text FROM reconcile_discrepancies`)).to.deep.equal([]);
  });
});
