import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { formatUnits, type ObservedTransfer } from '@wcs/core';
import { OutboxNotices, type NoticeTable } from '../callbacks/outbox';
import type { ChainTokenView } from './tokens';
import type { RechargeCreditedEvent, RechargeEvent } from '../contract/events';

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
  /** The application sends RECHARGE_CREDITED (docs/chain-events.md). */
  recharge_credited: boolean;
  external_user_id: string;
  memo: string | null;
}

const ROW_SELECT = `r.id, r.application_id, r.chain_id, r.chain_token_id, r.address, r.tx_hash, r.amount::text AS amount,
  r.block_height::text AS block_height, r.block_hash, r.orphaned_at_height::text AS orphaned_at_height, r.tx_status,
  r.confirmations, r.min_confirmations, a.settlement_mode, t.decimals, a.recharge_credited, r.external_user_id, r.memo`;
const ROW_FROM = 'recharges r JOIN applications a ON a.id = r.application_id JOIN chain_tokens t ON t.id = r.chain_token_id';

/** The spec's `recharge` event for a record in a state (confirmations -1 and minConfirmations -1 on SETTLED). */
export function rechargeEvent(r: RechargeRow, status: TxStatus): RechargeEvent {
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
 * RECHARGE_CREDITED (docs/chain-events.md): the credit voucher of a deposit, for applications that
 * turn it on: the `recharge` event at SETTLED with its own event name, plus the user it credits.
 * Merchants de-duplicate it by (event, id).
 */
export function rechargeCreditedEvent(r: RechargeRow): RechargeCreditedEvent {
  return { ...rechargeEvent(r, 'SETTLED'), event: 'recharge_credited', txStatus: 'SETTLED', confirmations: -1, minConfirmations: -1, externalUserId: r.external_user_id, memo: r.memo };
}

/** Its row in recharge_notices: once per recharge, beside the txStatus rows. */
export const CREDITED_NOTICE = 'CREDITED';

const RECHARGE_NOTICES: NoticeTable = { table: 'recharge_notices', recordColumn: 'recharge_id', stateColumn: 'tx_status', bizType: 'RECHARGE' };

/**
 * The RECHARGE callbacks of one transaction's state changes: one task per (recharge, txStatus),
 * and at SETTLED one `recharge_credited` task after it when the application has RECHARGE_CREDITED.
 */
export class RechargeNotices extends OutboxNotices {
  constructor() {
    super(RECHARGE_NOTICES);
  }

  add(r: RechargeRow, status: TxStatus): void {
    this.addEvent(r.id, status, r.application_id, rechargeEvent(r, status));
    if (status === 'SETTLED' && r.recharge_credited) this.addEvent(r.id, CREDITED_NOTICE, r.application_id, rechargeCreditedEvent(r));
  }
}

/** Records the callback of one state in the caller's transaction (once per (recharge, txStatus)). */
export async function notifyRecharge(sequelize: Sequelize, t: Transaction, r: RechargeRow, status: TxStatus): Promise<boolean> {
  const notices = new RechargeNotices();
  notices.add(r, status);
  return (await notices.flush(sequelize, t)) === 1;
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

/** Which open records advanceRecharges walks: all of a chain's, or one record. */
export type AdvanceScope = { readonly chainId: number; readonly rechargeId?: string };

/**
 * Walks open records forward to the tip, adding one callback per state reached to `notices`:
 * PENDING → CONFIRMED (at minConfirmations) → SETTLED (ON_CONFIRM applications, right after
 * confirmation). A record whose block left the chain (block_hash NULL) never moves past PENDING.
 * Two statements whatever the number of records: one sets the confirmations of every open record
 * in scope, one moves (and locks) those that reach a new state and returns them.
 */
export async function advanceRecharges(sequelize: Sequelize, t: Transaction, scope: AdvanceScope, tip: bigint, notices: RechargeNotices): Promise<number> {
  const one = scope.rechargeId !== undefined;
  const conf = 'GREATEST(0, LEAST($2::bigint - block_height + 1, 2147483647))::int';
  await sequelize.query(
    `UPDATE recharges SET confirmations = ${conf}, updated_at = now()
      WHERE chain_id = $1 AND tx_status IN ('PENDING','CONFIRMED') AND block_hash IS NOT NULL AND confirmations <> ${conf}${one ? ' AND id = $3' : ''}`,
    { bind: one ? [scope.chainId, tip.toString(), scope.rechargeId] : [scope.chainId, tip.toString()], transaction: t },
  );
  const moved = await sequelize.query<RechargeRow & { old_status: TxStatus }>(
    `WITH old AS (
       SELECT r.id, r.tx_status FROM recharges r JOIN applications a ON a.id = r.application_id
        WHERE r.chain_id = $1${one ? ' AND r.id = $2' : ''} AND r.block_hash IS NOT NULL
          AND ((r.tx_status = 'PENDING' AND r.confirmations >= r.min_confirmations)
            OR (r.tx_status = 'CONFIRMED' AND a.settlement_mode = 'ON_CONFIRM'))
        ORDER BY r.id FOR UPDATE OF r
     )
     UPDATE recharges r SET
            tx_status = CASE WHEN a.settlement_mode = 'ON_CONFIRM' THEN 'SETTLED' ELSE 'CONFIRMED' END,
            confirmed_at = CASE WHEN old.tx_status = 'PENDING' THEN now() ELSE r.confirmed_at END,
            settled_at = CASE WHEN a.settlement_mode = 'ON_CONFIRM' THEN now() ELSE r.settled_at END,
            updated_at = now()
       FROM old, applications a, chain_tokens t
      WHERE r.id = old.id AND a.id = r.application_id AND t.id = r.chain_token_id
     RETURNING old.tx_status AS old_status, ${ROW_SELECT}`,
    { bind: one ? [scope.chainId, scope.rechargeId] : [scope.chainId], type: QueryTypes.SELECT, transaction: t },
  );
  moved.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
  for (const r of moved) {
    if (r.old_status === 'PENDING') notices.add(r, 'CONFIRMED');
    if (r.tx_status === 'SETTLED') notices.add(r, 'SETTLED');
  }
  return moved.length;
}

/** A transfer to a user's address, to be recorded. */
export interface Deposit {
  readonly token: ChainTokenView;
  readonly owner: DepositOwner;
  readonly transfer: ObservedTransfer;
  /** The token's confirmations, else the chain's. */
  readonly minConfirmations: number;
}

/**
 * Records observed transfers to users' addresses (idempotent on (chain, txHash, position)) in
 * one statement. New: PENDING, or FAILED when the transaction failed on chain, with that
 * callback added to `notices`. Seen before (a re-scan, or re-mined after a reorg): a PENDING
 * record takes the new block and keeps its state and callbacks. The caller then advances the
 * chain (advanceRecharges) in the same transaction. Returns the number of new records.
 */
export async function recordTransfers(
  sequelize: Sequelize,
  t: Transaction,
  chainId: number,
  deposits: readonly Deposit[],
  tip: bigint,
  notices: RechargeNotices,
): Promise<number> {
  if (deposits.length === 0) return 0;
  const col = <T>(f: (d: Deposit) => T) => deposits.map(f);
  const statusOf = (d: Deposit): TxStatus => (d.transfer.succeeded ? 'PENDING' : 'FAILED');
  const inserted = await sequelize.query<{ id: string; tx_hash: string; position: number; settlement_mode: RechargeRow['settlement_mode']; recharge_credited: boolean }>(
    `INSERT INTO recharges (application_id, chain_id, chain_token_id, address_id, external_user_id, address, memo, from_address,
                            tx_hash, position, amount, block_height, block_hash, tx_status, confirmations, min_confirmations,
                            fail_reason, failed_at)
     SELECT u.app, $1, u.token, u.addr, u.usr, u.address, u.memo, u.sender, u.tx, u.pos, u.amount::numeric, u.height::bigint, u.hash, u.status,
            u.conf, u.minconf, CASE WHEN u.status = 'FAILED' THEN 'the transaction failed on chain' END, CASE WHEN u.status = 'FAILED' THEN now() END
       FROM unnest($2::int[], $3::int[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int[], $11::text[],
                   $12::text[], $13::text[], $14::text[], $15::int[], $16::int[])
            WITH ORDINALITY AS u(app, token, addr, usr, address, memo, sender, tx, pos, amount, height, hash, status, conf, minconf, ord)
      -- the service's own gas top-ups to a deposit address are not deposits (docs/collection.md)
      -- (any signed attempt of one, through the attempts' hash index)
      WHERE NOT EXISTS (SELECT 1 FROM transfer_attempts a JOIN transfers x ON x.id = a.transfer_id WHERE a.tx_hash = u.tx AND x.chain_id = $1 AND x.kind = 'TOP_UP')
      -- nor is anything the application's own fee wallet sends: it sends top-ups only, and after a
      -- database restore the top-ups of the lost window are on chain but not in the database
        AND NOT EXISTS (SELECT 1 FROM fee_wallets f WHERE f.application_id = u.app AND f.chain_id = $1 AND f.address = u.sender)
      ORDER BY u.ord
     ON CONFLICT (chain_id, tx_hash, position) DO NOTHING
     RETURNING id::text AS id, tx_hash, position, (SELECT a.settlement_mode FROM applications a WHERE a.id = recharges.application_id) AS settlement_mode,
               (SELECT a.recharge_credited FROM applications a WHERE a.id = recharges.application_id) AS recharge_credited`,
    {
      bind: [
        chainId, col((d) => d.owner.applicationId), col((d) => d.token.id), col((d) => d.owner.addressId), col((d) => d.owner.externalUserId),
        col((d) => d.owner.address), col((d) => d.transfer.memo), col((d) => d.transfer.fromAddress), col((d) => d.transfer.txHash),
        col((d) => d.transfer.position), col((d) => d.transfer.amount.toString()), col((d) => d.transfer.blockHeight.toString()),
        col((d) => d.transfer.blockHash), col(statusOf), col((d) => (d.transfer.succeeded ? confirmationsAt(d.transfer.blockHeight, tip) : 0)),
        col((d) => d.minConfirmations),
      ],
      type: QueryTypes.SELECT,
      transaction: t,
    },
  );
  const key = (txHash: string, position: number) => `${txHash}/${position}`;
  const created = new Map(inserted.map((r) => [key(r.tx_hash, r.position), r]));
  const seenBefore: Deposit[] = [];
  // new records' first callbacks, in the order of the transfers (ids ascend with them)
  for (const d of deposits) {
    const row = created.get(key(d.transfer.txHash, d.transfer.position));
    if (!row) {
      seenBefore.push(d);
      continue;
    }
    created.delete(key(d.transfer.txHash, d.transfer.position));
    const x = d.transfer;
    notices.add({
      id: row.id, application_id: d.owner.applicationId, chain_id: chainId, chain_token_id: d.token.id, address: d.owner.address, tx_hash: x.txHash,
      amount: x.amount.toString(), block_height: x.blockHeight.toString(), block_hash: x.blockHash, orphaned_at_height: null, tx_status: statusOf(d),
      confirmations: x.succeeded ? confirmationsAt(x.blockHeight, tip) : 0, min_confirmations: d.minConfirmations, settlement_mode: row.settlement_mode,
      decimals: d.token.decimals, recharge_credited: row.recharge_credited, external_user_id: d.owner.externalUserId, memo: d.owner.memo,
    }, statusOf(d));
  }
  if (seenBefore.length > 0) await rebase(sequelize, t, chainId, seenBefore);
  return inserted.length;
}

/**
 * Transfers recorded before: a PENDING record found in another block than the one it has (it
 * was re-mined after a reorg) takes the new block, with its confirmations counted from there.
 */
async function rebase(sequelize: Sequelize, t: Transaction, chainId: number, seen: readonly Deposit[]): Promise<void> {
  await sequelize.query(
    `UPDATE recharges r SET block_height = u.height::bigint, block_hash = u.hash, orphaned_at_height = NULL, confirmations = 0, updated_at = now()
       FROM unnest($2::text[], $3::int[], $4::text[], $5::text[]) AS u(tx, pos, height, hash)
      WHERE r.chain_id = $1 AND r.tx_hash = u.tx AND r.position = u.pos AND r.tx_status = 'PENDING'
        AND (r.block_hash IS DISTINCT FROM u.hash OR r.block_height IS DISTINCT FROM u.height::bigint)`,
    {
      bind: [chainId, seen.map((d) => d.transfer.txHash), seen.map((d) => d.transfer.position), seen.map((d) => d.transfer.blockHeight.toString()), seen.map((d) => d.transfer.blockHash)],
      transaction: t,
    },
  );
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

