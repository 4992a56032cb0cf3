import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { servesChainEvents, type AddressNature, type ChainDefinition, type HistoryScanner, type ObservedTransfer } from '@wcs/core';
import type { Logger } from '../config/logger';
import { recordChainEvents, recordOutflows, type NaturedEvent } from '../chain-events/events';
import { historyReads, sourcesOfRead, type HistoryRead } from '../chain-events/history-reads';
import { matchTransfers, type CustodyAddress, type OutflowCandidate } from '../chain-events/matching';
import type { ChainMonitor } from '../chain-events/monitor';
import { advanceRecharges, RechargeNotices, recordTransfers, type Deposit } from './recharges';
import type { ScanLease } from './scan-lease';
import { recordIgnoredDeposits } from '../reconciliation/ignored';
import type { ChainTokens } from './tokens';
import type { WatchList } from './watch-list';
import type { StepResult } from './block-scan';

export interface HistoryScanSettings {
  /** Transactions asked for per history page. */
  readonly pageSize: number;
  /** Addresses read concurrently. */
  readonly concurrency: number;
  /** Pages read per address per step (the rest on the next step). */
  readonly pagesPerStep: number;
}

/** A page's chain events (counterparty natures read) and custody outflows. */
interface Matched {
  readonly events: readonly NaturedEvent[];
  readonly outflows: readonly OutflowCandidate[];
}

/**
 * Scans an account-history chain (SOL, XRP, XLM, EOS): each watched address's final history from
 * its stored cursor. Memo chains attribute a deposit by (shared address, memo); a missing or
 * unknown memo is kept as an unattributed deposit (credited to nobody, no callback) for the
 * operator. History is final, so there is nothing to roll back.
 *
 * Where the scanner serves chain events (servesChainEvents), the same pass also reads the
 * monitor's addresses (subscriptions' monitored addresses, hot and fee wallets, shared deposit
 * accounts), an address the service does not own from the head at the step that first sees it,
 * and outgoing transfers of the addresses monitored for OUT and of every custody address. Each
 * page's chain events are recorded CONFIRMED with their callbacks (history is final) and its
 * custody outflows the service did not sign with their TRANSFER callback and alert, in the
 * page's transaction (docs/chain-events.md).
 */
export class HistoryChainScan {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly chain: ChainDefinition,
    private readonly scanner: HistoryScanner,
    private readonly lease: ScanLease,
    private readonly watch: WatchList,
    private readonly tokens: ChainTokens,
    private readonly settings: HistoryScanSettings,
    private readonly logger: Logger,
    /** Subscriptions' monitored addresses, hot and fee wallets, shared deposit accounts (docs/chain-events.md). */
    private readonly monitor: ChainMonitor,
  ) {
    this.events = servesChainEvents(scanner);
  }

  /** Whether the scanner reads outgoing transfers and head cursors (chain events and outflows on this chain). */
  private readonly events: boolean;
  /** Minimum amounts of subscriptions in base units, per (subscription, token). */
  private readonly minCache = new Map<string, bigint>();
  /** The monitor version whose addresses' stale cursors were last cleared. */
  private clearedFor: string | null = null;

  async step(): Promise<StepResult> {
    // the final height the step counts confirmations from; raised when a history page holds a
    // transfer above it (the node's final height moved on while the step read)
    let tip = await this.scanner.tipHeight();
    const tipFor = async (transfers: readonly ObservedTransfer[]): Promise<bigint> => {
      if (transfers.some((x) => x.blockHeight > tip)) {
        const now = await this.scanner.tipHeight();
        if (now > tip) tip = now;
      }
      return tip;
    };
    // the monitor first: what it sees, the watch list read after it sees too (a shared deposit
    // account and its first address are written in one transaction). The other way round, an
    // address made between the two reads is a wallet of the monitor and no deposit address yet,
    // read from the head: its earlier deposits would never be seen
    if (this.events) await this.monitor.refresh();
    await this.watch.refresh();
    const cursor = await this.lease.read();
    if (cursor.halted) throw new Error(`scanning of ${this.chain.code} is halted: ${cursor.halted}`);
    const reads = historyReads({
      deposits: this.watch.addresses(),
      inbound: this.monitor.inboundAddresses(),
      outbound: this.monitor.outboundAddresses(),
      wallets: this.monitor.walletAddresses(),
    }, this.events);
    if (this.events) await this.clearStaleCursors(reads);
    const stored = new Map(
      (await this.sequelize.query<{ address: string; cursor: string | null }>('SELECT address, cursor FROM scan_history_cursors WHERE chain_id = $1', {
        bind: [this.chain.id], type: QueryTypes.SELECT,
      })).map((r) => [r.address, r.cursor]),
    );
    let recorded = 0;
    let behind = false;
    let next = 0;
    const worker = async () => {
      while (next < reads.length) {
        const read = reads[next++]!;
        const address = read.address;
        let position = stored.get(address) ?? null;
        // an address of someone else (or a wallet) is watched from now: its first cursor is the head
        if (!stored.has(address) && read.fromHead) {
          position = await this.scanner.headCursor!(address);
          // kept at once: a failing read below must not move the start later (what happens meanwhile would be missed)
          await this.sequelize.query(
            'INSERT INTO scan_history_cursors (chain_id, address, cursor, updated_at) VALUES ($1, $2, $3, now()) ON CONFLICT (chain_id, address) DO NOTHING',
            { bind: [this.chain.id, address, position] },
          );
        }
        for (let page = 0; page < this.settings.pagesPerStep; page++) {
          const got = await this.scanner.transfersSince(address, position, this.settings.pageSize, read.outgoing ? { outgoing: true } : undefined);
          const moved = got.cursor !== position;
          const matched = await this.match(read, got.transfers);
          recorded += await this.apply(address, got.transfers, position, got.cursor, await tipFor(got.transfers), matched);
          position = got.cursor;
          if (!moved || got.transfers.length === 0) break;
          if (page === this.settings.pagesPerStep - 1) behind = true;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.settings.concurrency, reads.length) }, worker));
    await this.sequelize.transaction(async (t) => {
      await this.lease.lock(t);
      await this.sequelize.query('UPDATE scan_cursors SET height = $2, tip_height = $2, last_error = NULL, updated_at = now() WHERE chain_id = $1', {
        bind: [this.chain.id, tip.toString()], transaction: t,
      });
      const notices = new RechargeNotices();
      await advanceRecharges(this.sequelize, t, { chainId: this.chain.id }, tip, notices);
      await notices.flush(this.sequelize, t);
    });
    return { behind, tip, height: tip, recorded };
  }

  /**
   * The chain events and custody outflows of one read's page: this address's side of each
   * transfer only (sourcesOfRead), with the events' counterparty natures read from the node.
   * Events are final at once (minConfirmations 1): history scanners read final data only.
   */
  private async match(read: HistoryRead, transfers: readonly ObservedTransfer[]): Promise<Matched> {
    if (!this.events || transfers.length === 0) return { events: [], outflows: [] };
    const memoChain = this.chain.addressing === 'memo';
    const custody = (address: string): CustodyAddress | null => {
      const owner = memoChain ? null : this.watch.ownerOf(address);
      if (owner) return { applicationId: owner.applicationId, kind: 'DEPOSIT', externalUserId: owner.externalUserId };
      return this.monitor.wallet(address);
    };
    const { events, outflows } = matchTransfers(transfers, sourcesOfRead(read.address, {
      inbound: (a) => this.monitor.inbound(a),
      outbound: (a) => this.monitor.outbound(a),
      custody,
      token: (c) => this.tokens.find(c),
    }), { utxo: false }, this.minCache);
    if (events.length === 0) return { events: [], outflows };
    const counterparties = [...new Set(events.map((e) => e.counterparty).filter((a) => a !== ''))];
    const natures = new Map<string, AddressNature>();
    if (this.scanner.addressNatures && counterparties.length > 0) {
      const answers = await this.scanner.addressNatures(counterparties);
      counterparties.forEach((a, i) => natures.set(a, answers[i] ?? 'EOA'));
    }
    return { events: events.map((candidate) => ({ candidate, nature: natures.get(candidate.counterparty) ?? 'EOA', minConfirmations: 1 })), outflows };
  }

  /**
   * When what is monitored changed: forgets the cursors of addresses that are read no more and
   * are no deposit address, so an address monitored again later starts at the head again (never
   * replaying what happened while it was not monitored).
   */
  private async clearStaleCursors(reads: readonly HistoryRead[]): Promise<void> {
    const version = this.monitor.version;
    if (version === this.clearedFor) return;
    const kept = reads.filter((r) => r.fromHead).map((r) => r.address);
    await this.sequelize.query(
      `DELETE FROM scan_history_cursors c
        WHERE c.chain_id = $1 AND NOT (c.address = ANY($2::text[]))
          AND NOT EXISTS (SELECT 1 FROM addresses a WHERE a.chain_id = c.chain_id AND a.address = c.address)
          AND NOT EXISTS (SELECT 1 FROM deposit_accounts d WHERE d.chain_id = c.chain_id AND d.address = c.address)`,
      { bind: [this.chain.id, kept] },
    );
    this.clearedFor = version;
  }

  private async apply(address: string, transfers: readonly ObservedTransfer[], before: string | null, after: string | null, tip: bigint, matched: Matched): Promise<number> {
    let recorded = 0;
    await this.sequelize.transaction(async (t) => {
      await this.lease.lock(t);
      const deposits: Deposit[] = [];
      // deposits below the minimum into a deposit address (not a hot wallet or a monitored one): kept for reconciliation
      const ignored: Array<{ token: number; x: ObservedTransfer }> = [];
      const depositAddress = this.watch.addresses().has(address);
      let refreshed = false;
      for (const x of transfers) {
        if (x.toAddress !== address) continue;
        const token = this.tokens.find(x.contract);
        if (!token) {
          this.logger.warn('deposit of an unknown token ignored', { chain: this.chain.code, txHash: x.txHash, position: x.position, contract: x.contract, address });
          continue;
        }
        if (x.amount <= 0n || x.amount < token.minDeposit) {
          this.logger.info('deposit below the minimum ignored', { chain: this.chain.code, txHash: x.txHash, token: token.symbol, amount: x.amount.toString(), minimum: token.minDeposit.toString() });
          if (depositAddress && x.amount > 0n && x.succeeded) ignored.push({ token: token.id, x });
          continue;
        }
        const memoChain = this.chain.addressing === 'memo';
        let owner = memoChain ? this.watch.ownerOfMemo(address, x.memo) : this.watch.ownerOf(address);
        if (!owner && memoChain && x.memo !== null && !refreshed) {
          // a memo made after this step's read of the watch list (its user may already have paid): read again
          refreshed = true;
          await this.watch.refresh();
          owner = this.watch.ownerOfMemo(address, x.memo);
        }
        if (!owner) {
          if (memoChain && x.succeeded) recorded += await this.unattributed(t, token.id, x);
          continue;
        }
        deposits.push({ token, owner, transfer: x, minConfirmations: token.confirmations ?? this.chain.confirmations });
      }
      if (ignored.length > 0) await recordIgnoredDeposits(this.sequelize, t, this.chain.id, ignored);
      if (deposits.length > 0) {
        const notices = new RechargeNotices();
        recorded += await recordTransfers(this.sequelize, t, this.chain.id, deposits, tip, notices);
        await advanceRecharges(this.sequelize, t, { chainId: this.chain.id }, tip, notices);
        await notices.flush(this.sequelize, t);
      }
      await recordChainEvents(this.sequelize, t, this.chain.id, matched.events, tip);
      const outflows = await recordOutflows(this.sequelize, t, this.chain.id, this.chain.code, matched.outflows);
      for (const o of outflows) {
        this.logger.warn('unexpected outflow from a custody address (the service did not sign it)', { chain: this.chain.code, outflow: o.id, address: o.from_address, kind: o.address_kind, txHash: o.tx_hash });
      }
      await this.sequelize.query(
        `INSERT INTO scan_history_cursors (chain_id, address, cursor, updated_at) VALUES ($1, $2, $3, now())
         ON CONFLICT (chain_id, address) DO UPDATE SET cursor = EXCLUDED.cursor, updated_at = now()`,
        { bind: [this.chain.id, address, after], transaction: t },
      );
    });
    if (before !== after) this.logger.debug('history read', { chain: this.chain.code, address, transfers: transfers.length });
    return recorded;
  }

  private async unattributed(t: Transaction, tokenId: number, x: ObservedTransfer): Promise<number> {
    const already = await this.sequelize.query('SELECT 1 FROM recharges WHERE chain_id = $1 AND tx_hash = $2 AND position = $3', {
      bind: [this.chain.id, x.txHash, x.position], type: QueryTypes.SELECT, transaction: t,
    });
    if (already.length) return 0;
    const rows = await this.sequelize.query<{ id: string }>(
      `INSERT INTO unattributed_deposits (chain_id, chain_token_id, address, memo, from_address, tx_hash, position, amount, block_height, block_hash, reason)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8::numeric,$9,$10,$11) ON CONFLICT (chain_id, tx_hash, position) DO NOTHING RETURNING id`,
      {
        bind: [this.chain.id, tokenId, x.toAddress, x.memo, x.fromAddress, x.txHash, x.position, x.amount.toString(), x.blockHeight.toString(), x.blockHash,
          x.memo === null ? 'MEMO_MISSING' : 'MEMO_UNKNOWN'],
        type: QueryTypes.SELECT,
        transaction: t,
      },
    );
    if (rows.length) this.logger.warn('unattributed deposit kept for the operator', { chain: this.chain.code, id: rows[0]!.id, txHash: x.txHash, memo: x.memo });
    return 0;
  }
}
