import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { raiseAlert } from '../deposits/scan-lease';
import { RechargeNotices, type RechargeRow } from '../deposits/recharges';
import type { TransferChange, TransferOwner } from '../transfers/owners';
import { CollectNotices, loadItems } from './collect-events';

/** An item's failure code for its sweep transfer's (docs/collection.md). */
const SWEEP_FAILURE: Record<string, string> = { REVERTED: 'SWEEP_REVERTED', NODE_REJECTED: 'NODE_REJECTED', CRAFT_REFUSED: 'CRAFT_REFUSED', EXPIRED: 'EXPIRED' };

/**
 * Collection items behind SWEEP, TOP_UP and COLD_TRANSFER transfers: a confirmed top-up funds its
 * item (then the sweep may be signed), a failed one fails it; a sweep's hash is recorded when
 * signed, its final state ends the item with its fee (a consolidation's fee shared by the items in
 * proportion to their amounts); each terminal state writes one `collect` callback, and a
 * pass-through item's success settles its recharges (SETTLED, with their callbacks) — all in the
 * transaction of the transfer's change.
 */
export class CollectionOwner implements TransferOwner {
  readonly kinds = ['SWEEP', 'TOP_UP', 'COLD_TRANSFER'] as const;

  constructor(private readonly sequelize: Sequelize) {}

  async onChange(t: Transaction, changes: readonly TransferChange[]): Promise<void> {
    const topups = changes.filter((c) => c.kind === 'TOP_UP' && (c.status === 'SUCCESS' || c.status === 'FAILED'));
    const sweeps = changes.filter((c) => c.kind !== 'TOP_UP');
    const ended: string[] = [];
    for (const c of topups) {
      if (c.status === 'SUCCESS') {
        await this.sequelize.query(`UPDATE collection_items SET status = 'FUNDED', waiting_reason = NULL, updated_at = now() WHERE topup_transfer_id = $1 AND status = 'TOPPING_UP'`, { bind: [c.id], transaction: t });
      } else {
        const rows = await this.sequelize.query<{ id: string; chain_id: number; from_address: string }>(
          `UPDATE collection_items SET status = 'FAILED', failure_code = 'GAS_TOPUP_FAILED', failure_message = $2, finished_at = now(), updated_at = now()
            WHERE topup_transfer_id = $1 AND status = 'TOPPING_UP' RETURNING id::text AS id, chain_id, from_address`,
          { bind: [c.id, `the gas top-up failed: ${c.failReason ?? c.failCode ?? 'unknown'}`.slice(0, 256)], type: QueryTypes.SELECT, transaction: t },
        );
        for (const r of rows) {
          await raiseAlert(this.sequelize, t, r.chain_id, 'COLLECTION_FAILED',
            `collection item ${r.id} (HOT_GATHER from ${r.from_address}) failed: GAS_TOPUP_FAILED: ${c.failReason ?? ''}; \`wcs collect retry --item ${r.id}\` once the fee wallet can pay`,
            { item: r.id, transfer: c.id, code: 'GAS_TOPUP_FAILED' });
        }
        ended.push(...rows.map((r) => r.id));
      }
    }
    for (const c of sweeps) {
      if (c.status === 'SIGNED' || c.events.length === 0) {
        await this.sequelize.query(`UPDATE collection_items SET tx_hash = $2, updated_at = now() WHERE transfer_id = $1`, { bind: [c.id, c.txHash], transaction: t });
        continue;
      }
      if (c.status === 'SUCCESS') {
        // each item's share of the fee, in proportion to its amount; what arrived is its amount less that share (fee out of the amount) or its amount
        await this.sequelize.query(`SELECT id FROM collection_items WHERE transfer_id = $1 AND status = 'SWEEPING' ORDER BY id FOR UPDATE`, { bind: [c.id], transaction: t });
        const rows = await this.sequelize.query<{ id: string }>(
          `WITH items AS (
             SELECT i.id, i.amount, sum(i.amount) OVER () AS total, row_number() OVER (ORDER BY i.id DESC) AS rn FROM collection_items i
              WHERE i.transfer_id = $1 AND i.status = 'SWEEPING'
           ), x AS (SELECT amount, sent_amount, coalesce(fee, 0) AS fee FROM transfers WHERE id = $1),
           shares AS (
             SELECT items.id, items.amount, items.total, x.amount AS intent, x.sent_amount,
                    CASE WHEN items.total = 0 THEN 0 ELSE floor(x.fee * items.amount / items.total) END AS fee_share, items.rn, x.fee
               FROM items, x
           )
           UPDATE collection_items i SET status = 'SUCCESS', tx_hash = $2,
                  gas_fee = s.fee_share + CASE WHEN s.rn = 1 THEN s.fee - (SELECT sum(fee_share) FROM shares) ELSE 0 END,
                  amount = CASE WHEN s.sent_amount IS NULL OR s.sent_amount = s.intent THEN i.amount
                                WHEN (SELECT count(*) FROM shares) = 1 THEN s.sent_amount
                                ELSE GREATEST(1, i.amount - s.fee_share - CASE WHEN s.rn = 1 THEN s.fee - (SELECT sum(fee_share) FROM shares) ELSE 0 END) END,
                  finished_at = now(), updated_at = now()
             FROM shares s WHERE i.id = s.id RETURNING i.id::text AS id`,
          { bind: [c.id, c.txHash], type: QueryTypes.SELECT, transaction: t },
        );
        ended.push(...rows.map((r) => r.id));
        await this.settle(t, rows.map((r) => r.id));
        continue;
      }
      if (c.status === 'FAILED') {
        const code = SWEEP_FAILURE[c.failCode ?? ''] ?? 'SWEEP_FAILED';
        const rows = await this.sequelize.query<{ id: string; chain_id: number; from_address: string; stage: string }>(
          `UPDATE collection_items SET status = 'FAILED', tx_hash = coalesce($2, tx_hash), failure_code = $3, failure_message = $4,
                  gas_fee = CASE WHEN $5::boolean THEN $6::numeric ELSE gas_fee END, finished_at = now(), updated_at = now()
            WHERE transfer_id = $1 AND status = 'SWEEPING' RETURNING id::text AS id, chain_id, from_address, stage`,
          { bind: [c.id, c.txHash, code, (c.failReason ?? code).slice(0, 256), c.feeFinal, c.fee], type: QueryTypes.SELECT, transaction: t },
        );
        for (const r of rows) {
          await raiseAlert(this.sequelize, t, r.chain_id, 'COLLECTION_FAILED',
            `collection item ${r.id} (${r.stage} from ${r.from_address}) failed: ${code}: ${c.failReason ?? ''}; its deposits stay as they are (pass-through: CONFIRMED) until \`wcs collect retry --item ${r.id}\``,
            { item: r.id, transfer: c.id, code });
        }
        ended.push(...rows.map((r) => r.id));
      }
    }
    if (ended.length === 0) return;
    const notices = new CollectNotices();
    for (const i of await loadItems(this.sequelize, t, 'i.id = ANY($1::bigint[])', [ended])) notices.add(i);
    await notices.flush(this.sequelize, t);
  }

  /** Pass-through: the recharges a succeeded HOT_GATHER item moved to the merchant become SETTLED, with their callbacks. */
  private async settle(t: Transaction, itemIds: readonly string[]): Promise<void> {
    if (itemIds.length === 0) return;
    const rows = await this.sequelize.query<RechargeRow>(
      `UPDATE recharges r SET tx_status = 'SETTLED', settled_at = now(), updated_at = now()
         FROM collection_items i, applications a, chain_tokens t
        WHERE r.collection_item_id = i.id AND i.id = ANY($1::bigint[]) AND i.stage = 'HOT_GATHER' AND a.id = r.application_id AND t.id = r.chain_token_id
          AND a.settlement_mode = 'PASS_THROUGH' AND r.tx_status = 'CONFIRMED'
       RETURNING r.id::text AS id, r.application_id, r.chain_id, r.chain_token_id, r.address, r.tx_hash, r.amount::text AS amount, r.block_height::text AS block_height,
                 r.block_hash, r.orphaned_at_height::text AS orphaned_at_height, r.tx_status, r.confirmations, r.min_confirmations, a.settlement_mode, t.decimals`,
      { bind: [itemIds], type: QueryTypes.SELECT, transaction: t },
    );
    rows.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
    const notices = new RechargeNotices();
    for (const r of rows) notices.add(r, 'SETTLED');
    await notices.flush(this.sequelize, t);
  }

  async describe(t: Transaction, id: string) {
    const [i] = await this.sequelize.query<{ id: string }>('SELECT id::text AS id FROM collection_items WHERE transfer_id = $1 OR topup_transfer_id = $1 ORDER BY id LIMIT 1', {
      bind: [id], type: QueryTypes.SELECT, transaction: t,
    });
    return { what: `collection item ${i?.id ?? '?'} (transfer ${id})`, alertKind: 'COLLECTION_STUCK', details: { item: i?.id ?? null } };
  }
}
