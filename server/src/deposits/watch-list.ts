import { QueryTypes, type Sequelize } from 'sequelize';
import type { DepositOwner } from './recharges';

/** Address rows read per query. */
const PAGE = 50_000;

/**
 * The addresses a chain's scanner watches, loaded once and then topped up with the rows added
 * since (address rows are never deleted or changed). HD chains: one owner per address. Memo
 * chains: the shared deposit addresses, and one owner per (shared address, memo).
 *
 * Ids are handed out when a row is inserted, not when it commits: two API requests creating
 * addresses at once can commit id 105 before id 104. Reading "id > the highest id seen" would
 * then skip 104 for good, and its deposits would never be seen. So rows are read above a floor
 * below which every row is known to be loaded: the highest id of an earlier reading, once every
 * transaction that began before that reading has ended (pg_stat_activity) and a full reading was
 * made after that. (Transaction ids cannot tell this: an insert takes its row id before its
 * transaction id.) Rows between the floor and the highest id seen are read again
 * until then, and skipped when already loaded.
 */
export class WatchList {
  /** Every address row with an id at or below this is loaded. */
  private floor = 0;
  /** Loaded rows above the floor. */
  private readonly above = new Set<number>();
  /** Readings not yet settled: the highest id read, and when the reading began (database clock, ms). */
  private readonly marks: Array<{ id: number; at: number }> = [];
  /** When the oldest transaction running after the last reading began (database clock, ms; 0: not looked yet). */
  private oldestRunning = 0;
  private readonly hd = new Map<string, DepositOwner>();
  private readonly memo = new Map<string, DepositOwner>();
  private readonly shared = new Set<string>();
  private sharedLoaded = false;
  /** The HD address set handed to scanners, rebuilt only when rows were added. */
  private hdSet: ReadonlySet<string> | null = null;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly chainId: number,
    private readonly memoChain: boolean,
  ) {}

  /** The refresh in progress: refreshes run one after another (a scan's concurrent address reads may each ask for one). */
  private running: Promise<void> = Promise.resolve();

  /** Loads the address rows committed since the last call (each call reads after the one before it ended). */
  refresh(): Promise<void> {
    const next = this.running.then(() => this.load());
    this.running = next.catch(() => undefined);
    return next;
  }

  private async load(): Promise<void> {
    let after = this.floor;
    let added = false;
    let readAt: Date | null = null;
    for (;;) {
      const rows = await this.sequelize.query<{ id: number | null; application_id: number; external_user_id: string; address: string; memo: string | null; read_at: Date }>(
        `SELECT a.id, a.application_id, a.external_user_id, a.address, a.memo, statement_timestamp() AS read_at
           FROM (SELECT 1) one LEFT JOIN LATERAL (SELECT * FROM addresses WHERE chain_id = $1 AND id > $2 ORDER BY id LIMIT ${PAGE}) a ON true`,
        { bind: [this.chainId, after], type: QueryTypes.SELECT },
      );
      readAt ??= rows[0]!.read_at;
      if (rows.length === 1 && rows[0]!.id === null) break;
      for (const r of rows as Array<(typeof rows)[number] & { id: number }>) {
        after = r.id;
        if (this.above.has(r.id)) continue;
        this.above.add(r.id);
        added = true;
        const owner: DepositOwner = { addressId: r.id, applicationId: r.application_id, externalUserId: r.external_user_id, address: r.address, memo: r.memo };
        if (r.memo === null) {
          this.hd.set(r.address, owner);
          this.hdSet = null;
        } else {
          this.memo.set(memoKey(r.address, r.memo), owner);
          this.shared.add(r.address);
        }
      }
      if (rows.length < PAGE) break;
    }
    await this.settle(after, readAt!);
    if (this.memoChain && (added || !this.sharedLoaded)) {
      const accounts = await this.sequelize.query<{ address: string }>('SELECT DISTINCT address FROM deposit_accounts WHERE chain_id = $1', {
        bind: [this.chainId], type: QueryTypes.SELECT,
      });
      for (const a of accounts) this.shared.add(a.address);
      this.sharedLoaded = true;
    }
  }

  /**
   * Moves the floor. A row the reading that began at `readAt` did not see, with an id at or below
   * the highest it saw, belongs to a transaction that took its id before that highest row
   * committed, so one that began before `readAt` (ids are handed out in order; a transaction's
   * start time is set before it takes any). Once no transaction that began by then is still
   * running, the next full reading above the floor sees whatever they committed: after it,
   * nothing at or below that id can still appear. Called after each reading.
   */
  private async settle(highest: number, readAt: Date): Promise<void> {
    // this reading began after the previous look at the running transactions: the marks older than every transaction running then are settled by it
    let floor = this.floor;
    while (this.marks.length > 0 && this.marks[0]!.at < this.oldestRunning) floor = Math.max(floor, this.marks.shift()!.id);
    if (floor !== this.floor) {
      this.floor = floor;
      for (const id of this.above) if (id <= floor) this.above.delete(id);
    }
    const last = this.marks[this.marks.length - 1];
    if (highest > this.floor && (!last || last.id < highest)) this.marks.push({ id: highest, at: readAt.getTime() });
    // the service's own sessions (one database role) in this database; a session of another role shows no xact_start
    const [oldest] = await this.sequelize.query<{ t: Date }>(
      `SELECT coalesce(min(xact_start), clock_timestamp()) AS t FROM pg_stat_activity
        WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND xact_start IS NOT NULL`,
      { type: QueryTypes.SELECT },
    );
    this.oldestRunning = oldest!.t.getTime();
  }

  /** Every address to watch (HD addresses, or the shared deposit addresses of a memo chain). */
  addresses(): ReadonlySet<string> {
    if (this.memoChain) return this.shared;
    this.hdSet ??= new Set(this.hd.keys());
    return this.hdSet;
  }

  /** HD: the owner of an address. */
  ownerOf(address: string): DepositOwner | null {
    return this.hd.get(address) ?? null;
  }

  /** Memo chains: the owner of (shared address, memo), or null (missing or unknown memo). */
  ownerOfMemo(address: string, memo: string | null): DepositOwner | null {
    if (memo === null) return null;
    return this.memo.get(memoKey(address, memo)) ?? null;
  }

  isShared(address: string): boolean {
    return this.shared.has(address);
  }

  get size(): number {
    return this.memoChain ? this.shared.size : this.hd.size;
  }
}

function memoKey(address: string, memo: string): string {
  return `${address}\n${memo}`;
}
