import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { ChainDefinition, HistoryScanner, ObservedTransfer } from '@wcs/core';
import type { Logger } from '../config/logger';
import { advanceRecharges, RechargeNotices, recordTransfers, type Deposit } from './recharges';
import type { ScanLease } from './scan-lease';
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

/**
 * Scans an account-history chain (SOL, XRP, XLM, EOS): each watched address's final history from
 * its stored cursor. Memo chains attribute a deposit by (shared address, memo); a missing or
 * unknown memo is kept as an unattributed deposit (credited to nobody, no callback) for the
 * operator. History is final, so there is nothing to roll back.
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
  ) {}

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
    await this.watch.refresh();
    const cursor = await this.lease.read();
    if (cursor.halted) throw new Error(`scanning of ${this.chain.code} is halted: ${cursor.halted}`);
    const addresses = [...this.watch.addresses()];
    const stored = new Map(
      (await this.sequelize.query<{ address: string; cursor: string | null }>('SELECT address, cursor FROM scan_history_cursors WHERE chain_id = $1', {
        bind: [this.chain.id], type: QueryTypes.SELECT,
      })).map((r) => [r.address, r.cursor]),
    );
    let recorded = 0;
    let behind = false;
    let next = 0;
    const worker = async () => {
      while (next < addresses.length) {
        const address = addresses[next++]!;
        let position = stored.get(address) ?? null;
        for (let page = 0; page < this.settings.pagesPerStep; page++) {
          const got = await this.scanner.transfersSince(address, position, this.settings.pageSize);
          const moved = got.cursor !== position;
          recorded += await this.apply(address, got.transfers, position, got.cursor, await tipFor(got.transfers));
          position = got.cursor;
          if (!moved || got.transfers.length === 0) break;
          if (page === this.settings.pagesPerStep - 1) behind = true;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.settings.concurrency, addresses.length) }, worker));
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

  private async apply(address: string, transfers: readonly ObservedTransfer[], before: string | null, after: string | null, tip: bigint): Promise<number> {
    let recorded = 0;
    await this.sequelize.transaction(async (t) => {
      await this.lease.lock(t);
      const deposits: Deposit[] = [];
      for (const x of transfers) {
        if (x.toAddress !== address) continue;
        const token = this.tokens.find(x.contract);
        if (!token) {
          this.logger.warn('deposit of an unknown token ignored', { chain: this.chain.code, txHash: x.txHash, position: x.position, contract: x.contract, address });
          continue;
        }
        if (x.amount <= 0n || x.amount < token.minDeposit) {
          this.logger.info('deposit below the minimum ignored', { chain: this.chain.code, txHash: x.txHash, token: token.symbol, amount: x.amount.toString(), minimum: token.minDeposit.toString() });
          continue;
        }
        const memoChain = this.chain.addressing === 'memo';
        const owner = memoChain ? this.watch.ownerOfMemo(address, x.memo) : this.watch.ownerOf(address);
        if (!owner) {
          if (memoChain && x.succeeded) recorded += await this.unattributed(t, token.id, x);
          continue;
        }
        deposits.push({ token, owner, transfer: x, minConfirmations: token.confirmations ?? this.chain.confirmations });
      }
      if (deposits.length > 0) {
        const notices = new RechargeNotices();
        recorded += await recordTransfers(this.sequelize, t, this.chain.id, deposits, tip, notices);
        await advanceRecharges(this.sequelize, t, { chainId: this.chain.id }, tip, notices);
        await notices.flush(this.sequelize, t);
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
