/**
 * pg_dump / pg_restore for the restore tests. The tools must not be older than the server they
 * dump: when the test server (the worker's embedded cluster, or DATABASE_URL) is newer than the
 * newest pg_dump on the machine, the databases of the test live on a private cluster started with
 * that pg_dump's own server binaries (initdb, pg_ctl; as user postgres when run as root).
 */
import { execFile, execFileSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { createTestDatabase, freePort } from '@wcs/server/testing';
import { tempDir } from './temp';

const run = promisify(execFile);

/** The directory holding pg_dump, pg_restore (and, for a private cluster, initdb, pg_ctl). */
export function pgBinDir(): string {
  const root = '/usr/lib/postgresql';
  if (fs.existsSync(root)) {
    const versions = fs.readdirSync(root).filter((v) => /^\d+$/.test(v) && fs.existsSync(path.join(root, v, 'bin', 'pg_dump'))).sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(root, versions[0], 'bin');
  }
  const onPath = execFileSync('sh', ['-c', 'command -v pg_dump'], { encoding: 'utf8' }).trim();
  if (!onPath) throw new Error('pg_dump is not installed (Debian: postgresql-client)');
  return path.dirname(fs.realpathSync(onPath));
}

function toolMajor(bin: string): number {
  const out = execFileSync(path.join(bin, 'pg_dump'), ['--version'], { encoding: 'utf8' });
  const m = /(\d+)(?:\.\d+)?/.exec(out);
  if (!m) throw new Error(`cannot read the version of pg_dump: ${out}`);
  return Number(m[1]);
}

async function serverMajor(url: string): Promise<number> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return Math.floor(Number((await c.query<{ v: string }>(`SELECT current_setting('server_version_num') AS v`)).rows[0]!.v) / 10000);
  } finally {
    await c.end();
  }
}

export interface DumpableDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

/** Where the test's databases are made: the test server, or a private cluster pg_dump can dump. */
export interface DumpHost {
  createDatabase(): Promise<DumpableDatabase>;
  /** pg_dump -Fc of the database into a file. */
  dump(db: DumpableDatabase): Promise<string>;
  /** pg_restore of a dump into a new, empty database. */
  restore(file: string): Promise<DumpableDatabase>;
  stop(): Promise<void>;
}

/** Runs a binary as user postgres when this process is root (initdb and postgres refuse root). */
function asPostgres(bin: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  if (process.getuid?.() === 0) return run('runuser', ['-u', 'postgres', '--', bin, ...args]);
  return run(bin, args);
}

async function privateCluster(bin: string): Promise<{ adminUrl: string; stop(): Promise<void> }> {
  const dir = tempDir('wcs-pg-dump-');
  if (process.getuid?.() === 0) {
    fs.chmodSync(dir, 0o777);
  }
  const data = path.join(dir, 'data');
  const port = await freePort();
  const password = crypto.randomBytes(12).toString('hex');
  const pwFile = path.join(dir, 'pw');
  fs.writeFileSync(pwFile, `${password}\n`, { mode: 0o644 });
  await asPostgres(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${pwFile}`, '-E', 'UTF8', '--no-sync']);
  await asPostgres(path.join(bin, 'pg_ctl'), ['-D', data, '-l', path.join(dir, 'log'), '-w', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start']);
  return {
    adminUrl: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await asPostgres(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    },
  };
}

function databaseOn(adminUrl: string, name: string): DumpableDatabase {
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
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

export async function dumpHost(): Promise<DumpHost> {
  const bin = pgBinDir();
  const probe = await createTestDatabase();
  const compatible = toolMajor(bin) >= (await serverMajor(probe.url));
  let cluster: { adminUrl: string; stop(): Promise<void> } | null = null;
  if (compatible) {
    await probe.drop();
  } else {
    await probe.drop();
    cluster = await privateCluster(bin);
  }
  const made: DumpableDatabase[] = [];
  const create = async (): Promise<DumpableDatabase> => {
    let db: DumpableDatabase;
    if (!cluster) {
      db = await createTestDatabase();
    } else {
      const name = `wcs_r_${crypto.randomBytes(6).toString('hex')}`;
      const c = new Client({ connectionString: cluster.adminUrl });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE ${name}`);
      } finally {
        await c.end();
      }
      db = databaseOn(cluster.adminUrl, name);
    }
    made.push(db);
    return db;
  };
  return {
    createDatabase: create,
    dump: async (db) => {
      const file = path.join(tempDir('wcs-dump-'), 'db.dump');
      await run(path.join(bin, 'pg_dump'), ['-Fc', '--no-owner', '-f', file, '-d', db.url]);
      return file;
    },
    restore: async (file) => {
      const db = await create();
      await run(path.join(bin, 'pg_restore'), ['--no-owner', '--exit-on-error', '-d', db.url, file]);
      return db;
    },
    stop: async () => {
      for (const db of made.splice(0)) await db.drop().catch(() => undefined);
      await cluster?.stop();
    },
  };
}
