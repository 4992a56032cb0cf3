import { QueryTypes, type Sequelize } from 'sequelize';
import type { CustodyAddress, MonitoredSubscription, SubscriptionDirection } from './matching';

/**
 * What a chain's scanner watches beyond deposits, for one chain: the addresses of live
 * subscriptions per direction, and the applications' hot and fee wallets and (memo chains) shared
 * deposit accounts: custody addresses whose unexpected outflows raise TRANSFER. Reloaded whole
 * when the chain's monitor version moves (bumped in the transaction of every subscription change)
 * or a wallet or shared account is added: one small query per scan step otherwise.
 */
export class ChainMonitor {
  private stamp: string | null = null;
  private inboundMap = new Map<string, MonitoredSubscription[]>();
  private outboundMap = new Map<string, MonitoredSubscription[]>();
  private wallets = new Map<string, CustodyAddress>();
  /** Unions handed to the scanner, rebuilt only when a part changed (scanners cache per set object). */
  private receiversCache: { deposits: ReadonlySet<string>; stamp: string; set: ReadonlySet<string> } | null = null;
  private sendersCache: { deposits: ReadonlySet<string>; stamp: string; set: ReadonlySet<string> } | null = null;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly chainId: number,
  ) {}

  /** Reloads when a subscription or wallet of the chain changed since the last call. */
  async refresh(): Promise<void> {
    const [row] = await this.sequelize.query<{ stamp: string }>(
      `SELECT coalesce((SELECT version FROM chain_monitor_versions WHERE chain_id = $1), 0)::text
              || '/' || (SELECT count(*) FROM hot_wallets WHERE chain_id = $1)::text
              || '/' || (SELECT count(*) FROM fee_wallets WHERE chain_id = $1)::text
              || '/' || (SELECT count(*) FROM deposit_accounts WHERE chain_id = $1)::text AS stamp`,
      { bind: [this.chainId], type: QueryTypes.SELECT },
    );
    if (row!.stamp === this.stamp) return;
    await this.load(row!.stamp);
  }

  private async load(stamp: string): Promise<void> {
    const rows = await this.sequelize.query<{ id: string; application_id: number; direction: SubscriptionDirection; chain_token_ids: number[] | null; min_amount: string | null; address: string }>(
      `SELECT s.id::text AS id, s.application_id, s.direction, s.chain_token_ids, s.min_amount::text AS min_amount, a.address
         FROM chain_subscriptions s JOIN chain_subscription_addresses a ON a.subscription_id = s.id
        WHERE s.chain_id = $1 AND s.status = 'ACTIVE'`,
      { bind: [this.chainId], type: QueryTypes.SELECT },
    );
    const subs = new Map<string, MonitoredSubscription>();
    const inbound = new Map<string, MonitoredSubscription[]>();
    const outbound = new Map<string, MonitoredSubscription[]>();
    for (const r of rows) {
      let s = subs.get(r.id);
      if (!s) {
        s = { id: Number(r.id), applicationId: r.application_id, direction: r.direction, tokenIds: r.chain_token_ids ? new Set(r.chain_token_ids) : null, minAmount: trimDecimal(r.min_amount) };
        subs.set(r.id, s);
      }
      if (s.direction !== 'OUT') push(inbound, r.address, s);
      if (s.direction !== 'IN') push(outbound, r.address, s);
    }
    const wallets = new Map<string, CustodyAddress>();
    // shared deposit accounts exist on memo chains only (an account of the application, no user)
    const walletRows = await this.sequelize.query<{ application_id: number; address: string; kind: 'HOT' | 'FEE' | 'DEPOSIT' }>(
      `SELECT application_id, address, 'HOT' AS kind FROM hot_wallets WHERE chain_id = $1
       UNION ALL SELECT application_id, address, 'FEE' AS kind FROM fee_wallets WHERE chain_id = $1
       UNION ALL SELECT application_id, address, 'DEPOSIT' AS kind FROM deposit_accounts WHERE chain_id = $1`,
      { bind: [this.chainId], type: QueryTypes.SELECT },
    );
    for (const w of walletRows) wallets.set(w.address, { applicationId: w.application_id, kind: w.kind, externalUserId: null });
    this.inboundMap = inbound;
    this.outboundMap = outbound;
    this.wallets = wallets;
    this.stamp = stamp;
  }

  inbound(address: string): readonly MonitoredSubscription[] | undefined {
    return this.inboundMap.get(address);
  }

  outbound(address: string): readonly MonitoredSubscription[] | undefined {
    return this.outboundMap.get(address);
  }

  wallet(address: string): CustodyAddress | null {
    return this.wallets.get(address) ?? null;
  }

  /** Changes whenever what is monitored changes (a subscription, a wallet, a shared account). */
  get version(): string | null {
    return this.stamp;
  }

  /** The addresses monitored for IN. */
  inboundAddresses(): Iterable<string> {
    return this.inboundMap.keys();
  }

  /** The addresses monitored for OUT. */
  outboundAddresses(): Iterable<string> {
    return this.outboundMap.keys();
  }

  /** The hot and fee wallets and shared deposit accounts. */
  walletAddresses(): Iterable<string> {
    return this.wallets.keys();
  }

  /** Monitored addresses (any direction): how many the chain's subscriptions watch. */
  get size(): number {
    const all = new Set([...this.inboundMap.keys(), ...this.outboundMap.keys()]);
    return all.size;
  }

  /** The scanner's watched set: deposit addresses, and the addresses monitored for IN. */
  receivers(deposits: ReadonlySet<string>): ReadonlySet<string> {
    const c = this.receiversCache;
    if (c && c.deposits === deposits && c.stamp === this.stamp) return c.set;
    const set = this.inboundMap.size === 0 ? deposits : new Set([...deposits, ...this.inboundMap.keys()]);
    this.receiversCache = { deposits, stamp: this.stamp ?? '', set };
    return set;
  }

  /**
   * The scanner's senders: the addresses monitored for OUT and every custody address (deposit
   * addresses and the hot and fee wallets), whose outflows the service must account for.
   */
  senders(deposits: ReadonlySet<string>): ReadonlySet<string> {
    const c = this.sendersCache;
    if (c && c.deposits === deposits && c.stamp === this.stamp) return c.set;
    const set = new Set([...deposits, ...this.outboundMap.keys(), ...this.wallets.keys()]);
    this.sendersCache = { deposits, stamp: this.stamp ?? '', set };
    return set;
  }
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}

/** NUMERIC(78,18) as text has trailing zeros: "1.500000000000000000" → "1.5". */
export function trimDecimal(v: string | null): string | null {
  if (v === null) return null;
  if (!v.includes('.')) return v;
  const t = v.replace(/0+$/, '').replace(/\.$/, '');
  return t === '' ? '0' : t;
}
