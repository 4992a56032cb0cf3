/**
 * One EVM collection setup for delegated-sweep tests: anvil (its hardfork as asked) on a block
 * clock, test tokens deployed before the service starts (so the catalogue lists them through
 * WCS_CONFIG), the service in process on a fresh database with its workers and the software key
 * store, one application with its COLLECT callback, and the reads the tests make of the rows
 * (items, transfers, callbacks). The operator funds only the fee wallet here: the service
 * deploys its contracts and signs its authorizations itself.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Pool } from 'pg';
import { anvilRpc, sendNative, startAnvil, startBlockClock, type AnvilDevnet, type BlockClock } from '@wcs/adapter-evm/devnet';
import { WcsService, createLogger, type CreatedApplication, type Logger } from '@wcs/server';
import { createTestDatabase, prepareTestKeystore, testConfig, testLogger, type TestDatabase, TEST_ACTOR } from '@wcs/server/testing';
import { SigningClient } from '../client/signing-client';
import { CallbackReceiver } from './callback-receiver';
import { expectOk, pollUntil } from './expect';
import { waitForHotWallet } from './payouts';
import { ADDRESS_CREATE } from './recharge-types';
import { tempDir } from './temp';

export const ETH_CHAIN = 102;
export const ETH_TOKEN_ID = 10200;
export const ETHER = 10n ** 18n;

/** A token of the catalogue (WCS_CONFIG `tokens`). */
export interface TokenSpec {
  readonly id: number;
  readonly symbol: string;
  readonly contract: string;
  readonly decimals: number;
}

export interface ItemRow {
  id: string; from_address: string; chain_token_id: number; status: string; amount: string; failure_code: string | null; failure_message: string | null;
  waiting_reason: string | null; transfer_id: string | null; tx_hash: string | null; to_address: string; retry_times: number; sweep_mode: string;
}

export interface CollectEvent {
  id: number; status: string; txHash: string | null; amount: string; fromAddress: string; toAddress: string; retryTimes: number;
  failureReasonCode: string | null; failureReasonMessage: string | null; gasFunding: unknown;
}

export interface PolicySpec {
  readonly tokenId: number;
  readonly threshold: bigint;
  /** Token base units per whole native coin (the cost guard's conversion); null for the native coin. */
  readonly nativeValue?: bigint | null;
  readonly mode?: 'TOPUP' | 'DELEGATED';
}

export interface DelegatedHarness {
  readonly anvil: AnvilDevnet;
  readonly clock: BlockClock;
  readonly svc: WcsService;
  readonly app: CreatedApplication;
  readonly client: SigningClient;
  readonly receiver: CallbackReceiver;
  readonly tokens: readonly TokenSpec[];
  /** The application's hot wallet and fee wallet on ETH. */
  readonly hot: string;
  readonly fee: string;
  q<T>(text: string, params?: unknown[]): Promise<T[]>;
  newAddress(client: SigningClient, user: string): Promise<string>;
  balance(address: string): Promise<bigint>;
  items(appId: number): Promise<ItemRow[]>;
  /** Waits until the application has at least n items and every one ended (SUCCESS or FAILED). */
  settled(appId: number, n: number, timeoutMs?: number): Promise<ItemRow[]>;
  collectEvents(appId: number): CollectEvent[];
  /** The policies written in one statement (so one planning pass sees them all). */
  setPolicies(appId: number, list: readonly PolicySpec[]): Promise<void>;
  /** A second application on ETH with its COLLECT (and RECHARGE) callbacks; its hot and fee wallets made. */
  createApp(name: string): Promise<{ app: CreatedApplication; client: SigningClient; hot: string; fee: string }>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  /** More anvil arguments (e.g. ['--hardfork', 'cancun']). */
  readonly anvilArgs?: readonly string[];
  /** Deploys the test tokens (the clock runs) and says how the catalogue lists them. */
  readonly tokens: (url: string) => Promise<TokenSpec[]>;
  /** The service's log goes here as JSON lines (level warn) instead of the test logger. */
  readonly log?: NodeJS.WritableStream;
  /** Ether the operator sends to the fee wallet. */
  readonly feeFunding?: bigint;
}

export async function startDelegatedHarness(o: HarnessOptions): Promise<DelegatedHarness> {
  const anvil = await startAnvil({ chainId: 11155111, extraArgs: o.anvilArgs ?? ['--hardfork', 'prague'] });
  let clock: BlockClock | null = null;
  let db: TestDatabase | null = null;
  let pool: Pool | null = null;
  let svc: WcsService | null = null;
  const receiver = new CallbackReceiver();
  const stop = async () => {
    await svc?.stop();
    await pool?.end();
    await db?.drop();
    await receiver.stop().catch(() => undefined);
    await clock?.stop();
    await anvil.stop();
  };
  try {
    clock = await startBlockClock(anvil.url, 200);
    const tokens = await o.tokens(anvil.url);
    const configFile = path.join(tempDir('wcs-delegated-faults-'), 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({
      tokens: tokens.map((t) => ({ id: t.id, chainCode: 'ETH', environment: 'test', symbol: t.symbol, name: `${t.symbol} (anvil)`, contract: t.contract, decimals: t.decimals })),
    }));
    await prepareTestKeystore();
    await receiver.start();
    db = await createTestDatabase();
    const p = new Pool({ connectionString: db.url, max: 3 });
    pool = p;
    const logger: Logger = o.log ? createLogger({ level: 'warn', format: 'json', stream: o.log }) : testLogger();
    const service = await WcsService.start(testConfig(db.url, {
      WCS_RPC_TEST_ETH: anvil.url, WCS_CONFIG: configFile, WCS_CALLBACK_POLL_MS: '50', WCS_CALLBACK_ALLOW_PRIVATE: '1',
      WCS_HOT_WALLET_REFRESH_MS: '300', WCS_WITHDRAW_POLL_MS: '100', WCS_SCAN_POLL_MS: '200', WCS_COLLECT_PLAN_MS: '300',
    }), logger, { api: true, workers: true });
    svc = service;
    const q = async <T>(text: string, params: unknown[] = []): Promise<T[]> => (await p.query(text, params)).rows as T[];
    const items = (appId: number) => q<ItemRow>(
      `SELECT id::text AS id, from_address, chain_token_id, status, amount::text AS amount, failure_code, failure_message, waiting_reason, transfer_id::text AS transfer_id,
              tx_hash, to_address, retry_times, sweep_mode FROM collection_items WHERE application_id = $1 ORDER BY id`, [appId]);
    const createApp = async (name: string) => {
      const app = await service.storage.applications.create(TEST_ACTOR, { name, environment: 'test', chains: ['ETH'] });
      await service.storage.applications.setCallback(TEST_ACTOR, app.id, 'COLLECT', receiver.url(`/collect/${app.id}`));
      await service.storage.applications.setCallback(TEST_ACTOR, app.id, 'RECHARGE', receiver.url(`/recharge/${app.id}`));
      const client = new SigningClient(service.url, { apiKey: app.apiKey, apiSecret: app.apiSecret });
      const hot = await waitForHotWallet(q, app.id, ETH_CHAIN, 30_000);
      const fw = await pollUntil(() => q<{ address: string }>('SELECT address FROM fee_wallets WHERE application_id = $1 AND chain_id = $2', [app.id, ETH_CHAIN]), (r) => r.length === 1, 30_000, 100);
      expect(fw.ok, `the fee wallet of application ${app.id}`).to.equal(true);
      return { app, client, hot, fee: fw.result[0]!.address };
    };
    const first = await createApp('delegated-faults');
    // the operator funds the fee wallet (batches, deployments, top-ups); never a deposit address
    await sendNative(anvil.url, first.fee, o.feeFunding ?? 10n * ETHER);
    return {
      anvil, clock, svc: service, receiver, tokens, app: first.app, client: first.client, hot: first.hot, fee: first.fee, q, items, createApp, stop,
      newAddress: async (c, user) => (expectOk(await c.post(ADDRESS_CREATE, { chainCode: 'ETH', externalUserId: user })) as { address: string }).address,
      balance: (a) => anvilRpc<string>(anvil.url, 'eth_getBalance', [a, 'latest']).then(BigInt),
      settled: async (appId, n, timeoutMs = 60_000) => {
        const r = await pollUntil(() => items(appId), (rows) => rows.length >= n && rows.every((i) => i.status === 'SUCCESS' || i.status === 'FAILED'), timeoutMs, 200);
        expect(r.ok, `items of app ${appId}: ${r.result.length} of ${n}; ${JSON.stringify(r.result.filter((i) => i.status !== 'SUCCESS' && i.status !== 'FAILED').slice(0, 3))}`).to.equal(true);
        return r.result;
      },
      collectEvents: (appId) => receiver.received.filter((r) => r.target.startsWith(`/collect/${appId}`)).map((r) => JSON.parse(r.body.toString('utf8')) as CollectEvent),
      setPolicies: async (appId, list) => {
        await q(
          `INSERT INTO collection_policies (application_id, chain_token_id, threshold, max_fee_bps, native_value, on_confirmed, schedule_seconds, sweep_mode)
           SELECT $1, u.token, u.threshold::numeric, 1000, u.native_value::numeric, true, NULL, u.mode
             FROM unnest($2::int[], $3::text[], $4::text[], $5::text[]) AS u(token, threshold, native_value, mode)
           ON CONFLICT (application_id, chain_token_id) DO UPDATE SET threshold = EXCLUDED.threshold, native_value = EXCLUDED.native_value, sweep_mode = EXCLUDED.sweep_mode,
                  enabled = true, updated_at = now()`,
          [appId, list.map((x) => x.tokenId), list.map((x) => x.threshold.toString()), list.map((x) => x.nativeValue?.toString() ?? null), list.map((x) => x.mode ?? 'DELEGATED')],
        );
      },
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** The authorizations a SWEEP_BATCH transfer carried: authority and delegate, lowercase. */
export async function batchAuthorizations(h: DelegatedHarness, transferId: string): Promise<Array<{ authority: string; address: string }>> {
  return h.q<{ authority: string; address: string }>(
    `SELECT lower(a->>'authority') AS authority, lower(a->>'address') AS address FROM transfers x CROSS JOIN LATERAL jsonb_array_elements(x.options->'call'->'authorizations') a
      WHERE x.id = $1`, [transferId]);
}

/** Transfers of the application by kind: kind → count. */
export async function transferKinds(h: DelegatedHarness, appId: number): Promise<Record<string, number>> {
  const rows = await h.q<{ kind: string; n: number }>('SELECT kind, count(*)::int AS n FROM transfers WHERE application_id = $1 GROUP BY kind', [appId]);
  return Object.fromEntries(rows.map((r) => [r.kind, r.n]));
}

/** Waits until the application's recharges number n and each is at least CONFIRMED. */
export async function rechargesConfirmed(h: DelegatedHarness, appId: number, n: number, timeoutMs = 30_000): Promise<void> {
  const r = await pollUntil(() => h.q<{ n: number }>(`SELECT count(*)::int AS n FROM recharges WHERE application_id = $1 AND tx_status IN ('CONFIRMED','SETTLED')`, [appId]),
    (rows) => rows[0]!.n >= n, timeoutMs, 100);
  expect(r.ok, `application ${appId}: ${r.result[0]!.n} of ${n} deposits confirmed`).to.equal(true);
}
