/**
 * The running service with the TON adapter package (examples/adapter-ton) installed by
 * configuration alone, on @ton/sandbox: the set-up shared by the TON end-to-end files
 * (ton-service.test.ts, ton-collection.test.ts). What it makes, in this order:
 *
 * - the sandbox node behind the package's toncenter-like HTTP API, a "user" treasury, a TEP-74
 *   jetton (USDT-like, 6 decimals) deployed by a "jetton admin" treasury, 1,000 USDT minted to the user;
 * - the software key store, a callback receiver, a test database;
 * - a NODE_PATH folder with an `@wcs/adapter-ton` symlink and a WCS_CONFIG file naming the package in
 *   `adapters` besides the six default ones, with a test chain of family 'ton' (TON, USDT);
 * - an application (`wcs app create`) with the given callbacks (`wcs app set-callback`), then
 *   `wcs start` with WCS_RPC_TEST_TON pointing at the sandbox and the given extra environment.
 *
 * Everything after that is the caller's, as a merchant (signed REST API) and an operator (CLI) do.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { createTestDatabase, freePort, prepareTestKeystore, testEnv, type TestDatabase } from '@wcs/server/testing';
import { SigningClient } from '../client/signing-client';
import { CallbackReceiver, verifyCallback } from './callback-receiver';
import { expectOk, pollUntil, sleep } from './expect';
import { cliJson, describeCli, runCli, WcsProcess, type CliResult } from './processes';
import { RECHARGE_LIST, type Recharge, type RechargeEvent } from './recharge-types';
import { tonNodePath, tonPackage, type Jetton, type TonPackage, type TonSandboxNode, type Treasury } from './ton-sandbox';

export const TON_CHAIN_ID = 9101;
export const TON_TOKEN = 910100;
export const USDT_TOKEN = 910101;
/** The server's default adapter packages (server/src/plugins/loader.ts DEFAULT_ADAPTER_PACKAGES). */
export const DEFAULT_ADAPTERS = ['@wcs/adapter-bitcoin', '@wcs/adapter-evm', '@wcs/adapter-solana', '@wcs/adapter-xrp', '@wcs/adapter-stellar', '@wcs/adapter-eos'];

/** Nanotons of a decimal Toncoin amount ("1.5" → 1500000000n). */
export const TON = (n: string): bigint => {
  const [w, f = ''] = n.split('.');
  return BigInt(w!) * 10n ** 9n + BigInt(f.padEnd(9, '0'));
};

/** The WCS_CONFIG document: the given adapter packages, the TON test chain and its two tokens. */
export function tonConfig(usdtMaster: string, adapters: string[]) {
  return {
    adapters,
    chains: [{ id: TON_CHAIN_ID, code: 'TON', name: 'TON Sandbox', family: 'ton', environment: 'test', network: 'sandbox', nativeSymbol: 'TON', decimals: 9, confirmations: 1, evmChainId: null }],
    tokens: [
      { id: TON_TOKEN, chainCode: 'TON', environment: 'test', symbol: 'TON', name: 'Toncoin', contract: null, decimals: 9 },
      { id: USDT_TOKEN, chainCode: 'TON', environment: 'test', symbol: 'USDT', name: 'Tether USD (sandbox jetton)', contract: usdtMaster, decimals: 6 },
    ],
  };
}

export interface TonServiceOptions {
  /** The application's name (`wcs app create --name`). */
  readonly appName: string;
  /** Callback business types the application gets, each at receiver path `/merchant/<biz type lower case>`. */
  readonly callbacks: ReadonlyArray<'RECHARGE' | 'WITHDRAW' | 'COLLECT'>;
  /** More environment for the `wcs` processes (e.g. WCS_COLLECT_PLAN_MS). */
  readonly env?: Record<string, string>;
}

/** The service, the sandbox and what the files share to drive and read them. */
export class TonService {
  proc: WcsProcess | null = null;
  client!: SigningClient;
  app!: { id: number; apiKey: string; apiSecret: string };
  env: Record<string, string | undefined> = {};
  tmp = '';
  configFile = '';
  usdt = '';
  db!: TestDatabase;
  pool!: Pool;
  user!: Treasury;
  jetton!: Jetton;
  readonly receiver = new CallbackReceiver();

  private constructor(readonly ton: TonPackage, readonly node: TonSandboxNode) {}

  /** Everything above, started; call stop() in after() whatever happened (it stops what was started). */
  static async start(opts: TonServiceOptions, onStarted: (s: TonService) => void = () => undefined): Promise<TonService> {
    const ton = tonPackage();
    const s = new TonService(ton, await ton.startNode());
    onStarted(s);
    s.user = await s.node.blockchain.treasury('user');
    const admin = await s.node.blockchain.treasury('jetton admin');
    s.jetton = await ton.deployJetton(s.node, admin);
    s.usdt = ton.jettonMasterForm(s.jetton.master);
    await s.jetton.mint(s.user.address, 1_000_000_000n); // 1,000 USDT
    expect(await s.jetton.balanceOf(s.user.address)).to.equal(1_000_000_000n);

    await prepareTestKeystore();
    await s.receiver.start();
    s.db = await createTestDatabase();
    s.pool = new Pool({ connectionString: s.db.url, max: 2 });
    const np = tonNodePath();
    s.tmp = np.dir;
    s.configFile = path.join(s.tmp, 'config.json');
    fs.writeFileSync(s.configFile, JSON.stringify(tonConfig(s.usdt, [...DEFAULT_ADAPTERS, '@wcs/adapter-ton'])));
    s.env = {
      ...process.env,
      ...testEnv(s.db.url, {
        WCS_CONFIG: s.configFile, NODE_PATH: np.nodePath, WCS_RPC_TEST_TON: s.node.url,
        WCS_CALLBACK_ALLOW_PRIVATE: '1', WCS_CALLBACK_POLL_MS: '50', WCS_CALLBACK_PER_ENDPOINT: '1',
        WCS_SCAN_POLL_MS: '100', WCS_HOT_WALLET_REFRESH_MS: '200', WCS_WITHDRAW_POLL_MS: '100',
        ...opts.env,
      }),
    };
    const created = await s.cliOk(['app', 'create', '--name', opts.appName, '--env', 'test', '--chains', 'TON', '--json']);
    s.app = { id: created.id, apiKey: created.apiKey, apiSecret: created.apiSecret };
    for (const biz of opts.callbacks) {
      await s.cliOk(['app', 'set-callback', '--app', String(s.app.id), '--biz-type', biz, '--url', s.receiver.url(`/merchant/${biz.toLowerCase()}`), '--json']);
    }
    s.proc = WcsProcess.spawn(['start'], s.env, await freePort());
    await s.proc.waitHealthy(60_000);
    s.client = new SigningClient(s.proc.url, { apiKey: s.app.apiKey, apiSecret: s.app.apiSecret });
    return s;
  }

  async stop(): Promise<void> {
    await this.proc?.stop('SIGTERM');
    await this.pool?.end();
    await this.db?.drop();
    await this.receiver.stop();
    await this.node.close();
    if (this.tmp) fs.rmSync(this.tmp, { recursive: true, force: true });
  }

  /** What the service describes of itself for a failure message (its output), or nothing before it runs. */
  describe(): string {
    return this.proc ? `\n${this.proc.describe()}` : '';
  }

  readonly q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await this.pool.query(text, params)).rows as T[];
  readonly cli = (args: string[], extraEnv: Record<string, string | undefined> = {}): Promise<CliResult> => runCli(args, { ...this.env, ...extraEnv });
  /** Runs the CLI, expects exit 0, returns its JSON. */
  readonly cliOk = async (args: string[]) => {
    const r = await this.cli(args);
    expect(r.code, describeCli(args, r)).to.equal(0);
    return cliJson(args, r);
  };

  readonly recharges = async (): Promise<Recharge[]> => (expectOk(await this.client.get(`${RECHARGE_LIST}?pageSize=200`)) as { list: Recharge[] }).list;
  /** Nanotons an account holds in the sandbox (0 when it does not exist). */
  readonly tonBalance = async (a: string): Promise<bigint> => (await this.node.blockchain.getContract(this.ton.parseAddress(a))).balance;

  /** Waits until the deposit of txHash is a SETTLED record (the only one of that transaction). */
  async settled(txHash: string): Promise<Recharge> {
    const r = await pollUntil(async () => (await this.recharges()).filter((x) => x.txHash === txHash), (rows) => rows.length === 1 && rows[0]!.txStatus === 'SETTLED', 30_000, 100);
    expect(r.ok, `recharge of ${txHash}: ${JSON.stringify(r.result)}${this.describe()}`).to.equal(true);
    return r.result[0]!;
  }

  /** The hash of the newest transaction received by an address (what the scanner reports as txHash of a deposit to it). */
  lastTxTo(a: string): string {
    const list = this.node.transactionsOf(this.ton.parseAddress(a));
    return list[list.length - 1]!.hash;
  }

  rechargeEvents(id: number) {
    return this.receiver.received.filter((r) => r.target === '/merchant/recharge').map((r) => ({ r, e: JSON.parse(r.body.toString('utf8')) as RechargeEvent })).filter(({ e }) => e.id === id);
  }

  /** Waits for the callbacks of a record and checks their statuses in order and their signatures. */
  async expectRechargeCallbacks(id: number, statuses: string[]): Promise<RechargeEvent[]> {
    const r = await pollUntil(async () => this.rechargeEvents(id), (s) => s.length >= statuses.length, 30_000, 50);
    expect(r.ok, `callbacks of recharge ${id}: ${JSON.stringify(r.result.map(({ e }) => e.txStatus))}`).to.equal(true);
    await sleep(300);
    const got = this.rechargeEvents(id);
    expect(got.map(({ e }) => e.txStatus)).to.deep.equal(statuses);
    for (const { r: req } of got) expect(verifyCallback(req, this.app.apiKey, this.app.apiSecret)).to.equal(null);
    return got.map(({ e }) => e);
  }

  /** The application's TON hot wallet, once the service made it (it makes it at start). */
  async hotWallet(): Promise<string> {
    const w = await pollUntil(() => this.q<{ address: string }>('SELECT address FROM hot_wallets WHERE application_id = $1 AND chain_id = $2', [this.app.id, TON_CHAIN_ID]), (rows) => rows.length === 1, 30_000, 100);
    expect(w.ok, `the service made the TON hot wallet${this.describe()}`).to.equal(true);
    return w.result[0]!.address;
  }
}
