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
    const ended: string[] = [];
    const of = (kind: 'TOP_UP' | 'SWEEP', status: string) => changes.filter((c) => (kind === 'TOP_UP' ? c.kind === 'TOP_UP' : c.kind !== 'TOP_UP') && c.status === status);
    // set-based throughout: a round of hundreds of changes is a few statements, not a few per item
    const funded = of('TOP_UP', 'SUCCESS');
    if (funded.length > 0) {
      await this.sequelize.query(`UPDATE collection_items SET status = 'FUNDED', waiting_reason = NULL, updated_at = now() WHERE topup_transfer_id = ANY($1::bigint[]) AND status = 'TOPPING_UP'`, {
        bind: [funded.map((c) => c.id)], transaction: t,
      });
    }
    const unfunded = of('TOP_UP', 'FAILED');
    if (unfunded.length > 0) {
      const reasons = unfunded.map((c) => c.failReason ?? c.failCode ?? 'unknown');
      const rows = await this.sequelize.query<{ id: string; chain_id: number; from_address: string; transfer: string; reason: string }>(
        `UPDATE collection_items i SET status = 'FAILED', failure_code = 'GAS_TOPUP_FAILED', failure_message = left('the gas top-up failed: ' || u.reason, 256), finished_at = now(), updated_at = now()
           FROM unnest($1::bigint[], $2::text[]) AS u(transfer, reason)
          WHERE i.topup_transfer_id = u.transfer AND i.status = 'TOPPING_UP' RETURNING i.id::text AS id, i.chain_id, i.from_address, u.transfer::text AS transfer, u.reason`,
        { bind: [unfunded.map((c) => c.id), reasons], type: QueryTypes.SELECT, transaction: t },
      );
      for (const r of rows) {
        await raiseAlert(this.sequelize, t, r.chain_id, 'COLLECTION_FAILED',
          `collection item ${r.id} (HOT_GATHER from ${r.from_address}) failed: GAS_TOPUP_FAILED: ${r.reason}; \`wcs collect retry --item ${r.id}\` once the fee wallet can pay`,
          { item: r.id, transfer: r.transfer, code: 'GAS_TOPUP_FAILED' });
      }
      ended.push(...rows.map((r) => r.id));
    }
    // a sweep's hash as soon as it is signed (and when a replacement is mined instead): only the items whose hash differs are written
    const moving = changes.filter((c) => c.kind !== 'TOP_UP' && c.status !== 'SUCCESS' && c.status !== 'FAILED' && c.txHash !== null);
    if (moving.length > 0) {
      await this.sequelize.query(
        `UPDATE collection_items i SET tx_hash = u.hash, updated_at = now() FROM unnest($1::bigint[], $2::text[]) AS u(transfer, hash)
          WHERE i.transfer_id = u.transfer AND i.tx_hash IS DISTINCT FROM u.hash`,
        { bind: [moving.map((c) => c.id), moving.map((c) => c.txHash)], transaction: t },
      );
    }
    const swept = of('SWEEP', 'SUCCESS');
    if (swept.length > 0) {
      const ids = swept.map((c) => c.id);
      await this.sequelize.query(`SELECT id FROM collection_items WHERE transfer_id = ANY($1::bigint[]) AND status = 'SWEEPING' ORDER BY id FOR UPDATE`, { bind: [ids], transaction: t });
      // each item's share of its transfer's fee, in proportion to its amount (the remainder to its
      // last item); what arrived is its amount less that share (fee out of the amount) or its amount
      const rows = await this.sequelize.query<{ id: string }>(
        `WITH ch AS (SELECT * FROM unnest($1::bigint[], $2::text[]) AS u(transfer, hash)),
           items AS (
             SELECT i.id, i.transfer_id, i.amount, sum(i.amount) OVER w AS total, count(*) OVER w AS n, row_number() OVER (PARTITION BY i.transfer_id ORDER BY i.id DESC) AS rn
               FROM collection_items i JOIN ch ON ch.transfer = i.transfer_id WHERE i.status = 'SWEEPING' WINDOW w AS (PARTITION BY i.transfer_id)
           ), shares AS (
             SELECT items.*, x.amount AS intent, x.sent_amount, coalesce(x.fee, 0) AS fee,
                    CASE WHEN items.total = 0 THEN 0 ELSE floor(coalesce(x.fee, 0) * items.amount / items.total) END AS fee_share
               FROM items JOIN transfers x ON x.id = items.transfer_id
           ), gas AS (
             SELECT shares.*, fee_share + CASE WHEN rn = 1 THEN fee - sum(fee_share) OVER (PARTITION BY transfer_id) ELSE 0 END AS gas FROM shares
           )
           UPDATE collection_items i SET status = 'SUCCESS', tx_hash = ch.hash, gas_fee = g.gas,
                  amount = CASE WHEN g.sent_amount IS NULL OR g.sent_amount = g.intent THEN i.amount WHEN g.n = 1 THEN g.sent_amount ELSE GREATEST(1, i.amount - g.gas) END,
                  finished_at = now(), updated_at = now()
             FROM gas g JOIN ch ON ch.transfer = g.transfer_id WHERE i.id = g.id RETURNING i.id::text AS id`,
        { bind: [ids, swept.map((c) => c.txHash)], type: QueryTypes.SELECT, transaction: t },
      );
      ended.push(...rows.map((r) => r.id));
      await this.settle(t, rows.map((r) => r.id));
    }
    const failed = of('SWEEP', 'FAILED');
    if (failed.length > 0) {
      const codes = failed.map((c) => SWEEP_FAILURE[c.failCode ?? ''] ?? 'SWEEP_FAILED');
      const rows = await this.sequelize.query<{ id: string; chain_id: number; from_address: string; stage: string; transfer: string; code: string; reason: string }>(
        `UPDATE collection_items i SET status = 'FAILED', tx_hash = coalesce(u.hash, i.tx_hash), failure_code = u.code, failure_message = u.reason,
                gas_fee = CASE WHEN u.fee_final THEN u.fee::numeric ELSE i.gas_fee END, finished_at = now(), updated_at = now()
           FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::text[]) AS u(transfer, hash, code, reason, fee_final, fee)
          WHERE i.transfer_id = u.transfer AND i.status = 'SWEEPING'
          RETURNING i.id::text AS id, i.chain_id, i.from_address, i.stage, u.transfer::text AS transfer, u.code, u.reason`,
        {
          bind: [failed.map((c) => c.id), failed.map((c) => c.txHash), codes, failed.map((c, i) => (c.failReason ?? codes[i]!).slice(0, 256)), failed.map((c) => c.feeFinal), failed.map((c) => c.fee)],
          type: QueryTypes.SELECT, transaction: t,
        },
      );
      for (const r of rows) {
        await raiseAlert(this.sequelize, t, r.chain_id, 'COLLECTION_FAILED',
          `collection item ${r.id} (${r.stage} from ${r.from_address}) failed: ${r.code}: ${r.reason}; its deposits stay as they are (pass-through: CONFIRMED) until \`wcs collect retry --item ${r.id}\``,
          { item: r.id, transfer: r.transfer, code: r.code });
      }
      ended.push(...rows.map((r) => r.id));
    }
    if (ended.length === 0) return;
    const notices = new CollectNotices();
    for (const i of await loadItems(this.sequelize, t, 'i.id = ANY($1::bigint[])', [ended])) notices.add(i);
    await notices.flush(this.sequelize, t);
  }

  /** Pass-through: the recharges a succeeded HOT_GATHER item moved to the merchant become SETTLED, with their callbacks. */
  async settle(t: Transaction, itemIds: readonly string[]): Promise<void> {
    if (itemIds.length === 0) return;
    const rows = await this.sequelize.query<RechargeRow>(
      `UPDATE recharges r SET tx_status = 'SETTLED', settled_at = now(), updated_at = now()
         FROM collection_items i, applications a, chain_tokens t
        WHERE r.collection_item_id = i.id AND i.id = ANY($1::bigint[]) AND i.stage = 'HOT_GATHER' AND a.id = r.application_id AND t.id = r.chain_token_id
          AND a.settlement_mode = 'PASS_THROUGH' AND r.tx_status = 'CONFIRMED'
       RETURNING r.id::text AS id, r.application_id, r.chain_id, r.chain_token_id, r.address, r.tx_hash, r.amount::text AS amount, r.block_height::text AS block_height,
                 r.block_hash, r.orphaned_at_height::text AS orphaned_at_height, r.tx_status, r.confirmations, r.min_confirmations, a.settlement_mode, t.decimals,
                 a.recharge_credited, r.external_user_id, r.memo`,
      { bind: [itemIds], type: QueryTypes.SELECT, transaction: t },
    );
    rows.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
    const notices = new RechargeNotices();
    for (const r of rows) notices.add(r, 'SETTLED');
    await notices.flush(this.sequelize, t);
  }

  async describe(t: Transaction, id: string) {
    const [i] = await this.sequelize.query<{ id: string }>('SELECT id::text AS id FROM collection_items WHERE transfer_id = $1 OR topup_transfer_id = $1 ORDER BY collection_items.id LIMIT 1', {
      bind: [id], type: QueryTypes.SELECT, transaction: t,
    });
    return { what: `collection item ${i?.id ?? '?'} (transfer ${id})`, alertKind: 'COLLECTION_STUCK', details: { item: i?.id ?? null } };
  }
}
