import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { TransferChange, TransferOwner } from '../transfers/owners';
import type { TransferStatus } from '../transfers/model';
import { ORDER_COLUMNS, ORDER_FROM, WithdrawNotices, type OrderRow } from './withdraw-events';
import type { WithdrawStatus } from './withdraw-service';

/** A payout transfer's status as its withdrawal shows it: not yet taken by a node is PROCESSING. */
function orderStatus(s: TransferStatus): WithdrawStatus {
  return s === 'READY' || s === 'SIGNED' ? 'PROCESSING' : s;
}

/**
 * The withdrawal behind each PAYOUT transfer: follows its transfer (signed: sequence, hash and fee
 * estimate; BROADCASTED, CONFIRMING, SUCCESS / FAILED with the fee paid) and writes one `withdraw`
 * callback per (order, status), in the transaction of the transfer's change.
 */
export class PayoutOwner implements TransferOwner {
  readonly kinds = ['PAYOUT'] as const;

  constructor(private readonly sequelize: Sequelize) {}

  async onChange(t: Transaction, changes: readonly TransferChange[]): Promise<void> {
    const orders = await this.sequelize.query<OrderRow & { transfer_id: string }>(
      `SELECT ${ORDER_COLUMNS}, w.transfer_id::text AS transfer_id FROM ${ORDER_FROM} WHERE w.transfer_id = ANY($1::bigint[]) FOR UPDATE OF w`,
      { bind: [changes.map((c) => c.id)], type: QueryTypes.SELECT, transaction: t },
    );
    const byTransfer = new Map(orders.map((o) => [o.transfer_id, o]));
    const rows = changes.flatMap((c) => {
      const o = byTransfer.get(c.id);
      return o ? [{ c, o }] : [];
    });
    if (rows.length === 0) return;
    const final = (c: TransferChange) => c.status === 'SUCCESS' || c.status === 'FAILED';
    await this.sequelize.query(
      `UPDATE withdrawals w SET status = u.status, tx_hash = coalesce(u.hash, w.tx_hash), sequence = coalesce(u.seq::numeric, w.sequence),
              fee = coalesce(u.fee::numeric, w.fee), fee_final = u.fee_final, block_height = coalesce(u.height::bigint, w.block_height), confirmations = u.conf,
              fail_reason = coalesce(u.reason, w.fail_reason),
              signed_at = CASE WHEN u.status_t = 'SIGNED' THEN coalesce(w.signed_at, now()) ELSE w.signed_at END,
              broadcast_at = CASE WHEN u.status_t = 'BROADCASTED' THEN coalesce(w.broadcast_at, now()) ELSE w.broadcast_at END,
              finished_at = CASE WHEN u.final THEN now() ELSE w.finished_at END, updated_at = now()
         FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::boolean[], $8::text[], $9::int[], $10::text[], $11::boolean[])
              AS u(id, status, status_t, hash, seq, fee, fee_final, height, conf, reason, final)
        WHERE w.id = u.id`,
      {
        bind: [
          rows.map((r) => r.o.id), rows.map((r) => orderStatus(r.c.status)), rows.map((r) => r.c.status), rows.map((r) => r.c.txHash), rows.map((r) => r.c.sequence),
          rows.map((r) => r.c.fee), rows.map((r) => r.c.feeFinal), rows.map((r) => r.c.blockHeight), rows.map((r) => r.c.confirmations), rows.map((r) => r.c.failReason),
          rows.map((r) => final(r.c)),
        ],
        transaction: t,
      },
    );
    const notices = new WithdrawNotices();
    for (const { c, o } of rows) {
      for (const e of c.events) if (e !== 'SIGNED' && e !== 'READY') notices.add({ ...o, tx_hash: c.txHash }, e, c.txHash);
    }
    await notices.flush(this.sequelize, t);
  }

  async describe(t: Transaction, id: string) {
    const [o] = await this.sequelize.query<{ id: string }>('SELECT id::text AS id FROM withdrawals WHERE transfer_id = $1', { bind: [id], type: QueryTypes.SELECT, transaction: t });
    return { what: `withdrawal ${o?.id ?? '?'}`, alertKind: 'WITHDRAWAL_STUCK', details: { withdrawal: o?.id ?? null } };
  }
}
