import { QueryTypes, type Sequelize } from 'sequelize';
import type { DepositOwner } from './recharges';

/**
 * The addresses a chain's scanner watches, loaded once and then topped up with the rows added
 * since (address rows are never deleted or changed). HD chains: one owner per address. Memo
 * chains: the shared deposit addresses, and one owner per (shared address, memo).
 */
export class WatchList {
  private lastId = 0;
  private readonly hd = new Map<string, DepositOwner>();
  private readonly memo = new Map<string, DepositOwner>();
  private readonly shared = new Set<string>();
  private sharedLoadedFor = -1;
  /** The HD address set handed to scanners, rebuilt only when rows were added. */
  private hdSet: ReadonlySet<string> | null = null;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly chainId: number,
    private readonly memoChain: boolean,
  ) {}

  /** Loads address rows added since the last call. */
  async refresh(): Promise<void> {
    const rows = await this.sequelize.query<{ id: number; application_id: number; external_user_id: string; address: string; memo: string | null }>(
      `SELECT id, application_id, external_user_id, address, memo FROM addresses
        WHERE chain_id = $1 AND id > $2 ORDER BY id LIMIT 50000`,
      { bind: [this.chainId, this.lastId], type: QueryTypes.SELECT },
    );
    for (const r of rows) {
      const owner: DepositOwner = { addressId: r.id, applicationId: r.application_id, externalUserId: r.external_user_id, address: r.address, memo: r.memo };
      if (r.memo === null) {
        this.hd.set(r.address, owner);
        this.hdSet = null;
      }
      else {
        this.memo.set(memoKey(r.address, r.memo), owner);
        this.shared.add(r.address);
      }
      this.lastId = r.id;
    }
    if (rows.length === 50000) await this.refresh();
    if (this.memoChain && this.sharedLoadedFor !== this.lastId) {
      const accounts = await this.sequelize.query<{ address: string }>('SELECT DISTINCT address FROM deposit_accounts WHERE chain_id = $1', {
        bind: [this.chainId], type: QueryTypes.SELECT,
      });
      for (const a of accounts) this.shared.add(a.address);
      this.sharedLoadedFor = this.lastId;
    }
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
