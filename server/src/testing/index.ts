import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { loadConfig, type ServiceConfig } from '../config/config';
import { createLogger, type Logger } from '../config/logger';
import { EmbeddedPostgres } from '../db/embedded';
import { WcsService } from '../service';
import type { ApiRoute } from '../http/routes';
import type { CreatedApplication } from '../apps/applications';
import { keyStoreOptions, loadKeyStorePlugin } from '../plugins/loader';
import type { AuditActor } from '../operators/audit';

/** The audit actor of changes a test makes through a service directly (audit_log: actor `test`). */
export const TEST_ACTOR: AuditActor = Object.freeze({ name: 'test', role: 'shell', channel: 'cli', source: 'test' });

/**
 * Real Postgres for tests: each call gets its own fresh database, on DATABASE_URL's
 * server when set, otherwise on one throwaway embedded cluster per test process.
 * Nothing here mocks the database; if Postgres cannot start, the test fails loudly.
 */
let cluster: { pg: EmbeddedPostgres; dir: string } | null = null;
let clusterStarting: Promise<EmbeddedPostgres> | null = null;

export async function freePort(): Promise<number> {
  // Under mocha --parallel, each worker draws from its own range below the kernel's ephemeral
  // ports (32768+), so a port handed out here is not taken by another worker's listen(0) or an
  // outgoing connection before the caller binds it.
  const worker = Number(process.env.MOCHA_WORKER_ID);
  if (!Number.isInteger(worker) || worker < 0) return bindable(0);
  const width = 2000;
  const base = 12000 + (worker % 10) * width;
  for (let i = 0; i < 200; i++) {
    const port = base + Math.floor(Math.random() * width);
    try {
      return await bindable(port);
    } catch {
      /* in use: draw again */
    }
  }
  return bindable(0);
}

/** Binds 127.0.0.1:port (0: any), closes, and answers the port bound. */
function bindable(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(port, '127.0.0.1', () => {
      const bound = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(bound));
    });
  });
}

async function embeddedCluster(): Promise<EmbeddedPostgres> {
  if (cluster) return cluster.pg;
  if (!clusterStarting) {
    clusterStarting = (async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-test-pg-'));
      const pg = new EmbeddedPostgres(dir, await freePort());
      await pg.ensureRunning();
      cluster = { pg, dir };
      return pg;
    })();
  }
  return clusterStarting;
}

/** Stops the embedded test cluster (if one was started) and removes its files. */
export async function stopTestCluster(): Promise<void> {
  const c = cluster;
  cluster = null;
  clusterStarting = null;
  if (c) {
    await c.pg.stop();
    fs.rmSync(c.dir, { recursive: true, force: true });
  }
}

export interface TestDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = '/' + db;
  return u.toString();
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `wcs_t_${crypto.randomBytes(6).toString('hex')}`;
  const adminUrl = process.env.DATABASE_URL ? process.env.DATABASE_URL : (await embeddedCluster()).url('postgres');
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(adminUrl, name),
    name,
    drop: async () => {
      const c = new Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** A fixed master key per test process (tests share it with the CLI processes they spawn). */
export const TEST_MASTER_KEY = crypto.randomBytes(32).toString('hex');

/** The BIP-39 mnemonic of the test key store (the well-known all-"abandon" test vector: never fund it). */
export const TEST_MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

let keystoreEnv: Record<string, string> | null = null;
let keystoreDir: string | null = null;

/**
 * Creates this test process's software key store (from TEST_MNEMONIC) once; testEnv()
 * then points services and CLI children at it. Called by the mocha root hook.
 */
export async function prepareTestKeystore(): Promise<Record<string, string>> {
  if (keystoreEnv) return keystoreEnv;
  keystoreDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-test-ks-'));
  const env = {
    WCS_KEYSTORE_BACKEND: 'software',
    WCS_KEYSTORE_FILE: path.join(keystoreDir, 'keystore.json'),
    WCS_KEYSTORE_PASSPHRASE: crypto.randomBytes(16).toString('hex'),
  };
  const cfg = loadConfig({ DATABASE_URL: 'postgres://unused/unused', WCS_MASTER_KEY: TEST_MASTER_KEY, ...env });
  await loadKeyStorePlugin(cfg).initialize(keyStoreOptions(cfg), { mnemonic: TEST_MNEMONIC });
  keystoreEnv = env;
  return env;
}

export function testEnv(databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    WCS_MASTER_KEY: TEST_MASTER_KEY,
    PORT: '0',
    HOST: '127.0.0.1',
    WCS_LOG_LEVEL: process.env.WCS_TEST_LOG_LEVEL ?? 'error',
    ...(keystoreEnv ?? {}),
    ...extra,
  };
}

export function testConfig(databaseUrl: string, extra: Record<string, string> = {}): ServiceConfig {
  return loadConfig(testEnv(databaseUrl, extra));
}

export function testLogger(): Logger {
  return createLogger({ level: process.env.WCS_TEST_LOG_LEVEL ?? 'error', format: 'pretty' });
}

export interface TestService {
  readonly service: WcsService;
  readonly url: string;
  readonly db: TestDatabase;
  createApp(input?: { name?: string; environment?: 'test' | 'live'; chains?: string[] }): Promise<CreatedApplication>;
  stop(): Promise<void>;
}

/** Starts a real service (API and workers) on a fresh database and a random port. */
export async function startTestService(opts: { extraRoutes?: readonly ApiRoute[]; env?: Record<string, string>; workers?: boolean } = {}): Promise<TestService> {
  await prepareTestKeystore();
  const db = await createTestDatabase();
  const service = await WcsService.start(testConfig(db.url, opts.env), testLogger(), {
    api: true,
    workers: opts.workers ?? true,
    extraRoutes: opts.extraRoutes ?? [],
  });
  return {
    service,
    url: service.url,
    db,
    createApp: (input = {}) =>
      service.storage.applications.create(TEST_ACTOR, {
        name: input.name ?? 'test app',
        environment: input.environment ?? 'test',
        chains: input.chains ?? ['ETH', 'BTC'],
      }),
    stop: async () => {
      await service.stop();
      await db.drop();
    },
  };
}

/** Mocha root hooks: `require: "@wcs/server/testing/hooks"` equivalent via mochaHooks export. */
export const mochaHooks = {
  async beforeAll(): Promise<void> {
    await prepareTestKeystore();
  },
  async afterAll(): Promise<void> {
    await stopTestCluster();
    if (keystoreDir) fs.rmSync(keystoreDir, { recursive: true, force: true });
    keystoreDir = null;
    keystoreEnv = null;
  },
};
