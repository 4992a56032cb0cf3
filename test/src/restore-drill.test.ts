/**
 * The restore drill of docs/deployment.md ("Restoring from a backup"), end to end on anvil with
 * pg_dump / pg_restore and the service's workers: before the backup the service issues deposit
 * addresses, sweeps a deposit and pays a withdrawal; after it (the window the restore loses) it
 * pays the order the backup holds unsigned and one created later, issues another address, tops up
 * a token deposit address from the fee wallet and sweeps it, and sweeps another native deposit.
 * The backup is restored into a new database and the service restarted on it. Then, counted on
 * the chain itself: no withdrawal paid twice, no sweep or top-up sent twice, no deposit address
 * issued to two users; the alerts raised; `wcs recover transfers` resolves the matched order with
 * its callbacks and lists the rest; signing resumes (a new order is paid once, and a token
 * deposit is topped up and swept once after the fee wallet's own recovery). Once with the
 * software key store, once with the PKCS#11 key store on SoftHSM2, where the key-index mark lives
 * on the token and the runbook's `wcs keystore marks --apply` runs before the restart.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect } from 'chai';
import { Pool } from 'pg';
import { anvilRpc, deployErc20, mintErc20, sendNative, startAnvil, startBlockClock, type AnvilDevnet, type BlockClock } from '@wcs/adapter-evm/devnet';
import { WcsService, SENDER_CHAIN_AHEAD, type CreatedApplication } from '@wcs/server';
import { prepareTestKeystore, testConfig, testEnv, testLogger, TEST_ACTOR } from '@wcs/server/testing';
import { SigningClient } from './client/signing-client';
import { CallbackReceiver, verifyCallback } from './support/callback-receiver';
import { freshEvmAddress, waitForHotWallet, type Withdraw, type WithdrawEvent } from './support/payouts';
import { expectOk, pollUntil } from './support/expect';
import { dumpHost, type DumpableDatabase, type DumpHost } from './support/pg-dump';
import { cliJson, describeCli, runCli } from './support/processes';
import { ADDRESS_CREATE } from './support/recharge-types';
import { createTestToken } from './support/softhsm';
import { tempDir } from './support/temp';

const ETH_CHAIN = 102;
const ETH_TOKEN_ID = 10200;
const TOKEN_ID = 10299;
const ETHER = 10n ** 18n;

interface PlanJson {
  chainCode: string; sender: string;
  matched: Array<{ transferId: string; withdrawalId: string | null; appOrderNo: string | null; txHash: string; amount: string }>;
  unmatchedOnChain: Array<{ txHash: string; payments: Array<{ toAddress: string; amount: string; token: string }> }>;
  unmatchedInDatabase: Array<{ transferId: string; withdrawalId: string | null }>;
}
interface ChainTx { hash: string; from: string; to: string; input: string }

/**
 * One drill with the key store `keyStoreEnv` configures. `runbook`: before the restart the
 * operator runs the runbook's `wcs keystore marks` (the database is behind: exit 1) and
 * `wcs keystore marks --apply`, as docs/deployment.md says for a PKCS#11 token; otherwise the
 * service's start applies the marks itself.
 */
function drill(label: string, keyStoreEnv: () => Record<string, string>, options: { runbook: boolean }): void {
  describe(`restore drill on anvil (${label}): payouts, sweeps, top-ups and addresses on both sides of one backup; nothing paid, swept or issued twice`, function () {
    this.timeout(600_000);
    let keyStore: Record<string, string> = {};
    let anvil: AnvilDevnet;
    let clock: BlockClock;
    let token: string;
    let configFile: string;
    let host: DumpHost;
    let db: DumpableDatabase;
    let svc: WcsService | null = null;
    let pool: Pool | null = null;
    let app: CreatedApplication;
    let hot: string;
    let feeWallet: string;
    let dump: string;
    const receiver = new CallbackReceiver();
    /** user → deposit address, in the order issued */
    const issued: Array<{ user: string; address: string; keyIndex: number; lost: boolean }> = [];
    const orders = new Map<string, Withdraw>();

    const env = () => ({
      WCS_RPC_TEST_ETH: anvil.url, WCS_CONFIG: configFile, WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '200',
      WCS_CALLBACK_POLL_MS: '50', WCS_CALLBACK_ALLOW_PRIVATE: '1', WCS_COLLECT_PLAN_MS: '300', ...keyStore,
    });
    const cli = (args: string[]) => runCli(args, { ...process.env, ...testEnv(db.url, env()) }, 120_000);
    const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => {
      pool ??= new Pool({ connectionString: db.url, max: 2 });
      return (await pool.query(text, params)).rows as T[];
    };
    const closePool = async () => {
      await pool?.end();
      pool = null;
    };
    const start = async (workers = true) => {
      svc = await WcsService.start(testConfig(db.url, env()), testLogger(), { api: true, workers });
      return new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
    };
    const stop = async () => {
      await svc?.stop();
      svc = null;
      await closePool();
    };
    const order = async (client: SigningClient, appOrderNo: string, amount: string): Promise<Withdraw> => {
      const w = expectOk(await client.post('/api/v1/wallet/withdraw/create', { appOrderNo, chainCode: 'ETH', chainTokenId: ETH_TOKEN_ID, toAddress: freshEvmAddress(), amount })) as Withdraw;
      orders.set(appOrderNo, w);
      return w;
    };
    const until = async (client: SigningClient, id: number, status: string) => {
      const r = await pollUntil(async () => expectOk(await client.get(`/api/v1/wallet/withdraw/get?id=${id}`)) as Withdraw, (w) => w.status === status || w.status === 'FAILED', 90_000, 100);
      expect(r.result.status, JSON.stringify(r.result)).to.equal(status);
      return r.result;
    };
    const issue = async (client: SigningClient, user: string, lost: boolean) => {
      const { address } = expectOk(await client.post(ADDRESS_CREATE, { chainCode: 'ETH', externalUserId: user })) as { address: string };
      const [k] = await q<{ key_index: number }>(
        `SELECT k.key_index::int AS key_index FROM addresses a JOIN user_keys k ON k.id = a.user_key_id WHERE a.application_id = $1 AND a.chain_code = 'ETH' AND a.external_user_id = $2`, [app.id, user]);
      issued.push({ user, address, keyIndex: k!.key_index, lost });
      return address;
    };
    const setPolicy = (tokenId: number, threshold: bigint, nativeValue: bigint | null) => q(
      `INSERT INTO collection_policies (application_id, chain_token_id, threshold, max_fee_bps, native_value, on_confirmed, schedule_seconds)
       VALUES ($1, $2, $3::numeric, 1000, $4::numeric, true, NULL)`, [app.id, tokenId, threshold.toString(), nativeValue?.toString() ?? null]);
    /** Waits until the collection item from the address has ended, and answers its status. */
    const swept = async (from: string, tokenId: number) => {
      const r = await pollUntil(() => q<{ status: string; transfer_id: string | null }>(
        `SELECT status, transfer_id::text AS transfer_id FROM collection_items WHERE application_id = $1 AND lower(from_address) = lower($2) AND chain_token_id = $3 ORDER BY id`, [app.id, from, tokenId]),
      (rows) => rows.length > 0 && ['SUCCESS', 'FAILED'].includes(rows[rows.length - 1]!.status), 120_000, 200);
      expect(r.result.map((i) => i.status), `the sweep from ${from}`).to.deep.equal(['SUCCESS']);
    };
    /** Every transaction on chain, block by block. */
    const chainTxs = async (): Promise<ChainTx[]> => {
      const tip = Number(BigInt(await anvilRpc<string>(anvil.url, 'eth_blockNumber', [])));
      const out: ChainTx[] = [];
      for (let h = 0; h <= tip; h++) {
        const b = await anvilRpc<{ transactions: ChainTx[] }>(anvil.url, 'eth_getBlockByNumber', [`0x${h.toString(16)}`, true]);
        out.push(...b.transactions.map((t) => ({ hash: t.hash, from: t.from.toLowerCase(), to: (t.to ?? '').toLowerCase(), input: t.input })));
      }
      return out;
    };
    /** The recipient of a transaction: the ERC-20 transfer's `to` for a token call, else the transaction's. */
    const recipient = (t: ChainTx) => (t.input.startsWith('0xa9059cbb') ? `0x${t.input.slice(34, 74)}` : t.to);
    const from = (txs: ChainTx[], sender: string) => txs.filter((t) => t.from === sender.toLowerCase());
    const recoverJson = async (extra: string[] = []) => {
      const args = ['recover', 'transfers', '--json', ...extra];
      const r = await cli(args);
      expect(r.code, describeCli(args, r)).to.equal(0);
      return cliJson(args, r) as { dryRun: boolean; plans: PlanJson[]; applied: Array<{ recorded: Array<{ txHash: string }>; released: boolean }> };
    };
    /** What the chain holds once the drill's lost window is over: counted again after the restore. */
    let lostWindowTxs: ChainTx[] = [];

    before(async () => {
      anvil = await startAnvil({ chainId: 11155111 });
      clock = await startBlockClock(anvil.url, 100);
      token = await deployErc20(anvil.url, { name: 'Test USD', symbol: 'TUSD' });
      configFile = path.join(tempDir('wcs-drill-'), 'config.json');
      fs.writeFileSync(configFile, JSON.stringify({ tokens: [{ id: TOKEN_ID, chainCode: 'ETH', environment: 'test', symbol: 'TUSD', name: 'Test USD (anvil)', contract: token, decimals: 18 }] }));
      await prepareTestKeystore();
      keyStore = keyStoreEnv();
      await receiver.start();
      host = await dumpHost();
      db = await host.createDatabase();
    });
    after(async () => {
      await stop();
      await host?.stop();
      await receiver.stop();
      await clock?.stop();
      await anvil?.stop();
    });

    it('before the backup: three addresses, a native deposit swept, order w1 paid, order w2 accepted unsigned; pg_dump', async () => {
      svc = await WcsService.start(testConfig(db.url, env()), testLogger(), { api: true, workers: true });
      app = await svc.storage.applications.create(TEST_ACTOR, { name: 'drill', environment: 'test', chains: ['ETH'] });
      for (const kind of ['WITHDRAW', 'COLLECT', 'RECHARGE'] as const) await svc.storage.applications.setCallback(TEST_ACTOR, app.id, kind, receiver.url(`/${kind.toLowerCase()}`));
      let client = new SigningClient(svc.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
      hot = await waitForHotWallet(q, app.id, ETH_CHAIN, 30_000);
      await sendNative(anvil.url, hot, 10n * ETHER);
      await setPolicy(ETH_TOKEN_ID, ETHER / 1000n, null);
      await setPolicy(TOKEN_ID, ETHER, 3000n * ETHER);
      const a1 = await issue(client, 'u1', false);
      await issue(client, 'u2', false);
      await issue(client, 'u3', false);
      await sendNative(anvil.url, a1, ETHER / 2n);
      await swept(a1, ETH_TOKEN_ID);
      await until(client, (await order(client, 'w1', '0.01')).id, 'SUCCESS');
      await stop();

      client = await start(false); // no worker: w2 waits unsigned in the backup
      await order(client, 'w2', '0.02');
      await stop();
      dump = await host.dump(db);
    });

    it('the lost window: w2 paid, w3 created and paid, a fourth address, a token deposit topped up and swept, a native deposit swept', async () => {
      const client = await start();
      await until(client, orders.get('w2')!.id, 'SUCCESS');
      await issue(client, 'u4', true);
      const [a2, a3] = [issued[1]!.address, issued[2]!.address];
      await mintErc20(anvil.url, token, a2, 5n * ETHER);
      await sendNative(anvil.url, a3, ETHER / 4n);
      const fee = await pollUntil(() => q<{ address: string }>('SELECT address FROM fee_wallets WHERE application_id = $1 AND chain_id = $2', [app.id, ETH_CHAIN]), (r) => r.length === 1, 60_000, 200);
      expect(fee.ok, 'the fee wallet').to.equal(true);
      feeWallet = fee.result[0]!.address;
      await sendNative(anvil.url, feeWallet, ETHER);
      await swept(a2, TOKEN_ID);
      await swept(a3, ETH_TOKEN_ID);
      await until(client, (await order(client, 'w3', '0.03')).id, 'SUCCESS');
      await stop();
      lostWindowTxs = await chainTxs();
      expect(from(lostWindowTxs, hot).map(recipient), 'the hot wallet paid w1, w2, w3').to.deep.equal(['w1', 'w2', 'w3'].map((o) => orders.get(o)!.toAddress.toLowerCase()));
      expect(from(lostWindowTxs, feeWallet).map(recipient), 'one top-up, to the token address').to.deep.equal([a2.toLowerCase()]);
    });

    it('pg_restore and a restart: the hot wallet held with SENDER_CHAIN_AHEAD, KEY_INDEX_ROLLBACK raised, the lost deposits credited again, nothing signed for a sender the chain is ahead of', async () => {
      const original = db;
      db = await host.restore(dump);
      await original.drop();
      if (options.runbook) {
        const look = await cli(['keystore', 'marks', '--json']);
        expect(look.code, describeCli(['keystore', 'marks'], look)).to.equal(1);
        expect(cliJson(['keystore', 'marks'], look).marks.map((m: { namespace: string; state: string }) => [m.namespace, m.state])).to.deep.equal([['evm', 'DATABASE_BEHIND']]);
        const apply = await cli(['keystore', 'marks', '--apply', '--json']);
        expect(apply.code, describeCli(['keystore', 'marks', '--apply'], apply)).to.equal(0);
      }
      const client = await start();
      const held = await pollUntil(() => q<{ details: { address?: string; sender?: string } }>('SELECT details FROM operator_alerts WHERE kind = $1', [SENDER_CHAIN_AHEAD]), (rows) => rows.length > 0, 60_000, 200);
      expect(held.ok, 'a SENDER_CHAIN_AHEAD alert').to.equal(true);
      expect(await q(`SELECT 1 FROM operator_alerts WHERE kind = 'KEY_INDEX_ROLLBACK'`)).to.have.length(1);
      // the scanner reads the lost window again: both deposits are credited again (same transactions)
      const [a2, a3] = [issued[1]!.address, issued[2]!.address];
      const credited = await pollUntil(() => q<{ address: string }>(`SELECT address, tx_hash, position, amount::text AS amount, chain_token_id, tx_status, from_address FROM recharges WHERE application_id = $1 AND lower(address) = ANY($2::text[])`, [app.id, [a2.toLowerCase(), a3.toLowerCase()]]),
        (rows) => rows.length === 2, 60_000, 200);
      expect(credited.ok, `the lost window's deposits credited again: ${JSON.stringify(credited.result)}`).to.equal(true);
      // planners and the pipeline run for a while; the chain gains no transaction from any custody address
      await new Promise((r) => setTimeout(r, 5_000));
      const now = await chainTxs();
      expect(now.length, 'no transaction sent since the restore').to.equal(lostWindowTxs.length);
      // the fee wallet's top-up of the lost window, unknown to the restored database, is no deposit
      const recharges = await q<{ address: string; chain_token_id: number; from_address: string }>(
        `SELECT address, chain_token_id, from_address FROM recharges WHERE application_id = $1 AND lower(address) = ANY($2::text[]) ORDER BY id`, [app.id, [a2.toLowerCase(), a3.toLowerCase()]]);
      expect(recharges.map((r) => [r.address, r.chain_token_id]).sort()).to.deep.equal([[a2, TOKEN_ID], [a3, ETH_TOKEN_ID]].sort());
      // a new user and the lost window's user asked again: never an index or address handed out before
      await issue(client, 'u5', false);
      await issue(client, 'u4', false);
      const before = issued.slice(0, 4);
      for (const n of issued.slice(4)) {
        expect(before.map((i) => i.keyIndex), `${n.user}'s key index`).to.not.include(n.keyIndex);
        expect(before.map((i) => i.address.toLowerCase()), `${n.user}'s address`).to.not.include(n.address.toLowerCase());
      }
      expect(await q(`SELECT address FROM addresses GROUP BY chain_id, address HAVING count(DISTINCT external_user_id) > 1`)).to.deep.equal([]);
    });

    it('wcs recover transfers: the dry run shows w2 MATCHED and w3 UNMATCHED_ON_CHAIN; --apply --release --accept-unmatched records w2 with its callbacks; signing resumes: w4 paid once', async () => {
      const dry = await recoverJson();
      expect(dry.dryRun).to.equal(true);
      const hotPlan = dry.plans.find((p) => p.sender.toLowerCase() === hot.toLowerCase());
      expect(hotPlan, JSON.stringify(dry.plans)).to.not.equal(undefined);
      expect(hotPlan!.matched.map((m) => m.appOrderNo)).to.deep.equal(['w2']);
      expect(hotPlan!.unmatchedOnChain.map((t) => t.payments.map((p) => p.toAddress.toLowerCase()))).to.deep.equal([[orders.get('w3')!.toAddress.toLowerCase()]]);

      const mark = receiver.received.length;
      const applied = await recoverJson(['--apply', '--release', '--accept-unmatched']);
      expect(applied.dryRun).to.equal(false);
      expect(applied.applied.every((a) => a.released)).to.equal(true);
      const client = new SigningClient(svc!.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
      const w2 = await until(client, orders.get('w2')!.id, 'SUCCESS');
      const paid = from(lostWindowTxs, hot).find((t) => t.to === orders.get('w2')!.toAddress.toLowerCase());
      expect(w2.txHash, 'w2 keeps the transaction the chain has').to.equal(paid!.hash);
      const events = () => receiver.received.slice(mark).filter((x) => x.target === '/withdraw').map((x) => ({ req: x, e: JSON.parse(x.body.toString('utf8')) as WithdrawEvent })).filter((x) => x.e.id === w2.id);
      const got = await pollUntil(async () => events().map((x) => x.e.status), (s) => s.includes('SUCCESS'), 30_000, 100);
      expect(got.result).to.deep.equal(['BROADCASTED', 'CONFIRMING', 'SUCCESS']);
      for (const { req } of events()) expect(verifyCallback(req, app.apiKey, app.apiSecret)).to.equal(null);
      expect(await q('SELECT 1 FROM sender_holds WHERE released_at IS NULL')).to.deep.equal([]);

      await until(client, (await order(client, 'w4', '0.04')).id, 'SUCCESS');
    });

    it('collection resumes: a token deposit to u5 needs a top-up; the fee wallet, whose lost top-up the database does not know, is held before it signs; recovered, the top-up and the sweep go once', async () => {
      const u5 = issued.find((i) => i.user === 'u5')!.address;
      await mintErc20(anvil.url, token, u5, 7n * ETHER);
      const held = await pollUntil(() => q<{ address: string }>('SELECT address FROM sender_holds WHERE released_at IS NULL'), (rows) => rows.length > 0, 60_000, 200);
      expect(held.result.map((h) => h.address.toLowerCase()), 'the fee wallet held').to.deep.equal([feeWallet.toLowerCase()]);
      expect(from(await chainTxs(), feeWallet), 'no second top-up signed at the nonce the chain has used').to.have.length(1);
      const dry = await recoverJson();
      expect(dry.plans.map((p) => [p.sender.toLowerCase(), p.matched.length, p.unmatchedOnChain.map((t) => t.payments.map((x) => x.toAddress.toLowerCase()))]), JSON.stringify(dry.plans)).to.deep.equal([
        [feeWallet.toLowerCase(), 0, [[issued[1]!.address.toLowerCase()]]],
      ]);
      await recoverJson(['--apply', '--release', '--accept-unmatched']);
      await swept(u5, TOKEN_ID);
    });

    it('counted on chain: each order paid once, each deposit address swept once, one top-up each; nothing left to recover', async () => {
      const txs = await chainTxs();
      const paid = from(txs, hot).map(recipient);
      for (const [no, w] of orders) expect(paid.filter((x) => x === w.toAddress.toLowerCase()), `order ${no}`).to.have.length(1);
      expect(paid).to.have.length(orders.size);
      const u5 = issued.find((i) => i.user === 'u5')!.address;
      for (const { user, address } of [...issued.slice(0, 3), issued.find((i) => i.user === 'u5')!]) {
        expect(from(txs, address).map(recipient), `sweeps from ${user}'s address`).to.deep.equal([hot.toLowerCase()]);
      }
      expect(from(txs, feeWallet).map(recipient), 'top-ups').to.deep.equal([issued[1]!.address.toLowerCase(), u5.toLowerCase()]);
      expect((await recoverJson()).plans).to.deep.equal([]);
    });
  });
}

drill('software key store', () => ({}), { runbook: false });
drill('PKCS#11 key store on SoftHSM2: the key-index mark on the token', () => {
  const { SOFTHSM2_CONF: _conf, ...tokenEnv } = createTestToken().env;
  return tokenEnv;
}, { runbook: true });
