/**
 * Sweeps in flight during reconciliation passes (docs/reconciliation.md, "Explanations"), on anvil
 * with the service's own collection: three deposit addresses receive a token, the collection
 * tops each up with gas from the fee wallet and sweeps it to the hot wallet, and passes
 * (`wcs reconcile run --full`) run one after the other for as long as that takes, some of them
 * with blocks held back so top-ups and sweeps sit signed and broadcast but unmined. No pass opens a
 * discrepancy at any stage; the last one agrees to the unit with nothing in flight.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { deployErc20, deployMulticall3, mine, mintErc20, sendNative, startAnvil, startBlockClock, anvilRpc, type AnvilDevnet, type BlockClock } from '@wcs/adapter-evm/devnet';
import type { CreatedApplication } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testEnv, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { SigningClient } from './client/signing-client';
import { expectOk, pollUntil } from './support/expect';
import { waitForHotWallet } from './support/payouts';
import { cliJson, describeCli, runCli } from './support/processes';
import { ADDRESS_CREATE } from './support/recharge-types';
import { tempDir } from './support/temp';

const ETH_CHAIN = 102;
const TOKEN_ID = 10297;
const ETHER = 10n ** 18n;

interface Pass { id: number; height: string; compared: number; unexplained: number; opened: number }

describe('reconciliation while sweeps and their gas top-ups are in flight (anvil)', function () {
  this.timeout(600_000);
  let anvil: AnvilDevnet;
  let clock: BlockClock;
  let token: string;
  let db: TestDatabase;
  let svc: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  let pool: Pool;
  let env: Record<string, string>;
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const wcs = async (args: string[]) => {
    const r = await runCli([...args, '--json'], env, 300_000);
    expect(r.code, describeCli(args, r)).to.equal(0);
    return cliJson(args, r);
  };
  const pass = async (): Promise<Pass> => ((await wcs(['reconcile', 'run', '--chain', 'ETH', '--full'])) as Pass[])[0]!;
  const openTransfers = () => q<{ kind: string; status: string }>(`SELECT kind, status FROM transfers WHERE application_id = $1 AND status IN ('SIGNED','BROADCASTED','CONFIRMING')`, [app.id]);

  before(async () => {
    anvil = await startAnvil({ chainId: 11155111 });
    clock = await startBlockClock(anvil.url, 1500); // slow blocks: each top-up and sweep spends several passes in flight
    await deployMulticall3(anvil.url);
    token = await deployErc20(anvil.url, { name: 'Sweep USD', symbol: 'SWEEP' });
    const configFile = path.join(tempDir('wcs-reconcile-sweep-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({ tokens: [{ id: TOKEN_ID, chainCode: 'ETH', environment: 'test', symbol: 'SWEEP', name: 'Sweep USD (anvil)', contract: token, decimals: 18 }] }));
    await prepareTestKeystore();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 3 });
    const vars = {
      WCS_RPC_TEST_ETH: anvil.url, WCS_CONFIG: configFile, WCS_CALLBACK_POLL_MS: '50', WCS_HOT_WALLET_REFRESH_MS: '300', WCS_WITHDRAW_POLL_MS: '100',
      WCS_SCAN_POLL_MS: '100', WCS_COLLECT_PLAN_MS: '300', WCS_RECONCILE_INTERVAL_SECONDS: '0',
    };
    env = { ...process.env, ...testEnv(db.url, vars) } as Record<string, string>;
    svc = await WcsService.start(testConfig(db.url, vars), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'reconcile-sweep', environment: 'test', chains: ['ETH'] });
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    await waitForHotWallet(q, app.id, ETH_CHAIN, 30_000);
  });

  after(async () => {
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await clock?.stop().catch(() => undefined);
    await anvil?.stop();
  });

  it('passes through every stage of three sweeps (top-up, sweep, both held unmined) open no discrepancy; the last agrees with nothing in flight', async () => {
    // the operator's part: a policy, the fee wallet funded; then a first pass books it as OPENING
    await wcs(['collect', 'fee-wallets', '--app', String(app.id)]);
    const [fee] = await q<{ address: string }>('SELECT address FROM fee_wallets WHERE application_id = $1 AND chain_id = $2', [app.id, ETH_CHAIN]);
    await sendNative(anvil.url, fee!.address, ETHER, { wait: true });
    await mine(anvil.url, 1);
    const first = await pollUntil(pass, (p) => p.compared > 0, 30_000, 500);
    expect(first.result.unexplained, JSON.stringify(first.result)).to.equal(0);

    const addrs: string[] = [];
    for (const user of ['s-1', 's-2', 's-3']) addrs.push((expectOk(await client.post(ADDRESS_CREATE, { chainCode: 'ETH', externalUserId: user })) as { address: string }).address);
    for (const [i, a] of addrs.entries()) await mintErc20(anvil.url, token, a, BigInt(i + 5) * ETHER + 7n);
    const credited = await pollUntil(() => q<{ tx_status: string }>('SELECT tx_status FROM recharges WHERE application_id = $1 AND chain_token_id = $2', [app.id, TOKEN_ID]),
      (r) => r.length === 3 && r.every((x) => x.tx_status === 'CONFIRMED' || x.tx_status === 'SETTLED'), 120_000, 100);
    expect(credited.ok, `three deposits credited: ${JSON.stringify(credited.result)}`).to.equal(true);
    const passes: Array<Pass & { inFlight: string[] }> = [];
    let held = 0;
    // blocks held back from the start: the three gas top-ups are signed and broadcast but stay unmined through a pass
    await clock.pause();
    try {
      await wcs(['collect', 'policy', 'set', '--app', String(app.id), '--chain', 'ETH', '--token', 'SWEEP', '--threshold', '1', '--max-fee-percent', '10', '--native-value', '3000']);
      const broadcast = await pollUntil(() => q<{ kind: string; status: string }>(`SELECT kind, status FROM transfers WHERE application_id = $1 AND kind = 'TOP_UP'`, [app.id]),
        (r) => r.length === 3 && r.every((t) => t.status === 'BROADCASTED'), 120_000, 100);
      expect(broadcast.ok, `three top-ups broadcast: ${JSON.stringify(broadcast.result)}`).to.equal(true);
      const open = await openTransfers();
      passes.push({ ...(await pass()), inFlight: open.map((t) => `${t.kind}:${t.status}`) });
      held++;
    } finally {
      clock.resume();
    }
    const deadline = Date.now() + 240_000;
    const sweepSeen = () => passes.some((p) => p.inFlight.some((s) => s.startsWith('SWEEP')));
    for (;;) {
      if (!sweepSeen() && (await openTransfers()).some((t) => t.kind === 'TOP_UP')) {
        // a sweep's whole life (its top-up final, signed, mined, final) fits in one pass's CLI run on a
        // loaded machine: the blocks are taken off the clock while top-ups are open and mined one at a
        // time until an item is funded; its sweep is then signed and broadcast but stays unmined for a pass
        await clock.pause();
        const funded = await pollUntil(async () => {
          const r = await q<{ n: number }>(`SELECT count(*)::int AS n FROM collection_items WHERE application_id = $1 AND status IN ('FUNDED','SWEEPING')`, [app.id]);
          if (r[0]!.n === 0) await mine(anvil.url, 1);
          return r;
        }, (r) => r[0]!.n > 0, 60_000, 200);
        const s = funded.ok ? await pollUntil(openTransfers, (o) => o.some((t) => t.kind === 'SWEEP'), 15_000, 25) : { ok: false };
        if (!s.ok) clock.resume();
        if (s.ok) {
          try {
            const open = await openTransfers();
            passes.push({ ...(await pass()), inFlight: open.map((t) => `${t.kind}:${t.status}`) });
            held++;
          } finally {
            clock.resume();
          }
          continue;
        }
      }
      const items = await q<{ status: string }>('SELECT status FROM collection_items WHERE application_id = $1 AND chain_token_id = $2', [app.id, TOKEN_ID]);
      const done = items.length === 3 && items.every((i) => i.status === 'SUCCESS' || i.status === 'FAILED');
      const open = await openTransfers();
      if (open.some((t) => t.status === 'BROADCASTED') && held < 3) {
        // hold the blocks back: the broadcast top-up or sweep stays unmined through a pass
        await clock.pause();
        try {
          const p = await pass();
          passes.push({ ...p, inFlight: open.map((t) => `${t.kind}:${t.status}`) });
          held++;
        } finally {
          clock.resume();
        }
      } else {
        const p = await pass();
        passes.push({ ...p, inFlight: open.map((t) => `${t.kind}:${t.status}`) });
      }
      if (done && open.length === 0) break;
      if (Date.now() >= deadline) {
        const skips = await q('SELECT address, reason, holds FROM collection_skips WHERE application_id = $1', [app.id]);
        const recharges = await q('SELECT address, tx_status, amount::text, collection_item_id FROM recharges WHERE application_id = $1', [app.id]);
        expect.fail(`the sweeps did not finish: ${JSON.stringify({ items, skips, recharges, open })}`);
      }
    }
    const items = await q<{ status: string }>('SELECT status FROM collection_items WHERE application_id = $1 AND chain_token_id = $2', [app.id, TOKEN_ID]);
    expect(items.map((i) => i.status)).to.deep.equal(['SUCCESS', 'SUCCESS', 'SUCCESS']);
    // passes ran while top-ups and sweeps were in flight, some with them broadcast but unmined
    const stages = new Set(passes.flatMap((p) => p.inFlight));
    expect([...stages].some((s) => s.startsWith('TOP_UP')), JSON.stringify(passes)).to.equal(true);
    expect([...stages].some((s) => s.startsWith('SWEEP')), JSON.stringify(passes)).to.equal(true);
    expect(held, 'passes with a broadcast transfer held unmined').to.be.greaterThan(0);
    for (const p of passes) expect(p.opened, `pass ${p.id} during ${p.inFlight.join(', ')}`).to.equal(0);
    expect(await q('SELECT id FROM reconcile_discrepancies')).to.deep.equal([]);
    expect(await q(`SELECT id FROM operator_alerts WHERE kind = 'RECONCILE_DISCREPANCY'`)).to.deep.equal([]);

    // nothing in flight: the last pass agrees to the unit, the token at the hot wallet, gas left at the deposit addresses
    await mine(anvil.url, 4);
    const tip = BigInt(await anvilRpc<string>(anvil.url, 'eth_blockNumber'));
    await pollUntil(() => q<{ height: string }>('SELECT height::text AS height FROM scan_cursors WHERE chain_id = $1', [ETH_CHAIN]), (r) => r[0] !== undefined && BigInt(r[0].height) >= tip, 60_000, 50);
    const last = await pass();
    expect(last.unexplained).to.equal(0);
    const rows = await q<{ address_kind: string; chain_token_id: number; ledger: string; on_chain: string; explained: string }>(
      'SELECT address_kind, chain_token_id, ledger::text AS ledger, on_chain::text AS on_chain, explained::text AS explained FROM reconcile_balances WHERE application_id = $1', [app.id]);
    for (const r of rows) expect(r, JSON.stringify(r)).to.include({ ledger: r.on_chain, explained: '0' });
    const hotToken = rows.find((r) => r.address_kind === 'HOT' && r.chain_token_id === TOKEN_ID);
    expect(hotToken?.on_chain).to.equal((18n * ETHER + 21n).toString());
  });
});
