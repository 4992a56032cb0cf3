/**
 * What the deposit e2e tests on recorded node answers (deposits-memo, deposits-sol-eos) share: a
 * test database, an HTTPS merchant receiver (support/https-callback-receiver.ts), the merchants (one
 * application each, created on an API-only instance that scans nothing, its RECHARGE callback URL
 * /merchant/<name> on the receiver), the scanning service as a child `wcs start` process, the `wcs`
 * CLI, and the reads and waits their assertions are made of.
 *
 * What differs is given to it: the scanned chains' ids, the WCS_RPC_* variables pointing the
 * scanners at the test's replay servers, a WCS_CONFIG file if the test needs one, the merchants.
 * What a test rewrites in the database between creating the merchants' addresses and starting the
 * scanner, and what it requires of a scan step's cursors (stepSince), stay in the test.
 *
 * Every instance and process gets WCS_CALLBACK_ALLOW_PRIVATE=1 (the receiver is on loopback),
 * WCS_CALLBACK_POLL_MS=50 and WCS_CALLBACK_PER_ENDPOINT=1 (deliveries to the one receiver are
 * sequential, so that arrival order can be asserted besides the outbox order); the scanning
 * service also WCS_SCAN_POLL_MS=100 and NODE_EXTRA_CA_CERTS (it trusts the receiver's certificate).
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Pool } from 'pg';
import type { CreatedApplication } from '@wcs/server';
import { WcsService } from '@wcs/server';
import { createTestDatabase, freePort, prepareTestKeystore, testConfig, testEnv, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { SigningClient } from '../client/signing-client';
import { verifyCallback } from './callback-receiver';
import { expectOk, pollUntil, sleep } from './expect';
import { HttpsCallbackReceiver } from './https-callback-receiver';
import { cliJson, describeCli, runCli, WcsProcess, type CliResult } from './processes';
import { EVENT_FIELDS, RECHARGE_LIST, type Recharge, type RechargeEvent, type Unattributed } from './recharge-types';

export interface MerchantSpec {
  /** The application's name; its callback path is /merchant/<name>. */
  readonly name: string;
  readonly environment: 'live' | 'test';
  readonly chains: string[];
}

export interface Merchant extends MerchantSpec {
  readonly path: string;
  app: CreatedApplication;
  /** A client of the instance currently running (the API-only one during setup, then `wcs start`). */
  client: SigningClient;
}

export interface DepositHarnessOptions<K extends string> {
  /** The scanned chains' ids, ascending: stepSince waits for a step on each. */
  readonly chainIds: readonly number[];
  /** The scanners' endpoints (WCS_RPC_*), read when the scanning service starts. */
  readonly rpcEnv: () => Record<string, string>;
  readonly merchants: Record<K, MerchantSpec>;
  /** Written to a temporary file given as WCS_CONFIG to every instance, process and CLI run of the test. */
  readonly config?: unknown;
}

export interface ScanCursor {
  chain_id: number;
  updated_at: Date;
  last_error: string | null;
  height: string | null;
}

export class DepositHarness<K extends string> {
  readonly receiver = new HttpsCallbackReceiver();
  readonly m: Record<K, Merchant>;
  private db: TestDatabase | undefined;
  private pool: Pool | undefined;
  private proc: WcsProcess | null = null;
  private cliEnv: Record<string, string | undefined> = {};
  private tmp: string | undefined;
  private configEnv: Record<string, string> = {};

  constructor(private readonly o: DepositHarnessOptions<K>) {
    const m = {} as Record<K, Merchant>;
    for (const k of Object.keys(o.merchants) as K[]) m[k] = { ...o.merchants[k], path: `/merchant/${o.merchants[k].name}` } as Merchant;
    this.m = m;
  }

  /** The callback settings (and WCS_CONFIG) of every instance. */
  private baseEnv(): Record<string, string> {
    return { WCS_CALLBACK_ALLOW_PRIVATE: '1', WCS_CALLBACK_POLL_MS: '50', WCS_CALLBACK_PER_ENDPOINT: '1', ...this.configEnv };
  }

  /** Key store, receiver, config file, test database. */
  async start(): Promise<void> {
    await prepareTestKeystore();
    await this.receiver.start();
    if (this.o.config !== undefined) {
      this.tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-deposits-'));
      const configFile = path.join(this.tmp, 'config.json');
      fs.writeFileSync(configFile, JSON.stringify(this.o.config));
      this.configEnv = { WCS_CONFIG: configFile };
    }
    this.db = await createTestDatabase();
    this.pool = new Pool({ connectionString: this.db.url, max: 2 });
    this.cliEnv = { ...process.env, ...testEnv(this.db.url, this.configEnv) };
  }

  /**
   * The merchants' applications (RECHARGE callback to the receiver) on an instance that serves the
   * API and scans nothing, then `addresses()`, which creates the users' addresses through the
   * merchants' clients; the instance is stopped afterwards.
   */
  async createMerchants(addresses: () => Promise<void>): Promise<void> {
    const setup = await WcsService.start(testConfig(this.db!.url, this.baseEnv()), testLogger(), { api: true, workers: false });
    try {
      for (const x of Object.values<Merchant>(this.m)) {
        x.app = await setup.storage.applications.create(TEST_ACTOR, { name: x.name, environment: x.environment, chains: x.chains });
        await setup.storage.applications.setCallback(TEST_ACTOR, x.app.id, 'RECHARGE', this.receiver.url(x.path));
        x.client = new SigningClient(setup.url, { apiKey: x.app.apiKey, apiSecret: x.app.apiSecret });
      }
      await addresses();
    } finally {
      await setup.stop();
    }
  }

  /** The scanning service (`wcs start`), healthy; the merchants' clients point at it. */
  readonly startScanning = async (): Promise<void> => {
    const scanEnv = { ...this.baseEnv(), ...this.o.rpcEnv(), WCS_SCAN_POLL_MS: '100', NODE_EXTRA_CA_CERTS: this.receiver.certFile };
    this.proc = WcsProcess.spawn(['start'], { ...process.env, ...testEnv(this.db!.url, scanEnv) }, await freePort());
    await this.proc.waitHealthy(60_000);
    for (const x of Object.values<Merchant>(this.m)) x.client = new SigningClient(this.proc.url, { apiKey: x.app.apiKey, apiSecret: x.app.apiSecret });
  };

  /** Stops the scanning service, which must exit cleanly (code 0 on SIGTERM). */
  readonly stopService = async (): Promise<void> => {
    if (!this.proc) return;
    const r = await this.proc.stop('SIGTERM');
    expect(r, this.proc.describe()).to.include({ code: 0, killed: false });
    this.proc = null;
  };

  /** For after(): whatever start() and startScanning() left running or made. */
  async stop(): Promise<void> {
    await this.proc?.stop('SIGTERM');
    await this.pool?.end();
    await this.db?.drop();
    await this.receiver.stop();
    if (this.tmp) fs.rmSync(this.tmp, { recursive: true, force: true });
  }

  /** Reads the database directly (the service may be stopped in between). */
  readonly q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await this.pool!.query(text, params)).rows as T[];
  readonly dbNow = async (): Promise<Date> => (await this.q<{ now: Date }>('SELECT now() AS now'))[0]!.now;
  readonly list = async (x: Merchant): Promise<Recharge[]> => (expectOk(await x.client.get(`${RECHARGE_LIST}?pageSize=200`)) as { list: Recharge[] }).list;
  readonly byTx = async (x: Merchant, txHash: string): Promise<Recharge[]> => (await this.list(x)).filter((r) => r.txHash === txHash);
  readonly waitStatus = async (x: Merchant, txHash: string, status: string): Promise<Recharge> => {
    const r = await pollUntil(() => this.byTx(x, txHash), (rows) => rows.length === 1 && rows[0]!.txStatus === status, 30_000, 100);
    expect(r.ok, `${txHash}: ${JSON.stringify(r.result)}`).to.equal(true);
    return r.result[0]!;
  };
  /** Every callback received, with its parsed body. */
  readonly bodies = () => this.receiver.received.map((r) => ({ r, e: JSON.parse(r.body.toString('utf8')) as RechargeEvent }));
  readonly events = (id: number) => this.bodies().filter(({ e }) => e.event === 'recharge' && e.id === id);
  /** Waits for exactly these callbacks of a record and checks them: signed with the merchant's secret, to its path, the spec's fields, in order. */
  readonly expectCallbacks = async (x: Merchant, id: number, statuses: string[]): Promise<RechargeEvent[]> => {
    const r = await pollUntil(async () => this.events(id).map(({ e }) => e.txStatus), (s) => s.length >= statuses.length, 30_000, 50);
    expect(r.ok, `callbacks of ${id}: ${r.result.join(',')}`).to.equal(true);
    await sleep(300); // nothing more may follow
    const got = this.events(id);
    expect(got.map(({ e }) => e.txStatus), `arrival order of the callbacks of ${id}`).to.deep.equal(statuses);
    for (const { r: req, e } of got) {
      expect(verifyCallback(req, x.app.apiKey, x.app.apiSecret), `signature of ${e.txStatus}`).to.equal(null);
      expect(req.target).to.equal(x.path);
      expect(Object.keys(e).sort()).to.deep.equal(EVENT_FIELDS);
    }
    // the outbox wrote them in that order, one task per (record, txStatus)
    const tasks = await this.q<{ body: Buffer }>(`SELECT body FROM callback_tasks WHERE biz_type = 'RECHARGE' AND biz_id = $1 ORDER BY id`, [id]);
    expect(tasks.map((t) => (JSON.parse(Buffer.from(t.body).toString('utf8')) as RechargeEvent).txStatus)).to.deep.equal(statuses);
    return got.map(({ e }) => e);
  };
  /**
   * Waits until a whole scan step has run since `since` on each chain (its cursor updated after
   * `since`, without an error) and `read(cursor, i)` holds of the i-th chain's cursor (default: it
   * has a height); returns the cursors in chain id order. `what` is added to the failure message.
   */
  readonly stepSince = async (since: Date, read: (c: ScanCursor, i: number) => boolean = (c) => c.height !== null, what = ''): Promise<ScanCursor[]> => {
    const r = await pollUntil(
      () => this.q<ScanCursor>(
        'SELECT chain_id, updated_at, last_error, height::text AS height FROM scan_cursors WHERE chain_id = ANY($1::int[]) ORDER BY chain_id', [this.o.chainIds]),
      (rows) => rows.length === this.o.chainIds.length && rows.every((c, i) => c.updated_at > since && c.last_error === null && read(c, i)),
      30_000, 50,
    );
    expect(r.ok, `scan steps since ${since.toISOString()}${what}: ${JSON.stringify(r.result)}`).to.equal(true);
    return r.result;
  };
  readonly historyCursors = () =>
    this.q<{ chain_id: number; address: string; cursor: string | null }>('SELECT chain_id, address, cursor FROM scan_history_cursors ORDER BY chain_id, address');
  /** Runs the `wcs` CLI on the test database, expecting that exit code. */
  readonly wcs = async (args: string[], expectedExit: number): Promise<CliResult> => {
    const r = await runCli(args, this.cliEnv);
    expect(r.code, describeCli(args, r)).to.equal(expectedExit);
    return r;
  };
  /** `wcs deposits unattributed [--all] --json`. */
  readonly unattributed = async (all = false): Promise<Unattributed[]> => {
    const args = ['deposits', 'unattributed', ...(all ? ['--all'] : []), '--json'];
    return cliJson(args, await this.wcs(args, 0)) as Unattributed[];
  };
  /** Everything a re-scan must leave as it is. */
  readonly snapshot = async () => ({
    recharges: await this.q(`SELECT id::int, application_id, chain_id, tx_hash, position, tx_status, amount::text, memo, external_user_id, confirmations FROM recharges ORDER BY id`),
    tasks: (await this.q<{ n: number }>(`SELECT count(*)::int AS n FROM callback_tasks`))[0]!.n,
    notices: await this.q(`SELECT recharge_id::int, tx_status FROM recharge_notices ORDER BY 1, 2`),
    unattributed: await this.q(`SELECT id::int, tx_hash, position, reason, recharge_id::int FROM unattributed_deposits ORDER BY id`),
    callbacks: this.receiver.received.length,
  });
}
