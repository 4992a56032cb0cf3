/**
 * The first sweep of a token on anvil, from the state a new operator starts in: an ERC-20 deployed
 * in this test and added by config, which neither the hot wallet, nor the merchant's collection
 * address, nor the cold address has ever held. The operator does what the docs ask of them and
 * nothing more: a collection policy per token (through `wcs collect policy set`), Ether in the fee
 * wallet for gas top-ups and in the hot wallet for the cold transfer's gas, the merchant and cold
 * addresses set with `wcs collect address set`. No token is ever put at the hot wallet by hand.
 *
 * - two deposit addresses swept to the hot wallet, one top-up each, every unit arriving there,
 *   while the hot wallet has no withdrawal fee quote for the token (it holds none: a transfer out
 *   of it cannot be estimated) — the sweep is priced by the sweep itself;
 * - the surplus above the high watermark moved to a cold address that never held the token;
 * - a pass-through application whose merchant address never held it: SETTLED after the sweep;
 * - a sweep that cannot be priced (the token paused by its owner, so every transfer reverts) is
 *   not a silent wait: `wcs collect status` lists the address as waiting with the node's reason,
 *   a COLLECTION_WAITING alert follows after WCS_COLLECT_WAIT_ALERT_SECONDS, and once the token
 *   is unpaused the address is swept without any operator step.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { Contract, JsonRpcProvider, Wallet } from 'ethers';
import { deployErc20, erc20Balance, mintErc20, sendNative, startAnvil, startBlockClock, type AnvilDevnet, type BlockClock } from '@wcs/adapter-evm/devnet';
import type { CreatedApplication } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testEnv, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { WcsService } from '@wcs/server';
import { SigningClient } from './client/signing-client';
import { freshEvmAddress, waitForHotWallet } from './support/payouts';
import { expectOk, pollUntil } from './support/expect';
import { cliJson, describeCli, runCli } from './support/processes';
import { ADDRESS_CREATE } from './support/recharge-types';
import { tempDir } from './support/temp';

const ETH_CHAIN = 102;
const TOKEN_ID = 10297;
const ETHER = 10n ** 18n;
/** anvil's first dev account: the token's deployer, minter and pauser. */
const DEV_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const WAIT_ALERT_SECONDS = 2;

describe('collection of a token nobody at the destination ever held (anvil)', function () {
  this.timeout(300_000);
  let anvil: AnvilDevnet;
  let clock: BlockClock;
  let token: string;
  let db: TestDatabase;
  let svc: WcsService;
  let app: CreatedApplication;
  let client: SigningClient;
  let pool: Pool;
  let hot: string;
  let env: Record<string, string>;
  const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await pool.query(text, params)).rows as T[];
  const wcs = async (args: string[]) => {
    const r = await runCli([...args, '--json'], env);
    expect(r.code, describeCli(args, r)).to.equal(0);
    return cliJson(args, r);
  };
  const newAddress = async (c: SigningClient, user: string) => (expectOk(await c.post(ADDRESS_CREATE, { chainCode: 'ETH', externalUserId: user })) as { address: string }).address;
  const items = (appId: number) => q<{ id: string; from_address: string; status: string; stage: string; amount: string; to_address: string; topup_transfer_id: string | null; waiting_reason: string | null }>(
    `SELECT id::text AS id, from_address, status, stage, amount::text AS amount, to_address, topup_transfer_id::text AS topup_transfer_id, waiting_reason
       FROM collection_items WHERE application_id = $1 AND chain_token_id = $2 ORDER BY id`, [appId, TOKEN_ID]);
  const tokenQuote = () => q<{ n: number }>('SELECT count(*)::int AS n FROM withdraw_fee_quotes WHERE chain_id = $1 AND chain_token_id = $2', [ETH_CHAIN, TOKEN_ID]).then((r) => r[0]!.n);
  const pausable = (write: boolean) => {
    const provider = new JsonRpcProvider(anvil.url, undefined, { staticNetwork: true });
    return { provider, contract: new Contract(token, ['function pause()', 'function unpause()', 'function paused() view returns (bool)'], write ? new Wallet(DEV_KEY, provider) : provider) };
  };
  const setPaused = async (on: boolean) => {
    const { provider, contract } = pausable(true);
    try {
      const tx = await contract.getFunction(on ? 'pause' : 'unpause')();
      await tx.wait();
      expect(await contract.getFunction('paused')()).to.equal(on);
    } finally {
      provider.destroy();
    }
  };
  const policy = (appId: number, extra: string[] = []) => wcs(['collect', 'policy', 'set', '--app', String(appId), '--chain', 'ETH', '--token', 'FRESH',
    '--threshold', '1', '--max-fee-percent', '10', '--native-value', '3000', ...extra]);

  before(async () => {
    anvil = await startAnvil({ chainId: 11155111 });
    clock = await startBlockClock(anvil.url, 100);
    token = await deployErc20(anvil.url, { name: 'Fresh USD', symbol: 'FRESH' });
    const configFile = path.join(tempDir('wcs-first-token-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({ tokens: [{ id: TOKEN_ID, chainCode: 'ETH', environment: 'test', symbol: 'FRESH', name: 'Fresh USD (anvil)', contract: token, decimals: 18 }] }));
    await prepareTestKeystore();
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 3 });
    const vars = {
      WCS_RPC_TEST_ETH: anvil.url, WCS_CONFIG: configFile, WCS_CALLBACK_POLL_MS: '50', WCS_HOT_WALLET_REFRESH_MS: '300', WCS_WITHDRAW_POLL_MS: '100',
      WCS_SCAN_POLL_MS: '200', WCS_COLLECT_PLAN_MS: '300', WCS_COLLECT_WAIT_ALERT_SECONDS: String(WAIT_ALERT_SECONDS),
    };
    env = { ...process.env, ...testEnv(db.url, vars) } as Record<string, string>;
    svc = await WcsService.start(testConfig(db.url, vars), testLogger(), { api: true, workers: true });
    app = await svc.storage.applications.create(TEST_ACTOR, { name: 'first-token', environment: 'test', chains: ['ETH'] });
    client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    hot = await waitForHotWallet(q, app.id, ETH_CHAIN, 30_000);
  });

  after(async () => {
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await clock?.stop();
    await anvil?.stop();
  });

  it('two deposit addresses swept to a hot wallet that never held the token: one top-up each, every unit there, no withdrawal quote needed', async () => {
    // the operator's part: a policy, the fee wallet funded for the gas top-ups
    await policy(app.id);
    await wcs(['collect', 'fee-wallets', '--app', String(app.id)]);
    const [feeWallet] = await q<{ address: string }>('SELECT address FROM fee_wallets WHERE application_id = $1 AND chain_id = $2', [app.id, ETH_CHAIN]);
    await sendNative(anvil.url, feeWallet!.address, ETHER);
    expect(await erc20Balance(anvil.url, token, hot), 'the hot wallet never held the token').to.equal(0n);
    const addrs = [await newAddress(client, 'u-1'), await newAddress(client, 'u-2')];
    const amounts = [7n * ETHER + 1n, 11n * ETHER + 2n];
    for (const [i, a] of addrs.entries()) await mintErc20(anvil.url, token, a, amounts[i]!);
    // the withdrawal quote of a token the hot wallet holds none of cannot be made (a transfer out of it reverts)
    expect(await tokenQuote(), 'no withdrawal quote while the hot wallet holds none').to.equal(0);
    const done = await pollUntil(() => items(app.id), (r) => r.length === 2 && r.every((i) => i.status === 'SUCCESS' || i.status === 'FAILED'), 120_000, 250);
    expect(done.result.map((i) => i.status), JSON.stringify(done.result)).to.deep.equal(['SUCCESS', 'SUCCESS']);
    expect(done.result.every((i) => i.to_address === hot && i.stage === 'HOT_GATHER' && i.topup_transfer_id !== null)).to.equal(true);
    expect(await erc20Balance(anvil.url, token, hot), 'every unit at the hot wallet').to.equal(amounts[0]! + amounts[1]!);
    for (const a of addrs) expect(await erc20Balance(anvil.url, token, a)).to.equal(0n);
    const topups = await q<{ to_address: string; n: number; status: string }>(
      `SELECT to_address, count(*)::int AS n, min(status) AS status FROM transfers WHERE kind = 'TOP_UP' AND application_id = $1 GROUP BY to_address ORDER BY to_address`, [app.id]);
    expect(topups.map((t) => [t.to_address.toLowerCase(), t.n, t.status]).sort()).to.deep.equal(addrs.map((a) => [a.toLowerCase(), 1, 'SUCCESS']).sort());
    // the deposits' own confirmations are untouched by the sweep: SETTLED as before
    const statuses = await q<{ tx_status: string }>('SELECT tx_status FROM recharges WHERE application_id = $1 AND chain_token_id = $2 ORDER BY id', [app.id, TOKEN_ID]);
    expect(statuses.map((r) => r.tx_status)).to.deep.equal(['SETTLED', 'SETTLED']);
    // now that it holds some, the hot wallet's withdrawal quote of the token exists (payouts of it can be priced)
    const quoted = await pollUntil(tokenQuote, (n) => n === 1, 30_000, 200);
    expect(quoted.result, 'the withdrawal quote once the hot wallet holds the token').to.equal(1);
  });

  it('the surplus goes to a cold address that never held the token', async () => {
    const cold = freshEvmAddress();
    await wcs(['collect', 'address', 'set', '--app', String(app.id), '--chain', 'ETH', '--kind', 'COLD', '--address', cold]);
    // the operator funds the hot wallet with Ether for its own transfers' gas (never with the token)
    await sendNative(anvil.url, hot, ETHER);
    const onHot = await erc20Balance(anvil.url, token, hot);
    await policy(app.id, ['--hot-high', '10', '--hot-target', '5']);
    const moved = await pollUntil(() => erc20Balance(anvil.url, token, cold), (b) => b > 0n, 120_000, 250);
    expect(moved.result, 'the surplus above the target').to.equal(onHot - 5n * ETHER);
    const coldItems = await pollUntil(() => items(app.id).then((r) => r.filter((i) => i.stage === 'COLD_TRANSFER')), (r) => r.length === 1 && r[0]!.status === 'SUCCESS', 60_000, 200);
    expect(coldItems.ok, JSON.stringify(coldItems.result)).to.equal(true);
    expect(coldItems.result[0]!.to_address.toLowerCase()).to.equal(cold.toLowerCase());
    await policy(app.id, ['--hot-high', 'off', '--hot-target', 'off']);
  });

  it('pass-through: a merchant address that never held the token receives it, and the deposit is SETTLED after the sweep', async () => {
    const pt = await svc.storage.applications.create(TEST_ACTOR, { name: 'first-token-pt', environment: 'test', chains: ['ETH'] });
    await wcs(['collect', 'settlement', '--app', String(pt.id), '--mode', 'PASS_THROUGH']);
    const merchant = freshEvmAddress();
    await wcs(['collect', 'address', 'set', '--app', String(pt.id), '--chain', 'ETH', '--kind', 'MERCHANT', '--address', merchant]);
    await policy(pt.id);
    await wcs(['collect', 'fee-wallets', '--app', String(pt.id)]);
    const [feeWallet] = await q<{ address: string }>('SELECT address FROM fee_wallets WHERE application_id = $1 AND chain_id = $2', [pt.id, ETH_CHAIN]);
    await sendNative(anvil.url, feeWallet!.address, ETHER);
    const ptClient = new SigningClient(svc.url, { apiKey: pt.apiKey, apiSecret: pt.apiSecret });
    const user = await newAddress(ptClient, 'pt-1');
    const amount = 13n * ETHER + 3n;
    await mintErc20(anvil.url, token, user, amount);
    const statuses = () => q<{ tx_status: string }>('SELECT tx_status FROM recharges WHERE application_id = $1 AND chain_token_id = $2', [pt.id, TOKEN_ID]).then((r) => r.map((x) => x.tx_status));
    const confirmed = await pollUntil(statuses, (s) => s.length === 1 && s[0] !== 'PENDING', 60_000, 100);
    expect(confirmed.result, 'pass-through: CONFIRMED until the merchant has it').to.deep.equal(['CONFIRMED']);
    const settled = await pollUntil(statuses, (s) => s[0] === 'SETTLED', 120_000, 200);
    expect(settled.result).to.deep.equal(['SETTLED']);
    expect(await erc20Balance(anvil.url, token, merchant), 'every unit at the merchant address').to.equal(amount);
    const [item] = await items(pt.id);
    expect(item!.status).to.equal('SUCCESS');
    expect(item!.to_address.toLowerCase()).to.equal(merchant.toLowerCase());
  });

  it('a sweep that cannot be priced waits visibly: listed with the node\'s reason by wcs collect status, alerted once it lasts, swept once it can be priced', async () => {
    const user = await newAddress(client, 'paused-1');
    const amount = 3n * ETHER;
    // the policy is off while the deposit arrives, so no sweep is planned before the token is paused
    await policy(app.id, ['--disable']);
    await mintErc20(anvil.url, token, user, amount);
    // credited and confirmed first, then the token's owner pauses it: every transfer of it reverts, estimates included
    const credited = await pollUntil(() => q<{ tx_status: string }>('SELECT tx_status FROM recharges WHERE address = $1', [user]), (r) => r[0]?.tx_status === 'SETTLED', 60_000, 100);
    expect(credited.ok).to.equal(true);
    await setPaused(true);
    await policy(app.id, ['--enable']);
    try {
      const waiting = await pollUntil(async () => {
        const status = await wcs(['collect', 'status', '--app', String(app.id)]);
        const t = (status.tokens as Array<{ chainTokenId: number; skipped: Array<{ address: string; kind: string; reason: string; sinceTime: string }> }>).find((x) => x.chainTokenId === TOKEN_ID);
        return { status, wait: t?.skipped.find((s) => s.address.toLowerCase() === user.toLowerCase()) };
      }, (r) => r.wait?.kind === 'WAIT' && r.status.alerts.some((a: { kind: string }) => a.kind === 'COLLECTION_WAITING'), 60_000, 500);
      expect(waiting.result.wait, JSON.stringify(waiting.result.status)).to.not.equal(undefined);
      expect(waiting.result.wait!.reason).to.match(/^the sweep cannot be priced: .*paused/i);
      const alert = (waiting.result.status.alerts as Array<{ kind: string; message: string; details: { addresses: string[]; chainTokenId: number } }>).find((a) => a.kind === 'COLLECTION_WAITING')!;
      expect(alert.details.chainTokenId).to.equal(TOKEN_ID);
      expect(alert.details.addresses.map((a) => a.toLowerCase())).to.include(user.toLowerCase());
      expect(alert.message).to.match(/waited over 2 s/);
      // nothing planned while it cannot be priced
      expect((await items(app.id)).filter((i) => i.from_address.toLowerCase() === user.toLowerCase())).to.deep.equal([]);
      // alerted once, not at every pass
      await new Promise((r) => setTimeout(r, 1500));
      expect((await q<{ n: number }>(`SELECT count(*)::int AS n FROM operator_alerts WHERE kind = 'COLLECTION_WAITING'`))[0]!.n).to.equal(1);
    } finally {
      await setPaused(false);
    }
    const swept = await pollUntil(() => items(app.id).then((r) => r.filter((i) => i.from_address.toLowerCase() === user.toLowerCase())), (r) => r[0]?.status === 'SUCCESS', 120_000, 250);
    expect(swept.result.map((i) => i.status), JSON.stringify(swept.result)).to.deep.equal(['SUCCESS']);
    expect(await erc20Balance(anvil.url, token, user)).to.equal(0n);
    // the wait is gone with the plan
    expect(await q('SELECT 1 FROM collection_skips WHERE address = $1', [user])).to.deep.equal([]);
  });
});
