import { QueryTypes, type Sequelize } from 'sequelize';
import type { AddressNature, BlockRef, BlockScanner, ChainDefinition, ObservedTransfer } from '@wcs/core';
import type { Logger } from '../config/logger';
import { confirmChainEvents, nextChainEventDue, recordChainEvents, recordOutflows, rollbackChainEvents, type NaturedEvent } from '../chain-events/events';
import { matchTransfers, type CustodyAddress, type OutflowCandidate } from '../chain-events/matching';
import type { ChainMonitor } from '../chain-events/monitor';
import { advanceRecharges, failRecharge, RechargeNotices, recordTransfers, type Deposit } from './recharges';
import { raiseAlert, type ScanLease } from './scan-lease';
import { recordIgnoredDeposits } from '../reconciliation/ignored';
import type { ChainTokens } from './tokens';
import type { WatchList } from './watch-list';

export interface BlockScanSettings {
  /** Blocks per scanRange call. */
  readonly batchBlocks: number;
  /** scanRange calls in flight while catching up. */
  readonly concurrency: number;
  /** First height to scan when the chain has no cursor yet (null: the tip at first start). */
  readonly startHeight: bigint | null;
  /** Recent blocks kept to find a fork point (at least the chain's confirmations + 1). */
  readonly keepBlocks: number;
  /**
   * A deposit whose block left the chain ends FAILED when its transaction is not mined again
   * within this many blocks (unknown to the node), or within 20 times as many while the node
   * still holds it in its mempool.
   */
  readonly dropAfterBlocks: number;
}

/** What a range's transfers mean beyond deposits: chain events (counterparty natures read) and custody outflows. */
interface Matched {
  readonly events: readonly NaturedEvent[];
  readonly outflows: readonly OutflowCandidate[];
}

export interface StepResult {
  /** true while behind the tip: the caller steps again at once. */
  readonly behind: boolean;
  readonly tip: bigint;
  readonly height: bigint;
  readonly rolledBackTo?: bigint;
  readonly recorded: number;
}

/**
 * Scans one block chain (EVM, BTC) for deposits to watched addresses: walks heights from the
 * stored cursor, keeps recent blocks with parent links, rolls back to the fork point on a
 * mismatch and scans again, and advances every open deposit by confirmations. One step is a few
 * ranges fetched concurrently and written in order, each in one transaction with its callbacks.
 */
export class BlockChainScan {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly chain: ChainDefinition,
    private readonly scanner: BlockScanner,
    private readonly lease: ScanLease,
    private readonly watch: WatchList,
    private readonly tokens: ChainTokens,
    private readonly settings: BlockScanSettings,
    private readonly logger: Logger,
    /** Subscriptions' monitored addresses and the hot and fee wallets (docs/chain-events.md). */
    private readonly monitor: ChainMonitor,
  ) {}

  /** Minimum amounts of subscriptions in base units, per (subscription, token). */
  private readonly minCache = new Map<string, bigint>();
  /**
   * The lowest tip at which a PENDING chain event of this chain is due: null none, undefined not
   * known (read at the next write). This process holds the chain's lease, so only its own writes
   * change it; a step confirms only when the tip reaches it.
   */
  private nextDue: bigint | null | undefined = undefined;

  async step(): Promise<StepResult> {
    const tip = await this.scanner.tipHeight();
    await this.watch.refresh();
    await this.monitor.refresh();
    let cursor = await this.lease.read();
    if (cursor.halted) throw new Error(`scanning of ${this.chain.code} is halted: ${cursor.halted}`);
    if (cursor.height === null || cursor.hash === null) {
      const start = this.settings.startHeight ?? tip;
      const base = start > 0n ? await this.scanner.blockAt(start - 1n) : null;
      await this.sequelize.transaction(async (t) => {
        await this.lease.lock(t);
        await this.sequelize.query('UPDATE scan_cursors SET height = $2, hash = $3, tip_height = $4, updated_at = now() WHERE chain_id = $1', {
          bind: [this.chain.id, (start - 1n).toString(), base?.hash ?? '', tip.toString()], transaction: t,
        });
        if (base) await this.saveBlocks(t, [base]);
      });
      cursor = await this.lease.read();
    }
    let height = BigInt(cursor.height!);
    // the block under the cursor must still be on the node's best chain
    if (height >= 0n && cursor.hash !== '') {
      const canonical = height <= tip ? await this.scanner.blockAt(height) : null;
      if (!canonical || canonical.hash !== cursor.hash) {
        const fork = await this.rollback(height, tip);
        return { behind: true, tip, height: fork, rolledBackTo: fork, recorded: 0 };
      }
    }
    let recorded = 0;
    if (height < tip) {
      const ranges: Array<[bigint, bigint]> = [];
      let from = height + 1n;
      const batch = BigInt(this.settings.batchBlocks);
      while (from <= tip && ranges.length < this.settings.concurrency) {
        const to = from + batch - 1n < tip ? from + batch - 1n : tip;
        ranges.push([from, to]);
        from = to + 1n;
      }
      const deposits = this.watch.addresses();
      const watched = this.monitor.receivers(deposits);
      const senders = this.monitor.senders(deposits);
      const options = senders.size > 0 ? { senders } : undefined;
      // each range is read and matched (counterparty natures are node reads too) while the ranges before it are written
      const fetched = ranges.map(([a, b]) => this.scanner.scanRange(a, b, watched, options).then(async (r) => ({ ...r, matched: await this.match(r.transfers) })));
      fetched.forEach((p) => p.catch(() => undefined)); // awaited in order below
      let parent = cursor.hash!;
      for (let i = 0; i < ranges.length; i++) {
        const { blocks, transfers, matched } = await fetched[i]!;
        if (!this.linked(blocks, ranges[i]![0], ranges[i]![1], parent)) break; // a reorg under us: the next step finds the fork
        recorded += await this.apply(blocks, transfers, tip, matched);
        height = ranges[i]![1];
        parent = blocks[blocks.length - 1]!.hash;
      }
    }
    await this.resolveOrphans(tip);
    return { behind: height < tip, tip, height, recorded };
  }

  /** Whether blocks are exactly [from..to], each the child of the previous, the first of parent. */
  private linked(blocks: readonly BlockRef[], from: bigint, to: bigint, parent: string): boolean {
    if (BigInt(blocks.length) !== to - from + 1n) return false;
    let prev = parent;
    for (let i = 0; i < blocks.length; i++) {
      const b = blocks[i]!;
      if (b.height !== from + BigInt(i)) return false;
      if (prev !== '' && b.parentHash !== prev) return false;
      prev = b.hash;
    }
    return true;
  }

  /** The chain events and custody outflows in a range's transfers, with the events' counterparty natures read from the node. */
  private async match(transfers: readonly ObservedTransfer[]): Promise<Matched> {
    if (transfers.length === 0) return { events: [], outflows: [] };
    const custody = (address: string): CustodyAddress | null => {
      const owner = this.watch.ownerOf(address);
      if (owner) return { applicationId: owner.applicationId, kind: 'DEPOSIT', externalUserId: owner.externalUserId };
      return this.monitor.wallet(address);
    };
    const { events, outflows } = matchTransfers(transfers, {
      inbound: (a) => this.monitor.inbound(a),
      outbound: (a) => this.monitor.outbound(a),
      custody,
      token: (c) => this.tokens.find(c),
    }, { utxo: this.chain.family === 'bitcoin' }, this.minCache);
    if (events.length === 0) return { events: [], outflows };
    const counterparties = [...new Set(events.map((e) => e.counterparty).filter((a) => a !== ''))];
    const natures = new Map<string, AddressNature>();
    if (this.scanner.addressNatures && counterparties.length > 0) {
      const answers = await this.scanner.addressNatures(counterparties);
      counterparties.forEach((a, i) => natures.set(a, answers[i] ?? 'EOA'));
    }
    return {
      events: events.map((candidate) => ({
        candidate,
        nature: natures.get(candidate.counterparty) ?? 'EOA',
        minConfirmations: candidate.token.confirmations ?? this.chain.confirmations,
      })),
      outflows,
    };
  }

  /** Writes one range: its blocks, its deposits, chain events and outflows with their callbacks, the cursor; then confirmations. */
  private async apply(blocks: readonly BlockRef[], transfers: readonly ObservedTransfer[], tip: bigint, matched: Matched): Promise<number> {
    const last = blocks[blocks.length - 1]!;
    let recorded = 0;
    let dueAfter: bigint | null | undefined;
    await this.sequelize.transaction(async (t) => {
      const cursor = await this.lease.lock(t);
      if (cursor.hash !== '' && cursor.hash !== blocks[0]!.parentHash) throw new Error(`${this.chain.code}: the cursor moved under this step`);
      await this.saveBlocks(t, blocks);
      const deposits: Deposit[] = [];
      const ignored: Array<{ token: number; x: ObservedTransfer }> = [];
      for (const x of transfers) {
        const owner = this.watch.ownerOf(x.toAddress);
        if (!owner) continue;
        if (this.chain.family === 'bitcoin' && x.fromAddress === x.toAddress) {
          // change back to the deposit address from a spend by its own key: not money from outside
          // (the spend itself is an outflow the service accounts for, docs/chain-events.md)
          this.logger.warn('change to a deposit address from its own key is not a deposit', { chain: this.chain.code, txHash: x.txHash, position: x.position, address: x.toAddress });
          continue;
        }
        const token = this.tokens.find(x.contract);
        if (!token) {
          this.logger.warn('deposit of an unknown token ignored', { chain: this.chain.code, txHash: x.txHash, position: x.position, contract: x.contract, address: x.toAddress });
          continue;
        }
        if (x.amount <= 0n || x.amount < token.minDeposit) {
          this.logger.info('deposit below the minimum ignored', { chain: this.chain.code, txHash: x.txHash, position: x.position, token: token.symbol, amount: x.amount.toString(), minimum: token.minDeposit.toString() });
          // kept for reconciliation: the chain holds it, the ledger does not (docs/reconciliation.md)
          if (x.amount > 0n && x.succeeded) ignored.push({ token: token.id, x });
          continue;
        }
        deposits.push({ token, owner, transfer: x, minConfirmations: token.confirmations ?? this.chain.confirmations });
      }
      if (ignored.length > 0) await recordIgnoredDeposits(this.sequelize, t, this.chain.id, ignored);
      const notices = new RechargeNotices();
      recorded = await recordTransfers(this.sequelize, t, this.chain.id, deposits, tip, notices);
      const events = await recordChainEvents(this.sequelize, t, this.chain.id, matched.events, tip);
      const outflows = await recordOutflows(this.sequelize, t, this.chain.id, this.chain.code, matched.outflows);
      for (const o of outflows) {
        this.logger.warn('unexpected outflow from a custody address (the service did not sign it)', { chain: this.chain.code, outflow: o.id, address: o.from_address, kind: o.address_kind, txHash: o.tx_hash });
      }
      await this.sequelize.query('UPDATE scan_cursors SET height = $2, hash = $3, tip_height = $4, last_error = NULL, updated_at = now() WHERE chain_id = $1', {
        bind: [this.chain.id, last.height.toString(), last.hash, tip.toString()], transaction: t,
      });
      await advanceRecharges(this.sequelize, t, { chainId: this.chain.id }, tip, notices);
      await notices.flush(this.sequelize, t);
      let due = this.nextDue === undefined ? await nextChainEventDue(this.sequelize, t, this.chain.id) : this.nextDue;
      if (events.nextDue !== null && (due === null || events.nextDue < due)) due = events.nextDue;
      if (due !== null && due <= tip) {
        await confirmChainEvents(this.sequelize, t, this.chain.id, tip);
        due = await nextChainEventDue(this.sequelize, t, this.chain.id);
      }
      dueAfter = due;
      await this.sequelize.query('DELETE FROM scan_blocks WHERE chain_id = $1 AND height < $2', {
        bind: [this.chain.id, (last.height - BigInt(this.settings.keepBlocks)).toString()], transaction: t,
      });
    }).catch((e: unknown) => {
      this.nextDue = undefined; // rolled back: read it again
      throw e;
    });
    this.nextDue = dueAfter;
    return recorded;
  }

  private async saveBlocks(t: import('sequelize').Transaction, blocks: readonly BlockRef[]): Promise<void> {
    await this.sequelize.query(
      `INSERT INTO scan_blocks (chain_id, height, hash, parent_hash)
       SELECT $1, h::bigint, x, p FROM unnest($2::text[], $3::text[], $4::text[]) AS u(h, x, p)
       ON CONFLICT (chain_id, height) DO UPDATE SET hash = EXCLUDED.hash, parent_hash = EXCLUDED.parent_hash`,
      { bind: [this.chain.id, blocks.map((b) => b.height.toString()), blocks.map((b) => b.hash), blocks.map((b) => b.parentHash)], transaction: t },
    );
  }

  /**
   * The block under the cursor left the best chain: find the highest stored block that is still
   * on it (the fork point), forget the blocks above, and take the deposits in them off their
   * blocks (PENDING, confirmations 0, never SETTLED while off chain). A credited deposit
   * (CONFIRMED or SETTLED) above the fork means a reorg deeper than the safe depth: it is left as
   * it is and an operator alert is raised. No stored block on the best chain: scanning halts
   * with an alert.
   */
  private async rollback(height: bigint, tip: bigint): Promise<bigint> {
    const stored = await this.sequelize.query<{ height: string; hash: string }>(
      'SELECT b.height::text AS height, b.hash FROM scan_blocks b WHERE b.chain_id = $1 AND b.height < $2 ORDER BY b.height DESC',
      { bind: [this.chain.id, height.toString()], type: QueryTypes.SELECT },
    );
    let fork: bigint | null = null;
    for (const b of stored) {
      const h = BigInt(b.height);
      if (h > tip) continue;
      const canonical = await this.scanner.blockAt(h);
      if (canonical && canonical.hash === b.hash) {
        fork = h;
        break;
      }
    }
    if (fork === null) {
      const reason = `reorg deeper than the ${stored.length} blocks kept (cursor ${height}); re-scan from a known height after checking the node`;
      await this.sequelize.transaction(async (t) => {
        await this.lease.lock(t);
        await this.sequelize.query('UPDATE scan_cursors SET halted = $2, updated_at = now() WHERE chain_id = $1', { bind: [this.chain.id, reason], transaction: t });
        await raiseAlert(this.sequelize, t, this.chain.id, 'REORG_TOO_DEEP', `${this.chain.code}: ${reason}`, { cursor: height.toString(), tip: tip.toString() });
      });
      this.logger.error('scanning halted: reorg deeper than the kept blocks', { chain: this.chain.code, cursor: height.toString() });
      throw new Error(`${this.chain.code}: ${reason}`);
    }
    const forkHash = stored.find((b) => BigInt(b.height) === fork)!.hash;
    await this.sequelize.transaction(async (t) => {
      await this.lease.lock(t);
      const credited = await this.sequelize.query<{ id: string; tx_status: string; block_height: string; tx_hash: string }>(
        `SELECT id, tx_status, block_height::text AS block_height, tx_hash FROM recharges
          WHERE chain_id = $1 AND block_height > $2 AND block_hash IS NOT NULL AND tx_status IN ('CONFIRMED','SETTLED')`,
        { bind: [this.chain.id, fork!.toString()], type: QueryTypes.SELECT, transaction: t },
      );
      if (credited.length > 0) {
        await raiseAlert(this.sequelize, t, this.chain.id, 'REORG_CREDITED_DEPOSIT',
          `${this.chain.code}: a reorg to height ${fork} removed the blocks of ${credited.length} credited deposit(s); they were left unchanged`,
          { fork: fork!.toString(), recharges: credited });
        this.logger.error('reorg deeper than the safe depth touched credited deposits', { chain: this.chain.code, fork: fork!.toString(), recharges: credited.map((c) => c.id) });
      }
      await this.sequelize.query(
        `UPDATE recharges SET block_hash = NULL, orphaned_at_height = $3, confirmations = 0, updated_at = now()
          WHERE chain_id = $1 AND block_height > $2 AND tx_status = 'PENDING' AND block_hash IS NOT NULL`,
        { bind: [this.chain.id, fork!.toString(), tip.toString()], transaction: t },
      );
      this.nextDue = undefined;
      const events = await rollbackChainEvents(this.sequelize, t, this.chain.id, this.chain.code, fork!);
      if (events.length > 0) this.logger.error('reorg deeper than the safe depth touched confirmed chain events', { chain: this.chain.code, fork: fork!.toString(), chainEvents: events });
      await this.sequelize.query('DELETE FROM ignored_deposits WHERE chain_id = $1 AND block_height > $2', { bind: [this.chain.id, fork!.toString()], transaction: t });
      await this.sequelize.query('DELETE FROM scan_blocks WHERE chain_id = $1 AND height > $2', { bind: [this.chain.id, fork!.toString()], transaction: t });
      await this.sequelize.query('UPDATE scan_cursors SET height = $2, hash = $3, tip_height = $4, updated_at = now() WHERE chain_id = $1', {
        bind: [this.chain.id, fork!.toString(), forkHash, tip.toString()], transaction: t,
      });
    });
    this.logger.warn('reorg: rolled back to the fork point', { chain: this.chain.code, from: height.toString(), fork: fork.toString() });
    return fork;
  }

  /**
   * Deposits whose block left the chain and that the re-scan has not found in a new block: once
   * dropAfterBlocks have passed, asks the node. Mined on the best chain: takes that block. Unknown
   * to the node (or still only in its mempool after 20 times as long): FAILED, with a callback.
   */
  private async resolveOrphans(tip: bigint): Promise<void> {
    const orphans = await this.sequelize.query<{ id: string; tx_hash: string; orphaned_at_height: string }>(
      `SELECT id, tx_hash, orphaned_at_height::text AS orphaned_at_height FROM recharges
        WHERE chain_id = $1 AND tx_status = 'PENDING' AND block_hash IS NULL AND orphaned_at_height <= $2`,
      { bind: [this.chain.id, (tip - BigInt(this.settings.dropAfterBlocks)).toString()], type: QueryTypes.SELECT },
    );
    for (const o of orphans) {
      const found = await this.scanner.lookupTransaction(o.tx_hash);
      const waited = tip - BigInt(o.orphaned_at_height);
      let failReason: string | null = null;
      if (found.state === 'MINED') {
        const canonical = await this.scanner.blockAt(found.blockHeight);
        if (canonical?.hash !== found.blockHash) continue; // the node is mid-reorg: ask again next step
        await this.sequelize.transaction(async (t) => {
          await this.lease.lock(t);
          if (!found.succeeded) {
            await failRecharge(this.sequelize, t, o.id, 'the transaction failed on chain when it was mined again');
            return;
          }
          await this.sequelize.query(
            'UPDATE recharges SET block_height = $2, block_hash = $3, orphaned_at_height = NULL, updated_at = now() WHERE id = $1 AND block_hash IS NULL',
            { bind: [o.id, found.blockHeight.toString(), found.blockHash], transaction: t },
          );
          const notices = new RechargeNotices();
          await advanceRecharges(this.sequelize, t, { chainId: this.chain.id, rechargeId: o.id }, tip, notices);
          await notices.flush(this.sequelize, t);
        });
        continue;
      }
      if (found.state === 'UNKNOWN') failReason = `its block left the chain (reorg) and the transaction was not mined again within ${waited} blocks`;
      else if (waited >= BigInt(this.settings.dropAfterBlocks) * 20n) failReason = `its block left the chain (reorg) and the transaction stayed unmined for ${waited} blocks`;
      if (failReason) {
        await this.sequelize.transaction(async (t) => {
          await this.lease.lock(t);
          await failRecharge(this.sequelize, t, o.id, failReason!);
        });
        this.logger.warn('deposit failed: its block left the chain', { chain: this.chain.code, recharge: o.id, txHash: o.tx_hash });
      }
    }
  }
}
