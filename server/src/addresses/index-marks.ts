import { QueryTypes, type Sequelize } from 'sequelize';
import { KEY_INDEX_LIMIT, indexMarkKey, type KeyIndexMark, type KeyStore } from '@wcs/core';
import type { Logger } from '../config/logger';
import { raiseAlert } from '../deposits/scan-lease';

/** Advisory lock of the start check's database side (one process at a time). */
const CHECK_LOCK = 7_420_023;

/** What a memo window's row says instead of a lookup (key_index_gaps.unchecked_chains). */
const MEMO_WINDOW_NOTE = 'memos: not looked up on chain; deposits with these memos are kept unattributed (MEMO_ROLLBACK)';

/**
 * Memo chains keep their marks beside the key indices, under the namespace `memo:<CHAIN_CODE>`
 * (key namespaces never hold a colon): the highest memo handed out per (application, chain). The
 * memo counter itself is memo_counters (per shared deposit account); the mark the database knows
 * is kept in a key_counters row of purpose 'memo' (next_index = marked: the memos the mark covers).
 */
export const MEMO_MARK_PREFIX = 'memo:';

/** The mark namespace of an application's memo counter on a chain. */
export function memoMarkNamespace(chainCode: string): string {
  return `${MEMO_MARK_PREFIX}${chainCode}`;
}

export function isMemoMarkNamespace(namespace: string): boolean {
  return namespace.startsWith(MEMO_MARK_PREFIX);
}

/** A window of deposit indices (or memos: namespace `memo:<CHAIN_CODE>`) a restore lost (see schema.ts). */
export interface KeyIndexGap {
  readonly applicationId: number;
  readonly namespace: string;
  readonly fromIndex: number;
  readonly toIndex: number;
  readonly applicationKnown: boolean;
}

/** What a check found and did. */
export interface MarksCheckReport {
  readonly lineage: string;
  /** Whether the key store keeps marks at all (a backend without the capability leaves the service unprotected). */
  readonly protected: boolean;
  /** Marks the key store held for this database's lineage. */
  readonly marks: number;
  /** Windows this check found (the database was behind the key store): the counters now continue above them. */
  readonly gaps: readonly KeyIndexGap[];
  /** Marks raised to meet the database's counters (the key store was behind: first start with marks, a restored key-store file, a crash between the two). */
  readonly raised: readonly KeyIndexMark[];
}

/** What the database says of one (application, namespace). */
export interface DatabaseCounter {
  readonly applicationId: number;
  readonly namespace: string;
  /** The next index the counter hands out (or above the highest user key, if that is higher). */
  readonly next: number;
  /** Above the highest user key the database holds (0 when none). */
  readonly issued: number;
  /** The key store's mark as the database last knew it (key_counters.marked, or a window recorded up to it). */
  readonly marked: number;
}

/** The database's deposit counters per (application, namespace). */
export async function databaseCounters(sequelize: Sequelize, transaction?: import('sequelize').Transaction): Promise<Map<string, DatabaseCounter>> {
  const rows = await sequelize.query<{ application_id: number; namespace: string; next: string; issued: string; marked: string }>(
    `SELECT application_id, namespace, max(n)::text AS next, max(issued)::text AS issued, max(marked)::text AS marked FROM (
       SELECT application_id, namespace, next_index AS n, 0 AS issued, marked FROM key_counters WHERE purpose = 'deposit'
       UNION ALL
       -- memo chains: the shared deposit account's counter (memo_counters.next_index: the next memo) ...
       SELECT d.application_id, '${MEMO_MARK_PREFIX}' || c.code, m.next_index, m.next_index, 0
         FROM memo_counters m JOIN deposit_accounts d ON d.chain_id = m.chain_id AND d.address = m.address JOIN chains c ON c.id = m.chain_id
       UNION ALL
       -- ... and the mark the database knows of it
       SELECT application_id, namespace, 0, 0, marked FROM key_counters WHERE purpose = 'memo'
       UNION ALL
       SELECT application_id, namespace, max(key_index) + 1, max(key_index) + 1, 0 FROM user_keys GROUP BY application_id, namespace
       UNION ALL
       -- a window recorded for an application missing from the database: that mark is known
       SELECT application_id, namespace, 0, 0, max(to_index) FROM key_index_gaps GROUP BY application_id, namespace
     ) c GROUP BY application_id, namespace`,
    { type: QueryTypes.SELECT, ...(transaction ? { transaction } : {}) },
  );
  return new Map(rows.map((r) => [indexMarkKey(r.application_id, r.namespace), {
    applicationId: r.application_id, namespace: r.namespace, next: Number(r.next), issued: Number(r.issued), marked: Number(r.marked),
  }]));
}

export async function databaseLineage(sequelize: Sequelize): Promise<string> {
  const [row] = await sequelize.query<{ lineage: string }>('SELECT lineage FROM database_lineage WHERE id = 1', { type: QueryTypes.SELECT });
  if (!row) throw new Error('database_lineage has no row (migration 23)');
  return row.lineage;
}

/**
 * Keeps the deposit allocator (KeyIndexReserve) consistent with the key store's key-index marks,
 * which a database restore cannot roll back (docs/deployment.md, "Key-index marks"):
 *
 * - cover(): before any index of a reserved block [.., end) is handed out, the mark is raised to
 *   end + ahead, durably, unless it is there already (so a mark write serves `ahead` indices
 *   more); then the database records the mark it now knows (key_counters.marked).
 * - check(), once per process before the first reservation (and at start): reads the marks of this
 *   database's lineage. A mark above the one the database knew means the database lost a raise
 *   (a restore): the window from above its highest user key up to the mark may have been handed
 *   out. The counter is moved up to the mark, the window recorded in key_index_gaps and alerted
 *   (KEY_INDEX_ROLLBACK); the lost-window checker then looks its addresses up on chain. Where the
 *   database is ahead (a restored key-store file, marks new to the key store), the mark is raised.
 * - floor(): the mark as read at the check: every reservation moves the counter to at least it, so
 *   indices handed out after a backup but within a raise the backup already held are skipped too,
 *   and an application missing from the restored copy (its id handed out again) starts above it.
 *
 * Memo chains go through the same guard with the namespace `memo:<CHAIN_CODE>` (memoMarkNamespace):
 * the memo allocation (AddressService) covers each memo before it is returned, and a check moves
 * memo_counters above a mark the database did not know (alert MEMO_ROLLBACK).
 */
export class KeyIndexMarkGuard {
  private lineage: string | null = null;
  private checking: Promise<MarksCheckReport> | null = null;
  private report: MarksCheckReport | null = null;
  /** The marks as read at the check (floors). */
  private floors = new Map<string, number>();
  /** The marks as this process last knew them (after its raises). */
  private known = new Map<string, number>();
  /** The marks this process has recorded in the database (key_counters.marked), where it raised them. */
  private recorded = new Map<string, number>();
  private warned = false;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly keystore: KeyStore,
    private readonly options: {
      readonly ahead: number;
      readonly logger: Logger;
      /** Throws when the key store cannot serve now (the supervisor's assertReady). */
      readonly keyStoreReady?: () => void;
      /** Called after a check that found gaps (the lost-window checker). */
      readonly onGaps?: () => void;
    },
  ) {}

  /** The last successful check's report, or null before one. */
  get lastReport(): MarksCheckReport | null {
    return this.report;
  }

  /** The start check (once per process; a failed one is tried again on the next call). */
  check(): Promise<MarksCheckReport> {
    if (this.report) return Promise.resolve(this.report);
    if (!this.checking) {
      const pending = this.runCheck().then(
        (r) => {
          this.report = r;
          return r;
        },
        (e: unknown) => {
          if (this.checking === pending) this.checking = null;
          throw e;
        },
      );
      this.checking = pending;
    }
    return this.checking;
  }

  async floor(applicationId: number, namespace: string): Promise<number> {
    await this.check();
    return this.floors.get(indexMarkKey(applicationId, namespace)) ?? 0;
  }

  /**
   * Makes the mark cover every index below `end` (durably) before the caller hands any out.
   * `transaction`: the caller's, when it holds a row lock others wait on with their connections
   * (the memo counter): the database's record of the mark is written in it, not on a connection of
   * its own (which the waiting transactions could leave the pool without).
   */
  async cover(applicationId: number, namespace: string, end: number, transaction?: import('sequelize').Transaction): Promise<void> {
    const marks = this.keystore.indexMarks;
    if (!marks) return;
    const { lineage } = await this.check();
    const k = indexMarkKey(applicationId, namespace);
    const known = this.known.get(k) ?? 0;
    if (known >= end) {
      // a raise whose recording in the database failed: record it before going on
      if ((this.recorded.get(k) ?? known) < known) await this.recordMarked([{ applicationId, namespace, next: known }], transaction);
      return;
    }
    const target = Math.min(end + this.options.ahead, KEY_INDEX_LIMIT);
    const [after] = await marks.raise(lineage, [{ applicationId, namespace, next: target }]);
    if (!after || after.next < Math.min(end, KEY_INDEX_LIMIT)) throw new Error(`the key store did not raise the key-index mark of ${namespace} (application ${applicationId}) to ${end}`);
    this.known.set(k, Math.max(known, after.next));
    this.recorded.set(k, this.recorded.get(k) ?? known);
    await this.recordMarked([after], transaction);
  }

  /**
   * The database learns the marks the key store now holds (after the raise is durable): key
   * indices on their key_counters row; memos on the application's 'memo' row (made when missing,
   * for an application the database holds).
   */
  private async recordMarked(marks: readonly KeyIndexMark[], transaction?: import('sequelize').Transaction): Promise<void> {
    if (marks.length === 0) return;
    const bind = (list: readonly KeyIndexMark[]) => [list.map((m) => m.applicationId), list.map((m) => m.namespace), list.map((m) => String(m.next))];
    const keys = marks.filter((m) => !isMemoMarkNamespace(m.namespace));
    const memos = marks.filter((m) => isMemoMarkNamespace(m.namespace));
    if (keys.length > 0) {
      await this.sequelize.query(
        `UPDATE key_counters k SET marked = GREATEST(k.marked, m.next)
           FROM unnest($1::int[], $2::text[], $3::bigint[]) AS m(application_id, namespace, next)
          WHERE k.application_id = m.application_id AND k.namespace = m.namespace AND k.purpose = 'deposit'`,
        { bind: bind(keys), ...(transaction ? { transaction } : {}) },
      );
    }
    if (memos.length > 0) {
      await this.sequelize.query(
        `INSERT INTO key_counters (application_id, namespace, purpose, next_index, marked)
         SELECT m.application_id, m.namespace, 'memo', m.next, m.next
           FROM unnest($1::int[], $2::text[], $3::bigint[]) AS m(application_id, namespace, next) JOIN applications a ON a.id = m.application_id
         ON CONFLICT (application_id, namespace, purpose) DO UPDATE
           SET next_index = GREATEST(key_counters.next_index, EXCLUDED.next_index), marked = GREATEST(key_counters.marked, EXCLUDED.marked)`,
        { bind: bind(memos), ...(transaction ? { transaction } : {}) },
      );
    }
    for (const m of marks) {
      const k = indexMarkKey(m.applicationId, m.namespace);
      this.recorded.set(k, Math.max(this.recorded.get(k) ?? 0, m.next));
    }
  }

  private async runCheck(): Promise<MarksCheckReport> {
    const lineage = this.lineage ?? (this.lineage = await databaseLineage(this.sequelize));
    const marks = this.keystore.indexMarks;
    if (!marks) {
      if (!this.warned) {
        this.warned = true;
        this.options.logger.warn('the key store keeps no key-index marks: after a database restore, deposit addresses handed out since the backup can be handed out again', { keyStore: this.keystore.name });
      }
      return { lineage, protected: false, marks: 0, gaps: [], raised: [] };
    }
    this.options.keyStoreReady?.();
    const stored = await marks.read(lineage);
    const gaps = await this.closeGaps(stored);
    // the key store behind the database: raise its marks to meet what the database knows (and `ahead` above its counter)
    const db = await databaseCounters(this.sequelize);
    const storedBy = new Map(stored.map((m) => [indexMarkKey(m.applicationId, m.namespace), m.next]));
    const behind = [...db.values()]
      .filter((d) => (storedBy.get(indexMarkKey(d.applicationId, d.namespace)) ?? 0) < Math.max(d.next, d.marked))
      .map((d) => ({ applicationId: d.applicationId, namespace: d.namespace, next: Math.min(Math.max(d.next + this.options.ahead, d.marked), KEY_INDEX_LIMIT) }));
    const raised = behind.length > 0 ? await marks.raise(lineage, behind) : [];
    await this.recordMarked(raised);
    this.floors = new Map(storedBy);
    for (const m of [...stored, ...raised]) {
      const k = indexMarkKey(m.applicationId, m.namespace);
      this.known.set(k, Math.max(this.known.get(k) ?? 0, m.next));
    }
    if (gaps.length > 0) {
      this.options.logger.error('the database is behind the key store\'s key-index or memo marks (a restore?): the allocators continue above them; addresses of lost key-index windows are checked on chain', {
        lineage, gaps,
      });
      this.options.onGaps?.();
    } else if (raised.length > 0) {
      this.options.logger.info('key-index marks raised to the database\'s counters', { lineage, raised: raised.length });
    }
    return { lineage, protected: true, marks: stored.length, gaps, raised };
  }

  /**
   * In one transaction under an advisory lock (processes starting together do this once): for each
   * mark above the one the database knew, moves the counter up to the mark, records the window
   * (from above the highest user key the database holds; memos: from the restored memo counter)
   * and alerts once per kind (KEY_INDEX_ROLLBACK, MEMO_ROLLBACK).
   */
  private async closeGaps(stored: readonly KeyIndexMark[]): Promise<KeyIndexGap[]> {
    const lost = (db: Map<string, DatabaseCounter>) => stored.filter((m) => m.next > (db.get(indexMarkKey(m.applicationId, m.namespace))?.marked ?? 0));
    if (lost(await databaseCounters(this.sequelize)).length === 0) return [];
    return this.sequelize.transaction(async (transaction) => {
      await this.sequelize.query('SELECT pg_advisory_xact_lock($1)', { bind: [CHECK_LOCK], transaction });
      const now = await databaseCounters(this.sequelize, transaction);
      const apps = new Set((await this.sequelize.query<{ id: number }>('SELECT id FROM applications', { type: QueryTypes.SELECT, transaction })).map((r) => r.id));
      const gaps: KeyIndexGap[] = [];
      for (const m of lost(now)) {
        const d = now.get(indexMarkKey(m.applicationId, m.namespace));
        const from = d?.issued ?? 0;
        const known = apps.has(m.applicationId);
        const memo = isMemoMarkNamespace(m.namespace);
        if (known) {
          await this.sequelize.query(
            `INSERT INTO key_counters (application_id, namespace, purpose, next_index, marked) VALUES ($1, $2, $4, $3, $3)
             ON CONFLICT (application_id, namespace, purpose) DO UPDATE SET next_index = GREATEST(key_counters.next_index, EXCLUDED.next_index), marked = GREATEST(key_counters.marked, EXCLUDED.marked)`,
            { bind: [m.applicationId, m.namespace, m.next, memo ? 'memo' : 'deposit'], transaction },
          );
          // the memo counter itself (when the restored copy has one; else the next memo starts at the floor)
          if (memo) {
            await this.sequelize.query(
              `UPDATE memo_counters m SET next_index = GREATEST(m.next_index, $3)
                 FROM deposit_accounts d JOIN chains c ON c.id = d.chain_id
                WHERE d.application_id = $1 AND '${MEMO_MARK_PREFIX}' || c.code = $2 AND m.chain_id = d.chain_id AND m.address = d.address`,
              { bind: [m.applicationId, m.namespace, m.next], transaction },
            );
          }
        }
        // the database holds user keys (memos) up to the mark: nothing of it was lost (only the mark it knew)
        if (from >= m.next) continue;
        // a memo window has no addresses to look up: it is recorded as checked (its deposits are kept unattributed)
        await this.sequelize.query(
          `INSERT INTO key_index_gaps (application_id, namespace, from_index, to_index, application_known, checked_at, unchecked_chains)
           VALUES ($1, $2, $3, $4, $5, CASE WHEN $6::boolean THEN now() END, CASE WHEN $6::boolean THEN $7 END)
           ON CONFLICT (application_id, namespace, from_index) DO UPDATE SET to_index = GREATEST(key_index_gaps.to_index, EXCLUDED.to_index), checked_at = EXCLUDED.checked_at`,
          { bind: [m.applicationId, m.namespace, from, m.next, known, memo, MEMO_WINDOW_NOTE], transaction },
        );
        gaps.push({ applicationId: m.applicationId, namespace: m.namespace, fromIndex: from, toIndex: m.next, applicationKnown: known });
      }
      const keyGaps = gaps.filter((g) => !isMemoMarkNamespace(g.namespace));
      const memoGaps = gaps.filter((g) => isMemoMarkNamespace(g.namespace));
      if (keyGaps.length > 0) {
        await raiseAlert(this.sequelize, transaction, null, 'KEY_INDEX_ROLLBACK',
          `The database is behind the key store's key-index marks (a restore?): ${keyGaps.length} window(s) of deposit key indices may have been handed out after the backup. `
          + 'They are never handed out again; their addresses are looked up on chain, each one with history is alerted (ADDRESS_IN_LOST_WINDOW).',
          { gaps: keyGaps });
      }
      if (memoGaps.length > 0) {
        await raiseAlert(this.sequelize, transaction, null, 'MEMO_ROLLBACK',
          `The database is behind the key store's memo marks (a restore?): ${memoGaps.length} window(s) of memos may have been handed out after the backup. `
          + 'They are never handed out again; deposits that carry one of them are kept as unattributed deposits: find their user (merchant records, callbacks sent) and assign them.',
          { gaps: memoGaps });
      }
      return gaps;
    });
  }
}
