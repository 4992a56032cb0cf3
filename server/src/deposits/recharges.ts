import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { formatUnits, type ObservedTransfer } from '@wcs/core';
import { enqueueCallback } from '../callbacks/outbox';
import type { ChainTokenView } from './tokens';

export const TX_STATUSES = ['PENDING', 'CONFIRMED', 'SETTLED', 'FAILED'] as const;
export type TxStatus = (typeof TX_STATUSES)[number];

/** Who a deposit is credited to: the address row of a user. */
export interface DepositOwner {
  readonly addressId: number;
  readonly applicationId: number;
  readonly externalUserId: string;
  readonly address: string;
  readonly memo: string | null;
}

/** A recharge row as the state machine needs it. */
export interface RechargeRow {
  id: string;
  application_id: number;
  chain_id: number;
  chain_token_id: number;
  address: string;
  tx_hash: string;
  amount: string;
  block_height: string | null;
  block_hash: string | null;
  orphaned_at_height: string | null;
  tx_status: TxStatus;
  confirmations: number;
  min_confirmations: number;
  settlement_mode: 'ON_CONFIRM' | 'PASS_THROUGH';
  decimals: number;
}

const ROW_SELECT = `r.id, r.application_id, r.chain_id, r.chain_token_id, r.address, r.tx_hash, r.amount::text AS amount,
  r.block_height::text AS block_height, r.block_hash, r.orphaned_at_height::text AS orphaned_at_height, r.tx_status,
  r.confirmations, r.min_confirmations, a.settlement_mode, t.decimals`;
const ROW_FROM = 'recharges r JOIN applications a ON a.id = r.application_id JOIN chain_tokens t ON t.id = r.chain_token_id';

/** The spec's `recharge` event for a record in a state (confirmations -1 and minConfirmations -1 on SETTLED). */
export function rechargeEvent(r: RechargeRow, status: TxStatus): Record<string, unknown> {
  const settled = status === 'SETTLED';
  return {
    event: 'recharge',
    id: Number(r.id),
    applicationId: r.application_id,
    chainId: r.chain_id,
    chainTokenId: r.chain_token_id,
    address: r.address,
    amount: formatUnits(BigInt(r.amount), r.decimals),
    txHash: r.tx_hash,
    blockHeight: r.block_height === null ? 0 : Number(r.block_height),
    txStatus: status,
    confirmations: settled ? -1 : r.confirmations,
    minConfirmations: settled ? -1 : r.min_confirmations,
  };
}

/**
 * Records the callback of a state in the caller's transaction: exactly one task per
 * (recharge, txStatus), the merchant's de-duplication key; a second call for the same pair does
 * nothing.
 */
export async function notifyRecharge(sequelize: Sequelize, t: Transaction, r: RechargeRow, status: TxStatus): Promise<boolean> {
  const claimed = await sequelize.query<{ recharge_id: string }>(
    `INSERT INTO recharge_notices (recharge_id, tx_status, task_id) VALUES ($1, $2, 0)
     ON CONFLICT DO NOTHING RETURNING recharge_id`,
    { bind: [r.id, status], type: QueryTypes.SELECT, transaction: t },
  );
  if (claimed.length === 0) return false;
  const task = await enqueueCallback(sequelize, t, { applicationId: r.application_id, bizType: 'RECHARGE', bizId: Number(r.id), payload: rechargeEvent(r, status) });
  await sequelize.query('UPDATE recharge_notices SET task_id = $3 WHERE recharge_id = $1 AND tx_status = $2', { bind: [r.id, status, task.id], transaction: t });
  return true;
}

export async function loadRecharge(sequelize: Sequelize, t: Transaction, id: string | number): Promise<RechargeRow> {
  const rows = await sequelize.query<RechargeRow>(`SELECT ${ROW_SELECT} FROM ${ROW_FROM} WHERE r.id = $1 FOR UPDATE OF r`, {
    bind: [String(id)], type: QueryTypes.SELECT, transaction: t,
  });
  if (!rows[0]) throw new Error(`recharge ${id} not found`);
  return rows[0];
}

/** Confirmations of a block at `height` when the tip is `tip` (1 when it is the tip). */
export function confirmationsAt(height: bigint, tip: bigint): number {
  const c = tip - height + 1n;
  if (c < 0n) return 0;
  return c > 2_147_483_647n ? 2_147_483_647 : Number(c);
}

/**
 * Walks a record forward from its stored state as far as its confirmations allow, writing one
 * callback per state reached: PENDING (when new) → CONFIRMED (at minConfirmations) → SETTLED
 * (ON_CONFIRM applications, right after confirmation). A record whose block left the chain
 * (block_hash NULL) never moves past PENDING.
 */
export async function advance(sequelize: Sequelize, t: Transaction, r: RechargeRow, tip: bigint | null): Promise<TxStatus> {
  let status = r.tx_status;
  if (status === 'FAILED' || status === 'SETTLED') return status;
  if (r.block_hash !== null && r.block_height !== null && tip !== null) {
    const conf = confirmationsAt(BigInt(r.block_height), tip);
    if (conf !== r.confirmations) {
      await sequelize.query('UPDATE recharges SET confirmations = $2, updated_at = now() WHERE id = $1', { bind: [r.id, conf], transaction: t });
      r.confirmations = conf;
    }
    if (status === 'PENDING' && conf >= r.min_confirmations) {
      await sequelize.query(`UPDATE recharges SET tx_status = 'CONFIRMED', confirmed_at = now(), updated_at = now() WHERE id = $1`, { bind: [r.id], transaction: t });
      status = r.tx_status = 'CONFIRMED';
      await notifyRecharge(sequelize, t, r, 'CONFIRMED');
    }
  }
  if (status === 'CONFIRMED' && r.settlement_mode === 'ON_CONFIRM' && r.block_hash !== null) {
    await sequelize.query(`UPDATE recharges SET tx_status = 'SETTLED', settled_at = now(), updated_at = now() WHERE id = $1`, { bind: [r.id], transaction: t });
    status = r.tx_status = 'SETTLED';
    await notifyRecharge(sequelize, t, r, 'SETTLED');
  }
  return status;
}

export interface RecordOutcome {
  readonly id: string;
  readonly created: boolean;
  readonly status: TxStatus;
}

/**
 * Records one observed transfer to a user's address (idempotent on (chain, txHash, position)).
 * New: PENDING with its callback, or FAILED with its callback when the transaction failed on
 * chain. Seen again (a re-scan, or re-mined after a reorg): takes the new block, keeps its state
 * and callbacks. Then advances it by confirmations.
 */
export async function recordTransfer(
  sequelize: Sequelize,
  t: Transaction,
  chainId: number,
  token: ChainTokenView,
  owner: DepositOwner,
  x: ObservedTransfer,
  minConfirmations: number,
  tip: bigint | null,
): Promise<RecordOutcome> {
  const inserted = await sequelize.query<{ id: string }>(
    `INSERT INTO recharges (application_id, chain_id, chain_token_id, address_id, external_user_id, address, memo, from_address,
                            tx_hash, position, amount, block_height, block_hash, tx_status, confirmations, min_confirmations,
                            fail_reason, failed_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11::numeric,$12,$13,$14,$18,$15,$16,$17)
     ON CONFLICT (chain_id, tx_hash, position) DO NOTHING RETURNING id`,
    {
      bind: [
        owner.applicationId, chainId, token.id, owner.addressId, owner.externalUserId, owner.address, x.memo, x.fromAddress,
        x.txHash, x.position, x.amount.toString(), x.blockHeight.toString(), x.blockHash, x.succeeded ? 'PENDING' : 'FAILED',
        minConfirmations, x.succeeded ? null : 'the transaction failed on chain', x.succeeded ? null : new Date().toISOString(),
        x.succeeded && tip !== null ? confirmationsAt(x.blockHeight, tip) : 0,
      ],
      type: QueryTypes.SELECT,
      transaction: t,
    },
  );
  if (inserted[0]) {
    const r = await loadRecharge(sequelize, t, inserted[0].id);
    await notifyRecharge(sequelize, t, r, r.tx_status);
    const status = await advance(sequelize, t, r, tip);
    return { id: r.id, created: true, status };
  }
  // seen before: the same transfer, perhaps in a new block after a reorg
  const existing = await sequelize.query<{ id: string }>('SELECT id FROM recharges WHERE chain_id = $1 AND tx_hash = $2 AND position = $3', {
    bind: [chainId, x.txHash, x.position], type: QueryTypes.SELECT, transaction: t,
  });
  const r = await loadRecharge(sequelize, t, existing[0]!.id);
  if (r.tx_status === 'PENDING' && (r.block_hash !== x.blockHash || r.block_height !== x.blockHeight.toString())) {
    await sequelize.query(
      'UPDATE recharges SET block_height = $2, block_hash = $3, orphaned_at_height = NULL, confirmations = 0, updated_at = now() WHERE id = $1',
      { bind: [r.id, x.blockHeight.toString(), x.blockHash], transaction: t },
    );
    r.block_height = x.blockHeight.toString();
    r.block_hash = x.blockHash;
    r.orphaned_at_height = null;
    r.confirmations = 0;
  }
  const status = await advance(sequelize, t, r, tip);
  return { id: r.id, created: false, status };
}

/** Ends a record FAILED (with its callback) unless it is already final. */
export async function failRecharge(sequelize: Sequelize, t: Transaction, id: string, reason: string): Promise<boolean> {
  const r = await loadRecharge(sequelize, t, id);
  if (r.tx_status === 'SETTLED' || r.tx_status === 'FAILED') return false;
  await sequelize.query(`UPDATE recharges SET tx_status = 'FAILED', fail_reason = $2, failed_at = now(), confirmations = 0, updated_at = now() WHERE id = $1`, {
    bind: [id, reason.slice(0, 256)], transaction: t,
  });
  r.tx_status = 'FAILED';
  r.confirmations = 0;
  await notifyRecharge(sequelize, t, r, 'FAILED');
  return true;
}

/**
 * Advances every open record of a chain to the tip: one UPDATE sets the confirmations of all of
 * them, then only the records that reach a new state are walked (CONFIRMED, SETTLED, callbacks).
 */
export async function advanceChain(sequelize: Sequelize, t: Transaction, chainId: number, tip: bigint): Promise<number> {
  const conf = 'GREATEST(0, LEAST($2::bigint - block_height + 1, 2147483647))::int';
  await sequelize.query(
    `UPDATE recharges SET confirmations = ${conf}, updated_at = now()
      WHERE chain_id = $1 AND tx_status IN ('PENDING','CONFIRMED') AND block_hash IS NOT NULL AND confirmations <> ${conf}`,
    { bind: [chainId, tip.toString()], transaction: t },
  );
  const rows = await sequelize.query<RechargeRow>(
    `SELECT ${ROW_SELECT} FROM ${ROW_FROM}
      WHERE r.chain_id = $1 AND r.block_hash IS NOT NULL
        AND ((r.tx_status = 'PENDING' AND r.confirmations >= r.min_confirmations)
          OR (r.tx_status = 'CONFIRMED' AND a.settlement_mode = 'ON_CONFIRM'))
      ORDER BY r.id FOR UPDATE OF r`,
    { bind: [chainId], type: QueryTypes.SELECT, transaction: t },
  );
  let moved = 0;
  for (const r of rows) {
    const before = r.tx_status;
    if ((await advance(sequelize, t, r, tip)) !== before) moved++;
  }
  return moved;
}
