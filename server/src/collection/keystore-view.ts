import { QueryTypes, type Sequelize } from 'sequelize';
import type { KeyStoreSupervisor } from '../custody/keystore-supervisor';

/**
 * The console's Key store page (docs/console.md): the backend, what this process's
 * KeyStoreSupervisor reports (the check /readyz and the keystore_ready metric read, and the
 * store's status() that `wcs keystore status` prints, when open), and the key references the
 * database records per purpose. Never key material, a PIN or a passphrase: status() holds none,
 * and safeFacts() drops any field named like one all the same.
 */

/** Field names that could only hold a secret (dropped whatever a backend puts there). */
const SECRET_FIELD = /^(pin|passphrase|password|mnemonic|seed|secret|privatekey|private_key|key|keymaterial|userpin|sopin)$/i;

/** A status() record as display lines: nested objects flattened (`a.b`), secrets' fields dropped, values as text. */
export function safeFacts(status: Record<string, unknown>, prefix = ''): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(status)) {
    if (SECRET_FIELD.test(k)) continue;
    const name = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date)) {
      out.push(...safeFacts(v as Record<string, unknown>, name));
    } else if (Array.isArray(v)) {
      out.push([name, v.map((x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))).join(', ')]);
    } else {
      out.push([name, v instanceof Date ? v.toISOString() : String(v)]);
    }
  }
  return out;
}

export interface KeyStoreState {
  readonly backend: string;
  /** Whether this process has opened (or is trying to open) the key store. */
  readonly opened: boolean;
  readonly ready: boolean | null;
  /** `ok`, `locked`, or `unavailable: <reason>` (the readiness check); null when not opened here. */
  readonly detail: string | null;
  readonly attempts: number;
  /** status() as display lines, when open and answering within the timeout. */
  readonly facts: Array<[string, string]>;
  readonly factsError: string | null;
}

const STATUS_TIMEOUT_MS = 3000;

function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      timer.unref();
    }),
  ]);
}

/**
 * The supervisor's view: `supervisor` null, or one this process never started (no API or
 * payout worker here: a console-only process), is "not opened here"; nothing is opened for the page.
 */
export async function keyStoreState(backend: string, supervisor: KeyStoreSupervisor | null): Promise<KeyStoreState> {
  if (supervisor === null || supervisor.attempts === 0) {
    return { backend, opened: false, ready: null, detail: null, attempts: 0, facts: [], factsError: null };
  }
  let check: { ready: boolean; detail: string };
  try {
    check = await within(supervisor.check(), STATUS_TIMEOUT_MS);
  } catch (e) {
    check = { ready: false, detail: `unavailable: ${e instanceof Error ? e.message : String(e)}` };
  }
  let facts: Array<[string, string]> = [];
  let factsError: string | null = null;
  if (supervisor.ready) {
    try {
      facts = safeFacts(await within(supervisor.store.status(), STATUS_TIMEOUT_MS));
    } catch (e) {
      factsError = e instanceof Error ? e.message : String(e);
    }
  }
  return { backend, opened: true, ready: check.ready, detail: check.detail, attempts: supervisor.attempts, facts, factsError };
}

/** Key references recorded in the database, per purpose and namespace (counts only). */
export async function keyUsage(sequelize: Sequelize) {
  const rows = await sequelize.query<{ purpose: string; namespace: string; what: string; applications: number; n: number }>(
    `SELECT 'deposit' AS purpose, namespace, 'user keys (one per user, HD chains)' AS what, count(DISTINCT application_id)::int AS applications, count(*)::int AS n FROM user_keys GROUP BY namespace
     UNION ALL
     SELECT 'deposit', c.code, 'shared deposit accounts (memo chains)', count(DISTINCT d.application_id)::int, count(*)::int FROM deposit_accounts d JOIN chains c ON c.id = d.chain_id GROUP BY c.code
     UNION ALL
     SELECT 'hot', key_namespace, 'hot wallets (index 0 per application and chain)', count(DISTINCT application_id)::int, count(*)::int FROM hot_wallets GROUP BY key_namespace
     UNION ALL
     SELECT 'fee', key_namespace, 'fee wallets (index 0 per application and chain)', count(DISTINCT application_id)::int, count(*)::int FROM fee_wallets GROUP BY key_namespace
     ORDER BY 1, 2, 3`,
    { type: QueryTypes.SELECT },
  );
  const counters = await sequelize.query<{ purpose: string; namespace: string; applications: number; allocated: string }>(
    `SELECT purpose, namespace, count(*)::int AS applications, sum(next_index)::text AS allocated FROM key_counters GROUP BY purpose, namespace ORDER BY purpose, namespace`,
    { type: QueryTypes.SELECT },
  );
  const device = await sequelize.query<{ backend: string; purpose: string; n: number }>(
    'SELECT backend, purpose, count(*)::int AS n FROM custody_keys GROUP BY backend, purpose ORDER BY backend, purpose',
    { type: QueryTypes.SELECT },
  );
  const [cold] = await sequelize.query<{ n: number }>(`SELECT count(*)::int AS n FROM collection_addresses WHERE kind = 'COLD'`, { type: QueryTypes.SELECT });
  const totals: Record<string, number> = { deposit: 0, hot: 0, fee: 0 };
  for (const r of rows) totals[r.purpose] = (totals[r.purpose] ?? 0) + r.n;
  return {
    totals,
    refs: rows.map((r) => ({ purpose: r.purpose, namespace: r.namespace, what: r.what, applications: r.applications, count: r.n })),
    counters: counters.map((c) => ({ purpose: c.purpose, namespace: c.namespace, applications: c.applications, allocated: c.allocated })),
    deviceKeys: device.map((d) => ({ backend: d.backend, purpose: d.purpose, count: d.n })),
    coldAddresses: cold!.n,
  };
}
